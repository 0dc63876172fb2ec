#!/usr/bin/env python3
"""Generates dashboards/seatwatch-overview.json, the Grafana (10+) overview of seatwatch.

The JSON is committed; edit this file, not the JSON, and regenerate:

    python3 dashboards/generate.py            # rewrite the JSON next to this script
    python3 dashboards/generate.py --check    # exit 1 if the committed JSON is out of date
    python3 dashboards/generate.py --stdout   # print it

Output is deterministic (sorted keys, indent 2, trailing newline, ASCII only), so the same
generator always produces the same bytes. Standard library only.

Conventions, checked by scripts/check-dashboards:
  * every panel has a title, a description, a unit (fieldConfig.defaults.unit) and targets;
  * every metric selector carries {job=~"$job", instance=~"$instance"};
  * every range uses $__rate_interval;
  * a panel whose query may legitimately return nothing on a healthy system (violations,
    errors, blockers) sets fieldConfig.defaults.noValue to say what "no data" means there.
"""

import argparse
import json
import os
import sys

UID = "seatwatch-overview"
TITLE = "seatwatch overview"
OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seatwatch-overview.json")
RUNBOOK = "https://github.com/seatwatch/seatwatch/blob/main/docs/runbook.md"

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
SEL = 'job=~"$job", instance=~"$instance"'
RATE = "$__rate_interval"


def sel(extra=""):
    """The label matchers every query carries, plus optional extra matchers."""
    return "{" + SEL + (", " + extra if extra else "") + "}"


def inventory(*kinds):
    """seatwatch_event_inventory restricted to the given kinds."""
    return "seatwatch_event_inventory" + sel('kind=~"%s"' % "|".join(kinds))


# ------------------------------------------------------------------------------------------
# Building blocks
# ------------------------------------------------------------------------------------------

def target(expr, legend="__auto", ref="A", instant=False, fmt="time_series"):
    return {
        "datasource": DATASOURCE,
        "editorMode": "code",
        "expr": expr,
        "format": fmt,
        "legendFormat": legend,
        "range": not instant,
        "instant": instant,
        "refId": ref,
    }


def targets(*specs):
    """targets((expr, legend), (expr, legend), ...): range queries with refIds A, B, C..."""
    return [target(expr, legend, ref=chr(ord("A") + i)) for i, (expr, legend) in enumerate(specs)]


def thresholds(*steps):
    """thresholds((None, "green"), (30, "orange"), ...): absolute threshold steps."""
    return {
        "mode": "absolute",
        "steps": [{"color": color, "value": value} for value, color in steps],
    }


GREEN_ONLY = thresholds((None, "green"))

STATUS_MAPPING = [{
    "type": "value",
    "options": {
        "0": {"color": "red", "index": 1, "text": "VIOLATED"},
        "1": {"color": "green", "index": 0, "text": "OK"},
    },
}]

SUCCESS_MAPPING = [{
    "type": "value",
    "options": {
        "0": {"color": "red", "index": 1, "text": "failing"},
        "1": {"color": "green", "index": 0, "text": "ok"},
    },
}]

UP_MAPPING = [{
    "type": "value",
    "options": {
        "0": {"color": "red", "index": 1, "text": "unreachable"},
        "1": {"color": "green", "index": 0, "text": "reachable"},
    },
}]

FEED_MAPPING = [{
    "type": "value",
    "options": {
        "0": {"color": "orange", "index": 1, "text": "down: full passes"},
        "1": {"color": "green", "index": 0, "text": "up"},
    },
}]

MODE_MAPPING = [{
    "type": "value",
    "options": {
        "0": {"color": "orange", "index": 1, "text": "full"},
        "1": {"color": "green", "index": 0, "text": "incremental"},
    },
}]

# What an empty feed panel means: the seatwatch_changes_* series and the per-check
# incremental series exist only where [changes] is enabled.
NO_FEED = "Incremental mode not configured"

RECOVERY_MAPPING = [{
    "type": "value",
    "options": {
        "0": {"color": "green", "index": 1, "text": "primary"},
        "1": {"color": "blue", "index": 0, "text": "standby"},
    },
}]

YES_NO_MAPPING = [{
    "type": "value",
    "options": {
        "0": {"color": "text", "index": 1, "text": "no"},
        "1": {"color": "blue", "index": 0, "text": "yes"},
    },
}]


def timeseries_custom(stack=False, threshold_style="off"):
    return {
        "axisBorderShow": False,
        "axisCenteredZero": False,
        "axisColorMode": "text",
        "axisLabel": "",
        "axisPlacement": "auto",
        "barAlignment": 0,
        "drawStyle": "line",
        "fillOpacity": 10,
        "gradientMode": "none",
        "hideFrom": {"legend": False, "tooltip": False, "viz": False},
        "insertNulls": False,
        "lineInterpolation": "linear",
        "lineWidth": 1,
        "pointSize": 4,
        "scaleDistribution": {"type": "linear"},
        "showPoints": "never",
        "spanNulls": False,
        "stacking": {"group": "A", "mode": "normal" if stack else "none"},
        "thresholdsStyle": {"mode": threshold_style},
    }


