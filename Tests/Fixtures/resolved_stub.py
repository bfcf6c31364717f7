#!/usr/bin/env python3
"""A stand-in for systemd-resolved's Varlink API, for tests.

    resolved_stub.py SOCKET [LOG]

Answers io.systemd.Resolve.ResolveHostname: "fake.test" with 198.51.100.44, "gone.test"
with DNSError rcode 3 (NXDOMAIN), "noservers.test" with NoNameServers, "ipv4only.arpa"
asked for family 10 (AF_INET6) with 192.0.0.170 and .171 synthesized under 64:ff9b::/96
as a DNS64 resolver would, anything else with QueryTimedOut. With LOG, appends each call's
parameters to it as a JSON line. Prints "ready" once listening.
"""
import json
import sys

from varlink_stub import method_not_found, serve_forever


def resolve(name, family=None):
    if name == "ipv4only.arpa" and family == 10:
        synthesized = [[0, 0x64, 0xFF, 0x9B] + [0] * 8 + [192, 0, 0, last] for last in (170, 171)]
        return {"parameters": {"addresses": [{"ifindex": 2, "family": 10, "address": address} for address in synthesized], "name": name, "flags": 1}}
    if name == "fake.test":
        return {"parameters": {"addresses": [{"ifindex": 2, "family": 2, "address": [198, 51, 100, 44]}], "name": name, "flags": 1}}
    if name == "gone.test":
        return {"error": "io.systemd.Resolve.DNSError", "parameters": {"rcode": 3}}
    if name == "noservers.test":
        return {"error": "io.systemd.Resolve.NoNameServers", "parameters": {}}
    return {"error": "io.systemd.Resolve.QueryTimedOut", "parameters": {}}


def answer(call):
    if call["method"] == "io.systemd.Resolve.ResolveHostname":
        if len(sys.argv) > 2:
            with open(sys.argv[2], "a") as log:
                log.write(json.dumps(call["parameters"], sort_keys=True) + "\n")
        return resolve(call["parameters"]["name"], call["parameters"].get("family"))
    return method_not_found(call)


serve_forever(sys.argv[1], answer)
