"""bench/run: seatwatch against postgres_exporter and sql_exporter.

See bench/README.md. Every process this starts is recorded by PID and
stopped on exit; the scratch cluster is stopped too (its data is kept for the
next run, so the 5M seed is built once)."""

import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys
import time

# The harness shared with the tests: processes by PID, the cluster, the booking flow.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                                "support"))
import cleanup  # noqa: E402
import exporters  # noqa: E402
from host import free_port, machine  # noqa: E402
import locks  # noqa: E402
import measure  # noqa: E402
import pg  # noqa: E402
import procs  # noqa: E402
import report  # noqa: E402
import sizes  # noqa: E402

SIZES = {"100k": 100, "1m": 1000, "5m": 5000}  # events of 1,000 seats

PLANS = {
    # scrapes: sequential scrapes of the pollers; min/max_direct: of postgres_exporter (about a
    # minute of them); fresh_scrapes: on a new connection each; refresh_seconds: at least this
    # long and about four refreshes, at most max_refresh_seconds; floor_runs: psql runs of the
    # bare and full reconciliation; lock_polls: polls counted in the lock scenario;
    # cleanup_*: events of 1,000 seats (80% expired holds), pgbench seconds, when the cleanup
    # starts; claim_rate: claims per second (pgbench -R).
    "full": {"scrapes": 300, "min_direct": 20, "max_direct": 100, "fresh_scrapes": 30,
             "wrk_seconds": 10, "refresh_seconds": 60, "max_refresh_seconds": 240,
             "floor_runs": 5, "ready_timeout": 900, "lock_polls": 10,
             "cleanup_events": 1250, "cleanup_seconds": 90, "cleanup_start": 10,
             "claim_rate": 2000},
    "quick": {"scrapes": 100, "min_direct": 10, "max_direct": 30, "fresh_scrapes": 10,
              "wrk_seconds": 5, "refresh_seconds": 30, "max_refresh_seconds": 90,
              "floor_runs": 3, "ready_timeout": 300, "lock_polls": 5,
              "cleanup_events": 125, "cleanup_seconds": 25, "cleanup_start": 5,
              "claim_rate": 2000},
}


class DeadlineExceeded(Exception):
    pass


class Context:
    pass


def deb_version(package):
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                         capture_output=True, text=True)
    return out.stdout.strip() or "not installed"


