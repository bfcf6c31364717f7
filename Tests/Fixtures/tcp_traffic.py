"""TCP traffic for the data-stall tests, the ground truth they hold reachd against.

  receive PORT COUNTFILE       accept connections, discard what comes, keep the byte total in COUNTFILE
  send HOSTS PORT [SOURCE]     send 8 KiB every 5 ms to each of HOSTS:PORT (comma-separated; from SOURCE),
                               reconnecting when cut off
  trickle PORT RATE            accept connections and send each RATE bytes a second, in tenths
  download HOST PORT COUNTFILE read from HOST:PORT, keeping the byte total in COUNTFILE
  chat HOST PORT               send one byte a second to HOST:PORT (app-limited traffic)
  connect HOSTS PORT COUNTFILE open a new connection every 0.5 s (a page's requests), to each of HOSTS
                               in turn, keeping the number that connected in COUNTFILE
  answer PORT LOGFILE          accept connections, read a request, answer 204 and close; append each
                               acceptance's wall-clock time (seconds since the epoch) to LOGFILE
  get HOSTS PORT COUNTFILE     a GET every 0.3 s, to each of HOSTS in turn, on a new connection that
                               waits up to 30 s for its SYN's answer (as curl and browsers do), reads the
                               answer and closes; keeps the number answered in COUNTFILE

Server modes print "ready" once they listen.
"""
import os
import socket
import sys
import threading
import time


def write_count(path, total):
    temporary = path + ".tmp"
    with open(temporary, "w") as handle:
        handle.write(str(total))
    os.replace(temporary, path)


def receive(port, count_file):
    listener = socket.create_server(("0.0.0.0", port), reuse_port=True)
    total = [0]
    lock = threading.Lock()

    def serve(connection):
        with connection:
            while True:
                data = connection.recv(65536)
                if not data:
                    return
                with lock:
                    total[0] += len(data)

    def report():
        while True:
            with lock:
                write_count(count_file, total[0])
            time.sleep(0.1)

    threading.Thread(target=report, daemon=True).start()
    print("ready", flush=True)
    while True:
        connection, _ = listener.accept()
        threading.Thread(target=serve, args=(connection,), daemon=True).start()


def send(hosts, port, source=None):
    chunk = b"x" * 8192

    def upload(host):
        while True:
            try:
                connection = socket.create_connection((host, port), source_address=(source, 0) if source else None)
                while True:
                    connection.sendall(chunk)
                    time.sleep(0.005)
            except OSError:
                time.sleep(0.2)

    for host in hosts[1:]:
        threading.Thread(target=upload, args=(host,), daemon=True).start()
    upload(hosts[0])


def trickle(port, rate):
    listener = socket.create_server(("0.0.0.0", port), reuse_port=True)
    piece = b"y" * max(1, rate // 10)

    def serve(connection):
        with connection:
            try:
                while True:
                    connection.sendall(piece)
                    time.sleep(0.1)
            except OSError:
                return

    print("ready", flush=True)
    while True:
        connection, _ = listener.accept()
        threading.Thread(target=serve, args=(connection,), daemon=True).start()


def download(host, port, count_file):
    connection = socket.create_connection((host, port))
    total = 0
    last = 0.0
    while True:
        data = connection.recv(65536)
        if not data:
            return
        total += len(data)
        if time.monotonic() - last > 0.1:
            write_count(count_file, total)
            last = time.monotonic()


def connect(hosts, port, count_file):
    connected = [0]
    lock = threading.Lock()

    def attempt(host):
        try:
            with socket.create_connection((host, port), timeout=60):
                with lock:
                    connected[0] += 1
                    write_count(count_file, connected[0])
        except OSError:
            pass

    turn = 0
    while True:
        threading.Thread(target=attempt, args=(hosts[turn % len(hosts)],), daemon=True).start()
        turn += 1
        time.sleep(0.5)


def answer(port, log_file):
    listener = socket.create_server(("0.0.0.0", port), reuse_port=True)
    lock = threading.Lock()

    def serve(connection):
        with connection:
            try:
                connection.recv(4096)
                connection.sendall(b"HTTP/1.0 204 No Content\r\n\r\n")
            except OSError:
                return

    print("ready", flush=True)
    with open(log_file, "a") as log:
        while True:
            connection, _ = listener.accept()
            with lock:
                log.write(f"{time.time():.3f}\n")
                log.flush()
            threading.Thread(target=serve, args=(connection,), daemon=True).start()


def get(hosts, port, count_file):
    answered = [0]
    lock = threading.Lock()

    def request(host):
        try:
            with socket.create_connection((host, port), timeout=30) as connection:
                connection.sendall(b"GET / HTTP/1.0\r\nHost: " + host.encode() + b"\r\n\r\n")
                while connection.recv(4096):
                    pass
            with lock:
                answered[0] += 1
                write_count(count_file, answered[0])
        except OSError:
            pass

    turn = 0
    while True:
        threading.Thread(target=request, args=(hosts[turn % len(hosts)],), daemon=True).start()
        turn += 1
        time.sleep(0.3)


def chat(host, port):
    connection = socket.create_connection((host, port))
    while True:
        connection.sendall(b"c")
        time.sleep(1)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "receive":
        receive(int(sys.argv[2]), sys.argv[3])
    elif mode == "send":
        send(sys.argv[2].split(","), int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None)
    elif mode == "trickle":
        trickle(int(sys.argv[2]), int(sys.argv[3]))
    elif mode == "connect":
        connect(sys.argv[2].split(","), int(sys.argv[3]), sys.argv[4])
    elif mode == "answer":
        answer(int(sys.argv[2]), sys.argv[3])
    elif mode == "get":
        get(sys.argv[2].split(","), int(sys.argv[3]), sys.argv[4])
    elif mode == "chat":
        chat(sys.argv[2], int(sys.argv[3]))
    elif mode == "download":
        download(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        sys.exit("unknown mode " + mode)
