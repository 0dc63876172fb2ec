-- cleanup_seed.sql: the data set of the cleanup benchmark.
--
-- psql variables:
--   events   number of events, 1,000 seats each
--
-- 80% of the seats are held with a hold that expired 1 s .. 1 h ago (the
-- backlog the cleanup frees: 1M holds at 1,250 events), the rest are free.
-- No tickets or payments: the claims and the cleanup only touch seats.

\set ON_ERROR_STOP 1
SET synchronous_commit = off;

INSERT INTO seats (event_id, seat, status, holder, hold_expires_at, version)
SELECT e, 'S' || n,
       CASE WHEN b < 80 THEN 'held' ELSE 'free' END,
       CASE WHEN b < 80 THEN 'fan-' || e || '-' || ((n + 1) / 2) END,
       CASE WHEN b < 80 THEN now() - make_interval(secs => 1 + (n * 7919 + e) % 3600) END,
       CASE WHEN b < 80 THEN 1 ELSE 0 END
FROM generate_series(1, :events) AS e,
     generate_series(1, 1000) AS n,
     LATERAL (SELECT (37 * n + 11 * e) % 100 AS b) AS bucket;