def versions(ctx):
    with ctx.cluster.cursor("postgres") as cur:
        cur.execute("SHOW server_version")
        server = cur.fetchone()[0]
        settings = {}
        for name in ("shared_buffers", "work_mem", "max_parallel_workers_per_gather", "jit",
                     "max_connections", "fsync", "synchronous_commit"):
            cur.execute(f"SHOW {name}")
            settings[name] = cur.fetchone()[0]
    return {
        "seatwatch": measure.tool_version([ctx.seatwatch, "--version"]),
        "seatwatch_commit": subprocess.run(["git", "-C", ctx.root, "rev-parse", "--short", "HEAD"],
                                           capture_output=True, text=True).stdout.strip(),
        "seatwatch_tree_dirty": bool(subprocess.run(
            ["git", "-C", ctx.root, "status", "--porcelain", "--", "daemon", "queries"],
            capture_output=True, text=True).stdout.strip()),
        "postgres_exporter": "prometheus-postgres-exporter " +
                             deb_version("prometheus-postgres-exporter"),
        "sql_exporter": "prometheus-sql-exporter " + deb_version("prometheus-sql-exporter"),
        "postgresql": server,
        "postgresql_settings": settings,
        "wrk": "wrk " + deb_version("wrk"),
        "pgbench": measure.tool_version([ctx.cluster.bin("pgbench"), "--version"]),
    }


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bench/run", description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default=None,
                   help='space- or comma-separated list of 100k, 1m, 5m (default "100k 1m 5m"; '
                        'with --quick "100k")')
    p.add_argument("--quick", action="store_true",
                   help="smoke test: 100k only, fewer scrapes, short phases, 100k-hold cleanup")
    p.add_argument("--workdir", default=None,
                   help="cluster, configs, logs, results (default build-bench/bench-work)")
    p.add_argument("--reseed", action="store_true", help="seed again even if the data is there")
    p.add_argument("--skip", default="",
                   help="comma-separated parts to skip: sizes, locks, cleanup, refresh (the "
                        "refresh phase of each size)")
    p.add_argument("--tools", default=None,
                   help="comma-separated subset of seatwatch, postgres_exporter, sql_exporter "
                        "(default all; the whole page's report expects all three, use it with "
                        "--doc-section gzip or --no-doc)")
    p.add_argument("--doc-section", choices=("all", "gzip"), default="all",
                   help="gzip: replace only the gzip section of docs/benchmarks.md, keeping "
                        "the rest of an earlier run's page")
    p.add_argument("--max-minutes", type=float, default=100,
                   help="stop starting new work after this long (default 100)")
    p.add_argument("--no-doc", action="store_true",
                   help="write results.json but not docs/benchmarks.md")
    p.add_argument("--report-only", action="store_true",
                   help="only render docs/benchmarks.md from an earlier results.json")
    p.add_argument("--seatwatch", default=None, help="the seatwatch binary")
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    ctx = Context()
    ctx.bench = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ctx.root = os.path.dirname(ctx.bench)
    ctx.workdir = os.path.abspath(args.workdir or os.path.join(ctx.root, "build-bench",
                                                               "bench-work"))
    results_path = os.path.join(ctx.workdir, "results.json")
    if args.report_only:
        with open(results_path) as f:
            results = json.load(f)
        if args.doc_section == "gzip":
            report.write_gzip_section(ctx.root, results)
        else:
            report.write(ctx.root, results, ctx.workdir)
        return 0

    mode = "quick" if args.quick else "full"
    plan = dict(PLANS[mode])
    labels = (args.sizes or ("100k" if args.quick else "100k 1m 5m")).replace(",", " ").split()
    for label in labels:
        if label not in SIZES:
            sys.exit(f"bench/run: unknown size {label!r} (known: {', '.join(SIZES)})")
    skip = {s for s in args.skip.split(",") if s}
    plan["skip_refresh"] = "refresh" in skip

    for d in ("logs", "configs", "pgbench"):
        os.makedirs(os.path.join(ctx.workdir, d), exist_ok=True)
    ctx.seatwatch = args.seatwatch or os.path.join(ctx.root, "build-bench/daemon/seatwatch")
    ctx.reseed = args.reseed
    ctx.seeded = set()  # reseeded in this run already
    ctx.current_db = None
    started = time.monotonic()
    deadline = started + args.max_minutes * 60

    def check_deadline():
        if time.monotonic() > deadline:
            raise DeadlineExceeded(f"--max-minutes {args.max_minutes:g} reached")
    ctx.check_deadline = check_deadline

    procs.install_handlers()
    ctx.cluster = pg.Cluster(ctx.root, ctx.workdir,
                             "-c shared_buffers=2GB -c max_wal_size=8GB "
                             "-c checkpoint_timeout=30min -c autovacuum=off")
    ctx.cluster.start()
    ctx.cluster.create_roles()

    recon_path = os.path.join(ctx.root, "queries/booking/reconciliation.sql")
    ctx.reconciliation_inline = exporters.inline_params(exporters.sql_text(recon_path))
    ctx.peer_queries = exporters.peer_queries(ctx.root, ctx.bench)
    ctx.signatures = {
        "reconciliation": sizes.first_line(recon_path),
        "holds": sizes.first_line(os.path.join(ctx.root, "queries/booking/holds.sql")),
    }
    ports = {}
    base = 19640
    for name in ("seatwatch", "postgres_exporter", "sql_exporter"):
        ports[name] = free_port(base)
        base = ports[name] + 1
    tools = [exporters.Seatwatch(ctx, ports["seatwatch"]),
             exporters.PostgresExporter(ctx, ports["postgres_exporter"]),
             exporters.SqlExporter(ctx, ports["sql_exporter"])]
    if args.tools:
        wanted = {t for t in args.tools.replace(" ", ",").split(",") if t}
        unknown = wanted - {t.name for t in tools}
        if unknown:
            sys.exit(f"bench/run: unknown tool(s) {', '.join(sorted(unknown))}")
        tools = [t for t in tools if t.name in wanted]

    results = {
        "mode": mode,
        "command": "bench/run " + " ".join(shlex.quote(a) for a in argv),
        "started_at": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": machine(),
        "versions": versions(ctx),
        "plan": plan,
        "sizes": [],
        "skipped": [],
    }

    def save():
        results["elapsed_minutes"] = (time.monotonic() - started) / 60
        with open(results_path + ".tmp", "w") as f:
            json.dump(results, f, indent=1, default=str)
        os.replace(results_path + ".tmp", results_path)

    save()
    try:
        if "locks" not in skip:
            try:
                check_deadline()
                label = labels[0]
                ctx.cluster.seed(f"bench_{label}", sizes.seed_files(ctx), SIZES[label],
                                 reseed=ctx.reseed)
                ctx.seeded.add(label)
                results["locks"] = locks.run(ctx, f"bench_{label}", SIZES[label], plan, tools)
            except DeadlineExceeded as e:
                results["skipped"].append({"part": "lock scenario", "reason": str(e)})
            save()
        if "cleanup" not in skip:
            try:
                check_deadline()
                results["cleanup"] = cleanup.run(ctx, plan, tools[0])
            except DeadlineExceeded as e:
                results["skipped"].append({"part": "cleanup", "reason": str(e)})
            save()
        if "sizes" not in skip:
            for label in labels:
                try:
                    check_deadline()
                except DeadlineExceeded as e:
                    results["skipped"].append({"part": f"size {label}", "reason": str(e)})
                    continue
                size_plan = dict(plan)
                entry = None
                try:
                    entry = sizes.run_size(ctx, label, SIZES[label], size_plan, tools)
                except DeadlineExceeded as e:
                    results["skipped"].append({"part": f"size {label} (partial)",
                                               "reason": str(e)})
                results["sizes"].append(entry or {"label": label, "incomplete": True})
                if entry and entry.get("skipped_tools"):
                    results["skipped"].append({
                        "part": f"size {label}: " + ", ".join(entry["skipped_tools"]),
                        "reason": entry["skipped_reason"]})
                save()
    finally:
        save()
    procs.log(f"results in {results_path} ({results['elapsed_minutes']:.1f} min)")
    if args.no_doc:
        pass
    elif args.doc_section == "gzip":
        report.write_gzip_section(ctx.root, results)
    else:
        report.write(ctx.root, results, ctx.workdir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
