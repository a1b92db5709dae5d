#!/usr/bin/env bash
# The benchmark (issue 16): builds release (hush, and the harness in Benchmarks/, a package of its
# own), generates the data, and prints every figure with its anchor, its target and whether it is
# met: `hush eval` on one core (--ephemeral and with a state file) and on all of them (--jobs N)
# against the Python JSON floor on the same file, the library (Benchmarks/: hush-benchmark) against
# raw Lua, `hush serve` under wrk (scripts/bench-service.sh), memory in every mode, and, with
# INSTRUCTIONS=1, instructions per line by component (scripts/bench-instructions.sh).
# Usage: bash scripts/bench.sh
#
# Environment (all optional):
#   EVALUATIONS=10000000   evaluations of the library's memory run (default 2000000)
#   USERS=200 PER_USER=1000 the generated stream: users and notifications per user (200,000 lines)
#   MIX_USERS=1000 MIX_PER_USER=200  a second stream of as many lines, spread over more users,
#                          for figure (2) again (a state file's cost grows with the users a
#                          batch touches); MIX_USERS=0: not measured
#   MANY_USERS=20000 MANY_PER_USER=10  a third, of many users with few notifications each, for
#                          figure (1) again (each user's first notification makes their copy of
#                          the policy), and (2) and (6) (a state file; --jobs): every mode's
#                          memory grows with the users; MANY_USERS=0: not measured
#   RUNS=3                 runs of each `hush eval` and of the Python floor (the best counts;
#                          the runs compared with each other are interleaved, round by round)
#   JOBS=N                 threads of the `hush eval --jobs N` figures (default: the cores)
#   SERVE=1                the service figures (scripts/bench-service.sh, quick mode; default 1
#                          when wrk is installed); DURATION=15s each wrk run there;
#                          SERVICE_SCRIPT=PATH another copy of that script
#   INSTRUCTIONS=1         also instructions per line by component (callgrind; slow; default 0)
#   BIN=PATH               measure this hush binary instead of building one (e.g. an older build)
#   HARNESS=PATH           this hush-benchmark instead of building one; LIBRARY=0: no library figures
#   HUSH_BENCH_SCRATCH     swift build --scratch-path (default .build; the harness: the same
#                          name inside Benchmarks/, e.g. Benchmarks/.build)
#   HUSH_BENCH_BUILD_FLAGS extra flags for swift build (e.g. "-Xswiftc -g")
#   BENCH_RESULTS=FILE     also write the table as Markdown to FILE
# A quick check of the whole script (noisy numbers):
#   USERS=20 PER_USER=200 RUNS=1 EVALUATIONS=20000 DURATION=3s bash scripts/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."

