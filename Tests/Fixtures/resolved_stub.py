#!/usr/bin/env python3
"""A stand-in for systemd-resolved's Varlink API, for tests.

    resolved_stub.py SOCKET

Answers io.systemd.Resolve.ResolveHostname: "fake.test" with 198.51.100.44, "gone.test"
with DNSError rcode 3 (NXDOMAIN), "noservers.test" with NoNameServers, anything else with
QueryTimedOut. Prints "ready" once listening.
"""
import json
import os
import socket
import sys
import threading

path = sys.argv[1]
if os.path.exists(path):
    os.unlink(path)
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
server.listen(16)
print("ready", flush=True)


def answer(name):
    if name == "fake.test":
        return {"parameters": {"addresses": [{"ifindex": 2, "family": 2, "address": [198, 51, 100, 44]}], "name": name, "flags": 1}}
    if name == "gone.test":
        return {"error": "io.systemd.Resolve.DNSError", "parameters": {"rcode": 3}}
    if name == "noservers.test":
        return {"error": "io.systemd.Resolve.NoNameServers", "parameters": {}}
    return {"error": "io.systemd.Resolve.QueryTimedOut", "parameters": {}}


def serve(connection):
    buffer = b""
    while True:
        data = connection.recv(65536)
        if not data:
            return
        buffer += data
        while b"\0" in buffer:
            message, _, buffer = buffer.partition(b"\0")
            call = json.loads(message)
            reply = answer(call["parameters"]["name"]) if call["method"] == "io.systemd.Resolve.ResolveHostname" \
                else {"error": "org.varlink.service.MethodNotFound", "parameters": {"method": call["method"]}}
            connection.sendall(json.dumps(reply).encode() + b"\0")


while True:
    connection, _ = server.accept()
    threading.Thread(target=serve, args=(connection,), daemon=True).start()
