#!/usr/bin/python3
"""A stand-in logind on a private system bus: Manager.Inhibit and PrepareForSleep, what
reachd's SleepSource uses.

usage: logind_stub.py BUS_ADDRESS
  Owns org.freedesktop.login1 and prints {"event": "ready", "name": UNIQUE} once it does.
  Inhibit(ssss) -> h hands out the write end of a pipe and prints {"event": "inhibited",
  "id": N, "sender": ..., "what": ..., "who": ..., "why": ..., "mode": ...}; when the client
  closes it, {"event": "released", "id": N}. Commands from stdin, one a line:
    sleep   PrepareForSleep(true)
    wake    PrepareForSleep(false)
  each answered {"event": "done"}. Ends at end of input (logind stopping).
usage: logind_stub.py BUS_ADDRESS foreign DESTINATION
  Connects under a unique name of its own, sends PrepareForSleep(true) to DESTINATION
  directly (a unicast signal), prints {"event": "sent", "sender": UNIQUE} and ends.
Run with /usr/bin/python3 (python3-gi).
"""
import json
import os
import sys

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

PATH = "/org/freedesktop/login1"
MANAGER = "org.freedesktop.login1.Manager"
XML = """<node>
  <interface name="org.freedesktop.login1.Manager">
    <method name="Inhibit">
      <arg name="what" type="s" direction="in"/>
      <arg name="who" type="s" direction="in"/>
      <arg name="why" type="s" direction="in"/>
      <arg name="mode" type="s" direction="in"/>
      <arg name="fd" type="h" direction="out"/>
    </method>
    <signal name="PrepareForSleep"><arg name="start" type="b"/></signal>
  </interface>
</node>"""


def say(**fields):
    print(json.dumps(fields), flush=True)


def connect(address):
    return Gio.DBusConnection.new_for_address_sync(
        address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)


def foreign(address, destination):
    connection = connect(address)
    connection.emit_signal(destination, PATH, MANAGER, "PrepareForSleep", GLib.Variant("(b)", (True,)))
    connection.flush_sync(None)
    say(event="sent", sender=connection.get_unique_name())


def main():
    address = sys.argv[1]
    if sys.argv[2:3] == ["foreign"]:
        return foreign(address, sys.argv[3])
    info = Gio.DBusNodeInfo.new_for_xml(XML)
    connection = connect(address)
    loop = GLib.MainLoop()
    taken = [0]

    def released(fd, _condition, number):
        os.close(fd)
        say(event="released", id=number)
        return False

    def method(_connection, sender, _path, _interface, name, parameters, invocation):
        if name != "Inhibit":
            invocation.return_dbus_error("org.freedesktop.DBus.Error.UnknownMethod", name)
            return
        what, who, why, mode = parameters.unpack()
        read, write = os.pipe()
        fds = Gio.UnixFDList.new()
        fds.append(write)  # dups it: the client's copy is then the only write end
        os.close(write)
        taken[0] += 1
        # The write end's last close is HUP on the read end, as logind sees its FIFO.
        GLib.unix_fd_add_full(GLib.PRIORITY_DEFAULT, read, GLib.IOCondition.HUP | GLib.IOCondition.ERR, released, taken[0])
        invocation.return_value_with_unix_fd_list(GLib.Variant("(h)", (0,)), fds)
        say(event="inhibited", id=taken[0], sender=sender, what=what, who=who, why=why, mode=mode)

    def command(_source, _condition):
        line = sys.stdin.readline()
        if not line:
            loop.quit()
            return False
        if line.split() in (["sleep"], ["wake"]):
            connection.emit_signal(None, PATH, MANAGER, "PrepareForSleep", GLib.Variant("(b)", (line.split() == ["sleep"],)))
            connection.flush_sync(None)
        say(event="done")
        return True

    def acquired(_connection, _name):
        say(event="ready", name=connection.get_unique_name())

    connection.register_object(PATH, info.interfaces[0], method, None, None)
    Gio.bus_own_name_on_connection(connection, "org.freedesktop.login1", Gio.BusNameOwnerFlags.NONE, acquired, None)
    GLib.io_add_watch(sys.stdin, GLib.PRIORITY_DEFAULT, GLib.IO_IN | GLib.IO_HUP, command)
    loop.run()


if __name__ == "__main__":
    main()
