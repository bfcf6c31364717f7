#!/usr/bin/env python3
"""Sends one IPv6 Router Advertisement to all nodes on one interface, from inside the
test's gateway namespace, carrying RFC 8910's captive-portal option (type 37) or RFC
8781's PREF64 option (type 38):

    send_ra.py IFNAME URI
    send_ra.py IFNAME --pref64 PREFIX/LENGTH LIFETIME

LIFETIME is in seconds, rounded up to the option's units of 8 s (0 withdraws the prefix).
The router lifetime is 0 (no default route is made from it), but 1800 s with PREF64: that
RA comes from the router radvd runs on, and a lifetime of 0 would take its default route
away. The kernel fills in the ICMPv6 checksum of a raw ICMPv6 socket. Hop limit 255, as
RFC 4861 requires.
"""
import ipaddress
import socket
import struct
import sys

interface = sys.argv[1]
router_lifetime = 0
if sys.argv[2] == "--pref64":
    router_lifetime = 1800
    prefix = ipaddress.IPv6Network(sys.argv[3])
    code = {96: 0, 64: 1, 56: 2, 48: 3, 40: 4, 32: 5}[prefix.prefixlen]
    scaled = (int(sys.argv[4]) + 7) // 8
    # Length 2 (16 octets): scaled lifetime (13 bits) and length code (3 bits), 96 prefix bits.
    option = struct.pack("!BBH", 38, 2, scaled << 3 | code) + prefix.network_address.packed[:12]
else:
    uri = sys.argv[2].encode()
    option_length = (2 + len(uri) + 7) // 8  # in units of 8 octets, NUL-padded
    option = struct.pack("!BB", 37, option_length) + uri.ljust(option_length * 8 - 2, b"\0")
# type 134, code 0, checksum 0, cur hop limit 64, flags 0, router lifetime,
# reachable time 0, retrans timer 0
advertisement = struct.pack("!BBHBBHII", 134, 0, 0, 64, 0, router_lifetime, 0, 0) + option

sock = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, 255)
index = socket.if_nametoindex(interface)
sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, index)
sock.sendto(advertisement, ("ff02::1", 0, 0, index))
print("sent", flush=True)
