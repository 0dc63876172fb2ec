#!/usr/bin/env python3
"""Holds a TCP port on 127.0.0.1 until killed, as "another process" would.

    port_holder.py PORT        listen on PORT
    port_holder.py 0           listen on a free port the kernel picks

Prints the port on its first line once it listens.
"""
import signal
import socket
import sys

listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.bind(("127.0.0.1", int(sys.argv[1])))
listener.listen(16)
print(listener.getsockname()[1], flush=True)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
while True:
    connection, _ = listener.accept()
    connection.close()
