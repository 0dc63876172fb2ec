"""Scrapes, CPU time and memory of an exporter process, and wrk."""

import gzip
import http.client
import os
import re
import statistics
import subprocess
import time

import procs

# What Prometheus 2.x sends, so the Go exporters compress as they would in
# production.
SCRAPE_HEADERS = {
    "Accept": "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
              "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
    "Accept-Encoding": "gzip",
    "User-Agent": "Prometheus/2.42.0",
    "X-Prometheus-Scrape-Timeout-Seconds": "120",
}

# The same scrape without Accept-Encoding: the identity body, for the gzip
# comparison.
IDENTITY_HEADERS = {k: v for k, v in SCRAPE_HEADERS.items() if k != "Accept-Encoding"}

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """CPU time of the whole process (every thread), user + system.

    The per-thread schedstat counters have nanosecond resolution; the
    process's utime + stime (10 ms ticks) also covers threads that have
    exited. The larger of the two is the right one."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = (int(fields[11]) + int(fields[12])) / TICKS
    precise = 0.0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                    precise += int(f.read().split()[0]) / 1e9
            except OSError:
                pass
    except OSError:
        pass
    return precise if precise >= ticks - 0.02 else ticks


def cpu_seconds_by_thread(pid, group):
    """CPU time of the process's live threads (schedstat, nanoseconds),
    summed by group(thread name), e.g. CivetWeb's threads (serving scrapes)
    apart from the others (polling, the change feed, publishing)."""
    out = {}
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                seconds = int(f.read().split()[0]) / 1e9
        except OSError:
            continue
        key = group(name)
        out[key] = out.get(key, 0.0) + seconds
    return out


def memory(pid):
    """VmRSS, VmHWM, RssAnon and RssFile in bytes."""
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                values[key] = int(rest.split()[0]) * 1024
    return values


class RssSampler:
    """Keeps the largest VmRSS seen at the points it is asked to sample, and
    its split into anonymous memory (heap, stacks) and file pages (the
    binary and shared libraries)."""

    def __init__(self, pid):
        self.pid = pid
        self.max_rss = 0
        self.hwm = 0
        self.anon = 0
        self.file = 0

    def sample(self):
        values = memory(self.pid)
        rss = values.get("VmRSS", 0)
        if rss >= self.max_rss:
            self.max_rss = rss
            self.anon, self.file = values.get("RssAnon", 0), values.get("RssFile", 0)
        self.hwm = max(self.hwm, values.get("VmHWM", 0))
        return rss


class Scraper:
    """One keep-alive connection, like a Prometheus server's."""

    def __init__(self, port, path="/metrics", timeout=300, headers=None):
        self.port, self.path, self.timeout = port, path, timeout
        self.headers = SCRAPE_HEADERS if headers is None else headers
        self.encoding = None  # Content-Encoding of the last response
        self.conn = None

    def get(self):
        """Returns (seconds, wire bytes, decoded text)."""
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                                       timeout=self.timeout)
            try:
                start = time.perf_counter()
                self.conn.request("GET", self.path, headers=self.headers)
                response = self.conn.getresponse()
                body = response.read()
                elapsed = time.perf_counter() - start
                if response.getheader("Connection", "").lower() == "close":
                    self.close()
                break
            except (http.client.HTTPException, ConnectionError):
                self.close()
                if attempt == 2:
                    raise
        if response.status != 200:
            raise RuntimeError(f"GET {self.path} on port {self.port}: HTTP {response.status}")
        self.encoding = response.getheader("Content-Encoding")
        text = gzip.decompress(body) if self.encoding == "gzip" else body
        return elapsed, len(body), text.decode()

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def fetch(port, path="/metrics", timeout=60, headers=None):
    """One scrape on a fresh connection; None if nothing answers yet."""
    scraper = Scraper(port, path, timeout, headers)
    try:
        return scraper.get()[2]
    except (OSError, RuntimeError, http.client.HTTPException):
        return None
    finally:
        scraper.close()


