#!/usr/bin/python3
"""An app's view of the network: Gio.NetworkMonitor.get_default(), as GLib apps use it.

Prints one JSON line at start and one on every network-changed:
  {"event": "start"|"changed", "type": GType name, "available": bool,
   "connectivity": "full"|"portal"|"limited"|"local", "metered": bool, "elapsed": seconds}
("elapsed", at start: how long get_default() took; "changes": network-changed so far).
Reads commands from stdin, one a line:
  reach HOST      can_reach_async(GNetworkAddress HOST, port 0), then prints
                  {"event": "reach", "host": HOST, "reachable": bool, "error": "domain:nick"|null}
  state           prints the properties again ({"event": "state", …})
Ends at end of input. Run with /usr/bin/python3 (python3-gi).
"""
import json
import os
import sys
import time

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

changes = 0


def emit(event, monitor, **extra):
    line = {
        "event": event,
        "type": type(monitor).__gtype__.name,
        "available": monitor.props.network_available,
        "connectivity": monitor.props.connectivity.value_nick,
        "metered": monitor.props.network_metered,
        "changes": changes,
    }
    line.update(extra)
    print(json.dumps(line), flush=True)


def error_name(error):
    domain = error.domain
    nick = str(error.code)
    try:
        if domain == "g-io-error-quark":
            nick = Gio.IOErrorEnum(error.code).value_nick
        elif domain == "g-resolver-error-quark":
            nick = Gio.ResolverError(error.code).value_nick
    except ValueError:
        pass
    return f"{domain}:{nick}"


def main():
    global changes
    start = time.monotonic()
    monitor = Gio.NetworkMonitor.get_default()
    elapsed = time.monotonic() - start
    loop = GLib.MainLoop()

    def changed(monitor, available):
        global changes
        changes += 1
        emit("changed", monitor, signalled=available)

    monitor.connect("network-changed", changed)
    emit("start", monitor, elapsed=round(elapsed, 4))

    def reached(monitor, result, host):
        try:
            reachable, error = monitor.can_reach_finish(result), None
        except GLib.Error as failure:
            reachable, error = False, error_name(failure)
        print(json.dumps({"event": "reach", "host": host, "reachable": reachable, "error": error}), flush=True)

    pending = b""

    def on_input(fd, condition):
        nonlocal pending
        data = os.read(fd, 4096)
        if not data:
            loop.quit()
            return GLib.SOURCE_REMOVE
        pending += data
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            words = line.decode().split()
            if words[:1] == ["reach"] and len(words) == 2:
                monitor.can_reach_async(Gio.NetworkAddress.new(words[1], 0), None, reached, words[1])
            elif words[:1] == ["state"]:
                emit("state", monitor)
        return GLib.SOURCE_CONTINUE

    GLib.unix_fd_add_full(GLib.PRIORITY_DEFAULT, 0, GLib.IOCondition.IN | GLib.IOCondition.HUP, on_input)
    loop.run()


if __name__ == "__main__":
    sys.exit(main())
