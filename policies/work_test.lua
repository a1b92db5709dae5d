-- policies/work_test.lua: tests policies/work.lua (Work: weekdays 09:00–17:30 in Berlin).
local WORK = { now = "2026-11-24T10:00:00+01:00", locked = true }   -- a Tuesday morning

local people = {
  bob   = { handle = "bob@example.com", name = "Bob Martin" },
  erin  = { handle = "erin@example.com", name = "Erin Park" },
  dan   = { handle = "dan@example.com", name = "Dan Weber" },
  frank = { handle = "frank@example.com", name = "Frank Ortiz" },
}

local function message(id, who, body, group, extra)
  local thread = group and group:lower() or who
  local payload = { aps = { alert = { title = group or people[who].name, body = body,
                                      ["summary-arg"] = people[who].name:match("^%S+") },
                            ["thread-id"] = thread, category = "MESSAGE", badge = 1, sound = "default" } }
  for k, v in pairs(extra or {}) do payload[k] = v end
  return { app = "com.example.chat", id = id, payload = payload,
           communication = { kind = "message", sender = people[who], group = group } }
end

local function mail(id, from, criteria)
  return { app = "com.example.mail", id = id,
           payload = { aps = { alert = { title = "Alice Doe", subtitle = "Q4 budget", body = "Can you approve before 3?" },
                               badge = 3, ["filter-criteria"] = criteria }, from = from } }
end

test("Bob, a listed colleague, gets through Work", {
  context = WORK,
  notification = message("m1", "bob", "Standup moved to 9:30"),
  expect = { delivery = "alert", focus = "Work", breakthrough = "person",
             alert = { sound = true, lock_screen = true, banner = false },
             group = { id = "com.example.chat/bob", count = 1, summary = null } },
})

test("a friend's message is silenced during Work, badge still set", {
  context = WORK,
  notification = message("m1", "dan", "Climbing tonight at 7?"),
  expect = { delivery = "silenced", focus = "Work", breakthrough = null, alert = null, badge = 1,
             group = { id = "com.example.chat/dan", count = 1 } },
})

test("at 17:30 sharp Work has ended (the end is exclusive)", {
  context = { now = "2026-11-24T17:30:00+01:00" },
  notification = message("m1", "dan", "Climbing tonight at 7?"),
  expect = { delivery = "alert", focus = null, breakthrough = null },
})

test("mail from Alice, a favorite, is VIP: time-sensitive, it breaks through", {
  context = WORK,
  notification = mail("mail1", "alice@example.com", "work"),
  expect = { delivery = "alert", level = "time-sensitive", requested_level = "active", focus = "Work",
             breakthrough = "time-sensitive", rules = { "VIP mail is time-sensitive" }, badge = 3,
             group = { id = "com.example.mail", count = 1 } },   -- grouping = "app": one stack for all mail
})

test("personal-account mail is filtered out of Work, even from a VIP", {
  context = WORK,
  notification = mail("mail2", "alice@example.com", "personal"),
  expect = { delivery = "silenced", level = "time-sensitive", breakthrough = null,
             rules = { "VIP mail is time-sensitive" } },
})

test("a stranger calling again within 3 minutes rings the second time", {
  before = { { app = "com.example.phone", id = "call1", date = "2026-11-24T10:00:00+01:00",
               payload = { aps = { alert = { title = "+49 30 5550 9999", body = "Incoming call" } } },
               communication = { kind = "call", sender = { handle = "+49 30 5550 9999" } } } },
  notification = { app = "com.example.phone", id = "call2", date = "2026-11-24T10:02:30+01:00",
                   payload = { aps = { alert = { title = "+49 30 5550 9999", body = "Incoming call" } } },
                   communication = { kind = "call", sender = { handle = "+49305550 9999" } } },
  expect = { delivery = "alert", focus = "Work", breakthrough = "repeated-call",
             group = { id = "com.example.phone", count = 2, summary = "1 more notification" } },
})

test("an @-mention from someone not on the list gets through by rule, with a summary line", {
  context = WORK,
  before = { message("t1", "bob", "Standup moved to 9:30", "Team"), message("t2", "erin", "ok", "Team") },
  notification = message("t3", "frank", "@Sam can you review the mockups?", "Team", { mentioned = true }),
  expect = { delivery = "alert", breakthrough = "rule", rules = { "@-mentions get through Work" },
             group = { id = "com.example.chat/team", count = 3, summary = "2 more messages from Bob and Erin" } },
})

test("a sign-in code is time-sensitive and never grouped", {
  context = WORK,
  notification = { app = "com.example.auth", id = "otp1",
                   payload = { aps = { alert = { title = "Sign-in code", body = "Your code is 482913" },
                                       ["interruption-level"] = "time-sensitive" } } },
  expect = { delivery = "alert", level = "time-sensitive", breakthrough = "time-sensitive", group = null },
})
