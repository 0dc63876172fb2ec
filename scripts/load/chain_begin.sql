-- Lock-chain root for scripts/demo-load: claims :seat in event 2 inside a
-- transaction and leaves it open. demo-load feeds this file to psql and then
-- stays silent for a while before sending ROLLBACK, so the session shows as
-- 'idle in transaction' holding the row lock, with everyone else queued
-- behind it. Rolled back: nothing is changed.
--
-- psql variables: app (application_name), seat.
SET application_name = :'app';
SET idle_in_transaction_session_timeout = '60s';
BEGIN;
UPDATE seats
SET status = 'held', holder = :'app',
    hold_expires_at = now() + interval '10 minutes', version = version + 1
WHERE event_id = 2 AND seat = :'seat'
  AND (status = 'free' OR (status = 'held' AND hold_expires_at <= now()));
