-- detail/ticket_without_sold_seat.sql: tickets whose seat is not sold to the
-- ticket's fan.
--
-- The offending rows behind the ticket_without_sold_seat invariant of
-- reconciliation.sql: tickets whose seat row does not exist, is not 'sold',
-- or is sold to a different holder (holder IS DISTINCT FROM fan).
--
-- Columns:
--   event_id     integer
--   seat         text
--   fan          text     the ticket's fan
--   seat_status  text     NULL when the seat row does not exist
--   seat_holder  text
--   problem      text     'seat missing', 'seat not sold' or
--                         'sold to another holder'
--
-- Parameters:
--   $1  int[]    the event_ids the invariant reports as violated, e.g.
--                '{4,17}' (seatwatch passes them: one array per label of
--                the entry, then its params); only those events are read.
--
-- Order: event_id, seat.
--
-- Indexes: tickets_event_id_seat_key and seats_pkey (ordered join).

SELECT t.event_id,
       t.seat,
       t.fan,
       s.status AS seat_status,
       s.holder AS seat_holder,
       CASE WHEN s.seat IS NULL       THEN 'seat missing'
            WHEN s.status <> 'sold'   THEN 'seat not sold'
            ELSE 'sold to another holder'
       END AS problem
FROM tickets t
LEFT JOIN seats s ON s.event_id = t.event_id AND s.seat = t.seat
WHERE t.event_id = ANY ($1::int[])
  AND (s.seat IS NULL
       OR s.status <> 'sold'
       OR s.holder IS DISTINCT FROM t.fan)
ORDER BY t.event_id, t.seat;
