#!/usr/bin/env bash
# scripts/demo fails loudly when seatwatch cannot serve: with its port held
# by another process it exits 1 at once, naming the port; with a seatwatch
# that exits at start (a stand-in that logs what a daemon that cannot listen
# logs; its --print-setup is the real one's) it exits 1 with those log lines, after stopping and deleting the
# scratch cluster it started.
# Needs SEATWATCH_SOURCE_DIR and SEATWATCH_BINARY (set by CTest).
set -euo pipefail

src=${SEATWATCH_SOURCE_DIR:?}
binary=${SEATWATCH_BINARY:?}
work=$(mktemp -d "${TMPDIR:-/tmp}/seatwatch-demo-port.XXXXXX")
chmod 755 "$work"
holder=
cleanup() {
  [ -z "$holder" ] || kill "$holder" 2>/dev/null || true
  "$src/scripts/pg-scratch" destroy "$work/demo" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 "$src/tests/scripts/port_holder.py" 0 >"$work/holder" &
holder=$!
for ((i = 0; i < 50; i++)); do [ -s "$work/holder" ] && break; sleep 0.1; done
port=$(head -n1 "$work/holder")
[ -n "$port" ] || fail "no port held"

# 1. The port is taken: exit 1 before anything starts.
status=0
SEATWATCH_BINARY=$binary SEATWATCH_DEMO_DIR=$work/demo \
  timeout 120 "$src/scripts/demo" --port "$port" --duration 5 >"$work/out1" 2>&1 || status=$?
[ "$status" = 1 ] || { cat "$work/out1" >&2; fail "demo on busy port $port exited $status, want 1"; }
grep -q "port $port on 127.0.0.1 is in use by another process" "$work/out1" ||
  { cat "$work/out1" >&2; fail "no clear message about the busy port"; }
if grep -q "seatwatch is running" "$work/out1"; then fail "the demo said seatwatch is running"; fi
[ ! -e "$work/demo/cluster" ] || fail "a cluster was started for a demo that could not run"

# 2. seatwatch exits at start: exit 1 with its last log lines, cluster gone.
kill "$holder"; wait "$holder" 2>/dev/null || true; holder=
# (The demo's setup script for incremental mode comes from the real one.)
cat >"$work/seatwatch" <<SH
#!/bin/sh
case " \$* " in *" --print-setup "*) exec "$binary" "\$@" ;; esac
echo "seatwatch: error: cannot listen on 127.0.0.1:$port: Address already in use" >&2
exit 1
SH
chmod +x "$work/seatwatch"
status=0
SEATWATCH_BINARY=$work/seatwatch SEATWATCH_DEMO_DIR=$work/demo \
  timeout 180 "$src/scripts/demo" --port "$port" --duration 5 >"$work/out2" 2>&1 || status=$?
[ "$status" = 1 ] || { cat "$work/out2" >&2; fail "demo with a dead seatwatch exited $status, want 1"; }
grep -q "seatwatch exited with status 1 before it was ready" "$work/out2" ||
  { cat "$work/out2" >&2; fail "the demo did not say that seatwatch exited"; }
grep -q "cannot listen on 127.0.0.1:$port" "$work/out2" ||
  { cat "$work/out2" >&2; fail "the demo did not show seatwatch's last log lines"; }
if grep -q "seatwatch is running" "$work/out2"; then fail "the demo said seatwatch is running"; fi
[ ! -e "$work/demo/cluster" ] || fail "the demo left its cluster record $work/demo/cluster"
# destroy leaves a copy of the server log, not the link into the cluster.
if [ ! -f "$work/demo/postgres.log" ] || [ -L "$work/demo/postgres.log" ]; then
  fail "the demo did not destroy its cluster (no server log copy)"
fi
grep -q 'database system is shut down' "$work/demo/postgres.log" ||
  fail "the demo's cluster was not shut down"
echo "ok: busy port $port refused; a dead seatwatch reported, its cluster removed"
