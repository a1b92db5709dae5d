-- strlib_compare.lua
--
-- Compares the bounded string functions installed by hush_strlib_install
-- (string.find, match, gmatch, gsub, rep) against the original Lua 5.4 ones.
--
-- Host requirements:
--   * global `orig`: a table holding the ORIGINAL string library functions
--     (e.g. `orig = {} for k, v in pairs(string) do orig[k] = v end` run
--     before installing the bounded versions);
--   * the bounded versions installed in `string`, with a step budget of at
--     least 1e5 and a byte limit of at least 1 MiB.
-- Optional: global STRLIB_FUZZ_N (or env var of the same name) = number of
-- fuzz iterations per function kind (default 4000).
--
-- Raises error() on the first mismatch, naming the case. On success prints a
-- one-line summary and returns a table of counters.

local orig = assert(rawget(_G, "orig"), "global 'orig' (original string functions) is required")
local new = string
local STEP_MSG = "pattern too complex (step limit exceeded)"

local pack, unpack, concat = table.pack, table.unpack, table.concat
-- the harness itself only uses the original functions
local o_format, o_gsub, o_rep, o_find, o_sub, o_char, o_byte =
  orig.format, orig.gsub, orig.rep, orig.find, orig.sub, orig.char, orig.byte
assert(o_format and o_gsub and o_rep and o_find and o_sub and o_char and o_byte)
for _, name in ipairs({"find", "match", "gmatch", "gsub", "rep"}) do
  assert(type(orig[name]) == "function", "orig." .. name .. " missing")
  assert(orig[name] ~= new[name], "string." .. name .. " is not replaced")
end

---------------------------------------------------------------------------
-- helpers
---------------------------------------------------------------------------

