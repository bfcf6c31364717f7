#!/usr/bin/env python3
"""A stand-in for systemd-networkd's Varlink API, for tests.

    networkd_stub.py SOCKET IFINDEX URI

Answers io.systemd.Network.Describe with one link, IFINDEX, whose network announced the
captive-portal API URI (as networkd 254+ reports DHCP option 114 or RA option 37).
Prints "ready" once listening.
"""
import json
import os
import socket
import sys
import threading

path, index, uri = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if os.path.exists(path):
    os.unlink(path)
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
server.listen(16)
print("ready", flush=True)


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
            if call["method"] == "io.systemd.Network.Describe":
                reply = {"parameters": {"Interfaces": [
                    {"Index": 1, "Name": "lo"},
                    {"Index": index, "Name": "eth0", "CaptivePortal": uri},
                ]}}
            else:
                reply = {"error": "org.varlink.service.MethodNotFound", "parameters": {"method": call["method"]}}
            connection.sendall(json.dumps(reply).encode() + b"\0")


while True:
    connection, _ = server.accept()
    threading.Thread(target=serve, args=(connection,), daemon=True).start()
