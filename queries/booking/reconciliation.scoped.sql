-- reconciliation.scoped.sql: reconciliation.sql for some events only.
--
-- The same booking invariants and per-event inventory as reconciliation.sql,
-- restricted to the events listed in $1: for each of those events it returns
-- exactly the rows reconciliation.sql returns for it on the same snapshot
-- (same columns, same row kinds, same values, next_expiry_unix included),
-- and no row of any other event. An event with no rows in the full query
-- (no seats and nothing out of balance) has none here either. An incremental
-- check runs it for the events whose rows may have changed since its last
-- pass and splices the result into that pass's rows; tests compare the two
-- queries row for row (tests/integration/scoped_reconciliation_test.cc).
--
-- Keep the two files in step: the body is reconciliation.sql with
-- "event_id = ANY ($1::int[])" added to every scan and the per-fan limit
-- moved from $1 to $2. Rows, columns, invariants, inventory kinds and how
-- the pass stays cheap: see the header of reconciliation.sql.
--
-- Parameters:
--   $1  text     the events, as an array literal: '{1,2,3}' or
--                '{"1","2","3"}' (what db/array_literal makes), cast to
--                int[] here. Duplicates are harmless; '{}' returns no rows.
--   $2  integer  per-fan seat limit per event (e.g. 4), reconciliation.sql's
--                $1
--
-- Cost: every scan is an index scan restricted to the listed events, so a
-- pass costs about (listed events / all events) of a full pass, plus a
-- fixed part (planning: a few milliseconds):
--   seats     seats_pkey (event_id, seat)        inventory, fingerprint, next expiry
--             seats_holder_idx (event_id, holder) fan_over_limit (index-only)
--   tickets   tickets_event_id_seat_key (event_id, seat)
--   payments  payments_event_seat_idx (event_id, seat)
-- plus the same per-event lookups as reconciliation.sql for an event out of
-- balance. From about a fifth of all events on, the planner picks
-- sequential scans of seats, tickets and payments on its own, which then
-- cost about what the full pass does. Measured at 1M seats (1,000 events of
-- 1,000 seats, bench/sql/seed.sql) on a busy 2-core machine, planning
-- included: 10 events 23-38 ms, 100 events 310-350 ms, 1,000 events
-- (sequential scans) 2.1-2.6 s, against 2.0-2.2 s for reconciliation.sql.
--
-- Relies on the foreign key payments (event_id, seat) -> seats: a payment
-- always has a seat row.

