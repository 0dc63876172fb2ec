-- changes-setup.sql: what seatwatch's change feed ([changes]) needs on the
-- database, for exactly the tables its incremental entries read, each with
-- the key columns their changes are mapped by:
--   payments (event_id)
--   seats (event_id)
--   tickets (event_id)
-- Written by: seatwatch --config FILE --print-setup
-- Run by a DBA, never by seatwatch: seatwatch never alters tables.
--
-- Run as the owner of those tables (or a superuser), connected to their
-- database, with psql and NOT in a transaction (no -1 / --single-transaction,
-- no BEGIN around it: step 1 builds indexes CONCURRENTLY):
--   psql -d DATABASE -v ON_ERROR_STOP=1 -f changes-setup.sql
-- Idempotent: a re-run changes nothing that is already right, and brings the
-- publication's tables and columns back to what is listed here. Needs
-- wal_level = logical on the server (a restart to change), and
-- max_replication_slots / max_wal_senders with one free each per seatwatch
-- process (each uses one temporary slot). Every choice below is made by the
-- script on the database it runs on, from its catalog.
--
-- Why the order matters: the replica identity trap. A publication that
-- publishes UPDATE or DELETE (this one does: seatwatch must see both) makes
-- PostgreSQL refuse every UPDATE and DELETE on a member table that has no
-- replica identity, with
--   ERROR: cannot delete from table "..." because it does not have a
--          replica identity and publishes deletes        (SQLSTATE 55000)
-- A table without a primary key has none under DEFAULT: adding it to the
-- publication as it is would break the application's own writes at once.
-- Hence every table gets a replica identity that carries its key first
-- (steps 1 and 2), and only then is the publication created or its table
-- list updated (step 3). If the script stops half-way, what ran is harmless
-- on its own: steps 1 and 2 only add WAL detail to updates and deletes, and
-- the publication, the only thing that can break writes, comes last.
--
-- Why a replica identity that carries the key: the replica identity is what
-- an UPDATE or DELETE writes to the WAL about the old row, and seatwatch
-- needs the old row's key: the key a deleted row, or a row moved to another
-- key, belonged to must be rechecked. USING INDEX a unique index that
-- includes the key gives it for less WAL than REPLICA IDENTITY FULL (which
-- logs the whole old row). While the publication exists, do not drop such
-- an index: a table whose replica identity index is gone has none, and the
-- trap above fires. Without these replica identities seatwatch still works:
-- it reports the changes it cannot map (e.g. deletes) and answers them with
-- a full pass.

-- ALTER TABLE ... REPLICA IDENTITY takes an ACCESS EXCLUSIVE lock, briefly.
-- Behind a long transaction it would queue, and every query of the
-- application on that table would queue behind it: give up instead, and
-- re-run the script later.
SET lock_timeout = '5s';

-- The tables and their key columns. A table that does not exist stops the
-- script here, before anything is changed.
-- `named`: the words the entries' SQL uses; a column of one of these names
-- is published too, so that a violation can show what the transaction
-- that broke it wrote there (provenance).
CREATE TEMPORARY TABLE seatwatch_keyed (tab regclass PRIMARY KEY, key name[] NOT NULL,
                                        named name[] NOT NULL);
INSERT INTO seatwatch_keyed VALUES
    ('payments', ARRAY['event_id']::name[],
     ARRAY['event_id', 'fan', 'hold_expires_at', 'holder', 'now', 'seat', 'status']::name[]),
    ('seats', ARRAY['event_id']::name[],
     ARRAY['event_id', 'fan', 'hold_expires_at', 'holder', 'now', 'seat', 'status']::name[]),
    ('tickets', ARRAY['event_id']::name[],
     ARRAY['event_id', 'fan', 'hold_expires_at', 'holder', 'now', 'seat', 'status']::name[]);

-- Each table that stores the rows (a partitioned table's leaf partitions:
-- each has a replica identity of its own), its replica identity's columns,
-- its primary key, and whether every key column is NOT NULL.
CREATE TEMPORARY VIEW seatwatch_leaf AS
SELECT k.tab, c.oid::regclass AS leaf, c.relreplident AS mode, k.key,
       ARRAY(SELECT a.attname FROM pg_index i
               JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
              WHERE i.indrelid = c.oid
                AND ((c.relreplident = 'd' AND i.indisprimary)
                     OR (c.relreplident = 'i' AND i.indisreplident))
              ORDER BY a.attnum) AS identity,
       ARRAY(SELECT a.attname FROM pg_index i
               JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
              WHERE i.indrelid = c.oid AND i.indisprimary
              ORDER BY a.attnum) AS primary_key,
       NOT EXISTS (SELECT 1 FROM pg_attribute a
                    WHERE a.attrelid = c.oid AND a.attname = ANY (k.key)
                      AND NOT a.attnotnull) AS key_not_null
  FROM seatwatch_keyed k
  JOIN pg_class c ON (c.oid = k.tab AND c.relkind <> 'p')
                  OR c.oid IN (SELECT relid FROM pg_partition_tree(k.tab) WHERE isleaf);

