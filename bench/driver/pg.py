"""The scratch PostgreSQL cluster, the seeded databases, the per-tool roles
and pg_stat_statements."""

import hashlib
import os
import statistics
import time

import psycopg2

import procs
import seatwatch_harness

# One role per tool, so pg_stat_statements.userid tells them apart.
ROLES = {
    "seatwatch": "bench_seatwatch",
    "postgres_exporter": "bench_pgexp",
    "sql_exporter": "bench_sqlexp",
    "floor": "bench_floor",
}


class Cluster(seatwatch_harness.Cluster):
    """The harness's scratch cluster in `workdir`/pg, started with server
    `options`, with the bench's roles, seeded sets and pg_stat_statements."""

    def __init__(self, root, workdir, options):
        super().__init__(os.path.join(workdir, "pg"), "bench")
        self.root = root
        self.dir = self.path
        self.scratch = os.path.join(root, "scripts", "pg-scratch")
        self.options = options
        self.env = None
        self.pgbin = None

    def start(self):
        env = dict(os.environ, PG_SCRATCH_OPTS=self.options)
        procs.run([self.scratch, "start", self.dir], timeout=120, env=env)
        procs.on_exit(self.stop)
        self.load_env()
        self.pgbin = seatwatch_harness.pg_bin_dir()
        procs.log(f"PostgreSQL at 127.0.0.1:{self.port} (socket {self.host})")

    def load_env(self):
        super().load_env()
        self.env = dict(os.environ, PGHOST=self.host, PGPORT=str(self.port), PGUSER="postgres")

    def stop(self):
        procs.run([self.scratch, "stop", self.dir], timeout=120, check=False)

    def bin(self, name):
        return os.path.join(self.pgbin, name)

    def connect(self, dbname, user="postgres", autocommit=True, application_name="bench"):
        return super().connect(dbname, user=user, autocommit=autocommit,
                               application_name=application_name, connect_timeout=None)

    def tcp_dsn(self, dbname, user, application_name):
        """libpq key=value DSN over loopback TCP (seatwatch)."""
        return (f"host=127.0.0.1 port={self.port} dbname={dbname} user={user} "
                f"sslmode=disable application_name={application_name}")

    def tcp_url(self, dbname, user, application_name):
        """URL over loopback TCP (lib/pq in the Go exporters)."""
        return (f"postgres://{user}@127.0.0.1:{self.port}/{dbname}"
                f"?sslmode=disable&application_name={application_name}")

    def psql(self, dbname, *args, timeout=3600, user="postgres", input_text=None):
        return procs.run([self.bin("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-U", user,
                          "-d", dbname, *args], timeout=timeout, env=self.env,
                         input_text=input_text)

    def exists(self, dbname):
        with self.cursor("postgres") as cur:
            cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,))
            return cur.fetchone() is not None

    def drop(self, dbname):
        with self.cursor("postgres") as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')

    def create_roles(self):
        with self.cursor("postgres") as cur:
            cur.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            for role in ROLES.values():
                cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,))
                if cur.fetchone() is None:
                    cur.execute(f"CREATE ROLE {role} LOGIN")
                cur.execute(f"GRANT pg_monitor TO {role}")

    def grant(self, dbname):
        """What queries/booking/grants.sql gives seatwatch, for every tool."""
        with self.cursor(dbname) as cur:
            for role in ROLES.values():
                cur.execute(f'GRANT CONNECT ON DATABASE "{dbname}" TO {role}')
                cur.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
                cur.execute(f"GRANT SELECT ON seats, tickets, payments TO {role}")
            cur.execute("GRANT UPDATE (status, holder, hold_expires_at, version) ON seats "
                        f"TO {ROLES['seatwatch']}")

    def seed(self, dbname, seed_files, events, reseed=False):
        """Creates and seeds `dbname` unless it already holds this exact seed
        (same files, same size): the 5M set is built once and reused."""
        digest = hashlib.sha256()
        for path in seed_files:
            with open(path, "rb") as f:
                digest.update(f.read())
        digest.update(str(events).encode())
        tag = digest.hexdigest()[:16]
        if not reseed and self.exists(dbname):
            try:
                with self.cursor(dbname) as cur:
                    # Unexpired holds expire a day after seeding: reseed before.
                    cur.execute("SELECT tag FROM bench_seed "
                                "WHERE seeded_at > now() - interval '12 hours'")
                    row = cur.fetchone()
                if row and row[0] == tag:
                    procs.log(f"{dbname}: reusing the seeded data ({events} events)")
                    self.grant(dbname)
                    return False
            except psycopg2.Error:
                pass
        procs.log(f"{dbname}: seeding {events} events ({events * 1000:,} seats)")
        started = time.monotonic()
        self.drop(dbname)
        procs.run([self.scratch, "createdb", self.dir, dbname], timeout=120, env=self.env)
        schema, data, extra = seed_files[0], seed_files[1], seed_files[2:]
        self.psql(dbname, "-f", schema)
        # Load without the secondary indexes, then let schema.sql (idempotent)
        # build them again in one pass each.
        with self.cursor(dbname) as cur:
            cur.execute("""
                SELECT format('DROP INDEX %I', i.indexrelid::regclass::text)
                FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
                WHERE c.relname IN ('seats', 'tickets', 'payments')
                  AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)""")
            for (statement,) in cur.fetchall():
                cur.execute(statement)
        self.psql(dbname, "-v", f"events={events}", "-f", data)
        self.psql(dbname, "-c", "SET maintenance_work_mem = '1GB'", "-f", schema)
        for path in extra:
            self.psql(dbname, "-f", path)
        self.psql(dbname, "-c", "VACUUM ANALYZE")
        with self.cursor(dbname) as cur:
            cur.execute("DROP TABLE IF EXISTS bench_seed")
            cur.execute("CREATE TABLE bench_seed (tag text, events int, seeded_at timestamptz)")
            cur.execute("INSERT INTO bench_seed VALUES (%s, %s, now())", (tag, events))
        self.grant(dbname)
        procs.log(f"{dbname}: seeded in {time.monotonic() - started:.0f} s")
        return True

    def table_sizes(self, dbname):
        with self.cursor(dbname) as cur:
            cur.execute("""
                SELECT relname, pg_total_relation_size(oid), reltuples::bigint
                FROM pg_class WHERE relname IN ('seats', 'tickets', 'payments')""")
            return {name: {"bytes": size, "rows": rows} for name, size, rows in cur.fetchall()}

    def drain(self, dbname, tool, timeout, cancel=False):
        """Waits until the tool's role runs no statement; returns the wait.
        With `cancel`, statements still running after `timeout` are
        canceled (they belong to the benchmark's own role)."""
        started = time.monotonic()
        while True:
            with self.cursor(dbname or "postgres") as cur:
                cur.execute("SELECT count(*) FROM pg_stat_activity WHERE usename = %s "
                            "AND state = 'active'", (ROLES[tool],))
                if cur.fetchone()[0] == 0:
                    break
                if time.monotonic() - started > timeout:
                    if cancel:
                        cur.execute("SELECT pg_cancel_backend(pid) FROM pg_stat_activity "
                                    "WHERE usename = %s AND state = 'active'", (ROLES[tool],))
                    break
            time.sleep(0.5)
        return time.monotonic() - started

    # pg_stat_statements ------------------------------------------------------

    def stats_reset(self):
        with self.cursor("postgres") as cur:
            cur.execute("SELECT pg_stat_statements_reset()")

    def stats(self, dbname, tool):
        """Every statement the tool's role ran in `dbname` since the reset:
        [{query, calls, ms}], most expensive first."""
        with self.cursor(dbname) as cur:
            cur.execute("""
                SELECT query, calls, total_exec_time
                FROM pg_stat_statements
                WHERE userid = (SELECT oid FROM pg_roles WHERE rolname = %s)
                  AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                ORDER BY total_exec_time DESC""", (ROLES[tool],))
            return [{"query": q, "calls": c, "ms": t} for q, c, t in cur.fetchall()]


def totals(rows):
    return sum(r["calls"] for r in rows), sum(r["ms"] for r in rows)


def median(values):
    return statistics.median(values) if values else None
