"""The soak's verdict: pure functions from what was recorded (scrapes,
backend counts, fault and injection records, the SIGTERM) to a table of
assertions, each PASS or FAIL with what was observed and the bound.

Times are seconds on the run's clock. The bounds come from `Params`:

  deadline   a poll that cannot reach the database must show up 0 (and no
             invariant series) within this long: poll interval +
             statement_timeout + a 3 s margin + one scrape period
  lock_deadline   the same for a table locked ACCESS EXCLUSIVE: the next poll
             fails on lock_timeout, so one interval + 2 s
  grace      after a fault ends, how long up may stay 0 before it is a lie:
             reconnect_max_backoff + interval + statement_timeout + 1 s
  base       an injected violation must show invariant_ok 0 within this long
             of its commit when no fault is near: two poll intervals + 2 s
             (a scrape and the poll's own time); a fault that overlaps
             extends it to the fault's end + grace + one interval"""

import dataclasses


@dataclasses.dataclass
class Params:
    interval: float
    statement_timeout: float
    backoff: float
    ready: float            # clock time the daemon was first healthy
    warmup_end: float       # slopes are fitted from here
    run_end: float          # clock time of the SIGTERM
    max_backends: int
    slope_bounds: dict      # per minute: threads, fds, rss (bytes)
    sigterm_bound: float

    @property
    def deadline(self):
        return self.interval + self.statement_timeout + 3 + 1

    @property
    def lock_deadline(self):
        return self.interval + 2

    @property
    def grace(self):
        return self.backoff + self.interval + self.statement_timeout + 1

    @property
    def base(self):
        return 2 * self.interval + 2


def _faults(faults):
    return [f for f in faults if f["kind"] != "quiet"]


def settle_deadline(t, faults, p):
    """When a change committed at `t` must be visible, given the faults."""
    deadline = t + p.base
    changed = True
    while changed:
        changed = False
        for f in _faults(faults):
            if f["start"] <= deadline and f["end"] + p.grace >= t:
                extended = f["end"] + p.grace + p.interval
                if extended > deadline:
                    deadline, changed = extended, True
    return deadline


def in_window(t, window, after=0.0):
    return window is not None and window[0] + after <= t <= window[1]


def healthy(t, faults, p):
    """No fault active or recovering at `t`, and the daemon is past start-up."""
    if t < p.ready + 2:
        return False
    return not any(f["start"] <= t <= f["end"] + p.grace for f in _faults(faults))


def slope_per_minute(points):
    """Least-squares slope of (t seconds, y) in y per minute; None if < 3 points."""
    if len(points) < 3:
        return None
    n = len(points)
    mt = sum(t for t, _ in points) / n
    my = sum(y for _, y in points) / n
    var = sum((t - mt) ** 2 for t, _ in points)
    if var == 0:
        return None
    return sum((t - mt) * (y - my) for t, y in points) / var * 60


SETTLE = 3.0


def growth_by_fault(scrapes, faults, value):
    """Per fault kind: the summed change of `value(sample)` from just before
    each fault (the last sample before its start) to after it settled (the
    first sample SETTLE s after its end): which fault leaves something behind."""
    out = {}
    for f in _faults(faults):
        before = [value(s) for s in scrapes if value(s) is not None and s["t"] < f["start"]]
        after = [value(s) for s in scrapes
                 if value(s) is not None and s["t"] >= f["end"] + SETTLE]
        if before and after:
            out[f["kind"]] = out.get(f["kind"], 0) + after[0] - before[-1]
    return out


def _first(items, limit=5):
    return items[:limit]


class Verdict:
    def __init__(self):
        self.rows = []

    def add(self, name, ok, observed, bound, detail=None):
        self.rows.append({"assertion": name, "ok": bool(ok), "observed": observed,
                          "bound": bound, "detail": detail})

    @property
    def passed(self):
        return all(r["ok"] for r in self.rows)