class Layout:
    """Places panels left to right in rows of 24 grid units, and numbers them."""

    def __init__(self):
        self.panels = []
        self.x = 0
        self.y = 0
        self.row_height = 0
        self.next_id = 1

    def _id(self):
        i = self.next_id
        self.next_id += 1
        return i

    def row(self, title):
        self._newline()
        self.panels.append({
            "collapsed": False,
            "gridPos": {"h": 1, "w": 24, "x": 0, "y": self.y},
            "id": self._id(),
            "panels": [],
            "title": title,
            "type": "row",
        })
        self.y += 1

    def _newline(self):
        if self.x:
            self.y += self.row_height
        self.x = 0
        self.row_height = 0

    def add(self, panel, w, h):
        if self.x + w > 24:
            self._newline()
        panel["gridPos"] = {"h": h, "w": w, "x": self.x, "y": self.y}
        panel["id"] = self._id()
        panel["datasource"] = DATASOURCE
        self.panels.append(panel)
        self.x += w
        self.row_height = max(self.row_height, h)


def field_config(unit, *, mappings=None, thr=None, custom=None, no_value=None, overrides=None,
                 minimum=None, color=None):
    defaults = {
        "color": color or {"mode": "palette-classic"},
        "mappings": mappings or [],
        "thresholds": thr or GREEN_ONLY,
        "unit": unit,
    }
    if custom is not None:
        defaults["custom"] = custom
    if no_value is not None:
        defaults["noValue"] = no_value
    if minimum is not None:
        defaults["min"] = minimum
    return {"defaults": defaults, "overrides": overrides or []}


def timeseries(title, description, unit, tgts, *, stack=False, no_value=None, thr=None,
               threshold_style="off", overrides=None):
    return {
        "description": description,
        "fieldConfig": field_config(
            unit,
            thr=thr,
            custom=timeseries_custom(stack=stack, threshold_style=threshold_style),
            no_value=no_value,
            minimum=0,
            overrides=overrides,
        ),
        "options": {
            "legend": {
                "calcs": ["lastNotNull", "max"],
                "displayMode": "table",
                "placement": "bottom",
                "showLegend": True,
            },
            "tooltip": {"mode": "multi", "sort": "desc"},
        },
        "targets": tgts,
        "title": title,
        "type": "timeseries",
    }


def stat(title, description, unit, tgts, *, mappings=None, thr=None, color_mode="value",
         graph=True):
    return {
        "description": description,
        "fieldConfig": field_config(
            unit, mappings=mappings, thr=thr, color={"mode": "thresholds"},
        ),
        "options": {
            "colorMode": color_mode,
            "graphMode": "area" if graph else "none",
            "justifyMode": "auto",
            "orientation": "auto",
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
            "showPercentChange": False,
            "textMode": "auto",
            "wideLayout": True,
        },
        "targets": tgts,
        "title": title,
        "type": "stat",
    }


def state_timeline(title, description, tgts, mappings, no_value=None):
    return {
        "description": description,
        "fieldConfig": field_config(
            "none", mappings=mappings, color={"mode": "thresholds"}, no_value=no_value,
            custom={"fillOpacity": 80, "hideFrom": {"legend": False, "tooltip": False, "viz": False},
                    "lineWidth": 0, "spanNulls": False},
        ),
        "options": {
            "alignValue": "left",
            "legend": {"displayMode": "list", "placement": "bottom", "showLegend": False},
            "mergeValues": True,
            "rowHeight": 0.9,
            "showValue": "auto",
            "tooltip": {"mode": "single", "sort": "none"},
        },
        "targets": tgts,
        "title": title,
        "type": "state-timeline",
    }


def override(name, *props):
    return {
        "matcher": {"id": "byName", "options": name},
        "properties": [{"id": pid, "value": value} for pid, value in props],
    }


def table(title, description, unit, tgts, transformations, *, overrides=None, sort_by=None):
    options = {
        "cellHeight": "sm",
        "footer": {"countRows": False, "fields": "", "reducer": ["sum"], "show": False},
        "showHeader": True,
    }
    if sort_by:
        options["sortBy"] = [{"desc": False, "displayName": sort_by}]
    return {
        "description": description,
        "fieldConfig": field_config(
            unit, overrides=overrides, color={"mode": "thresholds"},
            custom={"align": "auto", "cellOptions": {"type": "auto"}, "filterable": True,
                    "inspect": False},
        ),
        "options": options,
        "targets": tgts,
        "title": title,
        "transformations": transformations,
        "type": "table",
    }


def heatmap(title, description, expr):
    return {
        "description": description,
        "fieldConfig": field_config(
            "s",
            custom={"hideFrom": {"legend": False, "tooltip": False, "viz": False},
                    "scaleDistribution": {"type": "linear"}},
        ),
        "options": {
            "calculate": False,
            "cellGap": 1,
            "cellValues": {"unit": "ops"},
            "color": {
                "exponent": 0.5,
                "fill": "dark-orange",
                "mode": "scheme",
                "reverse": False,
                "scale": "exponential",
                "scheme": "Oranges",
                "steps": 64,
            },
            "exemplars": {"color": "rgba(255,0,255,0.7)"},
            "filterValues": {"le": 1e-9},
            "legend": {"show": True},
            "rowsFrame": {"layout": "auto"},
            "tooltip": {"mode": "single", "showColorScale": False, "yHistogram": True},
            "yAxis": {"axisPlacement": "left", "reverse": False, "unit": "s"},
        },
        "targets": [target(expr, "{{le}}", fmt="heatmap")],
        "title": title,
        "type": "heatmap",
    }


# ------------------------------------------------------------------------------------------
# Rows
# ------------------------------------------------------------------------------------------

