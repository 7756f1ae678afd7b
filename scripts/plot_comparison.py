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

MODE_NAMES = {"tpc": "thread per connection", "pool": "thread pool", "-": "no ORB"}
TTCP_TITLES = {"oneway": "one-way Buffer", "exactly": "exactly-once Buffer", "marshalled": "marshalled PairSeq"}


def plot_all(out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(os.path.join(out, "comparison.json")) as f:
        data = json.load(f)
    meta = data["meta"]
    subtitle = f"{meta['cpu']}, {meta['cores']} cores, pinned: {meta['pinned']}, {meta['date']}"
    written = []

    # Latency CDF per transport.
    samples = {}
    path = os.path.join(out, "echo_samples.csv")
    if os.path.exists(path):
        with open(path) as f:
            for row in csv.DictReader(f):
                samples.setdefault((row["transport"], row["mode"]), []).append(float(row["us"]))
    if samples:
        modes = ["tpc", "pool"]
        fig, axes = plt.subplots(1, len(modes), figsize=(12, 4.5), sharey=True)
        for ax, mode in zip(axes, modes):
            for (t, m), vals in sorted(samples.items()):
                if m != mode and not (t == "zmq" and mode == "tpc"):
                    continue
                vals = sorted(vals)
                n = len(vals)
                ax.plot(vals, [(i + 1) / n for i in range(n)], label=f"{t} (p50 {vals[(n - 1) // 2]:.1f} us)",
                        linestyle="--" if t == "zmq" else "-")
            ax.set_xscale("log")
            ax.set_xlabel("round trip (us, log scale)")
            ax.set_title(f"null echo, server: {MODE_NAMES[mode]}")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        axes[0].set_ylabel("fraction of calls <= x")
        fig.suptitle(subtitle, fontsize=8)
        fig.tight_layout()
        p = os.path.join(out, "echo_cdf.png")
        fig.savefig(p, dpi=110)
        plt.close(fig)
        written.append(p)

    # ttcp MB/s vs size, one panel per mode.
    ttcp = data.get("ttcp", [])
    if ttcp:
        modes = ["oneway", "exactly", "marshalled"]
        fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharey=True)
        for ax, mode in zip(axes, modes):
            for t in meta["transports"]:
                pts = sorted((e["size"], e["mb_per_s"]) for e in ttcp if e["transport"] == t and e["mode"] == mode)
                if pts:
                    ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=t)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("message size (bytes)")
            ax.set_title(f"ttcp {TTCP_TITLES[mode]}")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        axes[0].set_ylabel("MB/s (10^6 B/s, log scale)")
        fig.suptitle(subtitle, fontsize=8)
        fig.tight_layout()
        p = os.path.join(out, "ttcp.png")
        fig.savefig(p, dpi=110)
        plt.close(fig)
        written.append(p)

    # Request rate vs clients.
    rate = data.get("rate", [])
    if rate:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for t in meta["transports"]:
            for mode, style in (("tpc", "-"), ("pool", "--")):
                pts = sorted((e["clients"], e["requests_per_s"]) for e in rate
                             if e["transport"] == t and e["mode"] == mode and e["requests_per_s"])
                if pts:
                    ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", linestyle=style,
                            label=f"{t}, {MODE_NAMES[mode]}")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("concurrent clients (one connection each)")
        ax.set_ylabel("requests/s")
        ax.set_title("null echo request rate")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.suptitle(subtitle, fontsize=8)
        fig.tight_layout()
        p = os.path.join(out, "rate.png")
        fig.savefig(p, dpi=110)
        plt.close(fig)
        written.append(p)

    # giop:otp under loss: percentiles vs loss rate, and the CDF per rate.
    loss = [e for e in data.get("loss", []) if e.get("echo")]
    if loss:
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
        xs = list(range(len(loss)))
        labels = [f"{e['loss_ppm'] / 10000:g} %" for e in loss]
        for key, marker in (("p50_us", "o"), ("p90_us", "s"), ("p99_us", "^"), ("max_us", "x")):
            ax.plot(xs, [e["echo"][key] for e in loss], marker=marker, label=key.replace("_us", ""))
        rto = meta.get("otp_rto_us")
        if rto:
            ax.axhline(rto, color="grey", linestyle=":", label=f"RTO {rto} us")
        ax.set_xticks(xs)
        ax.set_xticklabels(labels)
        ax.set_yscale("log")
        ax.set_xlabel("datagram loss, each direction")
        ax.set_ylabel("null echo round trip (us, log scale)")
        ax.set_title("giop:otp null echo under loss (thread per connection)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        lsamples = {}
        path = os.path.join(out, "loss_samples.csv")
        if os.path.exists(path):
            with open(path) as f:
                for row in csv.DictReader(f):
                    lsamples.setdefault(int(row["loss_ppm"]), []).append(float(row["us"]))
        for ppm, vals in sorted(lsamples.items()):
            vals = sorted(vals)
            n = len(vals)
            ax2.plot(vals, [(i + 1) / n for i in range(n)], label=f"{ppm / 10000:g} % loss")
        if rto:
            ax2.axvline(rto, color="grey", linestyle=":", label=f"RTO {rto} us")
        ax2.set_xscale("log")
        ax2.set_xlabel("round trip (us, log scale)")
        ax2.set_ylabel("fraction of calls <= x")
        ax2.set_title("latency distribution per loss rate")
        ax2.grid(True, which="both", alpha=0.3)
        ax2.legend(fontsize=8)
        fig.suptitle(subtitle, fontsize=8)
        fig.tight_layout()
        p = os.path.join(out, "loss.png")
        fig.savefig(p, dpi=110)
        plt.close(fig)
        written.append(p)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for png in plot_all(sys.argv[1]):
        print(png)
