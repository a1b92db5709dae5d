#!/usr/bin/env bash
# Installs what Hush needs to build on Debian/Ubuntu, only where it is missing.
set -euo pipefail
need=()
dpkg -s liblua5.4-dev >/dev/null 2>&1 || need+=(liblua5.4-dev)
dpkg -s libsqlite3-dev >/dev/null 2>&1 || need+=(libsqlite3-dev)
# The `hush` executable's allocator (Package.swift: HushCLI links mimalloc).
dpkg -s libmimalloc-dev >/dev/null 2>&1 || need+=(libmimalloc-dev)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
# The README's service example calls `hush serve` with curl.
command -v curl >/dev/null 2>&1 || need+=(curl)
# The PostgreSQL state store's tests run a private PostgreSQL cluster (scripts/test-postgres.sh).
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
# The pictures' tests open the pages in headless Chromium (scripts/browser.py drives it with python3).
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v python3 >/dev/null 2>&1 || need+=(python3)
# `setup.sh --bench` (scripts/bench.sh calls it): the anchors and load tools of the benchmark.
if [ "${1:-}" = "--bench" ]; then
  command -v lua5.4 >/dev/null 2>&1 || need+=(lua5.4)
  command -v wrk >/dev/null 2>&1 || need+=(wrk)
  command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
  [ -x /usr/bin/time ] || need+=(time)
  command -v python3 >/dev/null 2>&1 || need+=(python3)
fi
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:/opt/swift/bin:$PATH"
command -v swift >/dev/null 2>&1 || { echo "setup: swift not found (expected on PATH or in /opt/swift)" >&2; exit 1; }
