-- policies/week_test.lua: tests policies/week.lua (Sleep every night 23:00–07:00, Work on weekdays
-- 09:00–17:30, Personal on weekends 09:00–23:00, summaries at 08:00 and 18:00; Berlin).
local NIGHT    = { now = "2026-11-26T03:12:00+01:00", locked = true }   -- Thursday, the on-call night
local WORK     = { now = "2026-11-24T10:00:00+01:00", locked = true }   -- a Tuesday morning
local EVENING  = { now = "2026-11-24T19:30:00+01:00", locked = true }   -- a Tuesday evening, no focus
local SATURDAY = { now = "2026-11-28T11:00:00+01:00", locked = true }

local people = {
  alice = { handle = "alice@example.com", name = "Alice Doe" },
  bob   = { handle = "bob@example.com", name = "Bob Martin" },
  erin  = { handle = "erin@example.com", name = "Erin Park" },
  grace = { handle = "grace@example.com", name = "Grace Liu" },
  carol = { handle = "carol@example.com", name = "Carol Doe" },
  dan   = { handle = "dan@example.com", name = "Dan Weber" },
  frank = { handle = "frank@example.com", name = "Frank Ortiz" },
}

local function message(id, who, body, group, extra, date)
  local thread = group and group:lower():gsub(" ", "-") or who
  local payload = { aps = { alert = { title = group or people[who].name, body = body,
                                      ["summary-arg"] = people[who].name:match("^%S+") },
                            ["thread-id"] = thread, category = "MESSAGE", sound = "default" } }
  for k, v in pairs(extra or {}) do payload[k] = v end
  return { app = "com.example.chat", id = id, date = date, payload = payload,
           communication = { kind = "message", sender = people[who], group = group } }
end

local function call(id, date, handle, name)
  return { app = "com.example.phone", id = id, date = date,
           payload = { aps = { alert = { title = name or handle, body = "Incoming call" }, sound = "ringtone.caf" } },
           communication = { kind = "call", sender = { handle = handle, name = name } } }
end

local function page(id, service, body, criteria, critical)
  local aps = { alert = { title = service, body = body }, category = "PAGE", ["filter-criteria"] = criteria }
  if critical then
    aps.sound = { critical = 1, name = "siren.caf", volume = 0.8 }
    aps["interruption-level"] = "critical"
  else
    aps.sound = "default"
    aps["interruption-level"] = "time-sensitive"
  end
  return { app = "com.example.pager", id = id, payload = { aps = aps, incident = 4740 } }
end

local function mail(id, from, name, criteria)
  return { app = "com.example.mail", id = id,
           payload = { aps = { alert = { title = name, subtitle = "Q4 budget", body = "Can you approve before 3?" },
                               sound = "default", ["filter-criteria"] = criteria }, from = from } }
end

local function news(id, title)
  return { app = "com.example.news", id = id,
           payload = { aps = { alert = { title = title, body = "Storm warning for the coast" },
                               ["interruption-level"] = "time-sensitive", ["relevance-score"] = 0.9 } } }
end

-- Sleep ------------------------------------------------------------------------------------------

test("a friend's message waits silently at night", {
  context = NIGHT,
  notification = message("m1", "dan", "still up?"),
  expect = { delivery = "silenced", focus = "Sleep", breakthrough = null, alert = null },
})

test("Mum's first call at night is silenced (calls = nobody)", {
  context = { now = "2026-11-24T23:40:00+01:00", locked = true },
  notification = call("c1", nil, "+49 40 5550 0202", "Mum"),
  expect = { delivery = "silenced", focus = "Sleep", breakthrough = null },
})

test("Mum calling again two minutes later rings (repeated call)", {
  before = { call("c1", "2026-11-24T23:40:00+01:00", "+49 40 5550 0202", "Mum") },
  notification = call("c2", "2026-11-24T23:42:00+01:00", "+49 40 5550 0202", "Mum"),
  expect = { delivery = "alert", focus = "Sleep", breakthrough = "repeated-call", alert = { sound = true } },
})

test("a stranger calling twice at night stays silenced (rule)", {
  before = { call("c1", "2026-11-24T02:10:00+01:00", "+49 30 5550 9999") },
  notification = call("c2", "2026-11-24T02:11:00+01:00", "+49 30 5550 9999"),
  expect = { delivery = "silenced", breakthrough = null, rules = { "strangers never ring at night" } },
})

test("a SEV1 page is critical and rings through Sleep, past the ringer", {
  context = NIGHT,
  notification = page("p1", "payments-api", "SEV1: checkout failing for all card payments", "payments", true),
  expect = { delivery = "alert", level = "critical", focus = "Sleep", breakthrough = "critical",
             alert = { sound = true, bypass_ringer = true, volume = 0.8 }, rules = { "a SEV1 page is critical" } },
})

test("a time-sensitive page update waits: Sleep lets no time-sensitive through", {
  context = { now = "2026-11-26T03:31:00+01:00", locked = true },
  notification = page("p2", "payments-api", "Update: rollback in progress", "payments"),
  expect = { delivery = "silenced", level = "time-sensitive", focus = "Sleep", breakthrough = null },
})

test("a Black Friday deal at midnight is held for the 08:00 summary, not silenced", {
  context = { now = "2026-11-27T00:00:00+01:00", locked = true },
  notification = { app = "com.example.shop", id = "d1",
                   payload = { aps = { alert = { title = "Black Friday is live", body = "Up to 50% off" },
                                       category = "DEAL", badge = 1 } } },
  expect = { delivery = "summary", focus = "Sleep", summary_at = "2026-11-27T08:00:00+01:00", badge = null },
})

