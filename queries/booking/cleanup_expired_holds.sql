-- cleanup_expired_holds.sql: one batch of the expired-hold housekeeping job.
--
-- Frees up to $1 seats whose hold has expired, oldest expiry first:
-- status 'free', holder NULL, hold_expires_at NULL, version + 1. Run it
-- repeatedly (each run in its own short transaction) until it returns fewer
-- than $1 rows.
--
-- Correctness never depends on this job: claims already treat an expired
-- hold as free. It keeps seat maps tidy, the held-seat index small and the
-- holds_expired numbers of holds.sql near zero.
--
-- Returns the freed seats:
--   event_id  integer
--   seat      text
--
-- Parameters:
--   $1  integer  batch size (e.g. 500)
--
-- Concurrency:
--   * FOR UPDATE SKIP LOCKED: a seat locked by someone else (a claim or a
--     confirm in progress, or another cleanup worker) is skipped, not waited
--     for, so the job never queues behind the booking traffic and several
--     workers can run at once.
--   * The UPDATE repeats status = 'held' AND hold_expires_at <= now() in its
--     own WHERE, so a seat is only freed if it is still an expired hold.
--   * Holds with a NULL hold_expires_at are left alone (they need a person).
--
-- Not a plain SELECT: it cannot be wrapped in SELECT * FROM (...); see
-- cleanup_expired_holds.dry_run.sql for a read-only version.
--
-- Needs UPDATE on seats (status, holder, hold_expires_at, version): see the
-- commented grant in grants.sql.
--
-- Indexes: seats_held_expiry_idx (hold_expires_at) WHERE status = 'held'
-- gives the candidates in expiry order (the ORDER BY ... LIMIT reads only
-- the first entries); seats_pkey for the UPDATE.

WITH candidates AS (
    SELECT event_id, seat
    FROM seats
    WHERE status = 'held'
      AND hold_expires_at <= now()
    ORDER BY hold_expires_at
    LIMIT $1
    FOR UPDATE SKIP LOCKED
)
UPDATE seats AS s
SET status = 'free',
    holder = NULL,
    hold_expires_at = NULL,
    version = s.version + 1
FROM candidates AS c
WHERE s.event_id = c.event_id
  AND s.seat = c.seat
  AND s.status = 'held'
  AND s.hold_expires_at <= now()
RETURNING s.event_id, s.seat;
