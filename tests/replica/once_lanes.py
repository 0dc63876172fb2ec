#!/usr/bin/env python3
"""`--once` runs each check on its own lane's server, as the daemon does.

[database] dsn is the primary, [checks] dsn the standby. A session on the
primary holds a row lock that a second one waits for. `--once` reports:
  - the checks lane's server as a standby and the locks lane's as the
    primary, each lane's DSN with it;
  - the demo's violations, read on the standby;
  - the lock wait under LOCKS: the locks lane read the primary (the standby
    has no lock waits to show).
Then the standby stops. `--once` says the checks lane's server is
UNREACHABLE and the locks lane's reachable, still shows the lock wait read on
the primary, and exits 3 (the invariants could not be judged).
"""
import os
import subprocess
import sys
import threading

import psycopg2

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import seatwatch_harness as sw  # noqa: E402


def run_once(env, config_path):
    plain = {k: v for k, v in os.environ.items()
             if not k.startswith("PG") and not k.startswith("SEATWATCH_")}
    result = subprocess.run([sw.BIN, "--config", config_path, "--once"], env=plain,
                            capture_output=True, text=True, timeout=120)
    sw.note("--once exited %d" % result.returncode)
    return result


def line_with(text, prefix):
    lines = [line for line in text.split("\n") if line.startswith(prefix)]
    return lines[0] if lines else None


def body(env):
    pair = env.pair()
    primary, standby = pair.primary, pair.standby
    config_path = os.path.join(env.work, "once.toml")
    with open(config_path, "w") as f:
        f.write(sw.booking_config(sw.free_port(), primary.dsn(), checks_dsn=standby.dsn()))

    # A row lock held on the primary, and a session waiting for it.
    holder = primary.connect()
    holder.autocommit = False
    cur = holder.cursor()
    cur.execute("SELECT seat FROM seats WHERE event_id = 1 ORDER BY seat LIMIT 1 FOR UPDATE")
    seat = cur.fetchone()[0]
    waiter = primary.connect()
    waiting = threading.Thread(
        target=lambda: _wait_quietly(
            waiter, "UPDATE seats SET version = version WHERE event_id = 1 AND seat = %s", (seat,)),
        daemon=True)
    waiting.start()
    sw.wait_for(lambda: primary.scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = %s",
        (sw.DB,)) == 1, "a session waiting for the row lock on the primary")
    pair.wait_replayed()

    try:
        result = run_once(env, config_path)
        out = result.stdout
        sw.expect(result.returncode == 1, "--once with violations exits 1, got %d:\n%s%s"
                  % (result.returncode, out, result.stderr))
        sw.expect((line_with(out, "server (checks lane):") or "").startswith("server (checks lane): standby, replay "),
                  "the checks lane's server is the standby:\n%s" % out)
        sw.expect_equal(line_with(out, "server (locks lane):"), "server (locks lane): primary",
                        "the locks lane's server")
        checks_line = line_with(out, "database (checks lane):") or ""
        locks_line = line_with(out, "database (locks lane):") or ""
        sw.expect("port=%d" % standby.port in checks_line and checks_line.endswith("(reachable)"),
                  "the checks lane's DSN and reach: %r\n%s" % (checks_line, out))
        sw.expect("port=%d" % primary.port in locks_line and locks_line.endswith("(reachable)"),
                  "the locks lane's DSN and reach: %r\n%s" % (locks_line, out))
        for name, event in sw.DEMO_VIOLATIONS:
            sw.expect("VIOLATED  %s" % name in out, "%s reported:\n%s" % (name, out))
        sw.expect("\nLOCKS\n  1 waiting," in out, "the primary's lock wait under LOCKS:\n%s" % out)

        sw.scratch("stop", standby.path)
        result = run_once(env, config_path)
        out = result.stdout
        sw.expect(result.returncode == 3, "--once without the checks lane's server exits 3, got %d:\n%s%s"
                  % (result.returncode, out, result.stderr))
        checks_line = line_with(out, "database (checks lane):") or ""
        locks_line = line_with(out, "database (locks lane):") or ""
        sw.expect(checks_line.endswith("(UNREACHABLE)"), "the checks lane unreachable: %r\n%s" % (checks_line, out))
        sw.expect(locks_line.endswith("(reachable)"), "the locks lane reachable: %r\n%s" % (locks_line, out))
        sw.expect_equal(line_with(out, "server (locks lane):"), "server (locks lane): primary",
                        "the locks lane's server with the standby down")
        sw.expect(line_with(out, "server (checks lane):") is None, "no server line for the unreachable lane:\n%s" % out)
        sw.expect("\nLOCKS\n  1 waiting," in out, "the lock wait still under LOCKS:\n%s" % out)
        sw.expect("UNKNOWN   sold_seat_without_ticket" in out, "the invariants unknown:\n%s" % out)
    finally:
        holder.rollback()
        holder.close()
        waiting.join(timeout=10)
        waiter.close()


def _wait_quietly(conn, sql, args):
    try:
        conn.cursor().execute(sql, args)
    except psycopg2.Error:
        pass


if __name__ == "__main__":
    sw.run("replica.once_lanes", body)
