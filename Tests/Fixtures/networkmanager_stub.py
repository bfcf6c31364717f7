#!/usr/bin/python3
"""A stand-in NetworkManager on a private system bus: the D-Bus objects and properties reachd
reads (docs/gio-module.md, "Where NetworkManager runs"), with one device.

usage: networkmanager_stub.py BUS_ADDRESS INTERFACE METERED IP4 IP6
  METERED: NMMetered (0 unknown, 1 yes, 2 no, 3 guess-yes, 4 guess-no)
  IP4, IP6: NMConnectivityState (0 unknown, 1 none, 2 portal, 3 limited, 4 full)
Owns org.freedesktop.NetworkManager and prints "ready" once it does. Reads commands from
stdin, one a line:
  set PROPERTY VALUE   a device property (a number), then PropertiesChanged as NM emits it
  noise                a PropertiesChanged reachd must not read again for (statistics)
Ends at end of input (NetworkManager stopping). Run with /usr/bin/python3 (python3-gi).
"""
import sys

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

ROOT = "/org/freedesktop/NetworkManager"
DEVICE = ROOT + "/Devices/1"
XML = """<node>
  <interface name="org.freedesktop.NetworkManager">
    <property name="Devices" type="ao" access="read"/>
    <property name="Connectivity" type="u" access="read"/>
  </interface>
  <interface name="org.freedesktop.NetworkManager.Device">
    <property name="Interface" type="s" access="read"/>
    <property name="IpInterface" type="s" access="read"/>
    <property name="State" type="u" access="read"/>
    <property name="Metered" type="u" access="read"/>
    <property name="Ip4Connectivity" type="u" access="read"/>
    <property name="Ip6Connectivity" type="u" access="read"/>
    <property name="Mtu" type="u" access="read"/>
  </interface>
</node>"""


def main():
    address, interface, metered, ip4, ip6 = sys.argv[1:6]
    device = {"Interface": interface, "IpInterface": interface, "State": 100, "Metered": int(metered),
              "Ip4Connectivity": int(ip4), "Ip6Connectivity": int(ip6), "Mtu": 1500}
    info = Gio.DBusNodeInfo.new_for_xml(XML)
    connection = Gio.DBusConnection.new_for_address_sync(
        address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)

    def variant(name, value):
        return GLib.Variant("s" if isinstance(value, str) else "u", value)

    def root_property(_c, _s, _p, _i, name):
        if name == "Devices":
            return GLib.Variant("ao", [DEVICE])
        return GLib.Variant("u", max(device["Ip4Connectivity"], device["Ip6Connectivity"]))

    def device_property(_c, _s, _p, _i, name):
        return variant(name, device[name])

    connection.register_object(ROOT, info.interfaces[0], None, root_property, None)
    connection.register_object(DEVICE, info.interfaces[1], None, device_property, None)
    loop = GLib.MainLoop()

    def changed(name):
        body = GLib.Variant("(sa{sv}as)", (info.interfaces[1].name, {name: variant(name, device[name])}, []))
        connection.emit_signal(None, DEVICE, "org.freedesktop.DBus.Properties", "PropertiesChanged", body)

    def command(_source, condition):
        line = sys.stdin.readline()
        if not line:
            loop.quit()
            return False
        words = line.split()
        if words[:1] == ["set"] and len(words) == 3:
            device[words[1]] = int(words[2])
            changed(words[1])
        elif words == ["noise"]:
            device["Mtu"] += 1
            changed("Mtu")
        connection.flush_sync(None)
        print("done", flush=True)
        return True

    def acquired(_connection, _name):
        print("ready", flush=True)

    Gio.bus_own_name_on_connection(connection, "org.freedesktop.NetworkManager", Gio.BusNameOwnerFlags.NONE, acquired, None)
    GLib.io_add_watch(sys.stdin, GLib.PRIORITY_DEFAULT, GLib.IO_IN | GLib.IO_HUP, command)
    loop.run()


if __name__ == "__main__":
    main()
