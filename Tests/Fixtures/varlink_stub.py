"""What the Varlink stand-ins for system services share: listen on a Unix socket, print
"ready", and answer each NUL-terminated call with answer(call) (a reply object)."""
import json
import os
import socket
import threading


def listen(path, backlog=16):
    """A Unix stream socket listening at path (a file left there is replaced); prints "ready"."""
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(backlog)
    print("ready", flush=True)
    return server


def serve_forever(path, answer):
    server = listen(path)

    def serve(connection):
        buffer = b""
        while True:
            data = connection.recv(65536)
            if not data:
                return
            buffer += data
            while b"\0" in buffer:
                message, _, buffer = buffer.partition(b"\0")
                connection.sendall(json.dumps(answer(json.loads(message))).encode() + b"\0")

    while True:
        connection, _ = server.accept()
        threading.Thread(target=serve, args=(connection,), daemon=True).start()


def method_not_found(call):
    return {"error": "org.varlink.service.MethodNotFound", "parameters": {"method": call["method"]}}
