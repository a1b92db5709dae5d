#!/usr/bin/env bash
# A private, throwaway PostgreSQL cluster for the tests of the PostgreSQL state store
# (Tests/PostgresTestSupport starts one per test process; scripts/setup.sh installs the server).
#
#   scripts/test-postgres.sh start DIR   creates a cluster in DIR (new or empty) and starts it; prints
#                                        one line, its URL: postgres://hush@127.0.0.1:PORT/postgres
#   scripts/test-postgres.sh stop DIR    stops it (fast) and removes DIR; nothing to stop is no error
#   scripts/test-postgres.sh restart DIR restarts it (fast: open connections are cut), on its port
#
# The cluster: superuser `hush`, trust authentication on the Unix socket (in DIR itself) and on
# 127.0.0.1 only, listening on 127.0.0.1 only on a free port, fsync on (tests kill servers),
# max_connections 200. initdb refuses to run as root, so as root the cluster is created and run as
# `postgres` (else `nobody`); DIR is chowned to that user and its parent directories must be
# traversable by it (anything under /tmp is; a directory made by mktemp -d is not, being 0700).
#
# Environment (optional): HUSH_TEST_POSTGRES_WATCH_PID=PID also leaves a watcher that stops the
# cluster and removes DIR once process PID is gone (a test process that crashes never runs its
# atexit handlers).
set -euo pipefail

usage() {
  echo "usage: $0 start DIR | stop DIR | restart DIR" >&2
  exit 2
}
[ $# -eq 2 ] || usage
command=$1
case "$2" in
  "") usage ;;
  /*) dir=$2 ;;
  *) dir="$PWD/$2" ;;
esac
dir="${dir%/}"
self="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
cd /
# Close the descriptors inherited beyond stdio: the server and the watcher outlive this script, and
# a caller that waits for a descriptor of its own to close (Foundation's Process on Linux waits for
# its socket) would otherwise wait for them. (Bash keeps this script open on 255, close-on-exec.)
for fd in $(ls /proc/$$/fd 2>/dev/null || ls /dev/fd 2>/dev/null); do
  case "$fd" in
    0 | 1 | 2 | 255) ;;
    *[!0-9]*) ;;
    *) eval "exec $fd>&-" 2>/dev/null || true ;;
  esac
done
# The caller's libpq settings are not this cluster's.
unset PGDATA PGHOST PGPORT PGUSER PGDATABASE PGOPTIONS

fail() {
  echo "test-postgres.sh: $1" >&2
  if [ -f "$dir/log" ]; then
    echo "--- the last lines of $dir/log:" >&2
    tail -n 30 "$dir/log" >&2 || true
  fi
  exit 1
}

# The server's binaries: pg_config's when it names a server (libpq-dev's alone names /usr/bin),
# else the newest /usr/lib/postgresql/*/bin.
find_bindir() {
  bindir=""
  local candidate
  if command -v pg_config >/dev/null 2>&1; then
    candidate="$(pg_config --bindir 2>/dev/null || true)"
    [ -n "$candidate" ] && [ -x "$candidate/initdb" ] && bindir=$candidate
  fi
  if [ -z "$bindir" ]; then
    for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5,5 -n -r); do
      if [ -x "$candidate/initdb" ]; then
        bindir=$candidate
        break
      fi
    done
  fi
  [ -n "$bindir" ] || fail "no PostgreSQL server found (no initdb from pg_config --bindir or in /usr/lib/postgresql/*/bin; on Debian: apt-get install postgresql, or run scripts/setup.sh)"
}

# Who runs the server: the caller, or as root an unprivileged user (initdb and postgres refuse root).
as_user() {
  if [ -n "$run_as" ]; then
    runuser -u "$run_as" -- "$@"
  else
    "$@"
  fi
}

start() {
  find_bindir
  run_as=""
  if [ "$(id -u)" -eq 0 ]; then
    if id postgres >/dev/null 2>&1; then run_as=postgres; else run_as=nobody; fi
  fi
  case "$dir" in
    *"'"*) fail "DIR must not contain a single quote: $dir" ;;
  esac
  if [ -e "$dir" ]; then
    [ -d "$dir" ] || fail "$dir exists and is not a directory"
    [ -z "$(ls -A "$dir")" ] || fail "$dir is not empty (start needs a new or empty directory)"
  else
    mkdir -p "$dir" || fail "cannot create $dir"
  fi
  if [ -n "$run_as" ]; then
    chown "$run_as:" "$dir" || fail "cannot chown $dir to $run_as"
    as_user test -w "$dir" -a -x "$dir" ||
      fail "$run_as cannot reach $dir: its parent directories must be traversable by $run_as (mode o+x)"
  fi

  local out
  if ! out=$(as_user "$bindir/initdb" -D "$dir" -A trust -U hush -E UTF8 --locale=C 2>&1); then
    echo "$out" | tail -n 30 >&2
    fail "initdb failed"
  fi
  # Trust on the socket and on 127.0.0.1 only (initdb's file also trusts ::1 and replication).
  cat >"$dir/pg_hba.conf" <<'EOF'
