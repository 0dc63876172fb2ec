#!/usr/bin/env bash
# Re-makes the captured pgoutput messages the parser and decoder unit tests
# read (tests/unit/pgoutput_parser_test.cc, change_decoder_test.cc).
#
#   tests/unit/data/pgoutput/capture.sh [CLUSTER_DIR]
#
# CLUSTER_DIR is a scripts/pg-scratch folder of a running cluster with
# wal_level = logical. Without it, the script starts a cluster of its own in a
# temporary folder and destroys it at the end. It (re)creates the database
# pgoutput_capture there, loads queries/booking/schema.sql, gives tickets and
# payments a replica identity that carries event_id (as
# queries/booking/changes-setup.sql does), adds a table the tests do not watch
# (extras, with an enum column so that pgoutput sends a Type message), and
# publishes all four in the publication seatwatch_capture.
#
# Each scenario runs in one psql session: create a temporary slot, run its
# writes, then read the slot with
#   pg_logical_slot_get_binary_changes(slot, NULL, NULL, 'proto_version', '1',
#     'publication_names', 'seatwatch_capture', 'messages', 'true')
# and save one line per message, "LSN<TAB>XID<TAB>DATA", where LSN and XID are
# the server's lsn and xid columns and DATA is the bytea column in the text
# form libpqxx returns (bytea_output = hex: "\x" and two hex digits a byte).
# Relation OIDs, xids and LSNs change with every capture; the tests compare
# them with the xid/lsn columns and with each other, never with constants.
#
# The scenarios (SCENARIO.txt):
#   insert          one transaction: two seats, a ticket, a payment
#   update          a seat's status (key in the identity: no old tuple), a
#                   ticket's fan (no old tuple), a ticket moved to another event
#                   (old key K), a payment moved to another event (old key K)
#   delete          a ticket and a payment deleted (old key K with event_id)
#   delete_default  payments back to REPLICA IDENTITY DEFAULT: a payment's
#                   delete carries only idempotency_key; an update of its
#                   status has no old tuple
#   identity_full   payments with REPLICA IDENTITY FULL: update and delete
#                   carry the whole old row (O)
#   truncate        TRUNCATE tickets RESTART IDENTITY, then TRUNCATE seats
#                   CASCADE (payments with it)
#   big_row         a ticket whose fan is 2 MB of incompressible text, then an
#                   update of its seat (old key K; fan: unchanged TOAST, 'u')
#   unwatched       a write to extras (Type + Relation + Insert) and a seat
#   messages        pg_logical_emit_message, transactional and not (the
#                   latter outside any transaction, before the next one)
#   origin          a write under a replication origin (Origin message)
#
# Then make_fuzz_seeds.py turns the captures into the seed corpus of
# tests/fuzz/pgoutput_fuzz.cc (tests/fuzz/corpus/pgoutput/).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
pg_scratch="$root/scripts/pg-scratch"

cluster=${1:-}
own=""
if [ -z "$cluster" ]; then
  own=$(mktemp -d /tmp/pgoutput-capture.XXXXXX)
  cluster=$own
  PG_SCRATCH_OPTS="-c wal_level=logical -c max_replication_slots=10" \
    "$pg_scratch" start "$cluster" >/dev/null
  trap '"$pg_scratch" destroy "$cluster" >/dev/null 2>&1 || true; rm -rf "$own"' EXIT
fi
# shellcheck disable=SC1091
source "$cluster/env"

db=pgoutput_capture
psql_base=(psql -X -q -v ON_ERROR_STOP=1)
"${psql_base[@]}" -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
[ "$("${psql_base[@]}" -d $db -Atc 'SHOW wal_level')" = logical ] ||
  { echo "capture.sh: the cluster needs wal_level = logical" >&2; exit 1; }

"${psql_base[@]}" -d $db -f "$root/queries/booking/schema.sql"
"${psql_base[@]}" -d $db >/dev/null <<'SQL'
ALTER TABLE tickets REPLICA IDENTITY USING INDEX tickets_event_id_seat_key;
CREATE UNIQUE INDEX payments_key_event_idx ON payments (idempotency_key, event_id);
ALTER TABLE payments REPLICA IDENTITY USING INDEX payments_key_event_idx;
CREATE TYPE extra_kind AS ENUM ('small', 'large');
CREATE TABLE extras (id integer PRIMARY KEY, kind extra_kind NOT NULL, note text);
CREATE PUBLICATION seatwatch_capture FOR TABLE seats, tickets, payments, extras;
SELECT pg_replication_origin_drop(roname) FROM pg_replication_origin
  WHERE roname = 'capture_origin';  -- replication origins belong to the cluster
SELECT pg_replication_origin_create('capture_origin');
SQL

