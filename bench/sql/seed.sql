-- seed.sql: the booking data set the benchmarks run on.
--
-- psql variables:
--   events   number of events; every event has 1,000 seats ('S1' .. 'S1000')
--
-- Per event (exactly, by seat number n, bucket b = (37 n + 11 event) mod 100):
--   b <  55   sold: holder fan, a ticket for that fan, a confirmed payment
--   b 55..59  held, unexpired (expires in a day)
--   b 60..64  held, expired 1 s .. 1 h ago (the cleanup backlog)
--   b >= 65   free
-- Held seats with an even seat number also have a 'started' payment.
-- Fans buy in pairs: seats 2k-1 and 2k of an event share one fan, so no fan
-- is near the per-fan limit of 4.
--
-- Run as a superuser on the tables of queries/booking/schema.sql, empty.
-- Set-based (generate_series); the foreign key triggers are skipped while
-- loading (session_replication_role = replica): every payment's seat exists
-- by construction.

\set ON_ERROR_STOP 1
SET session_replication_role = replica;
SET synchronous_commit = off;

INSERT INTO seats (event_id, seat, status, holder, hold_expires_at, version)
SELECT e, 'S' || n,
       CASE WHEN b < 55 THEN 'sold' WHEN b < 65 THEN 'held' ELSE 'free' END,
       CASE WHEN b < 65 THEN 'fan-' || e || '-' || ((n + 1) / 2) END,
       CASE WHEN b BETWEEN 55 AND 59 THEN now() + interval '1 day'
            WHEN b BETWEEN 60 AND 64 THEN now() - make_interval(secs => 1 + (n * 7919 + e) % 3600)
       END,
       CASE WHEN b < 65 THEN 1 ELSE 0 END
FROM generate_series(1, :events) AS e,
     generate_series(1, 1000) AS n,
     LATERAL (SELECT (37 * n + 11 * e) % 100 AS b) AS bucket;

INSERT INTO tickets (event_id, seat, fan)
SELECT event_id, seat, holder FROM seats WHERE status = 'sold';

INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status, created_at)
SELECT 'pay-' || event_id || '-' || seat, event_id, seat, holder, 5000, 'confirmed',
       now() - interval '2 days'
FROM seats WHERE status = 'sold';

INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status, created_at)
SELECT 'pay-' || event_id || '-' || seat, event_id, seat, holder, 5000, 'started',
       now() - interval '5 minutes'
FROM seats
WHERE status = 'held' AND substr(seat, 2)::int % 2 = 0;

RESET session_replication_role;
