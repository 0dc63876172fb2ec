#!/usr/bin/env python3
"""A check cancelled by a recovery conflict on a standby is counted under its
own reason and run again at once.

The standby runs with max_standby_streaming_delay = 1s. The checks lane reads
it ([checks] dsn), with one more metric check, cf_rows, that reads table cf
inside a 3 s pg_sleep (statement_timeout 10s, interval 1s): its REPEATABLE
READ snapshot is open most of the time. While it runs on the standby (seen
in the standby's pg_stat_activity), the primary deletes rows of cf and
vacuums them away: replay waits 1 s, then cancels the check (the statement
fails, or the server ends the session if it caught it between statements).
Repeated, with a deadline, until the counter moves. Then:

  - seatwatch_check_errors_total{check="cf_rows",reason="recovery_conflict"}
    is at least 1, and no other reason of cf_rows moved (the conflict is not
    a "sql" or "connection" error);
  - cf_rows succeeds again (the retry runs on a new snapshot), and the other
    checks kept check_success 1 at every scrape;
  - the standby's log shows the cancel.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import seatwatch_harness as sw  # noqa: E402

CF_QUERY = "SELECT count(*) AS n FROM cf, pg_sleep(3)\n"
ROWS = 10000


def body(env):
    pair = env.pair(standby_opts="-c max_standby_streaming_delay=1s")
    primary, standby = pair.primary, pair.standby
    primary.execute("CREATE TABLE cf (id integer PRIMARY KEY, pad text NOT NULL)")
    primary.execute("INSERT INTO cf SELECT g, repeat('x', 40) FROM generate_series(1, %d) g" % ROWS)
    primary.execute("VACUUM ANALYZE cf")
    pair.wait_replayed()

    sql_path = os.path.join(env.work, "cf_rows.sql")
    with open(sql_path, "w") as f:
        f.write(CF_QUERY)
    extra = "\n".join([
        "[[metric]]",
        'name = "cf_rows"',
        "sql = %s" % sw.toml_string(sql_path),
        'value = "n"',
        'interval = "1s"',
        "",
    ])
    port = sw.free_port()
    daemon = env.daemon(sw.booking_config(port, primary.dsn(), checks_dsn=standby.dsn(),
                                          statement_timeout="10s", extra=extra))
    others = ("booking_reconciliation", "event_inventory", "holds", "locks")

    def healthy(m):
        return all(m.get("seatwatch_check_success", check=name) == 1 for name in others + ("cf_rows",))

    m = daemon.wait_metrics(healthy, "every check succeeding on the standby")
    sw.expect_equal(m.get("seatwatch_cf_rows"), float(ROWS), "seatwatch_cf_rows")
    sw.expect_equal(m.get("seatwatch_database_in_recovery", lane="checks"), 1.0, "in_recovery{checks}")
    sw.expect_equal(m.get("seatwatch_check_errors_total", check="cf_rows", reason="recovery_conflict"),
                    0.0, "conflicts before any vacuum")
    before = {l["reason"]: v for l, v in m.find("seatwatch_check_errors_total", check="cf_rows")}

    def cf_running():  # and just begun: 2 s of its sleep left for the cancel
        return standby.scalar("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'seatwatch'"
                              " AND state = 'active' AND query LIKE '%%pg_sleep(3)%%'"
                              " AND clock_timestamp() - query_start < interval '1 second'") > 0

    deadline = time.monotonic() + 120
    rounds = 0
    conflicts = 0
    scrapes = []
    while conflicts == 0:
        if time.monotonic() > deadline:
            raise sw.Failure("no recovery conflict counted after %d rounds" % rounds)
        rounds += 1
        # Rows for this round's delete (each round removes what it put back).
        primary.execute("INSERT INTO cf SELECT g, repeat('x', 40) FROM generate_series(1, 4999) g"
                        " ON CONFLICT (id) DO NOTHING")
        pair.wait_replayed()
        sw.wait_for(cf_running, "cf_rows running on the standby")
        primary.execute("DELETE FROM cf WHERE id < 5000")
        primary.execute("VACUUM cf")
        # The cancel comes 1 s after replay reaches the vacuum; the retry
        # then takes about 3 s more. Wait for the counter, or the check
        # having run to its end untouched (then try again).
        started = time.monotonic()

        def settled():
            m = daemon.scrape()
            if m is None:
                return None
            scrapes.append(m)
            n = m.get("seatwatch_check_errors_total", check="cf_rows", reason="recovery_conflict") or 0
            return m if n > 0 or time.monotonic() - started > 6 else None

        m = sw.wait_for(settled, "the conflict counted or cf_rows finished", timeout=30)
        conflicts = m.get("seatwatch_check_errors_total", check="cf_rows", reason="recovery_conflict")
        sw.note("round %d: recovery_conflict counter %d" % (rounds, conflicts))

    # The retry succeeds on its new snapshot.
    m = daemon.wait_metrics(
        lambda m: m.get("seatwatch_check_success", check="cf_rows") == 1
        and m.get("seatwatch_cf_rows") == float(ROWS - 4999),
        "cf_rows succeeding again with the rows left after the delete")
    scrapes.append(m)
    after = {l["reason"]: v for l, v in m.find("seatwatch_check_errors_total", check="cf_rows")}
    sw.expect(after.get("recovery_conflict", 0) >= 1, "recovery_conflict counter: %r" % after)
    for reason, value in after.items():
        if reason != "recovery_conflict":
            sw.expect_equal(value, before.get(reason, 0), "cf_rows errors_total{reason=%s}" % reason)
    for scrape in scrapes:
        for name in others:
            sw.expect_equal(scrape.get("seatwatch_check_success", check=name), 1.0,
                            "check_success{%s} during the conflicts" % name)
    log = standby.log()
    sw.expect("canceling statement due to conflict with recovery" in log
              or "terminating connection due to conflict with recovery" in log,
              "the standby's log shows no recovery-conflict cancel")
    warned = daemon.log_lines("recovery conflict")
    sw.expect(len(warned) >= 1, "the daemon's log has no recovery conflict line")
    sw.note("conflicts counted %d after %d rounds, errors %r; daemon log: %s"
            % (after["recovery_conflict"], rounds, after, warned[0].strip()))


if __name__ == "__main__":
    sw.run("replica.recovery_conflict", body)
