"""Renders docs/benchmarks.md and its plots from results.json."""

import os
import re
import shutil
import subprocess

TOOLS = ("seatwatch", "postgres_exporter", "sql_exporter")
SHORT = {"100k": "100k", "1m": "1M", "5m": "5M"}
LABELS = {"100k": "100k seats (100 events)", "1m": "1M seats (1,000 events)",
          "5m": "5M seats (5,000 events)"}


def short(size):
    return SHORT.get(size["label"], size["label"])


def ms(value, digits=None):
    if value is None:
        return "n/a"
    if digits is None:
        digits = 2 if value < 10 else 1 if value < 100 else 0
    return f"{value:,.{digits}f} ms"


def mib(value):
    return "n/a" if value is None else f"{value / 2**20:.1f} MiB"


def num(value, digits=0):
    return "n/a" if value is None else f"{value:,.{digits}f}"


def ratio(a, b):
    return a / b if a is not None and b else None


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def complete_sizes(results):
    return [s for s in results["sizes"] if not s.get("incomplete")]


def tool_entry(size, tool):
    return size.get("tools", {}).get(tool)


# ---------------------------------------------------------------------------
# Targets


def targets(results):
    """[(target, measured, verdict, why)] in the issue's order."""
    sizes = complete_sizes(results)
    out = []

    # 1. zero statements per scrape
    worst = 0.0
    for size in sizes:
        sw = tool_entry(size, "seatwatch")
        if sw:
            worst = max(worst, sw["sequential"]["db_statements_per_scrape"],
                        sw["wrk"]["db_statements_per_scrape"] or 0)
    met = worst == 0
    out.append(("Zero database statements per scrape, at any scrape rate",
                f"{worst:g} statements per scrape (sequential and 4 concurrent scrapers, every size)",
                "met" if met else "missed", ""))

    # 2. scrape p50 <= 1/5 of sql_exporter's at the largest size; < 1 ms small
    largest = sizes[-1] if sizes else None
    if largest and tool_entry(largest, "sql_exporter") and tool_entry(largest, "seatwatch"):
        sw = tool_entry(largest, "seatwatch")["sequential"]
        sq = tool_entry(largest, "sql_exporter")["sequential"]
        r = ratio(sw["p50_ms"], sq["p50_ms"])
        fresh = tool_entry(largest, "seatwatch")["fresh_connections"]["p50_ms"]
        verdict = "met" if r <= 0.2 else f"missed: {r:.2f}x of sql_exporter's, {r / 0.2:.1f}x the allowed 1/5"
        out.append((f"Scrape p50 at most 1/5 of sql_exporter's with {sw['series']:,} series "
                    f"({short(largest)})",
                    f"seatwatch {ms(sw['p50_ms'])}, sql_exporter {ms(sq['p50_ms'])} "
                    f"(ratio {r:.2f}); seatwatch on a new connection per scrape {ms(fresh)}",
                    verdict, ""))
    small = sizes[0] if sizes else None
    if small and tool_entry(small, "seatwatch"):
        sw = small["tools"]["seatwatch"]
        p50 = sw["sequential"]["p50_ms"]
        verdict = "met" if p50 < 1 else f"missed by {p50 / 1:.0f}x"
        out.append((f"Scrape p50 under 1 ms for a few dozen series ({short(small)}: "
                    f"{sw['sequential']['series']:,} series)",
                    f"{ms(p50)} on a reused connection, {ms(sw['fresh_connections']['p50_ms'])} on "
                    "a new connection per scrape", verdict, ""))

    # 3. CPU per scrape <= 1/5 of sql_exporter's
    if largest and tool_entry(largest, "sql_exporter") and tool_entry(largest, "seatwatch"):
        a = largest["tools"]["seatwatch"]["sequential"]["cpu_ms_per_scrape"]
        b = largest["tools"]["sql_exporter"]["sequential"]["cpu_ms_per_scrape"]
        r = ratio(a, b)
        out.append((f"CPU per scrape at most 1/5 of sql_exporter's ({short(largest)})",
                    f"seatwatch {ms(a)}, sql_exporter {ms(b)} (ratio {r:.3f})",
                    "met" if r <= 0.2 else f"missed: {r:.2f}x", ""))

    # 4. RSS <= half of the smaller peer's at every size
    cells, anon_cells, ok, worst = [], [], True, 0
    for size in sizes:
        rss = {t: largest_rss(tool_entry(size, t)) for t in TOOLS if tool_entry(size, t)}
        peers = [t for t in ("postgres_exporter", "sql_exporter") if t in rss]
        if "seatwatch" not in rss or not peers:
            continue
        smaller = min(peers, key=lambda t: rss[t][0])
        r = rss["seatwatch"][0] / rss[smaller][0]
        worst = max(worst, r)
        ok &= r <= 0.5
        cells.append(f"{short(size)}: {mib(rss['seatwatch'][0])} vs {mib(rss[smaller][0])} "
                     f"({r:.2f})")
        if rss["seatwatch"][1] and rss[smaller][1]:
            anon_cells.append(f"{short(size)} {rss['seatwatch'][1] / rss[smaller][1]:.2f}")
    measured = "; ".join(cells)
    if anon_cells:
        measured += "; anonymous memory only: " + ", ".join(anon_cells)
    out.append(("RSS at most half of the smaller peer's, at every size", measured,
                "met" if ok else f"missed: up to {worst:.2f} of the smaller peer's "
                                 f"({worst / 0.5:.2f}x the allowed half)", ""))

    # 5. pack per poll <= 1.5x bare reconciliation (5M)
    for size in sizes:
        sw = tool_entry(size, "seatwatch")
        if not sw or "refresh" not in sw or size is not largest:
            continue
        bare = size["floor"]["bare_median_ms"]
        pack = pack_ms(sw["refresh"])
        recon = sw["refresh"].get("reconciliation_ms_per_poll")
        holds = sw["refresh"].get("holds_ms_per_poll")
        r = ratio(pack, bare)
        rr = ratio(recon, bare)
        out.append((f"Booking pack per poll at most 1.5x the bare reconciliation "
                    f"({short(size)})",
                    f"pack (every invariant and the inventory: reconciliation.sql and its "
                    f"detail queries) {ms(pack)} per poll = {r:.1f}x the bare {ms(bare)}; "
                    f"reconciliation.sql alone {ms(recon)} = {rr:.1f}x; holds.sql (the "
                    f"[holds] check, not part of the pack) {ms(holds)} more",
                    "met" if r <= 1.5 else f"missed: {r:.1f}x ({r / 1.5:.1f}x over)", ""))

    # 6. lock poll < 5 ms with the right numbers
    lk = (results.get("locks") or {}).get("tools", {}).get("seatwatch")
    if lk:
        right = lk["waiting"] == 100 and lk["roots"] == 10
        fast = (lk["db_ms_per_poll"] or 1e9) < 5
        verdict = "met" if right and fast else (
            f"missed: {lk['db_ms_per_poll'] / 5:.1f}x the budget" if right else "missed: wrong numbers")
        out.append(("One lock poll under 5 ms of database time (300 connections, 100 waiting, 10 "
                    "roots), with the right numbers",
                    f"{ms(lk['db_ms_per_poll'])} per poll ({lk['db_statements_per_poll']:.0f} "
                    f"statements); waiting {lk['waiting']:g}, roots {lk['roots']:g}",
                    verdict, ""))

    # 7. cleanup
    cl = results.get("cleanup")
    if cl and "seatwatch" in cl["modes"] and "off" in cl["modes"]:
        sw, off = cl["modes"]["seatwatch"], cl["modes"]["off"]
        rate = sw.get("freed_per_second") or 0
        p99 = (sw.get("window") or sw["all"])["p99_ms"]
        base = off["all"]["p99_ms"]
        r = ratio(p99, base)
        ok = rate >= 20000 and r <= 1.5
        why = []
        if rate < 20000:
            why.append(f"{rate:,.0f} holds/s is {20000 / rate:.1f}x short" if rate else "nothing freed")
        if r > 1.5:
            why.append(f"claims' p99 {r:.2f}x the no-cleanup p99")
        out.append(("Cleanup frees at least 20,000 holds/s, claims' p99 within 1.5x of no cleanup",
                    f"{rate:,.0f} holds/s; claims' p99 {ms(p99)} during the cleanup vs "
                    f"{ms(base)} without (ratio {r:.2f})",
                    "met" if ok else "missed: " + "; ".join(why), ""))
    out += [(t, m, v, "") for t, m, v in gzip_targets(results)]
    return out


