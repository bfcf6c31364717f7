#!/usr/bin/env python3
"""Holds slow connections to reachd's metrics endpoint while a scraper scrapes it.

    slow_metrics_clients.py tcp HOST:PORT ATTACKER_SOURCE SLOW SCRAPES SECONDS
    slow_metrics_clients.py unix PATH ATTACKER_UID SLOW SCRAPES SECONDS

The attacker (one peer: one source address, or one uid on a Unix socket) keeps SLOW
connections open, each sending a request head one byte every 0.5 s and reconnecting as
soon as reachd closes it. Meanwhile the scraper makes SCRAPES scrapes spread over
SECONDS, each with a 2 s timeout; on TCP it connects from 127.0.0.1, which may be the
attacker's address too. Prints one JSON line: scrapes that succeeded and failed, how many
connections the attacker made and how long they stayed open, and what reachd's
reachd_connections_refused_total counts by the metrics endpoint's limits at the end.
"""
import json
import os
import select
import socket
import sys
import threading
import time

kind, where, attacker, slow, scrapes, seconds = sys.argv[1:7]
slow, scrapes, seconds = int(slow), int(scrapes), float(seconds)
HEAD = b"GET /metrics HTTP/1.1\r\nHost: reachd\r\nUser-Agent: " + b"s" * 200 + b"\r\n\r\n"


def connect(source=None):
    if kind == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2)
        s.connect(where)
        return s
    host, port = where.rsplit(":", 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    if source:
        s.bind((source, 0))
    s.connect((host, int(port)))
    return s


def attack(stop, held):
    """One slow connection, renewed whenever reachd ends it."""
    while not stop.is_set():
        try:
            s = connect(attacker if kind == "tcp" else None)
        except OSError:
            time.sleep(0.01)
            continue
        opened = time.monotonic()
        try:
            for byte in HEAD[:-2]:  # never finishes the head
                if stop.is_set():
                    break
                s.sendall(bytes([byte]))
                # Half a second, less if reachd ends the connection: the attacker reconnects at once.
                if select.select([s], [], [], 0.5)[0]:
                    break
        except OSError:
            pass
        finally:
            held.append(time.monotonic() - opened)
            s.close()
        time.sleep(0.01)


def scrape():
    """One scrape: (None, the exposition) if it succeeded, else (what went wrong, b"")."""
    data = b""
    try:
        s = connect()
        s.sendall(HEAD)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
    except OSError as error:
        return f"{type(error).__name__} after {len(data)} bytes", b""
    if data.startswith(b"HTTP/1.1 200") and b"reachd_path_satisfied" in data:
        return None, data
    return f"closed after {len(data)} bytes: {data[:40]!r}", b""


def counted(exposition, reason):
    """The value of reachd_connections_refused_total{reason=...}, 0 if it has no series."""
    prefix = f'reachd_connections_refused_total{{reason="{reason}"}} '.encode()
    for line in exposition.splitlines():
        if line.startswith(prefix):
            return float(line[len(prefix):])
    return 0.0


def main():
    stop, held = threading.Event(), []
    if kind == "unix":
        pid = os.fork()
        if pid == 0:  # the attacker: another uid than the scraper's
            os.setgroups([])
            os.setgid(int(attacker))
            os.setuid(int(attacker))
            threads = [threading.Thread(target=attack, args=(stop, held), daemon=True) for _ in range(slow)]
            for t in threads:
                t.start()
            time.sleep(seconds + 1.5)
            stop.set()
            os._exit(0)
    else:
        threads = [threading.Thread(target=attack, args=(stop, held), daemon=True) for _ in range(slow)]
        for t in threads:
            t.start()
    time.sleep(1)  # let the slow connections take their slots
    ok = failed = 0
    started = time.monotonic()
    for index in range(scrapes):
        failure, _ = scrape()
        if failure is None:
            ok += 1
        else:
            failed += 1
            print(f"scrape {index + 1} failed at {time.monotonic() - started:.2f} s: {failure}", flush=True)
        wait = started + (index + 1) * seconds / scrapes - time.monotonic()
        if wait > 0:
            time.sleep(wait)
    stop.set()
    if kind == "unix":
        os.waitpid(pid, 0)
    time.sleep(0.6)  # the attackers notice the stop
    _, exposition = scrape()
    longest = max(held) if held else 0.0
    print(json.dumps({
        "ok": ok, "failed": failed, "slow_connections": len(held), "longest_held": round(longest, 2),
        "counted_per_peer": counted(exposition, "metrics connections per peer"),
        "counted_total": counted(exposition, "metrics connections"),
        "counted_head_deadline": counted(exposition, "metrics request deadline"),
    }))


main()
