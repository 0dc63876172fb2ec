"""bench/changes/run: seatwatch's invariant pack in full-pass and incremental
mode under an on-sale workload, and sql_exporter for the same freshness.

See bench/changes/README.md. Every process this starts is recorded by PID and
stopped by PID on exit; the cluster is stopped (data kept for the next run)
or, with --destroy, destroyed."""

import argparse
import datetime
import json
import os
import random
import shlex
import statistics
import string
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(BENCH, "driver"))
# The harness shared with the tests: processes by PID, the cluster, the booking flow.
sys.path.insert(2, os.path.join(ROOT, "tests", "support"))

import psycopg2  # noqa: E402

import cost  # noqa: E402
import dataset  # noqa: E402
import doc  # noqa: E402
import exporters  # noqa: E402
from host import free_port, machine  # noqa: E402
import inject  # noqa: E402
import procs  # noqa: E402
import watch  # noqa: E402
import workload  # noqa: E402

# The checks each pack's config has, which must all succeed before a mode's
# windows start.
CHECKS = {"hand": ("booking_reconciliation", "event_inventory"),
          "declared": ("booking_reconciliation", "event_inventory")}
MODES = {
    # name: (label, [changes] interval or None for full-pass mode)
    "full": ("full pass, every 10 s (shipped)", None),
    "incr10": ("incremental, 10 s", "10s"),
    "incr1": ("incremental, 1 s", "1s"),
    "incr200": ("incremental, 200 ms (the default)", "200ms"),
}
DEFAULT_INJECTIONS = {"full": 6, "incr10": 12, "incr1": 30, "incr200": 30}


def percentile(values, p):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, max(0, int(round(p / 100 * len(values))) - 1))]


