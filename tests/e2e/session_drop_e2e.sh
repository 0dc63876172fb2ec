#!/usr/bin/env bash
# End to end through a real Prometheus with the shipped alert rules: a
# monitor session the server closes while idle must not hide a violation.
#   1. The monitor's role has idle_session_timeout = 5s, shorter than the
#      poll interval (8s). SeatwatchInvariantViolated (its `for:` shortened
#      to 12s, longer than one poll interval) must fire: it cannot if every
#      other poll fails and the verdict disappears.
#   2. Then pg_terminate_backend of both monitor sessions: the alert must
#      stay firing (the same activeAt: no gap in the verdict), and
#      seatwatch_up must have stayed 1 at every scrape.
# Needs TEST_PG_DIR, SEATWATCH_SOURCE_DIR and SEATWATCH_BINARY (set by CTest).
set -euo pipefail

# shellcheck source=tests/support/seatwatch_harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/../support/seatwatch_harness.sh"
begin_e2e drop sw_drop_e2e
role=sw_drop_monitor
cleanup() {
  psql_admin -c "ALTER ROLE $role RESET ALL" >/dev/null 2>&1 || true
  end_e2e
}
trap cleanup EXIT

# --- the database, the violation, the monitor's role ------------------------
create_booking_db
psql_db <<'SQL' >/dev/null
INSERT INTO seats (event_id, seat) SELECT e, 'A' || n FROM generate_series(1, 3) e, generate_series(1, 20) n;
-- the injected violation: an admin script sells a seat directly
UPDATE seats SET status = 'sold', holder = 'admin' WHERE event_id = 3 AND seat = 'A7';
SQL
psql_admin <<SQL >/dev/null
DO \$\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$role') THEN CREATE ROLE $role LOGIN; END IF; END \$\$;
GRANT pg_monitor TO $role;
ALTER ROLE $role SET idle_session_timeout = '5s';
SQL
psql_db -c "GRANT SELECT ON ALL TABLES IN SCHEMA public TO $role" >/dev/null

# --- seatwatch, polling every 8 s --------------------------------------------
write_shipped_config 8s
start_seatwatch "$role"

# --- Prometheus ----------------------------------------------------------------
prom_port=$(free_port)
sed -E 's/for: [0-9]+[smh]/for: 12s/' "$src/alerts/seatwatch.rules.yml" > "$work/rules.yml"
start_prometheus

# The activeAt of the firing SeatwatchInvariantViolated alerts, one a line.
firing_since() {
  curl -sf "$prom/api/v1/alerts" | python3 -c '
import json, sys
for a in json.load(sys.stdin)["data"]["alerts"]:
    if a["labels"].get("alertname") == "SeatwatchInvariantViolated" and a["state"] == "firing":
        print(a["labels"]["invariant"], a["activeAt"])' | sort
}
firing() { [ -n "$(firing_since)" ]; }
query() {  # prints the value of the first series of an instant query, or "none"
  curl -sf "$prom/api/v1/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "none")'
}

# --- 1: idle_session_timeout shorter than the poll interval ------------------
started=$SECONDS
wait_for 60 firing || { tail -20 "$work/seatwatch.log"; fail "SeatwatchInvariantViolated never fired under idle_session_timeout = 5s"; }
echo "1: SeatwatchInvariantViolated firing $((SECONDS - started)) s after start, under idle_session_timeout = 5s"
before=$(firing_since)

# --- 2: both monitor sessions terminated ---------------------------------------
killed=$(psql -X -At -d postgres -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = '$role'")
[ "$killed" -ge 2 ] || fail "expected to terminate both monitor sessions, terminated $killed"
terminated=$SECONDS
sleep 20
after=$(firing_since)
[ "$before" = "$after" ] || fail "the alert did not stay firing across the terminated sessions: before [$before] after [$after]"
window=$((SECONDS - started - 2))
up_min=$(query "min_over_time(seatwatch_up[${window}s])")
[ "$up_min" = "1" ] || fail "seatwatch_up was $up_min at some scrape (expected 1 throughout)"
echo "2: still firing since the same time $((SECONDS - terminated)) s after terminating $killed sessions; min seatwatch_up over ${window}s: $up_min"
reconnects=$(grep -c "reconnecting at once" "$work/seatwatch.log" || true)
echo "idle-closed sessions reconnected at once: $reconnects"
echo "session drop end-to-end: OK"
