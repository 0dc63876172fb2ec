"""The cleanup benchmark: 1M expired holds, a pgbench claim workload (the
conditional UPDATE on random seats), and three ways of living with the
backlog: no cleanup, seatwatch's cleanup (small batches), and the naive single
UPDATE run once during the workload."""

import glob
import os
import statistics
import string
import threading
import time

import measure
import pg
import procs

CLIENTS, THREADS = 8, 2

NAIVE = ("UPDATE seats SET status = 'free', holder = NULL, hold_expires_at = NULL "
         "WHERE status = 'held' AND hold_expires_at <= now()")

MODES = ("off", "seatwatch", "naive")


def expired(cluster, dbname):
    with cluster.cursor(dbname) as cur:
        cur.execute("SELECT count(*) FROM seats WHERE status = 'held' AND hold_expires_at <= now()")
        return cur.fetchone()[0]


def fresh_copy(cluster, template, dbname):
    cluster.drop(dbname)
    with cluster.cursor("postgres") as cur:
        cur.execute(f'CREATE DATABASE "{dbname}" TEMPLATE "{template}"')
        cur.execute("CHECKPOINT")


def percentile(sorted_values, fraction):
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, max(0, int(round(fraction * len(sorted_values))) - 1))
    return sorted_values[index]


def read_log(prefix):
    """pgbench per-transaction log: (end time, latency ms) per claim. With
    --rate the latency counts from the scheduled start, so a claim that queued
    behind a locked row shows it."""
    out = []
    for path in glob.glob(prefix + ".*"):
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) < 6:
                    continue
                latency_us = int(parts[2])
                end = int(parts[4]) + int(parts[5]) / 1e6
                out.append((end, latency_us / 1e3))
    out.sort()
    return out


def summarize(claims, start=None, end=None):
    """Latency of the claims that began (end - latency) within [start, end]:
    a claim that queued behind the cleanup's locks and finished when they
    were released belongs to the window it waited in."""
    window = [ms for t, ms in claims
              if (start is None or t - ms / 1e3 >= start) and (end is None or t - ms / 1e3 <= end)]
    window.sort()
    seconds = (end - start) if start is not None and end is not None else None
    return {
        "claims": len(window),
        "claims_per_second": len(window) / seconds if seconds else None,
        "p50_ms": percentile(window, 0.50),
        "p99_ms": percentile(window, 0.99),
        "max_ms": window[-1] if window else None,
    }


def per_second(claims, origin):
    """p50/p99 per second of the claims' start (end - latency): a claim that
    waited behind a lock shows where it began waiting."""
    buckets = {}
    for t, ms in claims:
        buckets.setdefault(int(t - ms / 1e3 - origin), []).append(ms)
    out = []
    for second in sorted(buckets):
        values = sorted(buckets[second])
        out.append([second, len(values), percentile(values, 0.5), percentile(values, 0.99)])
    return out


def start_seatwatch(ctx, tool, dbname, batch_size, batch_pause):
    with open(os.path.join(ctx.bench, "config/seatwatch-cleanup.toml.in")) as f:
        text = string.Template(f.read()).substitute(
            listen=f"127.0.0.1:{tool.port}", queries=os.path.join(ctx.root, "queries"),
            batch_size=batch_size, batch_pause=batch_pause)
    path = os.path.join(ctx.workdir, "configs", "seatwatch-cleanup.toml")
    with open(path, "w") as f:
        f.write(text)
    env = dict(os.environ,
               SEATWATCH_DSN=ctx.cluster.tcp_dsn(dbname, pg.ROLES["seatwatch"], "seatwatch"))
    tool.proc = procs.start([ctx.seatwatch, "--config", path], "seatwatch (cleanup)", env=env,
                            stderr=tool.log_file("cleanup"))


def cleanup_counters(text):
    freed = sum(v for _, v in measure.samples(text, "seatwatch_cleanup_freed_total"))
    batches = {l.get("result"): v for l, v in measure.samples(text, "seatwatch_cleanup_batches_total")}
    total = sum(v for _, v in measure.samples(text, "seatwatch_cleanup_batch_duration_seconds_sum"))
    count = sum(v for _, v in measure.samples(text, "seatwatch_cleanup_batch_duration_seconds_count"))
    batches["mean_batch_ms"] = total / count * 1e3 if count else None
    return freed, batches