class Run:
    def __init__(self, args):
        self.args = args
        self.workdir = os.path.abspath(args.workdir)
        for sub in ("configs", "logs"):
            os.makedirs(os.path.join(self.workdir, sub), exist_ok=True)
        self.cluster = dataset.Cluster(ROOT, self.workdir)
        # The declared pack's runs are kept apart: their own results file,
        # configs and logs, and never the rendered section.
        self.suffix = "-declared" if args.pack == "declared" else ""
        self.seatwatch = args.seatwatch or os.path.join(ROOT, "build-bench", "daemon", "seatwatch")
        if not os.path.exists(self.seatwatch):
            self.seatwatch = os.path.join(ROOT, "build-bench", "seatwatch")

    # -- processes ------------------------------------------------------------

    def start_seatwatch(self, mode, port):
        _, interval = MODES[mode]
        queries = os.path.join(ROOT, "queries")
        # As config/seatwatch.toml ships: the entries' incremental keys always
        # there, [changes] off in full-pass mode.
        changes = ("\n[changes]\n"
                   f"enabled = {'true' if interval else 'false'}"
                   "            # SEATWATCH_CHANGES_DSN: the REPLICATION role\n"
                   "publication = \"seatwatch\"\n"
                   f"interval = \"{interval or '1s'}\"\nfull_pass_interval = \"1h\"\n")
        if self.args.recheck_time_per_minute:
            changes += f"recheck_time_per_minute = \"{self.args.recheck_time_per_minute}\"\n"
        incremental = ('key = "event_id"\n'
                       'tables = { seats = "event_id", tickets = "event_id", '
                       'payments = "event_id" }\n'
                       f'scoped_sql = "{queries}/booking/reconciliation.scoped.sql"\n'
                       'expiry_column = "next_expiry_unix"\n')
        if self.args.pack == "declared":
            # The entries as config/seatwatch.toml ships them (the six
            # invariants and event_inventory): their key, tables and scoped
            # SQL are derived, nothing incremental is written.
            with open(os.path.join(ROOT, "config", "seatwatch.toml")) as f:
                shipped = f.read()
            entries = shipped[shipped.index("\n[[invariant]]"):shipped.index("\n[locks]")]
            invariants = entries.replace('"../queries/', '"' + queries + "/")
            # 20M seats: 140,000 inventory rows (7 per event), past the
            # default max_rows; the inventory rides on the invariants' pass
            # and takes their max_rows.
            invariants = invariants.replace("\n[[invariant]]\n",
                                            "\n[[invariant]]\nmax_rows = 200000\n")
            with open(os.path.join(HERE, "seatwatch-declared.toml.in")) as f:
                text = string.Template(f.read()).substitute(
                    mode=MODES[mode][0], statement_timeout=self.args.statement_timeout,
                    listen=f"127.0.0.1:{port}", changes=changes, invariants=invariants)
        else:
            with open(os.path.join(HERE, "seatwatch.toml.in")) as f:
                text = string.Template(f.read()).substitute(
                    mode=MODES[mode][0], statement_timeout=self.args.statement_timeout,
                    listen=f"127.0.0.1:{port}", queries=queries, changes=changes,
                    incremental=incremental)
        path = os.path.join(self.workdir, "configs",
                            f"seatwatch-{self.size}-{mode}{self.suffix}.toml")
        with open(path, "w") as f:
            f.write(text)
        env = dict(os.environ, SEATWATCH_DSN=self.cluster.tcp_dsn(
            self.dbname, dataset.SEATWATCH, "seatwatch"))
        env["SEATWATCH_CHANGES_DSN"] = self.cluster.tcp_dsn(
            self.dbname, dataset.SEATWATCH_REPL, "seatwatch_changes")
        log = os.path.join(self.workdir, "logs", f"seatwatch-{self.size}-{mode}{self.suffix}.log")
        proc = procs.start([self.seatwatch, "--config", path], f"seatwatch ({mode})", env=env,
                           stderr=log)
        return proc, path, log

    def stop_and_drain(self, proc, roles):
        procs.stop(proc, timeout=120)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with self.admin.cursor() as cur:
                cur.execute("SELECT count(*) FROM pg_stat_activity WHERE usename = ANY (%s)",
                            (list(roles),))
                if cur.fetchone()[0] == 0:
                    return
            time.sleep(0.5)

    # -- one seatwatch mode ---------------------------------------------------

    def ready(self, sample, incremental):
        for check in CHECKS[self.args.pack]:
            if sample.get("seatwatch_check_success", check=check) != 1:
                return False
            if incremental and sample.get("seatwatch_check_mode", check=check,
                                          mode="incremental") != 1:
                return False
        if incremental and sample.get("seatwatch_changes_up") != 1:
            return False
        return True

    def run_mode(self, mode):
        label, interval = MODES[mode]
        incremental = interval is not None
        cycle = 10.0 if not incremental else (
            float(interval[:-2]) / 1000 if interval.endswith("ms") else float(interval.rstrip("s")))
        port = free_port(19700)
        procs.log(f"[{self.size} {mode}] starting seatwatch: {label}")
        proc, config_path, log = self.start_seatwatch(mode, port)
        watcher = watch.Watcher(port)
        watcher.start()
        result = {"label": label, "config": os.path.relpath(config_path, self.workdir)}
        started = time.monotonic()
        first = None
        while first is None and proc.poll() is None \
                and time.monotonic() - started < self.args.ready_timeout:
            first = watcher.wait_for(lambda s: self.ready(s, incremental), started, 5)
        if proc.poll() is not None:
            result["error"] = f"seatwatch exited with {proc.returncode}; see {log}"
        if first is None:
            last = watcher.latest()
            result["error"] = result.get("error") or (f"not ready after {self.args.ready_timeout:.0f} s"
                               + (" (incremental mode never reported)" if incremental else "")
                               + f"; see {log}")
            if last is not None:
                result["last_metrics"] = {k: v for k, v in last.values.items() if v}
            procs.log(f"[{self.size} {mode}] {result['error']}")
            watcher.close()
            self.stop_and_drain(proc, (dataset.SEATWATCH, dataset.SEATWATCH_REPL))
            return result
        result["ready_seconds"] = first.t - started
        procs.log(f"[{self.size} {mode}] ready after {result['ready_seconds']:.1f} s")
        settle = self.args.settle_seconds
        result["settle_seconds"] = max(2 * cycle, 10.0) if settle is None else settle
        time.sleep(result["settle_seconds"])

        # Cost window: the workload alone.
        window = cost.Window(self.admin, self.dbname, (dataset.SEATWATCH, dataset.SEATWATCH_REPL),
                             self.postmaster)
        cpu0 = measure_cpu(proc.pid)
        threads0 = measure_threads(proc.pid)
        w0 = watcher.cpu
        # The WAL kept for seatwatch's slot, from here to the end of detection.
        retained = None
        if incremental:
            retained = cost.RetainedWal(
                lambda: self.cluster.connect(self.dbname, application_name="bench-wal"), "seatwatch_")
            retained.start()
        window.start()
        t0 = time.monotonic()
        time.sleep(self.args.cost_seconds)
        result["cost"] = window.end()
        t1 = time.monotonic()
        result["cost"]["seatwatch_process_cpu_s"] = measure_cpu(proc.pid) - cpu0
        threads1 = measure_threads(proc.pid)
        # Serving the watcher's scrapes (10 a second of the whole body)
        # apart from the rest: polling, the change feed, publishing.
        result["cost"]["seatwatch_cpu_s_by_thread"] = {
            k: threads1.get(k, 0.0) - threads0.get(k, 0.0) for k in threads1}
        result["cost"]["watcher_cpu_s"] = watcher.cpu - w0
        result["feed"] = feed_stats(watcher.between(t0, t1), t1 - t0)
        result["passes"] = pass_stats(watcher.between(t0, t1), CHECKS[self.args.pack][0])
        procs.log(f"[{self.size} {mode}] DB time {result['cost']['db_ms_per_min']:,.0f} ms/min, "
                  f"CPU {result['cost']['cpu_s_per_min']:.2f} s/min")

        # Detection: violations at random moments, each repaired once seen.
        injector = inject.Injector(self.injector_conn, self.layout["inject"],
                                   dataset.INJECT_SEATS, seed=zlib.crc32(f"{self.size}/{mode}".encode()))
        records = []
        count = self.injections.get(mode, DEFAULT_INJECTIONS[mode])
        timeout = self.args.detect_timeout
        rng = random.Random(7)
        d0 = time.monotonic()
        for i in range(count):
            time.sleep(rng.uniform(0.2, cycle))
            kind = inject.ORDER[i % len(inject.ORDER)]
            r = injector.inject(kind)
            event = str(r["event"])
            seen = watcher.wait_for(lambda s: s.ok().get(kind) == 0, r["committed"], timeout)
            r["seen"] = seen.t if seen else None
            if seen:
                exact = watcher.wait_for(
                    lambda s: s.violations().get((kind, event)) == 1, r["committed"], 2)
                r["exact"] = exact is not None and exact.t <= seen.t + 0.001
            injector.repair(r)
            cleared = watcher.wait_for(
                lambda s: all(s.ok().get(k) == 1 for k in r["allowed"]), r["repaired"], timeout)
            r["cleared"] = cleared.t if cleared else None
            records.append(r)
            procs.log(f"[{self.size} {mode}] {i + 1}/{count} {kind} in event {event}: "
                      + (f"seen after {seen.t - r['committed']:.2f} s" if seen else "MISSED")
                      + (f", repair seen after {cleared.t - r['repaired']:.2f} s" if cleared
                         else ", repair NOT seen"))
            if not cleared:
                time.sleep(timeout)  # let it settle before the next one
        d1 = time.monotonic()
        result["detection"] = detection_stats(records, watcher.between(first.t, d1), timeout,
                                              self.args.detect_bound)
        result["detection"]["seconds"] = d1 - d0
        result["feed_during_detection"] = feed_stats(watcher.between(d0, d1), d1 - d0)
        if retained is not None:
            result["retained_wal"] = retained.end()
            procs.log(f"[{self.size} {mode}] WAL retained for the slot: max "
                      f"{result['retained_wal'].get('restart_bytes_max', 0) / 2**20:.1f} MiB "
                      f"over {result['retained_wal']['samples']} samples")
        result["scrape_bytes"] = watcher.bytes
        result["watcher_errors"] = watcher.errors
        watcher.close()
        self.stop_and_drain(proc, (dataset.SEATWATCH, dataset.SEATWATCH_REPL))
        return result

    # -- the peer --------------------------------------------------------------

    def run_peer(self):
        port = free_port(19800)
        queries = exporters.peer_queries(ROOT, BENCH)
        url = self.cluster.tcp_url(self.dbname, dataset.SQL_EXPORTER, "sql_exporter")
        path = os.path.join(self.workdir, "configs", f"sql_exporter-{self.size}.yml")
        with open(path, "w") as f:
            f.write(exporters.sql_exporter_yaml(queries, ("booking",), url, "10s"))
        env = dict(os.environ, **exporters.debian_defaults(
            "prometheus-sql-exporter", ("GOGC", "GOMAXPROCS", "LOGLEVEL")))
        log = os.path.join(self.workdir, "logs", f"sql_exporter-{self.size}.log")
        proc = procs.start(["prometheus-sql-exporter", f"-config.file={path}",
                            f"-web.listen-address=127.0.0.1:{port}"], "sql_exporter", env=env,
                           stderr=log)
        result = {"label": "sql_exporter, reconciliation.sql every 10 s"}
        deadline = time.monotonic() + self.args.ready_timeout
        import measure
        while time.monotonic() < deadline:
            text = measure.fetch(port)
            if text and "sql_booking{" in text:
                break
            time.sleep(1)
        else:
            result["error"] = "sql_exporter never served the booking query"
            procs.stop(proc)
            return result
        time.sleep(12)
        window = cost.Window(self.admin, self.dbname, (dataset.SQL_EXPORTER,), self.postmaster)
        cpu0 = measure_cpu(proc.pid)
        window.start()
        time.sleep(self.args.cost_seconds)
        result["cost"] = window.end()
        result["cost"]["process_cpu_s"] = measure_cpu(proc.pid) - cpu0
        top = result["cost"]["top"]
        if top:
            result["pass_ms"] = top[0]["ms"] / top[0]["calls"]
            result["passes"] = top[0]["calls"]
        procs.log(f"[{self.size} peer] DB time {result['cost']['db_ms_per_min']:,.0f} ms/min")
        self.stop_and_drain(proc, (dataset.SQL_EXPORTER,))
        return result

    # -- the whole run ---------------------------------------------------------

    def main(self):
        args = self.args
        events = args.seats // dataset.SEATS_PER_EVENT
        self.size = f"{args.seats // 1_000_000}m" if args.seats % 1_000_000 == 0 else str(args.seats)
        self.dbname = f"changes_{self.size}"
        self.layout = dataset.layout(events)
        self.injections = dict(DEFAULT_INJECTIONS)
        for item in filter(None, args.injections.split(",")):
            k, _, v = item.partition("=")
            self.injections[k] = int(v)
        results_path = os.path.join(self.workdir, f"results{self.suffix}.json")
        saved = {}
        if os.path.exists(results_path):
            with open(results_path) as f:
                saved = json.load(f)
        if args.report_only:
            if not self.suffix:
                doc.write(ROOT, saved)
            return 0
        results = {self.size: saved.get(self.size, {})}

        procs.install_handlers()
        wall0 = time.monotonic()
        self.cluster.start()
        if not args.leave_running:
            procs.on_exit(self.cluster.destroy if args.destroy else self.cluster.stop)
        self.cluster.create_roles()
        seeded = dataset.seed(self.cluster, ROOT, self.dbname, events, reseed=args.reseed)
        have_setup = dataset.changes_setup(self.cluster, ROOT, self.dbname)
        dataset.repair_leftovers(self.cluster, self.dbname)
        # Every run starts from the seeded on-sale events, not from what the
        # load of earlier runs left in them; the modes of one run follow each
        # other under one load, so a later mode's hot events hold more rows
        # (run one mode per invocation to compare modes).
        dataset.reset_onsale(self.cluster, ROOT, self.dbname, events)
        self.cluster.psql(self.dbname, "-c", "CHECKPOINT")
        self.admin = self.cluster.connect(self.dbname, application_name="bench-admin")
        self.postmaster = self.cluster.postmaster_pid()
        self.injector_conn = self.cluster.connect(self.dbname, application_name="bench-injector")

        entry = results.setdefault(self.size, {})
        entry["seats"] = args.seats
        entry["events"] = events
        entry["layout"] = {"onsale": len(self.layout["onsale"]), "hot": len(self.layout["hot"]),
                           "inject_events": self.layout["inject"]}
        entry["tables"] = dataset.table_sizes(self.cluster, self.dbname)
        if seeded:
            entry["seed_seconds"] = seeded
            entry["seed_steps"] = dataset.seed_seconds(self.cluster, self.dbname)
        entry["changes_setup"] = have_setup
        entry["detect_timeout"] = args.detect_timeout
        entry["cost_seconds"] = args.cost_seconds
        entry.setdefault("modes", {})

        def connect(name):
            return self.cluster.connect(self.dbname, user=dataset.APP, application_name=name)

        load = workload.Workload(connect, self.layout, hot_clients=args.hot_clients,
                                 hot_rate=args.hot_rate, trickle_rate=args.trickle_rate)
        load.start()
        procs.log(f"workload: {load.description}")
        time.sleep(15)
        c0, l0 = load.counts(), time.monotonic()
        try:
            for mode in filter(None, args.modes.split(",")):
                if args.max_minutes and (time.monotonic() - wall0) / 60 > args.max_minutes:
                    procs.log(f"--max-minutes reached: {mode} not run")
                    break
                m0 = time.monotonic()
                if mode == "peer":
                    entry["peer"] = self.run_peer()
                    entry["peer"]["minutes"] = (time.monotonic() - m0) / 60
                else:
                    entry["modes"][mode] = self.run_mode(mode)
                    entry["modes"][mode]["minutes"] = (time.monotonic() - m0) / 60
                    entry["modes"][mode]["load_avg"] = os.getloadavg()
                    entry["modes"][mode]["seatwatch_commit"] = git_head()
                    entry["modes"][mode]["date"] = datetime.datetime.now(
                        datetime.timezone.utc).isoformat(timespec="seconds")
                save(results_path, results)
        finally:
            c1 = load.counts()
            seconds = time.monotonic() - l0
            load.close()
            entry["workload"] = dict(load.description, seconds=seconds,
                                     rates={k: (c1[k] - c0.get(k, 0)) / seconds for k in c1})
            save(results_path, results)
        entry["machine"] = machine()
        with self.admin.cursor() as cur:
            cur.execute("SELECT version()")
            entry["postgresql"] = cur.fetchone()[0]
            settings = {}
            for name in ("shared_buffers", "effective_cache_size", "max_parallel_workers_per_gather",
                         "wal_level", "fsync", "synchronous_commit", "autovacuum", "jit"):
                cur.execute(f"SHOW {name}")
                settings[name] = cur.fetchone()[0]
            entry["settings"] = settings
        entry["command"] = "bench/changes/run " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        save(results_path, results)
        if not args.no_doc and not self.suffix:
            with open(results_path) as f:
                doc.write(ROOT, json.load(f))
        procs.log(f"done in {(time.monotonic() - wall0) / 60:.1f} min; results in {results_path}")
        return 0


