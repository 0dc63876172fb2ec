#!/usr/bin/env bash
# Which commit broke it, tried in the demo as on-call would: with the demo's
# load running, an admin sells a seat directly from psql, and again from a
# session with application_name=admin-script that stays open 3 s before its
# COMMIT. /api/invariants must name each as the cause of
# sold_seat_without_ticket on its event, with its xid and commit time, the
# second with its application name, within the detection time; the log line
# that reports each violation must say the same.
# Needs SEATWATCH_SOURCE_DIR and SEATWATCH_BINARY (set by CTest).
set -euo pipefail

src=${SEATWATCH_SOURCE_DIR:?}
binary=${SEATWATCH_BINARY:?}
work=$(mktemp -d "${TMPDIR:-/tmp}/seatwatch-demo-provenance.XXXXXX")
chmod 755 "$work"
demo=
cleanup() {
  if [ -n "$demo" ]; then
    kill "$demo" 2>/dev/null || true
    wait "$demo" 2>/dev/null || true
  fi
  "$src/scripts/pg-scratch" destroy "$work/demo" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  tail -n 30 "$work/demo/seatwatch.log" >&2 2>/dev/null || true
  exit 1
}

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
SEATWATCH_BINARY=$binary SEATWATCH_DEMO_DIR=$work/demo \
  "$src/scripts/demo" --port "$port" --duration 240 >"$work/out" 2>&1 &
demo=$!
for ((i = 0; i < 300; i++)); do
  grep -q "seatwatch is running" "$work/out" && break
  kill -0 "$demo" 2>/dev/null || { cat "$work/out" >&2; fail "the demo exited"; }
  sleep 1
done
grep -q "seatwatch is running" "$work/out" || { cat "$work/out" >&2; fail "the demo did not start"; }
# shellcheck source=/dev/null
source "$work/demo/env"
api="http://127.0.0.1:$port/api/invariants"
for ((i = 0; i < 120; i++)); do
  curl -s "http://127.0.0.1:$port/metrics" | grep -q '^seatwatch_check_mode{check="booking_reconciliation",mode="incremental"} 1' && break
  sleep 1
done

free_seat() {
  psql -X -At -d booking -c "SELECT seat FROM seats WHERE event_id = $1 AND status = 'free' ORDER BY seat LIMIT 1"
}

# The cause of sold_seat_without_ticket on event $1, as "xid app committed_at text",
# once it names xid $2; empty until then.
cause() {
  curl -s "$api" | python3 -c '
import json, sys
event, xid = sys.argv[1], int(sys.argv[2])
doc = json.load(sys.stdin)
for inv in doc["invariants"]:
    if inv["name"] != "sold_seat_without_ticket":
        continue
    for v in inv.get("violations", []):
        if v["labels"].get("event_id") != event:
            continue
        for c in v.get("first_violated_by", {}).get("commits", []):
            if c["xid"] == xid:
                session = c["session"]
                app = session["application_name"] if isinstance(session, dict) else "(not-seen)"
                text = "; ".join(ch["text"] for ch in c["changes"])
                print(c["xid"], app, c["committed_at"], text)
' "$1" "$2"
}

wait_cause() {  # event xid -> prints the cause, fails after 15 s
  local found=""
  for ((i = 0; i < 30; i++)); do
    found=$(cause "$1" "$2")
    [ -n "$found" ] && { echo "$found"; return 0; }
    sleep 0.5
  done
  curl -s "$api" >&2
  fail "event $1: no cause naming xid $2 within 15 s"
}

# Sells a free seat of event $1 directly as application $2 (psql's own when
# empty), the transaction held open $3 s before its COMMIT; waits until the
# API names it. Sets seat, xid and found.
sell_and_wait() {
  seat=$(free_seat "$1")
  [ -n "$seat" ] || fail "no free seat in event $1"
  xid=$(PGAPPNAME=${2:-psql} psql -X -q -At -v ON_ERROR_STOP=1 -d booking <<SQL | sed -n 1p
BEGIN;
SELECT txid_current() % 4294967296;
UPDATE seats SET status = 'sold', holder = 'admin' WHERE event_id = $1 AND seat = '$seat';
SELECT pg_sleep($3);
COMMIT;
SQL
)
  local start
  start=$(date +%s.%N)
  found=$(wait_cause "$1" "$xid")
  echo "event $1: $found ($(python3 -c "print(round($(date +%s.%N) - $start, 2))") s after COMMIT)"
}

# 1. A direct UPDATE from psql, as an admin tool would.
sell_and_wait 17 "" 0
case "$found" in
  *"UPDATE seats(event_id=17, seat=$seat) status ?→sold holder ?→admin"*) ;;
  *) fail "event 17: the change is not named: $found" ;;
esac

# 2. The same from an admin script that keeps its transaction open 3 s.
sell_and_wait 19 admin-script 3
case "$found" in
  "$xid admin-script "*"UPDATE seats(event_id=19, seat=$seat) status ?→sold"*) ;;
  *) fail "event 19: not named as admin-script's: $found" ;;
esac

# 3. The log line that reports each violation says it too.
grep -q "msg=\"invariant violated\" check=booking_reconciliation invariant=sold_seat_without_ticket key=\"event_id=19\".*xid=$xid .*application=\\\\\"admin-script\\\\\"" \
  "$work/demo/seatwatch.log" || fail "no log line naming xid $xid of admin-script"
echo "PASS"
