#!/usr/bin/env python3
"""The daemon under a service manager's notification protocol (sd_notify),
with this test as the manager: NOTIFY_SOCKET is a unix datagram socket the
test reads, WATCHDOG_USEC=2 s and WATCHDOG_PID the daemon's own pid.

  1. The database is behind a proxy that holds every connection (both lanes
     stuck in their first connect): the daemon pings the watchdog at first,
     then withholds the pings and says why in STATUS= (each lane stamps its
     heartbeat every turn of its loop; a connect that does not return is no
     progress), and READY=1 has not come: it waits for the first poll.
  2. The proxy lets go: READY=1 arrives, and a scrape made right after it
     already shows that poll's results (the injected violation, every check
     run); WATCHDOG=1 pings follow.
  3. SIGHUP: RELOADING=1 then READY=1. SIGTERM: STOPPING=1, exit 0.

Nothing here measures time: every step waits for a message that must come.
Needs TEST_PG_DIR, SEATWATCH_SOURCE_DIR and SEATWATCH_BINARY (set by CTest).
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import seatwatch_harness as sw  # noqa: E402

SRC = sw.SRC
BIN = sw.BIN
PG_DIR = os.environ["TEST_PG_DIR"]
DB = "sw_notify_e2e"
WAIT = 120  # seconds for anything that must happen; a failure, not a measure


def fail(message, log=None):
    if log and os.path.exists(log):
        sys.stderr.write(open(log).read()[-6000:])
    sys.stderr.write("FAIL: %s\n" % message)
    sys.exit(1)


class Manager:
    """The notification socket: every datagram, in order of arrival."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(WAIT)
        self.seen = []

    def next(self):
        try:
            message = self.sock.recv(4096).decode()
        except socket.timeout:
            return None
        self.seen.append(message)
        return message

    def until(self, predicate, what, log):
        """Reads until a message satisfies predicate; returns the ones read."""
        read = []
        while True:
            message = self.next()
            if message is None:
                fail("no %s within %d s; got %r" % (what, WAIT, read[-10:]), log)
            read.append(message)
            if predicate(message):
                return read


def assignments(message):
    return dict(line.split("=", 1) for line in message.split("\n") if "=" in line)