EVALUATIONS=${EVALUATIONS:-2000000}
USERS=${USERS:-200}
PER_USER=${PER_USER:-1000}
MIX_USERS=${MIX_USERS:-1000}
MIX_PER_USER=${MIX_PER_USER:-200}
MANY_USERS=${MANY_USERS:-20000}
MANY_PER_USER=${MANY_PER_USER:-10}
RUNS=${RUNS:-3}
JOBS=${JOBS:-$(nproc)}
SCRATCH=${HUSH_BENCH_SCRATCH:-.build}
DATA="$SCRATCH/bench-data"
POLICY=Benchmarks/standard.lua
CONTEXT=Benchmarks/context.json
case "$SCRATCH" in
  /*) HARNESS_SCRATCH="$SCRATCH/benchmarks" ;;
  *) HARNESS_SCRATCH="Benchmarks/$SCRATCH" ;;
esac

# The anchors and load tools (lua5.4, wrk, valgrind, GNU time), installed where missing.
bash scripts/setup.sh --bench >&2
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:/opt/swift/bin:$PATH"
need() { command -v "$1" >/dev/null 2>&1 || { echo "bench.sh: $1 is needed ($2)" >&2; exit 2; }; }
need swift "the Swift toolchain"
need python3 "for the generator and the Python floor"
need lua5.4 "apt-get install lua5.4, for the raw-Lua anchor"
[ -x /usr/bin/time ] || { echo "bench.sh: /usr/bin/time is needed (apt-get install time: CPU time and peak RSS)" >&2; exit 2; }
if [ -z "${SERVE:-}" ]; then
  if command -v wrk >/dev/null 2>&1; then SERVE=1; else SERVE=0; fi
fi
INSTRUCTIONS=${INSTRUCTIONS:-0}
if [ "$INSTRUCTIONS" = 1 ]; then need valgrind "apt-get install valgrind, for INSTRUCTIONS=1"; fi

LIBRARY=${LIBRARY:-1}
if [ -z "${BIN:-}" ]; then
  echo "== build (release): hush" >&2
  # shellcheck disable=SC2086
  swift build -c release --static-swift-stdlib --scratch-path "$SCRATCH" ${HUSH_BENCH_BUILD_FLAGS:-} >&2
  BIN="$SCRATCH/release/hush"
fi
if [ "$LIBRARY" = 1 ] && [ -z "${HARNESS:-}" ]; then
  echo "== build (release): the harness (Benchmarks/)" >&2
  # A path dependency's new source files can be missing from the build plan SwiftPM kept
  # (release.yaml): when the build fails, it is made again from a fresh plan, once.
  # shellcheck disable=SC2086
  swift build -c release --package-path Benchmarks --scratch-path "$HARNESS_SCRATCH" ${HUSH_BENCH_BUILD_FLAGS:-} >&2 ||
    { rm -f "$HARNESS_SCRATCH/release.yaml" &&
      swift build -c release --package-path Benchmarks --scratch-path "$HARNESS_SCRATCH" ${HUSH_BENCH_BUILD_FLAGS:-} >&2; }
  HARNESS="$HARNESS_SCRATCH/release/hush-benchmark"
fi
[ -x "$BIN" ] || { echo "bench.sh: $BIN is not an executable" >&2; exit 2; }

echo "== data: $USERS users x $PER_USER notifications, one week" >&2
mkdir -p "$DATA"
STREAM="$DATA/stream-$USERS-$PER_USER.jsonl"
TABLES="$DATA/stream-$USERS-$PER_USER.lua"
if [ ! -s "$STREAM" ] || [ ! -s "$TABLES" ] || [ Benchmarks/generate.py -nt "$STREAM" ]; then
  python3 Benchmarks/generate.py --users "$USERS" --per-user "$PER_USER" --out "$STREAM" --lua "$TABLES"
fi
LINES=$(wc -l <"$STREAM")
# extra_stream USERS PER_USER: a further stream of as many users and notifications each (generated
# when missing or older than the generator); prints its line count, 0 when USERS is 0.
extra_stream() {
  [ "$1" != 0 ] || { echo 0; return; }
  local path="$DATA/stream-$1-$2.jsonl"
  if [ ! -s "$path" ] || [ Benchmarks/generate.py -nt "$path" ]; then
    python3 Benchmarks/generate.py --users "$1" --per-user "$2" --out "$path" >&2
  fi
  wc -l <"$path"
}
MIX_STREAM="$DATA/stream-$MIX_USERS-$MIX_PER_USER.jsonl"
MIX_LINES=$(extra_stream "$MIX_USERS" "$MIX_PER_USER")
MANY_STREAM="$DATA/stream-$MANY_USERS-$MANY_PER_USER.jsonl"
MANY_LINES=$(extra_stream "$MANY_USERS" "$MANY_PER_USER")
FIGURES="$DATA/figures.txt" # key=value: every measurement, for the table
: >"$FIGURES"
put() { echo "$1=$2" >>"$FIGURES"; }

# One timed run of "$@" (output discarded): prints "cpu_seconds wall_seconds max_rss_kb".
timed() {
  local out="$DATA/time.txt"
  if ! /usr/bin/time -v "$@" >/dev/null 2>"$out"; then
    echo "bench.sh: failed: $*" >&2
    tail -25 "$out" >&2
    return 1
  fi
  awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} /Elapsed \(wall clock\)/ {w=$2} /Maximum resident/ {m=$2}
    END { n = split(w, p, ":"); secs = 0; for (i = 1; i <= n; i++) secs = secs * 60 + p[i]; printf "%.3f %.3f %d\n", u + s, secs, m }' "$out"
}

# once NAME COMMAND...: one timed run; keeps the least CPU and wall time and the most RSS of
# NAME's runs so far. A {STATE} argument is a fresh SQLite file for each run.
declare -A BEST_CPU BEST_WALL MAX_RSS
once() {
  local name=$1; shift
  local c w r args
  rm -f "$DATA/state.sqlite" "$DATA/state.sqlite-wal" "$DATA/state.sqlite-shm"
  args=()
  for a in "$@"; do if [ "$a" = "{STATE}" ]; then args+=("$DATA/state.sqlite"); else args+=("$a"); fi; done
  read -r c w r <<<"$(timed "${args[@]}")"
  [ -n "$c" ] || exit 1
  rm -f "$DATA/state.sqlite" "$DATA/state.sqlite-wal" "$DATA/state.sqlite-shm"
  if [ -z "${BEST_CPU[$name]:-}" ] || awk -v a="$c" -v b="${BEST_CPU[$name]}" 'BEGIN { exit !(a < b) }'; then BEST_CPU[$name]=$c; fi
  if [ -z "${BEST_WALL[$name]:-}" ] || awk -v a="$w" -v b="${BEST_WALL[$name]}" 'BEGIN { exit !(a < b) }'; then BEST_WALL[$name]=$w; fi
  if [ "$r" -gt "${MAX_RSS[$name]:-0}" ]; then MAX_RSS[$name]=$r; fi
}

# record NAME: puts NAME_cpu and NAME_wall (the least of its runs) and NAME_rss_mb (the most).
record() {
  put "${1}_cpu" "${BEST_CPU[$1]}"
  put "${1}_wall" "${BEST_WALL[$1]}"
  put "${1}_rss_mb" "$(awk -v r="${MAX_RSS[$1]}" 'BEGIN { printf "%.1f", r / 1024 }')"
}

# measure NAME COMMAND...: RUNS runs in a row, recorded.
measure() {
  local name=$1; shift
  for _ in $(seq "$RUNS"); do once "$name" "$@"; done
  record "$name"
}

# interleaved NAME...: RUNS rounds, each running every named command (the array CMD_NAME) once,
# in turn; then each is recorded. Figures compared with each other (hush and the Python floor)
# are measured this way: the host's speed drifts by several percent within minutes, and runs
# one after another in one block would carry that drift into the ratio.
interleaved() {
  local name
  for _ in $(seq "$RUNS"); do
    for name in "$@"; do
      local -n cmd="CMD_$name"
      once "$name" "${cmd[@]}"
      unset -n cmd
    done
  done
  for name in "$@"; do record "$name"; done
}

EVAL=("$BIN" eval --policy "$POLICY" --context "$CONTEXT")
if "$BIN" eval --help 2>/dev/null | grep -q -- '--jobs'; then
  HAS_JOBS=1
  ONE=(--jobs 1)
else
  HAS_JOBS=0
  ONE=()
  echo "bench.sh: $BIN eval has no --jobs: the all-cores figures are n/a" >&2
fi
put has_jobs "$HAS_JOBS"
put jobs "$JOBS"

# (1), (2) and (3) on the stream, and the Python floor, interleaved (see `interleaved`).
CMD_eph=("${EVAL[@]}" "${ONE[@]}" --ephemeral "$STREAM")
CMD_state=("${EVAL[@]}" "${ONE[@]}" --state "{STATE}" "$STREAM")
CMD_py=(python3 Benchmarks/anchor_json.py "$STREAM")
ROUND=(eph state py)
ROUND_WORDS="hush eval --ephemeral --jobs 1, with a state file (a fresh SQLite file)"
# One core as the system gives it: `taskset -c 0`, with --jobs left to its default (the cores hush
# may run on, so one thread here, as with --jobs 1).
if command -v taskset >/dev/null 2>&1; then
  CMD_eph_taskset=(taskset -c 0 "${EVAL[@]}" --ephemeral "$STREAM")
  ROUND+=(eph_taskset)
  ROUND_WORDS+=", taskset -c 0 hush eval --ephemeral"
fi
if [ "$HAS_JOBS" = 1 ]; then
  CMD_jobs_eph=("${EVAL[@]}" --jobs "$JOBS" --ephemeral "$STREAM")
  CMD_jobs_state=("${EVAL[@]}" --jobs "$JOBS" --state "{STATE}" "$STREAM")
  ROUND+=(jobs_eph jobs_state)
  ROUND_WORDS+=", --jobs $JOBS --ephemeral and with a state file"
fi
echo "== (1), (2), (3) on $LINES lines: $ROUND_WORDS; the Python floor (json.loads/json.dumps per line); $RUNS rounds, interleaved, the best of each" >&2
interleaved "${ROUND[@]}"
if [ "$MIX_USERS" != 0 ]; then
  echo "== (2) again on $MIX_LINES lines of $MIX_USERS users: --ephemeral and a state file, interleaved (best of $RUNS)" >&2
  CMD_mix_eph=("${EVAL[@]}" "${ONE[@]}" --ephemeral "$MIX_STREAM")
  CMD_mix_state=("${EVAL[@]}" "${ONE[@]}" --state "{STATE}" "$MIX_STREAM")
  interleaved mix_eph mix_state
fi
if [ "$MANY_USERS" != 0 ]; then
  # (1) again, and (2) and (6) on the same many users: every mode's memory, and a state file's time.
  echo "== (1), (2), (6) on $MANY_LINES lines of $MANY_USERS users: --ephemeral, the Python floor, a state file, --jobs $JOBS --ephemeral, interleaved (best of $RUNS)" >&2
  CMD_many_eph=("${EVAL[@]}" "${ONE[@]}" --ephemeral "$MANY_STREAM")
  CMD_many_py=(python3 Benchmarks/anchor_json.py "$MANY_STREAM")
  CMD_many_state=("${EVAL[@]}" "${ONE[@]}" --state "{STATE}" "$MANY_STREAM")
  MANY_ROUND=(many_eph many_py many_state)
  if [ "$HAS_JOBS" = 1 ]; then
    CMD_many_jobs_eph=("${EVAL[@]}" --jobs "$JOBS" --ephemeral "$MANY_STREAM")
    MANY_ROUND+=(many_jobs_eph)
  fi
  interleaved "${MANY_ROUND[@]}"
fi

if [ "$LIBRARY" = 1 ]; then
  echo "== (4) the library (Benchmarks/: hush-benchmark)" >&2
  "$HARNESS" --policy "$POLICY" --context "$CONTEXT" --evaluations "$EVALUATIONS" --report "$DATA/library.txt" "$STREAM" >&2
  sed 's/^/lib_/' "$DATA/library.txt" >>"$FIGURES"
  # The library leaves the allocator to its embedder; the hush executable links mimalloc. The
  # same figures with mimalloc preloaded, beside (the targets are judged on the default above).
  MIMALLOC=$(ldconfig -p 2>/dev/null | sed -n 's/.*libmimalloc\.so\.2 .*=> \(.*\)$/\1/p' | head -n 1)
  if [ -n "$MIMALLOC" ]; then
    echo "== (4) the library with mimalloc ($MIMALLOC preloaded)" >&2
    LD_PRELOAD="$MIMALLOC" "$HARNESS" --policy "$POLICY" --context "$CONTEXT" --evaluations 0 \
      --report "$DATA/library-mimalloc.txt" "$STREAM" >&2
    sed 's/^/libmi_/' "$DATA/library-mimalloc.txt" >>"$FIGURES"
  fi
  echo "== (6) the library's peak RSS on the stream, read a chunk at a time (hush-benchmark --streaming)" >&2
  RUNS=1 measure libstream "$HARNESS" --policy "$POLICY" --context "$CONTEXT" --streaming "$STREAM"
fi
put library "$LIBRARY"

echo "== anchor: lua5.4, the same decisions in plain Lua over pre-built tables" >&2
LUA_OUT=$(lua5.4 Benchmarks/anchor.lua "$TABLES" "$RUNS")
put lua_rate "$(echo "$LUA_OUT" | sed -n 's/.*decisions_per_second=\([0-9]*\).*/\1/p')"
put lua_rules_rate "$(echo "$LUA_OUT" | sed -n 's/.*rules_only_per_second=\([0-9]*\).*/\1/p')"

