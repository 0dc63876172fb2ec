"""Per size: the floor, then each tool's scrapes, throughput, memory, CPU and
database cost."""

import os
import re
import time

import measure
import pg
import procs


def first_line(path):
    """The first line of SQL after the header comment: identifies the file's
    statement in pg_stat_statements, whatever wraps it."""
    with open(path) as f:
        for line in f:
            stripped = line.strip()
            if stripped and not stripped.startswith("--"):
                return stripped
    raise ValueError(f"{path} has no SQL")


def classify(query, signatures):
    if "seatwatch_detail" in query:
        return "detail"
    if signatures["reconciliation"] in query:
        return "reconciliation"
    if signatures["holds"] in query:
        return "holds"
    if re.search(r"pg_stat_activity|pg_locks|pg_stat_database|ctid|pg_index|to_regclass", query):
        return "locks"
    if re.match(r"\s*(BEGIN|COMMIT|ROLLBACK|SET|SAVEPOINT|RELEASE|START)\b", query, re.I):
        return "control"
    return "other"


def breakdown(rows, signatures):
    out = {}
    for row in rows:
        kind = classify(row["query"], signatures)
        entry = out.setdefault(kind, {"calls": 0, "ms": 0.0})
        entry["calls"] += row["calls"]
        entry["ms"] += row["ms"]
    return out


def pack_per_poll(rows, signatures):
    """The booking pack's statements per poll (report.pack_ms adds up the
    pack from them). The reconciliation and holds.sql run
    once per poll: their mean time per call, so a poll cut off by the end of
    the window does not skew it. The detail queries run only when an
    invariant's violations change (or every 5 minutes): their total time
    divided by the polls (the reconciliation's calls) in the window."""
    per = {"reconciliation": 0.0, "detail": 0.0, "holds": 0.0}
    calls = {"reconciliation": 0, "detail": 0, "holds": 0}
    detail_ms = 0.0
    for row in rows:
        kind = classify(row["query"], signatures)
        if kind not in per or not row["calls"]:
            continue
        calls[kind] += row["calls"]
        if kind == "detail":
            detail_ms += row["ms"]
        else:
            per[kind] += row["ms"] / row["calls"]
    polls = calls["reconciliation"]
    per["detail"] = detail_ms / polls if polls else 0.0
    return {
        "reconciliation_ms_per_poll": per["reconciliation"],
        "detail_ms_per_poll": per["detail"],
        "detail_calls": calls["detail"],
        "pack_polls": polls,
        "holds_ms_per_poll": per["holds"],
    }


def psql_timings(cluster, dbname, sql, runs, timeout):
    """Runs `sql` runs+1 times in one psql session as the floor role, with
    \\timing; drops the first (warm-up) run; returns milliseconds. JIT off,
    as in seatwatch's own sessions (daemon/db/conninfo.cc)."""
    script = ("SET jit = off;\n\\timing on\n\\o /dev/null\n" +
              (sql.rstrip().rstrip(";") + ";\n") * (runs + 1))
    out = cluster.psql(dbname, user=pg.ROLES["floor"], input_text=script, timeout=timeout).stdout
    times = [float(t) for t in re.findall(r"^Time: ([\d.]+) ms", out, re.M)]
    if len(times) != runs + 1:
        raise RuntimeError(f"psql timing: expected {runs + 1} times, got {out[-500:]}")
    return times[1:]


def expected_rows(cluster, dbname, reconciliation_sql):
    """What the reconciliation returns right now: the reference each tool's
    exported series are compared with."""
    with cluster.cursor(dbname) as cur:
        cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        cur.execute(reconciliation_sql)
        rows = cur.fetchall()
        names = [d[0] for d in cur.description]
        cur.execute("COMMIT")
    violations, inventory = {}, 0
    for row in rows:
        r = dict(zip(names, row))
        if r["invariant"] is not None:
            violations[(r["invariant"], str(r["event_id"]))] = float(r["violations"])
        else:
            inventory += 1
    return violations, inventory


def floor(ctx, dbname, runs):
    recon = ctx.reconciliation_inline
    with open(os.path.join(ctx.bench, "sql/bare_reconciliation.sql")) as f:
        bare = f.read()
    timeout = 1800
    bare_ms = psql_timings(ctx.cluster, dbname, bare, runs, timeout)
    recon_ms = psql_timings(ctx.cluster, dbname, recon, runs, timeout)
    return {
        "runs": runs,
        "bare_ms": bare_ms,
        "bare_median_ms": pg.median(bare_ms),
        "reconciliation_ms": recon_ms,
        "reconciliation_median_ms": pg.median(recon_ms),
    }


