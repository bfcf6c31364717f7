#!/usr/bin/env python3
"""reachd's path from Python: the current one at once, then one line per change.

    python3 Examples/python/subscribe.py [COUNT]

Needs the `varlink` package (pip install varlink). REACHD_SOCKET picks the socket.
"""
import os
import sys

import varlink

socket = os.environ.get("REACHD_SOCKET", "/run/reachd/io.reachd.Reachability")
count = int(sys.argv[1]) if len(sys.argv) > 1 else None

with varlink.Client(address="unix:" + socket) as client, \
        client.open("io.reachd.Reachability", namespaced=True) as reachd:
    for seen, reply in enumerate(reachd.Subscribe(_more=True), start=1):
        path = reply.path
        why = getattr(path, "unsatisfiedReason", None) or getattr(path, "primaryInterface", "")
        # A satisfied path whose traffic stalls says so: connectivity limited, cause dataStall.
        cause = getattr(path, "connectivityCause", None)
        connectivity = path.connectivity + (f" ({cause})" if cause else "")
        # On an IPv6-only network with a NAT64, IPv4 destinations are reached through a prefix:
        # connect to the RFC 6052 address under it (reachctl check 192.0.2.1 shows which).
        nat64 = getattr(path, "ipv4ViaNAT64", None)
        extra = [f"ipv4-via-nat64={nat64.prefix}"] if nat64 else []
        # Or by a CLAT (464XLAT) on this host, translating onto the IPv6 uplink.
        if getattr(path, "ipv4ProvidedBy", None) == "clat":
            extra.append("ipv4-via-clat")
        # How good the link is, from the host's own TCP traffic (for tuning, never gating).
        quality = getattr(path, "linkQuality", None)
        if quality and quality != "unknown":
            extra.append(f"link-quality={quality}")
        print(reply.sequence, path.status, why, connectivity, ",".join(reply.changes), *extra, flush=True)
        if count is not None and seen >= count:
            break
