-- Middle link of the two-row chain for scripts/demo-load: claims :first,
-- then :second (which the root holds), in one transaction that is rolled
-- back. While it waits for :second it keeps :first locked, so a third
-- session claiming :first waits on this one: root <- this <- third.
--
-- psql variables: app (application_name), first, second, lock_timeout.
SET application_name = :'app';
SET lock_timeout = :'lock_timeout';
SET client_connection_check_interval = '1s';
BEGIN;
UPDATE seats
SET status = 'held', holder = :'app',
    hold_expires_at = now() + interval '10 minutes', version = version + 1
WHERE event_id = 2 AND seat = :'first'
  AND (status = 'free' OR (status = 'held' AND hold_expires_at <= now()));
UPDATE seats
SET status = 'held', holder = :'app',
    hold_expires_at = now() + interval '10 minutes', version = version + 1
WHERE event_id = 2 AND seat = :'second'
  AND (status = 'free' OR (status = 'held' AND hold_expires_at <= now()));
ROLLBACK;
