"""The cross-host section's measurements: bench_wire's round trips and
bandwidth (the bare TCP socket, and any other wire, over the veth link);
then omniORB's null echo and request rate with the server in host B and the
client in host A, one row per transport."""

import json
import os
import subprocess
import time

from .config import MODES, SERVER_START_TIMEOUT, SERVER_STOP_TIMEOUT
from .cross_host_context import CLIENT_HOST, SERVER_HOST
from .echo import NullEcho
from .fmt import log, md_table
from .processes import read_line, tail
from .rate import RequestRate


def stop_bench_server(ctx, server, err_path, what, transport):
    """Waits for a benchmark's server to exit after its client's quit; a
    failure if it does not, or exits non-zero."""
    try:
        rc = server.wait(SERVER_STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        ctx.children.kill(server)
        ctx.fail(what, transport, f"did not exit after the client's quit\n{tail(err_path)}")
        return
    ctx.children.forget(server)
    server.stdout.close()
    if rc != 0:
        ctx.fail(what, transport, f"exit status {rc}\n{tail(err_path)}")


class WireBench:
    """bench_wire's server in B, its client in A; the client's tables and
    files (wire_latency.csv, wire_bandwidth.csv, wire.json) become the
    section's."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.tables = ""

    def run(self):
        ctx = self.ctx
        exe, addr = ctx.exe("bench_wire"), ctx.hosts.addr(SERVER_HOST)
        err_path = os.path.join(ctx.tmp, "bench_wire_server.err")
        with open(err_path, "w") as err:
            server = ctx.children.popen(ctx.hosts.cmd(SERVER_HOST, [exe, "server", "--listen", f"{addr}:0"]),
                                        stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL)
        line = read_line(server.stdout, time.monotonic() + SERVER_START_TIMEOUT)
        if not line.startswith("listening "):
            ctx.children.kill(server)
            ctx.fail("bench_wire server", "wire", f"first line {line!r}, not 'listening HOST:PORT'\n{tail(err_path)}")
            return
        log(f"[wire] bench_wire {line}: client in host {CLIENT_HOST}, wires {','.join(ctx.wires)}")
        cmd = [exe, "client", line.split()[1], "--wires", ",".join(ctx.wires), "--out", ctx.out]
        res = ctx.run_raw(cmd + (["--quick"] if ctx.args.quick else []), 900, "bench_wire client", "wire")
        stop_bench_server(ctx, server, err_path, "bench_wire server", "wire")
        if res is None:
            return
        rc, out, err = res
        if rc != 0:
            ctx.fail("bench_wire client", "wire", f"exit status {rc}: {err.strip()[-2000:]}")
            return
        start = out.find("## ")
        self.tables = out[start:].strip() if start >= 0 else ""
        with open(os.path.join(ctx.out, "wire.json")) as f:
            ctx.results["wire"] = json.load(f)

    def markdown(self):
        return [self.tables, ""] if self.tables else []

    def write_csv(self):
        """bench_wire writes its own files."""


class CrossEcho(NullEcho):
    """Null echo rounds as in the same-host comparison, without the ZeroMQ
    reference (it has no cross-host counterpart here)."""

    HEADING = "## Null echo round trip between the hosts, server: {}\n"

    INTRO = ("Client in host A, server in host B; round trips in us, empty string; {echo_rounds} rounds x "
             "{echo_calls} calls after {echo_warmup} warm-up calls per round (a new client process and "
             "connection per round).\n")

    def run(self, servers):
        ctx, rounds = self.ctx, self.ctx.p["echo_rounds"]
        for r in range(rounds):
            for m in MODES:
                for t in ctx.active(servers, m):
                    log(f"[echo] round {r + 1}/{rounds} {m} {t} across hosts: {ctx.p['echo_calls']} calls")
                    self._orb_round(servers[(t, m)], t, m, r)
        self._summarize()

    def mode_lines(self, mode):
        res = self.ctx.results
        tcp = res["echo"].get(f"tcp/{mode}")
        rows = [self._row(t, res["echo"].get(f"{t}/{mode}"), tcp) for t in self.ctx.transports]
        return [md_table(["transport", "calls", "p50", "p90", "p99", "max", "mean", "p50 / tcp", "mean / tcp",
                          "p50 of each round"], rows), ""]


class CrossRate(RequestRate):
    HEADING = "## Request rate between the hosts (requests/s), server: {}\n"

    INTRO = ("Client process in host A, server in host B: N client threads, one outstanding null echo each, one "
             "connection each; {rate_rounds} rounds x {rate_seconds} s after {rate_warmup} s warm-up, counted "
             "together.\n")
