#!/usr/bin/env python3
"""An Alertmanager webhook receiver for the end-to-end tests, on loopback.

  webhook_receiver.py PORT_FILE OUT_FILE

Listens on 127.0.0.1 on a port the kernel picks (written to PORT_FILE once listening, so
the test never races another process for a port) and appends each POSTed JSON body to
OUT_FILE as one line, with the request path under "_path". Answers 200 to valid JSON, 400
otherwise (Alertmanager then retries, and the test sees nothing new). Runs until killed.
"""

import http.server
import json
import os
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    out_file = None

    def do_POST(self):  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        try:
            payload = json.loads(body)
        except ValueError:
            self.send_response(400)
            self.end_headers()
            return
        payload["_path"] = self.path
        # One write of one line, flushed: the test reads the file while we append.
        with open(self.out_file, "a", encoding="utf-8") as out:
            out.write(json.dumps(payload, sort_keys=True) + "\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, fmt, *args):
        sys.stderr.write("webhook: " + (fmt % args) + "\n")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    port_file, Handler.out_file = sys.argv[1], sys.argv[2]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = port_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(f"{server.server_address[1]}\n")
    os.rename(tmp, port_file)  # the test never reads a half-written port
    server.serve_forever()


if __name__ == "__main__":
    main()
