-- changes-setup.sql: what the change feed ([changes]) needs on the booking
-- database. Run by a DBA, never by seatwatch: seatwatch never alters tables.
--
-- Run as the owner of seats, tickets and payments (or a superuser),
-- connected to the booking database, with psql and NOT in a transaction
-- (no -1 / --single-transaction, no BEGIN around it: step 2 cannot run in
-- one, see there):
--   psql -d booking -v ON_ERROR_STOP=1 -f queries/booking/changes-setup.sql
-- Idempotent: re-running it changes nothing that is already right, and
-- brings the publication's tables and columns back to what is listed here.
-- Needs wal_level = logical on the server (a restart to change), and
-- max_replication_slots / max_wal_senders with one free each per seatwatch
-- process (each uses one temporary slot).
--
-- The tables are named without a schema: the ones on the search_path (the
-- reference schema puts them in public).
--
-- Why the order matters: the replica identity trap. A publication that
-- publishes UPDATE or DELETE (this one does: seatwatch must see both) makes
-- PostgreSQL refuse every UPDATE and DELETE on a member table that has no
-- replica identity, with
--   ERROR: cannot delete from table "tickets" because it does not have a
--          replica identity and publishes deletes        (SQLSTATE 55000)
-- The reference tickets table has no primary key, so its replica identity
-- (DEFAULT = the primary key) is empty: adding it to the publication as it
-- is would break the application's own writes at once. Hence:
--   1. tickets gets a replica identity first,
--   2. payments gets the unique index its replica identity needs,
--   3. payments gets that replica identity,
--   4. only then is the publication created (or its table list updated).
-- If the script stops half-way, what ran is harmless on its own: steps 1-3
-- only add WAL detail to updates and deletes, and the publication, the only
-- thing that can break writes, comes last.
--
-- Why these replica identities. The replica identity is what an UPDATE or
-- DELETE writes to the WAL about the old row. seatwatch needs the old row's
-- event_id: the event a deleted ticket or a payment moved to another event
-- belonged to must be rechecked. The defaults do not give it:
--   tickets   no primary key: a DELETE carries no old data at all.
--   payments  DEFAULT = the primary key (idempotency_key): a DELETE carries
--             only the key, and an UPDATE that moves a payment to another
--             event says nothing of the old event.
--   seats     DEFAULT = the primary key (event_id, seat): already enough.
-- USING INDEX on a unique index that includes event_id gives it, for less
-- WAL than REPLICA IDENTITY FULL (which logs the whole old row). While the
-- publication exists, do not drop these indexes: a table whose replica
-- identity index is gone has no replica identity, and the trap above fires.
-- Without this script's replica identities seatwatch still works: it reports
-- the changes it cannot map (e.g. ticket deletes) and answers them with a
-- full pass.

-- ALTER TABLE ... REPLICA IDENTITY takes an ACCESS EXCLUSIVE lock, briefly.
-- Behind a long transaction it would queue, and every query of the
-- application on that table would queue behind it: give up instead, and
-- re-run the script later.
SET lock_timeout = '5s';

-- 1. tickets: REPLICA IDENTITY USING INDEX its UNIQUE (event_id, seat)
-- index. Both columns are NOT NULL in the reference schema (USING INDEX
-- requires that, and a unique, non-partial, non-deferrable index). The index
-- is found by its columns, not its name, so a differently named one works
-- too. Skipped when already set (no lock taken then).
DO $$
DECLARE
    idx regclass;
BEGIN
    SELECT i.indexrelid::regclass INTO idx
      FROM pg_index i
     WHERE i.indrelid = 'tickets'::regclass
       AND i.indisunique AND i.indisvalid AND i.indimmediate
       AND i.indpred IS NULL AND i.indexprs IS NULL
       AND i.indnatts = 2
       AND i.indkey[0] = (SELECT attnum FROM pg_attribute
                           WHERE attrelid = 'tickets'::regclass AND attname = 'event_id')
       AND i.indkey[1] = (SELECT attnum FROM pg_attribute
                           WHERE attrelid = 'tickets'::regclass AND attname = 'seat')
     ORDER BY i.indisreplident DESC
     LIMIT 1;
    IF idx IS NULL THEN
        RAISE EXCEPTION 'tickets has no valid unique index on (event_id, seat)';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = idx AND indisreplident)
       OR (SELECT relreplident FROM pg_class WHERE oid = 'tickets'::regclass) <> 'i' THEN
        EXECUTE format('ALTER TABLE tickets REPLICA IDENTITY USING INDEX %s', idx);
    END IF;
END
$$;

