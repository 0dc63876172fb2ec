"""One harness for the Python tests, the soak and the benchmarks: a scratch
cluster made with scripts/pg-scratch (its own, in a temporary folder, or the
CTest fixture's), a primary and its streaming standby, the booking schema
with the demo data and its injected violations, the built daemon with a
generated config on a free loopback port, /metrics scraped and parsed, and
waits for conditions with a deadline.

Everything run() starts is ended at exit, whatever happens: the daemon by
its PID, both clusters with `pg-scratch destroy`, the temporary folder
removed. On a failure the tails of the daemon's and the servers' logs are
printed first.

The repository is SEATWATCH_SOURCE_DIR (by default the checkout this file is
in) and the daemon SEATWATCH_BINARY (by default build/daemon/seatwatch);
CTest sets both.
"""
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request

import psycopg2

SRC = os.environ.get("SEATWATCH_SOURCE_DIR") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("SEATWATCH_BINARY") or os.path.join(SRC, "build", "daemon", "seatwatch")
SCRATCH = os.path.join(SRC, "scripts", "pg-scratch")
QUERIES = os.path.join(SRC, "queries", "booking")
DB = "booking"
WAIT = 60  # seconds for anything that must happen: a failure bound, not a measure

# The violations scripts/demo-data.sql injects, as (invariant, event_id):
# violations (the booking pack with the fan limit at 4).
DEMO_VIOLATIONS = {
    ("sold_seat_without_ticket", "3"): 2,
    ("ticket_without_sold_seat", "5"): 1,
    ("confirmed_payment_without_ticket", "7"): 1,
    ("double_confirmed_payment", "9"): 1,
    ("fan_over_limit", "11"): 1,
    ("ticket_without_sold_seat", "13"): 1,
    ("ticket_without_confirmed_payment", "15"): 1,
}
INVARIANTS = sorted({name for name, _ in DEMO_VIOLATIONS})

# The cleanup leader's advisory lock as pg_locks shows it (cleanup_leader.h).
LEADER_LOCK = (1936023924, 2002875491, 1)


class Failure(Exception):
    pass


def note(message):
    print(message, flush=True)


def wait_for(predicate, what, timeout=WAIT, interval=0.25):
    """Calls predicate until it returns something truthy, and returns that.
    Fails after `timeout` seconds naming `what` and the last value seen."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            last = predicate()
        except (psycopg2.Error, OSError) as e:  # a server or the daemon not (yet) there
            last = e
        else:
            if last:
                return last
        if time.monotonic() >= deadline:
            raise Failure("no %s within %d s (last seen: %r)" % (what, timeout, last))
        time.sleep(interval)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def tail(path, lines):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return "(%s)\n" % e


# --- clusters ------------------------------------------------------------------

def scratch(*args, opts=""):
    env = dict(os.environ, PG_SCRATCH_OPTS=opts)
    result = subprocess.run([SCRATCH] + list(args), env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise Failure("pg-scratch %s failed (%d):\n%s" % (" ".join(args), result.returncode, result.stderr))
    return result.stdout


def read_env_file(path):
    """The assignments of a pg-scratch env file (`export PGHOST=...` lines)."""
    env = {}
    with open(path) as f:
        for line in f:
            words = shlex.split(line)
            if words:
                key, _, value = words[-1].partition("=")
                env[key] = value
    return env


def pg_bin_dir():
    """The newest installed PostgreSQL's bin folder (pg_ctl, psql, ...)."""
    return sorted(
        (d for d in (f"/usr/lib/postgresql/{v}/bin" for v in os.listdir("/usr/lib/postgresql"))
         if os.path.exists(os.path.join(d, "pg_ctl"))),
        key=lambda d: int(d.split("/")[4]))[-1]


