#!/usr/bin/env bash
# Builds the libFuzzer targets (with AddressSanitizer) and runs one of them.
#   fuzz/run.sh build                       build all four into .build-fuzz/
#   fuzz/run.sh TARGET [SECONDS] [ARGS...]  run envelope | policy | luabridge | service (default 600 s)
# Findings land in fuzz/artifacts/TARGET/; new coverage in fuzz/corpus-work/TARGET/ (seeds are
# read from fuzz/corpus/TARGET/ and never written to).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
scratch="${HUSH_FUZZ_SCRATCH:-$root/.build-fuzz}"

build() {
    # Not `--sanitize=fuzzer --sanitize=address`: SwiftPM passes those to swiftc as two -sanitize=
    # flags, in no fixed order, and swiftc keeps only the last, so the Swift code loses either its
    # coverage or ASan. One combined flag for Swift, given last; clang adds up its -fsanitize flags.
    # `--sanitize=fuzzer` stays: it makes SwiftPM leave `main` to libFuzzer.
    # HUSH_FUZZ=1 adds the targets to the root package (see Package.swift); one product at a time,
    # so nothing else of the package is built with libFuzzer's main.
    for product in FuzzEnvelope FuzzPolicy FuzzLuaBridge FuzzService; do
        HUSH_FUZZ=1 swift build --scratch-path "$scratch" -c debug --sanitize=fuzzer --product "$product" \
            -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=address
    done
}

case "${1:-}" in
    build) build; exit ;;
    envelope) bin=FuzzEnvelope; dict=json.dict ;;
    policy) bin=FuzzPolicy; dict=lua.dict ;;
    luabridge) bin=FuzzLuaBridge; dict=lua.dict ;;
    service) bin=FuzzService; dict=service.dict ;;
    *) echo "usage: fuzz/run.sh build | envelope|policy|luabridge|service [SECONDS] [libFuzzer args...]" >&2; exit 2 ;;
esac
target="$1"; seconds="${2:-600}"; shift; [ $# -gt 0 ] && shift
[ -x "$scratch/debug/$bin" ] || build
mkdir -p "fuzz/artifacts/$target" "fuzz/corpus-work/$target"
# detect_leaks=0: libFuzzer's own leak check would flag interpreters kept across inputs on purpose;
# leaks are checked by the ASan/LSan test run instead (see README.md).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1}"
# libFuzzer reports crashes itself; Swift's backtracer would only slow each crash down.
export SWIFT_BACKTRACE=enable=no
# Lua with its API checks on, when built (fuzz/lua-apicheck.sh): stack misuse then aborts at once.
if [ -f "$scratch/lua-apicheck/liblua5.4.so.0" ]; then
    export LD_LIBRARY_PATH="$scratch/lua-apicheck${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "run.sh: using $scratch/lua-apicheck/liblua5.4.so.0 (Lua API checks on)" >&2
fi
exec "$scratch/debug/$bin" "fuzz/corpus-work/$target" "fuzz/corpus/$target" \
    -dict="fuzz/dicts/$dict" -max_len=8192 -timeout=10 -rss_limit_mb=2048 -max_total_time="$seconds" \
    -artifact_prefix="fuzz/artifacts/$target/" -print_final_stats=1 "$@"
