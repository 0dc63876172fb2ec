"""The benchmark's own PostgreSQL cluster, the data set, the roles and the
DBA's change-feed setup (queries/booking/changes-setup.sql)."""

import hashlib
import os
import time

import psycopg2

import pg
import procs

# Roles, so that pg_stat_statements.userid tells the tools apart. seatwatch
# has two: its checks' role and the REPLICATION role of its slot session
# (SEATWATCH_CHANGES_DSN), as README tells a DBA to set it up.
SEATWATCH = "bench_seatwatch"
SEATWATCH_REPL = "bench_seatwatch_repl"
SQL_EXPORTER = "bench_sqlexp"
APP = "bench_app"

ONSALE = 20          # the last ONSALE events are on sale
HOT = 4              # the first HOT of them get most of the writes
SEATS_PER_EVENT = 1000
INJECT_SEATS = 60    # 'X1' .. 'X60' in each injection event


def layout(events):
    """Which events are past, on sale, hot, and where violations go."""
    onsale = list(range(events - ONSALE + 1, events + 1))
    hot = onsale[:HOT]
    past = range(1, events - ONSALE + 1)
    # Violations land in hot events (rechecked all the time), in quiet on-sale
    # events and in past events spread over the key range.
    step = max(1, len(past) // 8)
    inject = hot + onsale[HOT:HOT + 4] + [past.start + step * k + 7 for k in range(8)]
    return {"events": events, "onsale": onsale, "hot": hot, "past": past,
            "inject": sorted(set(inject))}


def memory_gib():
    with open("/proc/meminfo") as f:
        return int(f.readline().split()[1]) / 2**20


def server_options():
    """Sized for the machine: a sixth of RAM for shared_buffers (the tests and
    other users share it), the rest left to the page cache."""
    mem = memory_gib()
    shared = max(1, int(mem / 6))
    return " ".join([
        f"-c shared_buffers={shared}GB",
        f"-c effective_cache_size={max(1, int(mem * 0.6))}GB",
        "-c maintenance_work_mem=1GB",
        "-c max_wal_size=16GB",
        "-c checkpoint_timeout=30min",
        # Nothing but the benchmark's own statements: no autovacuum worker
        # competes for the two cores or shows in the postmaster's child CPU.
        "-c autovacuum=off",
        "-c wal_level=logical",
        "-c max_replication_slots=20",
        "-c max_wal_senders=20",
        "-c max_parallel_workers_per_gather=2",
        "-c track_io_timing=on",
    ])


class Cluster(pg.Cluster):
    """bench/driver's cluster, in this benchmark's own folder."""

    def __init__(self, root, workdir):
        super().__init__(root, workdir, server_options())

    def start(self):
        """pg.Cluster.start, without registering a stop at exit: main.py
        decides (stop, destroy, or leave it running for another run)."""
        saved = procs.on_exit
        procs.on_exit = lambda _callback: None
        try:
            super().start()
        finally:
            procs.on_exit = saved

    def destroy(self):
        procs.run([self.scratch, "destroy", self.dir], timeout=180, check=False)

    def create_roles(self):
        with self.cursor("postgres") as cur:
            cur.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            for role, extra in ((SEATWATCH, ""), (SEATWATCH_REPL, " REPLICATION"),
                                (SQL_EXPORTER, ""), (APP, "")):
                cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,))
                if cur.fetchone() is None:
                    cur.execute(f"CREATE ROLE {role} LOGIN{extra}")
            for role in (SEATWATCH, SEATWATCH_REPL, SQL_EXPORTER):
                cur.execute(f"GRANT pg_monitor TO {role}")
            # As queries/booking/grants.sql sets seatwatch's role up (and the
            # first benchmark ran it): no JIT in its sessions.
            cur.execute(f"ALTER ROLE {SEATWATCH} SET jit = off")

    def grant(self, dbname):
        with self.cursor(dbname) as cur:
            for role in (SEATWATCH, SEATWATCH_REPL, SQL_EXPORTER, APP):
                cur.execute(f'GRANT CONNECT ON DATABASE "{dbname}" TO {role}')
                cur.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
            for role in (SEATWATCH, SQL_EXPORTER):
                cur.execute(f"GRANT SELECT ON seats, tickets, payments TO {role}")
            cur.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON seats, tickets, payments TO {APP}")

    def postmaster_pid(self):
        with open(os.path.join(self.dir, "cluster")) as f:
            private = f.read().strip()
        with open(os.path.join(private, "data", "postmaster.pid")) as f:
            return int(f.readline())


def seed_tag(root, events, lay):
    digest = hashlib.sha256()
    for path in (os.path.join(root, "queries/booking/schema.sql"),
                 os.path.join(root, "bench/changes/seed.sql")):
        with open(path, "rb") as f:
            digest.update(f.read())
    digest.update(repr((events, lay["inject"], ONSALE)).encode())
    return digest.hexdigest()[:16]


