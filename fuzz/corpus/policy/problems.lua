app { }
app "x" "y"
focus "F" { schedule = { days = "someday", from = "25:00" }, calls = "maybe", peeple = {} }
summary { at = "8" }
category "C" { summary_format = 3 }
rule(function() end)
rule("x", 3)
timezone "Mars/Olympus"
contact { }
local a = {} a[1] = a
app "cyc" { name = a }
