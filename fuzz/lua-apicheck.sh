#!/usr/bin/env bash
# Builds a liblua5.4.so.0 with Lua's API checks on (LUA_USE_APICHECK) and AddressSanitizer, from a
# Lua 5.4 source directory, into .build-fuzz/lua-apicheck/. run.sh preloads it when it is there.
#
#   fuzz/lua-apicheck.sh /path/to/lua-5.4.x/src
#
# Why: Debian's liblua5.4 is not instrumented, so ASan cannot see a write past the end of Lua's
# stack made *inside* liblua (a host function pushing more than the LUA_MINSTACK slots Lua
# guarantees, without lua_checkstack). With API checks on, Lua asserts on every such push.
# Sources: the official lua-5.4.x source tarball, `apt-get source lua5.4` (with deb-src enabled), or
# any copy of Lua 5.4's src/ directory. Any 5.4.x works against Debian's 5.4 headers.
set -euo pipefail
src="${1:?usage: fuzz/lua-apicheck.sh LUA_SRC_DIR}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${HUSH_FUZZ_SCRATCH:-$root/.build-fuzz}/lua-apicheck"
mkdir -p "$out"
cd "$src"
[ -f lapi.c ] || { echo "no lapi.c in $src" >&2; exit 2; }
files=$(ls l*.c | grep -v -E '^(lua|luac|ltests|onelua)\.c$')
# Debian's liblua5.4 versions its symbols LUA_5.4; the binaries ask for that version.
printf 'LUA_5.4 { global: lua_*; luaL_*; luaopen_*; local: *; };\n' > "$out/lua.map"
clang -O1 -g -fPIC -shared -fsanitize=address -fno-omit-frame-pointer \
    -DLUA_USE_APICHECK -DLUA_USE_LINUX -DLUA_COMPAT_5_3 \
    -Wl,-soname,liblua5.4.so.0 -Wl,--version-script="$out/lua.map" \
    -o "$out/liblua5.4.so.0" $files -lm -ldl
echo "built $out/liblua5.4.so.0"
