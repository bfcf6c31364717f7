#!/usr/bin/python3
"""A Qt app's view of the network: QNetworkInformation, as Qt apps use it (PyQt6, no display).

    qt_network.py --backend NAME    QNetworkInformation.loadBackendByName(NAME) (Qt >= 6.4;
                                    load(NAME) before)
    qt_network.py --default         QNetworkInformation.loadDefaultBackend(): Qt picks (6.7
                                    and later: NetworkManager's backend where NM runs, else
                                    the one with the most features that has Reachability)

Prints one line at start and one per signal (reachabilityChanged,
isBehindCaptivePortalChanged, isMeteredChanged), each with the state then:

    EVENT reachability=R portal=BOOL metered=BOOL backend=NAME

EVENT is "start" (followed by "qt=VERSION loaded-by=name|default backends=A,B
features=F,G pid=PID": Qt's version, how the backend was loaded, the backends Qt found, the
features the loaded one supports, this process),
"reachability", "portal" or "metered". R is Qt's Reachability name: Unknown, Disconnected,
Local, Site, Online. If no backend loads it prints "load-failed …" and exits 1. Runs until
killed. Qt's glib backend reads GLib's default GNetworkMonitor (g_network_monitor_get_default)
on notify::connectivity (LOCAL -> Disconnected, LIMITED and PORTAL -> Site, FULL -> Online;
PORTAL -> behind a captive portal) and, in Qt 6.8 (not yet 6.4), notify::network-metered.
"""
import os
import sys

from PyQt6.QtCore import QCoreApplication, QLibraryInfo
from PyQt6.QtNetwork import QNetworkInformation


def state(info):
    metered = info.isMetered() if hasattr(info, "isMetered") else "n/a"
    return "reachability=%s portal=%s metered=%s backend=%s" % (
        info.reachability().name, info.isBehindCaptivePortal(), metered, info.backendName())


def main():
    app = QCoreApplication(sys.argv)
    if sys.argv[1:2] == ["--default"]:
        how, loaded = "default", QNetworkInformation.loadDefaultBackend()
    elif sys.argv[1:2] == ["--backend"] and len(sys.argv) == 3:
        load = getattr(QNetworkInformation, "loadBackendByName", None) or QNetworkInformation.load
        how, loaded = "name", load(sys.argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 64
    backends = ",".join(QNetworkInformation.availableBackends())
    version = QLibraryInfo.version().toString()
    info = QNetworkInformation.instance()
    if not loaded or info is None:
        print("load-failed qt=%s loaded-by=%s backends=%s" % (version, how, backends), flush=True)
        return 1

    def emit(event):
        print(event, state(info), flush=True)

    info.reachabilityChanged.connect(lambda _: emit("reachability"))
    info.isBehindCaptivePortalChanged.connect(lambda _: emit("portal"))
    if hasattr(info, "isMeteredChanged"):
        info.isMeteredChanged.connect(lambda _: emit("metered"))
    features = ",".join(f.name for f in QNetworkInformation.Feature if info.supports(f))
    print("start", state(info), "qt=%s loaded-by=%s backends=%s features=%s pid=%d" % (
        version, how, backends, features, os.getpid()), flush=True)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