local function show(v, depth)
  depth = depth or 0
  local t = type(v)
  if t == "string" then
    if #v > 120 then
      return o_format("%q..(%d bytes)", o_sub(v, 1, 120), #v)
    end
    return (o_gsub(o_format("%q", v), "\n", "n"))
  elseif t == "number" then
    return o_format("%s(%s)", tostring(v), math.type(v))
  elseif t == "table" and depth < 4 then
    local parts = {}
    local n = v.n or #v
    for i = 1, n do parts[#parts + 1] = show(v[i], depth + 1) end
    for k, x in pairs(v) do
      if not (math.type(k) == "integer" and k >= 1 and k <= n) and k ~= "n" then
        parts[#parts + 1] = tostring(k) .. "=" .. show(x, depth + 1)
      end
    end
    return "{" .. concat(parts, ", ") .. "}"
  else
    return tostring(v)
  end
end

local function same(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) == "number" then
    return math.type(a) == math.type(b) and (a == b or (a ~= a and b ~= b))
  end
  if type(a) == "table" then
    if getmetatable(a) or getmetatable(b) then return a == b end
    for k, x in pairs(a) do
      if not same(x, b[k]) then return false end
    end
    for k in pairs(b) do
      if a[k] == nil then return false end
    end
    return true
  end
  return a == b
end

local function norm_err(e)
  if type(e) ~= "string" then return e end
  -- the function name in argument errors depends on how it was found
  return (o_gsub(e, "bad argument #(%d+) to '[^']*'", "bad argument #%1 to '?'"))
end

-- marker for logging function replacements in gsub
local LOGMT = {}
local function LOG(ret) return setmetatable({ret = ret}, LOGMT) end

-- Runs lib[fname](args) and returns an outcome table.
local function outcome(lib, fname, args)
  local a = {n = args.n}
  for i = 1, args.n do a[i] = args[i] end
  local log
  if fname == "gsub" and getmetatable(a[3]) == LOGMT then
    local ret = a[3].ret
    log = {}
    a[3] = function(...)
      log[#log + 1] = pack(...)
      return ret(...)
    end
  end
  local res
  if fname == "gmatch" then
    local ok, it = pcall(lib.gmatch, unpack(a, 1, a.n))
    if not ok then
      res = {ok = false, err = norm_err(it)}
    else
      local items = {}
      res = {ok = true, items = items}
      for _ = 1, 5000 do
        local r = pack(pcall(it))
        if not r[1] then
          res.err = norm_err(r[2])
          break
        end
        if r[2] == nil then break end
        items[#items + 1] = pack(unpack(r, 2, r.n))
      end
    end
  else
    local r = pack(pcall(lib[fname], unpack(a, 1, a.n)))
    if r[1] then
      res = {ok = true, vals = pack(unpack(r, 2, r.n))}
    else
      res = {ok = false, err = norm_err(r[2])}
    end
  end
  res.log = log
  return res
end

local function is_step_error(res)
  return type(res.err) == "string" and o_find(res.err, STEP_MSG, 1, true) ~= nil
end

local stats = {cases = 0, generated = 0, fuzz = 0, fuzz_step_skips = 0,
               fuzz_found = 0, fuzz_notfound = 0, fuzz_errors = 0}

local function describe(fname, args)
  local parts = {}
  for i = 1, args.n do
    local v = args[i]
    if getmetatable(v) == LOGMT then parts[i] = "LOG(fn)" else parts[i] = show(v) end
  end
  return fname .. "(" .. concat(parts, ", ") .. ")"
end

-- compare one call; `label` identifies the case; `allow_step` makes a step
-- limit error of the bounded version a (counted) skip instead of a failure
local function check(label, fname, args, allow_step)
  local r1 = outcome(orig, fname, args)
  local r2 = outcome(new, fname, args)
  if allow_step and is_step_error(r2) and not is_step_error(r1) then
    stats.fuzz_step_skips = stats.fuzz_step_skips + 1
    return
  end
  if not same(r1, r2) then
    error(o_format("strlib mismatch in %s: %s\n  original: %s\n  bounded:  %s",
      label, describe(fname, args), show(r1), show(r2)), 0)
  end
  if allow_step then
    if not r1.ok or r1.err then
      stats.fuzz_errors = stats.fuzz_errors + 1
    elseif (r1.vals and r1.vals[1] ~= nil) or (r1.items and #r1.items > 0) then
      stats.fuzz_found = stats.fuzz_found + 1
    else
      stats.fuzz_notfound = stats.fuzz_notfound + 1
    end
  end
  return r1
end

---------------------------------------------------------------------------
-- explicit cases
---------------------------------------------------------------------------

local cases = {}
local function C(fname, ...)
  local info = debug and debug.getinfo and debug.getinfo(2, "l")
  cases[#cases + 1] = {fname = fname, args = pack(...), line = info and info.currentline}
end

local ALL
do
  local t = {}
  for i = 0, 255 do t[#t + 1] = o_char(i) end
  ALL = concat(t)
end
local TEXT = "The quick (brown) fox, jumps over [the] lazy dog! 1234 5678\t\n\0end%$^"

-- character classes and their complements, alone, in sets, negated sets,
-- with quantifiers, and in frontiers
for c in orig.gmatch("acdglpsuwxzACDGLPSUWXZ", ".") do
  local cl = "%" .. c
  C("find", ALL, cl)
  C("find", TEXT, cl)
  C("match", ALL, cl .. "+")
  C("match", TEXT, "(" .. cl .. "+)")
  C("gsub", ALL, cl, "")
  C("gsub", ALL, "[" .. cl .. "]", ".")
  C("gsub", ALL, "[^" .. cl .. "]", "")
  C("gsub", TEXT, cl .. "-", "<%0>")
  C("gsub", TEXT, cl .. "*", "<%0>")
  C("gsub", TEXT, cl .. "?", "|")
  C("gmatch", TEXT, "()%f[" .. cl .. "]")
  C("gmatch", ALL, "()%f[" .. cl .. "]")
  C("gmatch", TEXT, cl .. "+()")
  C("find", TEXT, "[x" .. cl .. "]+", 3)
end
-- escaped non-class characters are literals (incl. the old %z)
for c in orig.gmatch("%.()[]*+-?^$_ebBy", ".") do
  C("find", TEXT .. "zZ_eb" .. c, "%" .. c)
  C("gsub", TEXT .. "(.)" .. c, "%" .. c, "#")
end

-- plain find and find without specials
C("find", "hello world", "o")
C("find", "hello world", "o", 6)
C("find", "hello world", "o", -3)
C("find", "hello world", "o", -100)
C("find", "hello world", "o", 0)
C("find", "hello world", "o", 12)
C("find", "hello world", "o", 100)
C("find", "hello world", "world", 1, true)
C("find", "hello world", "l", 1, false)
C("find", "hello", "")
C("find", "hello", "", 5)
C("find", "hello", "", 6)
C("find", "hello", "", 7)
C("find", "hello", "", -1)
C("find", "hello", "", -100)
C("find", "hello", "", math.mininteger)
C("find", "hello", "", math.maxinteger)
C("find", "", "")
C("find", "", "", 1)
C("find", "", "", 2)
C("find", "", "", 0)
C("find", "", "a")
C("find", "", "", 1, true)
C("find", "a.b", ".", 1, true)
C("find", "a.b", "%.")
C("find", "a+b", "+", 1, true)
C("find", "a+b", "a+b", 1, true)
C("find", "a[b", "[", 1, true)
C("find", "a[b", "[")
C("find", "a%b", "%", 1, true)
C("find", "a%b", "%")
C("find", "a^b$c", "^b$", 1, true)
C("find", "a(b)c", "(b)", 1, true)
C("find", "a(b)c", "(b)", 1, 1)
C("find", "a(b)c", "(b)", 1, "yes")
C("find", "a(b)c", "(b)", 1, nil)
C("find", "a(b)c", "(b)", 1, false)
C("find", "ab\0cd", "\0")
C("find", "ab\0cd", "\0", 1, true)
C("find", "ab\0cd", "b\0c")
C("find", "ab\0cd", "[\0]")
C("find", "ab\0cd", "%z")
C("find", "ab\0cd", ".\0.")
C("find", "ab\0c.d", "\0c.", 1, true)
C("find", "ab\0c.d", "\0c%.")
C("find", "abc", "b", 1.0)
C("find", "abc", "b", "2")
C("find", "abc", "b", " 0x2 ")
C("find", "abc", "b", 2.5)
C("find", "abc", "b", "x")
C("find", "abc", "b", {})
C("find", "abc")
C("find", "abc", nil)
C("find", nil, "a")
C("find", {}, "a")
C("find", 12345, 34)
C("find", 1.5, ".")
C("find", 12345, 3, 2, true)
C("find", o_rep("a", 1000) .. "b", o_rep("a", 500) .. "b")
C("find", o_rep("a", 1000) .. "b", o_rep("a", 500) .. "b", 1, true)
C("find", o_rep("a", 1000) .. "b", o_rep("a", 500) .. "c", 1, true)
C("find", o_rep("ab", 3000) .. "abb", o_rep("ab", 100) .. "b", 7, true)
C("find", o_rep("aab", 3000) .. "aabaab", o_rep("aab", 200) .. "aab", 1, true)
C("find", o_rep("aab", 3000), o_rep("aab", 200) .. "aaa", 1, true)
C("find", o_rep("x", 10000) .. "needle" .. o_rep("x", 100), "needle")
C("find", o_rep("x", 10000) .. "needle", "needle", -6)
C("find", o_rep("x", 10000) .. "needle", "needle", -5)

-- anchors
C("find", "abc", "^b")
C("find", "abc", "^a")
C("find", "abc", "^b", 2)
C("find", "abc", "^", 2)
C("find", "abc", "^", 4)
C("find", "abc", "^", 5)
C("find", "abc", "c$")
C("find", "abc", "b$")
C("find", "abc", "$")
C("find", "abc", "$", 2)
C("find", "abc", "^$")
C("find", "", "^$")
C("find", "a$c", "$c")
C("find", "a$c", "%$")
C("find", "a$c", "$$")
C("find", "a^c", "a^")
C("find", "^^", "^^")
C("find", "x^^", "^^")
C("match", "abc", "^(a)(b)(c)$")
C("match", "abc", "^(.-)$")
C("match", "abc$", "c$$")
C("match", "hello", "^h(.*)o$")
C("match", "  trim me  ", "^%s*(.-)%s*$")
C("match", "", "^%s*(.-)%s*$")
C("match", "   ", "^%s*(.-)%s*$")

-- quantifiers
C("match", "aaab", "a*")
C("match", "aaab", "a+")
C("match", "aaab", "a-")
C("match", "aaab", "a-b")
C("match", "aaab", "a?")
C("match", "aaab", "a?a?a?a?b")
C("match", "aaab", "^a?a?a?a?a?$")
C("match", "aaa", "a-$")
C("match", "aaa", "^a-$")
C("match", "ab", "a?b?c?")
C("match", "xyz", "b*")
C("match", "xyz", "b+")
C("match", "xyz", "x*y+z?w*")
C("match", "<a><b>", "<.*>")
C("match", "<a><b>", "<.->")
C("match", "<a><b>", "<(.-)>")
C("match", "aaa", "(a*)(a)")
C("match", "aaa", "(a-)(a)")
C("match", "aaa", "(a+)(a+)")
C("match", "aaa", "(a?)(a?)(a?)(a?)")
C("match", "**++", "%*+%++")
C("match", "a-b", "a%-b")
C("match", "a--b", "a-%-+b")
C("match", "hello.world", "(.-)%.(.*)")
C("match", "x = 12, y = 34", "(%w+)%s*=%s*(%d+)")
C("match", "2024-01-15", "(%d+)-(%d+)-(%d+)")
C("match", "2024-01-15", "^(%d%d%d%d)-(%d%d)-(%d%d)$")
C("match", "a", "a**")
C("match", "a*", "a**")
C("match", "a", "*")
C("match", "*a", "*a")
C("match", "a", "+")
C("match", "a", "?")
C("match", "-", "-")
C("match", "a", "-a")
C("match", "ab", ".-b")
C("match", "ab", ".-")
C("match", "ab", ".*")
C("match", "ab", ".+")
C("match", "ab", ".?")
C("match", "", ".?")
C("match", "", ".*")
C("match", "", ".-")
C("match", "", ".+")

-- sets
C("match", "a]c", "[]]")
C("match", "a]c", "[^]]+")
C("match", "a]c", "[]a]+")
C("match", "a-c", "[a-]+")
C("match", "a-c", "[-a]+")
C("match", "b", "[a-c]")
C("match", "-", "[a%-c]")
C("match", "%", "[%%]")
C("match", "^", "[%^]")
C("match", "^", "[^^]")
C("match", "a^", "[a^]+")
C("match", "x", "[%a-z]")
C("match", "-", "[%a-z]")
C("match", "5", "[%d]")
C("match", "x", "[^%d]")
C("match", "]", "[%]]")
C("match", "a", "[%")
C("match", "a", "[a%")
C("match", "a", "[a")
C("match", "a", "[")
C("match", "a", "[]")
C("match", "a", "[^]")
C("match", "a", "[^")
C("match", "]", "[]")
C("match", "%]", "[a-%%]+")
C("match", "b%", "[a-%%]+")
C("match", "abc", "[z-a]")
C("match", "abc", "[c-c]+")
C("match", "\1\31 ", "[\0-\31]+")
C("match", "\128\200\255a", "[\128-\255]+")
C("match", "abcDEF123", "[A-Fa-f0-9]+")
C("match", "_foo1 bar", "[%a_][%w_]*")
C("match", "x[y]z", "%[(.-)%]")
C("match", "[[long]]", "%[%[(.-)%]%]")
C("match", "a.b", "[.]")
C("match", "a.b", "[%.]")
C("match", "a(b", "[(]")
C("match", "a\0b", "[%z]")
C("match", "a\0b", "[\0]")
C("match", "a\0b", "[^%z]+")
C("gsub", ALL, "[%w_]", "")
C("gsub", ALL, "[^%w_]", "")
C("gsub", ALL, "[a-fA-F%d]", "")
C("gsub", ALL, "[%a%d%p]", "")
C("gsub", ALL, "[\0-\127]", "")
C("gsub", ALL, "[^\0-\127]", "")
C("gsub", ALL, "[^%c%s]", "")

-- captures
C("find", "abc", "(b)(c)")
C("find", "abc", "a(b)c")
C("find", "abc", "()b()")
C("find", "abc", "()")
C("find", "abc", "()", 4)
C("find", "abc", "()", 5)
C("match", "abc", "()")
C("match", "abc", "()", 4)
C("match", "abc", "()", 5)
C("match", "abcd", "((a)(b)((c)d))")
C("match", "abcd", "(a()b)")
C("match", "abcd", "(a(()b)())")
C("match", "hello", ".-(l+)(.*)")
C("match", "hello", "(h)(e)(l)(l)(o)")
C("match", "abc", "(")
C("match", "abc", "(a")
C("match", "abc", "(x")
C("match", "abc", ")")
C("match", "abc", "a)")
C("match", "abc", "x)")
C("match", "abc", "(()")
C("match", "abc", "(a)b)")
C("find", "abc", "(")
C("find", "abc", "(b")
C("match", o_rep("a", 40), o_rep("()", 32))
C("match", o_rep("a", 40), o_rep("()", 33))
C("match", o_rep("a", 40), o_rep("(a)", 32))
C("match", o_rep("a", 40), o_rep("(a)", 33))
C("find", o_rep("a", 40), o_rep("(a)", 32))
C("gsub", o_rep("a", 40), o_rep("(a)", 32), "%9")
C("gmatch", o_rep("a", 64), o_rep("(a)", 32))

-- back references
C("match", "abcabc", "(abc)%1")
C("match", "abcab", "(abc)%1")
C("match", "xyzxyz", "(%a+)%1")
C("match", "hello  hello world", "(%a+)%s+%1")
C("match", "aa", "(a)%2")
C("match", "aa", "(a%1)")
C("match", "aa", "%1")
C("match", "aa", "%0")
C("match", "aa", "(a)%0")
C("match", "aa", "()%1")
C("match", "aa", "()a%1")
C("match", "abab", "(a)(b)%1%2")
C("match", "abba", "(a)(b)%2%1")
C("match", "'quoted' and \"double\"", "([\"'])(.-)%1")
C("match", "a\0a\0", "(a\0)%1")
C("gsub", "hello hello world world", "(%a+) %1", "%1")
C("find", "abc", "(a)%9")

-- %b and %f
C("match", "f(a(b)c)d", "%b()")
C("match", "f(a(b)c", "%b()")
C("match", "f(a(b)c", "%b)(")
C("match", "x", "%b")
C("match", "x", "%bx")
C("match", "x", "%bxy")
C("match", "((", "%b((")
C("match", "(((", "%b((")
C("match", "a[b[c]d]e", "%b[]")
C("match", "{a}{b}", "%b{}%b{}")
C("match", "{a}{b}", "(%b{})(%b{})")
C("match", "\0a\1", "%b\0\1")
C("match", "", "%b()")
C("match", "()", "%b()")
C("match", "()", "%b()$")
C("match", "x(y)z", "^.-%b()(.*)$")
C("gsub", "f(a) g(b(c)) h(", "%b()", "[]")
C("gmatch", "f(a) g(b(c)) h(", "%b()")
C("match", "THE (quick) fox", "%f[%a]%a+")
C("match", "THE (quick) fox", "%f[%l]%a+")
C("match", "hello", "%f[%a]")
C("find", "hello", "%f[%a]")
C("find", "hello", "%f[%A]")
C("find", "hello", "%f[^%a]")
C("find", "hello", "%f[%z]")
C("find", "hello", "%f[\0]")
C("find", "hello", "%f[^\0]")
C("find", "", "%f[^\0]")
C("find", "", "%f[\0]")
C("match", "hello", "%f")
C("match", "hello", "%fa")
C("match", "hello", "%f[")
C("match", "hello", "%f[a")
C("gsub", "THE (quick) fox jumped", "%f[%a]%a+", "<%0>")
C("gsub", "THE (quick) fox jumped", "%f[%a]", "|")
C("gsub", "THE (quick) fox jumped", "%f[%A]", "|")
C("gsub", "hello world from Lua", "%f[%w]%w+%f[%W]", "[%0]")
C("gmatch", "THE (quick) fox", "%f[%a]%a+")
C("gmatch", "THE (quick) fox", "()%f[%w]")
C("gmatch", "aaa bbb", "%f[%S]()")

-- malformed patterns
for _, p in ipairs({"%", "a%", "[a", "[", "[^", "[]", "[^]", "[a%", "(", ")", "%b", "%ba",
                     "%f", "%fx", "%f[a", "%1", "%0", "(%1)", "a(", "a)", "((a)", "(a))",
                     "%g%", "[%a", "x[%]", "[[]", "[]]]"}) do
  C("find", "a(b)c[d]%e", p)
  C("find", "", p)
  C("match", "xyz", p)
  C("gsub", "a(b)c", p, "x")
  C("gmatch", "a(b)c", p)
end

-- deep recursion (MAXCCALLS = 200)
C("match", o_rep("a", 300), o_rep("a?", 300))
C("match", o_rep("a", 150), o_rep("a?", 150))
C("match", o_rep("a", 199), o_rep("a?", 199) .. "$")
C("match", o_rep("a", 200), o_rep("a?", 200))
C("match", o_rep("a", 250), o_rep("(a)", 30) .. o_rep("a?", 190))
C("find", o_rep("a", 300), o_rep("a?", 300))
C("gsub", o_rep("a", 300), o_rep("a?", 300), "x")
C("match", o_rep("a", 300), "^" .. o_rep("a", 300) .. "$")

-- match
C("match", "hello world", "%w+")
C("match", "hello world", "(%w+) (%w+)")
C("match", "hello world", "%w+", 3)
C("match", "hello world", "%w+", -5)
C("match", "hello world", "%w+", -100)
C("match", "hello world", "%w+", 12)
C("match", "hello world", "%w*", 12)
C("match", "hello world", "%w*", 13)
C("match", "hello world", "o", 0)
C("match", "key = value", "(%w+)%s*=%s*(%w+)")
C("match", "abc", "b", 2.0)
C("match", "abc", "b", 2.5)
C("match", "abc")
C("match", nil, "a")
C("match", 12345, "(%d)(%d)")
C("match", "abc", 1)

-- gmatch
C("gmatch", "hello world from lua", "%a+")
C("gmatch", "k1=v1, k2=v2", "(%w+)=(%w+)")
C("gmatch", "abc", "")
C("gmatch", "", "")
C("gmatch", "", "x*")
C("gmatch", "abc", "%w*")
C("gmatch", "abc", "x*")
C("gmatch", "abc", "b*")
C("gmatch", "a,b,,c", "([^,]*)")
C("gmatch", "a,b,,c,", "([^,]*)")
C("gmatch", "abc", "()")
C("gmatch", "abc", ".", 2)
C("gmatch", "abc", ".", -1)
C("gmatch", "abc", ".", -2)
C("gmatch", "abc", ".", -10)
C("gmatch", "abc", ".", 0)
C("gmatch", "abc", ".", 10)
C("gmatch", "abc", ".", 4)
C("gmatch", "abc", "", 4)
C("gmatch", "abc", "", 5)
C("gmatch", "abc", "()", 3)
C("gmatch", "abc", "", math.maxinteger)
C("gmatch", "abc", "", math.mininteger)
C("gmatch", "^a^a", "^a")
C("gmatch", "aaa", "^a")
C("gmatch", "aaa", "^")
C("gmatch", "abc", "$")
C("gmatch", "abc", ".$")
C("gmatch", "one two  three", "(%w+)()")
C("gmatch", "one two  three", "%s*")
C("gmatch", "one two  three", "%s-")
C("gmatch", "aXbXXc", "X*")
C("gmatch", "abc", "a-")
C("gmatch", "abc", "[")
C("gmatch", "abc", "(")
C("gmatch", "abc", "%")
C("gmatch", "abc")
C("gmatch", nil, ".")
C("gmatch", "abc", ".", 1.5)
C("gmatch", "abc", ".", "2")
C("gmatch", TEXT, "%p")
C("gmatch", TEXT, "(%w)(%w*)")
C("gmatch", "  x = 1, y = 22  ", "(%w+)%s*=%s*(%d+)")

-- gsub: string replacements
C("gsub", "hello world", "o", "0")
C("gsub", "hello world", "o", "0", 1)
C("gsub", "hello world", "o", "0", 0)
C("gsub", "hello world", "o", "0", -1)
C("gsub", "hello world", "o", "0", 100)
C("gsub", "hello world", "o", "0", 1.0)
C("gsub", "hello world", "o", "0", "1")
C("gsub", "hello world", "o", "0", 1.5)
C("gsub", "hello world", "o", "0", "x")
C("gsub", "hello world", "o", "0", math.maxinteger)
C("gsub", "hello world", "o", "0", math.mininteger)
C("gsub", "hello", "", "-")
C("gsub", "hello", "", "-", 2)
C("gsub", "", "", "-")
C("gsub", "", "x*", "-")
C("gsub", "abc", "%w*", "-")
C("gsub", "abc d", "%w*", "-")
C("gsub", "abc", "%w-", "-")
C("gsub", "abc", "x*", "-")
C("gsub", "abc", "b*", "-")
C("gsub", "abc", ".-", "x")
C("gsub", "abc", "%w", "%0%0")
C("gsub", "abc", "%w", "%%")
C("gsub", "abc", "%w", "%%%0%%")
C("gsub", "abc", "%w", "100%%")
C("gsub", "abc", "%w", "%1")
C("gsub", "abc", "(%w)", "%1-")
C("gsub", "abc", "%w", "%2")
C("gsub", "abc", "(%w)", "%2")
C("gsub", "abc", "(%w)", "%9")
C("gsub", "abc", "%w", "%")
C("gsub", "abc", "%w", "x%")
C("gsub", "abc", "%w", "%x")
C("gsub", "abc", "%w", "%a")
C("gsub", "abc", "%w", "% ")
C("gsub", "abc", "%w", "%\0")
C("gsub", "abc", "x", "%")
C("gsub", "abc", "()", "%1")
C("gsub", "abc", "()", "[%0]")
C("gsub", "abc", "()(.)", "%2%1")
C("gsub", "abc", "(a)()", "%2")
C("gsub", "hello world", "(%w+)", "<%1>")
C("gsub", "hello world", "%w+", "%0 %0", 1)
C("gsub", "hello world", "(%w+) (%w+)", "%2 %1")
C("gsub", "abc", "b", 5)
C("gsub", "abc", "b", 5.5)
C("gsub", "abc", "b", -0.0)
C("gsub", "abc", "b", math.huge)
C("gsub", "abc", "b", 2^63)
C("gsub", "abc", "b", "")
C("gsub", "a\0b\0c", "\0", "%%0")
C("gsub", "a\0b\0c", "%z", "<\0>")
C("gsub", "abc", "^a", "x")
C("gsub", "abc", "^b", "x")
C("gsub", "abc", "^", "x")
C("gsub", "abc", "$", "x")
C("gsub", "abc", "^$", "x")
C("gsub", "", "^$", "x")
C("gsub", "", "", "x")
C("gsub", "abc", "^.", "x", 0)
C("gsub", "aaa", "^a", "x")
C("gsub", "aaa", "^a*", "x")
C("gsub", "a b c", "%s", "", 1)
C("gsub", "a b c", "%s+", "_")
C("gsub", "  trim  ", "^%s+", "")
C("gsub", "  trim  ", "%s+$", "")
C("gsub", TEXT, "%s+", " ")
C("gsub", TEXT, "(%w+)", "%1%1")
C("gsub", TEXT, "%p", "%%%0")
C("gsub", o_rep("ab", 1000), "b", "%0%0%0")
C("gsub", o_rep("abc", 1000), "(a)(b)(c)", "%3%2%1")
C("gsub", "abc", "b")
C("gsub", "abc", "b", nil)
C("gsub", "abc", "b", true)
C("gsub", "abc", "b", false)
if coroutine then C("gsub", "abc", "b", coroutine.create(function() end)) end
C("gsub", "abc", nil, "x")
C("gsub", nil, "b", "x")
C("gsub", 12321, 2, 9)
C("gsub", "abc", "b", nil, "x")

-- gsub: table replacements
C("gsub", "abc", "b", {b = "X"})
C("gsub", "abc", "%w", {a = 1, b = true})
C("gsub", "abc", "%w", {a = 1, c = 2.5})
C("gsub", "abc", "%w", {a = false, b = "B"})
C("gsub", "abc", "%w", {a = {}})
C("gsub", "abc", "%w", {b = ipairs})
C("gsub", "abc", "%w", {})
C("gsub", "hello world", "(o)", {o = "0"})
C("gsub", "hello world", "(o)(.)", {o = "0"})
C("gsub", "hello world", "()o", {[5] = "FIVE", [8] = 8})
C("gsub", "$name is $age", "%$(%w+)", {name = "Bob", age = 42})
C("gsub", "$name is $age", "%$(%w+)", {name = "Bob"})
C("gsub", "abc", "", {[""] = "-"})
C("gsub", "abc", "%w", setmetatable({}, {__index = function(_, k) return k:upper() end}))
C("gsub", "abc", "%w", setmetatable({}, {__index = function(_, k) return k == "b" and 7 end}))

-- gsub: function replacements
local function ret_nil() return nil end
local function ret_false() return false end
local function ret_str(...) return "[" .. concat({...}, "|") .. "]" end
local function ret_num() return 42 end
local function ret_float() return 1.5 end
local function ret_table() return {} end
local function ret_true() return true end
local function ret_first(a) return a end
local function ret_many() return "x", "y", "z" end
local function ret_none() end
local function ret_err() error("boom in replacement") end
local function ret_err_tbl() error(LOGMT) end
C("gsub", "abc", "%w", LOG(ret_nil))
C("gsub", "abc", "%w", LOG(ret_false))
C("gsub", "abc", "%w", LOG(ret_str))
C("gsub", "abc", "(%w)(%w?)", LOG(ret_str))
C("gsub", "abc", "()(%w)()", LOG(ret_str))
C("gsub", "abc", "%w", LOG(ret_num))
C("gsub", "abc", "%w", LOG(ret_float))
C("gsub", "abc", "%w", LOG(ret_table))
C("gsub", "abc", "%w", LOG(ret_true))
C("gsub", "abc", "%w", LOG(ret_first))
C("gsub", "abc", "%w", LOG(ret_many))
C("gsub", "abc", "%w", LOG(ret_none))
C("gsub", "abc", "%w", LOG(ret_err))
C("gsub", "abc", "%w", LOG(ret_err_tbl))
C("gsub", "abc", "", LOG(ret_str))
C("gsub", "abc", "%w*", LOG(ret_str))
C("gsub", "abc", "x*", LOG(ret_str))
C("gsub", "abc", "%w", LOG(ret_str), 2)
C("gsub", "abc", "%w", LOG(function(c) return c == "b" and "B" end))
C("gsub", "abc", "%w", LOG(function(c) return c == "b" and "B" or nil end))
C("gsub", "hello world", "%w+", LOG(function(w) return #w end))
C("gsub", "hello world", "(%w+)", LOG(function(w) return w:upper() end))
C("gsub", "x=1, y=2", "(%w+)=(%w+)", LOG(function(k, v) return v .. "=" .. k end))
C("gsub", "abc", "^%w", LOG(ret_str))
C("gsub", "abc", "(", LOG(ret_str))
C("gsub", "abc", "%w", LOG(function(c) return orig.gsub(c, ".", "%0%0") end))

-- rep
C("rep", "ab", 3)
C("rep", "ab", 3, ",")
C("rep", "ab", 1, ",")
C("rep", "ab", 0)
C("rep", "ab", 0, ",")
C("rep", "ab", -1)
C("rep", "ab", math.mininteger)
C("rep", "", 5)
C("rep", "", 5, ",")
C("rep", "", 1, ",")
C("rep", "", 2, ",")
C("rep", "", 0, ",")
C("rep", "x", 1, ",")
C("rep", "x", 1)
C("rep", "ab", 2.0)
C("rep", "ab", 2.5)
C("rep", "ab", "3")
C("rep", "ab", "3.0")
C("rep", "ab", "x")
C("rep", 5, 2)
C("rep", 5, 2, 0)
C("rep", "ab", nil)
C("rep", nil, 2)
C("rep", "ab", 2, {})
C("rep", "ab", 2, nil)
C("rep", "a\0b", 3, "\0")
C("rep", "abc", 1000, "--")
C("rep", "x", 1e10)
C("rep", "x", 2^31)
C("rep", "ab", 2^40, ",")
C("rep", "", 2^40, ",")
C("rep", "x", math.maxinteger)
C("rep", "x", math.maxinteger, "y")
C("rep", "", math.maxinteger, "y")
C("rep", "ab", 1e100)
C("rep", "ab", math.huge)
C("rep", "ab", 0/0)


local ncases = #cases
for i, c in ipairs(cases) do
  check(o_format("case #%d (line %s)", i, tostring(c.line)), c.fname, c.args, false)
end
stats.cases = ncases

-- special: stateful gmatch iterators interleaved
do
  local s = "a1b22c333"
  local i1, i2 = orig.gmatch(s, "%d+"), new.gmatch(s, "%d+")
  local j1, j2 = orig.gmatch(s, "%a"), new.gmatch(s, "%a")
  for k = 1, 5 do
    local a, b = i1(), i2()
    local c, d = j1(), j2()
    if a ~= b or c ~= d then
      error(o_format("strlib mismatch in interleaved gmatch step %d: %s/%s %s/%s",
        k, show(a), show(b), show(c), show(d)), 0)
    end
  end
  -- iterator keeps working after subject/pattern strings lose other refs
  local it = new.gmatch(o_rep("xy", 3) .. "z", "(" .. "x" .. ")y")
  if collectgarbage then collectgarbage() end
  local n = 0
  for _ in it do n = n + 1 end
  assert(n == 3, "gmatch iterator after collectgarbage")
  stats.cases = stats.cases + 2
end

---------------------------------------------------------------------------
-- random fuzz
---------------------------------------------------------------------------

local N = tonumber(rawget(_G, "STRLIB_FUZZ_N"))
  or tonumber(os and os.getenv and os.getenv("STRLIB_FUZZ_N"))
  or 4000

math.randomseed(20240518)
local rnd = math.random

local SUBJ_CHARS = {"a", "a", "b", "b", "c", " ", "(", ")", ".", "1", "2", "%", "x", "A", "-", "]", "[", "^", "$", "\0", "\n"}
local ATOMS = {"a", "b", "c", "x", ".", ".", "%a", "%d", "%s", "%w", "%p", "%A", "%S", "%l", "%u",
               "[ab]", "[^a]", "[a-c]", "[%d%s]", "[^%w]", "[]]", "[a-]", "%(", "%)", "%.", "%%", "%-",
               " ", "(", ")", "()", "(", ")", "%b()", "%bab", "%f[%w]", "%f[%W]", "%f[a]",
               "%1", "%2", "%0", "[", "]", "%", "-", "\0", "%z", "^", "$", "1"}
local QUANTS = {"", "", "", "", "*", "+", "-", "?"}

local function rand_subject(maxlen)
  local t = {}
  for i = 1, rnd(0, maxlen) do t[i] = SUBJ_CHARS[rnd(#SUBJ_CHARS)] end
  return concat(t)
end

local function rand_pattern()
  local t = {}
  if rnd() < 0.2 then t[#t + 1] = "^" end
  local nq = 0
  for _ = 1, rnd(0, 5) do
    t[#t + 1] = ATOMS[rnd(#ATOMS)]
    local q = QUANTS[rnd(#QUANTS)]
    if q ~= "" then
      nq = nq + 1
      if nq > 3 then q = "" end
    end
    t[#t + 1] = q
  end
  if rnd() < 0.2 then t[#t + 1] = "$" end
  return concat(t)
end

local function rand_init()
  local r = rnd()
  if r < 0.6 then return nil end
  if r < 0.9 then return rnd(-15, 15) end
  return ({0, math.maxinteger, math.mininteger, 1.0, "2"})[rnd(5)]
end

local REPLS = {"%0", "%1", "<%1>", "x", "%%", "", "%2", "[%0|%1]", "%", "%a", 7,
               {a = "A", b = false, ["("] = 1, [""] = "E"},
               LOG(ret_str), LOG(ret_nil), LOG(ret_first)}

for i = 1, N do
  local s, p = rand_subject(12), rand_pattern()
  check("fuzz find #" .. i, "find", pack(s, p, rand_init()), true)
  check("fuzz match #" .. i, "match", pack(rand_subject(12), rand_pattern(), rand_init()), true)
  check("fuzz gmatch #" .. i, "gmatch", pack(rand_subject(12), rand_pattern(), rand_init()), true)
  local maxn
  if rnd() < 0.3 then maxn = rnd(-1, 4) end
  check("fuzz gsub #" .. i, "gsub",
    pack(rand_subject(12), rand_pattern(), REPLS[rnd(#REPLS)], maxn), true)
  -- plain find with special characters in the needle
  local hay = rand_subject(20)
  local a = rnd(1, #hay + 1)
  local needle = rnd() < 0.7 and o_sub(hay, a, a + rnd(0, 4)) or rand_subject(3)
  check("fuzz plain find #" .. i, "find", pack(hay, needle, rand_init(), true), true)
  check("fuzz nospecial find #" .. i, "find", pack(hay, (o_gsub(needle, "[%^%$%*%+%?%.%(%[%%%-]", "")), rand_init()), true)
  stats.fuzz = stats.fuzz + 6
end

-- long plain searches that force the linear (KMP) fallback
for i = 1, math.max(20, N // 100) do
  local unit = ({"a", "ab", "aab", "abaab"})[rnd(4)]
  local hay = o_rep(unit, rnd(2000, 6000) // #unit)
  local pos = rnd(1, #hay)
  hay = o_sub(hay, 1, pos) .. ({"b", "c", "ba", ""})[rnd(4)] .. o_sub(hay, pos + 1)
  local needle = o_rep(unit, rnd(50, 400) // #unit) .. ({"b", "c", "a", "ab", ""})[rnd(5)]
  check("fuzz long plain find #" .. i, "find", pack(hay, needle, rnd(-100, 50), true), false)
  stats.fuzz = stats.fuzz + 1
end

-- single-character patterns over all bytes, with every quantifier
for b = 0, 255 do
  local ch = o_char(b)
  for _, q in ipairs({"", "*", "+", "-", "?"}) do
    check("byte pattern " .. b .. q, "gsub", pack(ALL .. ALL, ch .. q, "<%0>"), false)
    check("escaped byte pattern " .. b .. q, "gsub", pack(ALL, "%" .. ch .. q, "<%0>"), false)
    stats.generated = stats.generated + 2
  end
  check("set byte " .. b, "gsub", pack(ALL, "[" .. ch .. "]", "#"), false)
  check("negset byte " .. b, "gsub", pack(ALL, "[^" .. ch .. "]", ""), false)
  stats.generated = stats.generated + 2
end

local summary = (o_format("strlib_compare: %d table cases, %d per-byte cases, %d fuzz comparisons " ..
  "(%d iterations; %d found, %d not found, %d errors in both; %d step-limit skips): OK",
  stats.cases, stats.generated, stats.fuzz, N, stats.fuzz_found, stats.fuzz_notfound,
  stats.fuzz_errors, stats.fuzz_step_skips))
stats.summary = summary
if print then print(summary) end
return stats
