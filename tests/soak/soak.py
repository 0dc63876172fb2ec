"""bench/soak: the fault soak. See docs/soak.md.

For N minutes, with a light claim/confirm load on the reference schema, runs
the built seatwatch against a scratch PostgreSQL through a stalling proxy and
injects faults on a schedule (killed backends, a server restart, a stalled
connection, max_connections full, ACCESS EXCLUSIVE locks, SIGHUP storms,
hostile HTTP) and real violations at known times. Scrapes /metrics every
second and asserts: every violation reported, no false alarm, no stale ok,
up honest, scrapes answered, threads/fds/RSS flat, no connection pile-up,
exit 0 on SIGTERM. Prints the verdict as a table, writes it as JSON, exits
0 only if every assertion passed (1 if one failed, 2 if the soak could not
run)."""

import argparse
import datetime
import json
import os
import signal
import subprocess
import sys
import threading
import time

import psycopg2

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import procs  # noqa: E402
import seatwatch_harness  # noqa: E402
import soak_faults  # noqa: E402
import soak_http  # noqa: E402
import soak_load  # noqa: E402
import soak_proxy  # noqa: E402
import soak_sampler  # noqa: E402
import soak_verdict  # noqa: E402

from soak_setup import (CONNECT_TIMEOUT, DBNAME, POLL_INTERVAL,  # noqa: E402
                        RECONNECT_MAX_BACKOFF, STATEMENT_TIMEOUT, SoakCluster, make_config,
                        setup_database)

# One cycle of the schedule: (fault, options, seconds into it at which a
# violation is injected or None). A quiet gap follows every fault.
CYCLE = [
    ("quiet", {"seconds": 8}, 1),
    ("kill_backends", {}, None),
    ("sighup_storm", {"count": 50, "seconds": 1}, None),
    ("stall", {"seconds": 15}, 3),
    ("restart_server", {}, None),
    ("fill_connections", {"hold": 12}, 2),
    ("access_exclusive", {"seconds": 4}, None),
    ("hostile_http", {"seconds": 10}, 2),
]

SLOPE_BOUNDS = {"threads": 1.0, "fds": 2.0, "rss": 2**20}  # per minute


class Clock:
    def __init__(self):
        self.t0 = time.monotonic()

    def now(self):
        return time.monotonic() - self.t0


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bench/soak", description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=10,
                   help="how long the fault schedule runs (default 10; at least one cycle "
                        "of every fault, about 2 minutes, always runs)")
    p.add_argument("--seatwatch", default=os.environ.get("SEATWATCH_BINARY"),
                   help="the daemon (default $SEATWATCH_BINARY, else build/daemon/seatwatch)")
    p.add_argument("--pg-dir", default=None,
                   help="use this running scripts/pg-scratch cluster (the CTest fixture's) "
                        "instead of starting one; it is restarted but left running")
    p.add_argument("--workdir", default=None,
                   help="logs, config, samples (default build-bench/soak-work)")
    p.add_argument("--out", default=None, help="the JSON summary (default WORKDIR/soak.json)")
    p.add_argument("--config-template", default=None,
                   help="the config to adapt (default config/seatwatch.toml; an older "
                        "binary may need the example of its own commit)")
    p.add_argument("--clients", type=int, default=2, help="load clients (default 2)")
    p.add_argument("--rate", type=float, default=10, help="checkouts per second per client")
    p.add_argument("--gap", type=float, default=7, help="quiet seconds after each fault")
    p.add_argument("--warmup", type=float, default=10,
                   help="quiet seconds before the first fault; slopes are fitted after it")
    p.add_argument("--faults", default=",".join(k for k, _, _ in CYCLE),
                   help="comma-separated subset of the cycle, in its order")
    p.add_argument("--sigterm-while-healthy", dest="sigterm_during_stall",
                   action="store_false",
                   help="send the final SIGTERM while the database answers; by default it is "
                        "sent 6 s into a stall, with statements in flight that never answer")
    p.add_argument("--sigterm-bound", type=float, default=2,
                   help="seconds the daemon may take to exit on SIGTERM (default 2, as docs/operations.md promises)")
    return p.parse_args(argv)


def ready(port):
    """True once every check has run and succeeded and the six invariants are ok."""
    text = seatwatch_harness.fetch(port, timeout=2)
    if not text:
        return False
    parsed = soak_sampler.parse(text)
    return (parsed["up"] and all(v == 1 for v in parsed["up"].values())
            and parsed["check_success"] and all(v == 1 for v in parsed["check_success"].values())
            and len(parsed["invariant_ok"]) >= 6
            and all(v == 1 for v in parsed["invariant_ok"].values()))


