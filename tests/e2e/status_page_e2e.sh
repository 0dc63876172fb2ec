#!/usr/bin/env bash
# The status page at / in a real browser: the daemon runs against the scratch
# PostgreSQL with an injected violation (a seat sold to a "fan" whose name is
# a script), a claim blocked behind an idle-in-transaction session whose
# application_name is a title-changing script, and expired holds; headless
# Chromium then loads http://127.0.0.1:PORT/ and
#   - its DOM (--dump-dom) shows the verdict, the summary lines (the
#     violated invariant's keys, the sessions blocked by the root), the
#     violated invariant with its event key, own help and runbook link, the
#     root's pid, the blocked claims' pids and the hot row by its key, the
#     holds backlog and the cleanup (dry run) state;
#   - both script strings are in the DOM as text, no <script> element exists
#     and the <title> is the page's own (no script ran);
#   - a screenshot (--screenshot, --window-size=1280,1600) saved under the
#     build tree is a PNG of 1280x1600 that is not one colour.
# Needs TEST_PG_DIR, SEATWATCH_SOURCE_DIR and SEATWATCH_BINARY (set by CTest);
# the screenshot and the dumped DOM go to $SEATWATCH_ARTIFACT_DIR (default:
# the work folder).
set -euo pipefail

# shellcheck source=tests/support/seatwatch_harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/../support/seatwatch_harness.sh"
begin_e2e page sw_page_e2e
trap end_e2e EXIT
artifacts=${SEATWATCH_ARTIFACT_DIR:-$work}
mkdir -p "$artifacts"
count_sql() { psql -X -At -d "$db" -c "$1"; }

alert_fan='<script>alert(1)</script>'
retitle_app="<script>document.title='pwned'</script>"

# --- the database and its conditions ---------------------------------------
create_booking_db
psql_db <<'SQL' >/dev/null
INSERT INTO seats (event_id, seat) SELECT e, 'A' || n FROM generate_series(1, 3) e, generate_series(1, 20) n;
-- expired holds: the cleanup backlog (cleanup runs as a dry run: it stays)
UPDATE seats SET status = 'held', holder = 'fan-gone', hold_expires_at = now() - interval '3 minutes'
 WHERE event_id = 2 AND seat IN ('A1', 'A2', 'A3');
SQL
# The injected violation: a seat sold without a ticket, to a fan named as a script.
psql_db -v fan="$alert_fan" >/dev/null <<'SQL'
UPDATE seats SET status = 'sold', holder = :'fan' WHERE event_id = 3 AND seat = 'A7';
SQL

# --- seatwatch --------------------------------------------------------------
write_shipped_config 1s \
  -e '/^\[cleanup\]/,/^\[changes\]/ s/^enabled = false/enabled = true/' \
  -e '/^\[cleanup\]/,/^\[changes\]/ s/^dry_run = false/dry_run = true/' \
  -e '/^\[cleanup\]/,/^\[changes\]/ s/^interval = "30s"/interval = "1s"/'
start_seatwatch postgres
page="http://127.0.0.1:$sw_port/"

# --- a claim blocked behind an idle-in-transaction session ----------------
mkfifo "$work/blocker.in"
# The fifo stays open for writing (fd 7), so psql waits idle in transaction
# after the UPDATE until the test ends.
PGAPPNAME="$retitle_app" psql -X -q -d "$db" < "$work/blocker.in" > /dev/null 2>&1 &
pids+=($!)
exec 7> "$work/blocker.in"
echo "BEGIN; UPDATE seats SET status = 'held', holder = 'fan-slow', hold_expires_at = now() + interval '10 minutes' WHERE event_id = 1 AND seat = 'A1';" >&7
blocker_pid() {
  count_sql "SELECT pid FROM pg_stat_activity WHERE datname = '$db' AND state = 'idle in transaction' AND backend_xid IS NOT NULL AND application_name = \$\$$retitle_app\$\$"
}
blocker_idle() { [ -n "$(blocker_pid)" ]; }
two_waiting() {
  [ "$(count_sql "SELECT count(*) FROM pg_stat_activity WHERE datname = '$db' AND wait_event_type = 'Lock'")" = 2 ]
}
wait_for 20 blocker_idle || fail "the blocker never went idle in transaction"
root=$(blocker_pid)
for fan in b c; do
  PGAPPNAME="claim-$fan" psql -X -q -d "$db" -c "UPDATE seats SET status = 'held', holder = 'fan-$fan', hold_expires_at = now() + interval '10 minutes' WHERE event_id = 1 AND seat = 'A1' AND (status = 'free' OR (status = 'held' AND hold_expires_at <= now()))" > /dev/null 2>&1 &
  pids+=($!)