-- 2. payments: a unique index on (idempotency_key, event_id). Unique because
-- idempotency_key alone is (the primary key); both columns are NOT NULL.
--
-- CONCURRENTLY, and therefore this script runs outside a transaction:
-- CREATE INDEX CONCURRENTLY cannot run inside a transaction block (nor in a
-- DO block, nor in a multi-statement query string). The choice: a plain
-- CREATE INDEX would hold a SHARE lock on payments for the whole build,
-- blocking every checkout (INSERT / UPDATE of payments) for as long as the
-- build of an index over all payments ever taken lasts; CONCURRENTLY lets
-- them run, at the price of two scans and of this script not being one
-- all-or-nothing transaction. That price is small here: each step is
-- idempotent and safe on its own (see the order above).
--
-- A CONCURRENTLY build that fails or is cancelled leaves an INVALID index
-- of that name, which IF NOT EXISTS would then keep forever: drop such a
-- leftover first, so a re-run builds it again.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_index
                WHERE indexrelid = to_regclass('payments_idempotency_key_event_id_idx')
                  AND NOT indisvalid) THEN
        DROP INDEX payments_idempotency_key_event_id_idx;
    END IF;
END
$$;
-- lock_timeout also bounds the waits of a CONCURRENTLY build for the
-- transactions running when it starts: on a timeout, re-run the script.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS payments_idempotency_key_event_id_idx
    ON payments (idempotency_key, event_id);

-- 3. payments: REPLICA IDENTITY USING INDEX that index (skipped when set).
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_index
                    WHERE indexrelid = 'payments_idempotency_key_event_id_idx'::regclass
                      AND indisreplident)
       OR (SELECT relreplident FROM pg_class WHERE oid = 'payments'::regclass) <> 'i' THEN
        ALTER TABLE payments REPLICA IDENTITY USING INDEX payments_idempotency_key_event_id_idx;
    END IF;
END
$$;

-- 4. The publication seatwatch reads ([changes] publication = "seatwatch").
-- COLUMN LISTS: only the key seatwatch maps changes to (event_id) and the
-- replica identity columns (PostgreSQL requires a column list of a
-- publication that publishes UPDATE or DELETE to cover the replica
-- identity). Less is decoded for each change, and holders, fans and amounts
-- never leave the server through the slot. All four kinds are published:
-- insert, update and delete name the events to recheck, and a TRUNCATE,
-- which names no rows, tells seatwatch to run a full pass (not publishing
-- it would hide it).
-- Creating it, or changing its table list, takes a SHARE UPDATE EXCLUSIVE
-- lock on the tables: reads and writes go on.
DO $$
DECLARE
    t text;
BEGIN
    -- The trap's last guard: every member must have a replica identity
    -- (seats: its primary key under DEFAULT).
    FOREACH t IN ARRAY ARRAY['seats', 'tickets', 'payments'] LOOP
        IF NOT EXISTS (
               SELECT 1 FROM pg_class c
                WHERE c.oid = t::regclass
                  AND (c.relreplident = 'f'
                       OR (c.relreplident = 'd' AND EXISTS (
                               SELECT 1 FROM pg_index i
                                WHERE i.indrelid = c.oid AND i.indisprimary))
                       OR (c.relreplident = 'i' AND EXISTS (
                               SELECT 1 FROM pg_index i
                                WHERE i.indrelid = c.oid AND i.indisreplident)))) THEN
            RAISE EXCEPTION 'table % has no replica identity: adding it to the publication '
                            'would make its UPDATE and DELETE fail', t;
        END IF;
    END LOOP;
    IF NOT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = 'seatwatch') THEN
        CREATE PUBLICATION seatwatch
            FOR TABLE seats (event_id, seat),
                      tickets (event_id, seat),
                      payments (idempotency_key, event_id)
            WITH (publish = 'insert, update, delete, truncate');
    ELSE
        -- Already there (a re-run): bring it back to exactly this list.
        ALTER PUBLICATION seatwatch SET TABLE seats (event_id, seat),
                                              tickets (event_id, seat),
                                              payments (idempotency_key, event_id);
        ALTER PUBLICATION seatwatch SET (publish = 'insert, update, delete, truncate');
    END IF;
END
$$;

RESET lock_timeout;

-- 5. The role seatwatch's change feed connects as (its own DSN:
-- [changes] dsn or SEATWATCH_CHANGES_DSN). Not run by this script: the DBA
-- chooses the password (or a certificate) and the pg_hba.conf line.
--
-- WARNING: a REPLICATION role can create a logical slot and decode every
-- row of every table of the database, whatever it was granted: column lists
-- and table privileges do not limit what a slot with another output plugin
-- (test_decoding) shows. Treat its credentials like a replication user's:
-- secret-grade, never the seatwatch role's DSN, never in a config file
-- others can read. It needs nothing else: no table privileges, no
-- pg_monitor, no superuser.
--
--   CREATE ROLE seatwatch_changes LOGIN REPLICATION PASSWORD 'chosen-by-the-dba';
--   -- CONNECT (PUBLIC has it by default; needed if that was revoked):
--   GRANT CONNECT ON DATABASE booking TO seatwatch_changes;
--   -- Each drain is a short statement; bound them like the checks':
--   ALTER ROLE seatwatch_changes SET statement_timeout = '60s';
--
-- pg_hba.conf: the feed uses a normal connection to the database (not a
-- replication connection), so an ordinary "host booking seatwatch_changes"
-- line allows it.
