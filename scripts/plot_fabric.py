#!/usr/bin/python3
"""Plots the results of examples/bench_fabric_pingpong and
examples/bench_fabric_stream --out DIR.

Reads DIR/fabric_latency.csv (round-trip histograms: transport, bin_lo_ns,
bin_hi_ns, count) and DIR/fabric_bandwidth.csv (transport, size_bytes, rep,
messages, bytes, seconds, mb_per_s; memcpy rows carry only mb_per_s) and
writes DIR/fabric_latency.png (CDF of the round trips, log x) and
DIR/fabric_bandwidth.png (MB/s vs message size, log x, median with min-max
bars, memcpy as a horizontal line).

Usage: scripts/plot_fabric.py DIR
Needs python3-matplotlib (Debian); re-runs itself under /usr/bin/python3
if the python3 on PATH lacks matplotlib.
"""
import csv
import os
import statistics
import sys
from collections import defaultdict

import plotting

plt = plotting.pyplot()

LABELS = {
    "bare": "bare cache line (floor)",
    "pio": "clan PIO write_word + tripwire",
    "unix": "unix socketpair, 8 B",
}
BW_LABELS = {
    "pio": "DMQ PIO",
    "dma": "DMQ DMA",
    "unix": "unix SOCK_STREAM",
    "bare": "bare shared-memory ring (floor)",
}


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def percentile_from_bins(bins, q):
    total = sum(n for _, _, n in bins)
    target = q * total
    acc = 0
    for lo, hi, n in bins:
        acc += n
        if acc >= target:
            return lo
    return bins[-1][0] if bins else 0


def plot_latency(out_dir):
    rows = read_csv(os.path.join(out_dir, "fabric_latency.csv"))
    hist = defaultdict(list)
    for r in rows:
        hist[r["transport"]].append((int(r["bin_lo_ns"]), int(r["bin_hi_ns"]), int(r["count"])))
    fig, ax = plt.subplots(figsize=(8, 5))
    for t in ["bare", "pio", "unix"] + sorted(k for k in hist if k not in LABELS):
        bins = sorted(hist.get(t, []))
        if not bins:
            continue
        total = sum(n for _, _, n in bins)
        xs, ys, acc = [], [], 0
        for lo, hi, n in bins:
            acc += n
            xs.append(hi / 1000.0)
            ys.append(acc / total)
        p50 = percentile_from_bins(bins, 0.5) / 1000.0
        ax.step(xs, ys, where="post", label=f"{LABELS.get(t, t)} (p50 ~{p50:.3f} us, n={total})")
    ax.set_xscale("log")
    ax.set_xlabel("round trip (us, log scale)")
    ax.set_ylabel("fraction of round trips <= x")
    ax.set_ylim(0, 1.01)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title("Single-word ping-pong round trips (CDF)")
    ax.legend(loc="lower right", fontsize=8)
    return plotting.save(plt, fig, out_dir, "fabric_latency.png")


def plot_bandwidth(out_dir):
    rows = read_csv(os.path.join(out_dir, "fabric_bandwidth.csv"))
    points = defaultdict(lambda: defaultdict(list))
    memcpy = []
    memcpy_cached = []
    for r in rows:
        if r["transport"] == "memcpy_large":
            memcpy.append(float(r["mb_per_s"]))
        elif r["transport"] == "memcpy":
            memcpy_cached.append(float(r["mb_per_s"]))
            continue
        points[r["transport"]][int(r["size_bytes"])].append(float(r["mb_per_s"]))
    fig, ax = plt.subplots(figsize=(8, 5))
    for t in ["pio", "dma", "unix", "bare"] + sorted(k for k in points if k not in BW_LABELS):
        if t not in points:
            continue
        sizes = sorted(points[t])
        med = [statistics.median(points[t][s]) for s in sizes]
        lo = [m - min(points[t][s]) for m, s in zip(med, sizes)]
        hi = [max(points[t][s]) - m for m, s in zip(med, sizes)]
        ax.errorbar(sizes, med, yerr=[lo, hi], marker="o", capsize=3, label=BW_LABELS.get(t, t))
    if memcpy:
        m = statistics.median(memcpy)
        ax.axhline(m, color="k", linestyle="--", label=f"memcpy, large blocks, 1 thread ({m:.0f} MB/s)")
        ax.axhline(0.4 * m, color="grey", linestyle=":", label="target: 40 % of that memcpy")
    if memcpy_cached:
        m = statistics.median(memcpy_cached)
        ax.axhline(m, color="k", linestyle="-.", alpha=0.5,
                   label=f"memcpy 64 KiB cache resident ({m:.0f} MB/s, for scale)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes, log scale)")
    ax.set_ylabel("MB/s (10^6 B/s, log scale)")
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title("Streaming bandwidth, data touched on both sides")
    ax.legend(loc="lower right", fontsize=8)
    return plotting.save(plt, fig, out_dir, "fabric_bandwidth.png")


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    for p in (plot_latency(out_dir), plot_bandwidth(out_dir)):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