-- The unique indexes that can be a replica identity (valid, immediate, not
-- partial, on plain columns, every one NOT NULL), with their columns.
CREATE TEMPORARY VIEW seatwatch_usable AS
SELECT i.indrelid AS leaf, i.indexrelid, c.relname AS name, i.indnatts AS width,
       ARRAY(SELECT a.attname FROM pg_attribute a
              WHERE a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)) AS columns
  FROM pg_index i
  JOIN pg_class c ON c.oid = i.indexrelid
 WHERE i.indisunique AND i.indisvalid AND i.indimmediate
   AND i.indpred IS NULL AND i.indexprs IS NULL
   AND NOT EXISTS (SELECT 1 FROM pg_attribute a
                    WHERE a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
                      AND NOT a.attnotnull);

-- A table whose replica identity does not carry its key, with no unique
-- index that could, but a primary key and a NOT NULL key: the index step 1
-- builds (the primary key's columns, then the key's; unique because the
-- primary key is).
CREATE TEMPORARY VIEW seatwatch_wanted_index AS
SELECT l.leaf, n.nspname,
       left(c.relname || '_' || array_to_string(w.columns, '_') || '_idx', 63) AS name,
       w.columns
  FROM seatwatch_leaf l
  JOIN pg_class c ON c.oid = l.leaf
  JOIN pg_namespace n ON n.oid = c.relnamespace
 CROSS JOIN LATERAL (
       SELECT l.primary_key || ARRAY(SELECT k FROM unnest(l.key) WITH ORDINALITY AS u(k, o)
                                      WHERE k <> ALL (l.primary_key) ORDER BY o) AS columns) w
 WHERE l.mode <> 'f' AND NOT (l.key <@ l.identity)
   AND cardinality(l.primary_key) > 0 AND l.key_not_null
   AND NOT EXISTS (SELECT 1 FROM seatwatch_usable u
                    WHERE u.leaf = l.leaf::oid AND l.key <@ u.columns);

-- 1. That index, CONCURRENTLY: a plain CREATE INDEX would hold a SHARE lock
-- on the table for the whole build, blocking the application's writes;
-- CONCURRENTLY lets them run, at the price of two scans and of this script
-- not being one all-or-nothing transaction (each step is idempotent and
-- safe on its own, see the order above). It cannot run in a transaction or
-- a DO block: psql's \gexec runs each statement the query returns.
--
-- A CONCURRENTLY build that fails or is cancelled leaves an INVALID index
-- of that name, which IF NOT EXISTS would then keep for ever: drop such a
-- leftover first, so that a re-run builds it again.
SELECT format('DROP INDEX %s', i.indexrelid::regclass)
  FROM seatwatch_wanted_index w
  JOIN pg_index i ON i.indexrelid = to_regclass(format('%I.%I', w.nspname, w.name))
 WHERE NOT i.indisvalid
\gexec
-- lock_timeout also bounds the waits of a CONCURRENTLY build for the
-- transactions running when it starts: on a timeout, re-run the script.
SELECT format('CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS %I ON %s (%s)', w.name, w.leaf,
              (SELECT string_agg(quote_ident(k), ', ' ORDER BY o)
                 FROM unnest(w.columns) WITH ORDINALITY AS u(k, o)))
  FROM seatwatch_wanted_index w
\gexec

-- 2. A replica identity that carries the key: USING INDEX the narrowest
-- unique index that includes it, else FULL (no primary key to extend, or a
-- nullable key: the whole old row goes to the WAL; a NOTICE says so).
-- Skipped where the replica identity carries the key already (no lock
-- taken then).
DO $seatwatch$
DECLARE
    l record;
    index_name name;
BEGIN
    FOR l IN SELECT * FROM seatwatch_leaf
              WHERE mode <> 'f' AND NOT (key <@ identity)
              ORDER BY leaf::text LOOP
        SELECT u.name INTO index_name
          FROM seatwatch_usable u
         WHERE u.leaf = l.leaf::oid AND l.key <@ u.columns
         ORDER BY u.width, u.name
         LIMIT 1;
        IF index_name IS NOT NULL THEN
            EXECUTE format('ALTER TABLE %s REPLICA IDENTITY USING INDEX %I', l.leaf, index_name);
        ELSE
            RAISE NOTICE '% gets REPLICA IDENTITY FULL: no unique index on NOT NULL columns '
                         'includes %, and none can be built (no primary key, or a nullable '
                         'key)', l.leaf, l.key;
            EXECUTE format('ALTER TABLE %s REPLICA IDENTITY FULL', l.leaf);
        END IF;
    END LOOP;
    -- A partitioned table stores no rows, so its own replica identity costs
    -- no WAL; but a change published through it is described by its
    -- Relation message, which gives its replica identity, not the
    -- partition's: FULL says that the old row's columns the partition's
    -- identity carries (the key, made so above) are there.
    FOR l IN SELECT k.tab FROM seatwatch_keyed k JOIN pg_class c ON c.oid = k.tab
              WHERE c.relkind = 'p' AND c.relreplident <> 'f'
              ORDER BY k.tab::text LOOP
        EXECUTE format('ALTER TABLE %s REPLICA IDENTITY FULL', l.tab);
    END LOOP;
