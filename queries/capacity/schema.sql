-- Capacity pack: reference schema.
--
-- A workshop with a fixed number of places and a denormalised counter of
-- places taken, plus one row per registration. The application claims a
-- place with a conditional increment
--   UPDATE workshop SET seats_taken = seats_taken + 1
--   WHERE id = $1 AND seats_taken < capacity
-- and inserts the registration in the same transaction, so seats_taken must
-- always equal the number of registrations and never exceed capacity.
-- Idempotent: safe to run on a database that already has the tables.

CREATE TABLE IF NOT EXISTS workshop (
    id          serial  PRIMARY KEY,
    title       text,
    capacity    integer NOT NULL CHECK (capacity >= 0),
    seats_taken integer NOT NULL DEFAULT 0
);

-- UNIQUE (workshop_id, email) also serves as the index for counting a
-- workshop's registrations (its leading column is workshop_id) and for the
-- foreign key.
CREATE TABLE IF NOT EXISTS registration (
    id          serial  PRIMARY KEY,
    workshop_id integer NOT NULL REFERENCES workshop,
    email       text    NOT NULL,
    UNIQUE (workshop_id, email)
);
