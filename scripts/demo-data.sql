-- demo-data.sql: deterministic demo data for the booking and capacity packs.
--
-- Run with psql after queries/booking/schema.sql, e.g.
--   psql -v ON_ERROR_STOP=1 -f queries/booking/schema.sql -f scripts/demo-data.sql
-- It empties and refills the booking tables (seats, tickets, payments),
-- creates the capacity tables if needed (queries/capacity/schema.sql) and
-- refills them. Running it again gives the same data, with hold expiry times
-- relative to the time of loading.
--
-- Booking: 20 events x 200 seats (rows A..J, seats 1..20). Every seat gets a
-- class from k = (7 * n + 13 * event_id) % 100, n = 1..200 being the seat's
-- position; since 7 and 100 are coprime each event has exactly:
--   100 sold              ticket + confirmed payment, same fan as the holder
--    16 held, unexpired   expires 30..89 minutes after loading; 12 of them
--                         with a payment 'started' (checkout in progress)
--    14 held, expired     expired 1..120 minutes before loading; 6 of them
--                         with a payment 'started' (a lapsed checkout)
--    70 free              6 of them with a 'refunded' payment (paid after
--                         the hold lapsed, refunded) and 4 with a 'failed' one
-- Fans buy blocks of up to 3 adjacent seats, so no fan has more than 3 seats
-- per event. Seats A1, A2 and A3 of event 2 are always free (so event 2 has
-- 97 sold and 73 free): scripts/demo-load uses them for its lock chains. The
-- injections below change the counts of the events they touch.
--
-- Then a few injected violations, all in odd events (scripts/demo-load only
-- touches even events, so they stay exactly as listed):
--
--   event  invariant                          violations
--       3  sold_seat_without_ticket           2
--       5  ticket_without_sold_seat           1
--       7  confirmed_payment_without_ticket   1
--       9  double_confirmed_payment           1
--      11  fan_over_limit                     1   (with the limit at 4)
--      13  ticket_without_sold_seat           1
--      15  ticket_without_confirmed_payment   1
--
-- Capacity: five workshops; "Intro to SQL" is overbooked by 1 and "Query
-- plans" has a seats_taken counter that drifted by 1 from its registrations.

\set ON_ERROR_STOP on
SET client_min_messages = warning;

BEGIN;

TRUNCATE payments, tickets, seats;

CREATE TEMP TABLE demo_seat ON COMMIT DROP AS
SELECT e AS event_id,
       n,
       chr(64 + (n - 1) / 20 + 1) || ((n - 1) % 20 + 1) AS seat,
       -- fans buy blocks of 3 adjacent seats; blocks map to distinct fans
       'fan-' || lpad(((e * 37 + (n - 1) / 3) % 1500 + 1)::text, 4, '0') AS fan,
       CASE WHEN e = 2 AND n <= 3 THEN 99          -- lock-chain seats: free
            ELSE (7 * n + 13 * e) % 100 END AS k
FROM generate_series(1, 20) AS e, generate_series(1, 200) AS n;

INSERT INTO seats (event_id, seat, status, holder, hold_expires_at, version)
SELECT event_id, seat,
       CASE WHEN k < 50 THEN 'sold' WHEN k < 65 THEN 'held' ELSE 'free' END,
       CASE WHEN k < 65 THEN fan END,
       CASE WHEN k >= 50 AND k < 58 THEN now() + make_interval(mins => 30 + n % 60)
            WHEN k >= 58 AND k < 65 THEN now() - make_interval(mins => 1 + n % 120)
       END,
       CASE WHEN k < 50 THEN 2          -- claimed, then confirmed
            WHEN k < 65 THEN 1          -- claimed
            WHEN k < 70 THEN 2          -- claimed, later freed by cleanup
            ELSE 0 END
FROM demo_seat
ORDER BY event_id, n;

-- Correct confirms: ticket and confirmed payment for every sold seat.
INSERT INTO tickets (event_id, seat, fan)
SELECT event_id, seat, fan FROM demo_seat WHERE k < 50 ORDER BY event_id, n;

INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status, created_at)
SELECT 'pay-' || event_id || '-' || seat, event_id, seat, fan,
       4000 + 500 * ((n - 1) / 20),           -- front rows cost more
       CASE WHEN k < 50 THEN 'confirmed'
            WHEN k < 65 THEN 'started'
            WHEN k < 68 THEN 'refunded'
            ELSE 'failed' END,
       now() - make_interval(mins => 5 + (n * 11 + event_id) % 600)
