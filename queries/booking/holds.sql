-- holds.sql: seat holds and checkouts at a glance. One row.
--
-- Columns:
--   holds_active                  bigint  seats held with hold_expires_at > now()
--   holds_expired                 bigint  seats still 'held' whose hold has
--                                         expired (hold_expires_at <= now(),
--                                         or NULL: a hold without expiry never
--                                         becomes valid again)
--   holds_expired_oldest_seconds  double precision
--                                         seconds since the oldest expired
--                                         hold expired; 0 when there is none.
--                                         Expired holds are harmless for
--                                         correctness (claims treat them as
--                                         free) but a growing value means the
--                                         cleanup job is not running.
--   payments_lapsed               bigint  payments still 'started' whose seat
--                                         is neither held by the payment's
--                                         fan with an unexpired hold nor sold
--                                         to that fan: the checkout can no
--                                         longer be confirmed and should be
--                                         failed or refunded
--
-- Parameters: none.
--
-- Indexes:
--   seats_held_expiry_idx (hold_expires_at) INCLUDE (event_id, seat, holder)
--       WHERE status = 'held'
--       The hold counts are an index-only scan of this partial index, so
--       they cost in proportion to the number of held seats, not the size of
--       seats. Keep the WHERE clauses as status = 'held' so the planner can
--       match the index predicate. The unexpired holds that keep a started
--       payment valid come from it too, index-only.
--   payments_started_idx (event_id, seat, fan) WHERE status = 'started'
--       The open checkouts, index-only, without reading confirmed payments.
--   seats_pkey
--       One lookup per started payment that has no unexpired hold, to see
--       whether its seat was sold to the same fan (a confirm in flight).
-- Cost is in proportion to held seats plus started payments.

WITH held AS (
    SELECT count(*) FILTER (WHERE hold_expires_at > now()) AS holds_active,
           count(*) FILTER (WHERE hold_expires_at <= now()
                               OR hold_expires_at IS NULL) AS holds_expired,
           min(hold_expires_at) FILTER (WHERE hold_expires_at <= now()) AS oldest_expiry
    FROM seats
    WHERE status = 'held'
),
-- Started payments whose seat is not held by their fan with a live hold.
-- MATERIALIZED keeps the cheap test (against the few unexpired holds) first,
-- so the per-row seat lookup below only runs for what is left.
not_held AS MATERIALIZED (
    SELECT p.event_id, p.seat, p.fan
    FROM payments p
    WHERE p.status = 'started'
      AND NOT EXISTS (SELECT 1
                        FROM seats s
                       WHERE s.status = 'held'
                         AND s.hold_expires_at > now()
                         AND s.event_id = p.event_id
                         AND s.seat = p.seat
                         AND s.holder = p.fan)
),
lapsed AS (
    SELECT count(*) AS payments_lapsed
    FROM not_held n
    WHERE (SELECT s.status = 'sold' AND s.holder = n.fan
             FROM seats s
            WHERE s.event_id = n.event_id AND s.seat = n.seat) IS NOT TRUE
)
SELECT held.holds_active,
       held.holds_expired,
       coalesce(extract(epoch FROM now() - held.oldest_expiry), 0)::double precision
           AS holds_expired_oldest_seconds,
       lapsed.payments_lapsed
FROM held, lapsed;