# ---------------------------------------------------------------------------
# Sections


def machine_section(results):
    m, v = results["machine"], results["versions"]
    s = v["postgresql_settings"]
    rows = [
        ("CPU", f"{m['nproc']} x {m['cpu']}"),
        ("Memory", f"{m['memory_gib']} GiB"),
        ("OS", f"{m['os']}, Linux {m['kernel']}"),
        ("seatwatch", f"{v['seatwatch']} (commit {v['seatwatch_commit']}"
                      f"{', with uncommitted changes' if v['seatwatch_tree_dirty'] else ''}), "
                      "Release build"),
        ("postgres_exporter", v["postgres_exporter"]),
        ("sql_exporter", v["sql_exporter"]),
        ("PostgreSQL", f"{v['postgresql']}; " + ", ".join(f"{k}={s[k]}" for k in sorted(s))),
        ("Load generators", f"{v['wrk']}, {v['pgbench']}"),
    ]
    return table(["", ""], rows)


def scrape_section(size):
    rows = []
    for tool in TOOLS:
        e = tool_entry(size, tool)
        if not e:
            continue
        s, w, f = e["sequential"], e["wrk"], e["fresh_connections"]
        rows.append([tool, num(s["series"]), ms(s["p50_ms"]), ms(s["p95_ms"]), ms(f["p50_ms"]),
                     f"{w['rps']:,.1f}" if w["requests"] else
                     f"0 (none finished in {w['seconds']} s)", ms(s["cpu_ms_per_scrape"]),
                     f"{s['db_statements_per_scrape']:.1f}", ms(s["db_ms_per_scrape"]),
                     f"{w['db_statements_per_scrape']:.1f}"
                     if w["db_statements_per_scrape"] is not None else "n/a"] + rss_cells(e))
    return table(["tool", "series", "scrape p50", "p95", "p50, new connection each",
                  "scrapes/s (4 concurrent)", "CPU per scrape", "DB statements per scrape",
                  "DB time per scrape", "DB statements per scrape (4 concurrent)",
                  "RSS (anon + file)"], rows)


