#!/usr/bin/python3
"""Plots the results of examples/bench_contention --out DIR.

Reads DIR/contention.csv (one row per point: config, frames, replacement,
size, clients, per-client min/median/max and aggregate messages/s,
re-mappings/s) and writes, per request size (paper 004 Fig. 6 for small
messages, Fig. 7 for 8 KiB bulk messages):
  DIR/contention_<size>_per_client.png  per-client messages/s vs clients,
                                        median with min-max bars, log y;
  DIR/contention_<size>_aggregate.png   aggregate messages/s vs clients,
                                        and re-mappings/s beneath.

Usage: scripts/plot_contention.py DIR
Needs python3-matplotlib (Debian); re-runs itself under /usr/bin/python3
if the python3 on PATH lacks matplotlib.
"""
import csv
import os
import sys
from collections import defaultdict

import plotting

plt = plotting.pyplot()


def read_rows(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if not r["error"]]


def series_name(r):
    if r["config"] == "fixed":
        return "fixed resources (MT, no endpoint)"
    name = f"{r['config']}, {r['frames']} frames"
    return name + (f", {r['replacement']}" if r["replacement"] != "-" else "")


def by_series(rows, size):
    """{series: {clients: row}} for one request size, series in CSV order.
    Points without re-mappings carry no replacement policy ("-"); they
    belong to every policy's curve of that configuration, so that each
    curve runs through the overcommit knee."""
    policies = defaultdict(set)
    for r in rows:
        if r["replacement"] != "-":
            policies[(r["config"], r["frames"])].add(r["replacement"])
    out = defaultdict(dict)
    for r in rows:
        if int(r["size"]) != size:
            continue
        names = [series_name(dict(r, replacement=p))
                 for p in sorted(policies[(r["config"], r["frames"])])]
        for name in (names if r["replacement"] == "-" and names else [series_name(r)]):
            out[name][int(r["clients"])] = r
    return out


def size_label(n):
    return f"{n // 1024} KiB" if n >= 1024 and n % 1024 == 0 else f"{n} B"


def style(name):
    return "--" if name.startswith("fixed") else (":" if "random" in name else "-")


def colours(series):
    """One colour per series, the same in every panel."""
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {name: cycle[i % len(cycle)] for i, name in enumerate(series)}


def client_axis(ax, series):
    """A log2 axis ticked at the client counts measured, labelled plainly."""
    counts = sorted({x for pts in series.values() for x in pts})
    ax.set_xscale("log", base=2)
    ax.set_xticks(counts)
    ax.set_xticklabels([str(c) for c in counts])
    ax.minorticks_off()


def plot_per_client(series, size, out_dir):
    fig, ax = plt.subplots(figsize=(8, 5))
    colour = colours(series)
    for name, pts in series.items():
        xs = sorted(pts)
        med = [float(pts[x]["median_msg_s"]) for x in xs]
        lo = [m - float(pts[x]["min_msg_s"]) for m, x in zip(med, xs)]
        hi = [float(pts[x]["max_msg_s"]) - m for m, x in zip(med, xs)]
        ax.errorbar(xs, med, yerr=[lo, hi], fmt=style(name) + "o", ms=3, capsize=2, label=name,
                    color=colour[name])
    client_axis(ax, series)
    ax.set_yscale("log")
    ax.set_xlabel("clients (one outstanding request each)")
    ax.set_ylabel("per-client messages/s (median, min-max bars; log)")
    ax.set_title(f"Per-client throughput under contention, {size_label(size)} requests (paper 004 sect. 6.4)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    return plotting.save(plt, fig, out_dir, f"contention_{size}_per_client.png")


def plot_aggregate(series, size, out_dir):
    fig, (ax, rx) = plt.subplots(2, 1, figsize=(8, 7), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    colour = colours(series)
    for name, pts in series.items():
        xs = sorted(pts)
        ax.plot(xs, [float(pts[x]["aggregate_msg_s"]) for x in xs], style(name) + "o", ms=3, label=name,
                color=colour[name])
        if name.startswith(("ST", "MT")) and ", 8 frames" in name:
            rx.plot(xs, [float(pts[x]["remaps_s"]) for x in xs], style(name) + "o", ms=3, label=name,
                    color=colour[name])
    client_axis(rx, series)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("aggregate messages/s")
    ax.set_title(f"Server throughput under contention, {size_label(size)} requests (paper 004 sect. 6.4)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    rx.set_xlabel("clients")
    rx.set_ylabel("re-mappings/s")
    rx.grid(True, which="both", alpha=0.3)
    return plotting.save(plt, fig, out_dir, f"contention_{size}_aggregate.png")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    rows = read_rows(os.path.join(out_dir, "contention.csv"))
    for size in sorted({int(r["size"]) for r in rows}):
        series = by_series(rows, size)
        for plot in (plot_per_client, plot_aggregate):
            print(f"plot_contention: wrote {plot(series, size, out_dir)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
