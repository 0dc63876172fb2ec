-- detail/ticket_without_confirmed_payment.sql: tickets with no confirmed
-- payment for the same event, seat and fan.
--
-- The offending rows behind the ticket_without_confirmed_payment invariant
-- of reconciliation.sql: a ticket given away, or a confirm that sold the
-- seat and wrote the ticket but never marked the payment confirmed.
--
-- Columns:
--   event_id  integer
--   seat      text
--   fan       text     the ticket's fan
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
-- Indexes: tickets_event_id_seat_key (ordered), payments_event_seat_idx for
-- the anti-join and the payments column.

SELECT t.event_id,
       t.seat,
       t.fan,
       (SELECT string_agg(p.idempotency_key || ' ' || p.status || ' ' || p.fan, ', '
                          ORDER BY p.created_at, p.idempotency_key)
          FROM payments p
         WHERE p.event_id = t.event_id AND p.seat = t.seat) AS payments
FROM tickets t
WHERE t.event_id = ANY ($1::int[])
  AND NOT EXISTS (SELECT 1 FROM payments p
                   WHERE p.event_id = t.event_id AND p.seat = t.seat
                     AND p.fan = t.fan AND p.status = 'confirmed')
ORDER BY t.event_id, t.seat;