# TYPE  DATABASE  USER  ADDRESS       METHOD
local   all       all                 trust
host    all       all   127.0.0.1/32  trust
EOF
  cat >>"$dir/postgresql.conf" <<EOF

# scripts/test-postgres.sh: a private cluster for tests.
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
max_connections = 200
shared_buffers = 64MB
fsync = on
synchronous_commit = on
full_page_writes = on
EOF

  # A free port: from a random base below Linux's ephemeral range, skipping ports something answers
  # on, and trying the next one when the server cannot bind (another start may have taken it).
  local base=$((15000 + (RANDOM * 32768 + RANDOM) % 17000)) attempt port size ready=""
  for attempt in $(seq 0 19); do
    port=$((base + attempt * 7))
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      continue
    fi
    size=0
    [ -f "$dir/log" ] && size=$(wc -c <"$dir/log")
    if as_user "$bindir/pg_ctl" -D "$dir" -l "$dir/log" -o "-p $port" -w -t 60 start >/dev/null 2>&1; then
      ready=yes
      break
    fi
    if tail -c +$((size + 1)) "$dir/log" 2>/dev/null |
      grep -qE 'could not bind|Address already in use|could not create any TCP/IP sockets'; then
      # The port was taken; the server has exited; make sure, then try the next.
      as_user "$bindir/pg_ctl" -D "$dir" -m immediate -w stop >/dev/null 2>&1 || true
      continue
    fi
    as_user "$bindir/pg_ctl" -D "$dir" -m immediate -w stop >/dev/null 2>&1 || true
    fail "the server did not start (port $port)"
  done
  [ -n "$ready" ] || fail "no free port found from $base (20 tries)"

  if [[ "${HUSH_TEST_POSTGRES_WATCH_PID:-}" =~ ^[0-9]+$ ]]; then
    local watch=(bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec bash "$2" stop "$3"' \
      test-postgres-watch "$HUSH_TEST_POSTGRES_WATCH_PID" "$self" "$dir")
    if command -v setsid >/dev/null 2>&1; then watch=(setsid "${watch[@]}"); fi
    "${watch[@]}" </dev/null >/dev/null 2>&1 &
  fi
  echo "postgres://hush@127.0.0.1:$port/postgres"
}

stop() {
  [ -e "$dir" ] || exit 0
  [ -d "$dir" ] || fail "$dir is not a directory"
  run_as=""
  if [ -f "$dir/PG_VERSION" ]; then
    if [ "$(id -u)" -eq 0 ]; then
      run_as="$(stat -c %U "$dir")"
      # postgres never runs as root, so a root-owned directory has no server to stop.
      [ "$run_as" = root ] && run_as=skip
    fi
    if [ "$run_as" != skip ]; then
      find_bindir
      if as_user "$bindir/pg_ctl" -D "$dir" status >/dev/null 2>&1 &&
        ! as_user "$bindir/pg_ctl" -D "$dir" -m fast -w -t 60 stop >/dev/null 2>&1 &&
        as_user "$bindir/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
        fail "pg_ctl stop failed; the server in $dir still runs"
      fi
    fi
  elif [ -n "$(ls -A "$dir")" ]; then
    # Not a cluster and not empty: not ours to remove.
    echo "test-postgres.sh: $dir holds no cluster (no PG_VERSION); not removing it" >&2
    exit 1
  fi
  rm -rf "$dir"
}

# A fault for the tests: the server goes away under its clients and comes back (same options).
restart() {
  [ -f "$dir/PG_VERSION" ] || fail "$dir holds no cluster"
  run_as=""
  [ "$(id -u)" -eq 0 ] && run_as="$(stat -c %U "$dir")"
  find_bindir
  as_user "$bindir/pg_ctl" -D "$dir" -m fast -w -t 60 restart -l "$dir/log" >/dev/null 2>&1 ||
    fail "pg_ctl restart failed: $(tail -n 5 "$dir/log" 2>/dev/null)"
}

case "$command" in
  start) start ;;
  stop) stop ;;
  restart) restart ;;
  *) usage ;;
esac