END
$seatwatch$;

-- 3. The publication seatwatch reads ([changes] publication = "seatwatch").
-- All four kinds of change: insert, update and delete name the keys to
-- recheck, and a TRUNCATE, which names no rows, tells seatwatch to run a
-- full pass (not publishing it would hide it). Through the partition root:
-- a change in a partition is published as a change of the table the config
-- names. COLUMN LISTS where the replica identity allows: the key, the
-- replica identity's columns (PostgreSQL requires a column list of a
-- publication that publishes UPDATE or DELETE to cover the replica
-- identity) and the columns the entries' SQL names, so that less is
-- decoded for each change and the columns the checks do not read never
-- leave the server through the slot; a table with REPLICA IDENTITY
-- FULL, or partitioned, is published whole. Creating it, or changing its
-- table list, takes a SHARE UPDATE EXCLUSIVE lock on the tables: reads and
-- writes go on.
DO $seatwatch$
DECLARE
    bare regclass;
    members text;
BEGIN
    -- The trap's last guard: every table that stores rows has a replica
    -- identity.
    SELECT leaf INTO bare FROM seatwatch_leaf
     WHERE mode = 'n' OR (mode <> 'f' AND cardinality(identity) = 0)
     ORDER BY leaf::text LIMIT 1;
    IF bare IS NOT NULL THEN
        RAISE EXCEPTION 'table % has no replica identity: adding it to the publication '
                        'would make its UPDATE and DELETE fail', bare;
    END IF;
    SELECT string_agg(
             CASE WHEN c.relkind = 'p' OR EXISTS (SELECT 1 FROM seatwatch_leaf l
                                                   WHERE l.tab = k.tab AND l.mode = 'f')
                  THEN k.tab::text
                  ELSE format('%s (%s)', k.tab,
                              (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum)
                                 FROM pg_attribute a
                                 JOIN seatwatch_leaf l ON l.tab = k.tab
                                WHERE a.attrelid = k.tab AND a.attnum > 0
                                  AND NOT a.attisdropped
                                  AND (a.attname = ANY (l.key) OR a.attname = ANY (l.identity)
                                       OR a.attname = ANY (k.named))))
             END, ', ' ORDER BY k.tab::text)
      INTO members
      FROM seatwatch_keyed k
      JOIN pg_class c ON c.oid = k.tab;
    IF members IS NULL THEN
        RAISE EXCEPTION 'no table to publish: no entry of the config is incremental';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = 'seatwatch') THEN
        EXECUTE format('CREATE PUBLICATION seatwatch FOR TABLE %s WITH (publish = %L, '
                       'publish_via_partition_root = true)',
                       members, 'insert, update, delete, truncate');
    ELSE
        -- Already there (a re-run): bring it back to exactly these tables.
        EXECUTE format('ALTER PUBLICATION seatwatch SET TABLE %s', members);
        EXECUTE format('ALTER PUBLICATION seatwatch SET (publish = %L, '
                       'publish_via_partition_root = true)', 'insert, update, delete, truncate');
    END IF;
END
$seatwatch$;

RESET lock_timeout;
DROP VIEW seatwatch_wanted_index, seatwatch_usable, seatwatch_leaf;
DROP TABLE seatwatch_keyed;

-- 4. The roles. Not run by this script: the DBA chooses the passwords (or
-- certificates) and the pg_hba.conf lines.
--
-- The checks' role reads the tables above (and the others its entries
-- read); pg_monitor gives it the lock and activity views:
--   GRANT SELECT ON payments, seats, tickets TO seatwatch;
--   GRANT pg_monitor TO seatwatch;
--
-- The role seatwatch's change feed connects as (its own DSN: [changes] dsn
-- or SEATWATCH_CHANGES_DSN).
-- WARNING: a REPLICATION role can create a logical slot and decode every
-- row of every table of the database, whatever it was granted: column lists
-- and table privileges do not limit what a slot with another output plugin
-- (test_decoding) shows. Treat its credentials like a replication user's:
-- secret-grade, never the seatwatch role's DSN, never in a config file
-- others can read. It needs nothing else: no table privileges, no
-- pg_monitor, no superuser.
--
--   CREATE ROLE seatwatch_changes LOGIN REPLICATION PASSWORD 'chosen-by-the-dba';
--   -- CONNECT (PUBLIC has it by default; needed if that was revoked):
--   GRANT CONNECT ON DATABASE DATABASE TO seatwatch_changes;
--   -- Each drain is a short statement; bound them like the checks':
--   ALTER ROLE seatwatch_changes SET statement_timeout = '60s';
--
-- pg_hba.conf: the feed uses a normal connection to the database (not a
-- replication connection), so an ordinary "host DATABASE seatwatch_changes"
-- line allows it.