def git(root, *args):
    return subprocess.run(["git", "-C", root, *args], capture_output=True,
                          text=True).stdout.strip()


class Soak:
    def __init__(self, args, root):
        self.args, self.root = args, root
        self.workdir = os.path.abspath(args.workdir or os.path.join(root, "build-bench",
                                                                    "soak-work"))
        self.binary = os.path.abspath(args.seatwatch or
                                      os.path.join(root, "build/daemon/seatwatch"))
        self.stop = threading.Event()
        self.injections = []  # threads
        self.faults = []

    # Violations ----------------------------------------------------------------

    def spawn_injection(self, label):
        thread = threading.Thread(target=self.injection, args=(label,), daemon=True)
        thread.start()
        self.injections.append(thread)

    def injection(self, label):
        """Commits a violation, waits until seatwatch reports it (or 30 s),
        keeps it 2 s more, repairs it."""
        try:
            record = self.injector.inject(during=label)
        except psycopg2.Error as error:
            procs.log(f"injection ({label}) failed: {error}")
            return
        procs.log(f"violation #{record['id']} {record['kind']} committed at "
                  f"{record['committed']:.1f}s ({label or 'quiet'})")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if any(s["invariant_ok"].get(record["kind"]) == 0
                   for s in self.scraper.latest(record["committed"] - 1)):
                time.sleep(2)
                break
            time.sleep(0.25)
        try:
            self.injector.repair(record)
            procs.log(f"violation #{record['id']} repaired at {record['repaired']:.1f}s")
        except psycopg2.Error as error:
            procs.log(f"repair of #{record['id']} failed: {error}")

    # The run ---------------------------------------------------------------------

    def run_fault(self, kind, options, inject_at):
        during = None
        if inject_at is not None:
            label = "" if kind == "quiet" else kind
            during = (inject_at, lambda: self.spawn_injection(label))
        procs.log(f"fault: {kind}")
        record = soak_faults.run(self.ctx, kind, during=during, **options)
        self.faults.append(record)
        if kind != "quiet":
            time.sleep(self.args.gap)

    def schedule(self):
        chosen = self.args.faults.split(",")
        unknown = set(chosen) - {k for k, _, _ in CYCLE}
        if unknown:
            raise SystemExit(f"bench/soak: unknown faults {sorted(unknown)}")
        cycle = [step for step in CYCLE if step[0] in chosen]
        budget = self.args.minutes * 60
        started = self.clock.now()
        last = None
        n = 0
        while n == 0 or (self.clock.now() - started) + last <= budget:
            cycle_start = self.clock.now()
            n += 1
            procs.log(f"cycle {n}")
            for kind, options, inject_at in cycle:
                if self.daemon.poll() is not None:
                    procs.log("seatwatch exited: the schedule stops")
                    return n
                self.run_fault(kind, options, inject_at)
            last = self.clock.now() - cycle_start
        return n

    def main(self):
        args = self.args
        if not os.access(self.binary, os.X_OK):
            print(f"bench/soak: no seatwatch binary at {self.binary} (build it, or pass "
                  "--seatwatch / SEATWATCH_BINARY)", file=sys.stderr)
            return 2
        os.makedirs(self.workdir, exist_ok=True)
        os.chmod(self.workdir, 0o755)  # the server's user must reach an own cluster below it
        procs.install_handlers()
        self.clock = Clock()
        own = args.pg_dir is None
        cluster = SoakCluster(self.root, os.path.abspath(args.pg_dir or
                                                         os.path.join(self.workdir, "pg")),
                              own, options="-c max_connections=60")
        cluster.start()
        max_connections = setup_database(cluster, self.root)
        if not own:
            # Cleanups run newest first: the fixture's server is up again
            # (a restart may have failed) before the database is dropped.
            procs.on_exit(lambda: cluster.drop(DBNAME))
            procs.on_exit(cluster.ensure_running)

        proxy = soak_proxy.StallingProxy(
            lambda: os.path.join(cluster.host, f".s.PGSQL.{cluster.port}"))
        proxy.start()
        procs.on_exit(proxy.stop)
        http_port = seatwatch_harness.free_port()
        config = os.path.join(self.workdir, "seatwatch.toml")
        lanes, cleanups = make_config(self.root, http_port, config, args.config_template)
        env = dict(os.environ, SEATWATCH_DSN=(f"host=127.0.0.1 port={proxy.port} "
                                              f"dbname={DBNAME} user=seatwatch sslmode=disable"))
        log_path = os.path.join(self.workdir, "seatwatch.log")
        if os.path.exists(log_path):
            os.remove(log_path)
        self.daemon = procs.start([self.binary, "--config", config], "seatwatch", env=env,
                                  stderr=log_path)
        try:
            seatwatch_harness.wait_for(
                lambda: ready(http_port) or self.daemon.poll() is not None, "seatwatch healthy",
                timeout=60)
        except seatwatch_harness.Failure as error:
            print(f"bench/soak: {error}; log: {log_path}", file=sys.stderr)
            return 2
        if self.daemon.poll() is not None:
            print(f"bench/soak: seatwatch exited {self.daemon.returncode}; log: {log_path}",
                  file=sys.stderr)
            return 2
        ready_at = self.clock.now()
        procs.log(f"seatwatch healthy at {ready_at:.1f}s (pid {self.daemon.pid}, "
                  f"port {http_port}, via proxy {proxy.port} to {cluster.port})")

        def admin(app):
            return cluster.connect_as("postgres", DBNAME, app)

        ctx = self.ctx = type("Ctx", (), {})()
        ctx.clock, ctx.cluster, ctx.admin, ctx.proxy = self.clock, cluster, admin, proxy
        ctx.daemon_pid, ctx.http_port, ctx.dbname = self.daemon.pid, http_port, DBNAME
        ctx.max_connections = max_connections
        ctx.filler_connect = lambda: cluster.connect_as("soak_filler", "postgres", "soak-filler")

        self.scraper = soak_sampler.ScrapeSampler(self.clock, self.stop, http_port,
                                                  self.daemon.pid)
        backends = soak_sampler.BackendSampler(self.clock, self.stop, admin, DBNAME)
        self.injector = soak_load.Injector(admin, self.clock)
        self.injector.open()
        clients = [soak_load.LoadClient(
            i + 1, lambda app: cluster.connect_as("soak_app", DBNAME, app),
            args.rate, self.stop) for i in range(args.clients)]
        for thread in [self.scraper, backends, *clients]:
            thread.start()

        # Warm-up: every HTTP worker serves once (3 rounds of as many
        # concurrent scrapes as the daemon has threads), then quiet.
        threads = soak_sampler.proc_stats(self.daemon.pid)["threads"]
        for _ in range(3):
            soak_http.prime(http_port, threads + 8)
        time.sleep(args.warmup)
        warmup_end = self.clock.now()
        cycles = self.schedule()
        for thread in self.injections:
            thread.join(60)
        time.sleep(args.gap)

        stalled_at = None
        if args.sigterm_during_stall:
            # Both lanes end up waiting on a connection that does not answer.
            stalled_at = self.clock.now()
            proxy.pause()
            time.sleep(POLL_INTERVAL + STATEMENT_TIMEOUT + 2)
        run_end = self.clock.now()
        sigterm = self.sigterm()
        sigterm["during_stall"] = stalled_at is not None
        if stalled_at is not None:
            proxy.resume()
            self.faults.append({"kind": "stall", "start": round(stalled_at, 3),
                                "end": round(run_end, 3), "outage": [stalled_at, run_end],
                                "blind": [stalled_at, run_end],
                                "detail": {"then": "SIGTERM"}})
        self.stop.set()
        for thread in [self.scraper, backends, *clients]:
            thread.join(10)
        self.injector.close()

        params = soak_verdict.Params(
            interval=POLL_INTERVAL, statement_timeout=STATEMENT_TIMEOUT,
            backoff=RECONNECT_MAX_BACKOFF, ready=ready_at, warmup_end=warmup_end,
            run_end=run_end, max_backends=lanes + cleanups + 1, slope_bounds=SLOPE_BOUNDS,
            sigterm_bound=args.sigterm_bound)
        verdict, findings = soak_verdict.judge(self.scraper.samples, backends.samples,
                                               self.faults, self.injector.records, sigterm,
                                               params)
        summary = {
            "verdict": "PASS" if verdict.passed else "FAIL",
            "started_at": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "binary": self.binary,
            "version": tool_version([self.binary, "--version"]),
            "commit": git(self.root, "rev-parse", "--short", "HEAD"),
            "tree_dirty": bool(git(self.root, "status", "--porcelain", "--", "daemon")),
            "minutes": args.minutes, "cycles": cycles,
            "schedule_seconds": round(run_end - warmup_end, 1),
            "params": {"poll_interval": POLL_INTERVAL, "statement_timeout": STATEMENT_TIMEOUT,
                       "connect_timeout": CONNECT_TIMEOUT,
                       "reconnect_max_backoff": RECONNECT_MAX_BACKOFF,
                       "deadline": params.deadline, "lock_deadline": params.lock_deadline,
                       "grace": params.grace, "base": params.base,
                       "max_backends": params.max_backends, "slope_bounds": SLOPE_BOUNDS,
                       "sigterm_bound": args.sigterm_bound, "max_connections": max_connections,
                       "clients": args.clients, "rate_per_client": args.rate},
            "assertions": verdict.rows,
            "findings": findings,
            "faults": self.faults,
            "sigterm": sigterm,
            "load": {"clients": [c.counts for c in clients],
                     "checkouts_per_second": round(sum(c.counts["checkouts"] + c.counts["refunded"]
                                                       for c in clients) / max(1, run_end - ready_at), 1)},
            "proxy": {"accepted": proxy.accepted},
            "scrapes": len(self.scraper.samples),
            "http_workers_primed": threads + 8,
            "workdir": self.workdir,
        }
        out = args.out or os.path.join(self.workdir, "soak.json")
        with open(out, "w") as f:
            json.dump(summary, f, indent=1, default=str)
        with open(os.path.join(self.workdir, "samples.jsonl"), "w") as f:
            for s in self.scraper.samples:
                f.write(json.dumps({"scrape": s}) + "\n")
            for b in backends.samples:
                f.write(json.dumps({"backends": b}) + "\n")
        print(report(summary, verdict))
        print(f"summary: {out}; samples, config and the daemon's log in {self.workdir}")
        return 0 if verdict.passed else 1

    def sigterm(self):
        started = time.monotonic()
        os.kill(self.daemon.pid, signal.SIGTERM)
        killed = False
        try:
            code = self.daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            killed = True
            os.kill(self.daemon.pid, signal.SIGKILL)
            code = self.daemon.wait(timeout=10)
        seconds = time.monotonic() - started
        procs.log(f"seatwatch exited {code} {seconds:.2f}s after SIGTERM")
        return {"exit_code": code, "seconds": round(seconds, 2), "killed": killed}