def largest_rss(e):
    """The phase with the largest VmRSS: (rss, anon, file)."""
    best = (0, 0, 0)
    for phase in (e, e.get("refresh") or {}):
        rss = phase.get("rss_bytes", 0)
        if rss > best[0]:
            best = (rss, phase.get("rss_anon_bytes"), phase.get("rss_file_bytes"))
    return best


def rss_cells(e):
    rss, anon, file = largest_rss(e)
    split = f" ({mib(anon)} + {mib(file)})" if anon is not None and file is not None else ""
    return [mib(rss) + split]


def refresh_section(size):
    rows = []
    for tool in ("seatwatch", "sql_exporter"):
        e = tool_entry(size, tool)
        if not e or "refresh" not in e:
            continue
        r = e["refresh"]
        locks = "-"
        if tool == "seatwatch":
            locks = f"{r.get('lock_polls', 0)} (every 2 s: {r['seconds'] / 2:.0f})"
        rows.append([tool, f"{r['seconds']:.0f} s", num(r["refreshes"]), locks,
                     ms(r.get("cpu_ms_per_refresh")),
                     ms(r["cpu_ms_per_minute"]), num(r.get("db_statements_per_refresh"), 1),
                     ms(r.get("db_ms_per_refresh"))])
    e = tool_entry(size, "postgres_exporter")
    if e:
        s = e["sequential"]
        rows.append(["postgres_exporter (per scrape: it has no refresh of its own)", "-", "-",
                     "-", ms(s["cpu_ms_per_scrape"]), "-", f"{s['db_statements_per_scrape']:g}",
                     ms(s["db_ms_per_scrape"])])
    return table(["tool", "window", "refreshes", "lock polls", "CPU per refresh",
                  "CPU per minute", "DB statements per refresh", "DB time per refresh"], rows)


def pack_ms(refresh):
    """The booking pack per poll: every invariant and the inventory, that is
    reconciliation.sql and the detail queries it triggers. holds.sql is the
    [holds] check's and is reported beside it."""
    recon = refresh.get("reconciliation_ms_per_poll")
    if recon is None:
        return None
    return recon + (refresh.get("detail_ms_per_poll") or 0)


def pack_section(sizes):
    rows = []
    for size in sizes:
        f = size["floor"]
        sw = (tool_entry(size, "seatwatch") or {}).get("refresh") or {}
        sq = (tool_entry(size, "sql_exporter") or {}).get("refresh") or {}
        pack = pack_ms(sw)
        bare = f["bare_median_ms"]

        def x(value):
            return f"{ratio(value, bare):.1f}x" if value else "n/a"
        detail = ms(sw.get("detail_ms_per_poll"))
        if sw.get("pack_polls") is not None:
            detail += f" ({sw.get('detail_calls', 0)} runs in {sw['pack_polls']} polls)"
        with_holds = pack + (sw.get("holds_ms_per_poll") or 0) if pack else None
        rows.append([short(size), ms(bare), ms(f["reconciliation_median_ms"]),
                     ms(sw.get("reconciliation_ms_per_poll")), detail, ms(pack), x(pack),
                     x(sw.get("reconciliation_ms_per_poll")), ms(sw.get("holds_ms_per_poll")),
                     x(with_holds), ms(sq.get("reconciliation_ms_per_poll"))])
    return table(["size", "bare reconciliation (psql median)", "reconciliation.sql (psql median)",
                  "seatwatch: reconciliation.sql per poll", "+ detail queries per poll",
                  "= booking pack per poll", "pack / bare", "reconciliation.sql / bare",
                  "holds.sql per poll (not in the pack)", "pack + holds.sql / bare",
                  "sql_exporter: reconciliation.sql per refresh"], rows)