done
wait_for 20 two_waiting || fail "the claims never queued behind the blocker"
waiters=$(count_sql "SELECT string_agg(pid::text, ' ' ORDER BY pid) FROM pg_stat_activity WHERE datname = '$db' AND wait_event_type = 'Lock'")
echo "root pid $root, blocked claims $waiters"

# The page shows it all once the locks lane (2s) and the checks (1s) have
# polled with the chain in place and the cleanup has made its first run.
page_ready() {
  curl -sf "$page" -o "$work/page.html" &&
    grep -q "root pid <span class=\"pid\">$root</span>" "$work/page.html" &&
    grep -q 'seats(event_id=1, seat=A1)' "$work/page.html" &&
    grep -q 'sold_seat_without_ticket' "$work/page.html" &&
    grep -q '<th>last run</th><td>2' "$work/page.html"
}
wait_for 30 page_ready || { cat "$work/page.html" 2>/dev/null; tail -20 "$work/seatwatch.log"; fail "the page never showed the chain and the violation"; }

# What a view costs (printed, not asserted): bytes and time per GET /.
for _ in 1 2 3 4 5; do curl -sf -o /dev/null -w '%{size_download} %{time_total}\n' "$page"; done |
  awk '{ bytes = $1; t += $2 } END { printf "page: %d bytes, %.1f ms per view (mean of %d, curl time_total)\n", bytes, 1000 * t / NR, NR }'

# --- Chromium ------------------------------------------------------------
chromium_run() {
  local profile
  profile=$(mktemp -d "$work/chromium.XXXXXX")
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" "$@" 2>> "$work/chromium.log"
}
dom="$artifacts/status-page.dom.html"
chromium_run --dump-dom "$page" > "$dom"
[ -s "$dom" ] || { cat "$work/chromium.log"; fail "chromium dumped no DOM"; }
has() { grep -qF -- "$1" "$dom" || { echo "--- DOM ---"; cat "$dom"; fail "the DOM lacks: $1"; }; }

has '<title>seatwatch: VIOLATED</title>'
has '<h1>VIOLATED: 1 of 6 invariants</h1>'
has '<span class="badge violated">VIOLATED</span> <span class="name">sold_seat_without_ticket</span>'
# The summary opens the page: one line per problem, linking to its card.
has '<li><a href="#invariant-sold_seat_without_ticket">sold_seat_without_ticket: 1 event</a></li>'
has "<li><a href=\"#locks\">2 sessions blocked by pid $root (idle in transaction)</a></li>"
# The invariant's own help (the shipped invariant_help) and its runbook entry.
has '<p>A seat is sold, no ticket: a fan may have paid for nothing.</p>'
has 'href="https://github.com/seatwatch/seatwatch/blob/main/docs/runbook.md#sold_seat_without_ticket">runbook</a>'
has '<tr><th>event_id</th><th>offending</th><th>violated since</th></tr>'
has '<tr><td class="mono">3</td><td class="num">1</td><td class="meta">20'
has '<td class="mono">A7</td>'
has "root pid <span class=\"pid\">$root</span>"
has '<span class="state idle">idle in transaction for '
for pid in $waiters; do has "pid <span class=\"pid\">$pid</span></strong> waits "; done
has '<code class="row">seats(event_id=1, seat=A1)</code>'
has '<tr><th>expired holds (backlog)</th><td><strong>3</strong>'
has '<span class="badge warn">DRY RUN</span>'
# The scripts are text: escaped in the serialized DOM, no element made of them.
# (A serialized text node escapes &, < and > only.)
as_text() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' <<< "$1"; }
has "$(as_text "$alert_fan")"
has "$(as_text "$retitle_app")"
if grep -qi '<script' "$dom"; then fail "a <script> element is in the DOM"; fi
[ "$(grep -c '<title>' "$dom")" = 1 ] || fail "more than one title"
if grep -q '<title>pwned' "$dom"; then fail "a script changed the title"; fi
echo "DOM: verdict, invariant sold_seat_without_ticket (event 3), root pid $root, waiters $waiters, hot row seats(event_id=1, seat=A1), scripts shown as text, title unchanged"

shot="$artifacts/status-page.png"
rm -f "$shot"
chromium_run --screenshot="$shot" --window-size=1280,1600 --hide-scrollbars "$page" > /dev/null
[ -s "$shot" ] || { cat "$work/chromium.log"; fail "no screenshot written"; }
python3 "$src/tests/e2e/png_check.py" "$shot" 1280 1600 || fail "the screenshot is not a 1280x1600 picture"
echo "status page end-to-end: OK"
