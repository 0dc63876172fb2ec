-- Lock-chain waiter for scripts/demo-load: the normal claim of :seat in
-- event 2, in a transaction that is rolled back. Blocks while another
-- session holds the row.
--
-- psql variables: app (application_name), seat, lock_timeout.
SET application_name = :'app';
SET lock_timeout = :'lock_timeout';
SET client_connection_check_interval = '1s';
BEGIN;
UPDATE seats
SET status = 'held', holder = :'app',
    hold_expires_at = now() + interval '10 minutes', version = version + 1
WHERE event_id = 2 AND seat = :'seat'
  AND (status = 'free' OR (status = 'held' AND hold_expires_at <= now()));
ROLLBACK;
