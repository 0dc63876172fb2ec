-- reconciliation.sql: booking invariants and per-event inventory, one pass.
--
-- Checks, per event, that seats, tickets and payments agree, and reports the
-- per-event inventory from the same scans. Rows come in two kinds:
--
--   invariant rows   event_id, invariant, violations; kind, count and
--                    next_expiry_unix NULL. Only returned when
--                    violations > 0, so clean data returns no invariant rows
--                    at all.
--   inventory rows   event_id, kind, count, next_expiry_unix; invariant and
--                    violations NULL. Seven rows for every event that has
--                    seats, zeros included.
--
-- Columns (in this order):
--   event_id    integer
--   invariant   text     invariant name (invariant rows only)
--   violations  bigint   > 0 (invariant rows only)
--   kind        text     inventory kind (inventory rows only)
--   count       bigint   >= 0 (inventory rows only)
--   next_expiry_unix
--               float8   inventory rows only, the same on all seven rows of
--                        an event: the earliest hold_expires_at still in the
--                        future (> now()) among the event's held seats, in
--                        epoch seconds; NULL when the event has none. It is
--                        the next moment the event's rows change by time
--                        alone (a hold lapses: seats_held -> seats_held_expired,
--                        and fan_over_limit may clear), so an incremental
--                        checker knows when to look at the event again with
--                        no write at all. Computed in the seats scan that
--                        counts the holds: no extra scan.
--
-- Parameters:
--   $1  integer  per-fan seat limit per event (e.g. 4)
--
-- Invariants (violations = offending rows in that event unless said otherwise):
--   sold_seat_without_ticket          seats with status 'sold' and no ticket
--                                     for (event_id, seat)
--   ticket_without_sold_seat          tickets whose seat is missing, not sold,
--                                     or sold to a holder other than the
--                                     ticket's fan
--   confirmed_payment_without_ticket  confirmed payments with no ticket for
--                                     the same event, seat and fan
--   ticket_without_confirmed_payment  tickets with no confirmed payment for
--                                     the same event, seat and fan
--   double_confirmed_payment          extra confirmed payments: for each seat
--                                     with n > 1 confirmed payments, n - 1
--   fan_over_limit                    fans whose sold seats plus unexpired
--                                     held seats in the event exceed $1
--
-- Inventory kinds:
--   seats_free          status 'free'
--   seats_held          status 'held' and hold_expires_at > now()
--   seats_held_expired  status 'held' and hold_expires_at <= now() or NULL
--   seats_sold          status 'sold'
--   tickets             ticket rows
--   payments_started    payments with status 'started'
--   payments_confirmed  payments with status 'confirmed'
--
-- Expiry is judged with now(), the database clock at the start of the
-- transaction, like the claim and confirm statements do.
--
-- How it stays cheap. Matching seats, tickets and payments row by row (a full
-- outer join on (event_id, seat)) costs several times more than counting
-- them. So the pass only aggregates, per event and in one scan of each
-- table:
--   * the inventory counts, and
--   * a fingerprint of each side of the sale: the sum of a 64-bit hash of
--     (seat, fan) over sold seats (fan = holder), over tickets, and over
--     confirmed payments.
-- Together, the first five invariants say: sold seats, tickets and confirmed
-- payments list exactly the same (seat, fan) pairs, each pair once (tickets
-- are unique per seat). If the three counts are equal and the three
-- fingerprints are equal, the three lists are the same (unless two different
-- lists happen to have the same 64-bit hash sum, a chance of about 1 in
-- 2^64) and the event has no violation of those five. Only events
-- where they differ ("out of balance", normally none) get the exact per-row
-- counts, by index lookups restricted to that event. A sold seat with a NULL
-- holder contributes no hash, so it always puts its event out of balance.
--
-- fan_over_limit cannot be summed per event: it groups sold and unexpired
-- held seats by (event_id, holder), reading them in order from
-- seats_holder_idx (an index-only scan, no sort, no hash table).
--
-- Cost: one sequential scan each of seats, tickets and payments, one
-- index-only scan of seats_holder_idx, plus a few milliseconds per
-- out-of-balance event. If every event were out of balance, this costs about
-- as much as joining the tables row by row.
--
-- Indexes relied on:
--   seats_holder_idx (event_id, holder) INCLUDE (status, hold_expires_at)
--       WHERE holder IS NOT NULL            fan_over_limit
--   seats_pkey, tickets_event_id_seat_key,
--   payments_event_seat_idx                 exact counts for out-of-balance
--                                           events
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
    GROUP BY event_id
),
ticket_stats AS MATERIALIZED (
    SELECT event_id,
           count(*) AS tickets,
           sum(hashtextextended(seat, hashtextextended(fan, 0))) AS fingerprint
    FROM tickets
    GROUP BY event_id
),
payment_stats AS MATERIALIZED (
    SELECT event_id,
           count(*) FILTER (WHERE status = 'started') AS payments_started,
           count(*) FILTER (WHERE status = 'confirmed') AS payments_confirmed,
           sum(hashtextextended(seat, hashtextextended(fan, 0)))
               FILTER (WHERE status = 'confirmed') AS fingerprint
    FROM payments
    WHERE status IN ('started', 'confirmed')
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
           WHERE holder IS NOT NULL
             AND (status = 'sold' OR (status = 'held' AND hold_expires_at > now()))
           GROUP BY event_id, holder
          HAVING count(*) > $1) AS over_limit
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
