-- cleanup_expired_holds.dry_run.sql: what one batch of
-- cleanup_expired_holds.sql would free, without changing anything.
--
-- Selects the same candidates (held, hold_expires_at <= now(), oldest
-- expiry first, at most $1) but takes no row locks and writes nothing, so it
-- also runs in a read-only transaction or on a standby. Because it does not
-- lock, it cannot skip seats that another session has locked at this
-- moment: the real batch may free fewer (or, when some are skipped, other)
-- seats.
--
-- Columns:
--   event_id  integer
--   seat      text
--
-- Parameters:
--   $1  integer  batch size (e.g. 500)
--
-- Indexes: seats_held_expiry_idx (hold_expires_at) WHERE status = 'held',
-- read in order up to the LIMIT.

SELECT event_id, seat
FROM seats
WHERE status = 'held'
  AND hold_expires_at <= now()
ORDER BY hold_expires_at, event_id, seat
LIMIT $1;
