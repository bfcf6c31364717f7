#!/usr/bin/env python3
"""Floods one interface with IPv6 Router Advertisements, each carrying RFC 8910's
captive-portal option (type 37) with a different URI, from inside the test's gateway
namespace only (run it with `ip netns exec ROUTER`):

    ra_flood.py IFNAME RATE SECONDS [URI_PREFIX]

Sends RATE advertisements a second for SECONDS seconds to all nodes on IFNAME, the n-th
(from 0) with URI_PREFIX + n (default "https://portal.test/"). Bounded: at most 10,000 a
second for at most 60 s. The packet is send_ra.py's (router lifetime 0, hop limit 255).
Prints "sent COUNT LAST_URI" when done.
"""
import socket
import struct
import sys
import time

interface = sys.argv[1]
rate = min(max(int(sys.argv[2]), 1), 10_000)
seconds = min(max(float(sys.argv[3]), 0.0), 60.0)
prefix = sys.argv[4] if len(sys.argv) > 4 else "https://portal.test/"
total = int(rate * seconds)


def advertisement(uri):
    uri = uri.encode()
    option_length = (2 + len(uri) + 7) // 8  # in units of 8 octets, NUL-padded
    option = struct.pack("!BB", 37, option_length) + uri.ljust(option_length * 8 - 2, b"\0")
    return struct.pack("!BBHBBHII", 134, 0, 0, 64, 0, 0, 0, 0) + option


sock = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, 255)
index = socket.if_nametoindex(interface)
sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, index)
destination = ("ff02::1", 0, 0, index)

start = time.monotonic()
last = None
sent = 0
for number in range(total):
    # Paced against the start, so a slow moment is caught up rather than lost.
    ahead = start + number / rate - time.monotonic()
    if ahead > 0.001:
        time.sleep(ahead)
    last = prefix + str(number)
    try:
        sock.sendto(advertisement(last), destination)
        sent += 1
    except BlockingIOError:
        pass
print("sent", sent, last, flush=True)
