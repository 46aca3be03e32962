#!/usr/bin/env python3
"""bench/mem/watch.py SOCKET DOMAIN PID OUT: the allocator experiment's observer.

Subscribes to DOMAIN at antsched memd's SOCKET (the protocol of docs/memd.md: one hello line,
then the severity page and an eventfd over SCM_RIGHTS) and, until PID exits or SIGTERM, writes
to OUT one line per event, times in seconds of CLOCK_MONOTONIC (the clock of the daemon's
record and of the preload library's log):

    rss T KIB          PID's VmRSS, every 10 ms
    wake T S TIER      each wake-up of its eventfd, with the record's S and tier

Its wake-ups come from the same pass of the daemon's loop as those of the preload library's
subscription to the same domain (a fresh subscriber is told on the same rule), so the first one
is the first notification also in a run without the library (the control).
"""
import array
import mmap
import os
import select
import signal
import socket
import struct
import sys
import time

TIERS = ["plenty", "ramp", "paging", "thrashing"]


def subscribe(path, domain):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(f"antsched-memd 1 domain {domain}\n".encode())
    msg, fds, _, _ = socket.recv_fds(s, 4096, 2)
    if not msg.startswith(b"ok") or len(fds) != 2:
        sys.exit(f"watch.py: memd refused the subscription: {msg.decode(errors='replace').strip()}")
    page = mmap.mmap(fds[0], 4096, prot=mmap.PROT_READ)
    return s, page, fds[1]


def record(page):
    """S and tier from the latched sequence lock (crates/memd/src/page.rs)."""
    while True:
        seq = struct.unpack_from("<Q", page, 16)[0]
        base = 8 * (8 if seq & 1 == 0 else 24)
        words = struct.unpack_from("<11Q", page, base)
        if struct.unpack_from("<Q", page, 16)[0] == seq:
            s = struct.unpack("<d", struct.pack("<Q", words[1]))[0]
            return s, TIERS[words[8]] if words[8] < 4 else str(words[8])


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def main():
    path, domain, pid, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    _sock, page, efd = subscribe(path, domain)
    os.set_blocking(efd, False)
    with open(out, "w", buffering=1) as f:
        next_sample = time.monotonic()
        while True:
            now = time.monotonic()
            if now >= next_sample:
                kib = rss_kib(pid)
                if kib is None:
                    return
                f.write(f"rss {now:.6f} {kib}\n")
                next_sample += 0.010
                if next_sample < now:
                    next_sample = now + 0.010
            r, _, _ = select.select([efd], [], [], max(0.0, next_sample - time.monotonic()))
            if r:
                t = time.monotonic()
                try:
                    os.read(efd, 8)
                except BlockingIOError:
                    continue
                s, tier = record(page)
                f.write(f"wake {t:.6f} {s:.1f} {tier}\n")


if __name__ == "__main__":
    main()
