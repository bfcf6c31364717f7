#!/usr/bin/env python3
"""A TCP server on an IPv4 address only, for the NAT64 tests: every connection is answered
with one line saying which address it listens on and which peer it saw, then closed.

    ipv4_server.py ADDRESS PORT

Prints "ready" once it listens. An IPv6-only host reaching it through a NAT64 is seen
coming from the translator's IPv4 pool, which is the proof the traffic was translated.
"""
import socket
import sys

address, port = sys.argv[1], int(sys.argv[2])
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind((address, port))
listener.listen(16)
print("ready", flush=True)
while True:
    connection, peer = listener.accept()
    with connection:
        connection.sendall(f"ipv4-server {address}:{port} saw {peer[0]}\n".encode())
