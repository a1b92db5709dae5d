-- policies/personal_test.lua: tests policies/personal.lua (summaries at 08:00 and 18:00; the
-- Personal focus on weekday evenings and weekends, silencing work while the phone is locked).
local SATURDAY = { now = "2026-11-28T11:00:00+01:00", locked = true }

local bob = { handle = "bob@example.com", name = "Bob Martin" }

local function news(id, title, level)
  return { app = "com.example.news", id = id,
           payload = { aps = { alert = { title = title, body = "Gusts up to 120 km/h on the coast tonight" },
                               ["interruption-level"] = level, ["relevance-score"] = 0.9 } } }
end

local function episode(id, date, show)
  return { app = "com.example.podcasts", id = id, date = date,
           payload = { aps = { alert = { title = show, body = "New episode", ["summary-arg"] = show },
                               category = "NEW_EPISODE" }, show = show } }
end

test("breaking news is not time-sensitive here: it waits for the 18:00 summary", {
  context = SATURDAY,
  notification = news("n1", "Breaking: storm warning", "time-sensitive"),
  expect = { delivery = "summary", summary_at = "2026-11-28T18:00:00+01:00", level = "active",
             requested_level = "time-sensitive", focus = "Personal", breakthrough = null, alert = null, group = null },
})

test("after 18:00 the next summary is tomorrow at 08:00", {
  context = { now = "2026-11-28T19:00:00+01:00" },
  notification = news("n1", "Evening briefing"),
  expect = { delivery = "summary", summary_at = "2026-11-29T08:00:00+01:00" },
})

local function from_bob()
  return { app = "com.example.chat", id = "m1",
           payload = { aps = { alert = { title = "Bob Martin", body = "Quick question about Monday" }, category = "MESSAGE" } },
           communication = { kind = "message", sender = bob } }
end

test("Bob, a colleague, is silenced during Personal; the locked screen hides the text", {
  context = SATURDAY,
  notification = from_bob(),
  expect = { delivery = "silenced", focus = "Personal", breakthrough = null, placeholder = "Message" },
})

test("with the phone unlocked, Personal silences nothing (silence = locked)", {
  context = { now = "2026-11-28T11:00:00+01:00", locked = false },
  notification = from_bob(),
  expect = { delivery = "alert", focus = "Personal", breakthrough = null, placeholder = null,
             alert = { banner = true, lock_screen = false } },
})

test("a delivery arriving today skips the summary (rule); Shop sets no badge", {
  context = SATURDAY,
  notification = { app = "com.example.shop", id = "o1",
                   payload = { aps = { alert = { title = "Arriving today", body = "Order #5521, 18:00–20:00" },
                                       category = "DELIVERY_TODAY", badge = 1 } } },
  expect = { delivery = "alert", breakthrough = "app", badge = null,
             rules = { "deliveries arriving today skip the summary" } },
})

test("the bank's preview is hidden on the locked screen", {
  context = SATURDAY,
  notification = { app = "com.example.bank", id = "t1",
                   payload = { aps = { alert = { title = "Card payment", body = "42,90 EUR at Markthalle" },
                                       category = "TRANSACTION" } } },
  expect = { delivery = "alert", breakthrough = "app", placeholder = "Account activity" },
})

test("episodes held until 18:00 join their group; a live show then says '2 more episodes of …'", {
  context = { locked = true },
  before = { episode("e1", "2026-11-28T11:00:00+01:00", "Night Science"),
             episode("e2", "2026-11-28T12:00:00+01:00", "Tech Talk") },
  notification = { app = "com.example.podcasts", id = "live1", date = "2026-11-28T18:30:00+01:00",
                   payload = { aps = { alert = { title = "Tech Talk", body = "We're live: your questions" },
                                       category = "LIVE", ["interruption-level"] = "time-sensitive" } } },
  expect = { delivery = "alert", breakthrough = "time-sensitive",
             group = { id = "com.example.podcasts", count = 3, summary = "2 more episodes of Night Science and Tech Talk" } },
})

test("the Recipes trial (provisional) lands quietly", {
  context = SATURDAY,
  notification = { app = "com.example.trial", id = "r1",
                   payload = { aps = { alert = { title = "Recipe of the day", body = "Pumpkin soup in 25 minutes" } } } },
  expect = { delivery = "quiet", alert = null },
})