def invariants_row(lay):
    lay.row("Invariants")

    lay.add(table(
        "Invariant status",
        "One row per invariant and instance: OK when the last reconciliation found no "
        "offending rows, VIOLATED otherwise. 'Since' is when the current status began (as seen "
        "by that seatwatch process); 'Offending keys' counts the offending events (or the "
        "pack's key). An invariant missing from the table is not being computed: its check "
        "is failing (see 'The monitor itself'). Details: /api/invariants on the instance.",
        "none",
        [
            # Every frame gets the same label columns, so "merge" joins them row by row.
            target(f"max by (job, instance, invariant) (seatwatch_invariant_ok{sel()})", "",
                   ref="A", instant=True, fmt="table"),
            target("max by (job, instance, invariant) "
                   f"(seatwatch_invariant_status_since_timestamp_seconds{sel()}) * 1000", "",
                   ref="B", instant=True, fmt="table"),
            target(f"count by (job, instance, invariant) (seatwatch_invariant_violations{sel()})",
                   "", ref="C", instant=True, fmt="table"),
        ],
        [
            {"id": "merge", "options": {}},
            {"id": "organize", "options": {
                "excludeByName": {"Time": True, "__name__": True},
                "indexByName": {"invariant": 0, "Value #A": 1, "Value #B": 2, "Value #C": 3,
                                "instance": 4, "job": 5},
                "renameByName": {"Value #A": "Status", "Value #B": "Since",
                                 "Value #C": "Offending keys", "invariant": "Invariant"},
            }},
        ],
        overrides=[
            override("Status",
                     ("mappings", STATUS_MAPPING),
                     ("custom.cellOptions", {"type": "color-background", "mode": "basic"}),
                     ("unit", "none")),
            override("Since", ("unit", "dateTimeAsIso")),
            override("Offending keys", ("unit", "short"), ("noValue", "0")),
        ],
        sort_by="Status",
    ), 12, 9)

    lay.add(state_timeline(
        "Invariant status over time",
        "Status of every invariant over the selected range. Gaps mean the invariant was not "
        "computed (its check failed or seatwatch was down). With several instances per job "
        "the worst status is shown.",
        [target(f"min by (job, invariant) (seatwatch_invariant_ok{sel()})",
                "{{invariant}} ({{job}})")],
        STATUS_MAPPING,
    ), 12, 9)

    lay.add(timeseries(
        "Violations by invariant and key",
        "seatwatch_invariant_violations: one series per offending (invariant, event) -- or "
        "the pack's own key, such as workshop_id. Empty while every invariant holds. Find the "
        "offending rows with /api/invariants or `seatwatch --once`.",
        "short",
        [target(f"seatwatch_invariant_violations{sel()}",
                "{{invariant}} {{event_id}}{{workshop_id}} ({{instance}})")],
        no_value="No violations",
    ), 24, 8)

    lay.add(timeseries(
        "Violations detected and healed",
        "Keys that turned violated (detected: a run returned a key the last one did not) and "
        "keys that healed (a later run no longer returned it), per invariant and step: the "
        "increase of seatwatch_invariant_violations_detected_total and _healed_total. A key "
        "that breaks and heals between two runs is never seen. The counts start afresh when "
        "seatwatch restarts.",
        "short",
        [target("sum by (invariant) (increase("
                f"seatwatch_invariant_violations_detected_total{sel()}[$__rate_interval]))",
                "detected {{invariant}}", ref="A"),
         target("-sum by (invariant) (increase("
                f"seatwatch_invariant_violations_healed_total{sel()}[$__rate_interval]))",
                "healed {{invariant}}", ref="B")],
        no_value="None detected",
    ), 12, 8)

    lay.add(timeseries(
        "Age of the oldest open violation",
        "For each invariant, how long its oldest key violated now has been violated: now "
        "minus seatwatch_invariant_violated_since_timestamp_seconds (the first run that "
        "returned the key, as that seatwatch process saw it). Which keys, since when, which "
        "commits broke them (incremental mode: xid, commit time, application, what they "
        "changed) and the last ones that healed: the status page or /api/invariants on the "
        "instance.",
        "s",
        [target("max by (invariant) (time() - "
                f"seatwatch_invariant_violated_since_timestamp_seconds{sel()})",
                "{{invariant}}")],
        no_value="No open violations",
    ), 12, 8)


def inventory_row(lay):
    lay.row("Inventory")

    lay.add(table(
        "Sold seats, tickets and confirmed payments by event",
        "From seatwatch_event_inventory: per event, seats in state sold, tickets issued and "
        "payments confirmed. The three should be equal; a difference is what the "
        "reconciliation invariants alert on. Values from the last event_inventory run.",
        "short",
        [target(
            "max by (event_id, kind) (%s)" % inventory("seats_sold", "tickets", "payments_confirmed"),
            "", instant=True, fmt="table")],
        [
            {"id": "groupingToMatrix", "options": {
                "columnField": "kind", "rowField": "event_id", "valueField": "Value",
                "emptyValue": "null"}},
            {"id": "organize", "options": {
                "indexByName": {"event_id\\kind": 0, "seats_sold": 1, "tickets": 2,
                                "payments_confirmed": 3},
                "renameByName": {"event_id\\kind": "Event", "seats_sold": "Seats sold",
                                 "tickets": "Tickets", "payments_confirmed": "Payments confirmed"},
            }},
        ],
        sort_by="Event",
    ), 12, 9)

    lay.add(timeseries(
        "Seats by state",
        "Free, held (unexpired) and sold seats per event. Expired holds count as free for "
        "sale (expiry is derived on read) and are shown separately below.",
        "short",
        [target(inventory("seats_free", "seats_held", "seats_sold"),
                "event {{event_id}} {{kind}}")],
    ), 12, 9)

    lay.add(timeseries(
        "Held and expired holds by event",
        "Seats held with an unexpired hold, and seats still marked held whose hold has expired "
        "(free for sale, waiting for cleanup if it is enabled).",
        "short",
        [target(inventory("seats_held", "seats_held_expired"),
                "event {{event_id}} {{kind}}")],
    ), 12, 8)

    lay.add(timeseries(
        "Payments started and confirmed by event",
        "Payments started (checkout begun) and confirmed, per event. Started but never "
        "confirmed payments whose hold lapsed are counted under 'Lapsed payments' and need a "
        "refund.",
        "short",
        [target(inventory("payments_started", "payments_confirmed"),
                "event {{event_id}} {{kind}}")],
    ), 12, 8)


