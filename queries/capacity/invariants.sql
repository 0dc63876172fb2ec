-- invariants.sql: capacity invariants per workshop, in long format.
--
-- One pass: registrations are counted per workshop once and compared with the
-- workshop row. Only rows with violations > 0 are returned, so a consistent
-- database returns nothing.
--
-- Columns:
--   workshop_id  integer
--   invariant    text     'workshop_overbooked' or 'workshop_counter_drift'
--   violations   bigint   > 0
--
-- Invariants:
--   workshop_overbooked     seats_taken > capacity or registrations > capacity;
--                           violations = greatest(seats_taken, registrations)
--                           - capacity (places handed out beyond capacity)
--   workshop_counter_drift  seats_taken differs from the number of
--                           registrations; violations = the absolute
--                           difference
--
-- Parameters: none.
--
-- Indexes: none needed beyond the tables' own; registration is read once in
-- full (one sequential or index-only scan) and workshop once.

WITH counts AS (
    SELECT w.id AS workshop_id,
           w.capacity::bigint AS capacity,
           w.seats_taken::bigint AS seats_taken,
           coalesce(r.registrations, 0) AS registrations
    FROM workshop w
    LEFT JOIN (SELECT workshop_id, count(*) AS registrations
                 FROM registration
                GROUP BY workshop_id) AS r
           ON r.workshop_id = w.id
)
SELECT c.workshop_id, v.invariant, v.violations
FROM counts c
CROSS JOIN LATERAL (VALUES
    ('workshop_overbooked',    greatest(c.seats_taken, c.registrations) - c.capacity),
    ('workshop_counter_drift', abs(c.seats_taken - c.registrations))
) AS v(invariant, violations)
WHERE v.violations > 0
ORDER BY c.workshop_id, v.invariant;
