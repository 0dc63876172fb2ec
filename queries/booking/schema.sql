-- Booking pack: reference schema.
--
-- The tables an application using the claim / hold / pay / confirm flow
-- keeps, plus the indexes the queries in this pack rely on. Idempotent: safe
-- to run against a database that already has the tables (it only adds what
-- is missing; it never alters existing columns).
--
--   seats     one row per sellable seat; status moves free -> held -> sold
--             (or back to free when a hold lapses or is cleaned up).
--             A hold is only valid while hold_expires_at > now(): expiry is
--             decided on read, the cleanup job is housekeeping.
--   tickets   one row per issued ticket; UNIQUE (event_id, seat) is the net
--             under the confirm step: a seat can never be ticketed twice.
--   payments  one row per checkout, keyed by the client's idempotency key;
--             'started' when the checkout begins, 'confirmed' when the sale
--             went through, 'failed'/'refunded' otherwise.

CREATE TABLE IF NOT EXISTS seats (
    event_id        integer     NOT NULL,
    seat            text        NOT NULL,
    status          text        NOT NULL DEFAULT 'free'
                    CHECK (status IN ('free', 'held', 'sold')),
    holder          text,
    hold_expires_at timestamptz,
    version         integer     NOT NULL DEFAULT 0,
    PRIMARY KEY (event_id, seat)
);

CREATE TABLE IF NOT EXISTS tickets (
    event_id integer NOT NULL,
    seat     text    NOT NULL,
    fan      text    NOT NULL,
    UNIQUE (event_id, seat)
);

CREATE TABLE IF NOT EXISTS payments (
    idempotency_key text        PRIMARY KEY,
    event_id        integer     NOT NULL,
    seat            text        NOT NULL,
    fan             text        NOT NULL,
    amount_cents    integer     NOT NULL CHECK (amount_cents > 0),
    status          text        NOT NULL DEFAULT 'started'
                    CHECK (status IN ('started', 'confirmed', 'failed', 'refunded')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (event_id, seat) REFERENCES seats (event_id, seat)
);

-- Indexes.
--
-- seats_pkey (event_id, seat) and tickets_event_id_seat_key (event_id, seat)
-- come with the constraints above.

-- Held seats by expiry. Partial, so it only contains the (few) seats that are
-- currently held, and stays small however many seats are free or sold.
-- INCLUDE (event_id, seat, holder) makes the readers below index-only scans.
-- Used by holds.sql (active / expired counts, oldest expiry, and the
-- unexpired holds that keep a started payment valid) and by the cleanup job
-- (cleanup_expired_holds*.sql: "held and expired, oldest first").
CREATE INDEX IF NOT EXISTS seats_held_expiry_idx
    ON seats (hold_expires_at) INCLUDE (event_id, seat, holder)
    WHERE status = 'held';

-- Seats by fan, per event. Partial on holder IS NOT NULL, so free seats stay
-- out. The application's per-fan limit check ("how many seats does this fan
-- hold or own in this event": WHERE event_id = $1 AND holder = $2) needs it
-- anyway; reconciliation.sql reads it in (event_id, holder) order to count
-- each fan's seats without a sort or a hash table, and INCLUDE (status,
-- hold_expires_at) lets that be an index-only scan. Used by
-- detail/fan_over_limit.sql too.
CREATE INDEX IF NOT EXISTS seats_holder_idx
    ON seats (event_id, holder) INCLUDE (status, hold_expires_at)
    WHERE holder IS NOT NULL;

-- Payments by seat. The foreign key to seats needs it: without it, any
-- UPDATE or DELETE of a seat's key would scan payments. The detail queries
-- look payments up by (event_id, seat) through it.
CREATE INDEX IF NOT EXISTS payments_event_seat_idx
    ON payments (event_id, seat);

-- Checkouts in progress. Partial on status = 'started', so holds.sql can
-- count lapsed payments by visiting only the open checkouts instead of every
-- payment ever taken (confirmed ones are the vast majority).
CREATE INDEX IF NOT EXISTS payments_started_idx
    ON payments (event_id, seat, fan)
    WHERE status = 'started';
