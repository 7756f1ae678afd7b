#!/usr/bin/env python3
"""Prints the two tables of README.md that hold figures, the transport table
at its top and the one under "Figures", from a comparison's results:

  readme_headline.py RESULTS_DIR

RESULTS_DIR is a run of ./run-comparison (its transports/comparison.json) or
of scripts/compare_transports.py (comparison.json). "null call, same host" is
the null echo p50 with a thread-per-connection server, rounded to two
significant figures as the README words it ("about 1 µs"). A transport the
run did not measure shows "-".
"""

import json
import os
import sys

# The README's rows, in its order: transport, what it is.
ROWS = [
    ("clan", "GIOP through the CLAN network's distributed message queues (paper 000)"),
    ("otp", "omniTransport, reliable request-reply over a lossy datagram link (papers 002, 003)"),
    ("via", "GIOP over clanorb's VIA library, VIPL-compatible (paper 001)"),
    ("tcp", "omniORB's own, for comparison"),
]


def load(results_dir):
    for path in (os.path.join(results_dir, "transports", "comparison.json"),
                 os.path.join(results_dir, "comparison.json")):
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
    sys.exit(f"{results_dir}: no comparison.json (nor transports/comparison.json)")


def about(us):
    """A round trip as the README words it: two significant figures."""
    if us is None:
        return "-"
    return f"about {float(f'{us:.2g}'):g} µs"


def headline(data):
    lines = ["| transport | what it is | null call, same host |", "|---|---|---|"]
    for t, what in ROWS:
        e = data.get("echo", {}).get(f"{t}/tpc")
        lines.append(f"| `giop:{t}` | {what} | {about(e['p50_us'] if e else None)} |")
    return "\n".join(lines)


# The transports of the "Figures" table, in its order.
FIGURE_ROWS = ["tcp", "unix", "clan", "otp", "via"]


def rate(data, transport, clients):
    for r in data.get("rate", []):
        if r["transport"] == transport and r["mode"] == "tpc" and r["clients"] == clients:
            return f"{r['requests_per_s']:,.0f}"
    return ""


def figures(data):
    """README's "Figures" table: thread per connection, echo in µs, requests/s."""
    echo = data.get("echo", {})
    tcp = echo.get("tcp/tpc")
    lines = ["| transport | echo p50 | echo p99 | p50 against tcp | requests/s, 1 client | requests/s, 4 clients |",
             "|---|---|---|---|---|---|"]
    for t in FIGURE_ROWS:
        e = echo.get(f"{t}/tpc")
        if not e:
            continue
        against = f"{e['p50_us'] / tcp['p50_us']:.3g}x" if tcp else ""
        lines.append(f"| {t} | {e['p50_us']:.3g} | {e['p99_us']:.4g} | {against} | {rate(data, t, 1)} | "
                     f"{rate(data, t, 4)} |")
    return "\n".join(lines)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    data = load(sys.argv[1])
    print(headline(data))
    print()
    print(figures(data))


if __name__ == "__main__":
    main()
