"""The booking application's statements as correct code runs them: claim with
one conditional UPDATE, a payment deduplicated by its idempotency key, the
confirm CAS that inserts the ticket, and the cancel that frees the seat.
Shared by the loads of the soak and of the incremental-mode bench."""

CLAIM = """
UPDATE seats
SET status = 'held', holder = %(fan)s,
    hold_expires_at = now() + make_interval(secs => %(hold)s), version = version + 1
WHERE event_id = %(event)s AND seat = %(seat)s
  AND (status = 'free' OR (status = 'held' AND hold_expires_at <= now()))
RETURNING seat"""

PAYMENT = """
INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents)
VALUES (%(fan)s, %(event)s, %(seat)s, %(fan)s, 4000)
ON CONFLICT (idempotency_key) DO NOTHING"""

CONFIRM = """
WITH sold AS (
    UPDATE seats
    SET status = 'sold', hold_expires_at = NULL, version = version + 1
    WHERE event_id = %(event)s AND seat = %(seat)s AND status = 'held'
      AND holder = %(fan)s AND hold_expires_at > now()
      AND EXISTS (SELECT 1 FROM payments
                   WHERE idempotency_key = %(fan)s AND event_id = %(event)s
                     AND seat = %(seat)s AND fan = %(fan)s AND status = 'started')
    RETURNING event_id, seat, holder
),
ticket AS (
    INSERT INTO tickets (event_id, seat, fan)
    SELECT event_id, seat, holder FROM sold
    RETURNING event_id, seat, fan
)
UPDATE payments p SET status = 'confirmed'
FROM ticket t
WHERE p.idempotency_key = %(fan)s
  AND p.event_id = t.event_id AND p.seat = t.seat AND p.fan = t.fan"""

CANCEL = """
WITH freed AS (
    UPDATE seats SET status = 'free', holder = NULL, hold_expires_at = NULL,
                     version = version + 1
    WHERE event_id = %(event)s AND seat = %(seat)s AND status = 'held' AND holder = %(fan)s
    RETURNING seat
)
UPDATE payments SET status = 'failed' WHERE idempotency_key = %(fan)s AND status = 'started'"""
