#!/usr/bin/env bash
# Rebuilds the seed corpora in fuzz/corpus/ from examples/ and policies/ (plus the hand-written
# seeds in fuzz/seeds/). Run from anywhere; the files are named by content hash, so re-running is
# idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
corpus="$root/fuzz/corpus"
mkdir -p "$corpus/envelope" "$corpus/policy" "$corpus/luabridge" "$corpus/service"

put() { # put DIR < content
    local tmp; tmp="$(mktemp)"; cat > "$tmp"
    mv "$tmp" "$1/seed-$(sha1sum "$tmp" | cut -c1-16)"
}

# envelope: every example line alone, small streams of consecutive lines, contexts and interactions.
for f in "$root"/examples/*.jsonl; do
    while IFS= read -r line; do [ -n "$line" ] && printf '%s\n' "$line" | put "$corpus/envelope"; done < "$f"
    split -l 4 -d "$f" "$corpus/envelope/.chunk-"
    for c in "$corpus"/envelope/.chunk-*; do put "$corpus/envelope" < "$c"; rm -f "$c"; done
done
for f in "$root"/examples/context.json "$root"/examples/contexts/*.json; do put "$corpus/envelope" < "$f"; done
cp "$root"/fuzz/seeds/envelope/* "$corpus/envelope/" 2>/dev/null || true

# policy: the bundled policies (not their tests) and hand-written hostile or odd ones.
for f in "$root"/policies/*.lua; do case "$f" in *_test.lua) ;; *) put "$corpus/policy" < "$f";; esac; done
cp "$root"/fuzz/seeds/policy/* "$corpus/policy/" 2>/dev/null || true

# luabridge: hand-written chunk<NUL>json seeds, and each example line behind a chunk that walks it.
cp "$root"/fuzz/seeds/luabridge/* "$corpus/luabridge/" 2>/dev/null || true
head -n 5 "$root/examples/apps.jsonl" | while IFS= read -r line; do
    { printf 'local p, echo, fail = ...\nlocal function walk(t, d) if type(t) == "table" and d < 8 then for k, v in pairs(t) do walk(v, d + 1) end end return t end\nreturn echo(walk(p, 0)), #tostring(p)'; printf '\0%s' "$line"; } | put "$corpus/luabridge"
done
# service: operations separated by NUL, each led by its byte (see FuzzService.swift): the example
# streams as JSON Lines batches, then the clock moved on; the interactions; each bundled policy put.
for f in "$root"/examples/*.jsonl; do
    split -l 6 -d "$f" "$corpus/service/.chunk-"
    for c in "$corpus"/service/.chunk-*; do { printf '\001'; cat "$c"; printf '\000\006\100\000\005u1'; } | put "$corpus/service"; rm -f "$c"; done
done
{ printf '\003'; head -n 20 "$root/examples/interactions.jsonl"; printf '\000\005Personal'; } | put "$corpus/service"
for f in "$root"/policies/*.lua; do
    case "$f" in *_test.lua) ;; *) { printf '\004'; cat "$f"; printf '\000\006\200\000\005u2'; } | put "$corpus/service";; esac
done
cp "$root"/fuzz/seeds/service/* "$corpus/service/" 2>/dev/null || true
echo "corpus: $(ls "$corpus/envelope" | wc -l) envelope, $(ls "$corpus/policy" | wc -l) policy, $(ls "$corpus/luabridge" | wc -l) luabridge, $(ls "$corpus/service" | wc -l) service"
