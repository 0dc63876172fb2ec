"""The on-sale workload: a correct booking application.

Most writes go to the few hot events (the on-sale rush): claim with the
conditional UPDATE, a double-tapped payment, then confirm (seat sold, ticket
issued, payment confirmed in one statement), cancel, or walk away and let the
hold expire; and seats handed back (a refund: ticket deleted, payment
refunded, seat free, in one transaction) so the hot events never sell out. A
trickle goes elsewhere: the same flows on the quieter on-sale events and
refunds of past events' sales anywhere in the key range. Nothing it does can
break an invariant, and it never touches the injection seats 'X*'.
"""

import random
import threading
import time

import psycopg2

import dataset

from booking_flow import CANCEL, CLAIM, CONFIRM, PAYMENT  # noqa: E402,F401


class Client(threading.Thread):
    """One application connection doing operations at `rate` per second;
    `choose(rng)` gives each one's event and whether it is a refund."""

    def __init__(self, name, connect, rate, choose, stop, seed):
        super().__init__(name=name, daemon=True)
        self.connect, self.rate, self.choose, self.stop = connect, rate, choose, stop
        self.rng = random.Random(seed)
        self.counts = {"ops": 0, "claims": 0, "claimed": 0, "confirmed": 0, "canceled": 0,
                       "walked_away": 0, "refunded": 0, "errors": 0}

    def run(self):
        conn = self.connect(self.name)
        period = 1.0 / self.rate
        next_at = time.monotonic()
        while not self.stop.is_set():
            try:
                self.one(conn)
            except psycopg2.Error:
                self.counts["errors"] += 1
                try:
                    conn.rollback()
                except psycopg2.Error:
                    conn = self.connect(self.name)
            self.counts["ops"] += 1
            next_at = max(next_at + period, time.monotonic() - 1.0)
            self.stop.wait(max(0.0, next_at - time.monotonic()))
        conn.close()

    def one(self, conn):
        event, is_refund = self.choose(self.rng)
        p = {"event": event, "seat": f"S{self.rng.randint(1, dataset.SEATS_PER_EVENT)}",
             "fan": f"app-{self.rng.getrandbits(62)}", "hold": self.rng.randint(5, 60)}
        with conn.cursor() as cur:
            if is_refund:
                self.refund(cur, p)
                return
            self.counts["claims"] += 1
            cur.execute(CLAIM, p)
            if cur.fetchone() is None:
                return
            self.counts["claimed"] += 1
            cur.execute(PAYMENT, p)
            cur.execute(PAYMENT, p)  # the double tap: same key, a no-op
            outcome = self.rng.random()
            if outcome < 0.6:
                cur.execute(CONFIRM, p)
                self.counts["confirmed"] += cur.rowcount
            elif outcome < 0.75:
                cur.execute(CANCEL, p)
                self.counts["canceled"] += 1
            else:
                self.counts["walked_away"] += 1  # the hold lapses on its own

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


class Workload:
    """`hot_clients` clients at `hot_rate` operations/s each on the hot
    events, and one trickle client at `trickle_rate` on everything else."""

    def __init__(self, connect, lay, hot_clients=4, hot_rate=25.0, trickle_rate=4.0):
        self.stop = threading.Event()
        hot = lay["hot"]
        quiet = lay["onsale"][len(hot):]
        past = lay["past"]
        self.description = {
            "hot_events": len(hot), "hot_clients": hot_clients,
            "hot_ops_per_s": hot_clients * hot_rate, "trickle_ops_per_s": trickle_rate,
            "quiet_onsale_events": len(quiet), "past_events": len(past),
        }

        def choose_hot(rng):
            return rng.choice(hot), rng.random() < 0.4

        def choose_trickle(rng):
            # Half checkouts on the quiet on-sale events, half refunds of past
            # events' sales (past events have nothing left to claim).
            if rng.random() < 0.5:
                return rng.choice(quiet), False
            return rng.randrange(past.start, past.stop), True

        self.clients = [Client(f"bench-hot-{i}", connect, hot_rate, choose_hot, self.stop, i)
                        for i in range(hot_clients)]
        self.clients.append(Client("bench-trickle", connect, trickle_rate, choose_trickle,
                                   self.stop, 99))
        self.started = None

    def start(self):
        self.started = time.monotonic()
        for c in self.clients:
            c.start()

    def counts(self):
        total = {}
        for c in self.clients:
            for k, v in c.counts.items():
                total[k] = total.get(k, 0) + v
        return total

    def close(self):
        self.stop.set()
        for c in self.clients:
            c.join(timeout=30)
