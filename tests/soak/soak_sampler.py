"""What the soak observes, once a second:

Scrapes: GET /metrics on a fresh connection with a short timeout (a
Prometheus with a 2 s scrape timeout), parsed into seatwatch_up (per lane when
it has labels), seatwatch_invariant_ok per invariant and
seatwatch_check_success per check; and the daemon's threads, open fds and
VmRSS from /proc/PID.

Backends: how many sessions of seatwatch (application_name seatwatch*) the
server has, on a connection of its own opened before any fault."""

import http.client
import os
import threading
import time

import psycopg2

import seatwatch_harness


def labels_key(labels):
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def parse(text):
    metrics = seatwatch_harness.Metrics(text)
    return {
        "up": {labels_key(l): v for l, v in metrics.find("seatwatch_up")},
        "invariant_ok": {l.get("invariant", ""): v
                         for l, v in metrics.find("seatwatch_invariant_ok")},
        "check_success": {l.get("check", ""): v
                          for l, v in metrics.find("seatwatch_check_success")},
    }


def scrape(port, timeout):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/metrics", headers={"Connection": "close"})
        response = conn.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}")
        return body.decode()
    finally:
        conn.close()


def stacks_resident(pid):
    """Bytes resident in thread stacks: anonymous rw-p mappings with a
    PROT_NONE guard mapping right below them (how glibc lays out a pthread
    stack; a malloc arena has its PROT_NONE reserve above instead). A stack
    grows in RSS as deeper calls touch it, up to its mapped size: bounded,
    not a leak, so the RSS slope is judged without it."""
    total = 0
    previous_end, previous_guard = None, False
    current = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            if line[0] in "0123456789abcdef" and "-" in line.split(" ", 1)[0]:
                fields = line.split()
                start, end = (int(x, 16) for x in fields[0].split("-"))
                anonymous = len(fields) < 6
                current = anonymous and fields[1] == "rw-p" and previous_guard and \
                    previous_end == start
                previous_guard = anonymous and fields[1] == "---p"
                previous_end = end
            elif current and line.startswith("Rss:"):
                total += int(line.split()[1]) * 1024
    return total


def proc_stats(pid):
    """threads, fds, rss (bytes) and the part of it in thread stacks of a
    live process; None if it is gone."""
    try:
        threads = rss = None
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Threads:"):
                    threads = int(line.split()[1])
                elif line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        stacks = stacks_resident(pid)
        return {"threads": threads, "fds": fds, "rss": rss, "rss_stacks": stacks,
                "rss_heap": rss - stacks}
    except OSError:
        return None


class _Periodic(threading.Thread):
    def __init__(self, name, clock, stop, period=1.0):
        super().__init__(name=name, daemon=True)
        self.clock, self.stop, self.period = clock, stop, period
        self.samples = []

    def run(self):
        next_at = time.monotonic()
        while not self.stop.is_set():
            self.samples.append(self.sample())
            next_at = max(next_at + self.period, time.monotonic())
            self.stop.wait(max(0.0, next_at - time.monotonic()))


class ScrapeSampler(_Periodic):
    def __init__(self, clock, stop, port, pid, timeout=2.0):
        super().__init__("soak-scrape", clock, stop)
        self.port, self.pid, self.timeout = port, pid, timeout

    def sample(self):
        t = self.clock.now()
        record = {"t": round(t, 3)}
        try:
            text = scrape(self.port, self.timeout)
            record["latency"] = round(self.clock.now() - t, 4)
            record.update(parse(text))
        except (OSError, RuntimeError, http.client.HTTPException) as error:
            record["error"] = f"{type(error).__name__}: {error}"[:200]
            record["latency"] = round(self.clock.now() - t, 4)
        stats = proc_stats(self.pid)
        if stats:
            record.update(stats)
        else:
            record["gone"] = True
        return record

    def latest(self, since):
        """Successful scrapes taken at or after `since`."""
        return [s for s in self.samples[-200:] if s["t"] >= since and "error" not in s]


class BackendSampler(_Periodic):
    def __init__(self, clock, stop, connect, dbname):
        super().__init__("soak-backends", clock, stop)
        self.connect, self.dbname = connect, dbname
        self.conn = None

    def sample(self):
        t = self.clock.now()
        try:
            if self.conn is None:
                self.conn = self.connect("soak-monitor")
                with self.conn.cursor() as cur:
                    cur.execute("SET statement_timeout = '1s'")
            with self.conn.cursor() as cur:
                cur.execute("SELECT application_name, count(*) FROM pg_stat_activity "
                            "WHERE datname = %s AND application_name LIKE 'seatwatch%%' "
                            "GROUP BY 1", (self.dbname,))
                by_app = dict(cur.fetchall())
            return {"t": round(t, 3), "by_app": by_app, "total": sum(by_app.values())}
        except psycopg2.Error as error:
            if self.conn is not None:
                self.conn.close()
            self.conn = None
            return {"t": round(t, 3), "error": str(error).strip()[:200]}

    def current(self):
        """seatwatch's backends right now, or None if unknown."""
        last = self.samples[-1] if self.samples else None
        return None if last is None or "error" in last else last["total"]
