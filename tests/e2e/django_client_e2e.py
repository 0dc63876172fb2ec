#!/usr/bin/env python3
"""A real client: the Django site of tests/e2e/django/ (Debian's
python3-django) overbooks its workshops with a naive sign-up view, and
seatwatch, told only which table's rows are bounded by which table's column
(a declared invariant, no SQL), reports exactly those workshops.

On a fresh database of the scratch cluster:
1. `manage.py migrate` makes Django's tables (events_workshop,
   events_registration); rush.py creates four workshops (capacities 5, 5, 50
   and 5) and rushes 20 fans, each on its own connection, at the first two
   until they are overbooked and once at the 50-seat one, which is not.
2. Full-pass mode: `seatwatch --once` and then the daemon report exactly the
   overbooked workshops (seatwatch_invariant_violations 1 each, the others
   absent, seatwatch_invariant_ok 0) and /api/invariants lists each with its
   registrations (seatwatch_count) and capacity (seatwatch_limit) as plain
   SQL counts them.
3. Incremental mode: with the publication and [changes] on, the fourth
   workshop is overbooked while seatwatch runs, and its violation is on
   /metrics within 3 s of the commit that overbooked it, found through the
   change feed (no full pass in between).

Fails (never skips) when python3-django is missing: scripts/test installs it.
"""
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import time
import tomllib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "support"))
import seatwatch_harness as h  # noqa: E402

SITE = os.path.join(h.SRC, "tests", "e2e", "django")
DB = "django_events"
ROLE = "workshops_watch"  # seatwatch's role: reads the two tables, and REPLICATION for the feed
INVARIANT = "workshop_overbooked"
LATENCY_BOUND = 3.0  # seconds from the overbooking commit to the violation on /metrics


def declared_config(dsn, incremental):
    """The whole config: the database and the poll, then the invariant as
    the shipped example config/examples/django-workshops.toml declares it
    (registrations per workshop at most its capacity)."""
    with open(os.path.join(h.SRC, "config", "examples", "django-workshops.toml")) as f:
        example = f.read()
    lines = [
        "[database]",
        "dsn = %s" % h.toml_string(dsn),
        "[poll]",
        'interval = "1s"',
    ]
    if incremental:
        lines += ["[changes]", "enabled = true", 'interval = "1s"']
    return "\n".join(lines) + "\n" + example


def check_declared(config_text):
    """At most 15 lines (comments and blank lines aside), and no SQL anywhere
    in it."""
    lines = [line for line in config_text.split("\n")
             if line.strip() and not line.strip().startswith("#")]
    h.expect(len(lines) <= 15, "the config has %d non-empty lines (at most 15)" % len(lines))

    def keys(node):
        if isinstance(node, dict):
            for key, value in node.items():
                yield key
                yield from keys(value)
        elif isinstance(node, list):
            for value in node:
                yield from keys(value)
    sql_keys = [k for k in keys(tomllib.loads(config_text)) if "sql" in k.lower()]
    h.expect(not sql_keys, "the config names SQL: %s" % sql_keys)


# --- the Django site --------------------------------------------------------------

def site_env(cluster):
    return dict(os.environ, EVENTS_DB_DSN=cluster.dsn(DB), PYTHONDONTWRITEBYTECODE="1")


def site(cluster, *args):
    """Runs a command of the Django site; its JSON output, or its text."""
    result = subprocess.run([sys.executable] + list(args), cwd=SITE, env=site_env(cluster),
                            capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise h.Failure("%s failed (%d):\n%s%s" % (" ".join(args), result.returncode,
                                                   result.stdout, result.stderr))
    return result.stdout


def rush(cluster, ids, until_overbooked):
    args = ["rush.py", "rush"] + (["--until-overbooked"] if until_overbooked else [])
    report = json.loads(site(cluster, *args, *[str(i) for i in ids]))
    h.expect(report["connections"] == 20,
             "the rush used %d server connections, not 20" % report["connections"])
    return report


def sql_counts(cluster):
    """{workshop id: (registrations, capacity)}, counted by PostgreSQL."""
    return {wid: (n, capacity) for wid, capacity, n in cluster.rows(
        "SELECT w.id, w.capacity, count(r.id) FROM events_workshop w"
        " LEFT JOIN events_registration r ON r.workshop_id = w.id GROUP BY w.id ORDER BY w.id",
        database=DB)}


def sql_overbooked(cluster):
    return {wid: n for wid, (n, capacity) in sql_counts(cluster).items() if n > capacity}


# --- what seatwatch says ----------------------------------------------------------

def violations(metrics):
    """{workshop_id: value} of every series of the invariant, zeros included."""
    out = {}
    for labels, value in metrics.find("seatwatch_invariant_violations", invariant=INVARIANT):
        h.expect_equal(sorted(labels), ["invariant", "workshop_id"], "labels of %r" % labels)
        out[int(labels["workshop_id"])] = value
    return out


def expect_reports(daemon, cluster, metrics):
    """The scrape and /api/invariants say exactly what plain SQL says."""
    overbooked = sql_overbooked(cluster)
    h.expect_equal(violations(metrics), {wid: 1.0 for wid in overbooked},
                   "seatwatch_invariant_violations by workshop_id")
    h.expect_equal(metrics.get("seatwatch_invariant_ok", invariant=INVARIANT), 0.0,
                   "seatwatch_invariant_ok")
    api = json.loads(h.fetch(daemon.port(), "/api/invariants"))
    entry = [i for i in api["invariants"] if i["name"] == INVARIANT]
    h.expect(len(entry) == 1, "/api/invariants has no single %s: %s" % (INVARIANT, api))
    entry = entry[0]
    h.expect_equal(entry["status"], "violated", "status in /api/invariants")
    h.expect_equal(sorted(int(v["labels"]["workshop_id"]) for v in entry["violations"]),
                   sorted(overbooked), "violations in /api/invariants")
    rows = entry.get("detail", {}).get("rows", [])
    detail = {int(r["workshop_id"]): (int(r["seatwatch_count"]), int(r["seatwatch_limit"]))
              for r in rows}
    counts = sql_counts(cluster)
    h.expect_equal(detail, {wid: counts[wid] for wid in overbooked},
                   "detail (seatwatch_count, seatwatch_limit) by workshop_id")
    return detail


def promtool_check(text):
    result = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                            text=True)
    h.expect(result.returncode == 0, "promtool check metrics:\n%s%s" % (result.stdout,
                                                                        result.stderr))


