#!/usr/bin/env python3
"""Two detrun binaries side by side on the same workloads: bench/compare.sh's runner.

    python3 bench/compare.py --base OLD/detrun --new build/detrun --build build
                             [--base-name NAME] [--quick] [--only SUBSTR ...] [--no-install]

Runs the syscall micro benchmarks (getppid, clock, devnull, openclose, pipe) and nginx
(master + 2 workers, a 10 KB file, wrk -t2 -c8 from outside) under `BASE --` and
`NEW --`, interleaved: each repetition runs native, then base, then new (A B A B), with
bench.py's own code for starting, timing and stopping every run. Both binaries run the same
programs (the micro benchmark of --build, the same nginx and configuration), so only the
tracer differs. Prints per workload the native value, the two detrun values, NEW/BASE
(ratio of the medians, above 1 = NEW slower) and its spread: the lowest and highest ratio
of one repetition's pair. A pair run close together shares the machine's load, so its
ratio is steadier than either value.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (bench.py, next to this file)

WORKLOADS = ("getppid", "clock", "devnull", "openclose", "pipe", "nginx")
# A per-call cost is a difference of whole-run times (N calls against none); below this
# the difference is start-up noise, and its ratio says nothing (getppid is not stopped).
RESOLUTION_US = 0.5


class Compare(bench.Bench):
    def __init__(self, args):
        super().__init__(args)
        self.base, self.new = os.path.abspath(args.base), os.path.abspath(args.new)
        # Pairs per workload: more than bench.py's, since a ratio of two detruns is what
        # is asked here, and nginx is cheap at one 10 KB path.
        self.reps = {"batch": 0, "micro": 3 if args.quick else 7, "server": 2 if args.quick else 4}

    def all_modes(self):
        return [("native", lambda tag: [], None, "top"),
                ("base", lambda tag: [self.base, "--"], None, "top"),
                ("new", lambda tag: [self.new, "--"], None, "top")]

    def workloads(self):
        out = []
        for w in super().workloads():
            if w.name.replace("micro ", "") not in WORKLOADS:
                continue
            if w.kind == "server":
                w.paths = ["/10k.bin"]
            out.append(w)
        return out


def pairs(base, new, higher_is_worse):
    """NEW/BASE per repetition (as a slowdown: for a throughput, BASE/NEW)."""
    out = []
    for b, n in zip(base, new):
        if b and n:
            out.append(n / b if higher_is_worse else b / n)
    return out


def samples(r, mode):
    """Per-repetition values and the unit: µs per call, or requests per second."""
    if r["kind"] == "micro":
        return r["modes"][mode].get("samples", []), "us/call", True
    rs = r["paths"]["/10k.bin"][mode]["runs"]
    return [x.get("rps") if "error" not in x else None for x in rs], "req/s", False


def table(results, base_name, new_name):
    lines = [f"{'workload':10} {'unit':8} {'native':>9} {base_name:>12} {new_name:>12} "
             f"{'new/base':>9}  spread (per pair)"]
    worst = None
    for r in results:
        if "skipped" in r or "error" in r:
            lines.append(f"{r['name']:10} {r.get('skipped') or r.get('error')}")
            continue
        vals = {m: samples(r, m) for m in ("native", "base", "new")}
        unit, hiw = vals["new"][1], vals["new"][2]
        med = {m: bench.median([v for v in vals[m][0] if v is not None]) for m in vals}
        ps = pairs(vals["base"][0], vals["new"][0], hiw)
        ratio = None
        if med["base"] and med["new"]:
            ratio = med["new"] / med["base"] if hiw else med["base"] / med["new"]
        fmt = (lambda v: f"{v:9.3f}") if unit == "us/call" else (lambda v: f"{v:9.0f}")
        cell = lambda v, w: (fmt(v).rjust(w) if v is not None else "FAILED".rjust(w))
        spread = f"{min(ps):.2f}-{max(ps):.2f} ({len(ps)} pairs)" if ps else "-"
        if unit == "us/call" and med["base"] is not None and med["new"] is not None and \
                max(med["base"], med["new"]) < RESOLUTION_US:
            spread += f"  (both under {RESOLUTION_US} us/call: below what whole runs resolve)"
            ratio_counts = False
        else:
            ratio_counts = True
        lines.append(f"{r['name'].replace('micro ', ''):10} {unit:8} {cell(med['native'], 9)} {cell(med['base'], 12)} "
                     f"{cell(med['new'], 12)} {(f'{ratio:.2f}' if ratio else '-'):>9}  {spread}")
        for m in ("base", "new"):
            err = error_of(r, m)
            if err:
                lines.append(f"{'':10} {m} failed: {err[:300]}")
        if ratio and ratio_counts and (worst is None or ratio > worst[1]):
            worst = (r["name"].replace("micro ", ""), ratio)
    lines.append("")
    lines.append("new/base is the ratio of the medians as a slowdown (for req/s: base/new); "
                 "above 1, the new build is slower.")
    if worst:
        lines.append(f"slowest against base: {worst[0]} ({worst[1]:.2f})")
    return "\n".join(lines)


def error_of(r, mode):
    if r["kind"] == "micro":
        return r["modes"][mode].get("error")
    return r["paths"]["/10k.bin"][mode].get("error")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="the detrun binary to compare against")
    ap.add_argument("--new", required=True, help="the detrun binary under test")
    ap.add_argument("--build", default="build", help="build whose bench programs are run")
    ap.add_argument("--base-name", default="base")
    ap.add_argument("--new-name", default="new")
    ap.add_argument("--quick", action="store_true", help="fewer pairs, shorter server runs")
    ap.add_argument("--only", action="append", help="run only workloads whose name contains this")
    ap.add_argument("--no-install", action="store_true", help="do not apt-get install missing packages")
    args = ap.parse_args()
    args.modes = None
    for b in (args.base, args.new, os.path.join(args.build, "bench", "syscall_micro")):
        if not os.access(b, os.X_OK):
            sys.exit(f"compare: {b} not found")
    if not args.no_install:
        bench.ensure_packages(["time", "nginx", "wrk"])
    c = Compare(args)
    bench.run_interruptible(c, "compare")
    load = os.getloadavg()[0]
    print()
    print(f"{args.new_name} against {args.base_name}, {'quick' if args.quick else 'full'} run, "
          f"pairs micro/nginx = {c.reps['micro']}/{c.reps['server']}, "
          f"load average (1 min) at the end {load:.2f}")
    print()
    print(table(c.results, args.base_name, args.new_name))


if __name__ == "__main__":
    main()
