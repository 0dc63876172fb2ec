-- The claim: one conditional UPDATE on a random seat, the statement whose row
-- count decides who gets the seat (free, or held with an expired hold).
-- pgbench variables: events (-D events=N).
\set event random(1, :events)
\set n random(1, 1000)
UPDATE seats
   SET status = 'held', holder = 'claim-' || :client_id,
       hold_expires_at = now() + interval '10 minutes', version = version + 1
 WHERE event_id = :event AND seat = 'S' || :n
   AND (status = 'free' OR (status = 'held' AND hold_expires_at <= now()));
