#!/usr/bin/env python3
"""A hostile probe endpoint and RFC 8908 API for reachd's tests, run inside the
test's router namespace only (never reachable from anywhere else).

    hostile_http.py STATE_FILE [--cert CERT --key KEY]

Serves HTTP on port 80 and, with a certificate, HTTPS on port 443, both families, writing
raw bytes (no HTTP library between the test and the wire). What each request gets is read
from STATE_FILE (JSON) at every request:

    {"http": "204" | "continue" | "location",
     "location": "TEXT"   (for "location": a 302 whose Location is TEXT, UTF-8, as it is),
     "api": "TEXT" | null (the body of /captive over either scheme, as it is, served as
                           application/captive+json; a JSON text, so 1e300 stays 1e300)}

"continue" answers "HTTP/1.1 100 Continue" heads forever, until the client hangs up.
Each request is appended to STATE_FILE.log as "SECONDS SCHEME PATH"; the end of a
"continue" exchange as "SECONDS SCHEME continued N" (N heads sent). Prints "ready" once
listening.
"""
import json
import socket
import ssl
import sys
import threading
import time

STATE = sys.argv[1]
CERT = KEY = None
if "--cert" in sys.argv:
    CERT = sys.argv[sys.argv.index("--cert") + 1]
    KEY = sys.argv[sys.argv.index("--key") + 1]
LOCK = threading.Lock()


def state():
    with open(STATE) as f:
        return json.load(f)


def record(line):
    with LOCK, open(STATE + ".log", "a") as log:
        log.write(f"{time.monotonic():.3f} {line}\n")


def answer(status, reason, body=b"", headers=()):
    head = f"HTTP/1.1 {status} {reason}\r\n".encode()
    for name, value in headers:
        head += name.encode() + b": " + value + b"\r\n"
    head += b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n"
    return head + body


def serve(connection, scheme):
    try:
        request = b""
        while b"\r\n\r\n" not in request and len(request) < 65536:
            chunk = connection.recv(4096)
            if not chunk:
                return
            request += chunk
        path = request.split(b" ", 2)[1].decode("ascii", "replace") if request.count(b" ") >= 2 else "?"
        record(f"{scheme} {path}")
        current = state()
        if path == "/captive":
            api = current.get("api")
            if api is None:
                connection.sendall(answer(404, "Not Found"))
            else:
                connection.sendall(answer(200, "OK", api.encode(), [("Content-Type", b"application/captive+json")]))
            return
        mode = current.get(scheme, "204")
        if mode == "continue":
            heads = 0
            try:
                while True:
                    connection.sendall(b"HTTP/1.1 100 Continue\r\n\r\n" * 64)
                    heads += 64
            except OSError:
                record(f"{scheme} continued {heads}")
        elif mode == "location":
            connection.sendall(answer(302, "Found", headers=[("Location", current["location"].encode())]))
        else:
            connection.sendall(answer(204, "No Content"))
    except OSError:
        pass
    finally:
        try:
            connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        connection.close()


def listen(port, scheme, context=None):
    server = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    server.bind(("::", port))
    server.listen(64)

    def accept():
        while True:
            connection, _ = server.accept()

            def handle(connection=connection):
                if context is not None:
                    try:
                        connection = context.wrap_socket(connection, server_side=True)
                    except (OSError, ssl.SSLError):
                        connection.close()
                        return
                serve(connection, scheme)

            threading.Thread(target=handle, daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


listen(80, "http")
if CERT:
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(CERT, KEY)
    listen(443, "https", tls)
print("ready", flush=True)
threading.Event().wait()
