local t = {} for i = 1, 20 do t = { t, t } end
app "big" { name = "b", extra = t }
