#!/usr/bin/env bash
# scripts/pg-scratch on a busy port: a first start while its first port
# (PG_SCRATCH_FIRST_PORT) is held by another process picks the next free one; a restart after another process took the cluster's port
# comes back on a free one, with its data, and DIR/env names the new port.
# Needs SEATWATCH_SOURCE_DIR (set by CTest) and a build tree to work in.
set -euo pipefail

src=${SEATWATCH_SOURCE_DIR:?}
work=$(mktemp -d "${TMPDIR:-/tmp}/seatwatch-pg-port.XXXXXX")
chmod 755 "$work"
dir=$work/pg
holders=()
cleanup() {
  local pid
  for pid in "${holders[@]}"; do kill "$pid" 2>/dev/null || true; done
  "$src/scripts/pg-scratch" destroy "$dir" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# hold PORT: another process listens on 127.0.0.1:PORT until the test ends
# (0: on a port the kernel picks; work/holder.0 names it). A PORT that some
# other cluster on this machine took first is busy already, which is all the
# test needs.
hold() {
  local out=$work/holder.$1
  python3 "$src/tests/scripts/port_holder.py" "$1" >"$out" 2>"$out.err" &
  holders+=($!)
  local i
  for ((i = 0; i < 50; i++)); do
    [ -s "$out" ] && return 0
    if ! kill -0 "${holders[-1]}" 2>/dev/null && grep -q 'Address already in use' "$out.err"; then
      return 0
    fi
    sleep 0.1
  done
  fail "could not hold port $1"
}

# The first port pg-scratch tries, from a range the kernel gave this test
# (other clusters on this machine start theirs from 55432), held.
hold 0
first_free=$(head -n1 "$work/holder.0")
export PG_SCRATCH_FIRST_PORT=$first_free

"$src/scripts/pg-scratch" start "$dir" >/dev/null || fail "start with port $first_free busy"
port=$(cat "$dir/port")
[ "$port" != "$first_free" ] || fail "start used the busy port $first_free"
# shellcheck disable=SC1091
source "$dir/env"
[ "$PGPORT" = "$port" ] || fail "env says port $PGPORT, DIR/port $port"
psql -X -q -d postgres -c 'CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)'

# The cluster's own port taken while it is down: restart and start both
# come back on a free port, keeping the data.
"$src/scripts/pg-scratch" stop "$dir" 2>/dev/null
hold "$port"
"$src/scripts/pg-scratch" restart "$dir" >/dev/null 2>"$work/restart.err" ||
  { cat "$work/restart.err" >&2; fail "restart with port $port taken"; }
grep -q "port $port is taken by another process" "$work/restart.err" ||
  fail "restart did not say that port $port was taken: $(cat "$work/restart.err")"
moved=$(cat "$dir/port")
[ "$moved" != "$port" ] || fail "restart kept the busy port $port"
# shellcheck disable=SC1091
source "$dir/env"
[ "$PGPORT" = "$moved" ] || fail "env says port $PGPORT after the restart, DIR/port $moved"
[ "$(psql -X -Atq -d postgres -c 'SELECT n FROM kept')" = 7 ] || fail "data lost across the restart"

"$src/scripts/pg-scratch" stop "$dir" 2>/dev/null
hold "$moved"
"$src/scripts/pg-scratch" start "$dir" >/dev/null 2>&1 || fail "start with port $moved taken"
[ "$(cat "$dir/port")" != "$moved" ] || fail "start kept the busy port $moved"
echo "ok: ports $first_free, $port and $moved were busy; the cluster ended on $(cat "$dir/port")"