SERVICE="$DATA/service.txt"
rm -f "$SERVICE"
SERVICE_SCRIPT=${SERVICE_SCRIPT:-scripts/bench-service.sh}
if [ "$SERVE" = 1 ] && ! grep -q 'QUICK' "$SERVICE_SCRIPT"; then
  echo "bench.sh: $SERVICE_SCRIPT has no quick mode (QUICK=1) yet: the service figures are n/a" >&2
  SERVE=0
fi
if [ "$SERVE" = 1 ]; then
  need wrk "apt-get install wrk, for the service figures (or SERVE=0)"
  echo "== (5) hush serve under wrk (QUICK=1 bash scripts/bench-service.sh)" >&2
  if ! QUICK=1 REPORT="$SERVICE" STREAM="$STREAM" HUSH_BENCH_SCRATCH="$SCRATCH" HUSH_BENCH_BIN="$BIN" \
    bash "$SERVICE_SCRIPT" >&2; then
    echo "bench.sh: $SERVICE_SCRIPT failed: the service figures are n/a" >&2
  fi
  [ -s "$SERVICE" ] && cat "$SERVICE" >>"$FIGURES"
  put serve 1
else
  put serve 0
fi

INSTR="$DATA/instructions.txt"
rm -f "$INSTR"
if [ "$INSTRUCTIONS" = 1 ]; then
  echo "== (7) instructions per line by component (scripts/bench-instructions.sh)" >&2
  # 20,000 lines, differenced with the first 1,000 (fewer on a smaller stream).
  ILINES=$((LINES < 20000 ? LINES : 20000))
  BIN="$BIN" STREAM="$STREAM" LUA_TABLES="$TABLES" REPORT="$DATA/instructions.kv" \
    LINES=$ILINES BASE_LINES=$((ILINES / 20)) bash scripts/bench-instructions.sh >"$INSTR"