def locks_section(lk):
    rows = []
    for tool in TOOLS:
        e = lk["tools"].get(tool)
        if not e:
            continue
        right = e["waiting"] == 100 and e["roots"] == 10
        rows.append([tool, ms(e["db_ms_per_poll"]), num(e["db_statements_per_poll"], 1),
                     f"{e['waiting']:g}" if e["waiting"] is not None else "n/a",
                     f"{e['roots']:g}" if e["roots"] is not None else "n/a",
                     "yes" if right else "no"])
    return table(["tool", "DB time per lock poll", "statements per poll", "waiting reported",
                  "roots reported", "right (100 / 10)"], rows)


def statements_table(rows, per, limit=12):
    out = []
    for r in rows[:limit]:
        # Without the SQL files' comments: where the statement itself starts.
        text = " ".join(re.sub(r"--[^\n]*", "", r["query"]).split())
        text = text[:90].replace("|", "\\|")
        source = re.search(r"--\s*([\w/]+\.sql):", r["query"])
        label = f"{source.group(1)}: " if source else ""
        out.append([f"{r['calls'] / per:.1f}", ms(r["ms"] / r["calls"] if r["calls"] else None),
                    ms(r["ms"] / per), f"{label}`{text}`"])
    return table(["calls per poll", "mean per call", "time per poll", "statement (start)"], out)


def cleanup_section(cl):
    rows = []
    names = {"off": "no cleanup", "seatwatch": f"seatwatch cleanup (batch {cl['batch']['size']}, "
             f"pause {cl['batch']['pause']}, interval {cl['batch']['interval']})",
             "naive": "naive single UPDATE, once"}
    for mode in ("off", "seatwatch", "naive"):
        e = cl["modes"].get(mode)
        if not e:
            continue
        window = e.get("window")
        duration = (e["end"] - e["start"]) if "start" in e else None
        batch = (e.get("batches") or {}).get("mean_batch_ms")
        rows.append([names[mode] + (f"; mean batch {ms(batch)}" if batch else ""),
                     num(e.get("freed") or 0),
                     f"{e['freed_per_second']:,.0f}" if e.get("freed_per_second") else "-",
                     f"{duration:.1f} s" if duration else "-",
                     ms(e["all"]["p50_ms"]), ms(e["all"]["p99_ms"]),
                     ms(window["p50_ms"]) if window else "-",
                     ms(window["p99_ms"]) if window else "-",
                     ms(e["all"]["max_ms"]), num(e["backlog_after"])])
    return table(["mode", "holds freed", "freed per second", "cleanup took", "claims p50 (run)",
                  "claims p99 (run)", "claims p50 (during cleanup)", "claims p99 (during cleanup)",
                  "claims max", "expired holds left"], rows)


# ---------------------------------------------------------------------------
# Plots


def plots(root, results, workdir):
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        return []
    datadir = os.path.join(workdir, "plot")
    os.makedirs(datadir, exist_ok=True)
    sizes = complete_sizes(results)
    with open(os.path.join(datadir, "scrape.dat"), "w") as f:
        f.write("# size seatwatch postgres_exporter sql_exporter (p50 ms), then RSS MiB x3\n")
        for size in sizes:
            p50 = [tool_entry(size, t)["sequential"]["p50_ms"] if tool_entry(size, t) else "NaN"
                   for t in TOOLS]
            rss = [largest_rss(tool_entry(size, t))[0] / 2**20
                   if tool_entry(size, t) else "NaN" for t in TOOLS]
            f.write(f'"{short(size)}" ' + " ".join(str(x) for x in p50 + rss) + "\n")
    made = []
    if sizes:
        out = os.path.join(root, "docs", "benchmarks-scrape.png")
        subprocess.run([gnuplot, "-e", f"datafile='{datadir}/scrape.dat'; out='{out}'",
                        os.path.join(root, "bench", "plot-scrape.gp")], check=True, timeout=60)
        made.append("benchmarks-scrape.png")
    cl = results.get("cleanup")
    if cl:
        for mode, e in cl["modes"].items():
            with open(os.path.join(datadir, f"cleanup-{mode}.dat"), "w") as f:
                f.write("# second claims p50_ms p99_ms\n")
                for second, count, p50, p99 in e["per_second"]:
                    f.write(f"{second} {count} {p50} {p99}\n")
        sw = cl["modes"].get("seatwatch", {})
        with open(os.path.join(datadir, "cleanup-freed.dat"), "w") as f:
            f.write("# second freed_total\n")
            for second, freed in sw.get("timeline", []):
                f.write(f"{second} {freed}\n")
        out = os.path.join(root, "docs", "benchmarks-cleanup.png")
        subprocess.run([gnuplot, "-e", f"datadir='{datadir}'; out='{out}'",
                        os.path.join(root, "bench", "plot-cleanup.gp")], check=True, timeout=60)
        made.append("benchmarks-cleanup.png")
    return made