class Cluster:
    """A cluster made by pg-scratch in `path` (a primary or a standby)."""

    def __init__(self, path, name):
        self.path = path
        self.name = name
        self.host = None
        self.port = None

    @classmethod
    def attach(cls, path, name="scratch"):
        """A cluster pg-scratch already runs in `path` (the CTest fixture's)."""
        cluster = cls(path, name)
        cluster.load_env()
        return cluster

    def load_env(self):
        env = read_env_file(os.path.join(self.path, "env"))
        self.host = env["PGHOST"]
        self.port = int(env["PGPORT"])

    def pg_env(self):
        return dict(os.environ, PGHOST=self.host, PGPORT=str(self.port), PGUSER="postgres",
                    PGOPTIONS="-c client_min_messages=warning")

    def dsn(self, database=DB, **extra):
        """A loopback TCP DSN, as the daemon gets it."""
        parts = ["host=127.0.0.1", "port=%d" % self.port, "user=postgres", "dbname=%s" % database]
        parts += ["%s=%s" % item for item in extra.items()]
        return " ".join(parts)

    def connect(self, database=DB, user="postgres", autocommit=True, application_name=None,
                connect_timeout=5):
        conn = psycopg2.connect(host=self.host, port=self.port, user=user, dbname=database,
                                application_name=application_name,
                                connect_timeout=connect_timeout)
        conn.autocommit = autocommit
        return conn

    @contextlib.contextmanager
    def cursor(self, database=DB, user="postgres"):
        """A cursor on a fresh autocommit connection, closed afterwards."""
        conn = self.connect(database, user=user)
        try:
            with conn.cursor() as cur:
                yield cur
        finally:
            conn.close()

    def rows(self, sql, args=None, database=DB):
        conn = self.connect(database)
        try:
            with conn.cursor() as cur:
                cur.execute(sql, args)
                return cur.fetchall() if cur.description else []
        finally:
            conn.close()

    def scalar(self, sql, args=None, database=DB):
        return self.rows(sql, args, database)[0][0]

    def execute(self, sql, args=None, database=DB):
        self.rows(sql, args, database)

    def psql(self, database, *args, input_text=None):
        """psql with `args` on `database`; fails with its stderr."""
        result = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", database,
                                 *args], env=self.pg_env(), input=input_text,
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise Failure("psql %s on the %s failed:\n%s" % (" ".join(args), self.name,
                                                             result.stderr))
        return result.stdout

    def psql_file(self, path, database=DB):
        self.psql(database, "-f", path)

    def log_path(self):
        return os.path.join(self.path, "postgres.log")

    def log(self):
        with open(self.log_path(), errors="replace") as f:
            return f.read()

    def app_names(self, database=DB):
        """application_name of every seatwatch session connected to `database`."""
        return sorted(r[0] for r in self.rows(
            "SELECT application_name FROM pg_stat_activity"
            " WHERE datname = %s AND application_name LIKE 'seatwatch%%'", (database,)))

    def in_recovery(self):
        return self.scalar("SELECT pg_is_in_recovery()", database="postgres")


class Pair:
    """A primary with the booking database and demo data, and its standby."""

    def __init__(self, work, standby_opts="", changes_setup=False):
        self.work = work
        self.primary = Cluster(os.path.join(work, "primary"), "primary")
        self.standby = Cluster(os.path.join(work, "standby"), "standby")
        self.standby_opts = standby_opts
        self.changes_setup = changes_setup
        self.started = []

    def start(self):
        self.started.append(self.primary)
        scratch("start", self.primary.path)
        self.primary.load_env()
        scratch("createdb", self.primary.path, DB)
        self.primary.psql_file(os.path.join(QUERIES, "schema.sql"))
        self.primary.psql_file(os.path.join(SRC, "scripts", "demo-data.sql"))
        if self.changes_setup:
            self.primary.psql_file(os.path.join(QUERIES, "changes-setup.sql"))
        self.started.append(self.standby)
        scratch("standby", self.standby.path, self.primary.path, opts=self.standby_opts)
        self.standby.load_env()
        if self.standby.in_recovery() is not True:
            raise Failure("the standby is not in recovery")
        note("primary on port %d, standby on port %d" % (self.primary.port, self.standby.port))

    def wait_replayed(self, standby=None):
        """Waits until the standby has replayed everything the primary wrote so far."""
        standby = standby or self.standby
        lsn = self.primary.scalar("SELECT pg_current_wal_lsn()::text", database="postgres")
        wait_for(lambda: standby.scalar("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (lsn,),
                                        database="postgres"),
                 "replay on the %s up to %s" % (standby.name, lsn))

    def destroy(self):
        for cluster in reversed(self.started):
            try:
                scratch("destroy", cluster.path)
            except Failure as e:
                sys.stderr.write("%s\n" % e)
        self.started = []


