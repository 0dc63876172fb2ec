"""The faults the soak injects, each bounded and undone by itself, each
returning a record:

  kind     its name
  start    clock time it began; end: when it was undone
  outage   [from, to] while the database could not answer seatwatch (the
           server down, the connection stalled, no slot to reconnect into),
           or None: up must say 0 once an outage outlasts the poll deadline
  blind    [from, to] while seatwatch's checks cannot read the tables
           (an outage, or an ACCESS EXCLUSIVE lock): no invariant may show
           a stale "ok" then
  detail   what it did (counts)

`ctx` carries the clock, the cluster, the admin connection factory, the
daemon's pid and listen port, the proxy and the database name."""

import concurrent.futures
import os
import signal
import threading
import time

import psycopg2

import procs
import soak_http

SEATWATCH_BACKENDS = ("SELECT pid FROM pg_stat_activity WHERE datname = %s "
                      "AND application_name LIKE 'seatwatch%%'")


def _record(kind, start, end, outage=None, blind=None, **detail):
    return {"kind": kind, "start": round(start, 3), "end": round(end, 3),
            "outage": [round(x, 3) for x in outage] if outage else None,
            "blind": [round(x, 3) for x in (blind or outage)] if (blind or outage) else None,
            "detail": detail}


def _terminate_seatwatch(ctx, conn):
    """Terminates seatwatch's sessions, waiting (up to 3 s each) until they
    are gone; returns their pids."""
    with conn.cursor() as cur:
        cur.execute(f"SELECT pid FROM ({SEATWATCH_BACKENDS}) s "
                    f"WHERE pg_terminate_backend(pid, 3000)", (ctx.dbname,))
        return [pid for (pid,) in cur.fetchall()]


def kill_backends(ctx, **_):
    """Terminates seatwatch's sessions while they are idle between polls, as
    idle_session_timeout or a failover would: the next poll must reconnect
    and retry at once, so no poll may fail. Waits (up to 5 s) for a moment
    when every session is idle; if none comes, kills them anyway."""
    start = ctx.clock.now()
    conn = ctx.admin("soak-fault-kill")
    try:
        deadline = time.monotonic() + 5
        with conn.cursor() as cur:
            while True:
                cur.execute(f"SELECT count(*) FILTER (WHERE state = 'idle'), count(*) "
                            f"FROM pg_stat_activity WHERE datname = %s "
                            f"AND application_name LIKE 'seatwatch%%'", (ctx.dbname,))
                idle, total = cur.fetchone()
                all_idle = total > 0 and idle == total
                if all_idle or time.monotonic() > deadline:
                    break
                time.sleep(0.02)
            start = ctx.clock.now()
            killed = len(_terminate_seatwatch(ctx, conn))
    finally:
        conn.close()
    return _record("kill_backends", start, ctx.clock.now(), killed=killed, all_idle=all_idle)


def sighup_storm(ctx, count=50, seconds=1.0, **_):
    start = ctx.clock.now()
    sent = 0
    for _ in range(count):
        try:
            os.kill(ctx.daemon_pid, signal.SIGHUP)
            sent += 1
        except ProcessLookupError:
            break
        time.sleep(seconds / count)
    return _record("sighup_storm", start, ctx.clock.now(), signals=sent)


def stall(ctx, seconds=15.0, during=None, **_):
    start = ctx.clock.now()
    ctx.proxy.pause()
    try:
        _sleep_with(ctx, seconds, during)
    finally:
        ctx.proxy.resume()
    end = ctx.clock.now()
    return _record("stall", start, end, outage=(start, end), proxied_connections=ctx.proxy.open)


def restart_server(ctx, **_):
    start = ctx.clock.now()
    result = ctx.cluster.restart()
    detail = {"exit_code": result.returncode}
    if result.returncode != 0:
        # Bring the server back whatever it takes (it may come up on another
        # port: the proxy reads the socket path again for each connection).
        detail["error"] = (result.stderr or "").strip()[-200:]
        ctx.cluster.ensure_running()
    end = ctx.clock.now()
    return _record("restart_server", start, end, outage=(start, end), **detail)


def _connect_filler(ctx):
    try:
        return ctx.filler_connect(), None
    except psycopg2.OperationalError as error:
        return None, str(error).strip().splitlines()[0][:120]


