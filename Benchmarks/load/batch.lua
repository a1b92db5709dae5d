-- wrk: JSON Lines batches of $HUSH_BENCH_BATCH notifications (default 1000) over
-- $HUSH_BENCH_USERS users (default 50), each batch with new ids (prefixed by $HUSH_BENCH_PREFIX).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-ndjson"
local users = tonumber(os.getenv("HUSH_BENCH_USERS") or "50")
local size = tonumber(os.getenv("HUSH_BENCH_BATCH") or "1000")
local prefix = os.getenv("HUSH_BENCH_PREFIX") or "b"
local n = 0
request = function()
  local lines = {}
  for i = 1, size do
    n = n + 1
    lines[i] = string.format(
      '{"app":"com.example.chat","id":"%s%d","user":"u%d","payload":{"aps":{"alert":{"title":"Bob","body":"batch %d"},"thread-id":"t%d"}}}',
      prefix, n, n % users, n, n % 7)
  end
  return wrk.format(nil, "/v1/notifications", nil, table.concat(lines, "\n"))
end