# --- data ----------------------------------------------------------------------

def sell_seat_without_ticket(cluster, event_id):
    """The injected violation: a free seat (no payment ever) of `event_id`
    sold by an admin tool, no ticket. Commits with synchronous_commit on, so
    the standby can receive it at once. Returns the seat."""
    conn = cluster.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SET synchronous_commit = on")
            cur.execute(
                "UPDATE seats SET status = 'sold', holder = 'box-office', version = version + 1"
                " WHERE (event_id, seat) = (SELECT event_id, seat FROM seats s WHERE event_id = %s"
                "   AND status = 'free' AND NOT EXISTS (SELECT FROM payments p"
                "     WHERE p.event_id = s.event_id AND p.seat = s.seat)"
                "   ORDER BY seat LIMIT 1) RETURNING seat", (event_id,))
            row = cur.fetchone()
    finally:
        conn.close()
    if row is None:
        raise Failure("event %d has no free seat to sell" % event_id)
    return row[0]


def expire_holds(cluster, event_id, count):
    """Holds `count` free seats (no payment) of `event_id` with an expiry in
    the past: work for the cleanup. Returns how many it made."""
    return cluster.scalar(
        "WITH h AS (UPDATE seats SET status = 'held', holder = 'fan-gone',"
        "   hold_expires_at = now() - interval '5 minutes', version = version + 1"
        " WHERE (event_id, seat) IN (SELECT event_id, seat FROM seats s WHERE event_id = %s"
        "   AND status = 'free' AND NOT EXISTS (SELECT FROM payments p"
        "     WHERE p.event_id = s.event_id AND p.seat = s.seat) ORDER BY seat LIMIT %s)"
        " RETURNING 1) SELECT count(*) FROM h", (event_id, count))


def expired_holds(cluster):
    return cluster.scalar("SELECT count(*) FROM seats WHERE status = 'held'"
                          " AND (hold_expires_at IS NULL OR hold_expires_at <= now())")


# --- the daemon ----------------------------------------------------------------

def toml_string(value):
    return json.dumps(value)