def git_head():
    out = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "daemon", "queries"],
                           capture_output=True, text=True).stdout.strip()
    return out + ("+dirty" if dirty else "")


def measure_cpu(pid):
    import measure
    return measure.cpu_seconds(pid)


# seatwatch names its threads (util/thread_name.h): the checks lane's
# poller ("sw-checks": drains, rechecks, publishing), the change feed's
# stream reader ("sw-stream"); CivetWeb's are "civetweb-*".
THREAD_GROUPS = (("civetweb", "http"), ("sw-checks", "checks"), ("sw-stream", "stream"))


def measure_threads(pid):
    """seatwatch's CPU by thread group: "http" (CivetWeb's threads, serving
    scrapes), "checks", "stream" and "daemon" (every other thread), plus
    "daemon" as before: everything but "http"."""
    import measure

    def group(name):
        return next((g for prefix, g in THREAD_GROUPS if name.startswith(prefix)), "other")

    out = measure.cpu_seconds_by_thread(pid, group)
    out["daemon"] = sum(v for k, v in out.items() if k != "http")
    return out


def save(path, results):
    """Writes this run's sizes over what is in the file now (another run may
    have saved another size meanwhile)."""
    merged = {}
    if os.path.exists(path):
        with open(path) as f:
            merged = json.load(f)
    merged.update(results)
    results = merged
    tmp = path + f".tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def feed_stats(samples, seconds):
    """Drain duration (the gauge, each distinct value once), decoded rate,
    WAL retained (max lag), resyncs."""
    drains, last = [], None
    lag = []
    for s in samples:
        d = s.get("seatwatch_changes_drain_duration_seconds")
        if d is not None and d != last:
            drains.append(d)
            last = d
        v = s.get("seatwatch_changes_lag_bytes")
        if v is not None:
            lag.append(v)
    out = {"drains_seen": len(drains)}
    if drains:
        out.update(drain_ms_mean=statistics.mean(drains) * 1e3,
                   drain_ms_p99=percentile(drains, 99) * 1e3, drain_ms_max=max(drains) * 1e3)
    if lag:
        out.update(lag_bytes_max=max(lag), lag_bytes_median=statistics.median(lag))
    if len(samples) >= 2:
        d0 = samples[0].get("seatwatch_changes_decoded_total")
        d1 = samples[-1].get("seatwatch_changes_decoded_total")
        if d0 is not None and d1 is not None:
            out["decoded_per_s"] = (d1 - d0) / seconds
        r0 = {dict(l).get("reason"): v for l, v in samples[0].values.get(
            "seatwatch_changes_resyncs_total", ())}
        r1 = {dict(l).get("reason"): v for l, v in samples[-1].values.get(
            "seatwatch_changes_resyncs_total", ())}
        out["resyncs"] = {k: r1[k] - r0.get(k, 0) for k in r1 if r1[k] - r0.get(k, 0)}
    return out