# capture NAME: runs stdin (the scenario's writes) in one session between
# creating the slot and reading it, and writes NAME.txt. synchronous_commit
# is on because decoding reads only flushed WAL: the scratch cluster runs with
# synchronous_commit = off, where a commit can still be unflushed (and not
# decoded yet) when the slot is read right after it.
capture() {
  local name=$1 writes
  writes=$(cat)
  "${psql_base[@]}" -d $db -At -F $'\t' <<SQL >"$here/$name.txt"
\\o /dev/null
SET synchronous_commit = on;
SELECT pg_create_logical_replication_slot('capture_$name', 'pgoutput', true);
$writes
\\o
SELECT lsn, xid, data FROM pg_logical_slot_get_binary_changes('capture_$name', NULL, NULL,
  'proto_version', '1', 'publication_names', 'seatwatch_capture', 'messages', 'true');
SQL
  echo "capture.sh: $name.txt: $(wc -l <"$here/$name.txt") messages"
}

capture insert <<'SQL'
BEGIN;
INSERT INTO seats (event_id, seat, status) VALUES (7, 'A1', 'free'), (7, 'A2', 'sold');
INSERT INTO tickets VALUES (7, 'A2', 'ann');
INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status)
  VALUES ('pay-1', 7, 'A2', 'ann', 4500, 'confirmed');
COMMIT;
SQL

"${psql_base[@]}" -d $db >/dev/null <<'SQL'
INSERT INTO seats (event_id, seat, status) VALUES (8, 'A2', 'sold'), (9, 'B1', 'sold');
INSERT INTO tickets VALUES (8, 'B7', 'bob');
INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents)
  VALUES ('pay-2', 8, 'A2', 'bob', 3000);
SQL

capture update <<'SQL'
UPDATE seats SET status = 'held', holder = 'cat' WHERE event_id = 7 AND seat = 'A1';
UPDATE tickets SET fan = 'anne' WHERE event_id = 7 AND seat = 'A2';
UPDATE tickets SET event_id = 9, seat = 'B1' WHERE event_id = 8 AND seat = 'B7';
UPDATE payments SET event_id = 7 WHERE idempotency_key = 'pay-2';
SQL

capture delete <<'SQL'
DELETE FROM tickets WHERE event_id = 7 AND seat = 'A2';
DELETE FROM payments WHERE idempotency_key = 'pay-1';
SQL

capture delete_default <<'SQL'
ALTER TABLE payments REPLICA IDENTITY DEFAULT;
UPDATE payments SET status = 'failed' WHERE idempotency_key = 'pay-2';
DELETE FROM payments WHERE idempotency_key = 'pay-2';
ALTER TABLE payments REPLICA IDENTITY USING INDEX payments_key_event_idx;
SQL

capture identity_full <<'SQL'
INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents)
  VALUES ('pay-3', 7, 'A2', 'dan', 1200);
ALTER TABLE payments REPLICA IDENTITY FULL;
UPDATE payments SET event_id = 8, status = 'confirmed' WHERE idempotency_key = 'pay-3';
DELETE FROM payments WHERE idempotency_key = 'pay-3';
ALTER TABLE payments REPLICA IDENTITY USING INDEX payments_key_event_idx;
SQL

capture truncate <<'SQL'
TRUNCATE tickets RESTART IDENTITY;
TRUNCATE seats CASCADE;
SQL

# 2 MB of hex digits from md5 of a counter and random(): pglz finds nothing to
# compress, so the value is stored out of line, and an update that does not
# touch it sends it as unchanged TOAST. tickets.fan has no index (an index
# entry cannot hold 2 MB).
capture big_row <<'SQL'
INSERT INTO tickets (event_id, seat, fan)
  SELECT 12, 'Z9', string_agg(md5(g::text || random()::text), '')
  FROM generate_series(1, 65536) g;
UPDATE tickets SET seat = 'Z8' WHERE event_id = 12 AND seat = 'Z9';
SQL

capture unwatched <<'SQL'
BEGIN;
INSERT INTO extras VALUES (1, 'large', 'not watched');
INSERT INTO seats (event_id, seat) VALUES (13, 'C3');
COMMIT;
SQL

capture messages <<'SQL'
BEGIN;
SELECT pg_logical_emit_message(true, 'seatwatch', 'in a transaction');
INSERT INTO seats (event_id, seat) VALUES (14, 'D4');
COMMIT;
SELECT pg_logical_emit_message(false, 'seatwatch', 'outside');
-- A non-transactional message does not flush WAL; this commit does.
INSERT INTO seats (event_id, seat) VALUES (14, 'D5');
SQL

capture origin <<'SQL'
SELECT pg_replication_origin_session_setup('capture_origin');
BEGIN;
SELECT pg_replication_origin_xact_setup('0/1234ABCD', '2026-01-02 03:04:05+00');
INSERT INTO seats (event_id, seat) VALUES (15, 'E5');
COMMIT;
SELECT pg_replication_origin_session_reset();
SQL

"${psql_base[@]}" -d postgres -c "SELECT pg_replication_origin_drop('capture_origin')" \
  -c "DROP DATABASE $db" >/dev/null

"$here/make_fuzz_seeds.py"
