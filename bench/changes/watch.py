"""Scrapes seatwatch's /metrics every 100 ms, like a very eager Prometheus,
and keeps what the benchmark judges: each invariant's ok, the violation
series, the change feed's and the checks' mode metrics.

The body is several MB at these sizes (an inventory series per event and
kind), so it is fetched uncompressed on one keep-alive connection and only
the wanted families are cut out of it with bytes.find: the watcher's own CPU
stays small next to the database's."""

import http.client
import re
import threading
import time

# Families read from every scrape: (name, has labels).
FAMILIES = [
    ("seatwatch_invariant_ok", True),
    ("seatwatch_invariant_violations", True),
    ("seatwatch_check_success", True),
    ("seatwatch_check_duration_seconds", True),
    ("seatwatch_check_mode", True),
    ("seatwatch_full_passes_total", True),
    ("seatwatch_dirty_keys", True),
    ("seatwatch_changes_up", False),
    ("seatwatch_changes_lag_bytes", False),
    ("seatwatch_changes_decoded_total", False),
    ("seatwatch_changes_drain_duration_seconds", False),
    ("seatwatch_changes_resyncs_total", True),
]

LABEL = re.compile(rb'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def family(body, name, labelled):
    """[(labels tuple, value)] of one family, read from its sample lines."""
    prefix = b"\n" + name.encode() + (b"{" if labelled else b" ")
    out = []
    at = body.find(prefix)
    while at >= 0:
        end = body.find(b"\n", at + 1)
        line = body[at + 1:end if end >= 0 else len(body)]
        if labelled:
            close = line.rfind(b"}")
            labels = tuple((k.decode(), v.decode()) for k, v in LABEL.findall(line[:close]))
            value = line[close + 1:].split()[0]
        else:
            labels = ()
            value = line.split()[1]
        out.append((labels, float(value)))
        if end < 0 or not body.startswith(prefix, end):
            break
        at = end
    return out


class Sample:
    __slots__ = ("t", "values")

    def __init__(self, t, values):
        self.t = t            # time.monotonic() when the response was read
        self.values = values  # family -> [(labels, value)]

    def get(self, name, **labels):
        """The value of the first series of `name` matching `labels`, or None."""
        for series, value in self.values.get(name, ()):
            d = dict(series)
            if all(d.get(k) == v for k, v in labels.items()):
                return value
        return None

    def ok(self):
        """invariant -> 1.0 / 0.0 (absent while the check fails)."""
        return {dict(l)["invariant"]: v for l, v in self.values.get("seatwatch_invariant_ok", ())}

    def violations(self):
        return {(dict(l).get("invariant"), dict(l).get("event_id")): v
                for l, v in self.values.get("seatwatch_invariant_violations", ())}


class Watcher(threading.Thread):
    def __init__(self, port, period=0.1):
        super().__init__(name="bench-watcher", daemon=True)
        self.port, self.period = port, period
        self.stop = threading.Event()
        self.cond = threading.Condition()
        self.samples = []
        self.errors = 0
        self.bytes = 0
        self.cpu = 0.0
        self.conn = None

    def _get(self):
        for attempt in (1, 2):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                self.conn.request("GET", "/metrics", headers={"Accept-Encoding": "identity"})
                response = self.conn.getresponse()
                body = response.read()
                if response.status != 200:
                    raise ConnectionError(f"HTTP {response.status}")
                return body
            except (OSError, http.client.HTTPException):
                if self.conn is not None:
                    self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
        return None

    def run(self):
        next_at = time.monotonic()
        while not self.stop.is_set():
            c0 = time.thread_time()
            try:
                body = b"\n" + self._get()
                t = time.monotonic()
                values = {name: family(body, name, labelled) for name, labelled in FAMILIES}
                self.bytes = len(body)
                with self.cond:
                    self.samples.append(Sample(t, values))
                    self.cond.notify_all()
            except (OSError, http.client.HTTPException, ValueError, IndexError):
                self.errors += 1
            self.cpu += time.thread_time() - c0
            next_at = max(next_at + self.period, time.monotonic())
            self.stop.wait(max(0.0, next_at - time.monotonic()))
        if self.conn is not None:
            self.conn.close()

    def latest(self):
        with self.cond:
            return self.samples[-1] if self.samples else None

    def wait_for(self, predicate, since, timeout):
        """The first sample taken after `since` for which predicate(sample)
        holds, or None after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        index = 0
        with self.cond:
            while True:
                while index < len(self.samples):
                    s = self.samples[index]
                    index += 1
                    if s.t > since and predicate(s):
                        return s
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self.cond.wait(min(remaining, 0.5))

    def between(self, start, end):
        with self.cond:
            return [s for s in self.samples if start <= s.t <= end]

    def close(self):
        self.stop.set()
        self.join(timeout=15)
