"""A TCP proxy on loopback that can stop forwarding while keeping every socket
open: what a network stall looks like to seatwatch (no RST, no FIN, no bytes).

seatwatch connects to 127.0.0.1:<port>; each connection gets its own upstream
connection to the server, over the server's unix socket (`upstream()` names
it, read again for every connection). Not over TCP: connections the server
closes first (a restart, pg_terminate_backend) would leave TIME_WAIT sockets
on its TCP port, and scripts/pg-scratch restart waits until that port can be
bound again. While paused, nothing is read from either side, so
bytes (and a FIN) wait in the kernel's buffers and pass when forwarding
resumes, as they would after a real stall. When either side closes while
forwarding, the other side is closed too (a server restart or
pg_terminate_backend reaches seatwatch as it would without the proxy).

Runs an asyncio loop in a thread of its own; pause(), resume() and stop() may
be called from any thread."""

import asyncio
import threading


class StallingProxy:
    def __init__(self, upstream):
        self.upstream = upstream  # () -> path of the server's unix socket
        self.port = None
        self.accepted = 0
        self.open = 0
        self._loop = asyncio.new_event_loop()
        self._gate = None  # asyncio.Event: set while forwarding
        self._server = None
        self._writers = set()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="soak-proxy", daemon=True)

    def start(self):
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the stalling proxy did not start")
        return self.port

    def pause(self):
        self._loop.call_soon_threadsafe(self._gate.clear)

    def resume(self):
        self._loop.call_soon_threadsafe(self._gate.set)

    def stop(self):
        if not self._thread.is_alive():
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    # The loop thread ------------------------------------------------------------

    def _run(self):
        asyncio.set_event_loop(self._loop)
        self._gate = asyncio.Event()
        self._gate.set()
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        self._loop.close()

    async def _shutdown(self):
        self._server.close()
        for writer in list(self._writers):
            writer.close()
        self._gate.set()

    async def _serve(self, client_reader, client_writer):
        self.accepted += 1
        self.open += 1
        self._writers.add(client_writer)
        try:
            try:
                up_reader, up_writer = await asyncio.wait_for(
                    asyncio.open_unix_connection(self.upstream()), 10)
            except (OSError, asyncio.TimeoutError):
                return  # the server is down: close, as a refused connection would look
            self._writers.add(up_writer)
            try:
                await asyncio.gather(self._pump(client_reader, up_writer),
                                     self._pump(up_reader, client_writer))
            finally:
                self._writers.discard(up_writer)
                up_writer.close()
        finally:
            self.open -= 1
            self._writers.discard(client_writer)
            client_writer.close()

    async def _pump(self, reader, writer):
        """Copies until EOF or an error, reading only while the gate is open;
        then closes the other side's writer so both directions end."""
        try:
            while True:
                await self._gate.wait()
                data = await reader.read(65536)
                if not data:
                    break
                await self._gate.wait()  # paused mid-read: hold the bytes
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
