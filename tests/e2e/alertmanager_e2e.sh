#!/usr/bin/env bash
# On-call alerts proven all the way to a receiver: the daemon runs against the
# scratch PostgreSQL, a real Prometheus scrapes it every second with the
# shipped rules (a copy whose `for:` is shortened) and sends to a real
# Alertmanager on loopback, whose config is alerts/alertmanager.yml with only
# its receivers' integrations replaced by a webhook this test runs (each
# receiver's send_resolved kept) and its timers shortened.
#   - a seat sold without a ticket makes the webhook get, at receiver "pager",
#     SeatwatchInvariantViolated firing with invariant=sold_seat_without_ticket,
#     severity=critical, grouped by the example's group_by, and a runbook_url
#     whose #fragment is a heading of docs/runbook.md;
#   - the repair makes it get the resolved notification (send_resolved);
#   - the example's inhibit rules hold in the running Alertmanager:
#     SeatwatchDown mutes the instance's other alerts (not another
#     instance's), the critical SeatwatchLockWaitLong mutes the warning one.
# Needs TEST_PG_DIR, SEATWATCH_SOURCE_DIR and SEATWATCH_BINARY (set by CTest).
set -euo pipefail

# shellcheck source=tests/support/seatwatch_harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/../support/seatwatch_harness.sh"
begin_e2e am sw_am_e2e
trap end_e2e EXIT

# What the components said, for a failure's message.
diagnose() {
  echo "--- notifications received:" >&2; cat "$work/notifications.jsonl" >&2 2>/dev/null || echo "(none)" >&2
  echo "--- prometheus alerts:" >&2; curl -s "${prom:-http://0}/api/v1/alerts" >&2 || true; echo >&2
  echo "--- alertmanager log:" >&2; tail -20 "$work/alertmanager.log" >&2 || true
  echo "--- seatwatch log:" >&2; tail -10 "$work/seatwatch.log" >&2 || true
}
die() { diagnose; fail "$@"; }

# --- the database, clean to start with -------------------------------------
create_booking_db
psql_db -c "INSERT INTO seats (event_id, seat) SELECT e, 'A' || n FROM generate_series(1, 3) e, generate_series(1, 20) n" >/dev/null

# --- seatwatch --------------------------------------------------------------
write_shipped_config 1s
start_seatwatch postgres

# --- the webhook receiver ---------------------------------------------------
touch "$work/notifications.jsonl"
python3 "$src/tests/e2e/webhook_receiver.py" "$work/hook.port" "$work/notifications.jsonl" 2> "$work/webhook.log" &
pids+=($!)
wait_for 10 test -s "$work/hook.port" || { cat "$work/webhook.log"; fail "the webhook receiver did not start"; }
hook_port=$(cat "$work/hook.port")

