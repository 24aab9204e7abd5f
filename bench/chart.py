#!/usr/bin/env python3
"""Draws bench/results.json as a PNG: cost relative to native (log scale) per workload and
mode, with the min/max of the per-repetition ratios as error bars; failed runs are marked.
Usage: chart.py results.json results.png (run by bench.py with a Python that has matplotlib)."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"detrun": "#d62728", "strace": "#7f7f7f", "record": "#9467bd", "native": "#1f77b4"}


def entries(results, modes):
    """(label, {mode: (ratio, lo, hi, failed_error)}) for the left (cost) panel and the
    right (server) panel."""
    cost, servers = [], []
    for r in results:
        if r.get("kind") in ("micro", "batch") and "modes" in r:
            row = {}
            for m in modes:
                s = r["modes"].get(m, {})
                row[m] = (s.get("ratio"), s.get("ratio_min"), s.get("ratio_max"),
                          s.get("error") if s.get("status") == "failed" else None)
            label = r["name"] + (" (us/call)" if r["kind"] == "micro" else "")
            cost.append((label, row))
        elif r.get("kind") == "server" and "paths" in r:
            for p, per_mode in r["paths"].items():
                for metric, key in (("req/s slowdown", "rps"), ("latency", "lat_avg_us")):
                    row = {}
                    for m in modes:
                        s = per_mode.get(m, {})
                        t = s.get(key, {})
                        row[m] = (t.get("ratio"), t.get("ratio_min"), t.get("ratio_max"),
                                  s.get("error") if s.get("status") == "failed" else None)
                    servers.append((f"{r['name']} {p.strip('/')}\n{metric}", row))
    return cost, servers


def panel(ax, rows, modes, title):
    shown = [m for m in modes if m != "native"]
    width = 0.8 / max(1, len(shown))
    for i, m in enumerate(shown):
        xs, ys, lo, hi, tops = [], [], [], [], []
        for j, (_, row) in enumerate(rows):
            r, rmin, rmax, err = row.get(m, (None, None, None, None))
            x = j + (i - (len(shown) - 1) / 2) * width
            if r is None:
                if err or m in row:
                    ax.text(x, 1.0, "failed" if err else "n/a", rotation=90, ha="center",
                            va="bottom", fontsize=7, color=COLORS.get(m, "black"))
                continue
            xs.append(x)
            ys.append(r)
            tops.append(max(r, rmax or r))
            lo.append(max(0.0, r - (rmin if rmin is not None else r)))
            hi.append(max(0.0, (rmax if rmax is not None else r) - r))
        ax.bar(xs, ys, width, label=m, color=COLORS.get(m), yerr=[lo, hi], capsize=2,
               error_kw={"elinewidth": 0.8})
        for x, y, top in zip(xs, ys, tops):
            ax.text(x, top * 1.1, f"{y:.1f}", ha="center", va="bottom", fontsize=6, rotation=90)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([label for label, _ in rows], rotation=40, ha="right", fontsize=8)
    ax.set_ylabel("x native (log scale; 1 = native)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(axis="y", which="both", alpha=0.3)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src) as f:
        data = json.load(f)
    modes = data["meta"]["modes"]
    cost, servers = entries(data["workloads"], modes)
    panels = [(rows, t) for rows, t in ((cost, "wall time (syscall micro: cost per call) vs native"),
                                          (servers, "servers: native req/s / req/s, and latency vs native"))
              if rows]
    if not panels:
        sys.exit("no results to chart")
    widths = [max(4, len(rows)) for rows, _ in panels]
    fig, axes = plt.subplots(1, len(panels), figsize=(sum(widths) * 0.75 + 2, 6),
                             gridspec_kw={"width_ratios": widths}, squeeze=False)
    for ax, (rows, title) in zip(axes[0], panels):
        panel(ax, rows, modes, title)
    meta = data["meta"]
    fig.suptitle(f"detrun bench ({'quick' if meta.get('quick') else 'full'}) {meta.get('date', '')}, "
                 f"detrun {meta.get('detrun_commit')}, {meta['host'].get('cpus')} CPUs", fontsize=10)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main()
