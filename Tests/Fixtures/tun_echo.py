#!/usr/bin/env python3
"""The far end of a tun device, for tests: answers ICMP echo requests sent into the tunnel.

Usage: tun_echo.py IFNAME. Opens (and so brings carrier to) the tun device IFNAME, prints
"ready", then for each IPv4 ICMP echo request read from it writes the echo reply back, as
the peer of a VPN would. Everything else is dropped. Runs until killed.
"""
import fcntl
import os
import signal
import struct
import sys

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000


def checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def reply(packet: bytes):
    if len(packet) < 28 or packet[0] >> 4 != 4 or packet[9] != 1:
        return None
    header_length = (packet[0] & 0x0F) * 4
    icmp = bytearray(packet[header_length:])
    if len(icmp) < 8 or icmp[0] != 8:
        return None
    icmp[0] = 0
    icmp[2:4] = b"\0\0"
    icmp[2:4] = struct.pack("!H", checksum(bytes(icmp)))
    header = bytearray(packet[:header_length])
    header[12:16], header[16:20] = packet[16:20], packet[12:16]
    return bytes(header) + bytes(icmp)


def main():
    # The test runner's threads block SIGTERM, and a child inherits the mask.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
    descriptor = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(descriptor, TUNSETIFF, struct.pack("16sH", sys.argv[1].encode(), IFF_TUN | IFF_NO_PI))
    print("ready", flush=True)
    while True:
        answer = reply(os.read(descriptor, 65535))
        if answer:
            os.write(descriptor, answer)


if __name__ == "__main__":
    main()
