-- policies/work.lua: a Work focus on weekdays that lets colleagues, favorites, Mail and Calendar
-- through, and makes mail from a VIP (a favorite contact) time-sensitive.

timezone "Europe/Berlin"

-- People. A contact's aliases are the same person: Alice's phone number counts as Alice.
contact { handle = "alice@example.com", name = "Alice Doe", favorite = true, aliases = { "+1 617 555 1212" } }
contact { handle = "bob@example.com", name = "Bob Martin", aliases = { "+49 30 5550 1000" } }
contact { handle = "erin@example.com", name = "Erin Park", aliases = { "+49 170 5550 0404" } }
contact { handle = "grace@example.com", name = "Grace Liu" }
contact { handle = "carol@example.com", name = "Carol Doe", favorite = true, aliases = { "+49 151 5550 0101" } }
contact { handle = "+49 40 5550 0202", name = "Mum", favorite = true }
contact { handle = "dan@example.com", name = "Dan Weber", aliases = { "+49 176 5550 0303" } }

-- Apps.
app "*" { grouping = "automatic" }
app "com.example.chat" { name = "Chat" }
app "com.example.mail" { name = "Mail", grouping = "app" }      -- one stack for all mail
app "com.example.calendar" { name = "Calendar" }
app "com.example.news" { name = "News", delivery = "quiet" }    -- read it when I look, never a buzz
app "com.example.shop" { name = "Shop", sounds = false, banners = false, lock_screen = false }  -- list only
app "com.example.auth" { name = "Sign-in", grouping = "off" }   -- every code on its own

-- The line under a chat thread: "2 more messages from Erin and Alice" (the summary-arg of each).
category "MESSAGE" { summary_format = { one = "%u more message from %@", other = "%u more messages from %@" } }

focus "Work" {
  schedule = { days = "mon-fri", from = "09:00", to = "17:30" },
  -- Bob and Erin by name, every favorite, and the 3 people I reach most during work hours (docs/reference.md, "People and suggestions").
  people = { "bob@example.com", "erin@example.com", favorites = true, suggested = 3 },
  apps = { "com.example.mail", "com.example.calendar" },
  calls = "contacts",          -- anyone in my contacts may call; strangers get a second chance (repeated calls)
  -- Mail from my personal account (filter-criteria "personal") stays out, even from a VIP.
  filters = { ["com.example.mail"] = { "work" } },
}

-- Mail carries the sender's address in a custom payload key, "from".
rule("VIP mail is time-sensitive", function(n, ctx)
  local from = n.app == "com.example.mail" and n.payload.from
  if from and hush.is_favorite(from) then
    local who = hush.contact(from)
    return { level = "time-sensitive", reason = "mail from " .. who.name .. ", a VIP" }
  end
end)

-- Team chat marks a message that @-mentions me with "mentioned": true.
rule("@-mentions get through Work", function(n, ctx)
  if ctx.focus == "Work" and n.app == "com.example.chat" and n.payload.mentioned then
    local group = n.communication and n.communication.group or "a chat"
    hush.note("mentioned in " .. group)
    return { allow = true, reason = "you were mentioned in " .. group }
  end
end)