test("at 07:00 Sleep is over", {
  context = { now = "2026-11-24T07:00:00+01:00", locked = true },
  notification = message("m1", "carol", "Don't forget the keys"),
  expect = { delivery = "alert", focus = null, breakthrough = null },
})

-- Work -------------------------------------------------------------------------------------------

test("Grace, a listed colleague, gets through Work", {
  context = WORK,
  notification = message("m1", "grace", "Pairing on the retry fix later?"),
  expect = { delivery = "alert", focus = "Work", breakthrough = "person" },
})

test("a friend's direct message is silenced during Work", {
  context = WORK,
  notification = message("m1", "dan", "Climbing tonight at 7?"),
  expect = { delivery = "silenced", focus = "Work", breakthrough = null },
})

test("the Climbing crew waits for the 18:00 summary during Work, even Carol (a favorite)", {
  context = { now = "2026-11-24T12:20:00+01:00", locked = true },
  notification = message("g1", "carol", "bring the brush too", "Climbing crew"),
  expect = { delivery = "summary", summary_at = "2026-11-24T18:00:00+01:00", group = null, breakthrough = null,
             rules = { "group chatter waits for the summary during Work" } },
})

test("the third Team message in ten minutes lands quietly", {
  before = { message("t1", "erin", "Deploy train at 10:30", "Team", nil, "2026-11-24T09:05:00+01:00"),
             message("t2", "grace", "my PR for the retry fix", "Team", nil, "2026-11-24T09:06:00+01:00") },
  notification = message("t3", "bob", "go for it", "Team", nil, "2026-11-24T09:08:00+01:00"),
  expect = { delivery = "quiet", breakthrough = "person", alert = null, rules = { "a busy Team thread goes quiet" },
             group = { id = "com.example.chat/team", count = 3 } },
})

test("Frank is not on the list, but an @-mention gets through", {
  context = WORK,
  notification = message("t4", "frank", "@Sam can you review the checkout mockups?", "Team", { mentioned = true }),
  expect = { delivery = "alert", breakthrough = "rule", rules = { "@-mentions get through Work" } },
})

test("work mail is let through, quietly", {
  context = WORK,
  notification = mail("mail1", "bob@example.com", "Bob Martin", "work"),
  expect = { delivery = "quiet", focus = "Work", breakthrough = "app", alert = null, rules = {} },
})

test("mail from Alice, a VIP, is time-sensitive and rings", {
  context = WORK,
  notification = mail("mail2", "alice@example.com", "Alice Doe", "work"),
  expect = { delivery = "alert", level = "time-sensitive", breakthrough = "time-sensitive",
             rules = { "VIP mail is time-sensitive and rings" } },
})

test("personal-account mail is filtered out of Work", {
  context = WORK,
  notification = mail("mail3", "news@bikeshop.example", "Bike Shop Weekly", "personal"),
  expect = { delivery = "silenced", breakthrough = null },
})

test("a page for another team's service is filtered out of Work", {
  context = WORK,
  notification = page("p3", "search-indexer", "SEV3: indexing lag 12 minutes", "search"),
  expect = { delivery = "silenced", focus = "Work", breakthrough = null },
})

test("a call-centre number calling once during Work is silenced (calls = contacts)", {
  context = WORK,
  notification = call("c1", nil, "+49 30 5550 9999"),
  expect = { delivery = "silenced", breakthrough = null, rules = {} },
})

test("at 17:30 sharp Work has ended and Dan rings", {
  context = { now = "2026-11-24T17:30:00+01:00" },
  notification = message("m1", "dan", "Climbing tonight at 7?"),
  expect = { delivery = "alert", focus = null, breakthrough = null },
})

-- Summaries, evenings, weekends ----------------------------------------------------------------------

test("breaking news is not time-sensitive here: it waits for 18:00", {
  context = WORK,
  notification = news("n1", "Breaking"),
  expect = { delivery = "summary", level = "active", requested_level = "time-sensitive",
             summary_at = "2026-11-24T18:00:00+01:00" },
})

test("in the evening the news waits for tomorrow's 08:00", {
  context = EVENING,
  notification = news("n2", "Evening Briefing"),
  expect = { delivery = "summary", focus = null, summary_at = "2026-11-25T08:00:00+01:00" },
})

test("an order arriving today skips the summary (rule)", {
  context = { now = "2026-11-27T07:30:00+01:00", locked = true },
  notification = { app = "com.example.shop", id = "o1",
                   payload = { aps = { alert = { title = "Arriving today", body = "Order #5521, 18:00–20:00" },
                                       category = "DELIVERY_TODAY", sound = "default", badge = 1 } } },
  expect = { delivery = "alert", focus = null, badge = null,
             rules = { "deliveries arriving today skip the summary" } },
})

test("the denied game is dropped", {
  context = EVENING,
  notification = { app = "com.example.game", id = "g1",
                   payload = { aps = { alert = { title = "Your energy is full!", body = "Come back and play" } } } },
  expect = { delivery = "dropped", alert = null },
})

test("the bank hides its amounts on the locked screen", {
  context = EVENING,
  notification = { app = "com.example.bank", id = "b1",
                   payload = { aps = { alert = { title = "Card payment", body = "23,40 EUR at dm Drogerie" },
                                       category = "TRANSACTION", sound = "default" } } },
  expect = { delivery = "alert", placeholder = "Account activity" },
})

test("on Saturday Personal silences Bob", {
  context = SATURDAY,
  notification = message("m1", "bob", "Can you check the incident doc on Monday?"),
  expect = { delivery = "silenced", focus = "Personal", breakthrough = null },
})

test("on Saturday friends get through Personal", {
  context = SATURDAY,
  notification = message("m1", "dan", "5 min", "Climbing crew"),
  expect = { delivery = "alert", focus = "Personal", breakthrough = "person", rules = {} },
})
