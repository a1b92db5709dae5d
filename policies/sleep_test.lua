-- policies/sleep_test.lua: tests policies/sleep.lua (Sleep: every night 23:00–07:00 in Berlin).
local NIGHT = { now = "2026-11-25T02:00:00+01:00", locked = true }   -- Wednesday 2 a.m.

local dan = { handle = "dan@example.com", name = "Dan Weber" }
local function message(who, body)
  return { app = "com.example.chat", id = "m1",
           payload = { aps = { alert = { title = who.name, body = body }, ["thread-id"] = "dan" } },
           communication = { kind = "message", sender = who } }
end
local function call(id, date, who)
  return { app = "com.example.phone", id = id, date = date,
           payload = { aps = { alert = { title = who.name or who.handle, body = "Incoming call" }, sound = "ringtone.caf" } },
           communication = { kind = "call", sender = who } }
end
local function bank(id)
  return { app = "com.example.bank", id = id,
           payload = { aps = { alert = { title = "New sign-in", body = "Firefox on Linux. Was it you?" },
                               ["interruption-level"] = "time-sensitive" } } }
end

test("Dan's message waits silently at 2 a.m.", {
  context = NIGHT,
  notification = message(dan, "still up?"),
  expect = { delivery = "silenced", focus = "Sleep", breakthrough = null, alert = null },
})

test("Sleep starts at 23:00 sharp (the start is inclusive)", {
  context = { now = "2026-11-24T23:00:00+01:00" },
  notification = message(dan, "still up?"),
  expect = { delivery = "silenced", focus = "Sleep" },
})

test("Mum, a favorite, can call through Sleep (calls = favorites)", {
  context = NIGHT,
  notification = call("c1", nil, { handle = "+49 40 5550 0202", name = "Mum" }),
  expect = { delivery = "alert", focus = "Sleep", breakthrough = "call", alert = { sound = true, wake_screen = true } },
})

test("Dan calling twice within 3 minutes: the second call rings", {
  before = { call("c1", "2026-11-25T02:00:00+01:00", { handle = "+49 176 5550 0303" }) },
  notification = call("c2", "2026-11-25T02:03:00+01:00", { handle = "+49 176 5550 0303" }),   -- 3 minutes: inclusive
  expect = { delivery = "alert", focus = "Sleep", breakthrough = "repeated-call" },
})

test("a stranger calling twice stays silenced (rule)", {
  before = { call("c1", "2026-11-25T02:00:00+01:00", { handle = "+49 30 5550 9999" }) },
  notification = call("c2", "2026-11-25T02:01:00+01:00", { handle = "+49 30 5550 9999" }),
  expect = { delivery = "silenced", breakthrough = null, rules = { "strangers never ring at night" } },
})

test("the bank waits: time-sensitive is off in Sleep, and its preview is hidden", {
  context = NIGHT,
  notification = bank("b1"),
  expect = { delivery = "silenced", level = "time-sensitive", breakthrough = null, placeholder = "Notification" },
})

test("at 07:00 Sleep is over and the bank alerts", {
  context = { now = "2026-11-25T07:00:00+01:00", locked = true },
  notification = bank("b1"),
  expect = { delivery = "alert", focus = null, breakthrough = null, level = "time-sensitive", placeholder = "Notification" },
})

test("a critical page without critical_alerts is only active, so Sleep silences it", {
  context = NIGHT,
  notification = { app = "com.example.pager", id = "p1",
                   payload = { aps = { alert = { title = "payments-api", body = "SEV1: checkout failing" },
                                       sound = { critical = 1, volume = 0.8 }, ["interruption-level"] = "critical" } } },
  expect = { delivery = "silenced", level = "active", requested_level = "critical", breakthrough = null },
})
