#!/usr/bin/env python3
"""Drives the workshop sign-up site as its users would, through Django's
test Client (the whole request path: URL routing, the view, the ORM), and
prints what it did as JSON on stdout. The database comes from the settings'
environment (EVENTS_DB_DSN, see workshops_site/settings.py).

  rush.py create TITLE=CAPACITY ...
      creates the workshops; prints [{"id", "title", "capacity"}, ...]
  rush.py rush [--threads N] [--until-overbooked] [--rounds R] ID ...
      a rush of N fans (default 20), each a thread with its own Client and
      so its own database connection, on each workshop in turn: the fans
      wait at a barrier and sign up at the same moment. With
      --until-overbooked it rushes a workshop again until it holds more
      registrations than its capacity (at most R rounds, default 5); a round
      that left it exactly full gets its registrations refunded (deleted)
      first, since no sign-up can get past a full count. Prints, from plain
      SQL, every workshop with its capacity and registrations, the
      overbooked ones, and for each rushed workshop that became overbooked
      the wall-clock time (unix seconds) at which the sign-up that overbooked
      it returned, its registration committed.

Exit 1 when a workshop asked to be overbooked was not.
"""
import argparse
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workshops_site.settings")

import django  # noqa: E402

django.setup()

from django.db import connection, connections  # noqa: E402
from django.test import Client  # noqa: E402

from events.models import Registration, Workshop  # noqa: E402

# Every workshop with its capacity and registrations, counted by PostgreSQL.
COUNTS_SQL = """
SELECT w.id, w.title, w.capacity, count(r.id) AS registrations
  FROM events_workshop w
  LEFT JOIN events_registration r ON r.workshop_id = w.id
 GROUP BY w.id, w.title, w.capacity
 ORDER BY w.id
"""


def counts():
    with connection.cursor() as cur:
        cur.execute(COUNTS_SQL)
        return [{"id": i, "title": t, "capacity": c, "registrations": n}
                for i, t, c, n in cur.fetchall()]


def count_of(workshop_id):
    return next(w for w in counts() if w["id"] == workshop_id)


def create(specs):
    made = []
    for spec in specs:
        title, _, capacity = spec.rpartition("=")
        workshop = Workshop.objects.create(title=title, capacity=int(capacity))
        made.append({"id": workshop.id, "title": workshop.title, "capacity": workshop.capacity})
    return made


def one_round(workshop_ids, threads, round_number):
    """Each of `threads` fans signs up for each workshop, all at once (a
    barrier before each workshop). Returns {workshop_id: [unix times at
    which a sign-up returned 201]} and the distinct server backends used."""
    barrier = threading.Barrier(threads)
    lock = threading.Lock()
    registered = {w: [] for w in workshop_ids}
    backends = set()
    errors = []

    def fan(n):
        client = Client()
        try:
            with connection.cursor() as cur:
                cur.execute("SELECT pg_backend_pid()")
                pid = cur.fetchone()[0]
            for workshop_id in workshop_ids:
                barrier.wait(timeout=60)
                email = "fan%02d.r%d.w%d@example.com" % (n, round_number, workshop_id)
                response = client.post("/workshops/%d/sign-up" % workshop_id, {"email": email})
                done = time.time()
                if response.status_code not in (201, 409):
                    raise RuntimeError("sign-up answered %d: %r" % (response.status_code,
                                                                     response.content))
                with lock:
                    backends.add(pid)
                    if response.status_code == 201:
                        registered[workshop_id].append(done)
        except Exception as e:  # reported by the main thread
            with lock:
                errors.append("fan %d: %s" % (n, e))
            barrier.abort()
        finally:
            connection.close()  # this thread's own connection

    workers = [threading.Thread(target=fan, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if errors:
        raise RuntimeError("; ".join(errors))
    return registered, backends


def rush(workshop_ids, threads, until_overbooked, rounds):
    pending = list(workshop_ids)
    overbooked_at = {}
    rounds_run = {w: 0 for w in workshop_ids}
    backends = set()
    for round_number in range(1, (rounds if until_overbooked else 1) + 1):
        if not pending:
            break
        before = {w: count_of(w)["registrations"] for w in pending}
        registered, used = one_round(pending, threads, round_number)
        backends |= used
        for workshop_id in list(pending):
            rounds_run[workshop_id] += 1
            now = count_of(workshop_id)
            if now["registrations"] > now["capacity"]:
                # The sign-up that took the count past the capacity.
                needed = now["capacity"] + 1 - before[workshop_id]
                times = sorted(registered[workshop_id])
                overbooked_at[workshop_id] = times[max(needed, 1) - 1]
                pending.remove(workshop_id)
            elif until_overbooked and now["registrations"] == now["capacity"]:
                Registration.objects.filter(workshop_id=workshop_id).delete()  # refunds
        if not until_overbooked:
            pending = []
    everything = counts()
    return {
        "workshops": everything,
        "overbooked": {str(w["id"]): w["registrations"] for w in everything
                       if w["registrations"] > w["capacity"]},
        "overbooked_at": {str(w): t for w, t in overbooked_at.items()},
        "rounds": {str(w): n for w, n in rounds_run.items()},
        "connections": len(backends),
        "not_overbooked": pending if until_overbooked else [],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    create_parser = commands.add_parser("create")
    create_parser.add_argument("specs", nargs="+", metavar="TITLE=CAPACITY")
    rush_parser = commands.add_parser("rush")
    rush_parser.add_argument("--threads", type=int, default=20)
    rush_parser.add_argument("--until-overbooked", action="store_true")
    rush_parser.add_argument("--rounds", type=int, default=5)
    rush_parser.add_argument("ids", nargs="+", type=int, metavar="ID")
    args = parser.parse_args()
    try:
        if args.command == "create":
            result = create(args.specs)
        else:
            result = rush(args.ids, args.threads, args.until_overbooked, args.rounds)
    finally:
        connections.close_all()
    json.dump(result, sys.stdout, indent=1)
    sys.stdout.write("\n")
    if args.command == "rush" and result["not_overbooked"]:
        sys.stderr.write("rush.py: not overbooked after %d rounds: %s\n"
                         % (args.rounds, result["not_overbooked"]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
