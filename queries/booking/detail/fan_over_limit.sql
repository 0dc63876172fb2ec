-- detail/fan_over_limit.sql: fans holding more seats in an event than the
-- per-fan limit allows.
--
-- The rows behind the fan_over_limit invariant of reconciliation.sql: per
-- (event, fan), sold seats plus unexpired held seats (holder = fan) above
-- the limit. Typical cause: write skew, two claims that each counted the
-- fan's seats before the other committed.
--
-- Columns:
--   event_id     integer
--   fan          text
--   seats_total  bigint   seats_sold + seats_held (> $2)
--   seats_sold   bigint
--   seats_held   bigint   unexpired holds
--   seats        text     the seats, e.g. "A4 sold, A5 held", in seat order
--
-- Parameters:
--   $1  int[]    the event_ids the invariant reports as violated, e.g.
--                '{4,17}' (seatwatch passes them: one array per label of
--                the entry, then its params); only those events are read.
--   $2  integer  per-fan seat limit per event (same value as for
--                reconciliation.sql, e.g. 4)
--
-- Order: event_id, seats_total descending, fan.
--
-- Indexes: seats_holder_idx (event_id, holder) INCLUDE (status,
-- hold_expires_at) WHERE holder IS NOT NULL: an index-only scan in group
-- order for the counts, then one index lookup per offending fan for the
-- seat list.

WITH over_limit AS (
    SELECT event_id,
           holder AS fan,
           count(*) AS seats_total,
           count(*) FILTER (WHERE status = 'sold') AS seats_sold,
           count(*) FILTER (WHERE status = 'held') AS seats_held
    FROM seats
    WHERE event_id = ANY ($1::int[])
      AND holder IS NOT NULL
      AND (status = 'sold' OR (status = 'held' AND hold_expires_at > now()))
    GROUP BY event_id, holder
    HAVING count(*) > $2
)
SELECT o.event_id,
       o.fan,
       o.seats_total,
       o.seats_sold,
       o.seats_held,
       (SELECT string_agg(s.seat || ' ' || s.status, ', ' ORDER BY s.seat)
          FROM seats s
         WHERE s.event_id = o.event_id
           AND s.holder = o.fan
           AND (s.status = 'sold' OR (s.status = 'held' AND s.hold_expires_at > now()))
       ) AS seats
FROM over_limit o
ORDER BY o.event_id, o.seats_total DESC, o.fan;