def locks_row(lay):
    lay.row("Lock waits")

    lay.add(stat(
        "Waiting sessions",
        "Sessions currently waiting for a lock, per instance (instances watching the same "
        "database report the same sessions).",
        "short",
        [target(f"seatwatch_lock_waiting_sessions{sel()}", "{{instance}}")],
        thr=thresholds((None, "green"), (1, "yellow"), (20, "red")),
    ), 6, 5)

    lay.add(stat(
        "Longest lock wait",
        "The longest current lock wait. SeatwatchLockWaitLong warns above 30 s and pages "
        "above 5 min (each sustained for 1m).",
        "s",
        [target(f"seatwatch_lock_wait_max_seconds{sel()}", "{{instance}}")],
        thr=thresholds((None, "green"), (30, "orange"), (300, "red")),
    ), 6, 5)

    lay.add(stat(
        "Blocking chain depth",
        "The deepest blocking chain (1 = a waiter behind a root that is not waiting itself).",
        "short",
        [target(f"seatwatch_lock_chain_max_depth{sel()}", "{{instance}}")],
        thr=thresholds((None, "green"), (2, "yellow"), (4, "red")),
    ), 6, 5)

    lay.add(stat(
        "Most sessions behind one root",
        "The largest number of sessions blocked, directly or through a chain, by one root "
        "blocker.",
        "short",
        [target(f"seatwatch_lock_max_blocked_by_one_root{sel()}", "{{instance}}")],
        thr=thresholds((None, "green"), (5, "yellow"), (20, "red")),
    ), 6, 5)

    lay.add(timeseries(
        "Waiting sessions and longest wait",
        "Sessions waiting for a lock (left axis) and the longest current wait (right axis).",
        "short",
        targets(
            (f"seatwatch_lock_waiting_sessions{sel()}", "waiting sessions {{instance}}"),
            (f"seatwatch_lock_wait_max_seconds{sel()}", "longest wait {{instance}}"),
        ),
        overrides=[{
            "matcher": {"id": "byFrameRefID", "options": "B"},
            "properties": [{"id": "unit", "value": "s"},
                           {"id": "custom.axisPlacement", "value": "right"}],
        }],
    ), 12, 8)

    lay.add(timeseries(
        "Root blockers by state",
        "Sessions that block others without waiting themselves, by pg_stat_activity.state. "
        "'idle in transaction' roots do no work and never release their locks by "
        "themselves (SeatwatchIdleInTransactionBlocker). The forest: /api/locks.",
        "short",
        [target(f"sum by (job, instance, state) (seatwatch_lock_blocking_roots{sel()})",
                "{{state}} {{instance}}")],
        no_value="No blockers",
        stack=True,
    ), 12, 8)

    lay.add(heatmap(
        "Lock wait durations",
        "Distribution of lock wait durations observed by the locks check "
        "(seatwatch_lock_wait_duration_seconds): waits per second in each duration bucket.",
        f"sum by (le) (rate(seatwatch_lock_wait_duration_seconds_bucket{sel()}[{RATE}]))",
    ), 12, 8)

    lay.add(timeseries(
        "Lock wait duration quantiles and wait rate",
        "p50 and p99 of lock wait durations, and new lock waits per second (right axis).",
        "s",
        targets(
            (f"histogram_quantile(0.5, sum by (job, instance, le) (rate(seatwatch_lock_wait_duration_seconds_bucket{sel()}[{RATE}])))",
             "p50 {{instance}}"),
            (f"histogram_quantile(0.99, sum by (job, instance, le) (rate(seatwatch_lock_wait_duration_seconds_bucket{sel()}[{RATE}])))",
             "p99 {{instance}}"),
            (f"rate(seatwatch_lock_waits_total{sel()}[{RATE}])", "waits/s {{instance}}"),
        ),
        overrides=[{
            "matcher": {"id": "byFrameRefID", "options": "C"},
            "properties": [{"id": "unit", "value": "ops"},
                           {"id": "custom.axisPlacement", "value": "right"}],
        }],
    ), 12, 8)

    lay.add(timeseries(
        "Hot-row waiters",
        "Sessions waiting on a row that other sessions also wait on (a hot seat). /api/locks "
        "names the row, e.g. seats(event_id=1, seat=A12).",
        "short",
        [target(f"seatwatch_lock_hot_row_waiters{sel()}", "{{instance}}")],
    ), 8, 8)

    lay.add(timeseries(
        "Waiting sessions by relation",
        "Sessions waiting for a lock, by the relation they wait on.",
        "short",
        [target(f"sum by (job, instance, relation) (seatwatch_lock_waiting_by_relation{sel()})",
                "{{relation}} {{instance}}")],
        no_value="No waits",
        stack=True,
    ), 8, 8)

    lay.add(timeseries(
        "Blocking chains",
        "Deepest blocking chain and most sessions behind one root.",
        "short",
        targets(
            (f"seatwatch_lock_chain_max_depth{sel()}", "max chain depth {{instance}}"),
            (f"seatwatch_lock_max_blocked_by_one_root{sel()}", "max blocked by one root {{instance}}"),
        ),
    ), 8, 8)

    lay.add(timeseries(
        "Deadlocks and rollbacks",
        "Deadlocks (SQLSTATE 40P01) and transaction rollbacks per second in the watched "
        "database. Rollbacks include serialization failures (40001) and every other "
        "rollback.",
        "ops",
        targets(
            (f"rate(seatwatch_deadlocks_total{sel()}[{RATE}])", "deadlocks {{instance}}"),
            (f"rate(seatwatch_xact_rollbacks_total{sel()}[{RATE}])", "rollbacks {{instance}}"),
        ),
    ), 8, 8)

    lay.add(timeseries(
        "Oldest transaction by state",
        "Age of the oldest open transaction in each session state. SeatwatchLongTransaction "
        "warns above 5 minutes (any state but idle).",
        "s",
        [target(f"seatwatch_transaction_oldest_seconds{sel()}", "{{state}} {{instance}}")],
        no_value="No open transactions",
        thr=thresholds((None, "green"), (300, "orange")),
        threshold_style="line+area",
    ), 8, 8)

    lay.add(timeseries(
        "Sessions by state",
        "Sessions of the watched database by pg_stat_activity.state.",
        "short",
        [target(f"sum by (job, instance, state) (seatwatch_sessions{sel()})",
                "{{state}} {{instance}}")],
        stack=True,
    ), 8, 8)


