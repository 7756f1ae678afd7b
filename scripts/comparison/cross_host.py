#!/usr/bin/env python3
"""Benchmarks between two hosts on one machine (scripts/two_hosts.sh: two
network namespaces joined by a veth pair, each with its own /tmp, /dev/shm
and boot id): bench_wire's round trips and bandwidth over each wire (the
bare TCP socket first) and bench_clan_wire's over the raw clan wire, then omniORB's null echo and request rate with the
server in host B and the client in host A, over each transport that runs
across hosts.

  cross_host.py --build DIR --out RESULTS_DIR [--quick] [--transports tcp,clan,otp,via]
                [--wires tcp] [--prefix PREFIX]

DIR is a CMake build tree with examples/ built (echo_server, echo_client,
rate_client, bench_wire, bench_clan_wire). The hosts are made under PREFIX (default cmp<pid>,
so that no other run shares them) and removed at the end, also on Ctrl-C and
SIGTERM. Progress goes to stderr, Markdown tables to stdout and
RESULTS_DIR/cross_host.md; RESULTS_DIR also gets cross_host.json, echo.csv,
echo_rounds.csv, echo_samples.csv, rate.csv, bench_wire's wire_latency.csv,
wire_bandwidth.csv and wire.json, bench_clan_wire's clan_wire_pingpong.csv,
clan_wire_stream.csv and clan_wire.json, and cross_host.png. The Targets
table holds the raw wire and giop:clan to the bare socket and giop:tcp. A transport joins by a
line in CROSS_HOST_TRANSPORTS (scripts/comparison/config.py), a wire by its
name in --wires.

Exit status: 2 with the script's message when the hosts cannot be made (not
root, no `ip`); 1 if something failed to run (see the Failures section); 0
otherwise.
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from comparison.cross_host_clan_wire import ClanWireBench, provider, targets_markdown  # noqa: E402
from comparison.config import (CROSS_HOST_DEFAULT_TRANSPORTS, CROSS_HOST_TRANSPORTS, CROSS_HOST_WIRES,  # noqa: E402
                               MODES)
from comparison.cross_host_context import HostsContext  # noqa: E402
from comparison.cross_host_sections import CrossEcho, CrossRate, WireBench  # noqa: E402
from comparison.fmt import log  # noqa: E402
from comparison.guarded import run_guarded  # noqa: E402
from comparison.hosts import HostsUnavailable, TwoHosts  # noqa: E402
from comparison.report import failures_markdown  # noqa: E402

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Runner:
    def __init__(self, args):
        self.hosts = TwoHosts(args.prefix)
        self.ctx = HostsContext(args, self.hosts)
        self.wire = WireBench(self.ctx)
        self.clan_wire = ClanWireBench(self.ctx)
        self.orb_sections = [CrossEcho(self.ctx), CrossRate(self.ctx)]

    def run(self):
        ctx = self.ctx
        ctx.check()
        log(f"[hosts] making two hosts (prefix {self.hosts.prefix})")
        try:
            log(self.hosts.up())
        except HostsUnavailable as e:
            log(str(e))
            raise SystemExit(2)
        ctx.results["hosts"] = dict(prefix=self.hosts.prefix, A=self.hosts.addr("A"), B=self.hosts.addr("B"))
        t0 = time.monotonic()
        self.wire.run()
        self.clan_wire.run()
        servers = ctx.start_servers("echo_server", "echo", list(MODES))
        try:
            for s in self.orb_sections:
                s.run(servers)
        finally:
            ctx.stop_servers(servers)
        self.write(round(time.monotonic() - t0, 1))

    def meta(self, duration):
        ctx = self.ctx
        cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                    if line.startswith("model name")), "unknown")
        return dict(date=datetime.datetime.now().astimezone().isoformat(timespec="seconds"), cpu=cpu,
                    cores=os.cpu_count(), kernel=platform.release(), duration_s=duration,
                    profile="quick" if ctx.args.quick else "full", transports=ctx.transports, wires=ctx.wires,
                    provider=provider(),
                    endpoints=ctx.endpoints(), hosts=ctx.results["hosts"], params=ctx.p)

    def header(self, m):
        h = m["hosts"]
        failures = [f"- **failures: {len(self.ctx.failures)}** (see the end)"] if self.ctx.failures else []
        return ["# Across two hosts\n",
                f"- date: {m['date']}; run: {m['profile']} ({m['duration_s']} s)",
                f"- machine: {m['cpu']}, {m['cores']} cores, kernel {m['kernel']}",
                f"- hosts: A {h['A']} (clients), B {h['B']} (servers): network namespaces joined by a veth pair, "
                f"each with its own /tmp, /dev/shm, boot id and host name (scripts/two_hosts.sh, prefix "
                f"{h['prefix']})",
                "- endpoints: " + "; ".join(f"{t} `{e}`" for t, e in m["endpoints"].items()),
                f"- libfabric provider of the NICs' wires: {m['provider']} (CLAN_WIRE_PROVIDER)",
                "- wires of bench_wire: " + ", ".join(m["wires"]) + "; ratios are to tcp in the same run",
                *failures, ""]

    def write(self, duration):
        ctx, meta = self.ctx, self.meta(duration)
        with open(os.path.join(ctx.out, "cross_host.json"), "w") as f:
            json.dump(dict(meta=meta, failures=ctx.failures, failed_transports=ctx.failed_transports,
                           wire=ctx.results["wire"], clan_wire=ctx.results["clan_wire"], echo=ctx.results["echo"],
                           echo_rounds=ctx.results["echo_rounds"], rate=ctx.results["rate"]), f, indent=1)
        for s in self.orb_sections:
            s.write_csv()
        md = self.header(meta) + self.wire.markdown() + self.clan_wire.markdown()
        for s in self.orb_sections:
            md += s.markdown()
        md += targets_markdown(ctx)
        md = "\n".join(md + failures_markdown(ctx))
        with open(os.path.join(ctx.out, "cross_host.md"), "w") as f:
            f.write(md + "\n")
        print(md, flush=True)
        plot(ctx.out)

    def cleanup(self):
        self.ctx.cleanup()
        if not self.hosts.attempted or self.hosts.unavailable:
            return
        why = self.hosts.down()
        if why:
            log(f"[hosts] removing the hosts failed: {why}")


def plot(out):
    """cross_host.png (scripts/plot_cross_host.py runs itself under a python3 with matplotlib)."""
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "plot_cross_host.py"), out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    if p.returncode == 0:
        for png in p.stdout.split():
            log(f"wrote {png}")
    else:
        log(f"plots skipped: {p.stderr.strip()[-500:]}")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="CMake build directory (examples/ built)")
    ap.add_argument("--out", required=True, help="results directory")
    ap.add_argument("--quick", action="store_true", help="a short run")
    ap.add_argument("--transports", default=CROSS_HOST_DEFAULT_TRANSPORTS,
                    help=f"comma-separated, from: {', '.join(CROSS_HOST_TRANSPORTS)}")
    ap.add_argument("--wires", default=CROSS_HOST_WIRES, help=f"bench_wire's wires (default {CROSS_HOST_WIRES})")
    ap.add_argument("--prefix", default=f"cmp{os.getpid()}", help="the hosts' prefix (default cmp<pid>)")
    return ap.parse_args()


def main():
    return run_guarded(Runner(parse_args()))


if __name__ == "__main__":
    sys.exit(main())
