"""The lock scenario: 300 client connections, of which 10 hold a seat row in
an open, idle transaction (the roots), 100 wait on those rows (10 per seat,
running the claim UPDATE) and 190 are idle. Measures the database cost of one
lock poll of each tool and whether it reports 100 waiting and 10 roots."""

import threading
import time

import measure
import pg
import procs

BLOCKERS, WAITERS_PER_SEAT, IDLE = 10, 10, 190

CLAIM = """UPDATE seats
   SET status = 'held', holder = %s, hold_expires_at = now() + interval '10 minutes',
       version = version + 1
 WHERE event_id = %s AND seat = %s
   AND (status = 'free' OR (status = 'held' AND hold_expires_at <= now()))"""


class LockStorm:
    def __init__(self, cluster, dbname, event_id=10):
        self.cluster, self.dbname, self.event_id = cluster, dbname, event_id
        self.idle, self.blockers, self.waiters, self.threads = [], [], [], []
        self.errors = []

    def start(self):
        with self.cluster.cursor(self.dbname) as cur:
            cur.execute("SELECT seat FROM seats WHERE event_id = %s AND status = 'free' "
                        "ORDER BY seat LIMIT %s", (self.event_id, BLOCKERS))
            self.seats = [row[0] for row in cur.fetchall()]
        for n in range(IDLE):
            conn = self.cluster.connect(self.dbname, application_name="bench-idle")
            conn.cursor().execute("SELECT 1")
            self.idle.append(conn)
        for n, seat in enumerate(self.seats):
            conn = self.cluster.connect(self.dbname, autocommit=False,
                                        application_name="bench-blocker")
            conn.cursor().execute(CLAIM, (f"blocker-{n}", self.event_id, seat))
            self.blockers.append(conn)  # idle in transaction, holding the row
        for n in range(BLOCKERS * WAITERS_PER_SEAT):
            conn = self.cluster.connect(self.dbname, autocommit=False,
                                        application_name="bench-waiter")
            self.waiters.append(conn)
            seat = self.seats[n % BLOCKERS]
            thread = threading.Thread(target=self._wait, args=(conn, f"waiter-{n}", seat),
                                      daemon=True)
            thread.start()
            self.threads.append(thread)
        measure.wait_for(lambda: self.waiting() == BLOCKERS * WAITERS_PER_SEAT, 120,
                         what="100 sessions waiting on the seat rows")
        procs.log(f"lock scenario: {self.clients()} client connections, {self.waiting()} "
                  f"waiting on {BLOCKERS} rows held by {BLOCKERS} idle transactions")

    def _wait(self, conn, fan, seat):
        try:
            conn.cursor().execute(CLAIM, (fan, self.event_id, seat))
        except Exception as error:  # canceled at the end: expected
            if "cancel" not in str(error):
                self.errors.append(str(error))
        finally:
            try:
                conn.rollback()
            except Exception:
                pass

    def waiting(self):
        with self.cluster.cursor(self.dbname) as cur:
            cur.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                        "AND wait_event_type = 'Lock' AND application_name = 'bench-waiter'")
            return cur.fetchone()[0]

    def clients(self):
        with self.cluster.cursor(self.dbname) as cur:
            cur.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                        "AND application_name LIKE 'bench-%%'")
            return cur.fetchone()[0]

    def stop(self):
        pids = []
        for conn in self.waiters:
            try:
                pids.append(conn.get_backend_pid())
            except Exception:
                pass
        deadline = time.monotonic() + 60
        while any(t.is_alive() for t in self.threads) and time.monotonic() < deadline:
            with self.cluster.cursor(self.dbname) as cur:
                cur.execute("SELECT pg_cancel_backend(pid) FROM unnest(%s::int[]) AS pid",
                            (pids,))
            time.sleep(0.2)
        for conn in self.blockers:
            conn.rollback()
        for conn in self.waiters + self.blockers + self.idle:
            try:
                conn.close()
            except Exception:
                pass
        self.idle, self.blockers, self.waiters = [], [], []


