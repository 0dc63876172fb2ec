"""Hostile HTTP clients against seatwatch's listener, all on loopback, all
bounded: every socket is closed when the attack's time is up.

  silent      connect and send nothing
  slowloris   a request line, then one header line per second, never the end
  idlers      one real GET /metrics with keep-alive, then idle
  garbage     random bytes, broken request lines, an unknown HTTP version,
              a 64 KiB URL, one after another
  huge        a 1 MiB header value; 4,000 headers

Returns counts of what was opened and how the server answered, so the report
can say what the daemon withstood."""

import asyncio
import os
import random


async def _open(port, stats):
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 2)
        stats["opened"] += 1
        return reader, writer
    except (OSError, asyncio.TimeoutError):
        stats["refused"] += 1
        return None, None


async def _answer(reader, stats, timeout=1.0):
    """Reads the status line if one comes within `timeout`."""
    try:
        line = await asyncio.wait_for(reader.readline(), timeout)
    except (OSError, asyncio.TimeoutError, ValueError):
        stats["no_answer"] += 1
        return
    parts = line.split()
    if len(parts) >= 2 and parts[0].startswith(b"HTTP/"):
        key = "status_" + parts[1].decode(errors="replace")
        stats[key] = stats.get(key, 0) + 1
    else:
        stats["closed_without_answer"] += 1


def _close(writer):
    if writer is not None:
        try:
            writer.close()
        except OSError:
            pass


async def _silent(port, until, stats, held):
    _, writer = await _open(port, stats)
    if writer:
        held.append(writer)


async def _slowloris(port, until, stats, held):
    loop = asyncio.get_running_loop()
    _, writer = await _open(port, stats)
    if not writer:
        return
    held.append(writer)
    try:
        writer.write(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        n = 0
        while loop.time() < until - 1:
            await asyncio.sleep(1)
            writer.write(b"X-Slow-%d: %d\r\n" % (n, n))
            await writer.drain()
            n += 1
    except OSError:
        stats["reset"] += 1


async def _idler(port, until, stats, held):
    reader, writer = await _open(port, stats)
    if not writer:
        return
    held.append(writer)
    try:
        writer.write(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n")
        await writer.drain()
        await _answer(reader, stats, timeout=2)
    except OSError:
        stats["reset"] += 1


GARBAGE = [
    lambda: os.urandom(512),
    lambda: b"GET\r\n\r\n",
    lambda: b"\x00\x01\x02\x03\r\n\r\n",
    lambda: b"GET /metrics HTTP/9.9\r\n\r\n",
    lambda: b"GET /" + b"a" * 65536 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    lambda: b"POST /metrics HTTP/1.1\r\nContent-Length: 99999999\r\n\r\nabc",
    lambda: b"GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    lambda: b"\r\n" * 1000,
]


async def _garbage(port, until, stats):
    loop = asyncio.get_running_loop()
    i = 0
    while loop.time() < until - 1 and i < 60:
        reader, writer = await _open(port, stats)
        if writer:
            try:
                writer.write(GARBAGE[i % len(GARBAGE)]())
                await writer.drain()
                await _answer(reader, stats, timeout=0.5)
            except OSError:
                stats["reset"] += 1
            _close(writer)
        i += 1
        await asyncio.sleep(0.05)


async def _huge(port, until, stats):
    requests = [
        b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Huge: " + b"h" * (1 << 20) + b"\r\n\r\n",
        b"GET /metrics HTTP/1.1\r\nHost: x\r\n" +
        b"".join(b"X-H%d: v\r\n" % n for n in range(4000)) + b"\r\n",
    ]
    loop = asyncio.get_running_loop()
    for i in range(10):
        if loop.time() >= until - 1:
            break
        reader, writer = await _open(port, stats)
        if not writer:
            continue
        try:
            writer.write(requests[i % 2])
            await asyncio.wait_for(writer.drain(), 2)
            await _answer(reader, stats, timeout=1)
        except (OSError, asyncio.TimeoutError):
            stats["reset"] += 1
        _close(writer)


async def _attack(port, seconds, silent, slow, idlers):
    loop = asyncio.get_running_loop()
    until = loop.time() + seconds
    stats = {"opened": 0, "refused": 0, "reset": 0, "no_answer": 0,
             "closed_without_answer": 0}
    held = []
    tasks = [_silent(port, until, stats, held) for _ in range(silent)]
    tasks += [_slowloris(port, until, stats, held) for _ in range(slow)]
    tasks += [_idler(port, until, stats, held) for _ in range(idlers)]
    tasks += [_garbage(port, until, stats), _huge(port, until, stats)]
    random.shuffle(tasks)
    try:
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True),
                               max(0.1, until - loop.time()))
    except asyncio.TimeoutError:
        pass
    remaining = until - loop.time()
    if remaining > 0:
        await asyncio.sleep(remaining)  # the silent sockets and idlers stay open until the end
    for writer in held:
        _close(writer)
    stats["held"] = len(held)
    return stats


def attack(port, seconds, silent=30, slow=10, idlers=10):
    """Runs the whole attack for `seconds` and returns its counts."""
    return asyncio.run(_attack(port, seconds, silent, slow, idlers))


async def _prime(port, connections):
    async def one():
        reader, writer = await _open(port, stats)
        if not writer:
            return
        try:
            writer.write(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            await writer.drain()
            await asyncio.wait_for(reader.read(), 10)
        except (OSError, asyncio.TimeoutError):
            stats["reset"] += 1
        _close(writer)

    stats = {"opened": 0, "refused": 0, "reset": 0}
    await asyncio.gather(*(one() for _ in range(connections)))
    return stats


def prime(port, connections):
    """`connections` concurrent scrapes, so that every HTTP worker thread has
    served one: its stack and malloc arena are then resident, and the RSS
    slope that follows measures growth, not a pool's first use."""
    return asyncio.run(_prime(port, connections))
