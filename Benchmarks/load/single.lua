-- wrk: one notification per request, for $HUSH_BENCH_USERS users (default 50), ids prefixed by
-- $HUSH_BENCH_PREFIX (one prefix per wrk process, so two processes never send the same id).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local users = tonumber(os.getenv("HUSH_BENCH_USERS") or "50")
local prefix = os.getenv("HUSH_BENCH_PREFIX") or "w"
local n = 0
request = function()
  n = n + 1
  local body = string.format(
    '{"app":"com.example.chat","id":"%s%d","user":"u%d","payload":{"aps":{"alert":{"title":"Alice","body":"hello %d"},"sound":"default","thread-id":"t%d"}}}',
    prefix, n, n % users, n, n % 7)
  return wrk.format(nil, "/v1/notifications", nil, body)
end