def seed(cluster, root, dbname, events, reseed=False):
    """Creates and fills `dbname` unless it holds this exact seed already.
    Returns seconds spent seeding (0 when reused)."""
    lay = layout(events)
    tag = seed_tag(root, events, lay)
    if not reseed and cluster.exists(dbname):
        try:
            with cluster.cursor(dbname) as cur:
                cur.execute("SELECT tag FROM bench_seed")
                row = cur.fetchone()
            if row and row[0] == tag:
                procs.log(f"{dbname}: reusing the seeded data ({events:,} events)")
                cluster.grant(dbname)
                return 0.0
        except psycopg2.Error:
            pass
    procs.log(f"{dbname}: seeding {events:,} events ({events * SEATS_PER_EVENT:,} seats)")
    started = time.monotonic()
    cluster.drop(dbname)
    procs.run([cluster.scratch, "createdb", cluster.dir, dbname], timeout=120, env=cluster.env)
    schema = os.path.join(root, "queries/booking/schema.sql")
    cluster.psql(dbname, "-f", schema)
    # Load without keys and indexes, then add them back, one build each.
    with cluster.cursor(dbname) as cur:
        cur.execute("""
            SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid), contype
            FROM pg_constraint
            WHERE conrelid IN ('seats'::regclass, 'tickets'::regclass, 'payments'::regclass)
              AND contype IN ('p', 'u', 'f')
            ORDER BY contype = 'f' DESC""")
        constraints = cur.fetchall()
        for table, name, _, _ in constraints:
            cur.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
        cur.execute("""
            SELECT format('DROP INDEX %s', indexrelid::regclass::text) FROM pg_index
            WHERE indrelid IN ('seats'::regclass, 'tickets'::regclass, 'payments'::regclass)""")
        for (statement,) in cur.fetchall():
            cur.execute(statement)
    steps = {}
    t = time.monotonic()
    inject = "{" + ",".join(str(e) for e in lay["inject"]) + "}"
    cluster.psql(dbname, "-v", f"events={events}", "-v", f"onsale={ONSALE}",
                 "-v", f"inject_events={inject}", "-v", "first=1",
                 "-f", os.path.join(root, "bench/changes/seed.sql"), timeout=7200)
    steps["load"] = time.monotonic() - t
    t = time.monotonic()
    keys = ["SET maintenance_work_mem = '1GB'"]
    for table, name, definition, contype in reversed(constraints):  # keys before foreign keys
        suffix = " NOT VALID" if contype == "f" else ""
        keys.append(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}{suffix}')
    cluster.psql(dbname, *sum((["-c", s] for s in keys), []), timeout=7200)
    # The foreign key holds by construction; validating it would be one more
    # join of payments with seats.
    cluster.psql(dbname, "-c", "SET maintenance_work_mem = '1GB'", "-f", schema, timeout=7200)
    steps["indexes"] = time.monotonic() - t
    t = time.monotonic()
    cluster.psql(dbname, "-c", "VACUUM (ANALYZE, FREEZE)", timeout=7200)
    steps["vacuum"] = time.monotonic() - t
    with cluster.cursor(dbname) as cur:
        cur.execute("DROP TABLE IF EXISTS bench_seed")
        cur.execute("CREATE TABLE bench_seed (tag text, events int, seeded_at timestamptz, "
                    "seconds jsonb)")
        import json
        cur.execute("INSERT INTO bench_seed VALUES (%s, %s, now(), %s)",
                    (tag, events, json.dumps(steps)))
    cluster.grant(dbname)
    elapsed = time.monotonic() - started
    procs.log(f"{dbname}: seeded in {elapsed:.0f} s ({', '.join(f'{k} {v:.0f} s' for k, v in steps.items())})")
    return elapsed


def reset_onsale(cluster, root, dbname, events):
    """The on-sale events as seeded, again: the load adds a payment per sale
    and keeps failed and refunded ones, so a hot event's rows grow by
    thousands a minute, and with them what a recheck of it reads. Each mode
    starts from the same rows (one transaction; no tool is running)."""
    lay = layout(events)
    first = lay["onsale"][0]
    inject = "{" + ",".join(str(e) for e in lay["inject"]) + "}"
    t = time.monotonic()
    cluster.psql(dbname, "-1", "-v", f"events={events}", "-v", f"onsale={ONSALE}",
                 "-v", f"inject_events={inject}", "-v", f"first={first}",
                 "-c", f"DELETE FROM payments WHERE event_id >= {first}",
                 "-c", f"DELETE FROM tickets WHERE event_id >= {first}",
                 "-c", f"DELETE FROM seats WHERE event_id >= {first}",
                 "-f", os.path.join(root, "bench/changes/seed.sql"),
                 "-c", "ANALYZE seats, tickets, payments", timeout=3600)
    procs.log(f"{dbname}: on-sale events {first}..{events} reset in {time.monotonic() - t:.1f} s")


def seed_seconds(cluster, dbname):
    with cluster.cursor(dbname) as cur:
        cur.execute("SELECT seconds, seeded_at FROM bench_seed")
        row = cur.fetchone()
    return row[0] if row else None


def changes_setup(cluster, root, dbname):
    """Runs the DBA's setup script (replica identities, the publication).
    Returns False when the script is not in the tree yet."""
    path = os.path.join(root, "queries/booking/changes-setup.sql")
    if not os.path.exists(path):
        procs.log("queries/booking/changes-setup.sql not found: incremental mode unavailable")
        return False
    cluster.psql(dbname, "-f", path, timeout=3600)
    return True


def table_sizes(cluster, dbname):
    with cluster.cursor(dbname) as cur:
        cur.execute("""
            SELECT relname, pg_total_relation_size(oid), reltuples::bigint
            FROM pg_class WHERE relname IN ('seats', 'tickets', 'payments')""")
        return {name: {"bytes": size, "rows": rows} for name, size, rows in cur.fetchall()}


def repair_leftovers(cluster, dbname):
    """An interrupted run may have left an injected violation: undo them all
    (the injector's rows are recognisable by their 'inj-' fans and keys)."""
    with cluster.cursor(dbname) as cur:
        cur.execute("BEGIN")
        cur.execute("DELETE FROM payments WHERE idempotency_key LIKE 'inj-%'")
        cur.execute("DELETE FROM tickets WHERE fan LIKE 'inj-%' OR seat LIKE 'X%'")
        cur.execute("UPDATE seats SET status = 'free', holder = NULL, hold_expires_at = NULL "
                    "WHERE seat LIKE 'X%' AND status <> 'free'")
        cur.execute("COMMIT")
