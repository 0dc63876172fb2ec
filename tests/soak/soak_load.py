"""The soak's booking traffic and its injected violations.

LoadClient: a correct application doing the flow of scripts/load/claim_confirm.sql
(claim with one conditional UPDATE, a double-tapped payment, then confirm CAS,
cancel or walk away) plus refunds (seat, ticket and payment changed in one
transaction), paced to a rate, reconnecting after a restart. Nothing it does
can break an invariant, and it never touches the violation event.

Injector: commits one real violation (a sold seat without a ticket, a ticket
for a seat that is not sold, a confirmed payment without a ticket, a fan over
the limit) on fresh seats of VIOLATION_EVENT, records when the commit
returned, and repairs it later."""

import random
import threading
import time

import psycopg2

LOAD_EVENTS = range(1, 11)   # 10 events of 200 seats, A1..J20
SEATS_PER_EVENT = 200
VIOLATION_EVENT = 90         # seats V1.., touched only by the injector
VIOLATION_SEATS = 2000
FAN_LIMIT = 4                # params = [4] of the booking pack


def seat_name(pos):
    return chr(65 + (pos - 1) // 20) + str((pos - 1) % 20 + 1)


def seed_sql():
    return f"""
INSERT INTO seats (event_id, seat)
SELECT e, chr(65 + (p - 1) / 20) || ((p - 1) % 20 + 1)
FROM generate_series({LOAD_EVENTS.start}, {LOAD_EVENTS.stop - 1}) e,
     generate_series(1, {SEATS_PER_EVENT}) p;
INSERT INTO seats (event_id, seat)
SELECT {VIOLATION_EVENT}, 'V' || n FROM generate_series(1, {VIOLATION_SEATS}) n;
"""


from booking_flow import CANCEL, CLAIM, CONFIRM, PAYMENT  # noqa: E402,F401


class LoadClient(threading.Thread):
    """One application connection doing checkouts at `rate` per second."""

    def __init__(self, number, connect, rate, stop):
        super().__init__(name=f"soak-load-{number}", daemon=True)
        self.number, self.connect, self.rate, self.stop = number, connect, rate, stop
        self.counts = {"checkouts": 0, "confirmed": 0, "refunded": 0, "reconnects": 0,
                       "errors": 0}
        self.rng = random.Random(number)

    def run(self):
        conn = None
        period = 1.0 / self.rate
        next_at = time.monotonic()
        while not self.stop.is_set():
            try:
                if conn is None:
                    conn = self.connect(f"soak-load-{self.number}")
                self.one(conn)
            except (psycopg2.OperationalError, psycopg2.InterfaceError):
                self.counts["reconnects"] += 1
                if conn is not None:
                    conn.close()
                conn = None
                self.stop.wait(0.5)
            except psycopg2.Error:
                self.counts["errors"] += 1
                try:
                    conn.rollback()
                except psycopg2.Error:
                    pass
            next_at = max(next_at + period, time.monotonic())
            self.stop.wait(max(0.0, next_at - time.monotonic()))
        if conn is not None:
            conn.close()

    def one(self, conn):
        p = {"event": self.rng.choice(LOAD_EVENTS),
             "seat": seat_name(self.rng.randint(1, SEATS_PER_EVENT)),
             "fan": f"load-{self.rng.getrandbits(62)}",
             "hold": self.rng.randint(1, 10)}
        with conn.cursor() as cur:
            if self.rng.random() < 0.2:
                self.refund(cur, p)
                return
            self.counts["checkouts"] += 1
            cur.execute(CLAIM, p)
            if cur.fetchone() is None:
                return
            cur.execute(PAYMENT, p)
            cur.execute(PAYMENT, p)  # the double tap: same key, a no-op
            outcome = self.rng.random()
            if outcome < 0.55:
                cur.execute(CONFIRM, p)
                self.counts["confirmed"] += cur.rowcount
            elif outcome < 0.65:
                cur.execute(CANCEL, p)
            # otherwise the fan walks away and the hold lapses

    def refund(self, cur, p):
        """A sold seat goes back on sale: seat, ticket and payment together."""
        cur.execute("BEGIN")
        cur.execute("SELECT holder FROM seats WHERE event_id = %(event)s AND seat = %(seat)s "
                    "AND status = 'sold' FOR UPDATE", p)
        row = cur.fetchone()
        if row is None:
            cur.execute("ROLLBACK")
            return
        p["holder"] = row[0]
        cur.execute("DELETE FROM tickets WHERE event_id = %(event)s AND seat = %(seat)s "
                    "AND fan = %(holder)s", p)
        cur.execute("UPDATE payments SET status = 'refunded' WHERE event_id = %(event)s "
                    "AND seat = %(seat)s AND fan = %(holder)s AND status = 'confirmed'", p)
        cur.execute("UPDATE seats SET status = 'free', holder = NULL, hold_expires_at = NULL, "
                    "version = version + 1 WHERE event_id = %(event)s AND seat = %(seat)s", p)
        cur.execute("COMMIT")
        self.counts["refunded"] += 1


# Each kind: the invariant that must go to 0, the others the same rows may
# also violate, the SQL that breaks it and the SQL that repairs it ({seat} is
# the first fresh seat; fan_over_limit takes FAN_LIMIT + 1 of them).
KINDS = {
    "sold_seat_without_ticket": {
        "also": [],
        "seats": 1,
        "break": "UPDATE seats SET status = 'sold', holder = 'soak-{n}' "
                 "WHERE event_id = {event} AND seat = 'V{first}'",
        "repair": "UPDATE seats SET status = 'free', holder = NULL "
                  "WHERE event_id = {event} AND seat = 'V{first}'",
    },
    "ticket_without_sold_seat": {
        "also": ["ticket_without_confirmed_payment"],
        "seats": 1,
        "break": "INSERT INTO tickets (event_id, seat, fan) VALUES ({event}, 'V{first}', 'soak-{n}')",
        "repair": "DELETE FROM tickets WHERE event_id = {event} AND seat = 'V{first}'",
    },
    "confirmed_payment_without_ticket": {
        "also": [],
        "seats": 1,
        "break": "INSERT INTO payments (idempotency_key, event_id, seat, fan, amount_cents, status) "
                 "VALUES ('soak-{n}', {event}, 'V{first}', 'soak-{n}', 100, 'confirmed')",
        "repair": "DELETE FROM payments WHERE idempotency_key = 'soak-{n}'",
    },
    "fan_over_limit": {
        "also": [],
        "seats": FAN_LIMIT + 1,
        "break": "UPDATE seats SET status = 'held', holder = 'soak-{n}', "
                 "hold_expires_at = now() + interval '1 hour' "
                 "WHERE event_id = {event} AND seat = ANY (ARRAY[{seat_list}])",
        "repair": "UPDATE seats SET status = 'free', holder = NULL, hold_expires_at = NULL "
                  "WHERE event_id = {event} AND holder = 'soak-{n}'",
    },
}
ORDER = list(KINDS)


class Injector:
    """Commits and repairs violations on its own connection (a superuser's:
    it must get in while max_connections is full). Thread-safe: one
    statement at a time."""

    def __init__(self, connect, clock):
        self.connect, self.clock = connect, clock
        self.conn = None
        self.lock = threading.Lock()
        self.next_seat = 1
        self.count = 0
        self.records = []

    def open(self):
        self.conn = self.connect("soak-injector")

    def _execute(self, sql, deadline):
        """Runs one autocommit statement, reconnecting across a restart;
        returns the clock time the commit returned."""
        while True:
            try:
                if self.conn is None:
                    self.open()
                with self.conn.cursor() as cur:
                    cur.execute(sql)
                return self.clock.now()
            except (psycopg2.OperationalError, psycopg2.InterfaceError):
                if self.conn is not None:
                    self.conn.close()
                self.conn = None
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)

    def inject(self, kind=None, during=""):
        with self.lock:
            kind = kind or ORDER[self.count % len(ORDER)]
            spec = KINDS[kind]
            n, first = self.count + 1, self.next_seat
            self.count += 1
            self.next_seat += spec["seats"]
            seats = ", ".join(f"'V{first + i}'" for i in range(spec["seats"]))
            values = {"n": n, "first": first, "event": VIOLATION_EVENT, "seat_list": seats}
            record = {"id": n, "kind": kind, "allowed": [kind] + spec["also"],
                      "during": during, "requested": self.clock.now(),
                      "repair_sql": spec["repair"].format(**values)}
            record["committed"] = self._execute(spec["break"].format(**values),
                                                time.monotonic() + 60)
            self.records.append(record)
            return record

    def repair(self, record):
        with self.lock:
            record["repaired"] = self._execute(record.pop("repair_sql"), time.monotonic() + 60)

    def close(self):
        if self.conn is not None:
            self.conn.close()
