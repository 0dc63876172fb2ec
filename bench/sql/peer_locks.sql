-- peer_locks.sql: lock waits as a hand-written exporter query reads them.
-- Given to postgres_exporter and sql_exporter so they compute what
-- seatwatch's lock check reports as seatwatch_lock_waiting_sessions and
-- seatwatch_lock_blocking_roots: client sessions of this database waiting on
-- a heavyweight lock, and the distinct blockers that are not waiting
-- themselves (the roots).
WITH waiting AS (
    SELECT pid, pg_blocking_pids(pid) AS blockers
    FROM pg_stat_activity
    WHERE wait_event_type = 'Lock'
      AND backend_type = 'client backend'
      AND datname = current_database()
)
SELECT (SELECT count(*) FROM waiting)::float8 AS waiting_sessions,
       (SELECT count(DISTINCT b)
          FROM waiting AS w CROSS JOIN LATERAL unnest(w.blockers) AS b
         WHERE b NOT IN (SELECT pid FROM waiting))::float8 AS blocking_roots
