-- policies/driving_test.lua: tests policies/driving.lua. The car turns Driving on (context focus);
-- headphones without the car are the walk to work (no focus).
local CAR = { now = "2026-11-24T18:40:00+01:00", focus = "Driving", audio = "carplay", locked = true }
local WALK = { now = "2026-11-24T07:45:00+01:00", audio = "headphones", locked = true }

local carol = { handle = "carol@example.com", name = "Carol Doe" }
local alice = { handle = "alice@example.com", name = "Alice Doe" }
local dan = { handle = "dan@example.com", name = "Dan Weber" }

local function message(id, who, body, group)
  return { app = "com.example.chat", id = id,
           payload = { aps = { alert = { title = group or who.name, body = body },
                               ["thread-id"] = group and "climbing-crew" or who.handle } },
           communication = { kind = "message", sender = who, group = group } }
end

test("Carol's message is read aloud on CarPlay", {
  context = CAR,
  notification = message("m1", carol, "On my way home, need anything?"),
  expect = { delivery = "alert", focus = "Driving", breakthrough = "person",
             announcement = "Carol Doe says On my way home, need anything?" },
})

test("a group message names the group: '<sender> in <group> says <body>'", {
  context = CAR,
  notification = message("m1", alice, "Who's bringing the rope?", "Climbing crew"),
  expect = { delivery = "alert", breakthrough = "person",
             announcement = "Alice Doe in Climbing crew says Who's bringing the rope?" },
})

test("Dan is not a favorite: silenced while driving, and silence is not announced", {
  context = CAR,
  notification = message("m1", dan, "Climbing tonight at 7?"),
  expect = { delivery = "silenced", breakthrough = null, announcement = null },
})

test("anyone may call while driving, but CarPlay announces messages only", {
  context = CAR,
  notification = { app = "com.example.phone", id = "c1",
                   payload = { aps = { alert = { title = "+49 30 5550 9999", body = "Incoming call" } } },
                   communication = { kind = "call", sender = { handle = "+49 30 5550 9999" } } },
  expect = { delivery = "alert", breakthrough = "call", announcement = null,
             rules = { "announce only people I know" } },
})

test("in headphones, Dan (a contact) is announced without any focus", {
  context = WALK,
  notification = message("m1", dan, "Climbing tonight at 7?"),
  expect = { delivery = "alert", focus = null, breakthrough = null, announcement = "Dan Weber says Climbing tonight at 7?" },
})

test("in headphones, a stranger's message is delivered but not read aloud (rule)", {
  context = WALK,
  notification = message("m1", { handle = "jonas@example.org", name = "Jonas" }, "Is the bike still for sale?"),
  expect = { delivery = "alert", announcement = null, rules = { "announce only people I know" } },
})

test("the fourth message in 5 minutes from a group chat is not announced", {
  context = WALK,
  before = { message("g1", alice, "Who's bringing the rope?", "Climbing crew"),
             message("g2", dan, "Me!", "Climbing crew"),
             message("g3", carol, "I'll bring snacks", "Climbing crew") },
  notification = message("g4", dan, "And the quickdraws", "Climbing crew"),
  expect = { delivery = "alert", announcement = null, rules = { "busy group chats are not announced" },
             group = { id = "com.example.chat/climbing-crew", count = 4, summary = "3 more notifications" } },
})

test("the parcel app is announced (announce = true), the news app never (announce = false)", {
  context = WALK,
  before = { { app = "com.example.news", id = "n1",
               payload = { aps = { alert = { title = "Breaking", body = "Storm warning" }, ["interruption-level"] = "time-sensitive" } } } },
  notification = { app = "com.example.parcel", id = "p1",
                   payload = { aps = { alert = { title = "Out for delivery", body = "Arriving between 14:00 and 16:00" } } } },
  expect = { delivery = "alert", announcement = "Parcel: Out for delivery, Arriving between 14:00 and 16:00" },
})
