#!/usr/bin/env python3
"""The checks lane on a streaming standby, the locks lane and the cleanup on
the primary ([checks] dsn = the standby, [database] dsn = the primary):

  1. pg_stat_activity of each server shows who connected where: the checks
     lane (application_name seatwatch) on the standby only, seatwatch-locks
     and seatwatch-cleanup on the primary only.
  2. The demo data's injected violations, written on the primary, are
     reported exactly; seatwatch_database_in_recovery is 1 for the checks
     lane and 0 for the locks lane; a caught-up standby has lag 0.
  3. Replay paused on the standby, a violation committed on the primary: the
     checks lane's lag rises above 0 and grows, and the violation is not
     reported while replay is paused (over several polls).
  4. Replay resumed: lag back to 0 and the violation reported.

The cleanup runs in dry run, so the data stays as injected.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import seatwatch_harness as sw  # noqa: E402


def body(env):
    pair = env.pair()
    primary, standby = pair.primary, pair.standby
    port = sw.free_port()
    daemon = env.daemon(sw.booking_config(
        port, primary.dsn(), checks_dsn=standby.dsn(),
        cleanup={"dry_run": True}))

    # 2. Violations exactly as injected, read from the standby.
    m = daemon.wait_metrics(
        lambda m: m.get("seatwatch_up") == 1 and m.violations() == sw.DEMO_VIOLATIONS,
        "the demo violations reported")
    sw.expect_equal(m.get("seatwatch_database_in_recovery", lane="checks"), 1.0, "in_recovery{checks}")
    sw.expect_equal(m.get("seatwatch_database_in_recovery", lane="locks"), 0.0, "in_recovery{locks}")
    m = daemon.wait_metrics(lambda m: m.get("seatwatch_replica_lag_seconds", lane="checks") == 0,
                            "lag 0 on the caught-up standby")
    sw.expect_equal(m.get("seatwatch_replica_lag_seconds", lane="locks"), 0.0, "lag{locks}")
    for name in ("booking_reconciliation", "event_inventory", "holds", "locks"):
        sw.expect_equal(m.get("seatwatch_check_success", check=name), 1.0, "check_success{%s}" % name)
    sw.expect_equal(m.get("seatwatch_database_timeline", lane="checks"), 1.0, "timeline{checks}")
    sw.expect_equal(m.get("seatwatch_database_failovers_total"), 0.0, "failovers_total")
    sw.note("violations reported from the standby: %d series" % len(m.violations()))

    # 1. Who connected where (the cleanup connects at its first run).
    sw.wait_for(lambda: "seatwatch-cleanup" in primary.app_names(), "the cleanup session on the primary")
    on_primary = set(primary.app_names())
    on_standby = set(standby.app_names())
    sw.expect_equal(on_standby, {"seatwatch"}, "seatwatch sessions on the standby")
    sw.expect_equal(on_primary, {"seatwatch-locks", "seatwatch-cleanup"}, "seatwatch sessions on the primary")
    sw.note("sessions: standby %s, primary %s" % (sorted(on_standby), sorted(on_primary)))

    # 3. Replay paused: the lag grows, the new violation stays unseen.
    standby.execute("SELECT pg_wal_replay_pause()", database="postgres")
    sw.wait_for(lambda: standby.scalar("SELECT pg_get_wal_replay_pause_state()", database="postgres") == "paused",
                "replay paused")
    seat = sw.sell_seat_without_ticket(primary, 17)
    sw.note("sold seat %s of event 17 without a ticket on the primary, replay paused" % seat)
    first = daemon.wait_metrics(lambda m: (m.get("seatwatch_replica_lag_seconds", lane="checks") or 0) > 0,
                                "lag above 0 while replay is paused")
    lag1 = first.get("seatwatch_replica_lag_seconds", lane="checks")
    poll1 = first.get("seatwatch_last_poll_timestamp_seconds")
    seen = []

    def grown(m):
        seen.append(m)
        lag = m.get("seatwatch_replica_lag_seconds", lane="checks") or 0
        return lag >= lag1 + 2 and m.get("seatwatch_last_poll_timestamp_seconds") >= poll1 + 3

    last = daemon.wait_metrics(grown, "the lag growing over three polls")
    lag2 = last.get("seatwatch_replica_lag_seconds", lane="checks")
    for m in [first] + seen:
        sw.expect(("sold_seat_without_ticket", "17") not in m.violations(),
                  "the violation was reported while replay was paused")
        sw.expect_equal(m.get("seatwatch_database_in_recovery", lane="checks"), 1.0, "in_recovery{checks}")
    sw.expect_equal(standby.scalar("SELECT count(*) FROM seats WHERE event_id = 17 AND seat = %s"
                                   " AND status = 'sold'", (seat,)), 0, "the sale visible on the paused standby")
    sw.note("replay paused: lag %.1f s then %.1f s, violation not reported" % (lag1, lag2))

    # 4. Resumed: caught up, the violation reported.
    standby.execute("SELECT pg_wal_replay_resume()", database="postgres")
    expected = dict(sw.DEMO_VIOLATIONS)
    expected[("sold_seat_without_ticket", "17")] = 1
    m = daemon.wait_metrics(
        lambda m: m.get("seatwatch_replica_lag_seconds", lane="checks") == 0 and m.violations() == expected,
        "lag 0 and the new violation reported after the resume")
    sw.expect_equal(m.get("seatwatch_database_in_recovery", lane="checks"), 1.0, "in_recovery{checks}")
    sw.expect_equal(m.get("seatwatch_database_failovers_total"), 0.0, "failovers_total")
    sw.expect_equal(len(daemon.log_lines(r'msg="lane reads a standby \(in recovery\)" lane=checks')), 1,
                    "'lane reads a standby' lines of the checks lane")
    sw.expect_equal(daemon.log_lines(r'msg="lane reads a standby.*lane=locks'), [],
                    "'lane reads a standby' lines of the locks lane")
    sw.note("replay resumed: lag 0, sold_seat_without_ticket{event_id=17} 1")


if __name__ == "__main__":
    sw.run("replica.standby_checks", body)
