#!/usr/bin/env bash
# Instructions per line by component (issue 16), counted by callgrind: where `hush eval` spends its
# instructions, against the budgets of the issue. Instruction counts are steady on a shared
# machine, where wall time is not: this is the before/after comparison.
#
#   bash scripts/bench-instructions.sh                  # builds release, the benchmark stream's data
#   BIN=/tmp/hush-before bash scripts/bench-instructions.sh   # any hush binary (symbols kept)
#
# It runs `hush eval --ephemeral` and `hush eval --state FILE` (a fresh SQLite file) on the first
# LINES lines of the benchmark stream, and on its first BASE_LINES lines: every figure is the
# difference of the two runs divided by LINES - BASE_LINES, so startup (policy load, the
# interpreter, opening the file) cancels out, and so does what each user's first notifications
# cost once (on the benchmark stream, the first 1,000 lines hold nearly every user's first; with
# much fewer the rules' figure is several times higher). Components (Benchmarks/instructions.py: mangled-name
# patterns; each instruction counted in the innermost component it runs in):
#   parse     HushJSON.JSONParser.parse (the line's JSON)
#   decode    Envelope.decode (JSON value to Envelope)
#   rules     PolicyInterpreter.runRules (the Lua rules, the view of n included)
#   pipeline  Pipeline.evaluate, less the rules and the store calls it makes
#   store     the state store's methods (InMemoryStateStore / SQLiteStateStore: reads, apply,
#             takeDueSummaries, commits...), wherever called from
#   write     Decision.write (the decision's JSON)
#   rest      the remainder: reading lines, output, the session around the pipeline
# The rules' anchor is raw Lua: `lua5.4 Benchmarks/anchor.lua` running the five rules alone over
# the same notifications (ANCHOR_ONLY=rules, less ANCHOR_ONLY=load), per notification.
#
# Environment (all optional):
#   BIN=PATH          the hush binary (default: swift build -c release --static-swift-stdlib, .build/release/hush)
#   STREAM=FILE       JSON Lines to take the lines from (default: the benchmark stream, generated
#                     as scripts/bench.sh does: Benchmarks/generate.py, 200 users x 1,000)
#   LUA_TABLES=FILE   the same stream as Lua tables (generate.py --lua; default: next to the
#                     generated stream; without it, no raw-Lua anchor)
#   LINES=20000 BASE_LINES=1000
#   RULES_FACTOR=1.5  "rules ≈ raw Lua" is met when the rules cost at most this times raw Lua
#   STATE=0           skip the state-file run (the slower one)
#   KEEP=DIR          keep the callgrind files in DIR (callgrind_annotate --inclusive=yes FILE)
#   REPORT=FILE       also write key=value lines (eph_parse=..., state_store=..., lua_rules=...)
set -euo pipefail
# Paths given are the caller's: made absolute before moving to the repository.
for var in BIN STREAM LUA_TABLES KEEP REPORT; do
  if [ -n "${!var:-}" ]; then printf -v "$var" '%s' "$(realpath -m "${!var}")"; fi
done
cd "$(dirname "$0")/.."

LINES=${LINES:-20000}
BASE_LINES=${BASE_LINES:-1000}
RULES_FACTOR=${RULES_FACTOR:-1.5}
POLICY=Benchmarks/standard.lua
CONTEXT=Benchmarks/context.json

need() { command -v "$1" >/dev/null 2>&1 || { echo "bench-instructions.sh: $1 is needed ($2)" >&2; exit 2; }; }
need valgrind "apt-get install valgrind (callgrind counts the instructions)"
need objcopy "apt-get install binutils (a copy of the binary without debug info, for valgrind)"
need python3 "to attribute the counts (Benchmarks/instructions.py)"
[ "$BASE_LINES" -lt "$LINES" ] || { echo "bench-instructions.sh: BASE_LINES must be less than LINES" >&2; exit 2; }

if [ -z "${BIN:-}" ]; then
  need swift "the Swift toolchain (or give BIN=path)"
  echo "== build (release)" >&2
  swift build -c release --static-swift-stdlib >&2
  BIN=.build/release/hush
