#!/usr/bin/python3
"""Plots the results of examples/bench_via_{latency,bandwidth,cq} --out DIR.

Reads whichever of DIR/via_latency.csv, via_bandwidth.csv and via_cq.csv
exist (rows tagged by their "table" column: latency rows carry
half-round-trip percentiles per series and size; bandwidth rows one
repetition each, with mb_per_s; cq rows one repetition each, with
messages_per_s) and writes:
  DIR/via_latency.png    half round trip p50 (bars to p99) vs message size,
                         raw DMQ, VIA PIO, VIA DMA (paper 001 Table 1);
  DIR/via_bandwidth.png  MB/s vs message size, log x and y, median with
                         min-max bars (paper 001 Fig. 6);
  DIR/via_cq.png         messages/s through one CQ vs connections, median
                         with min-max bars (paper 001 Fig. 7).

Usage: scripts/plot_via.py DIR
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

LAT_LABELS = {"dmq": "raw DMQ (PIO)", "via_pio": "VIA PIO", "via_dma": "VIA DMA"}
BW_LABELS = {
    "via_pio": "VIA PIO",
    "via_dma": "VIA DMA",
    "via_auto": "VIA auto (PIO <= 1 KiB)",
    "dmq_pio": "raw DMQ PIO",
    "dmq_dma": "raw DMQ DMA",
}
CQ_LABELS = {"pio": "PIO", "dma": "DMA"}


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def size_label(n):
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} B"


def median_range(values):
    m = statistics.median(values)
    return m, m - min(values), max(values) - m


def plot_latency(rows, out_dir):
    series = defaultdict(dict)
    for r in rows:
        if r["table"] == "latency":
            series[r["series"]][int(r["size_bytes"])] = (float(r["half_rt_p50_ns"]), float(r["half_rt_p99_ns"]))
    if not series:
        return None
    sizes = sorted({s for d in series.values() for s in d})
    fig, ax = plt.subplots(figsize=(8, 5))
    width = 0.8 / max(1, len(series))
    names = [n for n in LAT_LABELS if n in series] + sorted(n for n in series if n not in LAT_LABELS)
    for i, name in enumerate(names):
        xs, p50, err = [], [], []
        for k, s in enumerate(sizes):
            if s in series[name]:
                a, b = series[name][s]
                xs.append(k + (i - (len(names) - 1) / 2) * width)
                p50.append(a / 1000.0)
                err.append(max(0.0, (b - a) / 1000.0))
        ax.bar(xs, p50, width, yerr=[[0] * len(err), err], capsize=3, label=LAT_LABELS.get(name, name))
    ax.set_xticks(range(len(sizes)))
    ax.set_xticklabels([size_label(s) for s in sizes])
    ax.set_yscale("log")
    ax.set_xlabel("message size")
    ax.set_ylabel("half round trip, us (p50, bar to p99; log)")
    ax.set_title("VIA latency (paper 001 Table 1), half round trips")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend()
    return plotting.save(plt, fig, out_dir, "via_latency.png")


def plot_bandwidth(rows, out_dir):
    points = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r["table"] == "bandwidth" and r["mb_per_s"]:
            points[r["series"]][int(r["size_bytes"])].append(float(r["mb_per_s"]))
    if not points:
        return None
    fig, ax = plt.subplots(figsize=(8, 5))
    names = [n for n in BW_LABELS if n in points] + sorted(n for n in points if n not in BW_LABELS)
    for name in names:
        sizes = sorted(points[name])
        med, lo, hi = zip(*(median_range(points[name][s]) for s in sizes))
        style = "--" if name.startswith("dmq") else "-"
        ax.errorbar(sizes, med, yerr=[lo, hi], fmt=style + "o", ms=3, capsize=2, label=BW_LABELS.get(name, name))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size, bytes")
    ax.set_ylabel("MB/s (10^6 B/s; median, min-max bars)")
    ax.set_title("VIA bandwidth (paper 001 Fig. 6): 4 receive buffers, credit flow control")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return plotting.save(plt, fig, out_dir, "via_bandwidth.png")


def plot_cq(rows, out_dir):
    points = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r["table"] == "cq" and r["messages_per_s"]:
            points[r["series"]][int(r["connections"])].append(float(r["messages_per_s"]))
    if not points:
        return None
    fig, ax = plt.subplots(figsize=(8, 5))
    for name in [n for n in CQ_LABELS if n in points] + sorted(n for n in points if n not in CQ_LABELS):
        conns = sorted(points[name])
        med, lo, hi = zip(*(median_range(points[name][c]) for c in conns))
        ax.errorbar(conns, med, yerr=[lo, hi], fmt="-o", ms=3, capsize=2, label=CQ_LABELS.get(name, name))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("connections, one outstanding 4-byte message each")
    ax.set_ylabel("messages/s through one CQ (median, min-max bars)")
    ax.set_title("VIA completion queue throughput (paper 001 Fig. 7)")
    ax.set_ylim(bottom=0)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return plotting.save(plt, fig, out_dir, "via_cq.png")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    rows = []
    for part in ("latency", "bandwidth", "cq"):
        path = os.path.join(out_dir, f"via_{part}.csv")
        if os.path.exists(path):
            rows += read_csv(path)
    for plot in (plot_latency, plot_bandwidth, plot_cq):
        path = plot(rows, out_dir)
        if path:
            print(f"plot_via: wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
