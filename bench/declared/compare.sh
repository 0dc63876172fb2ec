#!/usr/bin/env bash
# The booking pack as shipped, declared (config/seatwatch.toml: six
# invariants and the event_inventory counts, one pass) against the
# hand-written pack (queries/booking/reconciliation.sql, which computes the
# same inventory in its pass) on the benchmark data: the database time of
# one full pass of each, alternated, median of RUNS (jit off, as in
# seatwatch's sessions), and whether both report the same violation rows
# and the same inventory.
#
#   bench/declared/compare.sh PG_DIR [EVENTS] [RUNS]
#
# PG_DIR: a cluster of scripts/pg-scratch (started here if it is not);
# EVENTS events of 1,000 seats (default 1000: 1M seats), seeded once into the
# database declared_EVENTS; RUNS (default 5). Needs a built seatwatch in
# build/ (its --print-sql writes the declared pack's SQL).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
pg=${1:?usage: compare.sh PG_DIR [EVENTS] [RUNS]}
events=${2:-1000}
runs=${3:-5}
db=declared_$events
"$root/scripts/pg-scratch" start "$pg" >/dev/null
# jit off, as in seatwatch's own sessions (db/conninfo.cc).
psql() { PGOPTIONS="-c jit=off" "$root/scripts/pg-scratch" psql "$pg" -X -q -v ON_ERROR_STOP=1 -d "$db" "$@"; }
if ! "$root/scripts/pg-scratch" psql "$pg" -X -Atc "SELECT 1 FROM pg_database WHERE datname = '$db'" -d postgres | grep -q 1; then
  "$root/scripts/pg-scratch" createdb "$pg" "$db" >/dev/null
  psql -f "$root/queries/booking/schema.sql" >/dev/null
  psql -v events="$events" -f "$root/bench/sql/seed.sql" >/dev/null
  psql -f "$root/bench/sql/violations.sql" >/dev/null
  psql -c "VACUUM ANALYZE" >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
grep -v '^\s*--' "$root/queries/booking/reconciliation.sql" | sed '/^\s*$/d; s/;\s*$//; s/\$1/4/g' >"$work/hand.sql"
"$root/build/daemon/seatwatch" --config "$root/config/seatwatch.toml" --print-sql booking_reconciliation |
  awk '/^-- full pass/{f=1;next} /^-- scoped pass/{f=0} f' | sed 's/;\s*$//' >"$work/declared.sql"
time_of() {
  { echo '\timing on'; printf 'SELECT count(*) FROM (\n'; cat "$1"; printf '\n) AS x;\n'; } |
    psql 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
}
: >"$work/hand.ms"; : >"$work/declared.ms"
for _ in $(seq "$runs"); do
  time_of "$work/hand.sql" >>"$work/hand.ms"
  time_of "$work/declared.sql" >>"$work/declared.ms"
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
hand=$(median "$work/hand.ms"); declared=$(median "$work/declared.ms")
psql -At -c "SELECT event_id::text, invariant, violations::float8 FROM ($(cat "$work/hand.sql")) x
             WHERE invariant IS NOT NULL AND violations > 0 ORDER BY 1, 2" >"$work/hand.rows"
psql -At -c "SELECT event_id, seatwatch_invariant, seatwatch_violations FROM ($(cat "$work/declared.sql")) x
             WHERE seatwatch_invariant IS NOT NULL ORDER BY 1, 2" >"$work/declared.rows"
same=no; cmp -s "$work/hand.rows" "$work/declared.rows" && same=yes
psql -At -c "SELECT event_id::text, kind, count::float8 FROM ($(cat "$work/hand.sql")) x
             WHERE kind IS NOT NULL ORDER BY 1, 2" >"$work/hand.inventory"
psql -At -c "SELECT event_id, kind, seatwatch_value_1 FROM ($(cat "$work/declared.sql")) x
             WHERE kind IS NOT NULL ORDER BY 1, 2" >"$work/declared.inventory"
same_inventory=no; cmp -s "$work/hand.inventory" "$work/declared.inventory" && same_inventory=yes
echo "seats=$((events * 1000)) runs=$runs hand_ms=$hand declared_ms=$declared" \
     "ratio=$(awk -v a="$declared" -v b="$hand" 'BEGIN {printf "%.2f", a / b}')" \
     "rows=$(wc -l <"$work/hand.rows") same_rows=$same" \
     "inventory=$(wc -l <"$work/hand.inventory") same_inventory=$same_inventory"
