#!/usr/bin/env python3
"""Plots of a transport comparison (scripts/compare_transports.py):

  plot_comparison.py RESULTS_DIR

reads RESULTS_DIR/comparison.json and echo_samples.csv and writes
echo_cdf.png (null echo latency CDF per transport, one panel per server
threading mode), ttcp.png (MB/s vs message size, one panel per mode),
rate.png (requests/s vs clients) and, when giop:otp ran under loss, loss.png
(echo p50/p90/p99/max vs loss rate, and the latency CDF per loss rate, from
loss_samples.csv). Needs matplotlib (python3-matplotlib).
"""

import csv
import json
import os
import sys

import plotting

MODE_NAMES = {"tpc": "thread per connection", "pool": "thread pool", "-": "no ORB"}
TTCP_TITLES = {"oneway": "one-way Buffer", "exactly": "exactly-once Buffer", "marshalled": "marshalled PairSeq"}


def cdf(ax, vals, **kw):
    """The fraction of values <= x."""
    vals = sorted(vals)
    n = len(vals)
    ax.plot(vals, [(i + 1) / n for i in range(n)], **kw)


def finish(ax, xlabel, title, xlog=None, ylog=False):
    if xlog:
        ax.set_xscale("log", **({"base": xlog} if xlog != 10 else {}))
    if ylog:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)


def save(plt, fig, subtitle, out, name):
    fig.suptitle(subtitle, fontsize=8)
    return plotting.save(plt, fig, out, name, dpi=110)


def read_samples(path, key):
    """A samples CSV as {key(row): [us, ...]}; empty if the file is absent."""
    samples = {}
    if os.path.exists(path):
        with open(path) as f:
            for row in csv.DictReader(f):
                samples.setdefault(key(row), []).append(float(row["us"]))
    return samples


def plot_echo(plt, data, out, subtitle):
    """Latency CDF per transport, one panel per server threading mode."""
    samples = read_samples(os.path.join(out, "echo_samples.csv"), lambda row: (row["transport"], row["mode"]))
    if not samples:
        return None
    modes = ["tpc", "pool"]
    fig, axes = plt.subplots(1, len(modes), figsize=(12, 4.5), sharey=True)
    for ax, mode in zip(axes, modes):
        for (t, m), vals in sorted(samples.items()):
            if m != mode and not (t == "zmq" and mode == "tpc"):
                continue
            p50 = sorted(vals)[(len(vals) - 1) // 2]
            cdf(ax, vals, label=f"{t} (p50 {p50:.1f} us)", linestyle="--" if t == "zmq" else "-")
        finish(ax, "round trip (us, log scale)", f"null echo, server: {MODE_NAMES[mode]}", xlog=10)
    axes[0].set_ylabel("fraction of calls <= x")
    return save(plt, fig, subtitle, out, "echo_cdf.png")


def plot_ttcp(plt, data, out, subtitle):
    """MB/s against message size, one panel per ttcp mode."""
    ttcp = data.get("ttcp", [])
    if not ttcp:
        return None
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharey=True)
    for ax, mode in zip(axes, ["oneway", "exactly", "marshalled"]):
        for t in data["meta"]["transports"]:
            pts = sorted((e["size"], e["mb_per_s"]) for e in ttcp if e["transport"] == t and e["mode"] == mode)
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=t)
        finish(ax, "message size (bytes)", f"ttcp {TTCP_TITLES[mode]}", xlog=2, ylog=True)
    axes[0].set_ylabel("MB/s (10^6 B/s, log scale)")
    return save(plt, fig, subtitle, out, "ttcp.png")


def plot_rate(plt, data, out, subtitle):
    """Request rate against the number of clients."""
    rate = data.get("rate", [])
    if not rate:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for t in data["meta"]["transports"]:
        for mode, style in (("tpc", "-"), ("pool", "--")):
            pts = sorted((e["clients"], e["requests_per_s"]) for e in rate
                         if e["transport"] == t and e["mode"] == mode and e["requests_per_s"])
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", linestyle=style,
                        label=f"{t}, {MODE_NAMES[mode]}")
    ax.set_ylabel("requests/s")
    finish(ax, "concurrent clients (one connection each)", "null echo request rate", xlog=2)
    return save(plt, fig, subtitle, out, "rate.png")


def plot_loss_percentiles(ax, loss, rto):
    xs = list(range(len(loss)))
    for key, marker in (("p50_us", "o"), ("p90_us", "s"), ("p99_us", "^"), ("max_us", "x")):
        ax.plot(xs, [e["echo"][key] for e in loss], marker=marker, label=key.replace("_us", ""))
    if rto:
        ax.axhline(rto, color="grey", linestyle=":", label=f"RTO {rto} us")
    ax.set_xticks(xs)
    ax.set_xticklabels([f"{e['loss_ppm'] / 10000:g} %" for e in loss])
    ax.set_ylabel("null echo round trip (us, log scale)")
    finish(ax, "datagram loss, each direction", "giop:otp null echo under loss (thread per connection)", ylog=True)


def plot_loss_cdf(ax, out, rto):
    samples = read_samples(os.path.join(out, "loss_samples.csv"), lambda row: int(row["loss_ppm"]))
    for ppm, vals in sorted(samples.items()):
        cdf(ax, vals, label=f"{ppm / 10000:g} % loss")
    if rto:
        ax.axvline(rto, color="grey", linestyle=":", label=f"RTO {rto} us")
    ax.set_ylabel("fraction of calls <= x")
    finish(ax, "round trip (us, log scale)", "latency distribution per loss rate", xlog=10)


def plot_loss(plt, data, out, subtitle):
    """giop:otp under loss: percentiles against the loss rate, and the CDF per rate."""
    loss = [e for e in data.get("loss", []) if e.get("echo")]
    if not loss:
        return None
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    rto = data["meta"].get("otp_rto_us")
    plot_loss_percentiles(ax, loss, rto)
    plot_loss_cdf(ax2, out, rto)
    return save(plt, fig, subtitle, out, "loss.png")


def plot_all(out, reexec=False):
    plt = plotting.pyplot(reexec)  # not when the comparison imports this module

    with open(os.path.join(out, "comparison.json")) as f:
        data = json.load(f)
    meta = data["meta"]
    subtitle = f"{meta['cpu']}, {meta['cores']} cores, pinned: {meta['pinned']}, {meta['date']}"
    written = [plot(plt, data, out, subtitle) for plot in (plot_echo, plot_ttcp, plot_rate, plot_loss)]
    return [p for p in written if p]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for png in plot_all(sys.argv[1], reexec=True):
        print(png)