def correctness(tool, text, expected):
    violations, inventory = expected
    got = tool.violations(text)
    got_inventory = tool.inventory_series(text)
    return {
        "violations_expected": len(violations),
        "violations_exported": len(got),
        "violations_match": got == violations,
        "inventory_expected": inventory,
        "inventory_exported": got_inventory,
    }


def scrape_phase(ctx, tool, dbname, plan, expected):
    """The tool serves what it has; for the pollers nothing refreshes during
    the phase (1 h intervals), so every statement seen is caused by a scrape."""
    out = {"load_average": os.getloadavg()}
    tool.start(dbname, "scrape")
    try:
        text = measure.wait_for(tool.refreshed, plan["ready_timeout"], interval=0.5,
                                what=f"{tool.name} to serve its first refresh")
        rss = measure.RssSampler(tool.pid)
        rss.sample()
        out["correctness"] = correctness(tool, text, expected)
        count = plan["scrapes"] if tool.polls else plan["direct_scrapes"]
        # Before any other gzip scrape: for seatwatch this one deflates the
        # parts of the poll (once per part; the scrapes after it reuse them).
        out["first_gzip_scrape"] = measure.one_scrape(tool.port, tool.pid)
        for _ in range(3):  # warm-up, not counted
            measure.fetch(tool.port, timeout=300)
        ctx.cluster.stats_reset()
        seq, text = measure.sequential(tool.port, tool.pid, count, warmup=0)
        rows = ctx.cluster.stats(dbname, tool.name)
        calls, ms = pg.totals(rows)
        seq["db_statements_per_scrape"] = calls / count
        seq["db_ms_per_scrape"] = ms / count
        seq["db_statements"] = rows
        out["sequential"] = seq
        # The same without Accept-Encoding: bytes and CPU of the identity body.
        # postgres_exporter queries on every scrape, so a few are enough.
        out["sequential_identity"] = measure.sequential(
            tool.port, tool.pid, count if tool.polls else min(count, 5), warmup=1,
            headers=measure.IDENTITY_HEADERS)[0]
        out["fresh_connections"] = measure.fresh_connections(
            tool.port, min(count, plan["fresh_scrapes"] if tool.polls else 5))
        rss.sample()
        ctx.cluster.stats_reset()
        w = measure.wrk(tool.port, tool.pid, plan["wrk_seconds"])
        # wrk abandons the requests in flight when it stops; postgres_exporter
        # still runs their queries. Let them finish before counting.
        w["drain_seconds"] = ctx.cluster.drain(dbname, tool.name, timeout=600)
        rows = ctx.cluster.stats(dbname, tool.name)
        calls, ms = pg.totals(rows)
        w["db_statements_per_scrape"] = calls / w["requests"] if w["requests"] else None
        w["db_ms_per_scrape"] = ms / w["requests"] if w["requests"] else None
        out["wrk"] = w
        rss.sample()
        out["rss_bytes"] = rss.max_rss
        out["rss_anon_bytes"], out["rss_file_bytes"] = rss.anon, rss.file
        out["hwm_bytes"] = rss.hwm
    finally:
        tool.stop()
    return out


def refresh_phase(ctx, tool, dbname, plan):
    """The poller on its normal timer with nobody scraping: CPU and database
    cost per refresh."""
    if tool.name == "seatwatch":
        tool.start(dbname, "refresh", poll="10s", locks="2s", holds="10s")
    else:
        tool.start(dbname, "refresh", interval="10s")
    try:
        first = time.monotonic()
        measure.wait_for(tool.refreshed, plan["ready_timeout"], interval=0.5,
                         what=f"{tool.name} to serve its first refresh")
        # At least about four refreshes, however long one takes.
        window = min(plan["max_refresh_seconds"],
                     max(plan["refresh_seconds"], 4.5 * (time.monotonic() - first)))
        rss = measure.RssSampler(tool.pid)
        rss.sample()
        ctx.cluster.stats_reset()
        cpu_before = measure.cpu_seconds(tool.pid)
        started = time.monotonic()
        while time.monotonic() - started < window:
            time.sleep(2)
            rss.sample()
        cpu = measure.cpu_seconds(tool.pid) - cpu_before
        seconds = time.monotonic() - started
        rows = ctx.cluster.stats(dbname, tool.name)
    finally:
        tool.stop()
    parts = breakdown(rows, ctx.signatures)
    polls = parts.get("reconciliation", {}).get("calls", 0)
    calls, ms = pg.totals(rows)
    out = {
        "seconds": seconds,
        "refreshes": polls,
        "cpu_ms": cpu * 1e3,
        "cpu_ms_per_minute": cpu * 1e3 * 60 / seconds,
        "db_statements": calls,
        "db_ms": ms,
        "breakdown": parts,
        "statements": rows,
        "rss_bytes": rss.max_rss,
        "rss_anon_bytes": rss.anon,
        "rss_file_bytes": rss.file,
        "hwm_bytes": rss.hwm,
        "load_average": os.getloadavg(),
    }
    if polls:
        out["cpu_ms_per_refresh"] = cpu * 1e3 / polls
        out["db_statements_per_refresh"] = calls / polls
        out["db_ms_per_refresh"] = ms / polls
        out.update(pack_per_poll(rows, ctx.signatures))
        lock_polls = max((r["calls"] for r in rows if "pg_stat_activity" in r["query"]), default=0)
        out["lock_polls"] = lock_polls
        if lock_polls:
            out["lock_ms_per_poll"] = parts.get("locks", {}).get("ms", 0) / lock_polls
    return out


