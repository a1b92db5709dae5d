-- Benchmarks/standard.lua: the standard policy scripts/bench.sh measures.
--
-- A realistic personal policy: three scheduled focuses (Sleep, Work, Personal), a Scheduled
-- Summary at 08:00 and 18:00, per-app settings, contacts, summary formats, and five rules of the
-- kinds people write (a keyword in the body, a custom payload key, a category, the active focus).
-- Benchmarks/anchor.lua runs the same five rules, and the same decisions, in plain Lua.

timezone "Europe/Berlin"

contact { handle = "alice@example.com", name = "Alice Doe", favorite = true, aliases = { "+1 617 555 1212" } }
contact { handle = "bob@example.com", name = "Bob Martin", aliases = { "+49 30 5550 1000" } }
contact { handle = "erin@example.com", name = "Erin Park", aliases = { "+49 170 5550 0404" } }
contact { handle = "grace@example.com", name = "Grace Liu" }
contact { handle = "carol@example.com", name = "Carol Doe", favorite = true, aliases = { "+49 151 5550 0101" } }
contact { handle = "+49 40 5550 0202", name = "Mum", favorite = true }
contact { handle = "dan@example.com", name = "Dan Weber", aliases = { "+49 176 5550 0303" } }

app "*" { grouping = "automatic" }
app "com.example.chat" { name = "Chat" }
app "com.example.mail" { name = "Mail", grouping = "app" }
app "com.example.calendar" { name = "Calendar" }
app "com.example.news" { name = "News", summary = true, time_sensitive = false }
app "com.example.podcasts" { name = "Podcasts", summary = true }
app "com.example.shop" { name = "Shop", summary = true, badges = false }
app "com.example.bank" { name = "Bank", previews = "unlocked" }
app "com.example.pager" { name = "Pager", critical_alerts = true }
app "com.example.auth" { name = "Sign-in", grouping = "off" }
app "com.example.fitness" { name = "Fitness", delivery = "quiet" }
app "com.example.game" { authorization = "denied" }

category "MESSAGE" { summary_format = { one = "%u more message from %@", other = "%u more messages from %@" },
                     hidden_preview = { one = "Message", other = "%u Messages" } }
category "NEW_EPISODE" { summary_format = { one = "%u more episode of %@", other = "%u more episodes of %@" } }
category "TRANSACTION" { summary_format = "%u more transactions", hidden_preview = "Account activity" }

summary { at = { "08:00", "18:00" } }

focus "Sleep" {
  schedule = { days = "daily", from = "23:00", to = "07:00" },
  people = { favorites = true },
  calls = "favorites",
  repeated_calls = true,
}

focus "Work" {
  schedule = { days = "mon-fri", from = "09:00", to = "17:30" },
  people = { "bob@example.com", "erin@example.com", "grace@example.com", favorites = true },
  apps = { "com.example.mail", "com.example.calendar", "com.example.pager" },
  calls = "contacts",
  filters = { ["com.example.mail"] = { "work" } },
}

focus "Personal" {
  schedule = {
    { days = "mon-fri", from = "18:00", to = "22:00" },
    { days = "sat,sun", from = "09:00", to = "22:00" },
  },
  mode = "silence",
  people = { "bob@example.com", "erin@example.com" },
  apps = { "com.example.mail", "com.example.calendar" },
  silence = "locked",
}

rule("SEV1 pages are critical", function(n, ctx)
  if n.app == "com.example.pager" and n.body:find("SEV1", 1, true) then
    return { level = "critical", reason = "SEV1 page" }
  end
end)

rule("@-mentions get through Work", function(n, ctx)
  if ctx.focus == "Work" and n.app == "com.example.chat" and n.payload.mentioned then
    return { allow = true, reason = "you were mentioned" }
  end
end)

rule("deals wait for the summary", function(n, ctx)
  if n.category == "DEAL" then
    return { summary = true, reason = "a deal can wait" }
  end
end)

local followed = { ["Night Science"] = true, ["Tech Talk"] = true }

rule("followed shows first in the summary", function(n, ctx)
  if n.app == "com.example.podcasts" and followed[n.payload.show] then
    return { relevance = 1.0, reason = "a show you follow" }
  end
end)

rule("large transactions are time-sensitive", function(n, ctx)
  if n.app == "com.example.bank" and n.category == "TRANSACTION" and (n.payload.amount or 0) >= 500 then
    return { level = "time-sensitive", reason = "a large transaction" }
  end
end)
