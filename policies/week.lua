-- policies/week.lua: Sam's week (examples/week.jsonl). Nights are silent but for Mum calling twice on
-- Tuesday and a SEV1 page (and Erin calling twice) on Wednesday's on-call night; at work colleagues ring
-- while friends' chatter, news and deals wait for the 08:00/18:00 summaries; evenings ring; weekends keep work out.

timezone "Europe/Berlin"

-- People. A contact's aliases are the same person: Alice's phone number counts as Alice.
contact { handle = "alice@example.com", name = "Alice Doe", favorite = true, aliases = { "+1 617 555 1212" } }
contact { handle = "bob@example.com", name = "Bob Martin", aliases = { "+49 30 5550 1000" } }
contact { handle = "erin@example.com", name = "Erin Park", aliases = { "+49 170 5550 0404" } }
contact { handle = "grace@example.com", name = "Grace Liu" }
contact { handle = "carol@example.com", name = "Carol Doe", favorite = true, aliases = { "+49 151 5550 0101" } }
contact { handle = "+49 40 5550 0202", name = "Mum", favorite = true }
contact { handle = "dan@example.com", name = "Dan Weber", aliases = { "+49 176 5550 0303" } }
contact { handle = "frank@example.com", name = "Frank Ortiz" }

-- The Scheduled Summary: held notifications arrive together, most relevant first.
summary { at = { "08:00", "18:00" } }

-- Apps.
app "*" { grouping = "automatic" }
app "com.example.chat" { name = "Chat" }
app "com.example.phone" { name = "Phone" }
app "com.example.mail" { name = "Mail", delivery = "quiet" }       -- mail never buzzes (VIP mail aside)
app "com.example.calendar" { name = "Calendar" }
app "com.example.news" { name = "News", summary = true, time_sensitive = false }  -- "breaking" can wait too
app "com.example.podcasts" { name = "Podcasts", summary = true }
app "com.example.shop" { name = "Shop", summary = true, badges = false }
app "com.example.bank" { name = "Bank", previews = "unlocked" }    -- no amounts on the lock screen
app "com.example.pager" { name = "Pager", critical_alerts = true } -- the critical-alerts permission
app "com.example.parcel" { name = "Parcel" }
app "com.example.auth" { name = "Sign-in", grouping = "off" }      -- every code on its own
app "com.example.trial" { name = "Recipes", authorization = "provisional" }  -- trying it out: quietly
app "com.example.game" { name = "Game", authorization = "denied" }

category "MESSAGE" { summary_format = { one = "%u more message from %@", other = "%u more messages from %@" } }
category "NEW_EPISODE" { summary_format = { one = "%u more episode of %@", other = "%u more episodes of %@" } }
category "PAGE" { summary_format = { one = "%u more page", other = "%u more pages" } }
category "TRANSACTION" { summary_format = "%u more transactions", hidden_preview = "Account activity" }

-- Declared first: at night nothing else is in force anyway.
focus "Sleep" {
  schedule = { days = "daily", from = "23:00", to = "07:00" },  -- the night starting that evening
  calls = "nobody",            -- a single call waits for the morning...
  repeated_calls = true,       -- ...a second one within 3 minutes rings: it may be an emergency
  time_sensitive = false,      -- the bank, the calendar and sign-in codes can wait; critical pages cannot
}

focus "Work" {
  schedule = { days = "mon-fri", from = "09:00", to = "17:30" },
  people = { "bob@example.com", "erin@example.com", "grace@example.com", favorites = true },
  apps = { "com.example.mail", "com.example.calendar", "com.example.pager" },
  calls = "contacts",
  -- Only work mail, and only pages for my services (payments, checkout).
  filters = { ["com.example.mail"] = { "work" }, ["com.example.pager"] = { "payments", "checkout" } },
}

focus "Personal" {
  schedule = { days = "sat,sun", from = "09:00", to = "23:00" },
  mode = "silence",            -- the lists name what to silence; everyone and everything else gets through
  people = { "bob@example.com", "erin@example.com", "grace@example.com", "frank@example.com" },
  apps = { "com.example.mail", "com.example.calendar", "com.example.pager" },
}

-- Mail carries the sender's address in a custom payload key, "from".
rule("VIP mail is time-sensitive and rings", function(n, ctx)
  local from = n.app == "com.example.mail" and n.payload.from
  if from and hush.is_favorite(from) then
    return { level = "time-sensitive", delivery = "alert", reason = "mail from " .. hush.contact(from).name .. ", a VIP" }
  end
end)

rule("a SEV1 page is critical", function(n, ctx)
  if n.app == "com.example.pager" and n.body:find("SEV1", 1, true) then
    return { level = "critical", reason = "SEV1 page" }
  end
end)

-- Team chat marks a message that @-mentions me with "mentioned": true.
rule("@-mentions get through Work", function(n, ctx)
  if ctx.focus == "Work" and n.app == "com.example.chat" and n.payload.mentioned then
    return { allow = true, reason = "you were mentioned in " .. (n.communication and n.communication.group or "a chat") }
  end
end)

-- During Work, friends' group chats (not the Team) wait for the 18:00 summary.
rule("group chatter waits for the summary during Work", function(n, ctx)
  local c = n.communication
  if ctx.focus == "Work" and c and c.kind == "message" and c.group and c.group ~= "Team" then
    return { delivery = "summary", reason = c.group .. " can wait until the evening" }
  end
end)

-- After two Team messages in ten minutes, the rest of the burst lands quietly (mentions aside).
rule("a busy Team thread goes quiet", function(n, ctx)
  local c = n.communication
  if ctx.focus == "Work" and c and c.group == "Team" and not n.payload.mentioned and n.thread then
    local earlier = hush.recent { app = n.app, thread = n.thread, minutes = 10 }
    hush.note(earlier .. " earlier messages in " .. n.thread)
    if earlier >= 2 then
      return { delivery = "quiet", reason = "Team is busy" }
    end
  end
end)

-- A parcel or order arriving today matters now, not at 18:00.
rule("deliveries arriving today skip the summary", function(n, ctx)
  if n.app == "com.example.shop" and n.category == "DELIVERY_TODAY" then
    return { summary = false, reason = "arriving today" }
  end
end)

-- Repeated calls exist for emergencies among people I know, not for call centres.
rule("strangers never ring at night", function(n, ctx)
  local c = n.communication
  if ctx.focus == "Sleep" and c and c.kind == "call" and c.sender and hush.contact(c.sender) == nil then
    return { delivery = "silenced", reason = "a number you don't know, at night" }
  end
end)
