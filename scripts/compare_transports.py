#!/usr/bin/env python3
"""Compares omniORB GIOP transports in one run: null echo latency, request
rate, ttcp throughput and idle server CPU; then giop:otp (omniTransport over
the lossy datagram link) under 0, 0.1, 1 and 5 % loss in both directions:
echo latency, completed calls, exactly-once duplicates/losses, one-ways
delivered.

  compare_transports.py --build DIR --out RESULTS_DIR [--quick]
                        [--transports tcp,unix,clan,otp,via] [--targets TSV]

DIR is a CMake build tree with examples/ built (echo_server, echo_client,
ttcp_server, ttcp_client, rate_client, zmq_echo). Every server is a real
process with one endpoint of one transport (automatic address); clients get
only its IOR. Transports are alternated in rounds (tcp unix clan tcp unix clan
...) so drift hits all alike. Progress goes to stderr, Markdown tables to
stdout; RESULTS_DIR gets comparison.json, one CSV per table, the raw echo
samples and PNG plots (scripts/plot_comparison.py). The targets and their
thresholds are examples/targets.tsv's "comparison" lines.

A missed target is reported, never an error. The exit status is non-zero only
if something failed to run (a server that did not start or shut down cleanly,
a client that failed or timed out); a transport whose server fails to start is
reported with the server's stderr and skipped. Under loss, a call that fails
or a one-way that is lost is a measured result, not a failure. All child processes are killed
on exit, including on Ctrl-C and SIGTERM (each runs in its own process group).

Method: examples/DESIGN.md. The sections are in scripts/comparison/; a new
transport joins by adding a line to TRANSPORTS in scripts/comparison/config.py.
"""

import argparse
import sys
import time

from comparison.config import DEFAULT_TRANSPORTS, MODES, TRANSPORTS
from comparison.echo import NullEcho
from comparison.guarded import run_guarded
from comparison.idle import IdleCpu
from comparison.loss import Loss
from comparison.processes import Context
from comparison.rate import RequestRate
from comparison.rate_procs import RequestRateProcs
from comparison.report import machine_meta, write_outputs
from comparison.targets import TARGETS_TSV, Targets
from comparison.ttcp import Ttcp


class Runner:
    """The sections in their order: the first three share one echo server per
    transport and mode; the others start their own."""

    def __init__(self, args):
        self.ctx = Context(args)
        self.echo_sections = [NullEcho(self.ctx), RequestRate(self.ctx), RequestRateProcs(self.ctx)]
        self.own_sections = [Ttcp(self.ctx), IdleCpu(self.ctx), Loss(self.ctx)]
        self.targets = Targets(self.ctx, args.targets)

    def run(self):
        ctx = self.ctx
        ctx.check()
        meta = machine_meta(ctx)
        t0 = time.monotonic()
        servers = ctx.start_servers("echo_server", "echo", list(MODES))
        try:
            for s in self.echo_sections:
                s.run(servers)
        finally:
            ctx.stop_servers(servers)
        for s in self.own_sections:
            s.run()
        meta["duration_s"] = round(time.monotonic() - t0, 1)
        self.targets.run()
        write_outputs(ctx, meta, self.echo_sections + self.own_sections, self.targets)

    def cleanup(self):
        self.ctx.cleanup()


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="CMake build directory (examples/ built)")
    ap.add_argument("--out", required=True, help="results directory")
    ap.add_argument("--quick", action="store_true", help="a short run (about 2 minutes)")
    ap.add_argument("--transports", default=DEFAULT_TRANSPORTS,
                    help=f"comma-separated, from: {', '.join(TRANSPORTS)} (default {DEFAULT_TRANSPORTS})")
    ap.add_argument("--targets", default=TARGETS_TSV, help="the targets table (default examples/targets.tsv)")
    return ap.parse_args()


def main():
    return run_guarded(Runner(parse_args()))


if __name__ == "__main__":
    sys.exit(main())
