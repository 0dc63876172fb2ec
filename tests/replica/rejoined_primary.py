#!/usr/bin/env python3
"""A lane that reconnects to the old primary, rejoined as a standby after a
failover, is no split brain.

[database] dsn names the primary then the standby (target_session_attrs=
primary), [checks] dsn the standby then the primary with prefer-standby, as a
user reading a standby whenever there is one would write it. Before: the
checks lane reads the standby (in recovery), the locks lane the primary,
timeline 1 for both.

The primary stops cleanly and the standby is promoted: both lanes read the
promoted node on timeline 2, one failover counted. The old primary rejoins
as a standby of the new one (`pg-scratch rejoin`), its last restartpoint
still on timeline 1, as a real failover engine's rejoined node's is. Then the
checks lane's session on the new primary is terminated: it reconnects to the
rejoined standby (prefer-standby) and reports timeline 1 in recovery. That is
what a standby's restartpoint looks like, not a server going back in time:
no "split brain?" line, and the failover count stays at 1.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import seatwatch_harness as sw  # noqa: E402


def body(env):
    pair = env.pair()
    primary, standby = pair.primary, pair.standby
    hosts = "host=127.0.0.1,127.0.0.1 port=%d,%d user=postgres dbname=%s target_session_attrs=%s"
    database_dsn = hosts % (primary.port, standby.port, sw.DB, "primary")
    checks_dsn = hosts % (standby.port, primary.port, sw.DB, "prefer-standby")
    daemon = env.daemon(sw.booking_config(sw.free_port(), database_dsn, checks_dsn=checks_dsn,
                                          reconnect_max_backoff="1s"))

    def lanes(m, checks, locks):
        """checks and locks: (in_recovery, timeline) each lane must report."""
        return (m.get("seatwatch_database_in_recovery", lane="checks") == checks[0]
                and m.get("seatwatch_database_timeline", lane="checks") == checks[1]
                and m.get("seatwatch_database_in_recovery", lane="locks") == locks[0]
                and m.get("seatwatch_database_timeline", lane="locks") == locks[1])

    daemon.wait_metrics(lambda m: lanes(m, (1, 1), (0, 1)) and m.violations() == sw.DEMO_VIOLATIONS,
                        "the checks lane on the standby, the locks lane on the primary")

    sw.scratch("stop", primary.path)
    sw.scratch("promote", standby.path)
    m = daemon.wait_metrics(lambda m: lanes(m, (0, 2), (0, 2)),
                            "both lanes on the promoted node, timeline 2")
    sw.expect_equal(m.get("seatwatch_database_failovers_total"), 1.0, "failovers after the promotion")

    sw.scratch("rejoin", primary.path, standby.path)
    sw.expect(primary.in_recovery() is True, "the old primary rejoined as a standby")
    # What the scenario needs: the rejoined node's restartpoint is still on
    # the timeline it left.
    sw.expect_equal(primary.scalar("SELECT timeline_id FROM pg_control_checkpoint()",
                                   database="postgres"), 1, "the rejoined node's restartpoint timeline")

    checks_sessions = standby.rows(
        "SELECT pid FROM pg_stat_activity WHERE datname = %s AND application_name = 'seatwatch'",
        (sw.DB,))
    sw.expect_equal(len(checks_sessions), 1, "the checks lane's sessions on the promoted node")
    standby.execute("SELECT pg_terminate_backend(%s)", (checks_sessions[0][0],))

    daemon.wait_metrics(lambda m: lanes(m, (1, 1), (0, 2)),
                        "the checks lane on the rejoined node (restartpoint on timeline 1)")
    sw.expect("seatwatch" in primary.app_names(), "the checks lane's session is on the rejoined node")
    # A few more polls there, then the verdict.
    m = daemon.wait_metrics(lambda m: lanes(m, (1, 1), (0, 2))
                            and m.violations() == sw.DEMO_VIOLATIONS,
                            "the demo's violations read on the rejoined node")
    sw.expect_equal(daemon.log_lines(r"split brain"), [], "split-brain warnings")
    sw.expect_equal(m.get("seatwatch_database_failovers_total"), 1.0, "failovers at the end")


if __name__ == "__main__":
    sw.run("replica.rejoined_primary", body)