def holds_row(lay):
    lay.row("Holds and cleanup")

    lay.add(timeseries(
        "Holds",
        "Active (unexpired) holds and expired holds not yet freed. Expired holds are free "
        "for sale (expiry is derived on read); the backlog only matters when cleanup is "
        "enabled (SeatwatchExpiredHoldBacklog above 1000 for 15m).",
        "short",
        targets(
            (f"seatwatch_holds_active{sel()}", "active {{instance}}"),
            (f"seatwatch_holds_expired{sel()}", "expired backlog {{instance}}"),
        ),
    ), 8, 8)

    lay.add(timeseries(
        "Oldest expired hold",
        "How long ago the oldest not-yet-freed hold expired.",
        "s",
        [target(f"seatwatch_holds_expired_oldest_seconds{sel()}", "{{instance}}")],
    ), 8, 8)

    lay.add(timeseries(
        "Lapsed payments",
        "Payments started whose hold expired before they were confirmed: the buyer may have "
        "been charged without a seat and needs a refund.",
        "short",
        [target(f"seatwatch_payments_lapsed{sel()}", "{{instance}}")],
        thr=thresholds((None, "green"), (1, "orange")),
        threshold_style="line",
    ), 8, 8)

    lay.add(timeseries(
        "Holds freed by cleanup",
        "Expired holds freed per second by the cleanup leader.",
        "ops",
        [target(f"rate(seatwatch_cleanup_freed_total{sel()}[{RATE}])", "{{instance}}")],
    ), 8, 8)

    lay.add(timeseries(
        "Cleanup batch duration",
        "p50 and p99 duration of cleanup batches (FOR UPDATE SKIP LOCKED under the leader "
        "lock). Empty (NaN) while no batch runs.",
        "s",
        targets(
            (f"histogram_quantile(0.5, sum by (job, instance, le) (rate(seatwatch_cleanup_batch_duration_seconds_bucket{sel()}[{RATE}])))",
             "p50 {{instance}}"),
            (f"histogram_quantile(0.99, sum by (job, instance, le) (rate(seatwatch_cleanup_batch_duration_seconds_bucket{sel()}[{RATE}])))",
             "p99 {{instance}}"),
        ),
    ), 8, 8)

    lay.add(timeseries(
        "Cleanup batches by result",
        "Cleanup batches per second by result (ok, lock_timeout, error). Only the leader "
        "runs batches. SeatwatchCleanupErrors warns when more than 25% fail for 10m.",
        "ops",
        [target(f"sum by (job, instance, result) (rate(seatwatch_cleanup_batches_total{sel()}[{RATE}]))",
                "{{result}} {{instance}}")],
        no_value="No batches (cleanup disabled or not leader)",
        stack=True,
    ), 8, 8)

    lay.add(state_timeline(
        "Cleanup enabled and leader",
        "Whether cleanup is enabled on each instance, and which instance holds the leader "
        "lock. With cleanup enabled exactly one instance per database should be leader.",
        targets(
            (f"seatwatch_cleanup_enabled{sel()}", "enabled {{instance}}"),
            (f"seatwatch_cleanup_leader{sel()}", "leader {{instance}}"),
        ),
        YES_NO_MAPPING,
    ), 12, 6)

    lay.add(timeseries(
        "Time since last cleanup success",
        "Age of the last successful cleanup run on each leader, against its configured "
        "interval. Instances that never succeeded (non-leaders) are not shown. "
        "SeatwatchCleanupStalled warns past max(10 intervals, 15m) while a backlog exists.",
        "s",
        targets(
            (f"timestamp(seatwatch_cleanup_last_success_timestamp_seconds{sel()}) - (seatwatch_cleanup_last_success_timestamp_seconds{sel()} > 0)",
             "since last success {{instance}}"),
            (f"seatwatch_cleanup_interval_seconds{sel()}", "interval {{instance}}"),
        ),
        no_value="Never succeeded",
    ), 12, 6)