WITH seat_stats AS MATERIALIZED (
    SELECT event_id,
           count(*) FILTER (WHERE status = 'free') AS seats_free,
           count(*) FILTER (WHERE status = 'held' AND hold_expires_at > now()) AS seats_held,
           count(*) FILTER (WHERE status = 'held' AND (hold_expires_at <= now()
                                                       OR hold_expires_at IS NULL)) AS seats_held_expired,
           count(*) FILTER (WHERE status = 'sold') AS seats_sold,
           sum(hashtextextended(seat, hashtextextended(holder, 0)))
               FILTER (WHERE status = 'sold') AS fingerprint,
           extract(epoch FROM min(hold_expires_at)
                   FILTER (WHERE status = 'held' AND hold_expires_at > now()))::float8
               AS next_expiry_unix
    FROM seats
    WHERE event_id = ANY ($1::int[])
    GROUP BY event_id
),
ticket_stats AS MATERIALIZED (
    SELECT event_id,
           count(*) AS tickets,
           sum(hashtextextended(seat, hashtextextended(fan, 0))) AS fingerprint
    FROM tickets
    WHERE event_id = ANY ($1::int[])
    GROUP BY event_id
),
payment_stats AS MATERIALIZED (
    SELECT event_id,
           count(*) FILTER (WHERE status = 'started') AS payments_started,
           count(*) FILTER (WHERE status = 'confirmed') AS payments_confirmed,
           sum(hashtextextended(seat, hashtextextended(fan, 0)))
               FILTER (WHERE status = 'confirmed') AS fingerprint
    FROM payments
    WHERE event_id = ANY ($1::int[])
      AND status IN ('started', 'confirmed')
    GROUP BY event_id
),
-- One row per event seen in any of the three tables.
per_event AS MATERIALIZED (
    SELECT event_id,
           bool_or(has_seats) AS has_seats,
           sum(seats_free)::bigint AS seats_free,
           sum(seats_held)::bigint AS seats_held,
           sum(seats_held_expired)::bigint AS seats_held_expired,
           sum(seats_sold)::bigint AS seats_sold,
           sum(tickets)::bigint AS tickets,
           sum(payments_started)::bigint AS payments_started,
           sum(payments_confirmed)::bigint AS payments_confirmed,
           min(next_expiry_unix) AS next_expiry_unix,
           NOT (sum(seats_sold) = sum(tickets)
                AND sum(tickets) = sum(payments_confirmed)
                AND sum(fp_sold) = sum(fp_tickets)
                AND sum(fp_tickets) = sum(fp_confirmed)) AS out_of_balance
    FROM (
        SELECT event_id, true AS has_seats,
               seats_free, seats_held, seats_held_expired, seats_sold,
               0 AS tickets, 0 AS payments_started, 0 AS payments_confirmed,
               coalesce(fingerprint, 0) AS fp_sold, 0 AS fp_tickets, 0 AS fp_confirmed,
               next_expiry_unix
        FROM seat_stats
        UNION ALL
        SELECT event_id, false, 0, 0, 0, 0, tickets, 0, 0,
               0, fingerprint, 0, NULL
        FROM ticket_stats
        UNION ALL
        SELECT event_id, false, 0, 0, 0, 0, 0, payments_started, payments_confirmed,
               0, 0, coalesce(fingerprint, 0), NULL
        FROM payment_stats
    ) AS sides
    GROUP BY event_id
),
-- Exact counts, only for events that are out of balance. Each subquery is
-- the per-event form of the matching detail/<invariant>.sql.
balance_violations AS (
    SELECT e.event_id, x.invariant, x.violations
    FROM unnest(ARRAY(SELECT event_id FROM per_event WHERE out_of_balance)) AS e(event_id)
    CROSS JOIN LATERAL (VALUES
        ('sold_seat_without_ticket',
         (SELECT count(*)
            FROM seats s
           WHERE s.event_id = e.event_id
             AND s.status = 'sold'
             AND NOT EXISTS (SELECT 1 FROM tickets t
                              WHERE t.event_id = s.event_id AND t.seat = s.seat))),
        ('ticket_without_sold_seat',
         (SELECT count(*)
            FROM tickets t
           WHERE t.event_id = e.event_id
             AND NOT EXISTS (SELECT 1 FROM seats s
                              WHERE s.event_id = t.event_id AND s.seat = t.seat
                                AND s.status = 'sold' AND s.holder = t.fan))),
        ('confirmed_payment_without_ticket',
         (SELECT count(*)
            FROM payments p
           WHERE p.event_id = e.event_id
             AND p.status = 'confirmed'
             AND NOT EXISTS (SELECT 1 FROM tickets t
                              WHERE t.event_id = p.event_id AND t.seat = p.seat
                                AND t.fan = p.fan))),
        ('ticket_without_confirmed_payment',
         (SELECT count(*)
            FROM tickets t
           WHERE t.event_id = e.event_id
             AND NOT EXISTS (SELECT 1 FROM payments p
                              WHERE p.event_id = t.event_id AND p.seat = t.seat
                                AND p.fan = t.fan AND p.status = 'confirmed'))),
        ('double_confirmed_payment',
         (SELECT coalesce(sum(n - 1), 0)::bigint
            FROM (SELECT count(*) AS n
                    FROM payments p
                   WHERE p.event_id = e.event_id
                     AND p.status = 'confirmed'
                   GROUP BY p.seat
                  HAVING count(*) > 1) AS extra))
    ) AS x(invariant, violations)
    WHERE x.violations > 0
),
fan_violations AS (
    SELECT event_id, 'fan_over_limit' AS invariant, count(*) AS violations
    FROM (SELECT event_id
            FROM seats
           WHERE event_id = ANY ($1::int[])
             AND holder IS NOT NULL
             AND (status = 'sold' OR (status = 'held' AND hold_expires_at > now()))
           GROUP BY event_id, holder
          HAVING count(*) > $2) AS over_limit
    GROUP BY event_id
)
SELECT event_id, invariant, violations, NULL::text AS kind, NULL::bigint AS count,
       NULL::float8 AS next_expiry_unix
FROM balance_violations
UNION ALL
SELECT event_id, invariant, violations, NULL, NULL, NULL
FROM fan_violations
UNION ALL
SELECT e.event_id, NULL, NULL, k.kind, k.count, e.next_expiry_unix
FROM per_event e
CROSS JOIN LATERAL (VALUES
    ('seats_free',         e.seats_free),
    ('seats_held',         e.seats_held),
    ('seats_held_expired', e.seats_held_expired),
    ('seats_sold',         e.seats_sold),
    ('tickets',            e.tickets),
    ('payments_started',   e.payments_started),
    ('payments_confirmed', e.payments_confirmed)
) AS k(kind, count)
WHERE e.has_seats
ORDER BY 1, 2, 4;
