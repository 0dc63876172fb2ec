#!/usr/bin/env python3
"""scripts/check-layers on small made-up trees: an upward and a sideways
include fail naming the file, the line and both rooms; includes down the
order, within a room and without a folder pass."""
import os
import pathlib
import subprocess
import sys
import tempfile

CHECKER = pathlib.Path(os.environ.get("SEATWATCH_SOURCE_DIR",
                                      pathlib.Path(__file__).resolve().parents[2]))
CHECKER = CHECKER / "scripts" / "check-layers"


def make_tree(root, files):
    daemon = root / "daemon"
    (daemon).mkdir()
    (daemon / "layers.txt").write_text("# lowest first\nutil\ndb\nlocks changes\n")
    for name, text in files.items():
        path = daemon / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return daemon


def check(files):
    with tempfile.TemporaryDirectory() as temp:
        daemon = make_tree(pathlib.Path(temp), files)
        stamp = pathlib.Path(temp) / "stamp"
        run = subprocess.run([sys.executable, str(CHECKER), str(daemon), "--stamp", str(stamp)],
                             capture_output=True, text=True)
        return run.returncode, run.stderr, stamp.exists()


def expect(condition, message):
    if not condition:
        print("FAIL:", message)
        sys.exit(1)


GOOD = {
    "util/log.h": "#pragma once\n",
    "db/session.h": '#pragma once\n#include "util/log.h"\n#include "db/other.h"\n',
    "locks/poll.cc": '#include <string>\n#include "db/session.h"\n',
    "main.cc": '#include "locks/poll.h"\n#include "version.h"\n',
}

code, errors, stamped = check(GOOD)
expect(code == 0 and stamped, f"a tree in order passes and is stamped: {code} {errors}")

code, errors, stamped = check(dict(GOOD, **{
    "util/log.cc": '#include "util/log.h"\n\n#include "db/session.h"\n'}))
expect(code == 1 and not stamped, f"an upward include fails: {code}")
expect("daemon/util/log.cc:3: util includes db: upward" in errors, errors)

code, errors, _ = check(dict(GOOD, **{"changes/feed.h": '#pragma once\n#include "locks/poll.h"\n'}))
expect(code == 1, "a sideways include fails")
expect("daemon/changes/feed.h:2: changes includes locks: sideways" in errors, errors)

code, errors, _ = check(dict(GOOD, **{"poll/loop.cc": '#include "db/session.h"\n'}))
expect(code == 1 and "room poll is not in the layers file" in errors, errors)

print("ok")