def changes_row(lay):
    lay.row("Incremental mode (change feed)")

    lay.add(state_timeline(
        "Change feed",
        "seatwatch_changes_up: 1 while the feed's temporary replication slot exists and its "
        "last drain succeeded. While it is down every incremental check runs full passes at "
        "its normal interval (SeatwatchChangeFeedDown after 10m). Only instances with "
        "[changes] enabled have the series.",
        [target(f"seatwatch_changes_up{sel()}", "{{instance}}")],
        FEED_MAPPING,
        no_value=NO_FEED,
    ), 12, 6)

    lay.add(state_timeline(
        "Check mode",
        "seatwatch_check_mode per incremental check: incremental (rechecks the keys that "
        "changed, every [changes] interval) or full (full passes at the check's own interval: "
        "feed down, or not yet seeded after a resync).",
        [target("max by (job, instance, check) (seatwatch_check_mode%s)" % sel('mode="incremental"'),
                "{{check}} {{instance}}")],
        MODE_MAPPING,
        no_value=NO_FEED,
    ), 12, 6)

    lay.add(timeseries(
        "Change feed lag",
        "seatwatch_changes_lag_bytes: pg_current_wal_lsn() minus the slot's confirmed "
        "position. At least this much WAL is retained on the primary for the slot. A healthy "
        "feed is seconds of WAL behind; SeatwatchChangeFeedLagging warns above 1 GiB for 15m.",
        "bytes",
        [target(f"seatwatch_changes_lag_bytes{sel()}", "{{instance}}")],
        no_value=NO_FEED,
        thr=thresholds((None, "green"), (1073741824, "orange")),
        threshold_style="line",
    ), 8, 8)

    lay.add(timeseries(
        "Drain duration",
        "seatwatch_changes_drain_duration_seconds: how long the last drain of the slot took "
        "(at most [changes] max_changes changes). A drain that costs more than a full pass "
        "drops the slot (resync drain_cost).",
        "s",
        [target(f"seatwatch_changes_drain_duration_seconds{sel()}", "{{instance}}")],
        no_value=NO_FEED,
    ), 8, 8)

    lay.add(timeseries(
        "Changes decoded per second",
        "Row changes read from the slot per second (seatwatch_changes_decoded_total), of every "
        "table in the publication: the write rate seatwatch follows.",
        "ops",
        [target(f"rate(seatwatch_changes_decoded_total{sel()}[{RATE}])", "{{instance}}")],
        no_value=NO_FEED,
    ), 8, 8)

    lay.add(timeseries(
        "Feed resyncs by reason",
        "seatwatch_changes_resyncs_total: new slots made, by reason (startup, slot_lost, "
        "error, drain_cost), and unmappable changes (the slot is kept); each is followed by a "
        "full pass of every incremental check. A steady rate of error or slot_lost: see the "
        "runbook, SeatwatchChangeFeedDown.",
        "short",
        [target(f"sum by (job, instance, reason) (increase(seatwatch_changes_resyncs_total{sel()}[{RATE}]))",
                "{{reason}} {{instance}}")],
        no_value=NO_FEED,
        stack=True,
    ), 8, 8)

    lay.add(timeseries(
        "Dirty keys rechecked",
        "seatwatch_dirty_keys: keys (events) the last run of each incremental check read "
        "again. The cost of a recheck follows this number, not the size of the tables.",
        "short",
        [target(f"seatwatch_dirty_keys{sel()}", "{{check}} {{instance}}")],
        no_value=NO_FEED,
    ), 8, 8)

    lay.add(timeseries(
        "Full passes by reason",
        "Full passes of each incremental check, by reason (startup, backstop, resync, "
        "unmappable, feed_down, drain_cost). Expected: one backstop per [changes] "
        "full_pass_interval; feed_down at the check's interval while the feed is down.",
        "short",
        [target(f"sum by (job, instance, check, reason) (increase(seatwatch_full_passes_total{sel()}[{RATE}]))",
                "{{check}} {{reason}} {{instance}}")],
        no_value=NO_FEED,
        stack=True,
    ), 8, 8)

    lay.add(timeseries(
        "Rechecks' share of the checks session",
        "rate(seatwatch_changes_recheck_seconds_total): the share of the checks lane's "
        "session the rechecks of changed keys keep busy, at most [changes] "
        "recheck_time_per_minute / 60 s (1.7% at the default 1s). At that ceiling a dear "
        "cycle holds the next one back: seatwatch_changes_recheck_interval_seconds above "
        "[changes] interval, and violations show that much later (docs/incremental.md, What "
        "the rechecks may cost); held back to [poll] interval for 15m: "
        "SeatwatchRechecksHeldBack.",
        "percentunit",
        [target(f"rate(seatwatch_changes_recheck_seconds_total{sel()}[{RATE}])", "{{instance}}")],
        no_value=NO_FEED,
    ), 8, 8)

    lay.add(timeseries(
        "Incremental mismatches",
        "seatwatch_incremental_mismatches_total: keys a backstop full pass found different "
        "from the state the rechecks built, with no change handed over by the feed to explain "
        "it, by check and invariant. Expected: none. Any is a seatwatch defect or a scoped_sql "
        "that misses rows (SeatwatchIncrementalMismatch; the log names each key and both "
        "values); the full pass corrected it.",
        "short",
        [target(f"sum by (job, instance, check, invariant) (increase(seatwatch_incremental_mismatches_total{sel()}[{RATE}]))",
                "{{check}} {{invariant}} {{instance}}")],
        no_value=NO_FEED,
        stack=True,
    ), 24, 6)


