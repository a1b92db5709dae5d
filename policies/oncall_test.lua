-- policies/oncall_test.lua: tests policies/oncall.lua (On call: every night 18:00–09:00).
local NIGHT = { now = "2026-11-25T03:00:00+01:00", locked = true, ringer = "silent" }

local function page(id, body, extra)
  local aps = { alert = { title = "payments-api", body = body }, category = "PAGE",
                ["thread-id"] = "payments", ["filter-criteria"] = "payments" }
  for k, v in pairs(extra or {}) do aps[k] = v end
  return { app = "com.example.pager", id = id, payload = { aps = aps, incident = 4711 } }
end

test("a SEV1 page is critical (rule) and rings through the silent switch", {
  context = NIGHT,
  notification = page("p1", "SEV1: checkout failing for all card payments"),
  expect = { delivery = "alert", level = "critical", requested_level = "active", focus = "On call",
             breakthrough = "critical", alert = { sound = true, volume = 1, bypass_ringer = true },
             rules = { "SEV1 pages are critical", "pages of one incident stack together" } },
})

test("a critical page keeps the volume it asked for", {
  context = NIGHT,
  notification = page("p1", "SEV2: error rate 4.8%",
                      { sound = { critical = 1, name = "siren.caf", volume = 0.7 }, ["interruption-level"] = "critical" }),
  expect = { delivery = "alert", level = "critical", requested_level = "critical", breakthrough = "critical",
             alert = { sound = true, sound_name = "siren.caf", volume = 0.7, bypass_ringer = true } },
})

test("a SEV3 page for payments passes as an allowed app, silently (ringer off)", {
  context = NIGHT,
  notification = page("p1", "SEV3: p99 latency 900 ms"),
  expect = { delivery = "alert", level = "active", breakthrough = "app",
             alert = { sound = false, vibrate = true, bypass_ringer = false } },
})

test("a page for another team's service is filtered out", {
  context = NIGHT,
  notification = page("p1", "SEV3: indexing lag 12 minutes", { ["filter-criteria"] = "search" }),
  expect = { delivery = "silenced", breakthrough = null, alert = null },
})

test("pages of one incident stack together whatever their thread-id", {
  context = NIGHT,
  before = { page("p1", "SEV3: p99 latency 900 ms") },
  notification = page("p2", "SEV3: database connections at 95%", { ["thread-id"] = "payments-db" }),
  expect = { group = { id = "com.example.pager/incident-4711", count = 2, summary = "1 more page" } },
})

test("a paging storm: the fourth page in 10 minutes is quiet", {
  context = NIGHT,
  before = { page("p1", "SEV3: p99 latency 900 ms"), page("p2", "SEV3: p99 latency 1200 ms"),
             page("p3", "SEV3: p99 latency 1500 ms") },
  notification = page("p4", "SEV3: p99 latency 1900 ms"),
  expect = { delivery = "quiet", breakthrough = "app",
             rules = { "pages of one incident stack together", "a paging storm goes quiet after the third page" },
             group = { id = "com.example.pager/incident-4711", count = 4, summary = "3 more pages" } },
})

test("an incident bridge calling from an unknown number rings (calls = everyone)", {
  context = NIGHT,
  notification = { app = "com.example.phone", id = "c1",
                   payload = { aps = { alert = { title = "+49 30 5550 7000", body = "Incoming call" } } },
                   communication = { kind = "call", sender = { handle = "+49 30 5550 7000" } } },
  expect = { delivery = "alert", breakthrough = "call" },
})

test("at 10:00 On call is off; Chat never makes a sound (sounds = false)", {
  context = { now = "2026-11-25T10:00:00+01:00", ringer = "ring" },
  notification = { app = "com.example.chat", id = "m1",
                   payload = { aps = { alert = { title = "Alice Doe", body = "Coffee?" }, sound = "default" } },
                   communication = { kind = "message", sender = { handle = "alice@example.com", name = "Alice Doe" } } },
  expect = { delivery = "alert", focus = null, alert = { sound = false, vibrate = true } },
})