def once(work, config_text):
    path = os.path.join(work, "once.toml")
    with open(path, "w") as f:
        f.write(config_text)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PG") and not k.startswith("SEATWATCH_")}
    return subprocess.run([h.BIN, "--config", path, "--once"], env=env, capture_output=True,
                          text=True, timeout=120)


def full_passes(metrics):
    return metrics.total("seatwatch_full_passes_total", check=INVARIANT)


# --- the test ---------------------------------------------------------------------

def prepare(cluster):
    """A fresh database for the site and seatwatch's role."""
    cluster.execute("DROP DATABASE IF EXISTS %s WITH (FORCE)" % DB, database="postgres")
    cluster.execute("DROP ROLE IF EXISTS %s" % ROLE, database="postgres")
    cluster.execute("CREATE DATABASE %s" % DB, database="postgres")
    # REPLICATION: the change feed's slot (in production a role of its own,
    # see docs/incremental.md; one DSN keeps this config within the contract).
    cluster.execute("CREATE ROLE %s LOGIN REPLICATION" % ROLE, database="postgres")
    cluster.execute("GRANT pg_monitor TO %s" % ROLE, database="postgres")


def drop(cluster):
    for sql in ("DROP DATABASE IF EXISTS %s WITH (FORCE)" % DB, "DROP ROLE IF EXISTS %s" % ROLE):
        try:
            cluster.execute(sql, database="postgres")
        except Exception as e:  # keep tearing down
            sys.stderr.write("%s: %s\n" % (sql, e))


def body(env):
    h.expect(importlib.util.find_spec("django") is not None,
             "python3-django is not installed (%s): scripts/test installs it with the other "
             "packages of scripts/lib/deps.sh, or: apt-get install python3-django"
             % sys.executable)
    cluster = h.Cluster.attach(os.environ["TEST_PG_DIR"])
    h.expect_equal(cluster.scalar("SHOW wal_level", database="postgres"), "logical",
                   "wal_level of the scratch cluster")
    prepare(cluster)
    try:
        run(env, cluster)
    finally:
        for daemon in env.daemons:
            daemon.stop()
        drop(cluster)