def series(text):
    return sum(1 for line in text.splitlines() if line and not line.startswith("#"))


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def samples(text, name):
    """[(labels dict, value)] of metric `name`."""
    out = []
    for line in text.splitlines():
        if not line.startswith(name):
            continue
        m = SAMPLE.match(line)
        if not m or m.group(1) != name:
            continue
        labels = dict(LABEL.findall(m.group(3) or ""))
        out.append((labels, float(m.group(4))))
    return out


def sequential(port, pid, count, warmup=3, headers=None):
    """`count` sequential scrapes: latency median/p95, CPU per scrape, bytes."""
    scraper = Scraper(port, headers=headers)
    for _ in range(warmup):
        scraper.get()
    cpu_before = cpu_seconds(pid)
    latencies, size, text = [], 0, ""
    for _ in range(count):
        elapsed, size, text = scraper.get()
        latencies.append(elapsed)
    cpu = cpu_seconds(pid) - cpu_before
    scraper.close()
    latencies.sort()
    return {
        "scrapes": count,
        "p50_ms": statistics.median(latencies) * 1e3,
        "p95_ms": latencies[min(len(latencies) - 1, int(round(0.95 * len(latencies))) - 1)] * 1e3,
        "max_ms": latencies[-1] * 1e3,
        "cpu_ms_per_scrape": cpu / count * 1e3,
        "wire_bytes": size,
        "text_bytes": len(text.encode()),
        "content_encoding": scraper.encoding,
        "series": series(text),
        "latencies_ms": [x * 1e3 for x in latencies],
    }, text


def one_scrape(port, pid, headers=None):
    """A single scrape on a new connection: its CPU, latency and bytes. For
    seatwatch, the first gzip scrape after a poll is the one that deflates
    the parts the poll made new (later ones reuse them)."""
    scraper = Scraper(port, headers=headers)
    cpu_before = cpu_seconds(pid)
    elapsed, size, text = scraper.get()
    cpu = cpu_seconds(pid) - cpu_before
    encoding = scraper.encoding
    scraper.close()
    return {"cpu_ms": cpu * 1e3, "ms": elapsed * 1e3, "wire_bytes": size,
            "text_bytes": len(text.encode()), "content_encoding": encoding}


def fresh_connections(port, count):
    """Sequential scrapes, each on a new connection (like curl): shows what
    connection reuse costs or saves."""
    latencies = []
    for _ in range(count):
        scraper = Scraper(port)
        latencies.append(scraper.get()[0] * 1e3)
        scraper.close()
    latencies.sort()
    return {"scrapes": count, "p50_ms": statistics.median(latencies),
            "p95_ms": latencies[min(len(latencies) - 1, int(round(0.95 * len(latencies))) - 1)]}


def wrk(port, pid, seconds, connections=4, threads=2):
    """Throughput with `connections` concurrent scrapers (wrk)."""
    args = ["wrk", f"-c{connections}", f"-t{threads}", f"-d{seconds}s", "--latency",
            "--timeout", "120s"]
    for key, value in SCRAPE_HEADERS.items():
        args += ["-H", f"{key}: {value}"]
    args.append(f"http://127.0.0.1:{port}/metrics")
    cpu_before = cpu_seconds(pid)
    result = procs.run(args, timeout=seconds + 180)
    cpu = cpu_seconds(pid) - cpu_before
    out = result.stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    errors = re.search(r"Socket errors: (.*)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)

    def latency(pct):
        m = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not m:
            return None
        return float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]

    return {
        "seconds": seconds,
        "requests": requests,
        "rps": rps,
        "p50_ms": latency(50),
        "p99_ms": latency(99),
        "cpu_ms_per_scrape": cpu / requests * 1e3 if requests else None,
        "errors": (errors.group(1) if errors else "") + (f" non2xx={non2xx.group(1)}"
                                                          if non2xx else ""),
    }


def wait_for(predicate, timeout, interval=0.25, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")


def tool_version(args):
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=10)
        return (out.stdout + out.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"