def booking_config(http_port, dsn, checks_dsn=None, interval="1s", statement_timeout="5s",
                   reconnect_max_backoff="2s", cleanup=None, changes=None, extra=""):
    """The booking pack (reconciliation invariants, event_inventory, holds,
    locks) polling every `interval`. cleanup: None (off) or a dict of
    [cleanup] keys over enabled = true; changes: None (off) or a dict of
    [changes] keys over enabled = true. `extra` is appended as is."""
    q = lambda name: toml_string(os.path.join(QUERIES, name))  # noqa: E731
    lines = [
        'log_level = "info"',
        "",
        "[database]",
        "dsn = %s" % toml_string(dsn),
        'application_name = "seatwatch"',
        'connect_timeout = "2s"',
        "statement_timeout = %s" % toml_string(statement_timeout),
        'lock_timeout = "100ms"',
        "reconnect_max_backoff = %s" % toml_string(reconnect_max_backoff),
        "",
    ]
    if checks_dsn is not None:
        lines += ["[checks]", "dsn = %s" % toml_string(checks_dsn), ""]
    # Both booking entries recheck only the events the change feed names.
    incremental = [
        'key = "event_id"',
        'tables = { seats = "event_id", tickets = "event_id", payments = "event_id" }',
        "scoped_sql = %s" % q("reconciliation.scoped.sql"),
        'expiry_column = "next_expiry_unix"',
    ]
    lines += [
        "[http]",
        'listen = "127.0.0.1:%d"' % http_port,
        "",
        "[poll]",
        "interval = %s" % toml_string(interval),
        "",
        "[[invariant]]",
        'name = "booking_reconciliation"',
        "sql = %s" % q("reconciliation.sql"),
        'invariant_column = "invariant"',
        "invariants = [%s]" % ", ".join(toml_string(name) for name in [
            "sold_seat_without_ticket", "ticket_without_sold_seat",
            "confirmed_payment_without_ticket", "ticket_without_confirmed_payment",
            "double_confirmed_payment", "fan_over_limit"]),
        'labels = ["event_id"]',
        'value = "violations"',
        "params = [4]",
    ] + incremental + [
        "",
        "[[metric]]",
        'name = "event_inventory"',
        "sql = %s" % q("reconciliation.sql"),
        'labels = ["event_id", "kind"]',
        'value = "count"',
        "params = [4]",
    ] + incremental + [
        "",
        "[locks]",
        "enabled = true",
        "interval = %s" % toml_string(interval),
        'statement_timeout = "1s"',
        "",
        "[holds]",
        "sql = %s" % q("holds.sql"),
        "interval = %s" % toml_string(interval),
        "",
    ]
    if cleanup is not None:
        keys = {"enabled": True, "sql": os.path.join(QUERIES, "cleanup_expired_holds.sql"),
                "dry_run_sql": os.path.join(QUERIES, "cleanup_expired_holds.dry_run.sql"),
                "interval": "1s", "batch_pause": "0ms"}
        keys.update(cleanup)
        lines += ["[cleanup]"] + ["%s = %s" % (k, toml_value(v)) for k, v in keys.items()] + [""]
    if changes is not None:
        keys = {"enabled": True, "interval": "500ms"}
        keys.update(changes)
        lines += ["[changes]"] + ["%s = %s" % (k, toml_value(v)) for k, v in keys.items()] + [""]
    return "\n".join(lines) + "\n" + extra


def toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return toml_string(value)


class Metrics:
    """One /metrics scrape: samples as (name, labels dict, value)."""

    LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$')
    LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')

    def __init__(self, text):
        self.text = text
        self.samples = []
        for line in text.split("\n"):
            if not line or line.startswith("#"):
                continue
            m = self.LINE.match(line)
            if not m:
                continue
            labels = dict(self.LABEL.findall(m.group(2) or ""))
            self.samples.append((m.group(1), labels, float(m.group(3))))

    def find(self, name, **labels):
        """(labels, value) of every sample of `name` whose labels include `labels`."""
        want = {k: str(v) for k, v in labels.items()}
        return [(l, v) for n, l, v in self.samples
                if n == name and all(l.get(k) == x for k, x in want.items())]

    def get(self, name, **labels):
        """The value of the one sample of `name` with exactly these labels, or None."""
        want = {k: str(v) for k, v in labels.items()}
        for n, l, v in self.samples:
            if n == name and l == want:
                return v
        return None

    def total(self, name, **labels):
        return sum(v for _, v in self.find(name, **labels))

    def violations(self):
        """{(invariant, event_id): n} of every non-zero seatwatch_invariant_violations."""
        return {(l.get("invariant"), l.get("event_id")): int(v)
                for l, v in self.find("seatwatch_invariant_violations") if v != 0}