def run_mode(ctx, mode, plan, tool, template, dbname, events, batch):
    ctx.current_db = dbname
    fresh_copy(ctx.cluster, template, dbname)
    backlog = expired(ctx.cluster, dbname)
    prefix = os.path.join(ctx.workdir, "pgbench", mode)
    for old in glob.glob(prefix + ".*"):
        os.remove(old)
    seconds = plan["cleanup_seconds"]
    args = [ctx.cluster.bin("pgbench"), "-n", "-M", "prepared", "-c", str(CLIENTS),
            "-j", str(THREADS), "-T", str(seconds), "-R", str(plan["claim_rate"]),
            "-D", f"events={events}",
            "-f", os.path.join(ctx.bench, "pgbench/claim.sql"), "-l", f"--log-prefix={prefix}",
            "--random-seed=4242", "-P", "5", dbname]
    procs.log(f"cleanup ({mode}): {backlog:,} expired holds, pgbench -c {CLIENTS} "
              f"-R {plan['claim_rate']} -T {seconds}")
    bench = procs.start(args, f"pgbench ({mode})", env=ctx.cluster.env,
                        stdout=os.path.join(ctx.workdir, "logs", f"pgbench-{mode}.log"),
                        stderr=os.path.join(ctx.workdir, "logs", f"pgbench-{mode}.log"))
    origin = time.time()
    result = {"mode": mode, "backlog_before": backlog, "pgbench_seconds": seconds}
    time.sleep(plan["cleanup_start"])
    samples = []
    if mode == "seatwatch":
        started = time.time()
        start_seatwatch(ctx, tool, dbname, batch["size"], batch["pause"])
        try:
            while bench.poll() is None:
                text = measure.fetch(tool.port, timeout=5)
                if text:
                    freed, batches = cleanup_counters(text)
                    samples.append((time.time(), freed))
                    result["batches"] = batches
                    if freed >= backlog:
                        break
                time.sleep(0.2)
        finally:
            tool.stop()
        final = samples[-1][1] if samples else 0
        done = next((t for t, f in samples if f >= final), time.time())
        result.update({
            "freed": final, "start": started, "end": done,
            "finished": final > 0 and expired(ctx.cluster, dbname) == 0,
            "freed_per_second": final / (done - started) if done > started else None,
            "timeline": [[round(t - origin, 2), f] for t, f in samples],
        })
    elif mode == "naive":
        holder = {}

        def naive():
            holder["start"] = time.time()
            out = procs.run([ctx.cluster.bin("psql"), "-X", "-v", "ON_ERROR_STOP=1",
                             "-d", dbname, "-c", NAIVE], timeout=seconds + 600,
                            env=ctx.cluster.env)
            holder["end"] = time.time()
            holder["out"] = out.stdout

        worker = threading.Thread(target=naive)
        worker.start()
        worker.join(timeout=seconds + 600)
        tag = (holder.get("out") or "").split()
        result.update({"start": holder["start"], "end": holder["end"],
                       "freed": int(tag[1]) if len(tag) == 2 and tag[0] == "UPDATE" else None,
                       "statement_seconds": holder["end"] - holder["start"]})
    try:
        bench.wait(timeout=seconds + 120)
    finally:
        procs.stop(bench)
    claims = read_log(prefix)
    result["backlog_after"] = expired(ctx.cluster, dbname)
    if mode == "naive":
        result["freed_per_second"] = (result["freed"] or 0) / result["statement_seconds"]
        result["finished"] = result["backlog_after"] == 0
    result["all"] = summarize(claims)
    if "start" in result:
        result["window"] = summarize(claims, result["start"], result["end"])
    result["per_second"] = per_second(claims, origin)
    return result


def run(ctx, plan, tool):
    events = plan["cleanup_events"]
    template, dbname = "bench_cleanup_tpl", "bench_cleanup"
    files = [os.path.join(ctx.root, "queries/booking/schema.sql"),
             os.path.join(ctx.bench, "sql/cleanup_seed.sql")]
    ctx.cluster.seed(template, files, events, reseed=ctx.reseed)
    # Each batch holds its rows' locks until it commits: a claim that picks
    # one of them waits for the batch. 2,000 rows (about 40 ms) with 20 ms
    # between batches keeps that rare and short and still clears well over
    # 20,000 holds/s on 2 cores; 5,000 rows made the claims' p99 swing
    # between 0.9x and 1.5x of no cleanup from one run to the next.
    batch = {"size": 2000, "pause": "20ms", "interval": "1s"}
    out = {"events": events, "seats": events * 1000, "clients": CLIENTS, "batch": batch,
           "modes": {}}
    for mode in MODES:
        ctx.check_deadline()
        entry = run_mode(ctx, mode, plan, tool, template, dbname, events, batch)
        out["modes"][mode] = entry
        window = entry.get("window") or entry["all"]
        procs.log(f"cleanup ({mode}): claims p50 {window['p50_ms']:.2f} ms, p99 "
                  f"{window['p99_ms']:.2f} ms; freed {entry.get('freed', 0):,} "
                  f"({(entry.get('freed_per_second') or 0):,.0f}/s)")
    ctx.cluster.drop(dbname)
    return out
