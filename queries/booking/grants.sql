-- grants.sql: a least-privilege role for the seatwatch daemon (example).
--
-- Run as a superuser or a role with CREATEROLE, connected to the booking
-- database:
--   psql -d booking -f queries/booking/grants.sql
-- Then give the role a password (\password seatwatch) or a certificate, and
-- allow it in pg_hba.conf. Re-running is harmless.
--
-- This is a psql script, not a query for the daemon.

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'seatwatch') THEN
        -- LOGIN: the daemon connects as this role. Nothing else: no
        -- superuser, no CREATEDB/CREATEROLE, no replication. The change
        -- feed ([changes]) connects as a role of its own with REPLICATION
        -- (seatwatch_changes, see changes-setup.sql), never as this one:
        -- REPLICATION can decode every row of every table.
        CREATE ROLE seatwatch LOGIN;
    END IF;
END
$$;

-- pg_monitor (pg_read_all_stats, pg_read_all_settings, pg_stat_scan_tables):
-- without it pg_stat_activity hides the query text, state and wait events of
-- other users' sessions, so blocking chains and idle-in-transaction sessions
-- of the application would be invisible; it also lets pg_stat_statements
-- show every user's statements and pg_locks be read in full.
GRANT pg_monitor TO seatwatch;

-- CONNECT on this database and USAGE on the schema holding the tables.
DO $$
BEGIN
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO seatwatch', current_database());
END
$$;
GRANT USAGE ON SCHEMA public TO seatwatch;

-- SELECT on the three booking tables: every query of the pack reads them
-- (invariants, inventory, holds, details). Read-only: the checks never need
-- to write.
GRANT SELECT ON seats, tickets, payments TO seatwatch;

-- Only if the daemon runs the expired-hold cleanup (cleanup_expired_holds.sql):
-- UPDATE on exactly the columns it sets. Column-level UPDATE is also what
-- SELECT ... FOR UPDATE needs. The role still cannot insert, delete, or touch
-- tickets and payments.
-- GRANT UPDATE (status, holder, hold_expires_at, version) ON seats TO seatwatch;

-- Session defaults for the role (optional, recommended):
--   statement_timeout: a check that runs away is cancelled instead of piling
--     up behind the next scrape.
--   lock_timeout: the checks take only ACCESS SHARE locks, but those queue
--     behind a pending ACCESS EXCLUSIVE (a migration); give up instead of
--     making the migration's queue longer.
--   jit: the pack's scans are planned above jit_above_cost on large tables,
--     and compiling them can take longer than running them.
--   idle_in_transaction_session_timeout: the daemon should never sit in an
--     open transaction.
ALTER ROLE seatwatch SET statement_timeout = '60s';
ALTER ROLE seatwatch SET lock_timeout = '5s';
ALTER ROLE seatwatch SET jit = off;
ALTER ROLE seatwatch SET idle_in_transaction_session_timeout = '60s';
