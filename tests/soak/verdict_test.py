"""The soak's verdict on hand-made recordings: a clean run passes, and each
kind of misbehaviour fails exactly its own assertion. No database, no daemon.

Run: python3 tests/soak/verdict_test.py (CTest: soak.verdict)."""

import copy
import unittest

import soak_verdict

INVARIANTS = ["sold_seat_without_ticket", "ticket_without_sold_seat",
              "confirmed_payment_without_ticket", "ticket_without_confirmed_payment",
              "double_confirmed_payment", "fan_over_limit"]
CHECKS = ["booking_reconciliation", "event_inventory", "holds", "locks"]


def params(**overrides):
    values = dict(interval=2, statement_timeout=2, backoff=2, ready=0, warmup_end=5,
                  run_end=100, max_backends=3,
                  slope_bounds={"threads": 1.0, "fds": 2.0, "rss": 2 * 2**20},
                  sigterm_bound=3)
    values.update(overrides)
    return soak_verdict.Params(**values)


def healthy_sample(t):
    return {"t": float(t), "latency": 0.01, "up": {"": 1.0},
            "invariant_ok": {name: 1.0 for name in INVARIANTS},
            "check_success": {name: 1.0 for name in CHECKS},
            "threads": 12, "fds": 6, "rss": 12 * 2**20}


def clean_run():
    """100 s: a violation committed at 20 s, seen from 22 s, repaired at 30 s;
    a stall from 40 to 60 s during which seatwatch says up 0 and shows no
    invariant series from 46 s (within the 8 s deadline)."""
    scrapes = []
    for t in range(0, 101):
        s = healthy_sample(t)
        if 22 <= t <= 31:
            s["invariant_ok"]["sold_seat_without_ticket"] = 0.0
        if 46 <= t <= 61:
            s["up"] = {"": 0.0}
            s["invariant_ok"] = {}
            s["check_success"] = {name: 0.0 for name in CHECKS}
        scrapes.append(s)
    backends = [{"t": float(t), "by_app": {"seatwatch": 1, "seatwatch-locks": 1}, "total": 2}
                for t in range(0, 101)]
    faults = [{"kind": "stall", "start": 40.0, "end": 60.0, "outage": [40.0, 60.0],
               "blind": [40.0, 60.0], "detail": {}}]
    injections = [{"id": 1, "kind": "sold_seat_without_ticket",
                   "allowed": ["sold_seat_without_ticket"], "during": "",
                   "committed": 20.0, "repaired": 30.0}]
    sigterm = {"exit_code": 0, "seconds": 0.4, "killed": False}
    return scrapes, backends, faults, injections, sigterm


def failing(verdict):
    return sorted(r["assertion"] for r in verdict.rows if not r["ok"])


