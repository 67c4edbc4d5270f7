#!/usr/bin/env python3
"""Wait until process groups stop using CPU (Linux /proc, standard library).

  waitidle.py [--idle-cpu 0.05] [--window 1.0] [--timeout 120] PGID [PGID ...]

A forking server keeps working on the requests it accepted after the load
generator stopped; this waits until the summed CPU time of every process of
the given process groups grows by less than --idle-cpu seconds over --window
seconds, or until --timeout. Prints how long it waited on stderr.
"""

import argparse
import os
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")


def cpu_of(pgids):
    total = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        rest = st[st.rfind(")") + 2:].split()
        if int(rest[2]) in pgids:
            total += sum(int(x) for x in rest[11:15])
    return total / HZ


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--idle-cpu", type=float, default=0.05)
    p.add_argument("--window", type=float, default=1.0)
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("pgids", nargs="+", type=int)
    a = p.parse_args()
    pgids = set(a.pgids)
    t0 = time.time()
    prev = cpu_of(pgids)
    while True:
        time.sleep(a.window)
        now = cpu_of(pgids)
        if now - prev < a.idle_cpu:
            break
        prev = now
        if time.time() - t0 > a.timeout:
            print("waitidle: still busy after %.0f s" % a.timeout, file=sys.stderr)
            return 1
    waited = time.time() - t0 - a.window
    if waited > 0.5:
        print("waitidle: drained in %.1f s" % waited, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