# --- Alertmanager, configured from the example ------------------------------
# Everything but the receivers is the example's (routes, matchers, group_by,
# inhibit rules); the timers are shortened so a test takes seconds, the way
# the rules' `for:` is. Each receiver of the example becomes the webhook, at
# a path of its name, with send_resolved as the example's receiver has it
# (so the resolved notification below proves the example sends it).
example="$src/alerts/alertmanager.yml"
receivers=$(awk '/^receivers:/ { r = 1; next } /^[^ #]/ { r = 0 }
  r && /^  - name:/ { name = $3; sr[name] = "false"; order[++n] = name }
  r && /send_resolved: true/ { sr[name] = "true" }
  END { for (i = 1; i <= n; i++) print order[i], sr[order[i]] }' "$example")
[ -n "$receivers" ] || fail "no receivers found in $example"
{
  awk '/^receivers:/ { skip = 1; next } /^[^ #]/ { skip = 0 } !skip' "$example" \
    | sed -E -e 's/(group_wait|group_interval): .*/\1: 1s/' -e 's/repeat_interval: .*/repeat_interval: 1h/'
  echo "receivers:"
  while read -r r send_resolved; do
    printf '  - name: %s\n    webhook_configs:\n      - url: http://127.0.0.1:%s/%s\n        send_resolved: %s\n' \
      "$r" "$hook_port" "$r" "$send_resolved"
  done <<< "$receivers"
} > "$work/alertmanager.yml"
amtool check-config "$work/alertmanager.yml" > /dev/null || fail "the test's Alertmanager config is invalid"
# The routing tree (matchers and receivers) is the example's, unchanged.
diff <(amtool config routes --config.file="$example" 2>/dev/null) \
     <(amtool config routes --config.file="$work/alertmanager.yml" 2>/dev/null) \
  || fail "the test's routing tree differs from alerts/alertmanager.yml"

am_port=$(free_port)
am="http://127.0.0.1:$am_port"
# --cluster.listen-address= (empty): no gossip, nothing but loopback.
prometheus-alertmanager --config.file="$work/alertmanager.yml" --storage.path="$work/am-data" \
  --web.listen-address="127.0.0.1:$am_port" --web.external-url="$am" \
  --cluster.listen-address= > "$work/alertmanager.log" 2>&1 &
pids+=($!)
wait_for 30 curl -sf "$am/-/ready" -o /dev/null || { cat "$work/alertmanager.log"; fail "alertmanager not ready"; }

# --- Prometheus, sending to it -----------------------------------------------
prom_port=$(free_port)
sed -E 's/for: [0-9]+[smh]/for: 5s/' "$src/alerts/seatwatch.rules.yml" > "$work/rules.yml"
prom_extra_yaml="alerting:
  alertmanagers:
    - static_configs:
        - targets: [\"127.0.0.1:$am_port\"]"
start_prometheus
am_known() {
  curl -sf "$prom/api/v1/alertmanagers" | grep "127.0.0.1:$am_port" > /dev/null
}
wait_for 30 am_known || die "Prometheus does not list the Alertmanager as active"

# notification STATUS: prints the first SeatwatchInvariantViolated alert of
# invariant sold_seat_without_ticket, with its notification's receiver,
# status and group labels, from a notification whose status is STATUS (and
# the alert's too); exits 1 when there is none yet.
notification() {
  python3 - "$1" "$work/notifications.jsonl" <<'PY'
import json, sys
want, path = sys.argv[1], sys.argv[2]
for line in open(path, encoding="utf-8"):
    n = json.loads(line)
    if n.get("status") != want:
        continue
    for a in n.get("alerts", []):
        l = a.get("labels", {})
        if (a.get("status") == want and l.get("alertname") == "SeatwatchInvariantViolated"
                and l.get("invariant") == "sold_seat_without_ticket"):
            print(json.dumps({"receiver": n["receiver"], "path": n["_path"],
                              "groupLabels": n["groupLabels"], "alert": a}, sort_keys=True))
            sys.exit(0)
sys.exit(1)
PY
}
field() {  # field JSON EXPR: a Python expression over the object j
  python3 -c 'import json, sys; j = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"
}
brief() {  # the parts of a notification the test looks at, on one line
  field "$1" '"receiver=%s groupLabels=%s labels=%s runbook_url=%s startsAt=%s endsAt=%s" % (j["receiver"], j["groupLabels"], j["alert"]["labels"], j["alert"]["annotations"].get("runbook_url"), j["alert"]["startsAt"], j["alert"]["endsAt"])'
}

# --- the injected violation: an admin script sells a seat directly ----------
psql_db -c "UPDATE seats SET status = 'sold', holder = 'admin' WHERE event_id = 3 AND seat = 'A7'" >/dev/null
start=$SECONDS
# A poll, a scrape, `for: 5s`, group_wait: ~10 s on an idle machine.
wait_for 80 notification firing > /dev/null || die "no firing SeatwatchInvariantViolated reached the receiver in 80 s"
fired=$(notification firing)
echo "firing notification after $((SECONDS - start)) s: $(brief "$fired")"

[ "$(field "$fired" 'j["receiver"]')" = pager ] || die "the critical alert went to $(field "$fired" 'j["receiver"]'), not pager"
[ "$(field "$fired" 'j["path"]')" = /pager ] || die "the notification came in at $(field "$fired" 'j["path"]'), not /pager"
[ "$(field "$fired" 'j["alert"]["labels"].get("severity")')" = critical ] || die "severity is not critical"
[ "$(field "$fired" 'j["alert"]["labels"].get("job")')" = seatwatch ] || die "job label is not seatwatch"
# Grouped the example's way: alertname, job, invariant (check: absent here).
[ "$(field "$fired" 'sorted(j["groupLabels"].items())')" = \
  "[('alertname', 'SeatwatchInvariantViolated'), ('invariant', 'sold_seat_without_ticket'), ('job', 'seatwatch')]" ] \
  || die "group labels are $(field "$fired" 'j["groupLabels"]')"
field "$fired" 'j["alert"]["annotations"]["summary"]' | grep -q 'sold_seat_without_ticket' \
  || die "the summary does not name the invariant"
runbook_url=$(field "$fired" 'j["alert"]["annotations"].get("runbook_url", "")')
[ -n "$runbook_url" ] || die "the alert carries no runbook_url"
"$src/alerts/check-runbook-links" --runbook "$src/docs/runbook.md" "$runbook_url" \
  || die "the received runbook_url $runbook_url does not resolve to a heading of docs/runbook.md"
[ "${runbook_url##*#}" = seatwatchinvariantviolated ] || die "runbook_url points at #${runbook_url##*#}, not the alert's own section"

# --- the repair: the seat is free again --------------------------------------
psql_db -c "UPDATE seats SET status = 'free', holder = NULL WHERE event_id = 3 AND seat = 'A7'" >/dev/null
start=$SECONDS
wait_for 60 notification resolved > /dev/null || die "no resolved SeatwatchInvariantViolated reached the receiver in 60 s"
resolved=$(notification resolved)
echo "resolved notification after $((SECONDS - start)) s: $(brief "$resolved")"
[ "$(field "$resolved" 'j["receiver"]')" = pager ] || die "the resolved notification went to $(field "$resolved" 'j["receiver"]'), not pager"
[ "$(field "$resolved" '__import__("datetime").datetime.fromisoformat(j["alert"]["endsAt"]) > __import__("datetime").datetime.fromisoformat(j["alert"]["startsAt"])')" = True ] || die "the resolved alert has no end after its start"
[ "$(field "$resolved" 'j["alert"]["startsAt"]')" = "$(field "$fired" 'j["alert"]["startsAt"]')" ] \
  || die "the resolved alert is not the one that fired (startsAt differs)"

# --- the example's inhibit rules, in the running Alertmanager ----------------
# Alerts posted with amtool (the rules cannot make a target both down and
# alerting: its series go stale). The inhibitor works from its own view of
# the alerts, updated asynchronously, so the states are waited for.
amtool alert add --alertmanager.url="$am" alertname=SeatwatchDown severity=critical job=seatwatch instance=probe-a:9646 > /dev/null
amtool alert add --alertmanager.url="$am" alertname=SeatwatchStale severity=warning job=seatwatch instance=probe-a:9646 > /dev/null
amtool alert add --alertmanager.url="$am" alertname=SeatwatchStale severity=warning job=seatwatch instance=probe-b:9646 > /dev/null
amtool alert add --alertmanager.url="$am" alertname=SeatwatchLockWaitLong severity=critical job=seatwatch instance=probe-b:9646 > /dev/null
amtool alert add --alertmanager.url="$am" alertname=SeatwatchLockWaitLong severity=warning job=seatwatch instance=probe-b:9646 > /dev/null
am_states() {  # prints "alertname instance severity state" per probe alert
  curl -sf "$am/api/v2/alerts" | python3 -c '
import json, sys
for a in json.load(sys.stdin):
    l = a["labels"]
    if l.get("instance", "").startswith("probe-"):
        print(l["alertname"], l["instance"], l["severity"], a["status"]["state"])' | sort
}
expected_states="SeatwatchDown probe-a:9646 critical active
SeatwatchLockWaitLong probe-b:9646 critical active
SeatwatchLockWaitLong probe-b:9646 warning suppressed
SeatwatchStale probe-a:9646 warning suppressed
SeatwatchStale probe-b:9646 warning active"
states_as_expected() { [ "$(am_states)" = "$expected_states" ]; }
wait_for 20 states_as_expected || die "inhibition: expected
$expected_states
got
$(am_states)"
echo "inhibit rules: SeatwatchDown mutes its instance's SeatwatchStale, not another's; the critical SeatwatchLockWaitLong mutes the warning"
echo "alertmanager end-to-end: OK"
