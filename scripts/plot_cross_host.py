#!/usr/bin/python3
"""Plots the cross-host section (scripts/comparison/cross_host.py) into
DIR/cross_host.png, three panels side by side:
  - bench_wire's round-trip p50 against message size (log-log), a line per
    wire and wait (wire_latency.csv);
  - omniORB's null echo p50 per transport and server threading mode
    (echo.csv);
  - omniORB's request rate against client threads, a line per transport and
    mode (rate.csv).
A panel whose file is missing or empty is left out.

Usage: scripts/plot_cross_host.py DIR   (prints the PNG's path)
Needs python3-matplotlib (Debian); re-runs itself under /usr/bin/python3 if
the python3 on PATH lacks matplotlib.
"""
import csv
import os
import sys

import plotting

plt = plotting.pyplot()


def read_csv(out_dir, name):
    path = os.path.join(out_dir, name)
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def wire_panel(ax, rows):
    lines = {}
    for r in rows:
        lines.setdefault(f"{r['wire']} {r['wait']}", []).append((int(r["size_bytes"]), float(r["p50_us"])))
    for name, pts in lines.items():
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("round trip p50 (us)")
    ax.set_title("bench_wire: A <-> B")
    ax.legend(fontsize=8)


def echo_panel(ax, rows):
    names = [f"{r['transport']}/{r['mode']}" for r in rows]
    ax.bar(range(len(rows)), [float(r["p50_us"]) for r in rows])
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("null echo p50 (us)")
    ax.set_title("omniORB null echo: client A, server B")


def rate_panel(ax, rows):
    lines = {}
    for r in rows:
        lines.setdefault(f"{r['transport']}/{r['mode']}", []).append((int(r["clients"]), float(r["requests_per_s"])))
    for name, pts in lines.items():
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
    ax.set_xlabel("client threads")
    ax.set_ylabel("requests/s")
    ax.set_title("omniORB request rate: client A, server B")
    ax.legend(fontsize=8)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: plot_cross_host.py DIR")
    out_dir = sys.argv[1]
    panels = [(f, rows) for f, rows in ((wire_panel, read_csv(out_dir, "wire_latency.csv")),
                                        (echo_panel, read_csv(out_dir, "echo.csv")),
                                        (rate_panel, read_csv(out_dir, "rate.csv"))) if rows]
    if not panels:
        sys.exit(f"plot_cross_host.py: no results in {out_dir}")
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.5), squeeze=False)
    for ax, (draw, rows) in zip(axes[0], panels):
        draw(ax, rows)
    print(plotting.save(plt, fig, out_dir, "cross_host.png"))


if __name__ == "__main__":
    main()