def main():
    cluster = sw.Cluster.attach(PG_DIR)
    tcp_port, user = cluster.port, "postgres"
    # The daemon's environment: the caller's with the cluster's libpq variables.
    env = dict(os.environ, PGHOST=cluster.host, PGPORT=str(cluster.port), PGUSER=user)
    work = tempfile.mkdtemp(prefix="seatwatch-notify-e2e.")
    log = os.path.join(work, "seatwatch.log")
    procs = []
    try:
        cluster.psql("postgres", input_text="DROP DATABASE IF EXISTS %s WITH (FORCE);\n"
                     "CREATE DATABASE %s;" % (DB, DB))
        with open(os.path.join(SRC, "queries/booking/schema.sql")) as f:
            cluster.psql(DB, input_text=f.read())
        cluster.psql(DB, input_text="""
INSERT INTO seats (event_id, seat) SELECT e, 'A' || n FROM generate_series(1, 2) e, generate_series(1, 10) n;
UPDATE seats SET status = 'sold', holder = 'admin' WHERE event_id = 2 AND seat = 'A3';
""")

        # The proxy, holding every connection from the start.
        proxy = subprocess.Popen([sys.executable, os.path.join(SRC, "tests/support/stall_proxy.py"),
                                  str(tcp_port)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True)
        procs.append(proxy)
        proxy_port = int(proxy.stdout.readline())
        proxy.stdin.write("stall\n")
        proxy.stdin.flush()
        if proxy.stdout.readline().strip() != "ok":
            fail("stall proxy did not stall")

        http_port = sw.free_port()
        with open(os.path.join(SRC, "config/seatwatch.toml")) as f:
            config = f.read()
        config = config.replace('"../queries/', '"%s/queries/' % SRC)
        config = config.replace('listen = "127.0.0.1:9646"', 'listen = "127.0.0.1:%d"' % http_port)
        # Longer than the stall: the lanes stay inside their first connect.
        config = config.replace('connect_timeout = "5s"', 'connect_timeout = "300s"')
        config_path = os.path.join(work, "seatwatch.toml")
        with open(config_path, "w") as f:
            f.write(config)

        notify_path = os.path.join(work, "notify")
        manager = Manager(notify_path)
        daemon_env = dict(env, NOTIFY_SOCKET=notify_path, WATCHDOG_USEC="2000000",
                          SEATWATCH_DSN="host=127.0.0.1 port=%d user=%s dbname=%s" % (proxy_port, user, DB))
        # WATCHDOG_PID as systemd sets it: the daemon's own pid ($$ survives exec).
        daemon = subprocess.Popen(["sh", "-c", 'WATCHDOG_PID=$$ exec "$0" "$@"', BIN, "--config", config_path],
                                  env=daemon_env, stdout=open(log, "w"), stderr=subprocess.STDOUT)
        procs.append(daemon)

        # 1. Stuck in the first connect: pings, then none, and no READY.
        read = manager.until(lambda m: "watchdog pings withheld" in m, "withheld-pings status", log)
        if any("READY=1" in m for m in read):
            fail("READY=1 before the first poll: %r" % read, log)
        if not any(m == "WATCHDOG=1" for m in read):
            fail("no watchdog ping while the lanes were still progressing: %r" % read, log)
        status = assignments(read[-1])["STATUS"]
        if not re.match(r"lane (checks|locks) made no progress for \d+ s; watchdog pings withheld$", status):
            fail("unexpected STATUS %r" % status, log)
        if "WatchdogSec is not longer than connect_timeout" not in open(log).read():
            fail("no warning that WatchdogSec is shorter than connect_timeout", log)

        # 2. Let go: READY=1, and the first poll is already served.
        proxy.stdin.write("resume\n")
        proxy.stdin.flush()
        if proxy.stdout.readline().strip() != "ok":
            fail("stall proxy did not resume")
        manager.until(lambda m: m.startswith("READY=1"), "READY=1", log)
        metrics = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % http_port, timeout=30).read().decode()
        expected = [
            "seatwatch_up 1",
            'seatwatch_invariant_ok{invariant="sold_seat_without_ticket"} 0',
            'seatwatch_invariant_ok{invariant="ticket_without_sold_seat"} 1',
        ]
        for line in expected:
            if line not in metrics.split("\n"):
                fail("scrape right after READY=1 lacks %r" % line, log)
        checks = re.findall(r'^seatwatch_check_success\{check="([^"]+)"\} (\S+)$', metrics, re.M)
        names = {name for name, _ in checks}
        if not {"booking_reconciliation", "event_inventory", "holds", "locks"} <= names or \
                any(value != "1" for _, value in checks):
            fail("not every check ran before READY=1: %r" % checks, log)
        print("READY=1 after the first poll; scrape: %d checks succeeded" % len(checks))

        pings = 0
        while pings < 2:
            manager.until(lambda m: m == "WATCHDOG=1", "WATCHDOG=1 after READY", log)
            pings += 1
        resumed = [m for m in manager.seen if "watchdog pings resumed" in m]
        if not resumed:
            manager.until(lambda m: "watchdog pings resumed" in m, "pings-resumed status", log)

        # 3. Reload and stop.
        daemon.send_signal(signal.SIGHUP)
        manager.until(lambda m: m.startswith("RELOADING=1\nMONOTONIC_USEC="), "RELOADING=1", log)
        read = manager.until(lambda m: m.startswith("READY=1"), "READY=1 after the reload", log)
        if assignments(read[-1]).get("STATUS") != "polling; configuration reloaded":
            fail("unexpected reload status %r" % read[-1], log)
        daemon.send_signal(signal.SIGTERM)
        manager.until(lambda m: m.startswith("STOPPING=1"), "STOPPING=1", log)
        code = daemon.wait(timeout=60)
        if code != 0:
            fail("seatwatch exited %d" % code, log)
        # The sequence, runs of pings folded: what a reader checks by eye.
        folded = []
        for message in manager.seen:
            text = message.replace("\n", " | ")
            if folded and folded[-1][0] == text:
                folded[-1][1] += 1
            else:
                folded.append([text, 1])
        for text, count in folded:
            print("  %s%s" % (text, " (x%d)" % count if count > 1 else ""))
        print("ok: %d notifications, %d of them WATCHDOG=1" %
              (len(manager.seen), sum(m == "WATCHDOG=1" for m in manager.seen)))
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        try:
            cluster.psql("postgres", input_text="DROP DATABASE IF EXISTS %s WITH (FORCE);" % DB)
        except sw.Failure:
            pass
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
