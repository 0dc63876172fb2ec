#!/usr/bin/env bash
# End to end through a real Prometheus: the daemon runs against the scratch
# PostgreSQL, Prometheus scrapes it every second with the alert rules loaded
# (a copy whose `for:` is shortened), and the test creates real conditions: an
# injected violation, a claim blocked behind an idle-in-transaction session,
# expired holds. Then, through Prometheus's HTTP API:
#   - every expression of every dashboard panel returns at least one series;
#   - SeatwatchInvariantViolated and SeatwatchIdleInTransactionBlocker reach
#     pending or firing, and so does SeatwatchRechecksHeldBack: the rechecks'
#     budget is 1ms a minute and a writer changes a seat five times a second,
#     so every cycle is held back to the 1 s poll interval;
#   - every metric named by the dashboards and rules exists in the scrape, and
#     every metric the daemon exports is documented in docs/metrics.md.
# Needs TEST_PG_DIR, SEATWATCH_SOURCE_DIR and SEATWATCH_BINARY (set by CTest).
set -euo pipefail

# shellcheck source=tests/support/seatwatch_harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/../support/seatwatch_harness.sh"
begin_e2e prom sw_prom_e2e
trap end_e2e EXIT

# --- the database and its conditions ---------------------------------------
create_booking_db
# Incremental mode on (the feed's panels and alerts need its series): the
# DBA's setup script, then [changes] enabled below.
psql_db -f "$src/queries/booking/changes-setup.sql" >/dev/null
psql_db <<'SQL' >/dev/null
INSERT INTO seats (event_id, seat) SELECT e, 'A' || n FROM generate_series(1, 3) e, generate_series(1, 20) n;
-- expired holds: the cleanup backlog
UPDATE seats SET status = 'held', holder = 'fan-gone', hold_expires_at = now() - interval '3 minutes'
 WHERE event_id = 2 AND seat IN ('A1', 'A2', 'A3');
-- an active hold with its payment started
UPDATE seats SET status = 'held', holder = 'fan-h', hold_expires_at = now() + interval '10 minutes'
 WHERE event_id = 1 AND seat = 'A9';
INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents) VALUES ('k-h', 1, 'A9', 'fan-h', 100);
-- the injected violation: an admin script sells a seat directly
UPDATE seats SET status = 'sold', holder = 'admin' WHERE event_id = 3 AND seat = 'A7';
SQL

# --- seatwatch --------------------------------------------------------------
write_shipped_config 1s -e '/^\[changes\]/,$ s/^enabled = false/enabled = true/' \
  -e 's/^recheck_time_per_minute = "1s"/recheck_time_per_minute = "1ms"/'
grep -q '^recheck_time_per_minute = "1ms"' "$work/seatwatch.toml" || fail "the shipped config has no recheck_time_per_minute"
start_seatwatch postgres

# --- a writer: event 2 changes five times a second, so rechecks keep running -
( while :; do
    psql -X -q -d sw_prom_e2e -c "UPDATE seats SET version = version + 1 WHERE event_id = 2 AND seat = 'A10'" > /dev/null 2>&1
    sleep 0.2
  done ) &
pids+=($!)

# --- a claim blocked behind an idle-in-transaction session ----------------
mkfifo "$work/blocker.in"
# The fifo stays open for writing (fd 7), so psql waits idle in transaction
# after the UPDATE until the test ends.
psql -X -q -d sw_prom_e2e < "$work/blocker.in" > /dev/null 2>&1 &
pids+=($!)
exec 7> "$work/blocker.in"
echo "BEGIN; UPDATE seats SET status = 'held', holder = 'fan-slow', hold_expires_at = now() + interval '10 minutes' WHERE event_id = 1 AND seat = 'A1';" >&7
count_sql() { psql -X -At -d sw_prom_e2e -c "$1"; }
blocker_idle() {
  [ "$(count_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = 'sw_prom_e2e' AND state = 'idle in transaction' AND backend_xid IS NOT NULL")" = 1 ]
}
two_waiting() {
  [ "$(count_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = 'sw_prom_e2e' AND wait_event_type = 'Lock'")" = 2 ]
}
# The claims must start only once the blocker holds the row, or they win it.
wait_for 20 blocker_idle || fail "the blocker never went idle in transaction"
for fan in b c; do
  psql -X -q -d sw_prom_e2e -c "UPDATE seats SET status = 'held', holder = 'fan-$fan', hold_expires_at = now() + interval '10 minutes' WHERE event_id = 1 AND seat = 'A1' AND (status = 'free' OR (status = 'held' AND hold_expires_at <= now()))" > /dev/null 2>&1 &
  pids+=($!)
done

wait_for 20 two_waiting || fail "the claims never queued behind the blocker"

# --- Prometheus -------------------------------------------------------------
prom_port=$(free_port)
sed -E 's/for: [0-9]+[smh]/for: 5s/' "$src/alerts/seatwatch.rules.yml" > "$work/rules.yml"
start_prometheus

alert_state() {  # prints the states of alert $1
  curl -sf "$prom/api/v1/alerts" | python3 -c '
import json, sys
name = sys.argv[1]
for a in json.load(sys.stdin)["data"]["alerts"]:
    if a["labels"].get("alertname") == name:
        print(a["state"])' "$1"
}
alert_active() { alert_state "$1" | grep -qE 'pending|firing'; }

# Rates need two samples in the window, the blockers a minute of age for
# nothing; give the scrapes and rules ~25 seconds.
wait_for 60 alert_active SeatwatchInvariantViolated || fail "SeatwatchInvariantViolated never became pending/firing"
wait_for 60 alert_active SeatwatchIdleInTransactionBlocker || fail "SeatwatchIdleInTransactionBlocker never became pending/firing"
wait_for 60 alert_active SeatwatchRechecksHeldBack || {
  curl -sf "http://127.0.0.1:$sw_port/metrics" | grep -E '^seatwatch_(changes_recheck|poll_interval)' >&2 || true
  fail "SeatwatchRechecksHeldBack never became pending/firing"
}
echo "alerts: SeatwatchInvariantViolated $(alert_state SeatwatchInvariantViolated | head -1), SeatwatchIdleInTransactionBlocker $(alert_state SeatwatchIdleInTransactionBlocker | head -1), SeatwatchRechecksHeldBack $(alert_state SeatwatchRechecksHeldBack | head -1)"
sleep 20

curl -sf "http://127.0.0.1:$sw_port/metrics" > "$work/metrics.txt"
grep -qx 'seatwatch_changes_up 1' "$work/metrics.txt" \
  || { tail -20 "$work/seatwatch.log"; fail "the change feed is not up"; }
# Without TLS there is no certificate to export: tls_e2e.sh checks that metric.
"$src/scripts/check-dashboards" --metrics "$work/metrics.txt" --prometheus "$prom" --strict \
  --allow-missing seatwatch_tls_certificate_expiry_timestamp_seconds \
  || { tail -20 "$work/seatwatch.log"; fail "a dashboard panel or a referenced metric is missing"; }

# Every family the daemon exports is in the metrics reference.
missing=0
for family in $(grep -E '^# TYPE (seatwatch|process)_' "$work/metrics.txt" | awk '{print $3}' | sort -u); do
  grep -q "\`$family\`" "$src/docs/metrics.md" || { echo "docs/metrics.md does not document $family" >&2; missing=1; }
done
[ $missing -eq 0 ] || fail "undocumented metrics"
echo "every exported metric family is documented in docs/metrics.md"
echo "prometheus end-to-end: OK"