FROM demo_seat
WHERE k < 50                        -- sold
   OR (k >= 50 AND k < 56)          -- unexpired hold, checkout in progress
   OR (k >= 58 AND k < 61)          -- expired hold, payment lapsed
   OR (k >= 65 AND k < 70)          -- freed seats: refunded or failed checkout
ORDER BY event_id, n;

-- Injected violations -------------------------------------------------------

-- Event 3: two complimentary seats marked sold from an admin tool that does
-- not issue tickets (and takes no payment).
--   sold_seat_without_ticket = 2
UPDATE seats SET status = 'sold', holder = 'box-office', version = version + 1
WHERE event_id = 3 AND seat IN ('A5', 'A6') AND status = 'free';

-- Event 5: a charge confirmed after the hold had lapsed; the confirm ignored
-- the 0 rows of its seat CAS and wrote the ticket anyway. Seat A4 is free.
--   ticket_without_sold_seat = 1
INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status, created_at)
VALUES ('pay-5-A4', 5, 'A4', 'fan-late', 4000, 'confirmed', now() - interval '20 minutes');
INSERT INTO tickets (event_id, seat, fan) VALUES (5, 'A4', 'fan-late');

-- Event 7: the provider's webhook confirmed a checkout whose hold had
-- expired; nobody refunded it and no ticket exists (seat B4 is still an
-- expired hold).
--   confirmed_payment_without_ticket = 1
UPDATE payments SET status = 'confirmed'
WHERE idempotency_key = 'pay-7-B4' AND status = 'started';

-- Event 9: a double tap that sent two different idempotency keys; both
-- charges were confirmed for the same seat and fan.
--   double_confirmed_payment = 1
INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status, created_at)
SELECT 'pay-9-A1-retry', event_id, seat, fan, amount_cents, 'confirmed', created_at + interval '2 seconds'
FROM payments WHERE idempotency_key = 'pay-9-A1' AND status = 'confirmed';

-- Event 11: write skew on the per-fan limit: five correct purchases by the
-- same fan (each checked "fewer than 4" against a stale count).
--   fan_over_limit = 1 (with $1 = 4)
UPDATE seats SET status = 'sold', holder = 'fan-whale', version = version + 2
WHERE event_id = 11 AND seat IN ('A4', 'A5', 'A6', 'A7', 'A8') AND status = 'free';
INSERT INTO tickets (event_id, seat, fan)
SELECT event_id, seat, holder FROM seats WHERE event_id = 11 AND holder = 'fan-whale';
INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status, created_at)
SELECT 'pay-11-' || seat, event_id, seat, holder, 4000, 'confirmed', now() - interval '1 hour'
FROM seats WHERE event_id = 11 AND holder = 'fan-whale';

-- Event 13: an admin edit moved sold seat A5 to another holder; ticket and
-- payment still name the fan who bought it.
--   ticket_without_sold_seat = 1
UPDATE seats SET holder = 'fan-mixup', version = version + 1
WHERE event_id = 13 AND seat = 'A5' AND status = 'sold';

-- Event 15: the confirm sold the seat and wrote the ticket, but the payment
-- was never marked confirmed.
--   ticket_without_confirmed_payment = 1
UPDATE payments SET status = 'started'
WHERE idempotency_key = 'pay-15-A1' AND status = 'confirmed';

COMMIT;

-- Capacity pack ---------------------------------------------------------------

\ir ../queries/capacity/schema.sql

BEGIN;

TRUNCATE registration, workshop RESTART IDENTITY;

INSERT INTO workshop (title, capacity, seats_taken) VALUES
    ('Intro to SQL',        10, 11),  -- overbooked: 11 registrations, 10 places
    ('Query plans',         20, 13),  -- counter drift: 12 registrations
    ('Indexing in depth',   15, 15),  -- full, consistent
    ('Replication basics',  25,  8),
    ('Locks and MVCC',      30,  0);

INSERT INTO registration (workshop_id, email)
SELECT w.id, 'attendee' || i || '.w' || w.id || '@example.org'
FROM (VALUES ('Intro to SQL', 11), ('Query plans', 12), ('Indexing in depth', 15),
             ('Replication basics', 8)) AS r(title, registrations)
JOIN workshop w ON w.title = r.title
CROSS JOIN generate_series(1, r.registrations) AS i
ORDER BY w.id, i;

COMMIT;

ANALYZE seats, tickets, payments, workshop, registration;
