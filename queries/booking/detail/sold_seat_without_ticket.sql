-- detail/sold_seat_without_ticket.sql: sold seats that have no ticket.
--
-- The offending rows behind the sold_seat_without_ticket invariant of
-- reconciliation.sql: seats with status 'sold' and no ticket for
-- (event_id, seat). Typical cause: a sale written by a path that skips the
-- confirm statement (an admin tool, a backfill), or a confirm split into
-- two statements whose second one failed.
--
-- Columns:
--   event_id  integer
--   seat      text
--   status    text     always 'sold'
--   holder    text     who the seat was sold to
--   version   integer
--   payments  text     the seat's payments as "key status fan", oldest
--                      first; NULL if there are none
--
-- Parameters:
--   $1  int[]    the event_ids the invariant reports as violated, e.g.
--                '{4,17}' (seatwatch passes them: one array per label of
--                the entry, then its params); only those events are read.
--
-- Order: event_id, seat.
--
-- Indexes: seats_pkey and tickets_event_id_seat_key (an ordered anti-join,
-- so a LIMIT stops early); payments_event_seat_idx for the payments column.

SELECT s.event_id,
       s.seat,
       s.status,
       s.holder,
       s.version,
       (SELECT string_agg(p.idempotency_key || ' ' || p.status || ' ' || p.fan, ', '
                          ORDER BY p.created_at, p.idempotency_key)
          FROM payments p
         WHERE p.event_id = s.event_id AND p.seat = s.seat) AS payments
FROM seats s
WHERE s.event_id = ANY ($1::int[])
  AND s.status = 'sold'
  AND NOT EXISTS (SELECT 1 FROM tickets t
                   WHERE t.event_id = s.event_id AND t.seat = s.seat)
ORDER BY s.event_id, s.seat;
