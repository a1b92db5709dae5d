-- policies/default_test.lua: tests policies/default.lua, the built-in behaviour with no focus,
-- no summary and no rules (docs/reference.md, "The pipeline, in order"). Run with: hush test policies
local TUESDAY = { now = "2026-11-24T10:30:00+01:00", timezone = "Europe/Berlin", locked = true }

local function message(id, body)
  return { app = "com.example.chat", id = id,
           payload = { aps = { alert = { title = "Dan Weber", body = body }, sound = "default", ["thread-id"] = "dan" } },
           communication = { kind = "message", sender = { handle = "dan@example.com", name = "Dan Weber" } } }
end

test("a message alerts with sound and starts its thread's group", {
  context = TUESDAY,
  notification = message("m1", "Climbing tonight at 7?"),
  expect = { delivery = "alert", level = "active", focus = null, breakthrough = null,
             alert = { sound = true, sound_name = "default", vibrate = true, wake_screen = true,
                       banner = false, lock_screen = true, bypass_ringer = false },
             announcement = null, placeholder = null, summary_at = null, replaces = null,
             group = { id = "com.example.chat/dan", count = 1, summary = null } },
})

test("the third message of a thread: the group says '2 more notifications'", {
  context = TUESDAY,
  before = { message("m1", "Climbing tonight at 7?"), message("m2", "Carol's in too") },
  notification = message("m3", "Bring chalk"),
  expect = { delivery = "alert", group = { id = "com.example.chat/dan", count = 3, summary = "2 more notifications" } },
})

test("a passive notification lands quietly: no sound, no banner", {
  context = TUESDAY,
  notification = { app = "com.example.calendar", id = "c1",
                   payload = { aps = { alert = { title = "Tomorrow", body = "Dentist at 08:15" }, ["interruption-level"] = "passive" } } },
  expect = { delivery = "quiet", level = "passive", alert = null, group = { id = "com.example.calendar", count = 1 } },
})

test("critical without the critical-alerts permission is downgraded to active", {
  context = TUESDAY,
  notification = { app = "com.example.pager", id = "p1",
                   payload = { aps = { alert = { title = "payments-api", body = "SEV2: error rate 4.8%" },
                                       sound = { critical = 1, name = "siren.caf", volume = 0.7 },
                                       ["interruption-level"] = "critical" } } },
  expect = { delivery = "alert", level = "active", requested_level = "critical", breakthrough = null,
             alert = { sound = true, sound_name = "siren.caf", volume = null, bypass_ringer = false } },
})

test("with the ringer on silent: no sound, but it still vibrates", {
  context = { now = "2026-11-24T10:30:00+01:00", locked = false, ringer = "silent" },
  notification = message("m1", "Climbing tonight at 7?"),
  expect = { delivery = "alert", alert = { sound = false, sound_name = null, vibrate = true, banner = true, lock_screen = false } },
})

test("a background push shows nothing", {
  context = TUESDAY,
  notification = { app = "com.example.mail", id = "sync1", headers = { ["apns-push-type"] = "background", ["apns-priority"] = 5 },
                   payload = { aps = { ["content-available"] = 1 }, mailbox = "INBOX" } },
  expect = { delivery = "background", alert = null, group = null },
})

test("a notification whose apns-expiration has passed is dropped", {
  context = TUESDAY,
  -- 1795501800 = 2026-11-24T06:30:00Z (07:30 in Berlin), three hours before now
  notification = { app = "com.example.shop", id = "deal1", headers = { ["apns-expiration"] = 1795501800 },
                   payload = { aps = { alert = { title = "Flash sale", body = "40% off until 07:30" } } } },
  expect = { delivery = "dropped", alert = null, group = null },
})

test("the same apns-collapse-id replaces the first notification in place", {
  context = TUESDAY,
  before = { { app = "com.example.parcel", headers = { ["apns-collapse-id"] = "parcel-88" },
               payload = { aps = { alert = { title = "Out for delivery", body = "Arriving between 14:00 and 16:00" } } } } },
  notification = { app = "com.example.parcel", headers = { ["apns-collapse-id"] = "parcel-88" },
                   payload = { aps = { alert = { title = "Delivered", body = "Left with your neighbour" } } } },
  expect = { delivery = "alert", replaces = "parcel-88", group = { id = "com.example.parcel", count = 1, summary = null } },
})