fi
[ -x "$BIN" ] || { echo "bench-instructions.sh: $BIN is not an executable" >&2; exit 2; }

if [ -z "${STREAM:-}" ]; then
  DATA=.build/bench-data
  STREAM="$DATA/stream-200-1000.jsonl"
  LUA_TABLES=${LUA_TABLES:-$DATA/stream-200-1000.lua}
  if [ ! -s "$STREAM" ] || [ ! -s "$LUA_TABLES" ] || [ Benchmarks/generate.py -nt "$STREAM" ]; then
    echo "== data: Benchmarks/generate.py, 200 users x 1,000" >&2
    mkdir -p "$DATA"
    python3 Benchmarks/generate.py --users 200 --per-user 1000 --out "$STREAM" --lua "$LUA_TABLES" >&2
  fi
fi
[ -s "$STREAM" ] || { echo "bench-instructions.sh: $STREAM: no such file" >&2; exit 2; }

WORK=$(mktemp -d /tmp/hush-instructions-XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# valgrind 3.19 cannot read Swift 6.3's DWARF 5: a copy without debug info (the symbols stay).
objcopy --strip-debug "$BIN" "$WORK/hush"
head -n "$LINES" "$STREAM" >"$WORK/lines.jsonl"
head -n "$BASE_LINES" "$STREAM" >"$WORK/base.jsonl"
GOT=$(wc -l <"$WORK/lines.jsonl")
[ "$GOT" -eq "$LINES" ] || { echo "bench-instructions.sh: $STREAM has $GOT lines, fewer than LINES=$LINES" >&2; exit 2; }

# callgrind NAME ARGS...: runs ARGS under callgrind into $WORK/NAME.cg (output discarded).
callgrind() {
  local name=$1; shift
  valgrind --tool=callgrind --callgrind-out-file="$WORK/$name.cg" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || {
    echo "bench-instructions.sh: $name failed under callgrind:" >&2; tail -5 "$WORK/$name.err" >&2; return 1
  }
}
# One thread, so that binaries with and without `--jobs` count the same work.
JOBS=()
if "$BIN" eval --help 2>/dev/null | grep -q -- '--jobs'; then JOBS=(--jobs 1); fi
eval_run() { # NAME INPUT MODE
  local name=$1 input=$2 mode=$3
  if [ "$mode" = ephemeral ]; then
    callgrind "$name" "$WORK/hush" eval "${JOBS[@]}" --ephemeral --policy "$POLICY" --context "$CONTEXT" "$input"
  else
    callgrind "$name" "$WORK/hush" eval "${JOBS[@]}" --state "$WORK/$name.sqlite" --policy "$POLICY" --context "$CONTEXT" "$input"
  fi
}

echo "== callgrind: $BIN eval, $LINES and $BASE_LINES lines of $STREAM (a few minutes)" >&2
# Two at a time (the machine's cores); each job is one process.
eval_run eph "$WORK/lines.jsonl" ephemeral & PIDS+=($!)
eval_run eph-base "$WORK/base.jsonl" ephemeral & PIDS+=($!)
wait "${PIDS[0]}" && wait "${PIDS[1]}"
PIDS=()
if [ "${STATE:-1}" != 0 ]; then
  eval_run state "$WORK/lines.jsonl" state & PIDS+=($!)
  eval_run state-base "$WORK/base.jsonl" state & PIDS+=($!)
  wait "${PIDS[0]}" && wait "${PIDS[1]}"
  PIDS=()
fi
for name in eph state; do
  [ -s "$WORK/$name.out" ] || continue
  got=$(wc -l <"$WORK/$name.out")
  [ "$got" -eq "$LINES" ] || { echo "bench-instructions.sh: $name printed $got lines for $LINES" >&2; exit 1; }
done

LUA_RULES=""
if [ -n "${LUA_TABLES:-}" ] && [ -s "$LUA_TABLES" ] && command -v lua5.4 >/dev/null 2>&1; then
  # generate.py writes one notification a line between "return {" and "}".
  { head -n "$((LINES + 1))" "$LUA_TABLES"; echo "}"; } >"$WORK/tables.lua"
  echo "== callgrind: lua5.4 Benchmarks/anchor.lua, the five rules alone, $LINES notifications" >&2
  ANCHOR_ONLY=rules callgrind lua-rules lua5.4 Benchmarks/anchor.lua "$WORK/tables.lua" & PIDS+=($!)
  ANCHOR_ONLY=load callgrind lua-load lua5.4 Benchmarks/anchor.lua "$WORK/tables.lua" & PIDS+=($!)
  wait "${PIDS[0]}" && wait "${PIDS[1]}"
  PIDS=()
  grep -q "notifications=$LINES " "$WORK/lua-rules.out" || {
    echo "bench-instructions.sh: the Lua tables do not hold $LINES notifications" >&2; exit 1
  }
  LUA_RULES=$(python3 - "$WORK/lua-rules.cg" "$WORK/lua-load.cg" "$LINES" <<'PY'
import re, sys
def total(path):
    for line in open(path, errors="replace"):
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
print(round((total(sys.argv[1]) - total(sys.argv[2])) / int(sys.argv[3])))
PY
)
else
  echo "bench-instructions.sh: no raw-Lua anchor (needs lua5.4 and LUA_TABLES, the stream as Lua tables)" >&2
fi

python3 Benchmarks/instructions.py --lines "$LINES" --base "$WORK/eph-base.cg" --base-lines "$BASE_LINES" \
  "$WORK/eph.cg" >"$WORK/eph.txt"
if [ -s "$WORK/state.cg" ]; then
  python3 Benchmarks/instructions.py --lines "$LINES" --base "$WORK/state-base.cg" --base-lines "$BASE_LINES" \
    "$WORK/state.cg" >"$WORK/state.txt"
fi
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$WORK"/*.cg "$KEEP"/; fi

python3 - "$WORK/eph.txt" "$WORK/state.txt" "$LUA_RULES" "$RULES_FACTOR" "$BIN" "$LINES" "$BASE_LINES" <<'PY'
import os, sys
def load(path):
    try:
        return {k: float(v) for k, v in (l.strip().split("=", 1) for l in open(path) if "=" in l)}
    except FileNotFoundError:
        return {}
eph, state = load(sys.argv[1]), load(sys.argv[2])
lua = float(sys.argv[3]) if sys.argv[3] else None
factor = float(sys.argv[4])
budgets = {"parse": 2000, "decode": 2000, "pipeline": 5000, "store": 5000, "write": 2000}
if lua is not None:
    budgets["rules"] = factor * lua
def budget_text(k):
    if k == "rules":
        return f"≈ raw Lua: ≤ {factor:g} x {lua:,.0f}" if lua is not None else "≈ raw Lua (n/a)"
    return f"≤ {budgets[k]:,.0f}" if k in budgets else ""
def met(k, v):
    if k not in budgets or v is None:
        return ""
    return "yes" if v <= budgets[k] else "no"
def cell(d, k):
    return f"{d[k]:,.0f}" if k in d else "n/a"
rows = ["parse", "decode", "rules", "pipeline", "store", "write", "rest", "total"]
out = [f"Instructions per line (callgrind; {sys.argv[5]}; lines {int(sys.argv[7]) + 1:,}–{int(sys.argv[6]):,} of the stream, startup excluded)", ""]
out.append("| component | --ephemeral | budget | met | state file (SQLite) | met |")
out.append("|---|---|---|---|---|---|")
for k in rows:
    out.append(f"| {k} | {cell(eph, k)} | {budget_text(k)} | {met(k, eph.get(k))} | {cell(state, k)} | {met(k, state.get(k))} |")
if lua is not None:
    out.append(f"| (anchor) the five rules alone in raw Lua, lua5.4 | {lua:,.0f} | | | | |")
print("\n".join(out))
report = os.environ.get("REPORT")
if report:
    with open(report, "w") as f:
        for prefix, d in (("eph", eph), ("state", state)):
            for k, v in d.items():
                f.write(f"{prefix}_{k}={v:.0f}\n")
        if lua is not None:
            f.write(f"lua_rules={lua:.0f}\n")
PY
