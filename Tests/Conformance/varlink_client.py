#!/usr/bin/env python3
"""Drives reachd with the `varlink` package from PyPI, a client nobody here wrote.

It introspects (org.varlink.service.GetInterfaceDescription, parsed by the package's
own IDL parser), then calls GetStatus and Subscribe with more=true."""
import sys

import varlink

address = sys.argv[1]
with varlink.Client(address=address) as client:
    info = client.get_interfaces()
    assert "io.reachd.Reachability" in info, info
    with client.open("io.reachd.Reachability", namespaced=False) as reach:
        status = reach.GetStatus()
        assert status["path"]["status"] in ("satisfied", "unsatisfied", "requiresConnection"), status
        assert isinstance(status["sequence"], int) and status["instance"], status
        interfaces = reach.ListInterfaces()
        assert any(i["name"] == "lo" for i in interfaces["interfaces"]), interfaces
        for reply in reach.Subscribe(_more=True):
            assert reply["path"]["status"] == status["path"]["status"], reply
            break
    print("conformance: ok", status["path"]["status"], status["path"].get("primaryInterface"))
