#!/usr/bin/env python3
"""A stand-in for reachd that answers each call with a canned reply, for tests of what
reachctl prints (whatever the replies carry).

    canned_reachd.py SOCKET REPLIES.json

REPLIES.json maps a method name to the parameters of its reply, or to an error reply
({"error": NAME, "parameters": {...}}). A call with "more" (a subscription) gets its reply
with "continues": true, and the connection stays open. Prints "ready" once listening.
"""
import json
import sys

from varlink_stub import method_not_found, serve_forever

path, replies_path = sys.argv[1], sys.argv[2]
with open(replies_path, encoding="utf-8") as replies_file:
    replies = json.load(replies_file)


def answer(call):
    reply = replies.get(call["method"])
    if reply is None:
        return method_not_found(call)
    if "error" in reply:
        return reply
    message = {"parameters": reply}
    if call.get("more"):
        message["continues"] = True
    return message


serve_forever(path, answer)