fi

# MARK: the table
CPU_MODEL=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
NPROC=$(nproc)
DATE=$(date -u +"%Y-%m-%d %H:%M UTC")
SWIFT=$(swift --version 2>/dev/null | head -1 | sed 's/ (.*//')
HEAD="Machine: $NPROC cores, $CPU_MODEL; $SWIFT; $DATE. Stream: $LINES notifications, $USERS users, one week (Benchmarks/generate.py); policy Benchmarks/standard.lua; best of $RUNS runs, hush and the Python floor interleaved."

python3 - "$FIGURES" "$LINES" "$HEAD" "$INSTR" "$MIX_USERS" "$MIX_LINES" "$MANY_USERS" "$MANY_LINES" <<'EOF'
import math, os, sys
fig = {}
for l in open(sys.argv[1]):
    if "=" in l:
        k, v = l.strip().split("=", 1)
        try:
            fig[k] = float(v)
        except ValueError:
            pass
lines = int(sys.argv[2])
nan = float("nan")
g = lambda k: fig.get(k, nan)
have = lambda *ks: all(k in fig and not math.isnan(fig[k]) for k in ks)
rows = []
def row(name, value, target="", met=None):
    rows.append((name, value, target, "" if met is None else "yes" if met else "**no**"))
def rate(k):  # lines/s by wall and by CPU
    return lines / g(k + "_wall"), lines / g(k + "_cpu")
