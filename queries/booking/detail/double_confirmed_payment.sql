-- detail/double_confirmed_payment.sql: every confirmed payment of a seat that
-- has more than one.
--
-- The rows behind the double_confirmed_payment invariant of
-- reconciliation.sql (which counts the extra ones: n - 1 per seat). Typical
-- cause: a retry or double tap that sent a new idempotency key, so the
-- provider charged twice. All but one of each seat's payments need a refund.
--
-- Columns:
--   event_id            integer
--   seat                text
--   idempotency_key     text
--   fan                 text
--   amount_cents        integer
--   created_at          timestamptz
--   confirmed_payments  bigint       confirmed payments for this seat (>= 2)
--   ticket_fan          text         fan on the seat's ticket, if any
--
-- Parameters:
--   $1  int[]    the event_ids the invariant reports as violated, e.g.
--                '{4,17}' (seatwatch passes them: one array per label of
--                the entry, then its params); only those events are read.
--
-- Order: event_id, seat, created_at (the first payment of a seat first).
--
-- Indexes: payments_event_seat_idx (per-seat grouping in index order and
-- the lookup of each seat's payments), tickets_event_id_seat_key.

WITH doubled AS (
    SELECT event_id, seat, count(*) AS confirmed_payments
    FROM payments
    WHERE event_id = ANY ($1::int[])
      AND status = 'confirmed'
    GROUP BY event_id, seat
    HAVING count(*) > 1
)
SELECT p.event_id,
       p.seat,
       p.idempotency_key,
       p.fan,
       p.amount_cents,
       p.created_at,
       d.confirmed_payments,
       t.fan AS ticket_fan
FROM doubled d
JOIN payments p ON p.event_id = d.event_id AND p.seat = d.seat
               AND p.status = 'confirmed'
LEFT JOIN tickets t ON t.event_id = p.event_id AND t.seat = p.seat
ORDER BY p.event_id, p.seat, p.created_at, p.idempotency_key;