# ---------------------------------------------------------------------------


def write(root, results, workdir):
    sizes = complete_sizes(results)
    made = plots(root, results, workdir)
    lines = []
    add = lines.append
    add("# Benchmarks: seatwatch, postgres_exporter and sql_exporter")
    add("")
    add("Generated by `bench/run` (see `bench/README.md`); do not edit by hand, run it again. "
        f"Run of {results['started_at'][:10]}, {results['mode']} mode, "
        f"{results.get('elapsed_minutes', 0):.0f} minutes.")
    add("")
    add("```sh")
    add(results["command"])
    add("```")
    add("")
    add("All three tools ran one after the other against the same scratch PostgreSQL, on the same "
        "seeded databases, computing the same things from the same SQL: "
        "`queries/booking/reconciliation.sql` (six invariants and the per-event inventory), "
        "`queries/booking/holds.sql` and the lock waits. Each tool connects as its own role, so "
        "`pg_stat_statements` tells their statements apart.")
    add("")
    add("## Machine and versions")
    add("")
    add(machine_section(results))
    add("")
    loads = [e.get("load_average", [0])[0] for s in sizes for e in s.get("tools", {}).values()]
    if loads:
        add(f"Load average (1 min) when each tool's scrape phase began: {min(loads):.1f} to "
            f"{max(loads):.1f} on {results['machine']['nproc']} cores. Numbers taken on a "
            "busy machine are slower across the board; the ratios between tools hold better than "
            "the absolute times.")
        add("")
    if results.get("skipped"):
        add("**Not measured in this run:** " + "; ".join(
            f"{s['part']} ({s['reason']})" for s in results["skipped"]))
        add("")

    add("## Targets")
    add("")
    add("The targets, against this run:")
    add("")
    add(table(["target", "measured", "verdict"], [(t, m, v) for t, m, v, _ in targets(results)]))
    add("")
    add("The reading below is kept by hand in `bench/analysis.md` and spliced in by the report; "
        "the tables further down are generated.")
    add("")
    add(WHY_MARKER)
    add("")

    add("## Scrapes")
    add("")
    add("Sequential scrapes on one keep-alive connection with the headers Prometheus sends "
        "(`Accept-Encoding: gzip`, so the Go exporters compress), after 3 warm-up scrapes; then "
        "`wrk -c4 -t2` for the throughput of 4 concurrent scrapers, and a few scrapes on a new "
        "connection each (like `curl`). CPU is the exporter process's user + system time over the "
        "scrapes (all threads) divided by the scrapes. The pollers (seatwatch, sql_exporter) run "
        "with 1 h intervals in this phase, so nothing refreshes while they are scraped and every "
        "statement seen would be caused by a scrape. RSS is the largest VmRSS sampled during the "
        "scrape and refresh phases.")
    add("")
    for size in sizes:
        add(f"### {LABELS.get(size['label'], size['label'])}")
        add("")
        add(scrape_section(size))
        add("")
        checks = []
        for tool in TOOLS:
            e = tool_entry(size, tool)
            if e:
                c = e["correctness"]
                checks.append(f"{tool} {c['violations_exported']}/{c['violations_expected']} "
                              f"invariant rows{' (match)' if c['violations_match'] else ' (DIFFER)'}, "
                              f"{c['inventory_exported']:,}/{c['inventory_expected']:,} inventory "
                              "series")
        add("Exported against what the reconciliation returns: " + "; ".join(checks) + ".")
        add("")
    if made and "benchmarks-scrape.png" in made:
        add("![Scrape p50 and RSS per size](benchmarks-scrape.png)")
        add("")

    if any(tool_entry(size, "seatwatch") and "sequential_identity" in tool_entry(size, "seatwatch")
           for size in sizes):
        add(gzip_section(results))
        add("")

    add("## Refreshes")
    add("")
    add("The pollers on their normal timers with nobody scraping, for at least "
        f"{results['plan']['refresh_seconds']} s and about four refreshes (up to "
        f"{results['plan'].get('max_refresh_seconds', 240)} s): seatwatch with the shipped intervals (booking "
        "pack and holds every 10 s, locks every 2 s), sql_exporter with a 10 s job interval. A "
        "refresh is one run of the reconciliation (seatwatch's CPU and database time per refresh "
        "include the lock polls that ran in between: the locks check runs in a lane of its own, "
        "with its own thread and session, so it keeps its 2 s pace while the pack runs). "
        "postgres_exporter has no refresh: it runs "
        "everything on every scrape, its row repeats its per-scrape cost.")
    add("")
    for size in sizes:
        add(f"### {LABELS.get(size['label'], size['label'])}")
        add("")
        add(refresh_section(size))
        add("")

    add("## The booking pack against the bare reconciliation")
    add("")
    add("The floor is `bench/sql/bare_reconciliation.sql`: sold seats, tickets and confirmed "
        "payments counted per event and compared, run with `psql` and `\\timing` (median of "
        f"{results['plan']['floor_runs']} runs after a warm-up), with `jit = off` as in seatwatch's "
        "own sessions (the peers run with the server's default, `jit = on`). `reconciliation.sql` "
        "is timed the same way. The pack per poll (every invariant and the inventory) is what "
        "seatwatch's statements cost in `pg_stat_statements` during the refresh phase: the "
        "reconciliation's mean time per call (it runs once per poll, shared by the six invariants "
        "and the inventory) plus the `detail_sql` queries' total time divided by the polls (they "
        "run when an invariant's violations change, and at most every 5 minutes while they stay "
        "the same; each reads only the offending events). `holds.sql` belongs to the `[holds]` "
        "check, not to the pack; its mean time per call is shown beside it.")
    add("")
    add(pack_section(sizes))
    add("")
    for size in sizes[-1:]:
        sw = (tool_entry(size, "seatwatch") or {}).get("refresh")
        if sw and sw.get("refreshes"):
            add(f"seatwatch's statements per poll at {short(size)} "
                "(refresh phase, "
                f"{sw['refreshes']} polls; lock-poll statements included):")
            add("")
            add(statements_table(sw["statements"], sw["refreshes"]))
            add("")

    lk = results.get("locks")
    if lk:
        add("## Lock scenario")
        add("")
        add(f"{lk.get('client_connections', 300)} client connections on `{lk['database']}`: "
            f"{lk['blockers']} hold one free seat's row each with the claim UPDATE in an open, idle "
            f"transaction; {lk['waiting']} run the same claim UPDATE on those seats "
            f"({lk['waiting'] // lk['blockers']} per seat) and wait; {lk['idle']} are idle. "
            "seatwatch polls locks every 2 s (its other checks at 1 h, so every statement "
            "counted belongs to a lock poll); sql_exporter runs `bench/sql/peer_locks.sql` every "
            "2 s; postgres_exporter runs it on each scrape. Database time per poll is the sum of "
            "the tool's statements in `pg_stat_statements` divided by the polls.")
        add("")
        add(locks_section(lk))
        add("")
        sw = lk["tools"].get("seatwatch")
        if sw and sw.get("polls"):
            add(f"seatwatch's lock poll, statement by statement ({sw['polls']} polls; wall time "
                f"of the check {ms(sw.get('check_duration_ms'))}):")
            add("")
            add(statements_table(sw["statements"], sw["polls"], limit=15))
            add("")

    cl = results.get("cleanup")
    if cl:
        add("## Cleanup")
        add("")
        rerun = results.get("cleanup_run")
        if rerun:
            add(f"From a separate run of the cleanup alone (`{rerun['command']}`, "
                f"{rerun['started_at'][:10]}), merged into this page's results.")
            add("")
        plan = results["plan"]
        off = cl["modes"].get("off", {})
        add(f"{cl['seats']:,} seats, {off.get('backlog_before', 0):,} of them held with an "
            f"expired hold. A pgbench claim workload (`bench/pgbench/claim.sql`: the conditional "
            f"claim UPDATE on a random seat) runs {plan['cleanup_seconds']} s with "
            f"{cl['clients']} clients at a fixed arrival rate of {plan['claim_rate']:,} claims/s "
            "(`-R`, so a claim that queues behind a locked row counts its wait), per-transaction "
            f"log. {plan['cleanup_start']} s in, the cleanup starts: none, seatwatch (cleanup-only "
            "config, `bench/config/seatwatch-cleanup.toml.in`), or the naive single "
            "`UPDATE seats SET status = 'free', holder = NULL, hold_expires_at = NULL WHERE "
            "status = 'held' AND hold_expires_at <= now()` run once. Each mode starts from a "
            "fresh copy of the same database. Freed per second: seatwatch's "
            "`seatwatch_cleanup_freed_total` from its start until the backlog is gone; the naive "
            "UPDATE's row count over its duration. \"During cleanup\" counts the claims that "
            "began while it ran (a claim's scheduled start), so one that queued behind its locks "
            "and finished after they were released is in. Claims also take expired holds (a "
            "claim treats them as free), so the cleanup frees somewhat fewer holds than the "
            "backlog.")
        add("")
        add(cleanup_section(cl))
        add("")
        if "benchmarks-cleanup.png" in made:
            add("![Claim latency per second and holds freed](benchmarks-cleanup.png)")
            add("")

    add(METHOD)
    text = "\n".join(lines) + "\n"
    why_path = os.path.join(root, "bench", "analysis.md")
    why = ""
    if os.path.exists(why_path):
        with open(why_path) as f:
            why = f.read().strip()
    text = text.replace(WHY_MARKER, why)
    path = os.path.join(root, "docs", "benchmarks.md")
    # bench/changes renders the last section (incremental mode) from its own
    # results: keep it.
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
        at = old.find('<a id="incremental"></a>')
        if at >= 0:
            text = text.rstrip() + "\n\n" + old[at:]
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}" + (f" and docs/{', docs/'.join(made)}" if made else ""))