NA = "n/a"
jobs = int(g("jobs"))
has_jobs = g("has_jobs") == 1
one = " --jobs 1" if has_jobs else ""
py_w, py_c = rate("py")

# (1) one core, --ephemeral, vs the Python floor
e_w, e_c = rate("eph")
row(f"anchor: Python json.loads+json.dumps per line (Benchmarks/anchor_json.py): lines/s, wall / CPU", f"{py_w:,.0f} / {py_c:,.0f}")
row(f"(1) hush eval --ephemeral{one}: lines/s, wall / CPU", f"{e_w:,.0f} / {e_c:,.0f}")
row("(1) vs the Python floor, by CPU time", f"{e_c / py_c:.2f}x", ">= 2x", e_c / py_c >= 2)
row("(1) vs the Python floor, by wall clock", f"{e_w / py_w:.2f}x", ">= 2x", e_w / py_w >= 2)
if have("eph_taskset_wall"):
    t_w, t_c = rate("eph_taskset")
    row("(1) taskset -c 0 hush eval --ephemeral (default --jobs): lines/s, wall / CPU", f"{t_w:,.0f} / {t_c:,.0f}")
    row("(1) taskset -c 0, default --jobs, vs the Python floor, by wall clock", f"{t_w / py_w:.2f}x", ">= 2x", t_w / py_w >= 2)