def standbys_row(lay):
    lay.row("Standbys and failover")

    lay.add(timeseries(
        "Replica lag per lane",
        "seatwatch_replica_lag_seconds: how late what each lane reads is. 0 on a primary and "
        "on a standby that has replayed all it received (an idle primary is no lag); while "
        "received WAL waits to be replayed, now() minus the last replayed commit's time. A "
        "standby cut off from its primary reads 0 too. SeatwatchReplicaLagging warns above "
        "60 s for 5m.",
        "s",
        [target(f"seatwatch_replica_lag_seconds{sel()}", "{{lane}} {{instance}}")],
        thr=thresholds((None, "green"), (60, "orange")),
        threshold_style="line",
    ), 8, 8)

    lay.add(state_timeline(
        "In recovery per lane",
        "seatwatch_database_in_recovery: whether each lane reads a standby "
        "(pg_is_in_recovery()). The checks lane may ([checks] dsn); the locks lane should "
        "not. 'cleanup': seatwatch_cleanup_in_recovery, a cleanup whose connection reaches a "
        "standby frees nothing and waits. Gaps: the lane could not reach the database.",
        targets(
            (f"seatwatch_database_in_recovery{sel()}", "{{lane}} {{instance}}"),
            (f"seatwatch_cleanup_in_recovery{sel()}", "cleanup {{instance}}"),
        ),
        RECOVERY_MAPPING,
    ), 8, 8)

    lay.add(timeseries(
        "Timeline per lane",
        "seatwatch_database_timeline: the timeline of the server each lane reads (0: "
        "unknown, the role may not read pg_control_checkpoint()). A promotion raises it by "
        "one. Lanes on primaries should agree once a failover is over (a lower one: a lane "
        "on the old primary, a split brain); a standby shows a new timeline only after its "
        "next restartpoint.",
        "none",
        [target(f"seatwatch_database_timeline{sel()}", "{{lane}} {{instance}}")],
    ), 8, 8)

    lay.add(timeseries(
        "Failovers",
        "seatwatch_database_failovers_total: times a lane found the database on another "
        "server (a higher timeline of the same system identifier, or another system "
        "identifier), counted once per move. Each one is also marked on every panel "
        "(annotation 'Database failover'). What to check after one: the runbook, 'After a "
        "failover'.",
        "short",
        [target(f"increase(seatwatch_database_failovers_total{sel()}[{RATE}])", "{{instance}}")],
    ), 12, 7)

    lay.add(timeseries(
        "Recovery conflicts by check",
        "Check runs cancelled by a recovery conflict on a standby (seatwatch_check_errors_total "
        "with reason recovery_conflict): replay waited max_standby_streaming_delay for the "
        "check's query, then cancelled it. Each is run once more at once; only a second "
        "conflict fails the check.",
        "short",
        [target("sum by (job, instance, check) (increase(seatwatch_check_errors_total%s[%s]))"
                % (sel('reason="recovery_conflict"'), RATE), "{{check}} {{instance}}")],
        stack=True,
    ), 12, 7)


def monitor_row(lay):
    lay.row("The monitor itself")

    lay.add(stat(
        "Database reachable",
        "seatwatch_up: whether the last poll of each instance reached the database.",
        "none",
        [target(f"seatwatch_up{sel()}", "{{instance}}")],
        mappings=UP_MAPPING,
        thr=thresholds((None, "red"), (1, "green")),
        color_mode="background",
        graph=False,
    ), 6, 5)

    lay.add(table(
        "Instances",
        "Running seatwatch instances: version (seatwatch_build_info) and process start time.",
        "none",
        [target(f"max by (job, instance, version) (seatwatch_build_info{sel()})"
                 f" * on (job, instance) group_left () process_start_time_seconds{sel()} * 1000",
                 "", instant=True, fmt="table")],
        [
            {"id": "organize", "options": {
                "excludeByName": {"Time": True},
                "indexByName": {"instance": 0, "job": 1, "version": 2, "Value": 3},
                "renameByName": {"Value": "Started"},
            }},
        ],
        overrides=[override("Started", ("unit", "dateTimeAsIso"))],
    ), 18, 5)

    lay.add(state_timeline(
        "Check success",
        "Result of the last run of each check (booking_reconciliation, event_inventory, "
        "locks, holds). A failing check leaves the metrics it computes stale or absent.",
        [target(f"seatwatch_check_success{sel()}", "{{check}} {{instance}}")],
        SUCCESS_MAPPING,
    ), 12, 7)

    lay.add(timeseries(
        "Check duration",
        "Duration of the last run of each check.",
        "s",
        [target(f"seatwatch_check_duration_seconds{sel()}", "{{check}} {{instance}}")],
    ), 12, 7)

    lay.add(timeseries(
        "Time since last check success",
        "Age of each check's last success at scrape time. SeatwatchCheckFailing fires when "
        "it stays above 3 intervals of that check (seatwatch_check_interval_seconds) for 5m. "
        "A check that never succeeded shows the age of the unix epoch.",
        "s",
        [target(f"timestamp(seatwatch_check_last_success_timestamp_seconds{sel()}) - seatwatch_check_last_success_timestamp_seconds{sel()}",
                "{{check}} {{instance}}")],
    ), 12, 7)

    lay.add(timeseries(
        "Check errors by reason",
        "Failed check runs per second by check and reason (timeout, lock_timeout, "
        "connection, sql).",
        "ops",
        [target(f"sum by (job, instance, check, reason) (rate(seatwatch_check_errors_total{sel()}[{RATE}]))",
                "{{check}} {{reason}} {{instance}}")],
        no_value="No errors",
        stack=True,
    ), 12, 7)

    lay.add(timeseries(
        "Time since last poll",
        "Age of the last poll at scrape time, against 3 configured poll intervals "
        "(SeatwatchStale fires above that for 1m).",
        "s",
        targets(
            (f"timestamp(seatwatch_last_poll_timestamp_seconds{sel()}) - seatwatch_last_poll_timestamp_seconds{sel()}",
             "since last poll {{instance}}"),
            (f"3 * seatwatch_poll_interval_seconds{sel()}", "stale threshold {{instance}}"),
        ),
    ), 8, 7)

    lay.add(timeseries(
        "Memory",
        "Resident memory of each seatwatch process.",
        "bytes",
        [target(f"process_resident_memory_bytes{sel()}", "{{instance}}")],
    ), 8, 7)

    lay.add(timeseries(
        "CPU and open files",
        "CPU used by each seatwatch process (share of one core) and its open file "
        "descriptors (right axis).",
        "percentunit",
        targets(
            (f"rate(process_cpu_seconds_total{sel()}[{RATE}])", "cpu {{instance}}"),
            (f"process_open_fds{sel()}", "open fds {{instance}}"),
        ),
        overrides=[{
            "matcher": {"id": "byFrameRefID", "options": "B"},
            "properties": [{"id": "unit", "value": "short"},
                           {"id": "custom.axisPlacement", "value": "right"}],
        }],
    ), 8, 7)


