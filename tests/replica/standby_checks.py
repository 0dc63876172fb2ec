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
import replica_lib as rl


def body(env):
    pair = env.pair()
    primary, standby = pair.primary, pair.standby
    port = rl.free_port()
    daemon = env.daemon(rl.booking_config(
        port, primary.dsn(), checks_dsn=standby.dsn(),
        cleanup={"dry_run": True}))

    # 2. Violations exactly as injected, read from the standby.
    m = daemon.wait_metrics(
        lambda m: m.get("seatwatch_up") == 1 and m.violations() == rl.DEMO_VIOLATIONS,
        "the demo violations reported")
    rl.expect_equal(m.get("seatwatch_database_in_recovery", lane="checks"), 1.0, "in_recovery{checks}")
    rl.expect_equal(m.get("seatwatch_database_in_recovery", lane="locks"), 0.0, "in_recovery{locks}")
    m = daemon.wait_metrics(lambda m: m.get("seatwatch_replica_lag_seconds", lane="checks") == 0,
                            "lag 0 on the caught-up standby")
    rl.expect_equal(m.get("seatwatch_replica_lag_seconds", lane="locks"), 0.0, "lag{locks}")
    for name in ("booking_reconciliation", "event_inventory", "holds", "locks"):
        rl.expect_equal(m.get("seatwatch_check_success", check=name), 1.0, "check_success{%s}" % name)
    rl.expect_equal(m.get("seatwatch_database_timeline", lane="checks"), 1.0, "timeline{checks}")
    rl.expect_equal(m.get("seatwatch_database_failovers_total"), 0.0, "failovers_total")
    rl.note("violations reported from the standby: %d series" % len(m.violations()))

    # 1. Who connected where (the cleanup connects at its first run).
    rl.wait_for(lambda: "seatwatch-cleanup" in primary.app_names(), "the cleanup session on the primary")
    on_primary = set(primary.app_names())
    on_standby = set(standby.app_names())
    rl.expect_equal(on_standby, {"seatwatch"}, "seatwatch sessions on the standby")
    rl.expect_equal(on_primary, {"seatwatch-locks", "seatwatch-cleanup"}, "seatwatch sessions on the primary")
    rl.note("sessions: standby %s, primary %s" % (sorted(on_standby), sorted(on_primary)))

    # 3. Replay paused: the lag grows, the new violation stays unseen.
    standby.execute("SELECT pg_wal_replay_pause()", database="postgres")
    rl.wait_for(lambda: standby.scalar("SELECT pg_get_wal_replay_pause_state()", database="postgres") == "paused",
                "replay paused")
    seat = rl.sell_seat_without_ticket(primary, 17)
    rl.note("sold seat %s of event 17 without a ticket on the primary, replay paused" % seat)
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
        rl.expect(("sold_seat_without_ticket", "17") not in m.violations(),
                  "the violation was reported while replay was paused")
        rl.expect_equal(m.get("seatwatch_database_in_recovery", lane="checks"), 1.0, "in_recovery{checks}")
    rl.expect_equal(standby.scalar("SELECT count(*) FROM seats WHERE event_id = 17 AND seat = %s"
                                   " AND status = 'sold'", (seat,)), 0, "the sale visible on the paused standby")
    rl.note("replay paused: lag %.1f s then %.1f s, violation not reported" % (lag1, lag2))

    # 4. Resumed: caught up, the violation reported.
    standby.execute("SELECT pg_wal_replay_resume()", database="postgres")
    expected = dict(rl.DEMO_VIOLATIONS)
    expected[("sold_seat_without_ticket", "17")] = 1
    m = daemon.wait_metrics(
        lambda m: m.get("seatwatch_replica_lag_seconds", lane="checks") == 0 and m.violations() == expected,
        "lag 0 and the new violation reported after the resume")
    rl.expect_equal(m.get("seatwatch_database_in_recovery", lane="checks"), 1.0, "in_recovery{checks}")
    rl.expect_equal(m.get("seatwatch_database_failovers_total"), 0.0, "failovers_total")
    rl.expect_equal(len(daemon.log_lines(r'msg="lane reads a standby \(in recovery\)" lane=checks')), 1,
                    "'lane reads a standby' lines of the checks lane")
    rl.expect_equal(daemon.log_lines(r'msg="lane reads a standby.*lane=locks'), [],
                    "'lane reads a standby' lines of the locks lane")
    rl.note("replay resumed: lag 0, sold_seat_without_ticket{event_id=17} 1")


if __name__ == "__main__":
    rl.run("replica.standby_checks", body)
