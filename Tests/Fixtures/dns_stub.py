#!/usr/bin/env python3
"""A DNS server for tests, inside a test's own network namespace.

    dns_stub.py ADDRESS nxdomain   # answers every query: no such name (RCODE 3)
    dns_stub.py ADDRESS silent     # reads every query and never answers
    dns_stub.py ADDRESS silent-flood  # never answers names starting "flood"; NXDOMAIN for others
    dns_stub.py ADDRESS answer     # every A query: ADDRESS itself; other types: no records

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
    if mode == "answer":
        end = 12
        while end < len(query) and query[end] != 0:  # the question's name, label by label
            end += 1 + query[end]
        question = query[12:end + 5]
        is_a = question[-4:] == bytes([0, 1, 0, 1])
        # QR, RD and RA set, NOERROR; one answer (a pointer to the question's name, A, IN,
        # TTL 1) for an A query.
        answer = bytes([0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 1, 0, 4]) + socket.inet_aton(address) if is_a else b""
        header = query[:2] + bytes([0x81, 0x80, 0, 1, 0, 1 if is_a else 0]) + bytes(4)
        server.sendto(header + question + answer, peer)
        continue
    # Same id and question; QR, RD and RA set, RCODE 3 (NXDOMAIN); no answers.
    header = query[:2] + bytes([0x81, 0x83]) + query[4:6] + bytes(6)
    server.sendto(header + query[12:], peer)