if have("many_eph_wall", "many_py_wall"):
    # Every user's first notification makes their copy of the policy (~200,000 instructions);
    # with more users than fit in half the interpreter's memory cap, copies are made again.
    many = f"{int(sys.argv[8]):,} lines of {int(sys.argv[7]):,} users"
    ratio = g("many_py_wall") / g("many_eph_wall")
    row(f"(1) the same on {many}: vs the Python floor on them, by wall clock ({g('many_eph_wall'):.2f} s / {g('many_py_wall'):.2f} s)",
        f"{ratio:.2f}x", ">= 2x", ratio >= 2)
# (2) a state file
s_w, s_c = rate("state")
row(f"(2) hush eval with a state file (fresh SQLite){one}: lines/s, wall / CPU", f"{s_w:,.0f} / {s_c:,.0f}")
row("(2) state file vs (1): time, wall clock", f"{g('state_wall') / g('eph_wall'):.2f}x", "<= 1.5x", g("state_wall") / g("eph_wall") <= 1.5)
row("(2) state file vs (1): time, CPU", f"{g('state_cpu') / g('eph_cpu'):.2f}x", "", None)
if have("mix_eph_wall", "mix_state_wall"):
    mix = f"{int(sys.argv[6]):,} lines of {int(sys.argv[5]):,} users"
    ratio = g("mix_state_wall") / g("mix_eph_wall")
    row(f"(2) the same on {mix}: state file vs --ephemeral{one}, wall clock ({g('mix_state_wall'):.2f} s / {g('mix_eph_wall'):.2f} s)",
        f"{ratio:.2f}x", "<= 1.5x", ratio <= 1.5)
if have("many_eph_wall", "many_state_wall"):
    many = f"{int(sys.argv[8]):,} lines of {int(sys.argv[7]):,} users"
    ratio = g("many_state_wall") / g("many_eph_wall")
    row(f"(2) the same on {many}: state file vs --ephemeral{one}, wall clock ({g('many_state_wall'):.2f} s / {g('many_eph_wall'):.2f} s)",
        f"{ratio:.2f}x", "<= 1.5x", ratio <= 1.5)
# (3) all cores
if has_jobs:
    j_w, j_c = rate("jobs_eph")
    js_w, js_c = rate("jobs_state")
    row(f"(3) hush eval --jobs {jobs} --ephemeral: lines/s, wall (CPU of all threads)", f"{j_w:,.0f} ({j_c:,.0f})")
    row(f"(3) --jobs {jobs} vs the Python floor, by wall clock", f"{j_w / py_w:.2f}x", ">= 4x", j_w / py_w >= 4)
    row(f"(3) --jobs {jobs} vs --jobs 1 (ephemeral), by wall clock", f"{j_w / e_w:.2f}x", "", None)
    row(f"(3) hush eval --jobs {jobs} with a state file: lines/s, wall (CPU)", f"{js_w:,.0f} ({js_c:,.0f})")
    row(f"(3) --jobs {jobs} state file vs --jobs {jobs} ephemeral: time, wall clock", f"{g('jobs_state_wall') / g('jobs_eph_wall'):.2f}x", "<= 1.5x",
        g("jobs_state_wall") / g("jobs_eph_wall") <= 1.5)
