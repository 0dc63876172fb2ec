-- detail/workshop_counter_drift.sql: workshops whose seats_taken counter does
-- not match their registrations.
--
-- Returns one row per drifted workshop, largest drift first.
--
-- Columns:
--   workshop_id    integer
--   title          text
--   capacity       integer
--   seats_taken    integer  the counter on the workshop row
--   registrations  bigint   registration rows for the workshop
--   drift          bigint   seats_taken - registrations (positive: counter
--                           too high, e.g. a failed insert whose increment
--                           was not rolled back; negative: too low, e.g. a
--                           lost update)
--
-- Parameters: none.
--
-- Indexes: registration_workshop_id_email_key for the per-workshop count.

SELECT w.id AS workshop_id,
       w.title,
       w.capacity,
       w.seats_taken,
       r.registrations,
       w.seats_taken - r.registrations AS drift
FROM workshop w
CROSS JOIN LATERAL (SELECT count(*) AS registrations
                      FROM registration x
                     WHERE x.workshop_id = w.id) AS r
WHERE w.seats_taken <> r.registrations
ORDER BY abs(w.seats_taken - r.registrations) DESC, w.id;
