#!/usr/bin/env python3
"""Every metric the daemon exports is in docs/metrics.md.

The names are every `seatwatch_...` token of the daemon's C++ sources (what
`grep -rhoE 'seatwatch_[a-z0-9_]+' daemon` finds), a histogram's
`_bucket`, `_count` and `_sum` series folded into its family. CMake files are
not read: they name build targets, not metrics. The few tokens that are not
metrics are listed below, each with the reason. Usage:
docs_metrics_reference_test.py [SOURCE_DIR].
"""

import pathlib
import re
import sys

TOKEN = re.compile(r"seatwatch_[a-z0-9_]+")
SERIES_SUFFIX = re.compile(r"_(bucket|count|sum)$")

NOT_METRICS = {
    # Names of the transactions seatwatch opens (libpqxx transaction names),
    # shown in the server's log, not exported.
    "seatwatch_check": "the transaction of one check",
    "seatwatch_cleanup": "the transaction of one cleanup batch",
    "seatwatch_cleanup_dry_run": "the transaction of a cleanup dry run",
    "seatwatch_cleanup_recovery": "the cleanup's question whether it reads a standby",
    "seatwatch_pooler_probe": "a new session's look at whether it goes through a pooler",
    "seatwatch_server_facts": "a lane's read of its server's facts",
    "seatwatch_session": "the statements a new session runs after connecting",
    # Named prepared statements of the change feed's plain session.
    "seatwatch_slot_position": "the feed's position statement, prepared on its session",
    "seatwatch_coverage_publication": "the feed's coverage read, prepared on its session",
    "seatwatch_coverage_relations": "the feed's coverage read, prepared on its session",
    # Savepoints and SQL aliases wrapped around the queries of a config.
    "seatwatch_detail": "the savepoint and alias of a detail query",
    "seatwatch_hot_row": "the savepoint of a hot-row lookup",
    "seatwatch_rows": "the alias of a check's query under its row limit",
    "seatwatch_scoped_proof": "the transaction and savepoints of the scoped_sql proof",
    "seatwatch_verify": "the alias --check-config wraps each query in",
    "seatwatch_declared_proof": "the savepoint of each statement of the declared proof",
    # What the script of --print-setup makes and names.
    "seatwatch_keyed": "the temporary table of the setup script",
    "seatwatch_leaf": "a temporary view of the setup script",
    "seatwatch_usable": "a temporary view of the setup script",
    "seatwatch_wanted_index": "a temporary view of the setup script",
    "seatwatch_changes": "the change feed's role the setup script proposes",
    "seatwatch_invariant": "a result column of a declared check's SQL",
    "seatwatch_violations": "a result column of a declared check's SQL",
    "seatwatch_next_expiry": "a result column of a declared check's SQL",
    "seatwatch_count": "a detail column of a declared invariant",
    "seatwatch_limit": "a detail column of a declared invariant",
    "seatwatch_difference": "a detail column of a declared invariant",
}


def exported_names(daemon):
    names = set()
    for source in daemon.rglob("*"):
        if source.suffix not in (".cc", ".h") or not source.is_file():
            continue
        for token in TOKEN.findall(source.read_text(encoding="utf-8")):
            if token.endswith("_"):
                continue  # a family prefix in a comment, e.g. seatwatch_lock_*
            names.add(SERIES_SUFFIX.sub("", token))
    return names - NOT_METRICS.keys()


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                        pathlib.Path(__file__).resolve().parents[2]).resolve()
    reference = (root / "docs" / "metrics.md").read_text(encoding="utf-8")
    names = exported_names(root / "daemon")
    missing = sorted(n for n in names
                     if not re.search(rf"(?<![a-z0-9_]){n}(?![a-z0-9_])", reference))
    for name in missing:
        print(f"docs/metrics.md does not document {name}", file=sys.stderr)
    if missing:
        return 1
    print(f"all {len(names)} metric names of daemon/ are in docs/metrics.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
