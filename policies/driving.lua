-- policies/driving.lua: on the move. The car turns the Driving focus on (context focus = "Driving");
-- Siri reads messages on CarPlay and in headphones, but only from people I know.

timezone "Europe/Berlin"

contact { handle = "carol@example.com", name = "Carol Doe", favorite = true, aliases = { "+49 151 5550 0101" } }
contact { handle = "+49 40 5550 0202", name = "Mum", favorite = true }
contact { handle = "alice@example.com", name = "Alice Doe", favorite = true, aliases = { "+1 617 555 1212" } }
contact { handle = "dan@example.com", name = "Dan Weber", aliases = { "+49 176 5550 0303" } }

announce { carplay = true, headphones = true }

app "*" { grouping = "automatic" }
app "com.example.chat" { name = "Chat" }
app "com.example.parcel" { name = "Parcel", announce = true }   -- "Parcel: Out for delivery, …" in my ears
app "com.example.news" { name = "News", announce = false }      -- never read the news to me

-- No schedule: the car turns it on. Favorites may message; anyone may call (hands-free).
focus "Driving" {
  people = { favorites = true },
  calls = "everyone",
  repeated_calls = false,      -- every call rings anyway
}

-- Strangers (not a contact, never written to or called) are delivered, but not read aloud.
rule("announce only people I know", function(n, ctx)
  local sender = n.communication and n.communication.sender
  if ctx.audio == "none" or not sender then return end
  if not hush.contact(sender) and hush.interactions { person = sender, direction = "outgoing" } == 0 then
    return { announce = false, reason = "not announced: you don't know " .. (sender.name or sender.handle) }
  end
end)

-- A busy group chat would talk non-stop: after 3 messages in 5 minutes, stop reading it aloud.
rule("busy group chats are not announced", function(n, ctx)
  local c = n.communication
  if ctx.audio ~= "none" and c and c.group and n.thread
     and hush.recent { app = n.app, thread = n.thread, minutes = 5 } >= 3 then
    return { announce = false, reason = c.group .. " is busy" }
  end
end)
