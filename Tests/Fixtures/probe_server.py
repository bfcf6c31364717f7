#!/usr/bin/env python3
"""A connectivity-probe endpoint and RFC 8908 API for reachd's tests, run inside the test's
gateway namespace only (never reachable from anywhere else).

    probe_server.py STATE_FILE [--cert CERT --key KEY]

Serves HTTP on port 80 and, with a certificate, HTTPS on port 443, both families. What
each answers is read from STATE_FILE (JSON) at every request, so a test changes the
network's behaviour by rewriting it:

    {"http": "204" | "redirect" | "login" | "500" | "close",
     "https": same choices,
     "api": {...RFC 8908 JSON...} | null}

"/captive" answers the "api" object as application/captive+json; every other path answers
the mode of its scheme. Each request is appended to STATE_FILE.log as "SECONDS SCHEME PATH".
Prints "ready" once listening.
"""
import json
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE = sys.argv[1]
CERT = KEY = None
if "--cert" in sys.argv:
    CERT = sys.argv[sys.argv.index("--cert") + 1]
    KEY = sys.argv[sys.argv.index("--key") + 1]


def state():
    with open(STATE) as f:
        return json.load(f)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    scheme = "http"

    def log_message(self, *args):
        pass

    def do_GET(self):
        with open(STATE + ".log", "a") as log:
            log.write(f"{time.monotonic():.3f} {self.scheme} {self.path}\n")
        current = state()
        if self.path == "/captive":
            api = current.get("api")
            if api is None:
                return self.answer(404, b"")
            return self.answer(200, json.dumps(api).encode(), "application/captive+json")
        mode = current.get(self.scheme, "204")
        if mode == "204":
            self.answer(204, b"")
        elif mode == "redirect":
            self.answer(302, b"", headers={"Location": "http://portal.test/login?from=probe"})
        elif mode == "login":
            self.answer(200, b"<html><body>Welcome to the hotel network. Log in.</body></html>", "text/html")
        elif mode == "500":
            self.answer(500, b"broken")
        else:  # "close": hang up without an answer
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)

    def answer(self, status, body, content_type="text/plain", headers=None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


class DualStackServer(ThreadingHTTPServer):
    address_family = socket.AF_INET6
    daemon_threads = True

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()


class SecureHandler(Handler):
    scheme = "https"


servers = [DualStackServer(("::", 80), Handler)]
if CERT:
    secure = DualStackServer(("::", 443), SecureHandler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(CERT, KEY)
    secure.socket = context.wrap_socket(secure.socket, server_side=True)
    servers.append(secure)
for server in servers:
    threading.Thread(target=server.serve_forever, daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
