#!/usr/bin/env python3
"""A stand-in for systemd-resolved's Varlink API, for tests.

    resolved_stub.py SOCKET

Answers io.systemd.Resolve.ResolveHostname: "fake.test" with 198.51.100.44, "gone.test"
with DNSError rcode 3 (NXDOMAIN), "noservers.test" with NoNameServers, anything else with
QueryTimedOut. Prints "ready" once listening.
"""
import sys

from varlink_stub import method_not_found, serve_forever


def resolve(name):
    if name == "fake.test":
        return {"parameters": {"addresses": [{"ifindex": 2, "family": 2, "address": [198, 51, 100, 44]}], "name": name, "flags": 1}}
    if name == "gone.test":
        return {"error": "io.systemd.Resolve.DNSError", "parameters": {"rcode": 3}}
    if name == "noservers.test":
        return {"error": "io.systemd.Resolve.NoNameServers", "parameters": {}}
    return {"error": "io.systemd.Resolve.QueryTimedOut", "parameters": {}}


def answer(call):
    if call["method"] == "io.systemd.Resolve.ResolveHostname":
        return resolve(call["parameters"]["name"])
    return method_not_found(call)


serve_forever(sys.argv[1], answer)