# ---------------------------------------------------------------------------
# gzip

GZIP_ANCHOR = '<a id="gzip"></a>'
GZIP_END = "<!-- end of the gzip section -->"


def kib(value):
    return "n/a" if value is None else f"{value / 1024:,.1f} KiB"


def gzip_targets(results):
    """[(target, measured, verdict)]: bytes at every size, CPU at the largest."""
    sizes = [s for s in complete_sizes(results)
             if "sequential_identity" in (tool_entry(s, "seatwatch") or {})]
    out = []
    cells, worst = [], 0.0
    for size in sizes:
        e = tool_entry(size, "seatwatch")
        r = e["sequential"]["wire_bytes"] / e["sequential_identity"]["wire_bytes"]
        worst = max(worst, r)
        cells.append(f"{short(size)}: {kib(e['sequential']['wire_bytes'])} against "
                     f"{kib(e['sequential_identity']['wire_bytes'])} ({r:.3f})")
    if cells:
        out.append(("gzip bytes per scrape at most 1/10 of identity, every size", "; ".join(cells),
                    "met" if worst <= 0.1 else f"missed: {worst:.3f}"))
    both = [s for s in sizes if tool_entry(s, "sql_exporter")]
    if both:
        largest = both[-1]
        sw, peer = tool_entry(largest, "seatwatch"), tool_entry(largest, "sql_exporter")
        first = sw["first_gzip_scrape"]["cpu_ms"]
        steady = sw["sequential"]["cpu_ms_per_scrape"]
        theirs = peer["sequential"]["cpu_ms_per_scrape"]
        r = ratio(first, theirs)
        out.append((f"CPU per gzip scrape at most 1/5 of sql_exporter's ({short(largest)})",
                    f"seatwatch {ms(first)} for the first gzip scrape after a poll (it deflates "
                    f"the poll's parts), {ms(steady)} for each later one; sql_exporter "
                    f"{ms(theirs)} (ratio {r:.3f} even for the first)",
                    "met" if r <= 0.2 else f"missed: {r:.2f}x"))
    return out