def fetch(port, path="/metrics", timeout=10):
    """GET `path` from the daemon on 127.0.0.1:port: the body, or None while
    nothing answers (or not with 200)."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=timeout) as r:
            return r.read().decode()
    except (urllib.error.URLError, OSError):
        return None


class Daemon:
    """The built daemon on a config written to `work`; `args` are more
    command-line arguments (e.g. ["--listen", "127.0.0.1:PORT"], which then
    names the port scraped instead of the config's [http] listen)."""

    def __init__(self, work, config_text, name="seatwatch", args=()):
        self.work = work
        self.name = name
        self.args = list(args)
        self.http_port = None
        self.config_text = config_text
        self.config_path = os.path.join(work, name + ".toml")
        self.log_path = os.path.join(work, name + ".log")
        self.proc = None

    def start(self):
        with open(self.config_path, "w") as f:
            f.write(self.config_text)
        # Nothing of the caller's environment reaches libpq or the overrides.
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("PG") and not k.startswith("SEATWATCH_")}
        self.log_file = open(self.log_path, "w")
        self.proc = subprocess.Popen([BIN, "--config", self.config_path] + self.args, env=env,
                                     stdout=self.log_file, stderr=subprocess.STDOUT)
        note("%s started (pid %d)" % (self.name, self.proc.pid))

    def port(self):
        if "--listen" in self.args:
            return int(self.args[self.args.index("--listen") + 1].rpartition(":")[2])
        return int(re.search(r'listen = "127\.0\.0\.1:(\d+)"', self.config_text).group(1))

    def scrape(self):
        """The current /metrics, or None while the daemon does not answer."""
        if self.proc.poll() is not None:
            raise Failure("%s exited with %d" % (self.name, self.proc.returncode))
        text = fetch(self.port())
        return None if text is None else Metrics(text)

    def wait_metrics(self, predicate, what, timeout=WAIT):
        """Waits until a scrape satisfies predicate(metrics); returns that scrape."""
        def attempt():
            m = self.scrape()
            return m if m is not None and predicate(m) else None
        return wait_for(attempt, what, timeout)

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def log_lines(self, pattern):
        return [line for line in self.log().split("\n") if re.search(pattern, line)]

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log_file.close()
        self.proc = None


# --- running a test --------------------------------------------------------------

class Env:
    """What one test made: its folder, its pair, its daemons."""

    def __init__(self, name):
        self.name = name
        self.work = tempfile.mkdtemp(prefix="seatwatch-replica.")
        os.chmod(self.work, 0o755)
        self.pairs = []
        self.daemons = []

    def pair(self, **kwargs):
        pair = Pair(self.work, **kwargs)
        self.pairs.append(pair)
        pair.start()
        return pair

    def daemon(self, config_text, name="seatwatch", args=()):
        daemon = Daemon(self.work, config_text, name, args)
        self.daemons.append(daemon)
        daemon.start()
        return daemon

    def dump_logs(self):
        for daemon in self.daemons:
            sys.stderr.write("--- %s log (tail) ---\n%s" % (daemon.name, tail(daemon.log_path, 80)))
        for pair in self.pairs:
            for cluster in (pair.primary, pair.standby):
                sys.stderr.write("--- %s postgres.log (tail) ---\n%s" % (cluster.name, tail(cluster.log_path(), 30)))

    def close(self):
        for daemon in self.daemons:
            try:
                daemon.stop()
            except Exception as e:  # keep tearing down
                sys.stderr.write("stopping %s: %s\n" % (daemon.name, e))
        for pair in self.pairs:
            pair.destroy()
        shutil.rmtree(self.work, ignore_errors=True)


def run(name, body):
    """Runs body(env) and exits 0, or prints why and the logs and exits 1.
    SIGTERM and SIGINT (a CTest timeout, Ctrl-C) tear down the same way."""
    def on_signal(signum, _frame):
        raise Failure("interrupted by signal %d" % signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    env = Env(name)
    code = 0
    try:
        body(env)
        note("ok: %s" % name)
    except Exception as e:  # every failure ends the same way: logs, teardown, exit 1
        if not isinstance(e, Failure):
            traceback.print_exc()
        env.dump_logs()
        sys.stderr.write("FAIL: %s: %s\n" % (name, e))
        code = 1
    finally:
        env.close()
    sys.exit(code)


def expect(condition, message):
    if not condition:
        raise Failure(message)


def expect_equal(actual, expected, what):
    if actual != expected:
        raise Failure("%s: expected %r, got %r" % (what, expected, actual))