# ------------------------------------------------------------------------------------------
# Dashboard
# ------------------------------------------------------------------------------------------

# A mark on every panel where a lane found the database on another server. A fixed window
# rather than $__rate_interval, which Grafana does not compute for annotation queries as it does
# for panels: evaluated every `step`, a window of two steps sees every increase (a change
# between the last sample before a window and the first inside it is in the next window), and
# increase() ignores the counter's reset to 0 when seatwatch restarts.
FAILOVER_ANNOTATION = {
    "datasource": DATASOURCE,
    "enable": True,
    "expr": f"increase(seatwatch_database_failovers_total{sel()}[2m]) > 0",
    "hide": False,
    "iconColor": "red",
    "name": "Database failover",
    "step": "1m",
    "tagKeys": "job,instance",
    "textFormat": "seatwatch {{instance}} (job {{job}}): a lane found the database on another "
                  "server (a promoted standby, or another cluster). Runbook: After a failover.",
    "titleFormat": "Database failover",
    "useValueForTime": False,
}


def query_variable(name, label, query):
    return {
        "allValue": None,
        "current": {},
        "datasource": DATASOURCE,
        "definition": query,
        "hide": 0,
        "includeAll": True,
        "label": label,
        "multi": True,
        "name": name,
        "options": [],
        "query": {"qryType": 1, "query": query, "refId": "PrometheusVariableQueryEditor-VariableQuery"},
        "refresh": 2,
        "regex": "",
        "skipUrlSync": False,
        "sort": 1,
        "type": "query",
    }


def dashboard():
    lay = Layout()
    invariants_row(lay)
    inventory_row(lay)
    locks_row(lay)
    holds_row(lay)
    changes_row(lay)
    standbys_row(lay)
    monitor_row(lay)
    return {
        "annotations": {"list": [{
            "builtIn": 1,
            "datasource": {"type": "grafana", "uid": "-- Grafana --"},
            "enable": True,
            "hide": True,
            "iconColor": "rgba(0, 211, 255, 1)",
            "name": "Annotations & Alerts",
            "type": "dashboard",
        }, FAILOVER_ANNOTATION]},
        "description": "Booking invariants, inventory, lock waits, holds and cleanup of the "
                       "database watched by seatwatch, its change feed (incremental mode), "
                       "the standbys it reads and the failovers it followed, and the health "
                       "of seatwatch itself.",
        "editable": True,
        "fiscalYearStartMonth": 0,
        "graphTooltip": 1,
        "id": None,
        "links": [{
            "asDropdown": False,
            "icon": "doc",
            "includeVars": False,
            "keepTime": False,
            "tags": [],
            "targetBlank": True,
            "title": "Runbook",
            "tooltip": "What each seatwatch alert means and what to do",
            "type": "link",
            "url": RUNBOOK,
        }],
        "panels": lay.panels,
        "refresh": "30s",
        "schemaVersion": 39,
        "tags": ["seatwatch", "postgresql"],
        "templating": {"list": [
            {
                "current": {},
                "hide": 0,
                "includeAll": False,
                "label": "Data source",
                "multi": False,
                "name": "datasource",
                "options": [],
                "query": "prometheus",
                "refresh": 1,
                "regex": "",
                "skipUrlSync": False,
                "type": "datasource",
            },
            query_variable("job", "Job", "label_values(seatwatch_build_info, job)"),
            query_variable("instance", "Instance",
                           'label_values(seatwatch_build_info{job=~"$job"}, instance)'),
        ]},
        "time": {"from": "now-3h", "to": "now"},
        "timepicker": {},
        "timezone": "",
        "title": TITLE,
        "uid": UID,
        "version": 1,
        "weekStart": "",
    }


def render():
    return json.dumps(dashboard(), indent=2, sort_keys=True, ensure_ascii=True) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="exit 1 if %s differs from the generator's output" % OUTPUT)
    mode.add_argument("--stdout", action="store_true", help="print the JSON instead of writing it")
    args = parser.parse_args(argv)

    text = render()
    if args.stdout:
        sys.stdout.write(text)
        return 0
    if args.check:
        try:
            with open(OUTPUT, encoding="ascii") as f:
                current = f.read()
        except OSError as e:
            print(f"generate.py: cannot read {OUTPUT}: {e}", file=sys.stderr)
            return 1
        if current != text:
            print(f"generate.py: {OUTPUT} is out of date; run python3 dashboards/generate.py",
                  file=sys.stderr)
            return 1
        return 0
    with open(OUTPUT, "w", encoding="ascii", newline="\n") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
