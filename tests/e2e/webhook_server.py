#!/usr/bin/env python3
"""A local webhook endpoint for the notify_* scenarios.

    webhook_server.py MODE PORT_FILE LOG_FILE

Listens on a free loopback port (written to PORT_FILE once it listens) and
appends one JSON line per request to LOG_FILE: {"path", "auth", "type",
"body"}. MODE: ok (answers 200), fail (answers 500), hang (reads the
request, records it, then never answers).
"""
import http.server
import json
import socketserver
import sys
import threading

mode, port_file, log_file = sys.argv[1:4]
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode("utf-8", "replace")
        with lock, open(log_file, "a") as f:
            f.write(json.dumps({"path": self.path, "auth": self.headers.get("Authorization", ""),
                                "type": self.headers.get("Content-Type", ""), "body": body}) + "\n")
        if mode == "hang":
            threading.Event().wait()  # never answers
        self.send_response(200 if mode == "ok" else 500)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


server = Server(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.replace(port_file + ".tmp", port_file)
server.serve_forever()
