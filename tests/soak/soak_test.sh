#!/usr/bin/env bash
# The fault soak, 2 minutes (one cycle of every fault), against the CTest
# fixture's scratch PostgreSQL: tests/soak/soak.py with a strict verdict.
# The test fails if any assertion fails; the table says which, and the
# summary (JSON) is kept in SOAK_SUMMARY, the samples and the daemon's log
# next to it. See docs/soak.md.
# Needs TEST_PG_DIR, SEATWATCH_SOURCE_DIR and SEATWATCH_BINARY (set by CTest).
set -euo pipefail

src=${SEATWATCH_SOURCE_DIR:?}
bin=${SEATWATCH_BINARY:?}
pgdir=${TEST_PG_DIR:?}
summary=${SOAK_SUMMARY:-}
work=$(mktemp -d /tmp/seatwatch-soak-test.XXXXXX)
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 -c 'import psycopg2' 2>/dev/null ||
  { echo "FAIL: python3-psycopg2 is not installed (scripts/lib/deps.sh installs it)" >&2; exit 1; }

# The 2 s SIGTERM bound is the production build's; a sanitizer runtime's own
# teardown after the daemon's last line costs about a second more.
sigterm_bound=2
if ldd "$bin" 2>/dev/null | grep -Eq 'lib(a|t)san'; then sigterm_bound=3.5; fi

status=0
/usr/bin/python3 "$src/tests/soak/soak.py" --minutes 2 --pg-dir "$pgdir" \
  --seatwatch "$bin" --workdir "$work" --out "$work/soak.json" \
  --sigterm-bound "$sigterm_bound" || status=$?
if [ -n "$summary" ]; then
  cp "$work/soak.json" "$summary" 2>/dev/null || true
  cp "$work/samples.jsonl" "${summary%.json}-samples.jsonl" 2>/dev/null || true
  cp "$work/seatwatch.log" "${summary%.json}-seatwatch.log" 2>/dev/null || true
fi
if [ $status -ne 0 ]; then
  echo "--- last lines of the daemon's log" >&2
  tail -n 30 "$work/seatwatch.log" >&2 || true
fi
exit $status
