#!/usr/bin/env python3
"""Cost of a syscall natively and under detrun, measured side by side in one run.

Each kind runs ITER iterations and 0 iterations (start-up cost), alternating native and
detrun (A B A B) several times; the per-call cost is (median(ITER) - median(0)) / ITER.
"""
import statistics
import subprocess
import sys
import time

build = sys.argv[1] if len(sys.argv) > 1 else "build"
quick = "--quick" in sys.argv
micro = f"{build}/bench/syscall_micro"
detrun = f"{build}/detrun"
KINDS = [  # kind, iterations, what is intercepted under detrun
    ("getppid", 200000, "not intercepted (allowed by the filter)"),
    ("clock", 20000, "clock_gettime: detrun's vDSO (one read in 129 stops)"),
    ("devnull", 20000, "write(2): stops, descriptor checked, runs natively"),
    ("openclose", 20000, "openat+close: allowed"),
    ("pipe", 5000, "pipe ping-pong between two processes: 4 calls per round"),
]
REPS = 3 if quick else 7


def wall(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


print(f"{'kind':10} {'native us/call':>15} {'detrun us/call':>15} {'ratio':>7}  note")
for kind, iters, note in KINDS:
    if quick:
        iters //= 4
    samples = {("native", iters): [], ("native", 0): [], ("detrun", iters): [], ("detrun", 0): []}
    for _ in range(REPS):
        for n in (iters, 0):
            samples[("native", n)].append(wall([micro, kind, str(n)]))
            samples[("detrun", n)].append(wall([detrun, "--", micro, kind, str(n)]))
    calls = iters * (4 if kind == "pipe" else 2 if kind == "openclose" else 1)
    cost = {m: max(0.0, statistics.median(samples[(m, iters)]) - statistics.median(samples[(m, 0)]))
            / calls * 1e6 for m in ("native", "detrun")}
    ratio = cost["detrun"] / cost["native"] if cost["native"] > 0 else float("inf")
    print(f"{kind:10} {cost['native']:15.3f} {cost['detrun']:15.3f} {ratio:7.1f}  {note}")
