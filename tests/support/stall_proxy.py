#!/usr/bin/env python3
"""A TCP proxy on 127.0.0.1 that can stop forwarding while keeping every
socket open: a middlebox that stalls. Usage: stall_proxy.py TARGET_PORT.
Prints the port it listens on, then reads commands on stdin, one a line:
"stall" (stop reading from and writing to every connection; new ones are
still accepted and connected upstream, then held), "hold" (stop forwarding on
the connections open now, sockets left open; new ones forward normally: one
session's path stalled, not the server's) and "resume"; each is acknowledged
with "ok" on stdout once in force. Ends at EOF on stdin."""
import selectors
import socket
import sys


def main():
    target = ("127.0.0.1", int(sys.argv[1]))
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(listener.getsockname()[1], flush=True)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(sys.stdin, selectors.EVENT_READ, "command")
    peers = {}  # socket -> the socket at the other end
    stalled = False

    def close_pair(sock):
        other = peers.pop(sock, None)
        for s in (sock, other):
            if s is None:
                continue
            peers.pop(s, None)
            try:
                sel.unregister(s)
            except (KeyError, ValueError):
                pass
            s.close()

    def watch(sock):
        try:
            sel.register(sock, selectors.EVENT_READ, "data")
        except KeyError:
            pass

    while True:
        for key, _ in sel.select():
            if key.data == "command":
                line = sys.stdin.readline()
                if not line:
                    return
                if line.strip() == "stall":
                    stalled = True
                    for sock in list(peers):
                        try:
                            sel.unregister(sock)
                        except (KeyError, ValueError):
                            pass
                elif line.strip() == "hold":
                    for sock in list(peers):
                        try:
                            sel.unregister(sock)
                        except (KeyError, ValueError):
                            pass
                elif line.strip() == "resume":
                    stalled = False
                    for sock in list(peers):
                        watch(sock)
                print("ok", flush=True)
            elif key.data == "accept":
                client, _ = listener.accept()
                upstream = socket.create_connection(target)
                peers[client] = upstream
                peers[upstream] = client
                if not stalled:
                    watch(client)
                    watch(upstream)
            else:
                sock = key.fileobj
                if sock not in peers:
                    continue
                try:
                    data = sock.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    close_pair(sock)
                    continue
                try:
                    peers[sock].sendall(data)
                except OSError:
                    close_pair(sock)


if __name__ == "__main__":
    main()
