#!/usr/bin/env bash
# Chaos: kill -9 under load. Runs `hush serve` on a SQLite file with a webhook receiver, loads it
# with wrk (scripts/chaos-wrk.lua: JSON Lines batches for 8 users, every decision answered 200
# recorded) and kills it with SIGKILL at KILLS random moments (0.5–3 s apart), restarting it each
# time on the same file, its clock (--clock, --speed) going on where it was. Then it lets the
# webhook catch up and checks, with sqlite3 on the file:
#   - every decision answered 200 is in state (its arrival: a row of `arrivals`, or a delivered
#     row that stands for it, schema v6; the retention, 7 days, is far longer than the run);
#   - every event of the outbox (`events`) reached the receiver (counted by Idempotency-Key), and
#     how many were delivered twice.
# A duplicate is the event in flight at a kill: the receiver had answered 2xx but the server died
# before it committed the webhook's cursor, so after the restart it sends that event again (with
# the same Idempotency-Key, for the receiver to drop). The sender has one event in flight at a
# time, so there is at most one duplicate per kill; nothing else is ever sent twice.
#   scripts/chaos.sh [KILLS] [SPEED]     (defaults: 20 kills, --speed 1800: 30 minutes a second)
# Prints the figures; exits 1 when a decision answered 200 is missing or an event was never
# delivered. Needs wrk, sqlite3 and python3 (the receiver). Builds hush first (swift build).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
kills="${1:-20}"
speed="${2:-1800}"
swift build --product hush >/dev/null 2>&1 || swift build --product hush
hush="$(swift build --show-bin-path)/hush"
dir="$(mktemp -d /tmp/hush-chaos.XXXXXX)"
export CHAOS_DIR="$dir"
state="$dir/state.sqlite"
port=$((20000 + RANDOM % 20000))
hook_port=$((port + 1))

# The receiver: acknowledges every POST and logs its Idempotency-Key and Hush-Event-Id.
cat > "$dir/receiver.py" <<'PY'
import http.server, sys
log = open(sys.argv[2], "a", buffering=1)
class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        log.write(f"{self.headers.get('Idempotency-Key')} {self.headers.get('Hush-Event-Id')}\n")
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *args): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Hook).serve_forever()
PY
python3 "$dir/receiver.py" "$hook_port" "$dir/deliveries.txt" &
receiver=$!
server=""
cleanup() {
    [ -n "$server" ] && kill -9 "$server" 2>/dev/null || true
    kill "$receiver" 2>/dev/null || true
}
trap cleanup EXIT

# One timeline across the restarts: the server's clock starts at 07:30 in Berlin on a Tuesday.
began=$(date +%s.%N)
clock_now() { python3 -c "import datetime,sys; t=datetime.datetime(2026,11,24,6,30,tzinfo=datetime.timezone.utc)+datetime.timedelta(seconds=($(date +%s.%N)-$began)*$speed); print(t.isoformat())"; }
restarts_refused=0
start() {
    for _ in $(seq 20); do
        "$hush" serve --listen "127.0.0.1:$port" --policy policies/personal.lua --context examples/context.json \
            --state "$state" --clock "$(clock_now)" --speed "$speed" --webhook "http://127.0.0.1:$hook_port/hook" \
            2>>"$dir/server.log" &
        server=$!
        for _ in $(seq 200); do
            curl -sf "127.0.0.1:$port/healthz" >/dev/null 2>&1 && return
            # Exited: the port could not be bound yet (seen now and then right after a kill -9); again.
            kill -0 "$server" 2>/dev/null || break
            sleep 0.05
        done
        restarts_refused=$((restarts_refused + 1))
        sleep 0.3
    done
    echo "chaos: the server did not start; see $dir/server.log" >&2; exit 1
}
start
total=$(python3 -c "print(int($kills * 1.75 + 5))")
wrk -t4 -c16 -d"${total}s" -s scripts/chaos-wrk.lua "http://127.0.0.1:$port" > "$dir/wrk.txt" 2>&1 &
load=$!
# Focus changes by hand all along (on, then off, user after user), so that events are recorded
# under load too and the webhook is busy when the kills come.
(
    k=0
    while kill -0 "$load" 2>/dev/null; do
        k=$((k + 1))
        focus='"Personal"'; [ $((k % 2)) -eq 0 ] && focus=null
        curl -s -m 5 -X PUT "127.0.0.1:$port/v1/users/u$(((k / 2) % 8))/focus" -d "{\"focus\":$focus}" >/dev/null 2>&1 || true
        sleep 0.05
    done
) &
toggler=$!
for k in $(seq "$kills"); do
    sleep "$(python3 -c "import random; print(round(random.uniform(0.5, 3.0), 2))")"
    kill -9 "$server"; wait "$server" 2>/dev/null || true
    start
done
wait "$load" || true
wait "$toggler" || true
# Let the webhook catch up: every event of the outbox delivered.
for _ in $(seq 600); do
    outbox=$(sqlite3 "$state" "SELECT count(*) FROM events")
    got=$(cut -d' ' -f2 "$dir/deliveries.txt" 2>/dev/null | sort -u | wc -l)
    [ "$got" -ge "$outbox" ] && break
    sleep 0.1
done
kill -TERM "$server"; wait "$server" || true
server=""

sqlite3 "$state" "SELECT user || ' ' || app || ' ' || id FROM arrivals UNION ALL
  SELECT user || ' ' || app || ' ' || id FROM delivered WHERE arrival_seq IS NOT NULL" | sort -u > "$dir/in-state.txt"
cat "$dir"/acked-*.txt | cut -d' ' -f1-3 | sort -u > "$dir/acked.txt"
acked=$(wc -l < "$dir/acked.txt")
found=$(comm -12 "$dir/acked.txt" "$dir/in-state.txt" | wc -l)
sqlite3 "$state" "SELECT seq FROM events" | sort -n > "$dir/outbox.txt"
events=$(wc -l < "$dir/outbox.txt")
deliveries=$(wc -l < "$dir/deliveries.txt")
cut -d' ' -f2 "$dir/deliveries.txt" | sort -n | uniq > "$dir/delivered.txt"
undelivered=$(comm -23 "$dir/outbox.txt" "$dir/delivered.txt" | wc -l)
duplicates=$((deliveries - $(wc -l < "$dir/delivered.txt")))
requests=$(awk '/requests in/ {print $1}' "$dir/wrk.txt")
errors=$(grep -o 'Socket errors:.*' "$dir/wrk.txt" || echo "Socket errors: none")
echo "chaos: kills $kills (restarts that could not bind the port at once: $restarts_refused); wrk requests $requests ($errors)"
echo "chaos: acknowledged decisions $acked, found in state $found"
echo "chaos: events $events, deliveries $deliveries, never delivered $undelivered, duplicates $duplicates"
echo "chaos: files in $dir"
[ "$found" -eq "$acked" ] && [ "$undelivered" -eq 0 ]
