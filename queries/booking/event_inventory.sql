-- event_inventory.sql: per-event inventory, without the invariant checks.
--
-- For users who only want the numbers. reconciliation.sql returns the same
-- rows (its inventory rows) from the same scans, so there is no need to run
-- both.
--
-- Columns:
--   event_id  integer
--   kind      text     one of the kinds below
--   count     bigint   >= 0
--
-- Seven rows for every event that has seats, zeros included:
--   seats_free          status 'free'
--   seats_held          status 'held' and hold_expires_at > now()
--   seats_held_expired  status 'held' and hold_expires_at <= now() or NULL
--   seats_sold          status 'sold'
--   tickets             ticket rows
--   payments_started    payments with status 'started'
--   payments_confirmed  payments with status 'confirmed'
--
-- Parameters: none.
--
-- Indexes: none; one sequential scan each of seats, tickets and payments,
-- aggregated per event (a few hundred bytes of memory per event).

WITH seat_stats AS (
    SELECT event_id,
           count(*) FILTER (WHERE status = 'free') AS seats_free,
           count(*) FILTER (WHERE status = 'held' AND hold_expires_at > now()) AS seats_held,
           count(*) FILTER (WHERE status = 'held' AND (hold_expires_at <= now()
                                                       OR hold_expires_at IS NULL)) AS seats_held_expired,
           count(*) FILTER (WHERE status = 'sold') AS seats_sold
    FROM seats
    GROUP BY event_id
),
ticket_stats AS (
    SELECT event_id, count(*) AS tickets
    FROM tickets
    GROUP BY event_id
),
payment_stats AS (
    SELECT event_id,
           count(*) FILTER (WHERE status = 'started') AS payments_started,
           count(*) FILTER (WHERE status = 'confirmed') AS payments_confirmed
    FROM payments
    WHERE status IN ('started', 'confirmed')
    GROUP BY event_id
)
SELECT s.event_id, k.kind, k.count
FROM seat_stats s
LEFT JOIN ticket_stats t ON t.event_id = s.event_id
LEFT JOIN payment_stats p ON p.event_id = s.event_id
CROSS JOIN LATERAL (VALUES
    ('seats_free',         s.seats_free),
    ('seats_held',         s.seats_held),
    ('seats_held_expired', s.seats_held_expired),
    ('seats_sold',         s.seats_sold),
    ('tickets',            coalesce(t.tickets, 0)),
    ('payments_started',   coalesce(p.payments_started, 0)),
    ('payments_confirmed', coalesce(p.payments_confirmed, 0))
) AS k(kind, count)
ORDER BY s.event_id, k.kind;
