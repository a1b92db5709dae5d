-- policies/oncall.lua: on-call nights. The pager may send critical alerts; a SEV1 page is always
-- critical; pages of one incident stack together; a paging storm goes quiet after the third page.

timezone "Europe/Berlin"

contact { handle = "erin@example.com", name = "Erin Park", aliases = { "+49 170 5550 0404" } }
contact { handle = "bob@example.com", name = "Bob Martin", aliases = { "+49 30 5550 1000" } }
contact { handle = "alice@example.com", name = "Alice Doe", favorite = true, aliases = { "+1 617 555 1212" } }

app "*" { grouping = "automatic" }
app "com.example.pager" { name = "Pager", critical_alerts = true }   -- the critical-alerts permission
app "com.example.chat" { name = "Chat", sounds = false }              -- only the pager makes noise

-- Summary lines under an incident: "3 more pages" / "1 more page".
category "PAGE" { summary_format = { one = "%u more page", other = "%u more pages" } }

focus "On call" {
  schedule = { days = "daily", from = "18:00", to = "09:00" },   -- nights, wrapping past midnight
  people = { "erin@example.com", "bob@example.com" },            -- the team
  apps = { "com.example.pager" },
  calls = "everyone",          -- incident bridges call from numbers I don't know
  time_sensitive = true,
  -- Only pages for my services; a page for another team's service is silenced (critical aside).
  filters = { ["com.example.pager"] = { "payments", "checkout" } },
}

local PAGER = "com.example.pager"

rule("SEV1 pages are critical", function(n, ctx)
  if n.app == PAGER and n.body:find("SEV1", 1, true) then
    return { level = "critical", reason = "SEV1 page" }
  end
end)

-- The pager puts the incident number in the payload; thread by it, whatever thread-id says.
rule("pages of one incident stack together", function(n, ctx)
  local incident = n.app == PAGER and n.payload.incident
  if incident then
    return { thread = "incident-" .. incident }
  end
end)

-- Sees the thread set by the rule above (later rules see earlier changes).
rule("a paging storm goes quiet after the third page", function(n, ctx)
  if n.app ~= PAGER or n.level == "critical" or not n.thread then return end
  local earlier = hush.recent { app = PAGER, thread = n.thread, minutes = 10 }
  hush.note(("%d earlier pages in %s"):format(earlier, n.thread))
  if earlier >= 3 then
    return { delivery = "quiet", reason = "page " .. (earlier + 1) .. " of " .. n.thread .. " in 10 minutes" }
  end
end)
