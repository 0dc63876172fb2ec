"""What a tool costs the database over a window.

Database time: the sum of pg_stat_statements.total_exec_time of every
statement the tool's roles ran in the database during the window (a diff of
two snapshots, so nothing is reset under the others). For seatwatch that is
its checks' role and its REPLICATION role, so the slot functions (creating
and draining the slot, decoding included) count. With parallel query this is
the leader's wall time, not the CPU of its workers.

CPU: user + system time of the tool's server processes, its backends and
its walsender (a streaming feed decodes there, and no statement shows it),
from /proc/PID/stat and schedstat, by backend_type too, plus the postmaster's reaped-children CPU (cutime + cstime),
which is where the CPU of exited parallel workers goes. Nothing else exits
during a window (autovacuum is off, every other client keeps its
connection), so that part belongs to the tool's parallel queries."""

import os
import threading
import time

TICKS = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    """CPU seconds of a live process: schedstat (ns) when readable, else
    utime + stime."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    except (OSError, IndexError):
        return None


def children_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / TICKS


class Window:
    """Open with start(), close with end(); then .result."""

    def __init__(self, conn, dbname, roles, postmaster_pid):
        self.conn, self.dbname, self.roles = conn, dbname, list(roles)
        self.postmaster = postmaster_pid
        self.result = None
        self.types = {}
        self.sessions = {}

    def _statements(self):
        with self.conn.cursor() as cur:
            cur.execute("""
                SELECT s.userid::regrole::text, s.queryid, s.query, s.calls, s.total_exec_time
                FROM pg_stat_statements s
                WHERE s.userid IN (SELECT oid FROM pg_roles WHERE rolname = ANY (%s))
                  AND s.dbid = (SELECT oid FROM pg_database WHERE datname = %s)""",
                        (self.roles, self.dbname))
            return {(r, q): (text, calls, ms) for r, q, text, calls, ms in cur.fetchall()}

    def _backends(self):
        with self.conn.cursor() as cur:
            cur.execute("SELECT pid, backend_type, application_name FROM pg_stat_activity "
                        "WHERE usename = ANY (%s)", (self.roles,))
            rows = cur.fetchall()
        self.types.update({pid: kind for pid, kind, _ in rows})
        self.sessions.update({pid: f"{kind} ({name})" for pid, kind, name in rows})
        return {pid: proc_cpu(pid) for pid, _, _ in rows}

    def start(self):
        self.t0 = time.monotonic()
        self.stmts0 = self._statements()
        self.cpu0 = self._backends()
        self.children0 = children_cpu(self.postmaster)

    def end(self):
        seconds = time.monotonic() - self.t0
        stmts1 = self._statements()
        cpu1 = self._backends()
        children = children_cpu(self.postmaster) - self.children0
        rows = []
        for key, (text, calls, ms) in stmts1.items():
            _, calls0, ms0 = self.stmts0.get(key, (text, 0, 0.0))
            if calls - calls0 > 0:
                rows.append({"role": key[0], "query": text, "calls": calls - calls0,
                             "ms": ms - ms0})
        rows.sort(key=lambda r: -r["ms"])
        backend_cpu = 0.0
        by_type = {}
        by_session = {}
        for pid, c1 in cpu1.items():
            if c1 is not None:
                used = c1 - (self.cpu0.get(pid) or 0.0)
                backend_cpu += used
                kind = self.types.get(pid, "?")
                by_type[kind] = by_type.get(kind, 0.0) + used
                session = self.sessions.get(pid, "?")
                by_session[session] = by_session.get(session, 0.0) + used
        db_ms = sum(r["ms"] for r in rows)
        minutes = seconds / 60
        self.result = {
            "seconds": seconds,
            "db_ms": db_ms,
            "db_ms_per_min": db_ms / minutes,
            "statements": sum(r["calls"] for r in rows),
            "backend_cpu_s": backend_cpu,
            "worker_cpu_s": children,
            "cpu_s_per_min": (backend_cpu + children) / minutes,
            "backends": len(cpu1),
            "cpu_s_by_backend_type": by_type,
            # the tool's sessions apart: its checks, its feed's plain session
            # and its walsender, by backend type and application_name
            "cpu_s_by_session": by_session,
            "top": rows[:12],
        }
        return self.result


class RetainedWal:
    """The WAL the database keeps for the tool's logical slots, sampled
    every `period` seconds on a connection of its own from start() to end():
    pg_current_wal_lsn() - restart_lsn (what a checkpoint cannot recycle) and
    - confirmed_flush_lsn (what the feed has not yet confirmed), the max
    over the tool's slots (`prefix`*) at each sample, and how many slots
    there were."""

    QUERY = """
        SELECT coalesce(max(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)), 0)::bigint,
               coalesce(max(pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)), 0)::bigint,
               count(*)
        FROM pg_replication_slots
        WHERE slot_type = 'logical' AND slot_name LIKE %s"""

    def __init__(self, connect, prefix, period=0.5):
        self.connect, self.prefix, self.period = connect, prefix, period
        self.samples = []  # (restart bytes, confirmed bytes, slots)
        self.errors = 0
        self._stop = threading.Event()
        self._thread = None

    def start(self):
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        conn = self.connect()
        try:
            while not self._stop.is_set():
                try:
                    with conn.cursor() as cur:
                        cur.execute(self.QUERY, (self.prefix.replace("_", r"\_") + "%",))
                        self.samples.append(tuple(cur.fetchone()))
                except Exception:  # a sample lost is counted, not fatal to the run
                    self.errors += 1
                self._stop.wait(self.period)
        finally:
            conn.close()

    def end(self):
        self._stop.set()
        self._thread.join()
        restart = sorted(s[0] for s in self.samples)
        out = {"samples": len(self.samples), "errors": self.errors}
        if restart:
            out.update(restart_bytes_max=restart[-1],
                       restart_bytes_median=restart[len(restart) // 2],
                       confirmed_bytes_max=max(s[1] for s in self.samples),
                       slots_max=max(s[2] for s in self.samples),
                       slots_min=min(s[2] for s in self.samples))
        return out
