#!/usr/bin/env python3
"""The cleanup pointed at a standby ([database] dsn = the standby, cleanup
on, every second) frees nothing and waits quietly:

  - over at least five cleanup intervals the demo's expired holds on the
    primary are all still there, seatwatch_cleanup_in_recovery 1,
    seatwatch_cleanup_leader 0, nothing freed, no batch counted, no error
    batch;
  - the log says why exactly once (not per interval), and no error line
    (nor any "cannot ..." line) is repeated;
  - the locks lane reports seatwatch_database_in_recovery{lane="locks"} 1.

Then the standby is promoted (the primary stopped first): the cleanup resumes
by itself on the same process, leads, and frees every expired hold there.
"""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import seatwatch_harness as sw  # noqa: E402


def body(env):
    pair = env.pair()
    primary, standby = pair.primary, pair.standby
    expired = sw.expired_holds(primary)
    sw.expect(expired > 0, "the demo data has no expired holds")
    port = sw.free_port()
    daemon = env.daemon(sw.booking_config(port, standby.dsn(), cleanup={"interval": "1s"}))

    # Both lanes have read their server (the checks lane's first poll can
    # end after the locks lane's: until then seatwatch_up is 0).
    def waiting(m):
        return (m.get("seatwatch_cleanup_in_recovery") == 1
                and m.get("seatwatch_database_in_recovery", lane="locks") == 1
                and m.get("seatwatch_database_in_recovery", lane="checks") == 1)

    first = daemon.wait_metrics(waiting, "the cleanup waiting on the standby")
    start_poll = first.get("seatwatch_last_poll_timestamp_seconds")
    scrapes = [first]

    def five_intervals_later(m):
        scrapes.append(m)
        return m.get("seatwatch_last_poll_timestamp_seconds") >= start_poll + 5

    last = daemon.wait_metrics(five_intervals_later, "five more seconds of polls")
    for m in scrapes:
        sw.expect(waiting(m), "not waiting on the standby at every scrape")
        sw.expect_equal(m.get("seatwatch_cleanup_leader"), 0.0, "cleanup_leader")
        sw.expect_equal(m.get("seatwatch_cleanup_freed_total"), 0.0, "cleanup_freed_total")
        sw.expect_equal(m.total("seatwatch_cleanup_batches_total"), 0.0, "cleanup_batches_total")
        sw.expect_equal(m.get("seatwatch_up"), 1.0, "seatwatch_up")
        sw.expect_equal(m.get("seatwatch_database_in_recovery", lane="checks"), 1.0, "in_recovery{checks}")
    sw.expect_equal(sw.expired_holds(primary), expired, "expired holds on the primary")
    sw.expect_equal(sw.expired_holds(standby), expired, "expired holds on the standby")
    sw.expect_equal(last.get("seatwatch_holds_expired"), float(expired), "seatwatch_holds_expired")

    lines = daemon.log().split("\n")
    why = [l for l in lines if "cleanup" in l and re.search(r"standby|in recovery", l)]
    sw.expect_equal(len(why), 1, "log lines saying the cleanup waits on a standby (%r)" % why)
    repeated = collections.Counter(re.sub(r"^ts=\S+ ", "", l) for l in lines
                                   if "level=error" in l or "cannot" in l)
    sw.expect_equal(sorted(k for k, n in repeated.items() if n > 1), [], "repeated error or 'cannot' lines")
    sw.note("over %d scrapes: %d expired holds kept, in_recovery 1, leader 0; log: %s"
            % (len(scrapes), expired, why[0].strip()))

    # Promotion: the same process resumes the cleanup there.
    pair.wait_replayed()
    sw.scratch("stop", primary.path)
    sw.scratch("promote", standby.path)
    m = daemon.wait_metrics(
        lambda m: m.get("seatwatch_cleanup_in_recovery") == 0 and m.get("seatwatch_cleanup_leader") == 1
        and m.get("seatwatch_cleanup_freed_total") == expired,
        "the cleanup leading on the promoted server and freeing every expired hold", timeout=30)
    sw.expect_equal(sw.expired_holds(standby), 0, "expired holds left after the promotion")
    # The locks lane learns it at its own next poll ([locks] interval), which
    # may come after the cleanup's run.
    daemon.wait_metrics(lambda m: m.get("seatwatch_database_in_recovery", lane="locks") == 0,
                        "in_recovery{locks} 0 after the promotion", timeout=10)
    sw.expect_equal(len(daemon.log_lines(r"cleanup.*(standby|in recovery)")), 1,
                    "the waiting reason logged once in all")
    for lane in ("checks", "locks"):
        sw.expect_equal(len(daemon.log_lines(r'msg="lane reads a standby \(in recovery\)" lane=%s' % lane)), 1,
                        "'lane reads a standby' lines of the %s lane" % lane)
        sw.wait_for(lambda: daemon.log_lines(r'msg="lane reads a primary now" lane=%s' % lane),
                    "'lane reads a primary now' of the %s lane" % lane, timeout=10)
    sw.note("after the promotion: leader 1, %d holds freed" % expired)


if __name__ == "__main__":
    sw.run("replica.cleanup_on_standby", body)
