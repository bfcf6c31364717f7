#!/usr/bin/python3
"""An app's view of the network: Gio.NetworkMonitor.get_default(), as GLib apps use it.

Prints one JSON line at start and one on every network-changed:
  {"event": "start"|"changed", "type": GType name, "available": bool,
   "connectivity": "full"|"portal"|"limited"|"local", "metered": bool, "elapsed": seconds}
("elapsed", at start: how long get_default() took; "changes": network-changed so far;
"signalled", on "changed": the signal's own argument).
Reads commands from stdin, one a line:
  reach HOST      can_reach_async(GNetworkAddress HOST, port 0), then prints
                  {"event": "reach", "host": HOST, "reachable": bool, "error": "domain:nick"|null,
                   "elapsed": seconds}
  reach-address TEXT
                  the same with Gio.InetSocketAddress.new_from_string(TEXT, 0), as an app
                  holding an address (a scope too: fe80::1%eth0) asks; "host" is TEXT
  reach-sync HOST the blocking can_reach(GNetworkAddress HOST, port 0), printed the same
                  with "sync": true; the main loop waits meanwhile, as the app's would
  reach-many N HOST
                  N can_reach_async(HOST) at once, then an unrelated Gio.Task run in a
                  thread and an idle callback; prints {"event": "many-started", "n": N,
                  "taskDelay": s, "idleDelay": s} (how long after the first call each
                  ran: the calls themselves count) once both
                  ran, and {"event": "many-done", "n": N, "elapsed": s, "reached": count,
                  "errors": [...]} when all N answered
  reach-cancel HOST MS
                  can_reach_async(HOST) with a GCancellable cancelled MS ms later; prints
                  {"event": "cancel", "host": HOST, "error": …, "afterCancel": s}
  resolver NAME=ADDR[,ADDR…] …
                  the app's own GResolver from now on (Gio.Resolver.set_default): NAME
                  resolves to those addresses, in that order (a NAME without addresses:
                  G_RESOLVER_ERROR_NOT_FOUND); other names go to GLib's resolver; prints
                  {"event": "resolver", "names": [...]}
  proxy URI       the app's own GProxyResolver (on the gio-proxy-resolver extension point,
                  before anything asked for the default one): every URI goes through URI
                  (e.g. socks5://proxy.test:1080); prints {"event": "proxy", "type": GType}
  resolve HOST    the default GResolver's addresses for HOST, in its order:
                  {"event": "resolve", "host": HOST, "addresses": [...], "error": …}
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


def say(**line):
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


class AppResolver(Gio.Resolver):
    """A GResolver of the app's own: names it was given, the rest from GLib's resolver."""

    __gtype_name__ = "GioMonitorAppResolver"

    def __init__(self, names, fallback):
        super().__init__()
        self.names = names
        self.fallback = fallback
        self.pending = {}

    def answer(self, hostname, flags):
        if hostname not in self.names:
            return self.fallback.lookup_by_name_with_flags(hostname, flags, None)
        addresses = [Gio.InetAddress.new_from_string(text) for text in self.names[hostname]]
        if flags & Gio.ResolverNameLookupFlags.IPV4_ONLY:
            addresses = [a for a in addresses if a.get_family() == Gio.SocketFamily.IPV4]
        if flags & Gio.ResolverNameLookupFlags.IPV6_ONLY:
            addresses = [a for a in addresses if a.get_family() == Gio.SocketFamily.IPV6]
        if not addresses:
            raise GLib.Error.new_literal(Gio.resolver_error_quark(), f"no address for {hostname}", Gio.ResolverError.NOT_FOUND)
        return addresses

    def do_lookup_by_name(self, hostname, cancellable):
        return self.answer(hostname, Gio.ResolverNameLookupFlags.DEFAULT)

    def do_lookup_by_name_with_flags(self, hostname, flags, cancellable):
        return self.answer(hostname, flags)

    def start(self, hostname, flags, cancellable, callback):
        # The callback PyGObject hands a vfunc has its user data bound already.
        task = Gio.Task.new(self, cancellable, lambda source, result, data: callback(source, result), None)
        try:
            self.pending[task] = (self.answer(hostname, flags), None)
        except GLib.Error as error:
            self.pending[task] = (None, error)
        task.return_boolean(True)

    def do_lookup_by_name_async(self, hostname, cancellable, callback, *user_data):
        self.start(hostname, Gio.ResolverNameLookupFlags.DEFAULT, cancellable, callback)

    def do_lookup_by_name_with_flags_async(self, hostname, flags, cancellable, callback, *user_data):
        self.start(hostname, flags, cancellable, callback)

    def finish(self, result):
        addresses, error = self.pending.pop(result)
        if error is not None:
            raise error
        return addresses

    def do_lookup_by_name_finish(self, result):
        return self.finish(result)

    def do_lookup_by_name_with_flags_finish(self, result):
        return self.finish(result)


class AppProxyResolver(Gio.SimpleProxyResolver):
    """GSimpleProxyResolver (which has no is_supported) on the extension point."""

    __gtype_name__ = "GioMonitorAppProxyResolver"

    def do_is_supported(self):
        return True


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

    def outcome(finish, result):
        try:
            return finish(result), None
        except GLib.Error as failure:
            return False, error_name(failure)

    def reach_async(connectable, host):
        started = time.monotonic()

        def reached(monitor, result, _):
            reachable, error = outcome(monitor.can_reach_finish, result)
            say(event="reach", host=host, reachable=reachable, error=error, elapsed=round(time.monotonic() - started, 4))

        monitor.can_reach_async(connectable, None, reached, None)

    def reach_sync(host):
        started = time.monotonic()
        reachable, error = outcome(lambda connectable: monitor.can_reach(connectable, None), Gio.NetworkAddress.new(host, 0))
        say(event="reach", host=host, reachable=reachable, error=error, elapsed=round(time.monotonic() - started, 4), sync=True)

    def reach_many(count, host):
        started = time.monotonic()
        answers = []
        delays = {}

        def reached(monitor, result, _):
            answers.append(outcome(monitor.can_reach_finish, result))
            if len(answers) == count:
                say(event="many-done", n=count, elapsed=round(time.monotonic() - started, 4),
                    reached=sum(1 for reachable, _ in answers if reachable),
                    errors=sorted({error for _, error in answers if error is not None}))

        def record(name, delay):
            delays[name] = round(delay, 4)
            if len(delays) == 2:
                say(event="many-started", n=count, taskDelay=delays["task"], idleDelay=delays["idle"])
            return GLib.SOURCE_REMOVE

        for _ in range(count):
            monitor.can_reach_async(Gio.NetworkAddress.new(host, 0), None, reached, None)

        def in_thread(task, source, data, cancellable):
            delay = time.monotonic() - started
            GLib.idle_add(record, "task", delay)  # thread-safe: recorded on the main loop
            task.return_boolean(True)

        task = Gio.Task.new(None, None, lambda source, result, data: None, None)
        task.run_in_thread(in_thread)
        GLib.idle_add(lambda: record("idle", time.monotonic() - started))

    def reach_cancel(host, milliseconds):
        cancellable = Gio.Cancellable()
        cancelled = []

        def reached(monitor, result, _):
            reachable, error = outcome(monitor.can_reach_finish, result)
            after = round(time.monotonic() - cancelled[0], 4) if cancelled else None
            say(event="cancel", host=host, reachable=reachable, error=error, afterCancel=after)

        def cancel():
            cancelled.append(time.monotonic())
            cancellable.cancel()
            return GLib.SOURCE_REMOVE

        monitor.can_reach_async(Gio.NetworkAddress.new(host, 0), cancellable, reached, None)
        GLib.timeout_add(milliseconds, cancel)

    def install_resolver(words):
        names = {}
        for word in words:
            name, _, addresses = word.partition("=")
            names[name] = [text for text in addresses.split(",") if text]
        Gio.Resolver.set_default(AppResolver(names, Gio.Resolver.get_default()))
        say(event="resolver", names=sorted(names))

    def install_proxy(uri):
        Gio.IOExtensionPoint.implement(Gio.PROXY_RESOLVER_EXTENSION_POINT_NAME, AppProxyResolver.__gtype__, "gio-monitor-test", 10000)
        resolver = Gio.ProxyResolver.get_default()
        if isinstance(resolver, Gio.SimpleProxyResolver):
            resolver.set_default_proxy(uri)
        say(event="proxy", uri=uri, type=type(resolver).__gtype__.name)

    def resolve(host):
        try:
            addresses = [a.to_string() for a in Gio.Resolver.get_default().lookup_by_name(host, None)]
            say(event="resolve", host=host, addresses=addresses, error=None)
        except GLib.Error as failure:
            say(event="resolve", host=host, addresses=[], error=error_name(failure))

    def command(words):
        if words[:1] == ["reach"] and len(words) == 2:
            reach_async(Gio.NetworkAddress.new(words[1], 0), words[1])
        elif words[:1] == ["reach-address"] and len(words) == 2:
            address = Gio.InetSocketAddress.new_from_string(words[1], 0)
            if address is None:
                say(event="reach", host=words[1], reachable=False, error="not an address", elapsed=0)
            else:
                reach_async(address, words[1])
        elif words[:1] == ["reach-sync"] and len(words) == 2:
            reach_sync(words[1])
        elif words[:1] == ["reach-many"] and len(words) == 3:
            reach_many(int(words[1]), words[2])
        elif words[:1] == ["reach-cancel"] and len(words) == 3:
            reach_cancel(words[1], int(words[2]))
        elif words[:1] == ["resolver"]:
            install_resolver(words[1:])
        elif words[:1] == ["proxy"] and len(words) == 2:
            install_proxy(words[1])
        elif words[:1] == ["resolve"] and len(words) == 2:
            resolve(words[1])
        elif words[:1] == ["state"]:
            emit("state", monitor)

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
            command(line.decode().split())
        return GLib.SOURCE_CONTINUE

    GLib.unix_fd_add_full(GLib.PRIORITY_DEFAULT, 0, GLib.IOCondition.IN | GLib.IOCondition.HUP, on_input)
    loop.run()


if __name__ == "__main__":
    sys.exit(main())
