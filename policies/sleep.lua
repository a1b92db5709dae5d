-- policies/sleep.lua: a Sleep focus every night from 23:00 to 07:00. Favorites get through;
-- everyone else waits in the list until morning. A stranger's repeated call does not wake me.

timezone "Europe/Berlin"

contact { handle = "+49 40 5550 0202", name = "Mum", favorite = true }
contact { handle = "carol@example.com", name = "Carol Doe", favorite = true, aliases = { "+49 151 5550 0101" } }
contact { handle = "alice@example.com", name = "Alice Doe", favorite = true, aliases = { "+1 617 555 1212" } }
contact { handle = "dan@example.com", name = "Dan Weber", aliases = { "+49 176 5550 0303" } }

app "*" { grouping = "automatic" }
app "com.example.bank" { name = "Bank", previews = "never" }   -- never show balances on the lock screen

focus "Sleep" {
  schedule = { days = "daily", from = "23:00", to = "07:00" },  -- wraps past midnight: the night starting that day
  people = { favorites = true },
  calls = "favorites",
  repeated_calls = true,       -- a second call within 3 minutes rings: it may be an emergency
  time_sensitive = false,      -- the bank and the calendar can wait for the morning
}

-- True when `person` is among the `top` people I reach most (aliases count as the same person).
local function among_suggested(person, top)
  local me = hush.contact(person)
  for _, s in ipairs(hush.suggested(top)) do
    local them = hush.contact(s)
    if s.handle == person.handle or (me and them and me.handle == them.handle) then return true end
  end
  return false
end

rule("the two people I reach most may ring through Sleep", function(n, ctx)
  local c = n.communication
  if ctx.focus == "Sleep" and c and c.kind == "call" and c.sender and among_suggested(c.sender, 2) then
    return { allow = true, reason = "one of the two people you reach most" }
  end
end)

-- Repeated calls exist for emergencies among people I know, not for call centres.
rule("strangers never ring at night", function(n, ctx)
  local c = n.communication
  if ctx.focus ~= "Sleep" or not c or c.kind ~= "call" or not c.sender then return end
  local known = hush.contact(c.sender) ~= nil
  local called = hush.interactions { person = c.sender, direction = "outgoing", days = 90 }
  hush.note(("caller %s: contact=%s, outgoing interactions=%d"):format(c.sender.handle or "?", tostring(known), called))
  if not known and called == 0 then
    return { delivery = "silenced", reason = "a number you never called, at night" }
  end
end)
