-- pgbench script for scripts/demo-load: one checkout, done the correct way.
--
-- Claims a random seat (free, or held with an expired hold) in an even event
-- with a short hold, starts a payment (sent twice, as a double tap would, with
-- the same idempotency key), then either confirms it with the confirm CAS,
-- cancels it, or walks away and lets the hold lapse (45% / 10% / 45%; some
-- confirms also come after the hold expired and fail). Nothing here can break
-- an invariant:
--   * every fan name is new (a 63-bit random number), so the per-fan limit is
--     never approached;
--   * the confirm is one statement: the seat becomes sold, the ticket is
--     written and the payment confirmed together, or nothing happens;
--   * odd events (the demo's injected violations) and seats A1..A3 of every
--     event (event 2's are used for the lock chains) are never touched.

\set event 2 * random(1, 10)
\set pos random(4, 200)
\set fan random(1, 9223372036854775806)
\set hold_seconds random(3, 30)
\set outcome random(1, 100)
\set think_ms random(200, 3000)
\set browse_ms random(300, 2000)

-- The fan looks at the seat map first; this also paces each pgbench client
-- to well under one checkout per second.
\sleep :browse_ms ms

-- The claim: one conditional UPDATE. 1 row: the seat is ours; 0: someone
-- else has it.
WITH claimed AS (
    UPDATE seats
    SET status = 'held',
        holder = 'load-' || :fan,
        hold_expires_at = now() + make_interval(secs => :hold_seconds),
        version = version + 1
    WHERE event_id = :event
      AND seat = chr(65 + (:pos - 1) / 20) || ((:pos - 1) % 20 + 1)
      AND (status = 'free' OR (status = 'held' AND hold_expires_at <= now()))
    RETURNING seat
)
SELECT count(*) AS claimed FROM claimed
\gset

\if :claimed = 1
    -- Start the checkout. The second insert is the double tap: same key, so
    -- ON CONFLICT makes it a no-op.
    INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents)
    VALUES ('load-' || :fan, :event, chr(65 + (:pos - 1) / 20) || ((:pos - 1) % 20 + 1),
            'load-' || :fan, 4000 + 500 * ((:pos - 1) / 20))
    ON CONFLICT (idempotency_key) DO NOTHING;
    INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents)
    VALUES ('load-' || :fan, :event, chr(65 + (:pos - 1) / 20) || ((:pos - 1) % 20 + 1),
            'load-' || :fan, 4000 + 500 * ((:pos - 1) / 20))
    ON CONFLICT (idempotency_key) DO NOTHING;

    -- The fan types in card details (no transaction open meanwhile). With a
    -- short hold the confirm below sometimes comes too late.
    \sleep :think_ms ms

    \if :outcome <= 45
        -- Confirm CAS: sold only if still held by this fan, unexpired, with
        -- this checkout still started; ticket and payment in the same
        -- statement. 0 rows means the hold lapsed: the payment stays
        -- 'started' (a lapsed payment, visible in holds.sql).
        WITH sold AS (
            UPDATE seats
            SET status = 'sold', hold_expires_at = NULL, version = version + 1
            WHERE event_id = :event
              AND seat = chr(65 + (:pos - 1) / 20) || ((:pos - 1) % 20 + 1)
              AND status = 'held'
              AND holder = 'load-' || :fan
              AND hold_expires_at > now()
              AND EXISTS (SELECT 1 FROM payments
                           WHERE idempotency_key = 'load-' || :fan
                             AND event_id = :event
                             AND seat = chr(65 + (:pos - 1) / 20) || ((:pos - 1) % 20 + 1)
                             AND fan = 'load-' || :fan
                             AND status = 'started')
            RETURNING event_id, seat, holder
        ),
        ticket AS (
            INSERT INTO tickets (event_id, seat, fan)
            SELECT event_id, seat, holder FROM sold
            RETURNING event_id, seat, fan
        )
        UPDATE payments p
        SET status = 'confirmed'
        FROM ticket t
        WHERE p.idempotency_key = 'load-' || :fan
          AND p.event_id = t.event_id AND p.seat = t.seat AND p.fan = t.fan;
    \elif :outcome <= 55
        -- The fan cancels: release the hold (if still ours) and fail the
        -- payment.
        UPDATE seats
        SET status = 'free', holder = NULL, hold_expires_at = NULL, version = version + 1
        WHERE event_id = :event
          AND seat = chr(65 + (:pos - 1) / 20) || ((:pos - 1) % 20 + 1)
          AND status = 'held'
          AND holder = 'load-' || :fan;
        UPDATE payments SET status = 'failed'
        WHERE idempotency_key = 'load-' || :fan AND status = 'started';
    \endif
    -- Otherwise the fan walks away: the hold expires and the payment lapses.
\endif