def pass_stats(samples, check):
    """Full passes by reason during the window, and the dirty keys per cycle."""
    if len(samples) < 2:
        return {}

    def passes(s):
        return {(dict(l).get("check"), dict(l).get("reason")): v
                for l, v in s.values.get("seatwatch_full_passes_total", ())}
    p0, p1 = passes(samples[0]), passes(samples[-1])
    full = {f"{c}/{r}": p1[(c, r)] - p0.get((c, r), 0) for (c, r) in p1
            if p1[(c, r)] - p0.get((c, r), 0)}
    dirty = [s.get("seatwatch_dirty_keys", check=check) for s in samples]
    dirty = [d for d in dirty if d is not None]
    out = {"full_passes": full}
    if dirty:
        out.update(dirty_keys_median=statistics.median(dirty), dirty_keys_max=max(dirty))
    # The check's duration (the gauge: each distinct value once).
    durations, last = [], None
    for s in samples:
        d = s.get("seatwatch_check_duration_seconds", check=check)
        if d is not None and d != last:
            durations.append(d)
            last = d
    if durations:
        out.update(check_seconds_median=statistics.median(durations),
                   check_seconds_max=max(durations), check_runs_seen=len(durations))
    return out


def detection_stats(records, samples, timeout, bound):
    latencies = [r["seen"] - r["committed"] for r in records if r.get("seen")]
    clears = [r["cleared"] - r["repaired"] for r in records if r.get("cleared")]
    missed = [r["id"] for r in records if not r.get("seen")]
    # False alarms: an invariant at 0 while no injection that breaks it was
    # between its commit and the scrape that showed its repair.
    windows = [(r["committed"], r.get("cleared") or (r.get("repaired", r["committed"]) + timeout),
                set(r["allowed"])) for r in records]
    alarms, absent, in_alarm = [], 0, set()
    for s in samples:
        ok = s.ok()
        if not ok:
            absent += 1
            continue
        for invariant, value in ok.items():
            if value == 0 and not any(a <= s.t <= b and invariant in allowed
                                      for a, b, allowed in windows):
                if invariant not in in_alarm:
                    alarms.append({"invariant": invariant, "t": s.t})
                    in_alarm.add(invariant)
            else:
                in_alarm.discard(invariant)
    return {
        "injected": len(records),
        "kinds": sorted({r["kind"] for r in records}),
        "seen": len(latencies),
        "missed": len(missed),
        "exact": sum(1 for r in records if r.get("exact")),
        "p50_s": statistics.median(latencies) if latencies else None,
        "p99_s": percentile(latencies, 99),
        "max_s": max(latencies) if latencies else None,
        "within_bound": sum(1 for x in latencies if x <= bound),
        "bound_s": bound,
        "repair_p50_s": statistics.median(clears) if clears else None,
        "repair_max_s": max(clears) if clears else None,
        "repairs_not_seen": sum(1 for r in records if not r.get("cleared")),
        "false_alarms": len(alarms),
        "false_alarm_invariants": sorted({a["invariant"] for a in alarms}),
        "samples": len(samples),
        "samples_without_ok": absent,
        "latencies_s": [round(x, 3) for x in latencies],
        "records": [{"kind": r["kind"], "event": r["event"],
                     "seen_s": round(r["seen"] - r["committed"], 3) if r.get("seen") else None,
                     "exact": r.get("exact")} for r in records],
    }


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bench/changes/run", description=__doc__.splitlines()[0])
    p.add_argument("--seats", type=int, default=5_000_000,
                   help="seats in the data set, 1,000 per event (default 5000000)")
    p.add_argument("--modes", default="peer,full,incr10,incr1",
                   help="comma-separated, run in this order: peer (sql_exporter at 10 s), full "
                        "(full pass every 10 s), incr10, incr1 and incr200 (incremental at 10 s, 1 s "
                        "and 200 ms, the default)")
    p.add_argument("--cost-seconds", type=float, default=180,
                   help="length of each cost window (default 180)")
    p.add_argument("--settle-seconds", type=float, default=None,
                   help="workload between seatwatch's first result and the cost window "
                        "(default: two cycles, at least 10 s); a longer one measures the steady "
                        "state after the hot keys are followed row by row")
    p.add_argument("--injections", default="",
                   help="violations per mode, e.g. full=6,incr10=12,incr1=30 (the defaults)")
    p.add_argument("--detect-timeout", type=float, default=90,
                   help="an injection not seen after this long is missed (default 90 s)")
    p.add_argument("--detect-bound", type=float, default=3.0,
                   help="the detection target counted against (default 3 s)")
    p.add_argument("--hot-clients", type=int, default=4)
    p.add_argument("--hot-rate", type=float, default=25.0,
                   help="operations per second per hot client (default 25)")
    p.add_argument("--trickle-rate", type=float, default=4.0,
                   help="operations per second elsewhere (default 4)")
    p.add_argument("--statement-timeout", default="120s",
                   help="seatwatch's statement_timeout (a 20M full pass takes ~20 s)")
    p.add_argument("--ready-timeout", type=float, default=600)
    p.add_argument("--recheck-time-per-minute", default="",
                   help="[changes] recheck_time_per_minute to write (default: none written, "
                        "the binary's default; 60s holds no recheck back)")
    p.add_argument("--max-minutes", type=float, default=0, help="stop starting modes after this")
    p.add_argument("--workdir", default=os.path.join(ROOT, "build-bench", "changes-work"))
    p.add_argument("--reseed", action="store_true")
    p.add_argument("--destroy", action="store_true",
                   help="destroy the cluster at the end (default: stop it, data kept)")
    p.add_argument("--leave-running", action="store_true",
                   help="leave the cluster running at the end (for a second run beside this one)")
    p.add_argument("--no-doc", action="store_true", help="results.json only")
    p.add_argument("--pack", choices=("hand", "declared"), default="hand",
                   help="hand: the booking pack written by hand (reconciliation.sql); declared: "
                        "the pack as config/seatwatch.toml declares it, written to "
                        "results-declared.json only")
    p.add_argument("--report-only", action="store_true",
                   help="render the docs/benchmarks.md section from results.json")
    p.add_argument("--seatwatch", default=None, help="the seatwatch binary")
    return p.parse_args(argv)


if __name__ == "__main__":
    sys.exit(Run(parse_args(sys.argv[1:])).main())
