-- wrk script for scripts/chaos.sh: POSTs JSON Lines batches of 4 notifications (news and shop for
-- the summaries, chat and bank alerts) for 8 users, each with an id never used before, and records
-- every decision answered 200 as "user app id delivery" in $CHAOS_DIR/acked-<thread>.txt, so the
-- script can look each one up in state after the kills.
local threads = {}
local counter = 1

function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

local apps = {
  { "com.example.news", "STORY" }, { "com.example.shop", "DEAL" },
  { "com.example.chat", "MESSAGE" }, { "com.example.bank", "TRANSACTION" },
}
local n = 0
local out

function init(args)
  out = assert(io.open(os.getenv("CHAOS_DIR") .. "/acked-" .. tid .. ".txt", "a"))
  out:setvbuf("line")
  math.randomseed(os.time() + tid)
end

function request()
  n = n + 1
  local lines = {}
  for i = 1, 4 do
    local app = apps[i]
    local user = "u" .. ((n + i + tid) % 8)
    local id = string.format("w%d-%d-%d-%d", tid, os.time(), n, i)
    lines[i] = string.format(
      '{"app":"%s","id":"%s","user":"%s","payload":{"aps":{"alert":{"title":"T","body":"B"},"category":"%s","thread-id":"t"}}}',
      app[1], id, user, app[2])
  end
  return wrk.format("POST", "/v1/notifications", { ["Content-Type"] = "application/x-ndjson" },
    table.concat(lines, "\n"))
end

function response(status, headers, body)
  if status ~= 200 then return end
  for line in body:gmatch("[^\n]+") do
    local id = line:match('^{"id":"([^"]*)"')
    local app = line:match('"app":"([^"]*)"')
    local user = line:match('"user":"([^"]*)"')
    local delivery = line:match('"delivery":"([^"]*)"')
    if id and app and user then out:write(user, " ", app, " ", id, " ", delivery or "?", "\n") end
  end
end