class VerdictTest(unittest.TestCase):
    def judge(self, recording, **overrides):
        verdict, findings = soak_verdict.judge(*recording, params(**overrides))
        return verdict, findings

    def test_clean_run_passes(self):
        verdict, findings = self.judge(clean_run())
        self.assertEqual(failing(verdict), [])
        self.assertEqual(findings["injections"][0]["latency"], 2.0)

    def test_stale_ok_and_up_one_during_a_stall_fail(self):
        recording = clean_run()
        for s in recording[0]:
            if 46 <= s["t"] <= 60:
                s.update(copy.deepcopy(healthy_sample(s["t"])))
        verdict, findings = self.judge(recording)
        self.assertEqual(failing(verdict), ["no stale ok during an outage or lock",
                                            "up 0 while unreachable past the deadline"])
        # 48..60 s: the outage is older than the 8 s deadline.
        self.assertEqual(len(findings["stale_ok_during_outage"]), 13)

    def test_up_zero_while_healthy_fails(self):
        recording = clean_run()
        for s in recording[0]:
            if 80 <= s["t"] <= 90:
                s["up"] = {"": 0.0}
        verdict, findings = self.judge(recording)
        self.assertEqual(failing(verdict), ["up 1 while healthy"])
        self.assertEqual(len(findings["up_0_while_healthy"]), 11)

    def test_up_zero_just_after_a_fault_is_allowed(self):
        recording = clean_run()
        for s in recording[0]:
            if 61 <= s["t"] <= 66:  # within the 7 s grace after the stall
                s["up"] = {"": 0.0}
        verdict, _ = self.judge(recording)
        self.assertEqual(failing(verdict), [])

    def test_false_alarm_fails(self):
        recording = clean_run()
        recording[0][10]["invariant_ok"]["fan_over_limit"] = 0.0
        verdict, findings = self.judge(recording)
        self.assertEqual(failing(verdict), ["no false alarm"])
        self.assertEqual(findings["false_alarms"], ["10s fan_over_limit"])

    def test_violation_seen_late_or_never_fails(self):
        recording = clean_run()
        for s in recording[0]:
            if s["invariant_ok"]:
                s["invariant_ok"]["sold_seat_without_ticket"] = 1.0  # never reported
        verdict, findings = self.judge(recording)
        self.assertEqual(failing(verdict), ["every injected violation reported"])
        self.assertIsNone(findings["injections"][0]["seen"])

    def test_a_fault_extends_the_detection_bound(self):
        recording = clean_run()
        # Committed during the stall, reported once it ends (62 s).
        recording[3][0].update(committed=45.0, repaired=70.0)
        for s in recording[0]:
            if s["invariant_ok"]:
                s["invariant_ok"]["sold_seat_without_ticket"] = 0.0 if 62 <= s["t"] <= 72 else 1.0
        verdict, findings = self.judge(recording)
        self.assertEqual(failing(verdict), [])
        # The stall ends at 60 s: bound = 60 + grace 7 + interval 2 - 45.
        self.assertEqual(findings["injections"][0]["bound"], 24.0)

    def test_connection_pile_up_fails(self):
        recording = clean_run()
        recording[1][70] = {"t": 70.0, "by_app": {"seatwatch": 3, "seatwatch-locks": 1},
                            "total": 4}
        verdict, findings = self.judge(recording)
        self.assertEqual(failing(verdict), ["no connection pile-up"])
        self.assertEqual(findings["backends_peak"], 4)

    def test_growing_fds_fail(self):
        recording = clean_run()
        for s in recording[0]:
            s["fds"] = 6 + int(s["t"] // 10)  # +6 per minute
        verdict, findings = self.judge(recording)
        self.assertEqual(failing(verdict), ["fds flat"])
        self.assertAlmostEqual(findings["slopes"]["fds"]["per_minute"], 6, delta=0.5)

    def test_rss_is_judged_without_thread_stacks(self):
        recording = clean_run()
        for s in recording[0]:
            s["rss_stacks"] = 4 * 2**20 + int(s["t"]) * 50 * 1024  # +50 KiB/s, bounded
            s["rss_heap"] = 12 * 2**20
            s["rss"] = s["rss_heap"] + s["rss_stacks"]
        verdict, findings = self.judge(recording)
        self.assertEqual(failing(verdict), [])
        self.assertAlmostEqual(findings["slopes"]["rss_stacks"]["per_minute"], 50 * 1024 * 60,
                               delta=2**16)
        for s in recording[0]:
            s["rss_heap"] += int(s["t"]) * 60 * 1024  # +3.5 MiB/min outside the stacks
        verdict, _ = self.judge(recording)
        self.assertEqual(failing(verdict), ["RSS outside thread stacks flat"])

    def test_slow_or_failed_sigterm_fails(self):
        recording = clean_run()
        recording = recording[:4] + ({"exit_code": 0, "seconds": 26.0, "killed": False},)
        verdict, _ = self.judge(recording)
        self.assertEqual(failing(verdict), ["exit 0 on SIGTERM"])

    def test_failed_poll_after_killing_idle_sessions_fails(self):
        recording = clean_run()
        recording[2].append({"kind": "kill_backends", "start": 80.0, "end": 80.1,
                             "outage": None, "blind": None,
                             "detail": {"killed": 2, "all_idle": True}})
        recording[0][82]["up"] = {"": 0.0}
        verdict, findings = self.judge(recording)
        self.assertEqual(failing(verdict), ["no failed poll after idle sessions are killed"])
        self.assertEqual(len(findings["failed_polls_after_idle_kill"]), 1)

    def test_failed_scrape_fails(self):
        recording = clean_run()
        recording[0][50] = {"t": 50.0, "latency": 2.0, "error": "timeout", "threads": 12,
                            "fds": 6, "rss": 12 * 2**20}
        verdict, findings = self.judge(recording)
        self.assertEqual(failing(verdict), ["every scrape answered"])
        self.assertEqual(findings["scrape_failures"], {"stall": 1})


if __name__ == "__main__":
    unittest.main()
