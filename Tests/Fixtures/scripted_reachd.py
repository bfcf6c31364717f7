#!/usr/bin/env python3
"""A stand-in for reachd whose SubscribeSummary stream the test writes, byte for byte, for
tests of the GIO module (Tests/IntegrationTests/GIOModuleGuestTests.swift).

    scripted_reachd.py SOCKET SCRIPT.json

SCRIPT.json (every key optional):
  "summary"      the SubscribeSummary replies' parameters sent to each SubscribeSummary
                 call at once, e.g. [{"status": "satisfied", "connectivity": "full",
                 "isExpensive": false, "isConstrained": false}] (the default); each with
                 "continues": true
  "namespace"    GetNetworkNamespace's answer: "own" (default: {"inode": N}, N the st_ino of
                 this process's /proc/self/ns/net), "missing" (MethodNotFound) or a number
  "checkTarget"  "never" (default: the call is read and never answered) or the reply's
                 parameters
Any other method: MethodNotFound. The replies to all the calls one read brought go out in
ONE write: a pipelined GetNetworkNamespace and SubscribeSummary get the inode and then
every "summary" reply in one.

Prints "ready" once listening, then one JSON line per event:
  {"event": "call", "method": M, "connection": K}     a call was read
  {"event": "closed", "connection": K}                 a client went away
  {"event": "sent", "subscribers": N}                  a command's replies are all out
Reads commands from stdin, one JSON object a line:
  {"send": [PARAMETERS, ...]}                  these SubscribeSummary replies to every open
                                               stream, in one write
  {"send": [...], "split": MS}                 the same bytes one at a time, MS ms apart
"""
import json
import os
import sys
import threading
import time

from varlink_stub import listen

path, script_path = sys.argv[1], sys.argv[2]
with open(script_path, encoding="utf-8") as script_file:
    script = json.load(script_file)

SATISFIED = {"status": "satisfied", "connectivity": "full", "isExpensive": False, "isConstrained": False}
summary = script.get("summary", [SATISFIED])
namespace = script.get("namespace", "own")
check_target = script.get("checkTarget", "never")

output = threading.Lock()
streams = {}  # connection number -> (socket, its write lock)
streams_lock = threading.Lock()


def say(**line):
    with output:
        print(json.dumps(line), flush=True)


def frame(message):
    return json.dumps(message).encode() + b"\0"


def summary_reply(parameters):
    return frame({"parameters": parameters, "continues": True})


def answer(call, number, connection, lock):
    """The bytes that answer one call (b"" for a call left unanswered)."""
    method = call.get("method", "")
    if method == "io.reachd.Reachability.GetNetworkNamespace" and namespace != "missing":
        inode = os.stat("/proc/self/ns/net").st_ino if namespace == "own" else int(namespace)
        return frame({"parameters": {"inode": inode}})
    if method == "io.reachd.Reachability.SubscribeSummary":
        with streams_lock:
            streams[number] = (connection, lock)
        return b"".join(summary_reply(parameters) for parameters in summary)
    if method == "io.reachd.Reachability.CheckTarget":
        return b"" if check_target == "never" else frame({"parameters": check_target})
    return frame({"error": "org.varlink.service.MethodNotFound", "parameters": {"method": method}})


def serve(connection, number):
    lock = threading.Lock()
    buffer = b""
    try:
        while True:
            data = connection.recv(65536)
            if not data:
                break
            buffer += data
            replies = b""
            while b"\0" in buffer:
                message, _, buffer = buffer.partition(b"\0")
                call = json.loads(message)
                say(event="call", method=call.get("method"), connection=number)
                replies += answer(call, number, connection, lock)
            if replies:
                with lock:
                    connection.sendall(replies)
    except OSError:
        pass
    with streams_lock:
        streams.pop(number, None)
    say(event="closed", connection=number)
    connection.close()


def send(command):
    data = b"".join(summary_reply(parameters) for parameters in command["send"])
    split = command.get("split")
    with streams_lock:
        targets = list(streams.values())
    for connection, lock in targets:
        try:
            with lock:
                if split is None:
                    connection.sendall(data)
                else:
                    for index in range(len(data)):
                        connection.sendall(data[index:index + 1])
                        time.sleep(split / 1000)
        except OSError:
            pass
    say(event="sent", subscribers=len(targets))


def commands():
    for line in sys.stdin:
        if line.strip():
            send(json.loads(line))
    os._exit(0)  # end of input: the test is done with us


server = listen(path, 64)
threading.Thread(target=commands, daemon=True).start()
count = 0
while True:
    client, _ = server.accept()
    count += 1
    threading.Thread(target=serve, args=(client, count), daemon=True).start()