def measure_seatwatch(ctx, tool, dbname, plan):
    tool.start(dbname, "locks", poll="1h", locks="2s", holds="1h")
    try:
        measure.wait_for(tool.refreshed, plan["ready_timeout"], interval=0.5,
                         what="seatwatch's first poll")
        ctx.cluster.stats_reset()
        time.sleep(plan["lock_polls"] * 2 + 1)
        rows = ctx.cluster.stats(dbname, "seatwatch")
        text = measure.fetch(tool.port)
        cpu = measure.cpu_seconds(tool.pid)
    finally:
        tool.stop()
    polls = max((r["calls"] for r in rows if "pg_stat_activity" in r["query"]), default=0)
    calls, ms = pg.totals(rows)
    waiting, roots = tool.locks(text)
    duration = [v for l, v in measure.samples(text, "seatwatch_check_duration_seconds")
                if l.get("check") == "locks"]
    return {
        "polls": polls,
        "db_ms_per_poll": ms / polls if polls else None,
        "db_statements_per_poll": calls / polls if polls else None,
        "check_duration_ms": duration[0] * 1e3 if duration else None,
        "waiting": waiting, "roots": roots,
        "other": {
            "max_blocked_by_one_root": sum(v for _, v in measure.samples(
                text, "seatwatch_lock_max_blocked_by_one_root")),
            "chain_max_depth": sum(v for _, v in measure.samples(
                text, "seatwatch_lock_chain_max_depth")),
            "hot_row_waiters": sum(v for _, v in measure.samples(
                text, "seatwatch_lock_hot_row_waiters")),
        },
        "statements": rows,
    }


def measure_postgres_exporter(ctx, tool, dbname, plan):
    tool.start(dbname, "locks", names=("locks",))
    try:
        measure.wait_for(tool.refreshed, 60, what="postgres_exporter")
        ctx.cluster.stats_reset()
        scraper = measure.Scraper(tool.port)
        latencies, text = [], ""
        for _ in range(plan["lock_polls"]):
            elapsed, _, text = scraper.get()
            latencies.append(elapsed * 1e3)
        scraper.close()
        rows = ctx.cluster.stats(dbname, "postgres_exporter")
    finally:
        tool.stop()
    calls, ms = pg.totals(rows)
    n = plan["lock_polls"]
    waiting, roots = tool.locks(text)
    return {"polls": n, "db_ms_per_poll": ms / n, "db_statements_per_poll": calls / n,
            "scrape_p50_ms": pg.median(latencies), "waiting": waiting, "roots": roots,
            "statements": rows}


def measure_sql_exporter(ctx, tool, dbname, plan):
    tool.start(dbname, "locks", interval="2s", names=("locks",))
    try:
        measure.wait_for(tool.refreshed, 60, what="sql_exporter's first refresh")
        ctx.cluster.stats_reset()
        time.sleep(plan["lock_polls"] * 2 + 1)
        rows = ctx.cluster.stats(dbname, "sql_exporter")
        text = measure.fetch(tool.port)
    finally:
        tool.stop()
    polls = max((r["calls"] for r in rows if "pg_blocking_pids" in r["query"]), default=0)
    calls, ms = pg.totals(rows)
    waiting, roots = tool.locks(text)
    return {"polls": polls, "db_ms_per_poll": ms / polls if polls else None,
            "db_statements_per_poll": calls / polls if polls else None,
            "waiting": waiting, "roots": roots, "statements": rows}


def run(ctx, dbname, events, plan, tools):
    procs.log(f"lock scenario on {dbname}")
    ctx.current_db = dbname
    storm = LockStorm(ctx.cluster, dbname)
    result = {"database": dbname, "blockers": BLOCKERS,
              "waiting": BLOCKERS * WAITERS_PER_SEAT, "idle": IDLE, "tools": {}}
    try:
        storm.start()
        result["client_connections"] = storm.clients()
        measures = {"seatwatch": measure_seatwatch,
                    "postgres_exporter": measure_postgres_exporter,
                    "sql_exporter": measure_sql_exporter}
        for tool in tools:
            ctx.check_deadline()
            entry = measures[tool.name](ctx, tool, dbname, plan)
            result["tools"][tool.name] = entry
            procs.log(f"lock scenario: {tool.name}: {entry['db_ms_per_poll']:.2f} ms of database "
                      f"time per poll, waiting {entry['waiting']}, roots {entry['roots']}")
            if storm.waiting() != BLOCKERS * WAITERS_PER_SEAT:
                raise RuntimeError("the lock scenario fell apart during the measurement")
    finally:
        storm.stop()
    result["driver_errors"] = storm.errors[:5]
    return result
