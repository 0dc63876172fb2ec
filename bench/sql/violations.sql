-- violations.sql: the injected violations, in events 1 to 5 (every size has
-- at least 100 events). What each one trips:
--
--   event 1  the ticket of one sold seat deleted
--            -> sold_seat_without_ticket 1, confirmed_payment_without_ticket 1
--   event 2  a ticket issued for a free seat (no payment)
--            -> ticket_without_sold_seat 1, ticket_without_confirmed_payment 1
--   event 3  a second confirmed payment (new idempotency key) for a sold seat
--            -> double_confirmed_payment 1
--   event 4  six sold seats (with their tickets and payments) moved to one fan
--            -> fan_over_limit 1 (limit 4)
--   event 5  one sold seat's confirmed payment marked 'refunded'
--            -> ticket_without_confirmed_payment 1
--
-- Expected: 7 invariant rows in 5 events, every one of the six invariants
-- violated at least once.

\set ON_ERROR_STOP 1
BEGIN;

DELETE FROM tickets
WHERE (event_id, seat) = (SELECT event_id, seat FROM seats
                           WHERE event_id = 1 AND status = 'sold' ORDER BY seat LIMIT 1);

INSERT INTO tickets (event_id, seat, fan)
SELECT event_id, seat, 'fan-ghost' FROM seats
WHERE event_id = 2 AND status = 'free' ORDER BY seat LIMIT 1;

INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status)
SELECT 'pay-dup-' || event_id || '-' || seat, event_id, seat, holder, 5000, 'confirmed'
FROM seats WHERE event_id = 3 AND status = 'sold' ORDER BY seat LIMIT 1;

CREATE TEMP TABLE greedy ON COMMIT DROP AS
SELECT event_id, seat FROM seats WHERE event_id = 4 AND status = 'sold' ORDER BY seat LIMIT 6;
UPDATE seats s SET holder = 'fan-greedy' FROM greedy g
WHERE s.event_id = g.event_id AND s.seat = g.seat;
UPDATE tickets t SET fan = 'fan-greedy' FROM greedy g
WHERE t.event_id = g.event_id AND t.seat = g.seat;
UPDATE payments p SET fan = 'fan-greedy' FROM greedy g
WHERE p.event_id = g.event_id AND p.seat = g.seat;

UPDATE payments SET status = 'refunded'
WHERE idempotency_key = (SELECT 'pay-' || event_id || '-' || seat FROM seats
                          WHERE event_id = 5 AND status = 'sold' ORDER BY seat LIMIT 1);

COMMIT;