def tool_version(args):
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=10)
        return (out.stdout + out.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


def report(summary, verdict):
    lines = [f"seatwatch fault soak: {summary['version']} ({summary['binary']}), commit "
             f"{summary['commit']}{' + local changes' if summary['tree_dirty'] else ''}",
             f"{summary['cycles']} cycle(s), {summary['schedule_seconds']} s of faults, "
             f"{summary['scrapes']} scrapes; poll {POLL_INTERVAL}s, deadline "
             f"{summary['params']['deadline']}s, grace {summary['params']['grace']}s",
             "", "faults:"]
    for f in summary["faults"]:
        if f["kind"] == "quiet":
            continue
        detail = ", ".join(f"{k}={v}" for k, v in f["detail"].items() if k != "windows")
        lines.append(f"  {f['start']:7.1f}s..{f['end']:7.1f}s  {f['kind']:<17} {detail}")
    lines.append("violations:")
    for r in summary["findings"]["injections"]:
        seen = "never seen" if r["seen"] is None else f"seen after {r['latency']:.1f}s"
        lines.append(f"  #{r['id']} {r['kind']:<33} committed {r['committed']:7.1f}s "
                     f"({r['during'] or 'quiet'}), {seen} (bound {r['bound']:.1f}s) "
                     f"{'ok' if r['ok'] else 'LATE/MISSED'}")
    names = {"rss": "rss outside stacks", "rss_total": "rss", "rss_stacks": "rss in stacks"}
    for key, slope in summary["findings"]["slopes"].items():
        grown = {k: v for k, v in slope["by_fault"].items() if v}
        per_minute = "n/a" if slope["per_minute"] is None else f"{slope['per_minute']:+.0f}/min"
        lines.append(f"{names.get(key, key)}: {slope['first']}..{slope['last']} ({per_minute}), "
                     f"peak {slope['peak_during_faults']} during faults; left behind by fault: "
                     f"{grown or 'nothing'}")
    stale = summary["findings"]["stale_check_success_during_outage"]
    lines.append(f"stale check_success 1 during an outage (finding, not asserted): "
                 f"{len(stale)} samples")
    lines += ["", soak_verdict.table(verdict)]
    return "\n".join(lines)


def main(argv):
    args = parse_args(argv)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return Soak(args, root).main()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