else:
    row(f"(3) hush eval --jobs {jobs}: vs the Python floor, by wall clock", "n/a (no --jobs)", ">= 4x")
    row(f"(3) hush eval --jobs {jobs} with a state file", "n/a (no --jobs)", "<= 1.5x")
# (4) the library
lib_one = g("lib_one_core_cpu_per_s")
row("anchor: raw Lua, the whole decision (lua5.4 Benchmarks/anchor.lua): decisions/s (CPU)", f"{g('lua_rate'):,.0f}")
row("anchor: raw Lua, the five rules alone: notifications/s (CPU)", f"{g('lua_rules_rate'):,.0f}")
if g("library") != 1:
    row("(4) library, 1 core: decisions/s", "n/a (LIBRARY=0)", ">= 500,000")
    row("(4) library, 2 cores: speed-up", "n/a (LIBRARY=0)", ">= 1.8x")
if g("library") == 1:
    row("(4) library, 1 core: decisions/s, CPU (wall)", f"{lib_one:,.0f} ({g('lib_one_core_wall_per_s'):,.0f})", ">= 500,000", lib_one >= 500_000)
    row("(4) library vs the raw-Lua decision", f"{lib_one / g('lua_rate'):.2f}x", "", None)
    row("(4) library, 1 core: latency p50 / p99", f"{g('lib_latency_p50_us'):.1f} / {g('lib_latency_p99_us'):.1f} µs")
    if have("lib_threads"):
        t = int(g("lib_threads"))
        row(f"(4) library, {t} cores: decisions/s (wall)", f"{g('lib_multi_core_wall_per_s'):,.0f}")
        sc, sw = g("lib_multi_core_speedup_cpu"), g("lib_multi_core_speedup_wall")
        row(f"(4) {t} cores: speed-up, per-thread CPU time", f"{sc:.2f}x", ">= 1.8x", sc >= 1.8)
        row(f"(4) {t} cores: speed-up, wall clock (shared machine)", f"{sw:.2f}x", ">= 1.8x", sw >= 1.8)
    if have("libmi_one_core_cpu_per_s"):
        row("(4) the same with mimalloc, as the hush executable links it: 1 core, decisions/s CPU (wall)",
            f"{g('libmi_one_core_cpu_per_s'):,.0f} ({g('libmi_one_core_wall_per_s'):,.0f})")
        if have("libmi_threads"):
            row(f"(4) with mimalloc, {int(g('libmi_threads'))} cores: speed-up, per-thread CPU / wall clock",
                f"{g('libmi_multi_core_speedup_cpu'):.2f}x / {g('libmi_multi_core_speedup_wall'):.2f}x")
    row("(4) policy load (Engine: read, validate, prepare)", f"{g('lib_load_engine_ms'):.2f} ms", "< 5 ms", g("lib_load_engine_ms") < 5)
