-- bench/changes/seed.sql: the data set of the incremental-mode benchmark: a
-- ticketing database that is mostly history.
--
-- psql variables:
--   events         number of events, 1,000 seats each ('S1' .. 'S1000')
--   onsale         the last `onsale` events are on sale; the others are past
--   inject_events  int[] literal: events that also get 60 free seats 'X1' ..
--                  'X60', touched only by the injected violations
--   first          the first event to fill (1; dataset.reset_onsale fills
--                  the on-sale events again with first = events - onsale + 1,
--                  after deleting their rows)
--
-- Per seat, bucket b = (37 n + 11 event) mod 100:
--   past events     b <  95   sold: a ticket and a confirmed payment, same fan
--                   b 95..96  free again after a refund (payment 'refunded')
--                   b >= 97   free (never sold)
--   on-sale events  b <  20   sold, as above
--                   b 20..24  held, expiring over the next 2 hours (the
--                             expiry schedule of incremental mode)
--                   b 25..29  held, expired 1 s .. 1 h ago
--                   b >= 30   free
-- Held seats with an even seat number also have a 'started' payment. Fans
-- buy in pairs (seats 2k-1 and 2k share one fan), well under the limit of 4.
--
-- Run as a superuser on the tables of queries/booking/schema.sql, empty and
-- without their keys and indexes (bench/changes/seed.py drops and re-adds
-- them around this script). One set-based statement per table; every row is
-- WAL-logged (logical decoding needs the tables logged, so no UNLOGGED).

\set ON_ERROR_STOP 1
SET synchronous_commit = off;

INSERT INTO seats (event_id, seat, status, holder, hold_expires_at, version)
SELECT e, 'S' || n, st.status,
       CASE WHEN st.status <> 'free' THEN 'fan-' || e || '-' || ((n + 1) / 2) END,
       CASE WHEN st.status = 'held' AND b < 25
                THEN now() + make_interval(secs => 60 + (n * 7919 + e * 104729) % 7200)
            WHEN st.status = 'held'
                THEN now() - make_interval(secs => 1 + (n * 7919 + e) % 3600)
       END,
       CASE WHEN st.status <> 'free' THEN 1 ELSE 0 END
FROM generate_series(:first, :events) AS e,
     -- LATERAL on e: event by event, so each event's seats sit together on
     -- disk as in a real database (an event's seats are created at once);
     -- tickets and payments below follow that order.
     LATERAL generate_series(1 + 0 * e, 1000) AS n,
     LATERAL (SELECT (37 * n + 11 * e) % 100 AS b, e > :events - :onsale AS onsale) AS x,
     LATERAL (SELECT CASE
                       WHEN NOT onsale AND b < 95 THEN 'sold'
                       WHEN NOT onsale THEN 'free'
                       WHEN b < 20 THEN 'sold'
                       WHEN b < 30 THEN 'held'
                       ELSE 'free'
                     END AS status) AS st;

INSERT INTO seats (event_id, seat)
SELECT e, 'X' || n
FROM unnest(:'inject_events'::int[]) AS e, generate_series(1, 60) AS n
WHERE e >= :first;

INSERT INTO tickets (event_id, seat, fan)
SELECT event_id, seat, holder FROM seats WHERE status = 'sold' AND event_id >= :first;

INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status, created_at)
SELECT 'pay-' || event_id || '-' || seat, event_id, seat, holder, 5000, 'confirmed',
       now() - make_interval(days => 1 + (event_id % 300))
FROM seats WHERE status = 'sold' AND event_id >= :first;

-- Refunded sales of past events: the seat is free again, the payment stays.
INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status, created_at)
SELECT 'pay-' || e || '-S' || n, e, 'S' || n, 'fan-' || e || '-' || ((n + 1) / 2), 5000,
       'refunded', now() - make_interval(days => 1 + (e % 300))
FROM generate_series(:first, :events - :onsale) AS e,
     LATERAL generate_series(1 + 0 * e, 1000) AS n
WHERE (37 * n + 11 * e) % 100 BETWEEN 95 AND 96;

INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status, created_at)
SELECT 'pay-' || event_id || '-' || seat, event_id, seat, holder, 5000, 'started',
       now() - interval '5 minutes'
FROM seats
WHERE status = 'held' AND seat LIKE 'S%' AND substr(seat, 2)::int % 2 = 0 AND event_id >= :first;
