"""A delay line for the link-quality tests (this kernel has no netem): a tun device whose
packets are held DELAY_MS and written back, so the kernel forwards them on as if they had
just arrived on it. Policy routing in the router sends what it forwards into the tun.

  delay_line.py NAME DELAY_MS     create tun NAME, print "ready", delay until killed
"""
import fcntl
import heapq
import os
import select
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000


def main(name, delay):
    tun = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(tun, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    print("ready", flush=True)
    held = []
    sequence = 0
    while True:
        timeout = max(0.0, held[0][0] - time.monotonic()) if held else None
        readable, _, _ = select.select([tun], [], [], timeout)
        if readable:
            packet = os.read(tun, 65536)
            # At most 10,000 held: a flood is dropped, not buffered without bound.
            if len(held) < 10000:
                heapq.heappush(held, (time.monotonic() + delay, sequence, packet))
                sequence += 1
        now = time.monotonic()
        while held and held[0][0] <= now:
            os.write(tun, heapq.heappop(held)[2])


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) / 1000)
