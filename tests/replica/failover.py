#!/usr/bin/env python3
"""A promotion followed without a restart, through multi-host DSNs.

[database] dsn names the primary then the standby, [checks] dsn the standby
then the primary, both with target_session_attrs=primary (so every lane
reads the primary; read-write would refuse the lanes' own sessions, which
start with default_transaction_read_only=on); the cleanup runs every second and the change feed is on,
so the booking pack is incremental. Before: everything on the primary, the
demo violations reported, the cleanup leads (its advisory lock in pg_locks)
and has freed the demo's expired holds, the feed is up, timeline 1.

Then the primary stops (`pg-scratch stop`) and the standby is promoted
(`pg-scratch promote`). Within 30 s, the same process (same PID, same
process_start_time_seconds): seatwatch_up 1, seatwatch_cleanup_leader 1
with the lock in the new primary's pg_locks, seatwatch_database_failovers_total
exactly 1, seatwatch_database_timeline 2 for both lanes, the feed up again
with one resync counted and a full pass of reason resync, incremental again.
A violation and three expired holds written on the new primary: the
violation is reported (through the new feed), the holds freed.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import seatwatch_harness as sw  # noqa: E402


def leader_lock_holders(cluster):
    return cluster.rows(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a USING (pid)"
        " WHERE l.locktype = 'advisory' AND l.granted AND (l.classid, l.objid, l.objsubid) = (%s, %s, %s)",
        sw.LEADER_LOCK)


def body(env):
    pair = env.pair(changes_setup=True)
    primary, standby = pair.primary, pair.standby
    hosts = "host=127.0.0.1,127.0.0.1 port=%d,%d user=postgres dbname=%s target_session_attrs=primary"
    database_dsn = hosts % (primary.port, standby.port, sw.DB)
    checks_dsn = hosts % (standby.port, primary.port, sw.DB)
    port = sw.free_port()
    daemon = env.daemon(sw.booking_config(
        port, database_dsn, checks_dsn=checks_dsn, reconnect_max_backoff="2s",
        cleanup={}, changes={}))

    def steady(m, timeline):
        return (m.get("seatwatch_up") == 1
                and m.get("seatwatch_cleanup_leader") == 1
                and m.get("seatwatch_changes_up") == 1
                and m.get("seatwatch_check_mode", check="booking_reconciliation", mode="incremental") == 1
                and m.get("seatwatch_database_timeline", lane="locks") == timeline
                and m.get("seatwatch_database_timeline", lane="checks") == timeline
                and m.get("seatwatch_database_in_recovery", lane="locks") == 0
                and m.get("seatwatch_database_in_recovery", lane="checks") == 0)

    m = daemon.wait_metrics(lambda m: steady(m, 1) and m.violations() == sw.DEMO_VIOLATIONS,
                            "the steady state on the primary (timeline 1)")
    sw.wait_for(lambda: sw.expired_holds(primary) == 0, "the demo's expired holds freed on the primary")
    sw.expect_equal(leader_lock_holders(primary), [("seatwatch-cleanup",)], "leader lock on the primary")
    sw.expect_equal(m.get("seatwatch_database_failovers_total"), 0.0, "failovers before")
    m = daemon.wait_metrics(lambda m: (m.get("seatwatch_cleanup_freed_total") or 0) > 0, "holds freed counted")
    started_at = m.get("process_start_time_seconds")
    pid = daemon.proc.pid
    resyncs = m.total("seatwatch_changes_resyncs_total")
    resync_passes = m.get("seatwatch_full_passes_total", check="booking_reconciliation", reason="resync")
    freed = m.get("seatwatch_cleanup_freed_total")
    sw.note("before: timeline 1, leader, feed up, %d resyncs, %d holds freed" % (resyncs, freed))

    # The failover.
    pair.wait_replayed()
    sw.scratch("stop", primary.path)
    sw.scratch("promote", standby.path)
    promoted = time.monotonic()
    sw.note("primary stopped, standby promoted")

    m = daemon.wait_metrics(
        lambda m: steady(m, 2) and m.get("seatwatch_database_failovers_total") == 1
        and m.total("seatwatch_changes_resyncs_total") > resyncs,
        "seatwatch following the promotion", timeout=30)
    sw.note("followed the promotion in %.1f s" % (time.monotonic() - promoted))
    sw.expect(daemon.proc.poll() is None and daemon.proc.pid == pid, "the daemon is not the same process")
    sw.expect_equal(m.get("process_start_time_seconds"), started_at, "process_start_time_seconds")
    sw.wait_for(lambda: leader_lock_holders(standby) == [("seatwatch-cleanup",)],
                "the leader lock in the new primary's pg_locks", timeout=10)

    # Work on the new primary: a violation for the new feed, holds for the cleanup.
    seat = sw.sell_seat_without_ticket(standby, 19)
    made = sw.expire_holds(standby, 1, 3)
    sw.expect_equal(made, 3, "expired holds made on the new primary")
    expected = dict(sw.DEMO_VIOLATIONS)
    expected[("sold_seat_without_ticket", "19")] = 1
    m = daemon.wait_metrics(
        lambda m: m.violations() == expected and m.get("seatwatch_cleanup_freed_total") == freed + 3,
        "the new violation reported and the three holds freed on the new primary")
    sw.expect_equal(sw.expired_holds(standby), 0, "expired holds left on the new primary")
    sw.expect(steady(m, 2), "steady on timeline 2")
    sw.expect_equal(m.get("seatwatch_database_failovers_total"), 1.0, "failovers_total")
    sw.expect_equal(m.total("seatwatch_changes_resyncs_total"), resyncs + 1, "resyncs_total")
    sw.expect(m.get("seatwatch_full_passes_total", check="booking_reconciliation", reason="resync")
              >= resync_passes + 1, "no full pass of reason resync after the new slot")
    sw.expect_equal(m.get("process_start_time_seconds"), started_at, "process_start_time_seconds")
    logged = daemon.log_lines("database server changed")
    sw.expect_equal(len(logged), 1, "'database server changed' log lines")
    sw.note("after: timeline 2, failovers 1, leader on the new primary, seat %s of event 19 reported, "
            "resyncs %d, holds freed %d; log: %s"
            % (seat, m.total("seatwatch_changes_resyncs_total"), m.get("seatwatch_cleanup_freed_total"),
               logged[0].strip()))


if __name__ == "__main__":
    sw.run("replica.failover", body)
