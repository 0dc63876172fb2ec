-- detail/workshop_overbooked.sql: workshops with more places handed out than
-- they have.
--
-- Returns one row per overbooked workshop (seats_taken > capacity or more
-- registrations than capacity), most overbooked first.
--
-- Columns:
--   workshop_id    integer
--   title          text
--   capacity       integer
--   seats_taken    integer  the counter on the workshop row
--   registrations  bigint   registration rows for the workshop
--   over_by        bigint   greatest(seats_taken, registrations) - capacity
--   last_email     text     the most recent registration (highest id)
--
-- Parameters: none.
--
-- Indexes: registration_workshop_id_email_key for the per-workshop count.

SELECT w.id AS workshop_id,
       w.title,
       w.capacity,
       w.seats_taken,
       r.registrations,
       greatest(w.seats_taken, r.registrations) - w.capacity AS over_by,
       (SELECT x.email FROM registration x
         WHERE x.workshop_id = w.id ORDER BY x.id DESC LIMIT 1) AS last_email
FROM workshop w
CROSS JOIN LATERAL (SELECT count(*) AS registrations
                      FROM registration x
                     WHERE x.workshop_id = w.id) AS r
WHERE w.seats_taken > w.capacity OR r.registrations > w.capacity
ORDER BY over_by DESC, w.id;
