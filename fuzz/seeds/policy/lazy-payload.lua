-- n.payload and n.headers are lazy tables: every way to read, settle, write and keep them.
local kept, alerts = {}, {}
local weak = setmetatable({}, { __mode = "k" })
rule("lazy reads", function(n, ctx)
  local p = n.payload
  local a = p.aps
  local s = tostring(a and a.alert) .. tostring(p["\u{212A}"]) .. tostring(p["\xff"]) .. tostring(n.headers["apns-priority"])
  kept[#kept + 1] = p
  if #kept > 4 then table.remove(kept, 1) end
  if type(a) == "table" then alerts[#alerts + 1] = a.alert weak[a] = true end
  return { reason = s .. tostring(p == n.payload) .. tostring(rawequal(a, p.aps)) }
end)
rule("lazy iterate", function(n, ctx)
  local p = n.payload
  local c = 0
  for k, v in pairs(p) do
    c = c + 1
    if type(v) == "table" then for _, w in pairs(v) do c = c + 1 end c = c + #v end
  end
  local k = next(p.aps or {})
  local list = {}
  for _, v in ipairs(p.list or {}) do list[#list + 1] = tostring(v) end
  return { reason = c .. tostring(k) .. rawlen(p) .. tostring(rawget(p, "aps")) .. table.concat(list, ",") }
end)
rule("lazy write", function(n, ctx)
  local p = n.payload
  p.aps = p.aps or {}
  p.aps.alert = nil
  rawset(p, "x", 1)
  table.insert(p, 1)
  setmetatable(p.aps, { __index = p })
  local u = setmetatable({}, n.headers)
  local e = load("return aps", "=e", "t", p)()
  return { reason = tostring(#p) .. tostring(getmetatable(p)) .. tostring(e and e.x) .. tostring(getmetatable(u) == n.headers) }
end)
rule("lazy kept", function(n, ctx)
  for _, old in ipairs(kept) do local _ = old.aps, next(old), #old end
  for k in pairs(weak) do local _ = k.alert end
  for _, a in ipairs(alerts) do local _ = type(a) == "table" and a.title end
  if #alerts > 16 then alerts = {} end
  local garbage = {}
  for i = 1, 500 do garbage[i] = { i } end
  return n.payload.aps
end)