def gzip_table(size):
    rows = []
    for tool in TOOLS:
        e = tool_entry(size, tool)
        if not e or "sequential_identity" not in e:
            continue
        g, i = e["sequential"], e["sequential_identity"]
        first = e.get("first_gzip_scrape") or {}
        rows.append([tool, num(i["wire_bytes"]), num(g["wire_bytes"]),
                     f"{g['wire_bytes'] / i['wire_bytes']:.3f}", ms(i["cpu_ms_per_scrape"]),
                     ms(g["cpu_ms_per_scrape"]), ms(first.get("cpu_ms")), ms(i["p50_ms"]),
                     ms(g["p50_ms"])])
    return table(["tool", "bytes, identity", "bytes, gzip", "gzip / identity",
                  "CPU per scrape, identity", "CPU per scrape, gzip",
                  "CPU of the first gzip scrape", "p50, identity", "p50, gzip"], rows)


def gzip_section(results):
    sizes = [s for s in complete_sizes(results)
             if "sequential_identity" in (tool_entry(s, "seatwatch") or {})]
    v = results["versions"]
    loads = [e.get("load_average", [0])[0] for s in sizes for e in s.get("tools", {}).values()]
    lines = [GZIP_ANCHOR, "## gzip", ""]
    add = lines.append
    add(f"From the run of {results['started_at'][:10]} (seatwatch commit {v['seatwatch_commit']}"
        f"{', with uncommitted changes' if v['seatwatch_tree_dirty'] else ''}; load average "
        f"{min(loads or [0]):.1f} to {max(loads or [0]):.1f} on "
        f"{results['machine']['nproc']} cores when the scrape phases began):")
    add("")
    add("```sh")
    add(results["command"])
    add("```")
    add("")
    add("Each tool's scrape phase scrapes twice in sequence on one keep-alive connection: with "
        "Prometheus's headers (`Accept-Encoding: gzip`) and with the same headers less "
        "`Accept-Encoding` (identity), as many scrapes each (postgres_exporter: 5 identity "
        "scrapes, as each one runs its queries). Bytes are the body on the wire. seatwatch "
        "deflates each part of a snapshot once, on the first gzip scrape that needs it, and "
        "serves the stored bytes after that: \"CPU of the first gzip scrape\" is one gzip scrape "
        "on a new connection right after the poll (the bench's readiness check scrapes identity, "
        "so nothing is deflated before it), which pays for deflating everything the poll made "
        "new. With Prometheus scraping every 15 s and seatwatch polling every 10 s, about every "
        "scrape is such a first one, so that column is the cost to compare; the sequential "
        "column is what a second scraper (an HA pair of Prometheus servers) pays. The Go "
        "exporters gzip every scrape anew.")
    add("")
    add(table(["target", "measured", "verdict"], gzip_targets(results)))
    add("")
    for size in sizes:
        add(f"### gzip, {LABELS.get(size['label'], size['label'])}")
        add("")
        add(gzip_table(size))
        add("")
    add(GZIP_END)
    return "\n".join(lines)


