#!/usr/bin/env python3
"""A DNS server for tests, inside a test's own network namespace.

    dns_stub.py ADDRESS nxdomain   # answers every query: no such name (RCODE 3)
    dns_stub.py ADDRESS silent     # reads every query and never answers
    dns_stub.py ADDRESS silent-flood  # never answers names starting "flood"; NXDOMAIN for others

Prints "ready" once bound to ADDRESS:53/udp.
"""
import socket
import sys

address, mode = sys.argv[1], sys.argv[2]
server = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_DGRAM)
server.bind((address, 53))
print("ready", flush=True)
while True:
    query, peer = server.recvfrom(4096)
    if mode == "silent" or len(query) < 12:
        continue
    if mode == "silent-flood" and query[13:18].lower() == b"flood":  # the first label, after its length byte
        continue
    # Same id and question; QR, RD and RA set, RCODE 3 (NXDOMAIN); no answers.
    header = query[:2] + bytes([0x81, 0x83]) + query[4:6] + bytes(6)
    server.sendto(header + query[12:], peer)