def seed_files(ctx):
    return [os.path.join(ctx.root, "queries/booking/schema.sql"),
            os.path.join(ctx.bench, "sql/seed.sql"),
            os.path.join(ctx.bench, "sql/violations.sql")]


def run_size(ctx, label, events, plan, tools):
    dbname = f"bench_{label}"
    ctx.current_db = dbname
    started = time.monotonic()
    seeded = ctx.cluster.seed(dbname, seed_files(ctx), events,
                              reseed=ctx.reseed and label not in ctx.seeded)
    ctx.seeded.add(label)
    result = {"label": label, "events": events, "seats": events * 1000,
              "seed_seconds": time.monotonic() - started if seeded else None,
              "tables": ctx.cluster.table_sizes(dbname), "tools": {}}
    expected = expected_rows(ctx.cluster, dbname, ctx.reconciliation_inline)
    result["expected"] = {"violation_rows": len(expected[0]), "inventory_rows": expected[1],
                          "violations": sorted(f"{k[0]}@{k[1]}={v:g}"
                                               for k, v in expected[0].items())}
    procs.log(f"{dbname}: floor ({plan['floor_runs']} runs each)")
    result["floor"] = floor(ctx, dbname, plan["floor_runs"])
    procs.log(f"{dbname}: bare {result['floor']['bare_median_ms']:.1f} ms, reconciliation.sql "
              f"{result['floor']['reconciliation_median_ms']:.1f} ms (psql medians)")
    # postgres_exporter runs the pack on every scrape: about a minute of them.
    per_scrape = result["floor"]["reconciliation_median_ms"] + 20
    plan["direct_scrapes"] = int(min(plan["max_direct"], max(plan["min_direct"],
                                                             60000 / per_scrape)))
    for tool in tools:
        try:
            ctx.check_deadline()
        except Exception as error:  # the run's time budget: keep what is measured
            result["skipped_tools"] = [t.name for t in tools[tools.index(tool):]]
            result["skipped_reason"] = str(error)
            break
        procs.log(f"{dbname}: {tool.name}: scrapes")
        entry = scrape_phase(ctx, tool, dbname, plan, expected)
        seq = entry["sequential"]
        procs.log(f"{dbname}: {tool.name}: p50 {seq['p50_ms']:.2f} ms, p95 {seq['p95_ms']:.2f} ms, "
                  f"{seq['series']} series, cpu/scrape {seq['cpu_ms_per_scrape']:.2f} ms, "
                  f"db statements/scrape {seq['db_statements_per_scrape']:.1f}, "
                  f"wrk {entry['wrk']['rps']:.1f}/s, rss {entry['rss_bytes'] / 2**20:.1f} MiB")
        ident = entry["sequential_identity"]
        procs.log(f"{dbname}: {tool.name}: {seq['content_encoding'] or 'identity'} "
                  f"{seq['wire_bytes']:,} B, cpu/scrape {seq['cpu_ms_per_scrape']:.2f} ms; "
                  f"identity {ident['wire_bytes']:,} B, cpu/scrape "
                  f"{ident['cpu_ms_per_scrape']:.2f} ms; first gzip scrape cpu "
                  f"{entry['first_gzip_scrape']['cpu_ms']:.2f} ms")
        if tool.polls and not plan.get("skip_refresh"):
            procs.log(f"{dbname}: {tool.name}: refresh (no scrapes)")
            entry["refresh"] = refresh_phase(ctx, tool, dbname, plan)
            r = entry["refresh"]
            procs.log(f"{dbname}: {tool.name}: {r['refreshes']} refreshes, cpu/refresh "
                      f"{r.get('cpu_ms_per_refresh', 0):.1f} ms, db/refresh "
                      f"{r.get('db_ms_per_refresh', 0):.1f} ms")
        result["tools"][tool.name] = entry
    return result
