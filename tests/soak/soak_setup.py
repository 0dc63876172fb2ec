"""What the soak runs against: the scratch cluster (its own, or the CTest
fixture's), the database with the reference schema, grants.sql and the seed,
and seatwatch's config made from the shipped example."""

import os
import re

import procs
import seatwatch_harness
import soak_load

DBNAME = "seatwatch_soak"

# The daemon's timing in the soak (config/seatwatch.toml with these values):
# short, so that a 2-minute soak sees many polls.
POLL_INTERVAL = 2
STATEMENT_TIMEOUT = 2
CONNECT_TIMEOUT = 2
RECONNECT_MAX_BACKOFF = 2


class SoakCluster(seatwatch_harness.Cluster):
    """The harness's scratch cluster in `pgdir`, either started here (own,
    stopped and destroyed at exit, with server `options`) or the CTest
    fixture's, already running (left running)."""

    def __init__(self, root, pgdir, own, options=""):
        super().__init__(pgdir, "soak")
        self.dir, self.own, self.options = pgdir, own, options
        self.scratch = os.path.join(root, "scripts", "pg-scratch")

    def _env(self):
        return dict(os.environ, PG_SCRATCH_OPTS=self.options) if self.own else None

    def start(self):
        procs.run([self.scratch, "start", self.dir], timeout=120, env=self._env())
        if self.own:
            procs.on_exit(self.destroy)
        self.load_env()
        procs.log(f"PostgreSQL at 127.0.0.1:{self.port} (socket {self.host})")

    def restart(self):
        result = procs.run([self.scratch, "restart", self.dir], timeout=120, env=self._env(),
                           check=False)
        self.load_env()
        return result

    def ensure_running(self):
        procs.run([self.scratch, "start", self.dir], timeout=120, env=self._env(), check=False)
        self.load_env()

    def destroy(self):
        procs.run([self.scratch, "destroy", self.dir], timeout=120, check=False)

    def drop(self, dbname):
        with self.cursor("postgres") as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')

    def psql(self, dbname, *args, timeout=3600, input_text=None):
        env = dict(os.environ, PGHOST=self.host, PGPORT=str(self.port), PGUSER="postgres")
        return procs.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-U", "postgres",
                          "-d", dbname, *args], timeout=timeout, env=env, input_text=input_text)

    def connect_as(self, user, dbname, application_name):
        return self.connect(dbname, user=user, application_name=application_name,
                            connect_timeout=3)


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
                             "update make_config in tests/soak/soak_setup.py")
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
