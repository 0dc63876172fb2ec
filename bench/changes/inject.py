"""Injected violations: each of the six booking invariants, committed at a
random moment on the injection seats 'X*' of a random injection event (hot,
quiet on-sale or past), seen, then repaired.

Each kind: the invariant that must go to 0 (with exactly 1 violation in that
event), the others the same rows also break, the transaction that breaks it
and the one that repairs it."""

import random
import time

FAN_LIMIT = 4  # params = [4] of the pack

KINDS = {
    "sold_seat_without_ticket": {
        "also": [], "seats": 1,
        "break": ["UPDATE seats SET status = 'sold', holder = '{fan}' "
                  "WHERE event_id = {event} AND seat = '{s0}'"],
        "repair": ["UPDATE seats SET status = 'free', holder = NULL "
                   "WHERE event_id = {event} AND seat = '{s0}'"],
    },
    "ticket_without_sold_seat": {
        "also": ["ticket_without_confirmed_payment"], "seats": 1,
        "break": ["INSERT INTO tickets (event_id, seat, fan) VALUES ({event}, '{s0}', '{fan}')"],
        "repair": ["DELETE FROM tickets WHERE event_id = {event} AND seat = '{s0}'"],
    },
    "confirmed_payment_without_ticket": {
        "also": [], "seats": 1,
        "break": ["INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status) "
                  "VALUES ('{fan}', {event}, '{s0}', '{fan}', 5000, 'confirmed')"],
        "repair": ["DELETE FROM payments WHERE idempotency_key = '{fan}'"],
    },
    "ticket_without_confirmed_payment": {
        # A sale with its ticket but no confirmed payment.
        "also": [], "seats": 1,
        "break": ["UPDATE seats SET status = 'sold', holder = '{fan}' "
                  "WHERE event_id = {event} AND seat = '{s0}'",
                  "INSERT INTO tickets (event_id, seat, fan) VALUES ({event}, '{s0}', '{fan}')"],
        "repair": ["DELETE FROM tickets WHERE event_id = {event} AND seat = '{s0}'",
                   "UPDATE seats SET status = 'free', holder = NULL "
                   "WHERE event_id = {event} AND seat = '{s0}'"],
    },
    "double_confirmed_payment": {
        # A complete sale charged twice (two idempotency keys).
        "also": [], "seats": 1,
        "break": ["UPDATE seats SET status = 'sold', holder = '{fan}' "
                  "WHERE event_id = {event} AND seat = '{s0}'",
                  "INSERT INTO tickets (event_id, seat, fan) VALUES ({event}, '{s0}', '{fan}')",
                  "INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status) "
                  "VALUES ('{fan}-a', {event}, '{s0}', '{fan}', 5000, 'confirmed'), "
                  "('{fan}-b', {event}, '{s0}', '{fan}', 5000, 'confirmed')"],
        "repair": ["DELETE FROM payments WHERE idempotency_key IN ('{fan}-a', '{fan}-b')",
                   "DELETE FROM tickets WHERE event_id = {event} AND seat = '{s0}'",
                   "UPDATE seats SET status = 'free', holder = NULL "
                   "WHERE event_id = {event} AND seat = '{s0}'"],
    },
    "fan_over_limit": {
        "also": [], "seats": FAN_LIMIT + 1,
        "break": ["UPDATE seats SET status = 'held', holder = '{fan}', "
                  "hold_expires_at = now() + interval '1 hour' "
                  "WHERE event_id = {event} AND seat = ANY (ARRAY[{seat_list}])"],
        "repair": ["UPDATE seats SET status = 'free', holder = NULL, hold_expires_at = NULL "
                   "WHERE event_id = {event} AND holder = '{fan}'"],
    },
}
ORDER = list(KINDS)


def transaction(statements, values):
    return "BEGIN; " + "; ".join(s.format(**values) for s in statements) + "; COMMIT"


class Injector:
    """Commits on its own autocommit connection; one transaction per
    injection and one per repair (a single round trip each).

    Its commits are synchronous, as a booking system's sales and payments
    are: the clock starts when the commit is acknowledged and in the WAL on
    disk, which is also when a walsender may send it. The cluster's
    `synchronous_commit = off` (the load's own commits) would otherwise add
    up to three `wal_writer_delay`s (0.6 s) before any change feed can see
    the violation, a wait of the server's, not of the monitor."""

    def __init__(self, conn, events, inject_seats, seed):
        self.conn, self.events, self.inject_seats = conn, list(events), inject_seats
        with self.conn.cursor() as cur:
            cur.execute("SET synchronous_commit = on")
        self.rng = random.Random(seed)
        self.count = 0
        self.cursor = {}

    def inject(self, kind):
        spec = KINDS[kind]
        event = self.rng.choice(self.events)
        first = self.cursor.get(event, 0)
        if first + spec["seats"] > self.inject_seats:
            first = 0
        self.cursor[event] = first + spec["seats"]
        self.count += 1
        seats = [f"X{first + 1 + i}" for i in range(spec["seats"])]
        values = {"fan": f"inj-{int(time.time())}-{self.count}", "event": event, "s0": seats[0],
                  "seat_list": ", ".join(f"'{s}'" for s in seats)}
        record = {"id": self.count, "kind": kind, "event": event,
                  "allowed": [kind] + spec["also"], "values": values}
        with self.conn.cursor() as cur:
            cur.execute(transaction(spec["break"], values))
        record["committed"] = time.monotonic()
        return record

    def repair(self, record):
        with self.conn.cursor() as cur:
            cur.execute(transaction(KINDS[record["kind"]]["repair"], record["values"]))
        record["repaired"] = time.monotonic()