# (5) the service
for prefix, label in (("serve_", "state file (SQLite)"), ("serve_ephemeral_", "--ephemeral")):
    if g("serve") != 1:
        for what, target in (("single POSTs/s", ">= 20,000"), ("single p99", "< 10 ms"), ("batch decisions/s", ">= 150,000")):
            row(f"(5) hush serve, {label}: {what}", "n/a (wrk absent, SERVE=0, or no quick mode)", target)
        continue
    def val(key, fmt, ok=None):
        k = prefix + key
        return (fmt.format(g(k)), ok(g(k)) if ok else None) if have(k) else ("n/a", None)
    v, m = val("single_per_s", "{:,.0f}", ok=lambda x: x >= 20_000)
    row(f"(5) hush serve, {label}: single-notification POSTs/s", v, ">= 20,000", m)
    v, m = val("single_p99_ms", "{:.2f} ms", ok=lambda x: x < 10)
    row(f"(5) hush serve, {label}: single POST p99", v, "< 10 ms", m)
    v, m = val("batch_decisions_per_s", "{:,.0f}", ok=lambda x: x >= 150_000)
    row(f"(5) hush serve, {label}: decisions/s in JSON Lines batches", v, ">= 150,000", m)
    v, _ = val("batch_p99_ms", "{:.2f} ms")
    row(f"(5) hush serve, {label}: batch p99", v)
    v, m = val("stream_rss_mb", "{:.0f} MB", ok=lambda x: x < 200)
    row(f"(6) peak RSS, hush serve, {label} ({lines:,} lines POSTed in batches of 1,000)", v, "< 200 MB", m)
    v, _ = val("rss_mb", "{:.0f} MB")
    row(f"(6) for scale: hush serve, {label}, peak RSS after the wrk runs (all they decided, kept 7 days)", v)
# (6) memory
def rss(label, key, count=lines):
    if have(key):
        row(f"(6) peak RSS, {label} ({count:,} lines)", f"{g(key):.0f} MB", "< 200 MB", g(key) < 200)
    else:
        row(f"(6) peak RSS, {label}", "n/a (no --jobs)", "< 200 MB")
rss(f"hush eval --ephemeral{one}", "eph_rss_mb")
rss(f"hush eval, state file{one}", "state_rss_mb")
rss(f"hush eval --jobs {jobs} --ephemeral", "jobs_eph_rss_mb")
rss(f"hush eval --jobs {jobs}, state file", "jobs_state_rss_mb")
if have("mix_eph_rss_mb", "mix_state_rss_mb"):
    rss(f"hush eval --ephemeral{one}, {int(sys.argv[5]):,} users", "mix_eph_rss_mb", int(sys.argv[6]))
    rss(f"hush eval, state file{one}, {int(sys.argv[5]):,} users", "mix_state_rss_mb", int(sys.argv[6]))
if have("many_eph_rss_mb"):
    rss(f"hush eval --ephemeral{one}, {int(sys.argv[7]):,} users", "many_eph_rss_mb", int(sys.argv[8]))
if have("many_state_rss_mb"):
    rss(f"hush eval, state file{one}, {int(sys.argv[7]):,} users", "many_state_rss_mb", int(sys.argv[8]))
if have("many_jobs_eph_rss_mb"):
    rss(f"hush eval --jobs {jobs} --ephemeral, {int(sys.argv[7]):,} users", "many_jobs_eph_rss_mb", int(sys.argv[8]))
if g("library") == 1:
    rss("the library, one session, the stream read a chunk at a time (hush-benchmark --streaming)", "libstream_rss_mb")
    first, last = g("lib_memory_rss_after_first_week_mb"), g("lib_memory_rss_end_mb")
    row(f"(6) library memory: RSS after one week / after {g('lib_memory_evaluations'):,.0f} evaluations", f"{first:.0f} / {last:.0f} MB",
        "flat (< 10% growth)", (last - first) <= 0.1 * first)
    row("(6) for scale: the library benchmark's peak RSS (the whole stream decoded in memory)", f"{g('lib_peak_rss_mb'):.0f} MB")
else:
    row("(6) peak RSS, the library; memory over many evaluations", "n/a (LIBRARY=0)", "< 200 MB; flat")

out = [sys.argv[3], "", "| figure | value | target | met |", "|---|---|---|---|"]
out += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
if os.path.exists(sys.argv[4]) and os.path.getsize(sys.argv[4]):
    out += ["", "(7) " + open(sys.argv[4]).read().strip()]
else:
    out += ["", "(7) Instructions per line by component: INSTRUCTIONS=1 (or bash scripts/bench-instructions.sh)."]
text = "\n".join(out)
print(text)
if os.environ.get("BENCH_RESULTS"):
    open(os.environ["BENCH_RESULTS"], "w").write(text + "\n")
EOF
