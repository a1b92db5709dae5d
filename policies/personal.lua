-- policies/personal.lua: evenings and weekends. News, podcasts and shopping wait for a summary at
-- 08:00 and 18:00; the Personal focus silences work (colleagues, Mail, Calendar) while the phone is locked.

timezone "Europe/Berlin"

contact { handle = "carol@example.com", name = "Carol Doe", favorite = true, aliases = { "+49 151 5550 0101" } }
contact { handle = "+49 40 5550 0202", name = "Mum", favorite = true }
contact { handle = "bob@example.com", name = "Bob Martin", aliases = { "+49 30 5550 1000" } }
contact { handle = "erin@example.com", name = "Erin Park", aliases = { "+49 170 5550 0404" } }

-- The Scheduled Summary: held notifications arrive together, most relevant first.
summary { at = { "08:00", "18:00" } }

app "*" { grouping = "automatic" }
app "com.example.news" { name = "News", summary = true, time_sensitive = false }  -- "breaking" can wait too
app "com.example.podcasts" { name = "Podcasts", summary = true }
app "com.example.shop" { name = "Shop", summary = true, badges = false }
app "com.example.chat" { name = "Chat", previews = "unlocked" }   -- no message text on a locked screen
app "com.example.bank" { name = "Bank", previews = "unlocked" }   -- no amounts either
app "com.example.trial" { name = "Recipes", authorization = "provisional" }  -- trying it out: quietly
app "com.example.game" { authorization = "denied" }

-- Summary lines ("2 more episodes of Night Science and Tech Talk") and placeholders ("3 Messages").
category "NEW_EPISODE" { summary_format = { one = "%u more episode of %@", other = "%u more episodes of %@" } }
category "MESSAGE" { summary_format = { one = "%u more message from %@", other = "%u more messages from %@" },
                     hidden_preview = { one = "Message", other = "%u Messages" } }
category "TRANSACTION" { summary_format = "%u more transactions", hidden_preview = "Account activity" }

focus "Personal" {
  schedule = {
    { days = "mon-fri", from = "18:00", to = "22:00" },
    { days = "sat,sun", from = "09:00", to = "22:00" },
  },
  mode = "silence",            -- the lists name what to silence; everyone and everything else gets through
  people = { "bob@example.com", "erin@example.com" },
  apps = { "com.example.mail", "com.example.calendar" },
  silence = "locked",          -- when I pick up the phone I see everything
}

-- Shows I follow: their new episodes come first in the summary.
local followed = { ["Night Science"] = true, ["Tech Talk"] = true }

rule("followed shows first in the summary", function(n, ctx)
  local show = n.payload.show
  if n.app == "com.example.podcasts" and show and followed[show] then
    return { relevance = 1.0, reason = show .. " is a show you follow" }
  end
end)

-- A parcel arriving today matters now, not at 18:00.
rule("deliveries arriving today skip the summary", function(n, ctx)
  if n.app == "com.example.shop" and n.category == "DELIVERY_TODAY" then
    return { summary = false, reason = "arriving today" }
  end
end)

-- Deals wait for the summary, from any app, even when the app calls them time-sensitive.
rule("deals wait for the summary", function(n, ctx)
  if n.category == "DEAL" then
    return { summary = true, reason = "a deal can wait" }
  end
end)