def judge(scrapes, backends, faults, injections, sigterm, p):
    """Returns (Verdict, findings dict)."""
    v = Verdict()
    good = [s for s in scrapes if "error" not in s and s["t"] <= p.run_end]
    findings = {}

    # The daemon stayed up until the SIGTERM.
    gone = [s["t"] for s in scrapes if s.get("gone") and s["t"] < p.run_end]
    v.add("daemon alive until SIGTERM", not gone,
          f"gone at {gone[0]:.1f}s" if gone else "alive", "alive")

    # Every fault ran.
    broken = [f"{f['kind']}@{f['start']:.0f}s: {f['detail']['error']}"
              for f in faults if "error" in f["detail"]]
    v.add("every fault was injected", not broken,
          f"{len(_faults(faults)) - len(broken)}/{len(_faults(faults))}", "all", broken or None)

    # Every injected violation was reported in time.
    reports, missed = [], 0
    for inj in injections:
        deadline = settle_deadline(inj["committed"], faults, p)
        end = inj.get("repaired", p.run_end)
        seen = next((s["t"] for s in good
                     if s["t"] >= inj["committed"] - 1.0 and s["t"] <= end + p.base
                     and s["invariant_ok"].get(inj["kind"]) == 0), None)
        ok = seen is not None and seen <= deadline
        missed += not ok
        reports.append({"id": inj["id"], "kind": inj["kind"], "during": inj["during"],
                        "committed": inj["committed"], "repaired": inj.get("repaired"),
                        "seen": seen,
                        "latency": None if seen is None else round(seen - inj["committed"], 2),
                        "bound": round(deadline - inj["committed"], 2), "ok": ok})
    findings["injections"] = reports
    v.add("every injected violation reported", injections and missed == 0,
          f"{len(injections) - missed}/{len(injections)} in time",
          "invariant_ok 0 within base (+fault window)",
          [f"#{r['id']} {r['kind']} ({r['during'] or 'quiet'}): "
           + ("never seen" if r["seen"] is None else f"after {r['latency']}s")
           + f", bound {r['bound']}s" for r in reports if not r["ok"]] or None)

    # No false alarm: invariant_ok 0 only while an injected violation of it
    # is present (or until its repair has had time to show).
    false_alarms = []
    for s in good:
        for name, value in s["invariant_ok"].items():
            if value != 0:
                continue
            explained = any(
                name in inj["allowed"] and inj["committed"] - 1.0 <= s["t"] <=
                settle_deadline(inj.get("repaired", p.run_end), faults, p)
                for inj in injections)
            if not explained:
                false_alarms.append(f"{s['t']:.0f}s {name}")
    findings["false_alarms"] = false_alarms
    v.add("no false alarm", not false_alarms, f"{len(false_alarms)} samples", 0,
          _first(false_alarms) or None)

    # Stale "ok" while the checks cannot read (outage past the deadline, or a
    # lock past the lock deadline): an invariant series must be absent.
    stale, stale_success = [], []
    for s in good:
        for f in faults:
            after = p.lock_deadline if f["kind"] == "access_exclusive" else p.deadline
            if not in_window(s["t"], f["blind"], after):
                continue
            oks = [n for n, val in s["invariant_ok"].items() if val == 1]
            if oks:
                stale.append(f"{s['t']:.0f}s {f['kind']}: {len(oks)} ok series")
            if f["outage"] is not None:
                succ = [c for c, val in s["check_success"].items() if val == 1]
                if succ:
                    stale_success.append(f"{s['t']:.0f}s {f['kind']}: {','.join(sorted(succ))}")
            break
    findings["stale_ok_during_outage"] = stale
    findings["stale_check_success_during_outage"] = stale_success
    v.add("no stale ok during an outage or lock", not stale, f"{len(stale)} samples", 0,
          _first(stale) or None)

    # up honest, every second.
    up_lies, down_lies, no_up = [], [], []
    for s in good:
        if not s["up"]:
            no_up.append(f"{s['t']:.0f}s")
            continue
        for f in faults:
            if s["up"] and in_window(s["t"], f["outage"], p.deadline) and \
                    any(val == 1 for val in s["up"].values()):
                up_lies.append(f"{s['t']:.0f}s {f['kind']} "
                               f"(outage {s['t'] - f['outage'][0]:.0f}s old)")
                break
        if healthy(s["t"], faults, p) and any(val == 0 for val in s["up"].values()):
            down_lies.append(f"{s['t']:.0f}s {','.join(k or 'up' for k, val in s['up'].items() if val == 0)}")
    findings["up_1_while_unreachable"] = up_lies
    findings["up_0_while_healthy"] = down_lies
    v.add("up 0 while unreachable past the deadline", not up_lies and not no_up,
          f"{len(up_lies)} samples with up 1" + (f", {len(no_up)} without up" if no_up else ""),
          f"0 after {p.deadline:.0f}s", _first(up_lies + no_up) or None)
    v.add("up 1 while healthy", not down_lies, f"{len(down_lies)} samples with up 0",
          f"0 beyond {p.grace:.0f}s after a fault", _first(down_lies) or None)

    # Killing idle sessions (what idle_session_timeout does) must not fail a
    # poll: the next one reconnects and retries at once.
    failed_polls = []
    for f in faults:
        if f["kind"] != "kill_backends" or not f["detail"].get("all_idle"):
            continue
        for s in good:
            if f["start"] < s["t"] <= f["start"] + p.grace:
                down = [k or "up" for k, val in s["up"].items() if val == 0]
                down += [c for c, val in s["check_success"].items() if val == 0]
                if down:
                    failed_polls.append(f"{s['t']:.0f}s ({s['t'] - f['start']:.0f}s after the "
                                        f"kill): {','.join(down)} 0")
    findings["failed_polls_after_idle_kill"] = failed_polls
    kills = sum(1 for f in faults if f["kind"] == "kill_backends")
    v.add("no failed poll after idle sessions are killed", not failed_polls,
          f"{len(failed_polls)} samples after {kills} kill(s)", "0 (reconnect and retry at once)",
          _first(failed_polls) or None)

    # Scrapes answered within the timeout, hostile HTTP or not.
    # (A scrape cut short by the final SIGTERM is not a failure.)
    failed = [s for s in scrapes if "error" in s and s["t"] + s["latency"] < p.run_end]
    by_kind = {}
    for s in failed:
        kind = next((f["kind"] for f in _faults(faults) if f["start"] <= s["t"] <= f["end"] + 1),
                    "no fault")
        by_kind[kind] = by_kind.get(kind, 0) + 1
    latencies = sorted(s["latency"] for s in scrapes if "latency" in s and "error" not in s)
    p99 = latencies[int(0.99 * (len(latencies) - 1))] if latencies else None
    findings["scrape_failures"] = by_kind
    v.add("every scrape answered", not failed,
          f"{len(failed)}/{len(scrapes)} failed" + (f", p99 {p99 * 1000:.0f} ms" if p99 else ""),
          "0 failed (2 s timeout)",
          [f"{k}: {n}" for k, n in sorted(by_kind.items())] or None)

    # Threads, fds and RSS flat: slopes over the samples after warm-up taken
    # outside the faults (and SETTLE s after each), so that a fault's own
    # sockets and threads do not count, only what it leaves behind.
    # RSS is judged without the thread stacks (bounded by their mapped size:
    # they grow as deeper calls touch them); their slope is reported.
    slopes = {}
    for key, label in (("threads", "threads"), ("fds", "fds"),
                       ("rss", "RSS outside thread stacks"), ("rss_total", None),
                       ("rss_stacks", None)):
        def value(s):
            if key == "rss":
                return s.get("rss_heap", s.get("rss"))
            return s.get("rss") if key == "rss_total" else s.get(key)
        points = [(s["t"], value(s)) for s in scrapes
                  if value(s) is not None and p.warmup_end <= s["t"] <= p.run_end
                  and not any(f["start"] <= s["t"] <= f["end"] + SETTLE for f in _faults(faults))]
        slope = slope_per_minute(points)
        values = [y for _, y in points]
        every = [value(s) for s in scrapes if value(s) is not None and s["t"] <= p.run_end]
        slopes[key] = {"per_minute": slope, "points": len(points),
                       "min": min(values) if values else None,
                       "max": max(values) if values else None,
                       "first": values[0] if values else None,
                       "last": values[-1] if values else None,
                       "peak_during_faults": max(every) if every else None,
                       "by_fault": growth_by_fault(scrapes, faults, value)}
        if label is None:
            continue
        bound = p.slope_bounds[key]
        unit = " bytes" if key == "rss" else ""
        shown = "n/a" if slope is None else (f"{slope / 1024:+.1f} KiB/min" if key == "rss"
                                             else f"{slope:+.2f}/min")
        v.add(f"{label} flat", slope is not None and abs(slope) <= bound,
              shown + (f" ({values[0]}..{values[-1]}{unit})" if values and key != "rss" else
                       f" ({values[0] / 2**20:.1f}..{values[-1] / 2**20:.1f} MiB)"
                       if values else ""),
              f"|slope| <= {bound / 1024:.0f} KiB/min" if key == "rss" else
              f"|slope| <= {bound}/min")
    findings["slopes"] = slopes

    # No connection pile-up.
    counts = [(b["t"], b["total"]) for b in backends if "total" in b and b["t"] <= p.run_end]
    peak = max((n for _, n in counts), default=0)
    over = [f"{t:.0f}s: {n}" for t, n in counts if n > p.max_backends]
    findings["backends_peak"] = peak
    v.add("no connection pile-up", counts and not over, f"peak {peak}",
          f"<= {p.max_backends}", _first(over) or None)

    # SIGTERM at the end.
    ok = sigterm.get("exit_code") == 0 and sigterm.get("seconds", 1e9) <= p.sigterm_bound
    v.add("exit 0 on SIGTERM", ok,
          f"exit {sigterm.get('exit_code')} after {sigterm.get('seconds', float('nan')):.1f}s"
          + (" (SIGKILL)" if sigterm.get("killed") else "")
          + (", sent during a stall" if sigterm.get("during_stall") else ""),
          f"exit 0 within {p.sigterm_bound:g}s")
    return v, findings


def table(verdict):
    lines = []
    width = max(len(r["assertion"]) for r in verdict.rows)
    lines.append(f"{'assertion':<{width}}  result  observed  [bound]")
    for r in verdict.rows:
        lines.append(f"{r['assertion']:<{width}}  {'PASS' if r['ok'] else 'FAIL':<6}  "
                     f"{r['observed']}  [{r['bound']}]")
        for d in r["detail"] or []:
            lines.append(f"{'':<{width}}          - {d}")
    lines.append(f"verdict: {'PASS' if verdict.passed else 'FAIL'} "
                 f"({sum(not r['ok'] for r in verdict.rows)} of {len(verdict.rows)} failed)")
    return "\n".join(lines)
