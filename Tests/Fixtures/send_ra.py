#!/usr/bin/env python3
"""Sends one IPv6 Router Advertisement carrying RFC 8910's captive-portal option (type 37)
to all nodes on one interface, from inside the test's gateway namespace:

    send_ra.py IFNAME URI

The router lifetime is 0 (no default route is made from it); the kernel fills in the
ICMPv6 checksum of a raw ICMPv6 socket. Hop limit 255, as RFC 4861 requires.
"""
import socket
import struct
import sys

interface, uri = sys.argv[1], sys.argv[2].encode()
option_length = (2 + len(uri) + 7) // 8  # in units of 8 octets, NUL-padded
option = struct.pack("!BB", 37, option_length) + uri.ljust(option_length * 8 - 2, b"\0")
# type 134, code 0, checksum 0, cur hop limit 64, flags 0, router lifetime 0,
# reachable time 0, retrans timer 0
advertisement = struct.pack("!BBHBBHII", 134, 0, 0, 64, 0, 0, 0, 0) + option

sock = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, 255)
index = socket.if_nametoindex(interface)
sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, index)
sock.sendto(advertisement, ("ff02::1", 0, 0, index))
print("sent", flush=True)
