#!/usr/bin/env python3
"""Prints the transport table at the top of README.md from a comparison's
results:

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


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(headline(load(sys.argv[1])))


if __name__ == "__main__":
    main()
