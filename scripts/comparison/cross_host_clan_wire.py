"""The cross-host section's raw clan wire (bench_clan_wire: ping-pong and
stream through clan_emul's API over libfabric, server in host B, client in
host A), and the targets the section is held to: the raw wire's round trip
against the bare TCP socket's (bench_wire) and giop:clan's null echo
against giop:tcp's, all from the same run."""

import json
import os
import subprocess
import time

from .config import SERVER_START_TIMEOUT
from .cross_host_context import CLIENT_HOST, SERVER_HOST
from .cross_host_sections import stop_bench_server
from .fmt import fmt_ratio, log, md_table
from .processes import tail

# (what, limit): the targets for the cross-host section.
RAW_WIRE_LIMIT = 1.5
CLAN_ECHO_LIMIT = 1.2
# The raw wire's wait modes against the socket's: polling against a busy
# recv, blocking against a blocking read.
WAIT_PAIRS = (("poll", "busy"), ("block", "blocking"))


def provider():
    """The libfabric provider the NICs' wires use (CLAN_WIRE_PROVIDER, else tcp)."""
    return os.environ.get("CLAN_WIRE_PROVIDER") or "tcp"


class ClanWireBench:
    """bench_clan_wire --serve in B, --connect in A; the rendezvous file lies
    in the results directory, which both hosts see."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.tables = ""

    def run(self):
        ctx = self.ctx
        exe = ctx.exe("bench_clan_wire")
        rendezvous = os.path.join(ctx.tmp, "clan_wire_rendezvous")
        err_path = os.path.join(ctx.tmp, "bench_clan_wire_server.err")
        serve = [exe, "--serve", ctx.hosts.addr(SERVER_HOST), "--rendezvous", rendezvous]
        with open(err_path, "w") as err:
            server = ctx.children.popen(ctx.hosts.cmd(SERVER_HOST, serve), stdout=subprocess.PIPE, stderr=err,
                                        stdin=subprocess.DEVNULL)
        if not self._await_file(rendezvous, server):
            ctx.children.kill(server)
            ctx.fail("bench_clan_wire server", "clan wire", f"no rendezvous file\n{tail(err_path)}")
            return
        log(f"[wire] bench_clan_wire: server in host {SERVER_HOST}, client in host {CLIENT_HOST}, "
            f"provider {provider()}")
        cmd = [exe, "--connect", rendezvous, "--listen", ctx.hosts.addr(CLIENT_HOST), "--out", ctx.out]
        res = ctx.run_raw(cmd + (["--quick"] if ctx.args.quick else []), 900, "bench_clan_wire client",
                          "clan wire")  # run in host A by the context
        stop_bench_server(ctx, server, err_path, "bench_clan_wire server", "clan wire")
        if res is None:
            return
        rc, out, err = res
        if rc != 0:
            ctx.fail("bench_clan_wire client", "clan wire", f"exit status {rc}: {err.strip()[-2000:]}")
            return
        start = out.find("## ")
        self.tables = out[start:].strip() if start >= 0 else ""
        with open(os.path.join(ctx.out, "clan_wire.json")) as f:
            ctx.results["clan_wire"] = json.load(f)

    def _await_file(self, path, server):
        give_up = time.monotonic() + SERVER_START_TIMEOUT
        while time.monotonic() < give_up and server.poll() is None:
            if os.path.exists(path) and os.path.getsize(path) > 0:
                return True
            time.sleep(0.05)
        return False

    def markdown(self):
        if not self.tables:
            return []
        return ["## The raw clan wire between the hosts (bench_clan_wire)\n",
                f"libfabric provider: {provider()}. The client in host A writes a message and a bell word into the "
                "server's region in host B, which answers the same way.\n",
                self.tables.replace("\n## ", "\n### ").replace("## ", "### ", 1), ""]


def _p50(rows, wire_key, wire, wait, size):
    for r in rows or []:
        if r.get(wire_key) == wire and r.get("wait") == wait and r.get("size_bytes") == size:
            return r.get("p50_us")
    return None


def _verdict(value, limit):
    if value is None:
        return "-", "not measured"
    return fmt_ratio(value), "met" if value <= limit else "NOT MET"


def targets_markdown(ctx):
    """The section's targets, each a ratio of two p50s from this run."""
    res = ctx.results
    sock = (res.get("wire") or {}).get("latency")
    raw = (res.get("clan_wire") or {}).get("pingpong")
    rows = []
    for clan_wait, sock_wait in WAIT_PAIRS:
        a = _p50(raw, "transport", "clan wire", clan_wait, 8)
        b = _p50(sock, "wire", "tcp", sock_wait, 8)
        shown, verdict = _verdict(a / b if a and b else None, RAW_WIRE_LIMIT)
        rows.append([f"raw wire 8 B round trip ({clan_wait}) / TCP socket ({sock_wait})",
                     f"<= {RAW_WIRE_LIMIT}x", shown, verdict])
    for mode in ("tpc", "pool"):
        clan, tcp = res["echo"].get(f"clan/{mode}"), res["echo"].get(f"tcp/{mode}")
        value = clan["p50_us"] / tcp["p50_us"] if clan and tcp and tcp["p50_us"] else None
        shown, verdict = _verdict(value, CLAN_ECHO_LIMIT)
        rows.append([f"giop:clan null echo p50 / giop:tcp ({mode})", f"<= {CLAN_ECHO_LIMIT}x", shown, verdict])
    return ["## Targets between the hosts\n", "Ratios of p50s measured in this run.\n",
            md_table(["target", "limit", "ratio", "verdict"], rows), ""]
