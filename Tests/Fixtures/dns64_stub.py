#!/usr/bin/env python3
"""A DNS64 resolver for tests (RFC 7050), inside a test's own network namespace.

    dns64_stub.py ADDRESS PREFIX LOG

Answers AAAA queries for ipv4only.arpa with 192.0.0.170 and 192.0.0.171 synthesized under
PREFIX (a /96, such as 2001:db8:64::), A queries for it with the two addresses themselves,
and anything else with no records. Appends "NAME TYPE" to LOG for every query, so a test
counts what reachd asked. Prints "ready" once bound to ADDRESS:53/udp.
"""
import ipaddress
import signal
import socket
import struct
import sys

address, prefix, log = sys.argv[1], ipaddress.IPv6Address(sys.argv[2]), sys.argv[3]
WELL_KNOWN = [ipaddress.IPv4Address("192.0.0.170"), ipaddress.IPv4Address("192.0.0.171")]


def question(query):
    """The question's name (dotted, lower case), its end offset and its type."""
    labels, end = [], 12
    while end < len(query) and query[end] != 0:
        labels.append(query[end + 1:end + 1 + query[end]].decode("ascii", "replace").lower())
        end += 1 + query[end]
    qtype = struct.unpack("!H", query[end + 1:end + 3])[0] if end + 3 <= len(query) else 0
    return ".".join(labels), end + 5, qtype


def main():
    # The test runner's threads block SIGTERM, and a child inherits the mask.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
    server = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_DGRAM)
    server.bind((address, 53))
    print("ready", flush=True)
    while True:
        query, peer = server.recvfrom(4096)
        if len(query) < 17:
            continue
        name, end, qtype = question(query)
        with open(log, "a") as file:
            file.write(f"{name} {qtype}\n")
        records = []
        if name == "ipv4only.arpa" and qtype == 28:
            for ipv4 in WELL_KNOWN:
                synthesized = ipaddress.IPv6Address(int(prefix) | int(ipv4))
                records.append(struct.pack("!HHHIH", 0xC00C, 28, 1, 60, 16) + synthesized.packed)
        elif name == "ipv4only.arpa" and qtype == 1:
            for ipv4 in WELL_KNOWN:
                records.append(struct.pack("!HHHIH", 0xC00C, 1, 1, 60, 4) + ipv4.packed)
        # Same id; QR, RD and RA set, NOERROR; the question, then the records.
        header = query[:2] + bytes([0x81, 0x80]) + struct.pack("!HHHH", 1, len(records), 0, 0)
        server.sendto(header + query[12:end] + b"".join(records), peer)


if __name__ == "__main__":
    main()
