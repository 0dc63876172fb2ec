-- detail/confirmed_payment_without_ticket.sql: confirmed payments with no
-- ticket for the same event, seat and fan.
--
-- The offending rows behind the confirmed_payment_without_ticket invariant
-- of reconciliation.sql. Typical cause: the charge was confirmed but the
-- confirm CAS returned 0 rows (the hold had lapsed) and nobody refunded it.
-- Each row is money taken without a ticket: refund or issue a seat.
--
-- Columns:
--   event_id         integer
--   seat             text
--   fan              text         the payment's fan
--   idempotency_key  text
--   amount_cents     integer
--   created_at       timestamptz
--   ticket_fan       text         fan on the seat's ticket, if another fan
--                                 has one; NULL if the seat has no ticket
--   seat_status      text
--   seat_holder      text
--
-- Parameters:
--   $1  int[]    the event_ids the invariant reports as violated, e.g.
--                '{4,17}' (seatwatch passes them: one array per label of
--                the entry, then its params); only those events are read.
--
-- Order: event_id, seat, created_at.
--
-- Indexes: tickets_event_id_seat_key and seats_pkey, looked up per
-- confirmed payment.

SELECT p.event_id,
       p.seat,
       p.fan,
       p.idempotency_key,
       p.amount_cents,
       p.created_at,
       t.fan AS ticket_fan,
       s.status AS seat_status,
       s.holder AS seat_holder
FROM payments p
LEFT JOIN tickets t ON t.event_id = p.event_id AND t.seat = p.seat
LEFT JOIN seats s ON s.event_id = p.event_id AND s.seat = p.seat
WHERE p.event_id = ANY ($1::int[])
  AND p.status = 'confirmed'
  AND (t.fan IS NULL OR t.fan <> p.fan)
ORDER BY p.event_id, p.seat, p.created_at, p.idempotency_key;
