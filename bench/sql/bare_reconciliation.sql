-- bare_reconciliation.sql: the floor the booking pack is measured against.
--
-- The single bare per-event reconciliation a DBA would write first: seats
-- sold, tickets issued and payments confirmed counted per event (one scan of
-- each table) and compared; returns the events where they disagree. It
-- catches less than the pack (matching counts with different seats or fans
-- pass; no fan limit, no double payment, no inventory): it is the least any
-- per-event reconciliation has to read.

SELECT event_id, s.sold, t.tickets, p.confirmed
FROM (SELECT event_id, count(*) AS sold FROM seats WHERE status = 'sold' GROUP BY event_id) AS s
FULL JOIN (SELECT event_id, count(*) AS tickets FROM tickets GROUP BY event_id) AS t
    USING (event_id)
FULL JOIN (SELECT event_id, count(*) AS confirmed FROM payments
            WHERE status = 'confirmed' GROUP BY event_id) AS p
    USING (event_id)
WHERE s.sold IS DISTINCT FROM t.tickets
   OR t.tickets IS DISTINCT FROM p.confirmed
