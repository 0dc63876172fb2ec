"""What the soak runs against: the scratch cluster (its own, or the CTest
fixture's), the database with the reference schema, grants.sql and the seed,
and seatwatch's config made from the shipped example."""

import os
import re

import psycopg2

import pg
import procs
import soak_load

DBNAME = "seatwatch_soak"

# The daemon's timing in the soak (config/seatwatch.toml with these values):
# short, so that a 2-minute soak sees many polls.
POLL_INTERVAL = 2
STATEMENT_TIMEOUT = 2
CONNECT_TIMEOUT = 2
RECONNECT_MAX_BACKOFF = 2


class SoakCluster(pg.Cluster):
    """The bench's cluster, either started here (own, stopped and destroyed
    at exit) or the CTest fixture's, already running (left running)."""

    def __init__(self, root, pgdir, own, options=""):
        super().__init__(root, os.path.dirname(pgdir), options)
        self.dir, self.own = pgdir, own

    def _env(self):
        return dict(os.environ, PG_SCRATCH_OPTS=self.options) if self.own else None

    def start(self):
        if self.own:
            super().start()
            procs.on_exit(self.destroy)
            return
        procs.run([self.scratch, "start", self.dir], timeout=120)
        self._read_env()

    def _read_env(self):
        values = {}
        with open(os.path.join(self.dir, "env")) as f:
            for line in f:
                key, _, value = line.strip().removeprefix("export ").partition("=")
                values[key] = value.strip("'\"")
        self.host, self.port = values["PGHOST"], int(values["PGPORT"])
        self.env = dict(os.environ, PGHOST=self.host, PGPORT=str(self.port), PGUSER="postgres")
        self.pgbin = self.pgbin or sorted(
            (d for d in (f"/usr/lib/postgresql/{v}/bin" for v in os.listdir("/usr/lib/postgresql"))
             if os.path.exists(os.path.join(d, "pg_ctl"))),
            key=lambda d: int(d.split("/")[4]))[-1]

    def restart(self):
        result = procs.run([self.scratch, "restart", self.dir], timeout=120, env=self._env(),
                           check=False)
        self._read_env()
        return result

    def ensure_running(self):
        procs.run([self.scratch, "start", self.dir], timeout=120, env=self._env(), check=False)
        self._read_env()

    def destroy(self):
        # Newer pg-scratch keeps the cluster in a private folder until destroy.
        procs.run([self.scratch, "destroy", self.dir], timeout=120, check=False)

    def connect_as(self, user, dbname, application_name):
        conn = psycopg2.connect(host=self.host, port=self.port, user=user, dbname=dbname,
                                application_name=application_name, connect_timeout=3)
        conn.autocommit = True
        return conn


def make_config(root, port, path, template=None):
    """config/seatwatch.toml (or `template`), the booking pack as shipped, with
    absolute paths, the soak's port and short timings."""
    with open(template or os.path.join(root, "config/seatwatch.toml")) as f:
        text = f.read()
    substitutions = [
        ('"../queries/', f'"{root}/queries/'),
        ('listen = "127.0.0.1:9646"', f'listen = "127.0.0.1:{port}"'),
        ('interval = "10s"', f'interval = "{POLL_INTERVAL}s"'),
        ('statement_timeout = "5s"', f'statement_timeout = "{STATEMENT_TIMEOUT}s"'),
        ('connect_timeout = "5s"', f'connect_timeout = "{CONNECT_TIMEOUT}s"'),
        ('reconnect_max_backoff = "10s"', f'reconnect_max_backoff = "{RECONNECT_MAX_BACKOFF}s"'),
    ]
    for old, new in substitutions:
        if old not in text:
            raise SystemExit(f"bench/soak: config/seatwatch.toml has no {old!r}; "
                             "update make_config in bench/driver/soak.py")
        text = text.replace(old, new)
    with open(path, "w") as f:
        f.write(text)
    locks = re.search(r"^\[locks\]\s*\nenabled\s*=\s*(\w+)", text, re.M)
    cleanup = re.search(r"^\[cleanup\]\s*\nenabled\s*=\s*(\w+)", text, re.M)
    lanes = 1 + (1 if locks and locks.group(1) == "true" else 0)
    cleanups = 1 if cleanup and cleanup.group(1) == "true" else 0
    return lanes, cleanups


def setup_database(cluster, root):
    with cluster.cursor("postgres") as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {DBNAME} WITH (FORCE)")
        cur.execute(f"CREATE DATABASE {DBNAME}")
        for role in ("soak_app", "soak_filler"):
            cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,))
            if cur.fetchone() is None:
                cur.execute(f"CREATE ROLE {role} LOGIN")
        cur.execute("SHOW max_connections")
        max_connections = int(cur.fetchone()[0])
    cluster.psql(DBNAME, "-f", os.path.join(root, "queries/booking/schema.sql"), timeout=120)
    cluster.psql(DBNAME, "-f", os.path.join(root, "queries/booking/grants.sql"), timeout=120,
                 input_text="")
    with cluster.cursor(DBNAME) as cur:
        cur.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON seats, tickets, payments "
                    "TO soak_app")
        cur.execute(soak_load.seed_sql())
        cur.execute("ANALYZE")
    return max_connections