def run(env, cluster):
    # 1. The site's own schema and a rush.
    site(cluster, "manage.py", "migrate", "--no-input")
    tables = cluster.rows("SELECT table_name FROM information_schema.tables"
                          " WHERE table_schema = 'public' AND table_name LIKE 'events%%'"
                          " ORDER BY 1", database=DB)
    h.expect_equal([t for (t,) in tables], ["events_registration", "events_workshop"],
                   "the tables Django made")
    made = json.loads(site(cluster, "rush.py", "create", "Intro to SQL=5", "Query tuning=5",
                           "Keynote=50", "Replication deep dive=5"))
    intro, tuning, keynote, replication = (w["id"] for w in made)
    first = rush(cluster, [intro, tuning], until_overbooked=True)
    rush(cluster, [keynote], until_overbooked=False)
    counts = sql_counts(cluster)
    h.note("after the rush (registrations, capacity) by workshop: %s; rounds %s"
           % (counts, first["rounds"]))
    h.expect_equal(sorted(sql_overbooked(cluster)), sorted([intro, tuning]),
                   "overbooked workshops (plain SQL)")
    h.expect(0 < counts[keynote][0] <= counts[keynote][1],
             "the keynote should have registrations within its capacity: %s" % (counts[keynote],))
    h.expect_equal(counts[replication][0], 0, "registrations of the fourth workshop")
    cluster.execute("GRANT SELECT ON events_workshop, events_registration TO %s" % ROLE,
                    database=DB)
    dsn = "host=127.0.0.1 port=%d user=%s dbname=%s" % (cluster.port, ROLE, DB)

    # 2. Full-pass mode.
    config = declared_config(dsn, incremental=False)
    check_declared(config)
    result = once(env.work, config)
    h.expect(result.returncode != 2, "seatwatch refused the declared config (exit 2):\n%s%s"
             % (result.stdout, result.stderr))
    h.expect(result.returncode == 1, "--once exited %d, not 1 (a violation):\n%s%s"
             % (result.returncode, result.stdout, result.stderr))
    for wid, expected in ((intro, True), (tuning, True), (keynote, False), (replication, False)):
        found = re.search(r"\bworkshop_id=%d\b" % wid, result.stdout) is not None
        h.expect(found == expected, "--once %s workshop %d:\n%s"
                 % ("does not name" if expected else "names", wid, result.stdout))
    h.expect(INVARIANT in result.stdout, "--once does not name %s" % INVARIANT)

    daemon = env.daemon(config, "full", args=["--listen", "127.0.0.1:%d" % h.free_port()])
    metrics = daemon.wait_metrics(
        lambda m: m.get("seatwatch_invariant_ok", invariant=INVARIANT) is not None,
        "a judgement of %s" % INVARIANT)
    detail = expect_reports(daemon, cluster, metrics)
    promtool_check(metrics.text)
    page = h.fetch(daemon.port(), "/")
    h.expect(page is not None and "<title>seatwatch: VIOLATED</title>" in page,
             "the status page does not say VIOLATED")
    h.note("full pass: violations %s, detail (count, limit) %s" % (violations(metrics), detail))
    daemon.stop()

    # 3. Incremental mode: the publication the feed reads, made as a DBA
    # would, with the script `seatwatch --print-setup` writes for this
    # config. Django's events_registration has the default replica identity
    # (its id), so a DELETE would carry no workshop_id: the script extends
    # the primary key by workshop_id in a unique index and makes it the
    # replica identity.
    config = declared_config(dsn, incremental=True)
    setup_path = os.path.join(env.work, "setup.sql")
    with open(os.path.join(env.work, "incremental.toml"), "w") as f:
        f.write(config)
    printed = subprocess.run([h.BIN, "--config", os.path.join(env.work, "incremental.toml"),
                              "--print-setup"], capture_output=True, text=True, timeout=60)
    h.expect(printed.returncode == 0, "--print-setup failed:\n%s" % printed.stderr)
    with open(setup_path, "w") as f:
        f.write(printed.stdout)
    cluster.psql_file(setup_path, database=DB)
    identity = cluster.rows("SELECT c.relreplident::text, i.indexrelid::regclass::text "
                            "FROM pg_class c LEFT JOIN pg_index i ON i.indrelid = c.oid "
                            "AND i.indisreplident WHERE c.relname = 'events_registration'",
                            database=DB)
    h.expect_equal(identity, [("i", "events_registration_id_workshop_id_idx")],
                   "events_registration's replica identity after the printed setup")
    check_declared(config)
    daemon = env.daemon(config, "incremental", args=["--listen", "127.0.0.1:%d" % h.free_port()])
    metrics = daemon.wait_metrics(
        lambda m: (m.get("seatwatch_changes_up") == 1
                   and m.get("seatwatch_check_mode", check=INVARIANT, mode="incremental") == 1
                   and m.get("seatwatch_invariant_ok", invariant=INVARIANT) is not None),
        "incremental mode (seatwatch_changes_up 1, seatwatch_check_mode incremental)")
    expect_reports(daemon, cluster, metrics)
    passes_before = full_passes(metrics)

    seen = {}
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            try:
                m = daemon.scrape()
            except h.Failure:
                return
            if m is not None and violations(m).get(replication) == 1 and "at" not in seen:
                seen["at"] = time.time()
            time.sleep(0.05)
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        second = rush(cluster, [replication], until_overbooked=True)
        committed = second["overbooked_at"][str(replication)]
        h.wait_for(lambda: "at" in seen, "the violation of workshop %d on /metrics" % replication,
                   timeout=max(committed + LATENCY_BOUND + 2 - time.time(), 0.5))
    finally:
        stop.set()
        watcher.join()
    latency = seen["at"] - committed
    h.note("workshop %d overbooked (%s registrations, capacity 5), on /metrics %.2f s after the"
           " commit" % (replication, sql_counts(cluster)[replication][0], latency))
    h.expect(latency <= LATENCY_BOUND, "the violation of workshop %d came %.2f s after the commit"
             " (at most %.0f s)" % (replication, latency, LATENCY_BOUND))
    metrics = daemon.scrape()
    expect_reports(daemon, cluster, metrics)
    h.expect_equal(sorted(violations(metrics)), sorted([intro, tuning, replication]),
                   "overbooked workshops after the second rush")
    h.expect_equal(full_passes(metrics), passes_before,
                   "full passes of %s during the rush (found by the feed, not a pass)" % INVARIANT)
    h.expect_equal(metrics.get("seatwatch_check_mode", check=INVARIANT, mode="incremental"), 1.0,
                   "seatwatch_check_mode incremental after the rush")


if __name__ == "__main__":
    h.run("e2e.django_client", body)
