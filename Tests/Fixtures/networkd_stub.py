#!/usr/bin/env python3
"""A stand-in for systemd-networkd's Varlink API, for tests.

    networkd_stub.py SOCKET IFINDEX URI

Answers io.systemd.Network.Describe with one link, IFINDEX, whose network announced the
captive-portal API URI (as networkd 254+ reports DHCP option 114 or RA option 37).
Prints "ready" once listening.
"""
import sys

from varlink_stub import method_not_found, serve_forever

path, index, uri = sys.argv[1], int(sys.argv[2]), sys.argv[3]


def answer(call):
    if call["method"] == "io.systemd.Network.Describe":
        return {"parameters": {"Interfaces": [
            {"Index": 1, "Name": "lo"},
            {"Index": index, "Name": "eth0", "CaptivePortal": uri},
        ]}}
    return method_not_found(call)


serve_forever(path, answer)