def fill_connections(ctx, hold=8.0, during=None, **_):
    """Opens connections (as a plain role) until the server refuses them, then
    terminates seatwatch's sessions while four threads keep grabbing every
    freed slot for `hold` seconds, so that seatwatch cannot reconnect; then
    releases all. The outage ends early if seatwatch got a slot anyway."""
    start = ctx.clock.now()
    conns, refusals = [], []
    limit = ctx.max_connections + 20
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        while not refusals and len(conns) < limit:
            for conn, error in pool.map(lambda _: _connect_filler(ctx), range(8)):
                if conn is not None:
                    conns.append(conn)
                elif error:
                    refusals.append(error)
    full = ctx.clock.now()
    admin = ctx.admin("soak-fault-fill")
    stop = threading.Event()

    def grab():
        while not stop.is_set():
            conn, _ = _connect_filler(ctx)
            if conn is not None:
                conns.append(conn)
            stop.wait(0.02)

    grabbers = [threading.Thread(target=grab, daemon=True) for _ in range(4)]
    for thread in grabbers:
        thread.start()
    got_in = None
    try:
        killed = _terminate_seatwatch(ctx, admin)
        outage_from = ctx.clock.now()
        timer = _start_during(ctx, during)
        deadline = time.monotonic() + hold
        with admin.cursor() as cur:
            while time.monotonic() < deadline:
                cur.execute(f"SELECT count(*) FROM ({SEATWATCH_BACKENDS}) s "
                            f"WHERE pid <> ALL (%s)", (ctx.dbname, killed))
                if cur.fetchone()[0] and got_in is None:
                    got_in = ctx.clock.now()
                time.sleep(0.1)
        if timer:
            timer.join()
    finally:
        outage_to = ctx.clock.now()
        stop.set()
        for thread in grabbers:
            thread.join(10)
        for conn in conns:
            conn.close()
        admin.close()
    end = ctx.clock.now()
    return _record("fill_connections", start, end,
                   outage=(outage_from, got_in or outage_to),
                   connections=len(conns), full_after_s=round(full - start, 2),
                   refusal=refusals[0].split("FATAL:")[-1].strip()[:60], killed=len(killed),
                   seatwatch_got_in_at=round(got_in, 3) if got_in else None)


def access_exclusive(ctx, tables=("seats", "tickets"), seconds=4.0, **_):
    """ACCESS EXCLUSIVE on each table in turn for `seconds`: the checks that
    read it must fail with lock_timeout rather than queue or serve stale ok.
    Each table's lock is taken (in a transaction of its own) before the
    previous one is released, so no instant has neither locked: a poll in such
    a gap would succeed, rightly, and serve ok inside the blind window."""
    start = ctx.clock.now()
    conns, windows = [], []
    try:
        for table in tables:
            conn = ctx.admin(f"soak-fault-lock-{table}")
            conns.append(conn)
            conn.autocommit = False
            with conn.cursor() as cur:
                cur.execute("SET LOCAL lock_timeout = '10s'")
                cur.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
            locked = ctx.clock.now()
            if len(conns) > 1:
                conns[-2].commit()
                windows[-1].append(round(ctx.clock.now(), 3))
            windows.append([round(locked, 3)])
            time.sleep(seconds)
        conns[-1].commit()
        windows[-1].append(round(ctx.clock.now(), 3))
    finally:
        for conn in conns:
            conn.close()
    end = ctx.clock.now()
    # Only the seats lock blinds every booking check; tickets blinds the
    # reconciliation too (it reads all three tables).
    return _record("access_exclusive", start, end, blind=(windows[0][0], windows[-1][1]),
                   tables=list(tables), windows=windows)


def hostile_http(ctx, seconds=10.0, during=None, **_):
    start = ctx.clock.now()
    timer = _start_during(ctx, during)
    stats = soak_http.attack(ctx.http_port, seconds)
    if timer:
        timer.join()
    return _record("hostile_http", start, ctx.clock.now(), **stats)


def quiet(ctx, seconds=8.0, during=None, **_):
    start = ctx.clock.now()
    _sleep_with(ctx, seconds, during)
    return _record("quiet", start, ctx.clock.now())


def _start_during(ctx, during):
    if not during:
        return None
    offset, action = during
    timer = threading.Timer(offset, action)
    timer.start()
    return timer


def _sleep_with(ctx, seconds, during):
    timer = _start_during(ctx, during)
    time.sleep(seconds)
    if timer:
        timer.join()


FAULTS = {
    "quiet": quiet,
    "kill_backends": kill_backends,
    "sighup_storm": sighup_storm,
    "stall": stall,
    "restart_server": restart_server,
    "fill_connections": fill_connections,
    "access_exclusive": access_exclusive,
    "hostile_http": hostile_http,
}


def run(ctx, kind, **options):
    try:
        return FAULTS[kind](ctx, **options)
    except Exception as error:  # a fault that could not be injected is reported, not fatal
        procs.log(f"fault {kind} could not run: {error}")
        now = ctx.clock.now()
        return _record(kind, now, now, error=str(error)[:300])