def write_gzip_section(root, results):
    """Replaces (or adds, before the refreshes) only the gzip section of an
    existing docs/benchmarks.md: for a run of the scrape phases alone."""
    path = os.path.join(root, "docs", "benchmarks.md")
    with open(path) as f:
        old = f.read()
    section = gzip_section(results)
    start, end = old.find(GZIP_ANCHOR), old.find(GZIP_END)
    if start >= 0 and end > start:
        text = old[:start] + section + old[end + len(GZIP_END):]
    else:
        at = old.find("\n## Refreshes")
        if at < 0:
            raise RuntimeError(f"{path}: no gzip section and no Refreshes heading to put it before")
        text = old[:at + 1] + section + "\n\n" + old[at + 1:]
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote the gzip section of {path}")


WHY_MARKER = "@ANALYSIS@"

METHOD = """## How the harness works

- **Cluster**: `scripts/pg-scratch` (fsync off, `pg_stat_statements` with `track = all`,
  `max_connections = 400`) with `shared_buffers = 2GB` and autovacuum off (the seeding runs
  `VACUUM ANALYZE` itself; nothing else changes the measured tables). Every tool connects over
  127.0.0.1 with its own role (`bench_seatwatch`, `bench_pgexp`, `bench_sqlexp`, `bench_floor`
  for the psql floor), each with `pg_monitor` and `SELECT` on the three tables, as
  `queries/booking/grants.sql` sets seatwatch up.
- **Data** (`bench/sql/seed.sql`, set-based with `generate_series`, then `VACUUM ANALYZE`):
  1,000 seats per event; per event exactly 55% sold (a ticket and a confirmed payment for the
  same fan), 5% held unexpired, 5% held and expired (the backlog), 35% free; held seats with an
  even seat number have a `started` payment. Fans buy in pairs, well under the limit of 4. Seeded
  once per size and reused by later runs while the files and the size are unchanged (and the
  seed is younger than 12 h, as unexpired holds expire after a day).
- **Injected violations** (`bench/sql/violations.sql`), 7 invariant rows in events 1 to 5: a sold
  seat's ticket deleted (`sold_seat_without_ticket`, `confirmed_payment_without_ticket`), a ticket
  for a free seat (`ticket_without_sold_seat`, `ticket_without_confirmed_payment`), a second
  confirmed payment for a seat (`double_confirmed_payment`), six sold seats moved to one fan
  (`fan_over_limit`), a confirmed payment refunded (`ticket_without_confirmed_payment`).
- **seatwatch**: `bench/config/seatwatch.toml.in` is `config/seatwatch.toml` with absolute paths,
  per-phase intervals and a 60 s statement timeout (so the largest size completes; the pack's
  own time is in the tables).
- **postgres_exporter**: the Debian package's binary with `--extend.query-path` (a file
  generated from the same SQL), `--disable-default-metrics --disable-settings-metrics
  --no-collector.database --no-collector.bgwriter`: only the custom queries and the exporter's
  own metrics remain. It runs every query on every scrape.
- **sql_exporter**: one job with the three queries, with the environment Debian's service gives
  it (`/etc/default/prometheus-sql-exporter`: `GOGC=40`, `GOMAXPROCS=4`). The peers cannot bind
  parameters, so `$1` (the per-fan limit) is written into the SQL as `4`; each query is wrapped
  so labels are text and there is one value column (`coalesce(violations, count)`), which gives
  the peers the same series seatwatch exports.
- **Lock numbers of the peers**: `bench/sql/peer_locks.sql` counts waiting client sessions and
  the distinct blockers that are not waiting themselves with `pg_blocking_pids()`.
- **Every background process** (exporters, pgbench, the cluster) is recorded by PID and stopped
  by PID when the run ends, fails or is interrupted. Raw numbers: `build-bench/bench-work/
  results.json`; logs and generated configs next to it.
"""
