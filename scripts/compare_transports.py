#!/usr/bin/env python3
"""Compares omniORB GIOP transports in one run: null echo latency, request
rate, ttcp throughput and idle server CPU; then giop:otp (omniTransport over
the lossy datagram link) under 0, 0.1, 1 and 5 % loss in both directions:
echo latency, completed calls, exactly-once duplicates/losses, one-ways
delivered.

  compare_transports.py --build DIR --out RESULTS_DIR [--quick]
                        [--transports tcp,unix,clan,otp,via]

DIR is a CMake build tree with examples/ built (echo_server, echo_client,
ttcp_server, ttcp_client, rate_client, zmq_echo). Every server is a real
process with one endpoint of one transport (automatic address); clients get
only its IOR. Transports are alternated in rounds (tcp unix clan tcp unix clan
...) so drift hits all alike. Progress goes to stderr, Markdown tables to
stdout; RESULTS_DIR gets comparison.json, one CSV per table, the raw echo
samples and PNG plots (scripts/plot_comparison.py).

A missed target is reported, never an error. The exit status is non-zero only
if something failed to run (a server that did not start or shut down cleanly,
a client that failed or timed out); a transport whose server fails to start is
reported with the server's stderr and skipped. Under loss, a call that fails
or a one-way that is lost is a measured result, not a failure. All child processes are killed
on exit, including on Ctrl-C and SIGTERM (each runs in its own process group).

Method: examples/DESIGN.md. A new transport joins by adding a line
to TRANSPORTS below.
"""

import argparse
import csv
import datetime
import json
import os
import platform
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# ---------------------------------------------------------------------------
# The transport table: name -> server endpoint options (tmp: a private
# directory, tag: a unique name for this server). Clients need only the IOR.
TRANSPORTS = {
    "tcp": lambda tmp, tag: ["-ORBendPoint", "giop:tcp:127.0.0.1:0"],
    "unix": lambda tmp, tag: ["-ORBendPoint", f"giop:unix:{tmp}/{tag}.sock"],
    "clan": lambda tmp, tag: ["-ORBendPoint", "giop:clan::"],
    "otp": lambda tmp, tag: ["-ORBendPoint", "giop:otp::"],
    "via": lambda tmp, tag: ["-ORBendPoint", "giop:via::"],
}
DEFAULT_TRANSPORTS = "tcp,unix,clan,otp,via"

# Server threading modes.
MODES = {
    "tpc": ("thread per connection", ["-ORBthreadPerConnectionPolicy", "1"]),
    "pool": ("thread pool", ["-ORBthreadPerConnectionPolicy", "0"]),
}

TTCP_MODES = ["oneway", "exactly", "marshalled"]
TTCP_MODE_NAMES = {
    "oneway": "one-way `Buffer` (receive_at_most_once)",
    "exactly": "exactly-once `Buffer` (receive_exactly_once)",
    "marshalled": "marshalled `PairSeq` (receive_marshalled, size/8 elements)",
}

KiB = 1024
MiB = 1024 * 1024

PROFILES = {
    "full": dict(
        echo_rounds=5, echo_calls=2000, echo_warmup=500,
        rate_clients=[1, 2, 4, 8, 16], rate_rounds=2, rate_seconds=2.0, rate_warmup=0.5,
        rate_procs=[(16, 4)], rate_procs_rounds=3,
        ttcp_sizes=[64, 256, KiB, 4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, MiB], ttcp_total=10 * MiB,
        idle_seconds=1.0,
        loss_echo_calls=3000, loss_echo_batches=3, loss_echo_warmup=100,
        loss_ttcp_calls=500, loss_ttcp_size=4 * KiB, loss_oneway_calls=500,
    ),
    "quick": dict(
        echo_rounds=2, echo_calls=500, echo_warmup=100,
        rate_clients=[1, 4], rate_rounds=1, rate_seconds=0.5, rate_warmup=0.2,
        rate_procs=[(16, 4)], rate_procs_rounds=1,
        ttcp_sizes=[64, 4 * KiB, 64 * KiB, MiB], ttcp_total=2 * MiB,
        idle_seconds=1.0,
        loss_echo_calls=500, loss_echo_batches=2, loss_echo_warmup=50,
        loss_ttcp_calls=500, loss_ttcp_size=4 * KiB, loss_oneway_calls=500,
    ),
}

# omniTransport under loss (paper 002 sect. 4.2): datagrams each process drops,
# per million, applied to the server AND the client (both directions lossy).
# Seeds: every server -ORBotpSeed LOSS_SERVER_SEED, client k (k = 0, 1, ...)
# LOSS_CLIENT_SEED + k, the same at every loss rate. RTO and window are the
# transport's defaults, passed explicitly so that the target uses the RTO run.
LOSS_PPMS = [0, 1000, 10000, 50000]
LOSS_SERVER_SEED = 29
LOSS_CLIENT_SEED = 11
OTP_RTO_US = 2000
OTP_WINDOW = 16
# The one-way ttcp client polls received() for 30 s before it reports a
# one-way shortfall (examples/ttcp_client.cpp): one-ways lost under loss cost
# that wait (up to 3 x 30 s). They run one after another: in parallel (four
# polling clients on two cores) otp connections failed with COMM_FAILURE.
ONEWAY_SHORTFALL = r"server counted (\d+) bytes of (\d+) sent"


def otp_loss_args(ppm, seed):
    return ["-ORBotpLossPpm", str(ppm), "-ORBotpSeed", str(seed), "-ORBotpRtoUs", str(OTP_RTO_US),
            "-ORBotpWindow", str(OTP_WINDOW)]


def fmt_loss(ppm):
    return f"{ppm / 10000:g} %"

SERVER_START_TIMEOUT = 15.0
# Client processes of a multi-process rate run: each must have connected all
# its threads within this time after it started (16 ORBs starting on 2 busy
# cores take a few seconds).
RATE_READY_TIMEOUT = 60.0
SERVER_STOP_TIMEOUT = 10.0


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def fmt_size(n):
    if n >= MiB and n % MiB == 0:
        return f"{n // MiB} MiB"
    if n >= KiB and n % KiB == 0:
        return f"{n // KiB} KiB"
    return f"{n} B"


def fmt_num(x, digits=1):
    if x is None:
        return "-"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"


def fmt_ratio(x):
    return "-" if x is None else f"{x:.2f}x"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def percentile(sorted_vals, q):
    """Nearest rank, as the C++ clients compute it."""
    if not sorted_vals:
        return None
    import math
    rank = max(1, min(len(sorted_vals), math.ceil(q * len(sorted_vals))))
    return sorted_vals[rank - 1]


def summarize(samples):
    s = sorted(samples)
    if not s:
        return None
    return dict(count=len(s), p50_us=percentile(s, 0.5), p90_us=percentile(s, 0.9),
                p99_us=percentile(s, 0.99), max_us=s[-1], mean_us=sum(s) / len(s))


# ---------------------------------------------------------------------------
# Processes


class RunFailed(Exception):
    """A server or client did not run as it should (reported, not fatal)."""


class Children:
    """Every child process, each in its own process group, so that cleanup
    also reaches anything it started."""

    def __init__(self):
        self.procs = []

    def popen(self, cmd, **kw):
        p = subprocess.Popen(cmd, start_new_session=True, **kw)
        self.procs.append(p)
        return p

    def forget(self, p):
        if p in self.procs:
            self.procs.remove(p)

    def kill_all(self):
        for p in list(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 3
        for p in list(self.procs):
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(p.pid, signal.SIGKILL)  # whole group, even if the leader exited
            except (ProcessLookupError, PermissionError):
                pass
            try:
                p.wait(1)
            except subprocess.TimeoutExpired:
                pass
        self.procs.clear()


def read_line(pipe, deadline):
    """The next line of a child's stdout, stripped; '' at EOF or the deadline."""
    fd, buf = pipe.fileno(), b""
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        r, _, _ = select.select([fd], [], [], min(left, 0.2))
        if r:
            ch = os.read(fd, 1)  # byte by byte: nothing after the line is taken from the pipe
            if not ch:
                break
            buf += ch
    return buf.decode(errors="replace").strip()


def tail(path, lines=20):
    try:
        with open(path, errors="replace") as f:
            text = f.read().strip().splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


class Server:
    def __init__(self, runner, prog, transport, mode, tag, extra=()):
        self.runner = runner
        self.transport, self.mode, self.tag = transport, mode, tag
        self.err_path = os.path.join(runner.tmp, tag + ".err")
        cmd = [runner.exe(prog)] + TRANSPORTS[transport](runner.tmp, tag) + MODES[mode][1] + list(extra)
        self.cmd = cmd
        self.stderr = open(self.err_path, "w")
        self.proc = runner.children.popen(cmd, stdout=subprocess.PIPE, stderr=self.stderr,
                                          stdin=subprocess.DEVNULL)
        self.ior = self._read_first_line(SERVER_START_TIMEOUT)
        if not self.ior.startswith("IOR:"):
            self.kill()
            raise RunFailed(f"{' '.join(cmd)}: first line is not an IOR: {self.ior[:80]!r}\n{tail(self.err_path)}")

    def _read_first_line(self, timeout):
        fd = self.proc.stdout.fileno()
        buf = b""
        deadline = time.monotonic() + timeout
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise RunFailed(f"{' '.join(self.cmd)}: no IOR within {timeout:.0f} s\n{tail(self.err_path)}")
            r, _, _ = select.select([fd], [], [], min(left, 0.2))
            if r:
                chunk = os.read(fd, 65536)
                if not chunk:
                    rc = self.proc.wait()
                    raise RunFailed(f"{' '.join(self.cmd)}: exited with status {rc} before printing an IOR\n"
                                    f"{tail(self.err_path)}")
                buf += chunk
        return buf.split(b"\n", 1)[0].decode().strip()

    def alive(self):
        return self.proc.poll() is None

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self._close()

    def _close(self):
        self.runner.children.forget(self.proc)
        self.proc.stdout.close()
        self.stderr.close()

    def stop(self):
        """SIGTERM, then a clean exit (status 0) within the time limit."""
        if self.proc.poll() is not None:
            rc = self.proc.returncode
            self._close()
            raise RunFailed(f"{self.tag}: server died earlier (status {rc})\n{tail(self.err_path)}")
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(SERVER_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.kill()
            raise RunFailed(f"{self.tag}: server did not exit within {SERVER_STOP_TIMEOUT:.0f} s of SIGTERM\n"
                            f"{tail(self.err_path)}")
        self._close()
        if rc != 0:
            raise RunFailed(f"{self.tag}: server exited with status {rc} after SIGTERM\n{tail(self.err_path)}")


def proc_cpu_ticks(pid):
    """utime + stime of a process (all threads), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        data = f.read()
    fields = data[data.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5)


def proc_cpu_ns(pid):
    """Run time of every live thread in nanoseconds (schedstat), or None."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        return None
    return total


# ---------------------------------------------------------------------------
# The runner


class Runner:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.out = os.path.abspath(args.out)
        self.p = PROFILES["quick" if args.quick else "full"]
        self.transports = [t.strip() for t in args.transports.split(",") if t.strip()]
        self.children = Children()
        self.tmp = tempfile.mkdtemp(prefix="clanorb-cmp-")
        self.failures = []       # {"what", "transport", "detail"}
        self.failed_transports = {}  # transport -> first failure text
        self.seq = 0
        self.results = dict(echo={}, echo_rounds=[], zmq=None, rate=[], rate_procs=[], ttcp=[], idle=[], loss=[])
        self.loss_notes = []  # lines for the loss section (calls that failed, as measured)
        self.samples = []  # (transport, mode, round, us)
        self.loss_samples = []  # (loss_ppm, batch, us)

    def exe(self, prog):
        return os.path.join(self.build, "examples", prog)

    def tag(self, kind, transport, mode):
        self.seq += 1
        return f"{kind}-{transport}-{mode}-{self.seq}"

    def fail(self, what, transport, detail):
        log(f"FAILED {what} ({transport}): {detail}")
        self.failures.append(dict(what=what, transport=transport, detail=detail))

    def client(self, cmd, timeout, what, transport):
        """Runs a client, returns its JSON line as a dict, or None on failure."""
        p = self.children.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            self.children.forget(p)
            self.fail(what, transport, f"timed out after {timeout:.0f} s: {' '.join(cmd[:1] + cmd[2:])}")
            return None
        self.children.forget(p)
        if p.returncode != 0:
            self.fail(what, transport, f"exit status {p.returncode}: {err.decode(errors='replace').strip()[-2000:]}")
            return None
        try:
            return json.loads(out.decode().strip().splitlines()[-1])
        except (ValueError, IndexError):
            self.fail(what, transport, f"no JSON on stdout: {out[:200]!r}")
            return None

    def start_servers(self, prog, kind, modes):
        """One server per (transport, mode); a transport whose server fails is skipped."""
        servers = {}
        for t in self.transports:
            if t in self.failed_transports:
                continue
            for m in modes:
                try:
                    servers[(t, m)] = Server(self, prog, t, m, self.tag(kind, t, m))
                except RunFailed as e:
                    self.fail(f"{prog} start", t, str(e))
                    self.failed_transports.setdefault(t, str(e))
                    for key in [k for k in servers if k[0] == t]:
                        servers.pop(key).kill()
                    break
        return servers

    def stop_servers(self, servers):
        for (t, _), s in servers.items():
            try:
                s.stop()
            except RunFailed as e:
                self.fail("server shutdown", t, str(e))

    def active(self, servers, mode):
        return [t for t in self.transports if (t, mode) in servers and servers[(t, mode)].alive()]

    # -- null echo ----------------------------------------------------------
    def run_echo(self, servers):
        p = self.p
        rounds = p["echo_rounds"]
        zmq_ep = f"ipc://{self.tmp}/zmq-echo.ipc"
        zmq_err = open(os.path.join(self.tmp, "zmq.err"), "w")
        zmq = self.children.popen([self.exe("zmq_echo"), "server", zmq_ep], stdout=subprocess.DEVNULL,
                                  stderr=zmq_err, stdin=subprocess.DEVNULL)
        time.sleep(0.2)
        zmq_samples = []
        per_round = {}
        for r in range(rounds):
            for m in MODES:
                for t in self.active(servers, m):
                    log(f"[echo] round {r + 1}/{rounds} {m} {t}: {p['echo_calls']} calls")
                    sf = os.path.join(self.tmp, f"samples-{t}-{m}-{r}.txt")
                    res = self.client([self.exe("echo_client"), servers[(t, m)].ior, "--calls", str(p["echo_calls"]),
                                       "--warmup", str(p["echo_warmup"]), "--samples", sf], 120, "null echo", t)
                    if res is None:
                        continue
                    vals = [float(x) for x in open(sf).read().split()]
                    self.samples += [(t, m, r, v) for v in vals]
                    per_round.setdefault((t, m), []).append(res["p50_us"])
                    self.results["echo_rounds"].append(dict(transport=t, mode=m, round=r, **res))
            log(f"[echo] round {r + 1}/{rounds} zmq ipc")
            if zmq.poll() is not None:
                self.fail("zmq_echo server", "zmq", f"exited with status {zmq.returncode}")
                break
            sf = os.path.join(self.tmp, f"samples-zmq-{r}.txt")
            res = self.client([self.exe("zmq_echo"), "client", zmq_ep, "--calls", str(p["echo_calls"]),
                               "--warmup", str(p["echo_warmup"]), "--samples", sf], 120, "zmq echo", "zmq")
            if res is not None:
                vals = [float(x) for x in open(sf).read().split()]
                zmq_samples += vals
                self.samples += [("zmq", "-", r, v) for v in vals]
                per_round.setdefault(("zmq", "-"), []).append(res["p50_us"])
        if zmq.poll() is None:
            zmq.send_signal(signal.SIGTERM)
            try:
                zmq.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(zmq.pid, signal.SIGKILL)
                zmq.wait()
        self.children.forget(zmq)
        zmq_err.close()
        for (t, m), p50s in per_round.items():
            vals = [s[3] for s in self.samples if s[0] == t and s[1] == m]
            summ = summarize(vals)
            if summ:
                summ["p50_per_round_us"] = p50s
                if t == "zmq":
                    self.results["zmq"] = summ
                else:
                    self.results["echo"][f"{t}/{m}"] = summ

    # -- request rate ---------------------------------------------------------
    def run_rate(self, servers):
        p = self.p
        acc = {}
        for r in range(p["rate_rounds"]):
            for n in p["rate_clients"]:
                for m in MODES:
                    for t in self.active(servers, m):
                        log(f"[rate] round {r + 1}/{p['rate_rounds']} {n} clients {m} {t}")
                        res = self.client([self.exe("rate_client"), servers[(t, m)].ior, "--clients", str(n),
                                           "--seconds", str(p["rate_seconds"]), "--warmup", str(p["rate_warmup"])],
                                          60 + p["rate_seconds"] * 2, "request rate", t)
                        if res is None:
                            continue
                        a = acc.setdefault((t, m, n), dict(requests=0, seconds=0.0, sockets=[], retries=0, rounds=[]))
                        a["requests"] += res["requests"]
                        a["seconds"] += res["seconds"]
                        a["sockets"].append(res.get("sockets"))
                        a["retries"] += res.get("connect_retries", 0)
                        a["rounds"].append(res["requests_per_s"])
        for (t, m, n), a in acc.items():
            self.results["rate"].append(dict(
                transport=t, mode=m, clients=n, requests=a["requests"], seconds=a["seconds"],
                requests_per_s=a["requests"] / a["seconds"] if a["seconds"] else None,
                requests_per_s_rounds=a["rounds"], sockets=a["sockets"], connect_retries=a["retries"]))

    def rate_procs_once(self, server, procs, threads):
        """One multi-process rate measurement: `procs` rate_client processes of
        `threads` threads each, every one in a session of its own, started
        together once all have connected (--wait-go) so that their counting
        windows coincide. Returns the summed requests/s, or None on failure."""
        p, t = self.p, server.transport
        cmd = [self.exe("rate_client"), server.ior, "--clients", str(threads), "--seconds", str(p["rate_seconds"]),
               "--warmup", str(p["rate_warmup"]), "--wait-go"]
        errs = [tempfile.TemporaryFile() for _ in range(procs)]
        clients = [self.children.popen(cmd, stdout=subprocess.PIPE, stderr=e, stdin=subprocess.PIPE) for e in errs]
        what = f"request rate {procs} processes x {threads} threads"

        def failed(detail):
            for c in clients:
                if c.poll() is None:
                    os.killpg(c.pid, signal.SIGKILL)
                c.wait()
                self.children.forget(c)
            self.fail(what, t, detail)
            return None

        deadline = time.monotonic() + RATE_READY_TIMEOUT
        for c, e in zip(clients, errs):
            line = read_line(c.stdout, deadline)
            if line != "ready":
                e.seek(0)
                return failed(f"a client did not get ready ({line!r}): {e.read().decode(errors='replace')[-1000:]}")
        for c in clients:
            c.stdin.write(b"go\n")
            c.stdin.flush()
        total = 0.0
        for c, e in zip(clients, errs):
            try:
                out, _ = c.communicate(timeout=60 + p["rate_warmup"] + p["rate_seconds"] * 2)
            except subprocess.TimeoutExpired:
                return failed("a client did not finish in time")
            self.children.forget(c)
            e.seek(0)
            if c.returncode != 0:
                return failed(f"exit status {c.returncode}: {e.read().decode(errors='replace').strip()[-1000:]}")
            try:
                total += json.loads(out.decode().strip().splitlines()[-1])["requests_per_s"]
            except (ValueError, IndexError, KeyError):
                return failed(f"no JSON on stdout: {out[:200]!r}")
        return total

    def run_rate_procs(self, servers):
        """Many client processes against one server (the load of paper 000
        Table 4, spread over processes as real clients are): transports and
        modes alternated within each round."""
        p = self.p
        acc = {}
        for r in range(p["rate_procs_rounds"]):
            for procs, threads in p["rate_procs"]:
                for m in MODES:
                    for t in self.active(servers, m):
                        log(f"[rate] round {r + 1}/{p['rate_procs_rounds']} {procs} processes x {threads} threads "
                            f"{m} {t}")
                        x = self.rate_procs_once(servers[(t, m)], procs, threads)
                        if x is not None:
                            acc.setdefault((t, m, procs, threads), []).append(x)
        for (t, m, procs, threads), rounds in acc.items():
            self.results["rate_procs"].append(dict(
                transport=t, mode=m, procs=procs, threads=threads, clients=procs * threads,
                requests_per_s=sum(rounds) / len(rounds), requests_per_s_rounds=rounds))

    # -- ttcp -----------------------------------------------------------------
    def run_ttcp(self):
        p = self.p
        servers = self.start_servers("ttcp_server", "ttcp", ["tpc"])
        try:
            for size in p["ttcp_sizes"]:
                for mode in TTCP_MODES:
                    for t in self.active(servers, "tpc"):
                        log(f"[ttcp] {mode} {fmt_size(size)} x {fmt_size(p['ttcp_total'])} {t}")
                        res = self.client([self.exe("ttcp_client"), servers[(t, "tpc")].ior, "--mode", mode,
                                           "--size", str(size), "--total", str(p["ttcp_total"])],
                                          300, f"ttcp {mode} {fmt_size(size)}", t)
                        if res is not None:
                            self.results["ttcp"].append(dict(transport=t, **res))
        finally:
            self.stop_servers(servers)

    # -- idle CPU -------------------------------------------------------------
    def run_idle(self):
        idle = self.p["idle_seconds"]
        tick = os.sysconf("SC_CLK_TCK")
        for m in MODES:
            for t in self.transports:
                if t in self.failed_transports:
                    continue
                log(f"[idle] {m} {t}: one call, then {idle:.1f} s idle with the connection open")
                try:
                    srv = Server(self, "echo_server", t, m, self.tag("idle", t, m))
                except RunFailed as e:
                    self.fail("echo_server start (idle)", t, str(e))
                    continue
                cli = None
                try:
                    cli = self.children.popen([self.exe("echo_client"), srv.ior, "--warmup", "1", "--calls", "1",
                                               "--hold", str(idle + 2.0)],
                                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
                    r, _, _ = select.select([cli.stdout], [], [], 15)
                    line = cli.stdout.readline() if r else b""
                    if not line.startswith(b"{"):
                        raise RunFailed(f"idle client gave no result: {line[:200]!r}")
                    time.sleep(0.2)  # let the call's aftermath settle
                    s0, n0, c0 = proc_cpu_ticks(srv.proc.pid), proc_cpu_ns(srv.proc.pid), proc_cpu_ticks(cli.pid)
                    t0 = time.monotonic()
                    time.sleep(idle)
                    s1, n1, c1 = proc_cpu_ticks(srv.proc.pid), proc_cpu_ns(srv.proc.pid), proc_cpu_ticks(cli.pid)
                    dt = time.monotonic() - t0
                    self.results["idle"].append(dict(
                        transport=t, mode=m, seconds=dt,
                        server_pct=100.0 * (s1 - s0) / tick / dt,
                        server_pct_schedstat=(100.0 * (n1 - n0) / 1e9 / dt) if n0 is not None and n1 is not None
                        else None,
                        client_pct=100.0 * (c1 - c0) / tick / dt))
                    cli.wait(idle + 15)
                    if cli.returncode != 0:
                        raise RunFailed(f"idle client exit status {cli.returncode}: "
                                        f"{cli.stderr.read().decode(errors='replace')[-1000:]}")
                except (RunFailed, OSError, subprocess.TimeoutExpired) as e:
                    self.fail("idle CPU", t, str(e))
                finally:
                    if cli is not None:
                        if cli.poll() is None:
                            os.killpg(cli.pid, signal.SIGKILL)
                            cli.wait()
                        self.children.forget(cli)
                        cli.stdout.close()
                        cli.stderr.close()
                    try:
                        srv.stop()
                    except RunFailed as e:
                        self.fail("server shutdown (idle)", t, str(e))

    # -- omniTransport under loss -----------------------------------------------
    def run_raw(self, cmd, timeout, what, transport):
        """Runs a client; (returncode, stdout, stderr), or None if it timed out (a failure)."""
        p = self.children.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            self.children.forget(p)
            self.fail(what, transport, f"timed out after {timeout:.0f} s: {' '.join(cmd[:1] + cmd[2:])}")
            return None
        self.children.forget(p)
        return p.returncode, out.decode(errors="replace"), err.decode(errors="replace")

    @staticmethod
    def last_json(text):
        try:
            return json.loads(text.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return None

    def run_loss(self):
        """otp at LOSS_PPMS, thread-per-connection servers, both directions lossy:
        null echo latency and completed calls (client batches alternated over
        the loss rates), exactly-once ttcp (servant byte count -> duplicates /
        lost calls) and one-way ttcp (delivered <= sent)."""
        if "otp" not in self.transports or "otp" in self.failed_transports:
            return
        p = self.p
        ppms = LOSS_PPMS
        rows = {ppm: dict(loss_ppm=ppm, echo_calls_sent=0, echo_calls_completed=0, echo_batches_failed=0,
                          echo=None, exactly_calls=None, exactly_counted_calls=None, duplicates=None,
                          lost_calls=None, oneway_sent=None, oneway_delivered=None, oneway_failed=False) for ppm in ppms}
        samples = {ppm: [] for ppm in ppms}

        def start(prog, kind, ppm):
            try:
                return Server(self, prog, "otp", "tpc", self.tag(f"{kind}-loss{ppm}", "otp", "tpc"),
                              extra=otp_loss_args(ppm, LOSS_SERVER_SEED))
            except RunFailed as e:
                self.fail(f"{prog} start (loss {fmt_loss(ppm)})", "otp", str(e))
                return None

        # Echo: batch k of every rate, then batch k+1 (rates alternated).
        servers = {ppm: start("echo_server", "echo", ppm) for ppm in ppms}
        try:
            batches = p["loss_echo_batches"]
            per = max(1, p["loss_echo_calls"] // batches)
            for k in range(batches):
                for ppm in ppms:
                    srv = servers[ppm]
                    if srv is None or not srv.alive():
                        continue
                    log(f"[loss] echo batch {k + 1}/{batches} otp loss {fmt_loss(ppm)}: {per} calls")
                    sf = os.path.join(self.tmp, f"loss-samples-{ppm}-{k}.txt")
                    rows[ppm]["echo_calls_sent"] += per
                    res = self.run_raw([self.exe("echo_client"), srv.ior, "--calls", str(per),
                                        "--warmup", str(p["loss_echo_warmup"]), "--samples", sf]
                                       + otp_loss_args(ppm, LOSS_CLIENT_SEED + k), 120,
                                       f"null echo under loss {fmt_loss(ppm)}", "otp")
                    if res is None:
                        rows[ppm]["echo_batches_failed"] += 1
                        continue
                    rc, out, err = res
                    if rc != 0 or self.last_json(out) is None:
                        # A call that failed under loss is a result, not a run failure.
                        rows[ppm]["echo_batches_failed"] += 1
                        self.loss_notes.append(f"loss {fmt_loss(ppm)}, echo batch {k + 1}: client exit status {rc}, "
                                               f"its {per} calls counted as not completed: "
                                               f"{err.strip()[-300:] or out.strip()[-300:]}")
                        continue
                    vals = [float(x) for x in open(sf).read().split()]
                    samples[ppm] += vals
                    self.loss_samples += [(ppm, k, v) for v in vals]
                    rows[ppm]["echo_calls_completed"] += len(vals)
        finally:
            for ppm, srv in servers.items():
                if srv is not None:
                    try:
                        srv.stop()
                    except RunFailed as e:
                        self.fail(f"server shutdown (loss {fmt_loss(ppm)})", "otp", str(e))
        for ppm in ppms:
            rows[ppm]["echo"] = summarize(samples[ppm])
            rows[ppm]["calls_over_rto"] = sum(1 for v in samples[ppm] if v > OTP_RTO_US)
            per_batch = {}
            for q, k, v in self.loss_samples:
                if q == ppm:
                    per_batch.setdefault(k, []).append(v)
            rows[ppm]["p50_per_batch_us"] = [summarize(v)["p50_us"] for _, v in sorted(per_batch.items())]

        # ttcp: exactly-once per rate, then one-way per rate.
        size, calls, ow_calls = p["loss_ttcp_size"], p["loss_ttcp_calls"], p["loss_oneway_calls"]
        servers = {ppm: start("ttcp_server", "ttcp", ppm) for ppm in ppms}
        try:
            for ppm in ppms:
                srv = servers[ppm]
                if srv is None or not srv.alive():
                    continue
                log(f"[loss] exactly-once ttcp otp loss {fmt_loss(ppm)}: {calls} calls x {fmt_size(size)}")
                res = self.run_raw([self.exe("ttcp_client"), srv.ior, "--mode", "exactly", "--size", str(size),
                                    "--total", str(calls * size)] + otp_loss_args(ppm, LOSS_CLIENT_SEED + 100),
                                   120, f"exactly-once ttcp under loss {fmt_loss(ppm)}", "otp")
                if res is None:
                    continue
                rc, out, err = res
                j = self.last_json(out) if rc == 0 else None
                m = re.search(ONEWAY_SHORTFALL, err)
                if j is not None:
                    counted = j["bytes"]
                elif m:
                    counted = int(m.group(1))
                else:
                    self.loss_notes.append(f"loss {fmt_loss(ppm)}, exactly-once ttcp: client exit status {rc}, "
                                           f"no servant count: {err.strip()[-300:]}")
                    continue
                r = rows[ppm]
                r["exactly_calls"] = calls
                r["exactly_counted_bytes"] = counted
                r["exactly_counted_calls"] = counted / size
                r["duplicates"] = max(0, counted // size - calls)
                r["lost_calls"] = max(0, calls - counted // size)
                if rc != 0:
                    self.loss_notes.append(f"loss {fmt_loss(ppm)}, exactly-once ttcp: {err.strip()[-300:]}")

            for ppm in ppms:
                srv = servers[ppm]
                if srv is None or not srv.alive():
                    continue
                log(f"[loss] one-way ttcp otp loss {fmt_loss(ppm)}: {ow_calls} x {fmt_size(size)}"
                    f" (if one-ways were lost, the client polls received() for 30 s before it reports)")
                res = self.run_raw([self.exe("ttcp_client"), srv.ior, "--mode", "oneway", "--size", str(size),
                                    "--total", str(ow_calls * size)] + otp_loss_args(ppm, LOSS_CLIENT_SEED + 200),
                                   120, f"one-way ttcp under loss {fmt_loss(ppm)}", "otp")
                if res is None:
                    continue
                rc, out, err = res
                j = self.last_json(out) if rc == 0 else None
                m = re.search(ONEWAY_SHORTFALL, err)
                rows[ppm]["oneway_sent"] = ow_calls
                if j is not None:
                    rows[ppm]["oneway_delivered"] = j["bytes"] / size
                elif m:
                    rows[ppm]["oneway_delivered"] = int(m.group(1)) / size
                else:
                    # The connection failing under loss is a result, not a run failure.
                    rows[ppm]["oneway_failed"] = True
                    self.loss_notes.append(f"loss {fmt_loss(ppm)}, one-way ttcp: client exit status {rc}, "
                                           f"no servant count: {err.strip()[-300:]}")
        finally:
            for ppm, srv in servers.items():
                if srv is not None:
                    try:
                        srv.stop()
                    except RunFailed as e:
                        self.fail(f"server shutdown (loss {fmt_loss(ppm)})", "otp", str(e))
        self.results["loss"] = [rows[ppm] for ppm in ppms]

    # -- all ------------------------------------------------------------------
    def run(self):
        for t in self.transports:
            if t not in TRANSPORTS:
                raise SystemExit(f"unknown transport {t!r}; known: {', '.join(TRANSPORTS)}")
        for prog in ("echo_server", "echo_client", "ttcp_server", "ttcp_client", "rate_client", "zmq_echo"):
            if not os.access(self.exe(prog), os.X_OK):
                raise SystemExit(f"{self.exe(prog)} not found: build the examples first")
        os.makedirs(self.out, exist_ok=True)
        self.meta = machine_meta(self)
        t0 = time.monotonic()
        servers = self.start_servers("echo_server", "echo", list(MODES))
        try:
            self.run_echo(servers)
            self.run_rate(servers)
            self.run_rate_procs(servers)
        finally:
            self.stop_servers(servers)
        self.run_ttcp()
        self.run_idle()
        self.run_loss()
        self.meta["duration_s"] = round(time.monotonic() - t0, 1)
        self.targets = compute_targets(self)
        self.write_outputs()

    def write_outputs(self):
        write_outputs_impl(self)

    def cleanup(self):
        self.children.kill_all()
        shutil.rmtree(self.tmp, ignore_errors=True)


# ---------------------------------------------------------------------------
# Report


def machine_meta(runner):
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    spin = os.environ.get("CLAN_SPIN_NS")
    return dict(
        date=datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        cpu=cpu, cores=os.cpu_count(), kernel=platform.release(), pinned="no",
        spin_ns=spin, profile="quick" if runner.args.quick else "full",
        transports=runner.transports, otp_rto_us=OTP_RTO_US, otp_window=OTP_WINDOW,
        loss_ppms=LOSS_PPMS if "otp" in runner.transports else [],
        endpoints={t: " ".join(TRANSPORTS[t]("<tmpdir>", "<name>")) for t in runner.transports},
        params=runner.p)


def compute_targets(r):
    echo, have = r.results["echo"], lambda t: t in r.transports and t not in r.failed_transports

    def echo_p50(t):
        e = echo.get(f"{t}/tpc")
        return e["p50_us"] if e else None

    def rate(t, n, m="tpc"):
        for x in r.results["rate"]:
            if x["transport"] == t and x["clients"] == n and x["mode"] == m:
                return x["requests_per_s"]
        return None

    def rate_procs(t, m):
        for x in r.results["rate_procs"]:
            if x["transport"] == t and x["mode"] == m and x["clients"] == 64:
                return x["requests_per_s"]
        return None

    def ttcp(t, mode, size):
        for x in r.results["ttcp"]:
            if x["transport"] == t and x["mode"] == mode and x["size"] == size:
                return x["mb_per_s"]
        return None

    out = []

    def add(name, needs, value, text, met):
        if not all(have(t) for t in needs) or value is None:
            missing = [t for t in needs if not have(t)]
            why = f"{', '.join(missing)} not run" if missing else "not measured"
            out.append(dict(target=name, measured=f"n/a ({why})", value=None, status="n/a"))
        else:
            out.append(dict(target=name, measured=text, value=value, status="MET" if met else "NOT MET"))

    c, tc, u = echo_p50("clan"), echo_p50("tcp"), echo_p50("unix")
    x = ratio(c, tc)
    add("null echo p50 clan <= 1/10 tcp (thread per connection)", ["clan", "tcp"], x,
        f"clan {fmt_num(c)} us / tcp {fmt_num(tc)} us = {x:.3f} (target <= 0.100)" if x else "", x is not None and x <= 0.1)
    x = ratio(c, u)
    add("null echo p50 clan <= 1/6 unix (thread per connection)", ["clan", "unix"], x,
        f"clan {fmt_num(c)} us / unix {fmt_num(u)} us = {x:.3f} (target <= 0.167)" if x else "", x is not None and x <= 1 / 6)
    a, b = rate("clan", 4), rate("tcp", 4)
    x = ratio(a, b)
    add("request rate 4 clients clan >= 4x tcp (thread per connection)", ["clan", "tcp"], x,
        f"clan {fmt_num(a)} / tcp {fmt_num(b)} req/s = {fmt_ratio(x)}" if x else "", x is not None and x >= 4)
    a, b = ttcp("clan", "exactly", 64 * KiB), ttcp("tcp", "exactly", 64 * KiB)
    x = ratio(a, b)
    add("ttcp exactly-once 64 KiB clan >= 2x tcp", ["clan", "tcp"], x,
        f"clan {fmt_num(a)} / tcp {fmt_num(b)} MB/s = {fmt_ratio(x)}" if x else "", x is not None and x >= 2)
    idle = [i for i in r.results["idle"] if i["transport"] == "clan"]
    worst = max((i["server_pct"] for i in idle), default=None)
    add("idle server < 2 % of a core (clan, both threading modes)", ["clan"], worst,
        f"{worst:.1f} % (worst of {', '.join(i['mode'] for i in idle)})" if worst is not None else "",
        worst is not None and worst < 2)

    o, c = echo_p50("otp"), echo_p50("clan")
    x = ratio(o, c)
    add("null echo p50 otp (0 % loss) <= 1.15 x clan (thread per connection, same run)", ["otp", "clan"], x,
        f"otp {fmt_num(o)} us / clan {fmt_num(c)} us = {x:.2f} (target <= 1.15)" if x else "", x is not None and x <= 1.15)
    x = ratio(tc, o)
    add("null echo p50 otp >= 5x faster than tcp (thread per connection)", ["otp", "tcp"], x,
        f"tcp {fmt_num(tc)} us / otp {fmt_num(o)} us = {fmt_ratio(x)} (target >= 5x)" if x else "",
        x is not None and x >= 5)

    for m, (mname, _) in MODES.items():
        a, b = rate_procs("otp", m), rate_procs("tcp", m)
        x = ratio(a, b)
        add(f"request rate at 64 clients (16 processes x 4 threads) otp >= tcp ({mname}, same run)", ["otp", "tcp"], x,
            f"otp {fmt_num(a)} / tcp {fmt_num(b)} req/s = {fmt_ratio(x)}" if x else "", x is not None and x >= 1)

    v, c = echo_p50("via"), echo_p50("clan")
    x = ratio(v, c)
    add("null echo p50 via <= 1.5 x clan (thread per connection, same run)", ["via", "clan"], x,
        f"via {fmt_num(v)} us / clan {fmt_num(c)} us = {x:.2f} (target <= 1.5)" if x else "", x is not None and x <= 1.5)

    loss = {e["loss_ppm"]: e for e in r.results.get("loss", [])}
    l0, l1 = loss.get(0), loss.get(10000)
    rt = l0["echo"]["p50_us"] if l0 and l0.get("echo") else None
    name = (f"at 1 % loss: 100 % of calls complete, 0 duplicates, p99 < RTO + 3 round trips "
            f"(RTO {OTP_RTO_US} us; round trip: otp p50 at 0 % loss)")
    if l1 is None or rt is None or l1.get("echo") is None or l1.get("duplicates") is None:
        add(name, ["otp"], None, "", False)
    else:
        bound = OTP_RTO_US + 3 * rt
        p99 = l1["echo"]["p99_us"]
        done, sent = l1["echo_calls_completed"], l1["echo_calls_sent"]
        ok = done == sent and l1["duplicates"] == 0 and l1["lost_calls"] == 0 and p99 < bound
        add(name, ["otp"], p99,
            f"{done}/{sent} echo calls ({100.0 * done / sent:.1f} %); exactly-once: {l1['duplicates']} duplicates, "
            f"{l1['lost_calls']} lost of {l1['exactly_calls']}; p99 {fmt_num(p99)} us vs {OTP_RTO_US} + 3 x "
            f"{fmt_num(rt)} = {fmt_num(bound)} us", ok)
    return out


def loss_markdown(r):
    p, o = r.p, []
    o.append("## omniTransport under loss (giop:otp, paper 002 sect. 4.2)\n")
    o.append(f"Both directions lossy: the server and every client drop that share of the datagrams they send "
             f"(-ORBotpLossPpm; seeds: server {LOSS_SERVER_SEED}, client k {LOSS_CLIENT_SEED} + k, the same at "
             f"every rate); RTO {OTP_RTO_US} us, window {OTP_WINDOW} credits; server: thread per connection, a "
             f"fresh one per rate. Null echo: {p['loss_echo_calls']} calls in {p['loss_echo_batches']} client "
             f"processes (each after {p['loss_echo_warmup']} warm-up calls), the rates alternated; a client whose "
             f"call fails exits non-zero and its batch counts as not completed. Round trips in us.\n")
    rows = []
    for e in r.results["loss"]:
        x = e.get("echo")
        sent, done = e["echo_calls_sent"], e["echo_calls_completed"]
        comp = f"{done}/{sent} ({100.0 * done / sent:.1f} %)" if sent else "-"
        if x is None:
            rows.append([fmt_loss(e["loss_ppm"]), comp] + ["-"] * 7)
            continue
        pr = e.get("p50_per_batch_us", [])
        rows.append([fmt_loss(e["loss_ppm"]), comp, fmt_num(x["p50_us"]), fmt_num(x["p90_us"]), fmt_num(x["p99_us"]),
                     fmt_num(x["max_us"]), fmt_num(x["mean_us"]), e.get("calls_over_rto", "-"),
                     f"{min(pr):.1f} .. {max(pr):.1f}" if pr else "-"])
    o.append(md_table(["loss", "calls completed", "p50", "p90", "p99", "max", "mean", f"calls > RTO",
                       "p50 range over batches"], rows))
    o.append("")
    o.append(f"Delivery semantics: exactly-once ttcp, {p['loss_ttcp_calls']} calls x {fmt_size(p['loss_ttcp_size'])} "
             f"(duplicates = servant bytes / size - calls sent, must be 0; lost = the shortfall, must be 0); one-way "
             f"ttcp, {p['loss_oneway_calls']} x {fmt_size(p['loss_ttcp_size'])} (at most once: delivered, counted by "
             f"the servant within 30 s of the last send, must be <= sent).\n")
    rows = []
    for e in r.results["loss"]:
        if e.get("duplicates") is None:
            ex = ["-", "-", "-", "-"]
        else:
            dup, lost, cc = e["duplicates"], e["lost_calls"], e["exactly_counted_calls"]
            ex = [e["exactly_calls"], f"{cc:g}", f"{dup}" + ("" if dup == 0 else " (NOT 0)"),
                  f"{lost}" + ("" if lost == 0 else " (NOT 0)")]
        if e.get("oneway_sent") is None:
            ow = ["-", "-", "-"]
        elif e.get("oneway_delivered") is None:
            ow = [e["oneway_sent"], "client failed (see notes)", "-"]
        else:
            s_, d_ = e["oneway_sent"], e["oneway_delivered"]
            ow = [s_, f"{d_:g}", f"{100.0 * d_ / s_:.1f} %" + ("" if d_ <= s_ else " (MORE THAN SENT)")]
        rows.append([fmt_loss(e["loss_ppm"])] + ex + ow)
    o.append(md_table(["loss", "exactly-once sent", "servant counted", "duplicates", "lost", "one-ways sent",
                       "delivered", "delivered / sent"], rows))
    o.append("")
    if r.loss_notes:
        o.append("Notes:\n")
        o.extend(f"- {n}" for n in r.loss_notes)
        o.append("")
    return o


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(r):
    m, res = r.meta, r.results
    o = []
    o.append("# omniORB transport comparison\n")
    spin = f"CLAN_SPIN_NS={m['spin_ns']}" if m["spin_ns"] else "default (CLAN_SPIN_NS unset)"
    o.append(f"- date: {m['date']}; run: {m['profile']} ({m.get('duration_s', '?')} s)")
    o.append(f"- machine: {m['cpu']}, {m['cores']} cores, kernel {m['kernel']}; pinned: {m['pinned']}")
    o.append(f"- spin budget: {spin}")
    o.append("- endpoints: " + "; ".join(f"{t} `{e}`" for t, e in m["endpoints"].items()))
    if "otp" in m["transports"]:
        o.append(f"- otp: window {OTP_WINDOW} credits, RTO {OTP_RTO_US} us (defaults); no loss except in the "
                 f"\"under loss\" section")
    o.append("- transports alternated in rounds; ratios are to tcp in the same run")
    if r.failures:
        o.append(f"- **failures: {len(r.failures)}** (see the end)")
    o.append("")

    p = r.p
    for mode, (mname, _) in MODES.items():
        o.append(f"## Null echo round trip, server: {mname}\n")
        o.append(f"Round trips in us, empty string; {p['echo_rounds']} rounds x {p['echo_calls']} calls after "
                 f"{p['echo_warmup']} warm-up calls per round (a new client process and connection per round).\n")
        rows = []
        tcp = res["echo"].get(f"tcp/{mode}")
        entries = [(t, res["echo"].get(f"{t}/{mode}")) for t in r.transports]
        if mode == "tpc":
            entries.append(("zmq REQ/REP ipc (not CORBA)", res["zmq"]))
        for t, e in entries:
            if e is None:
                rows.append([t] + ["failed" if t in r.failed_transports else "-"] + ["-"] * 8)
                continue
            pr = e.get("p50_per_round_us", [])
            rows.append([t, e["count"], fmt_num(e["p50_us"]), fmt_num(e["p90_us"]), fmt_num(e["p99_us"]),
                         fmt_num(e["max_us"]), fmt_num(e["mean_us"]),
                         fmt_ratio(ratio(e["p50_us"], tcp and tcp["p50_us"])),
                         fmt_ratio(ratio(e["mean_us"], tcp and tcp["mean_us"])),
                         f"{min(pr):.1f} .. {max(pr):.1f}" if pr else "-"])
        o.append(md_table(["transport", "calls", "p50", "p90", "p99", "max", "mean", "p50 / tcp", "mean / tcp",
                           "p50 range over rounds"], rows))
        o.append("")

    for mode, (mname, _) in MODES.items():
        o.append(f"## Request rate (requests/s), server: {mname}\n")
        o.append(f"N client threads in one process, one outstanding null echo each, one connection each; "
                 f"{p['rate_rounds']} rounds x {p['rate_seconds']} s after {p['rate_warmup']} s warm-up.\n")
        rows = []
        for t in r.transports:
            row = [t]
            for n in p["rate_clients"]:
                x = next((e for e in res["rate"] if e["transport"] == t and e["mode"] == mode and e["clients"] == n),
                         None)
                b = next((e for e in res["rate"] if e["transport"] == "tcp" and e["mode"] == mode
                          and e["clients"] == n), None)
                if x is None:
                    row.append("failed" if t in r.failed_transports else "-")
                else:
                    row.append(f"{fmt_num(x['requests_per_s'])} ({fmt_ratio(ratio(x['requests_per_s'], b and b['requests_per_s']))})")
            rows.append(row)
        o.append(md_table(["transport"] + [f"{n} client{'s' if n > 1 else ''}" for n in p["rate_clients"]], rows))
        conns = [f"{e['transport']}/{e['clients']}: {'/'.join(str(s) for s in e['sockets'])}"
                 for e in res["rate"] if e["mode"] == mode and e["transport"] in ("tcp", "unix")
                 and any(s != e["clients"] for s in e["sockets"])]
        retries = sum(e["connect_retries"] for e in res["rate"] if e["mode"] == mode)
        o.append("")
        o.append("Connections: " + ("one socket per client thread for tcp and unix" if not conns
                                    else "socket counts differ from clients: " + ", ".join(conns))
                 + (f"; {retries} refused connects retried" if retries else "") + ".\n")

    if res["rate_procs"]:
        o.append("## Request rate from many client processes (requests/s)\n")
        o.append(f"P client processes of T threads each against one server, every process in a session of its own, "
                 f"one outstanding null echo per thread; the processes connect, then start together and count "
                 f"{p['rate_seconds']} s after {p['rate_warmup']} s warm-up; {p['rate_procs_rounds']} rounds, the "
                 f"transports alternated; mean of the rounds (each round's figure in brackets).\n")
        rows = []
        for procs, threads in p["rate_procs"]:
            for mode, (mname, _) in MODES.items():
                tcp = next((e for e in res["rate_procs"] if e["transport"] == "tcp" and e["mode"] == mode
                            and e["procs"] == procs and e["threads"] == threads), None)
                for t in r.transports:
                    e = next((e for e in res["rate_procs"] if e["transport"] == t and e["mode"] == mode
                              and e["procs"] == procs and e["threads"] == threads), None)
                    if e is None:
                        rows.append([f"{procs} x {threads}", mname, t, "failed" if t in r.failed_transports else "-",
                                     "-", "-"])
                        continue
                    rows.append([f"{procs} x {threads}", mname, t, fmt_num(e["requests_per_s"]),
                                 fmt_ratio(ratio(e["requests_per_s"], tcp and tcp["requests_per_s"])),
                                 ", ".join(fmt_num(x) for x in e["requests_per_s_rounds"])])
        o.append(md_table(["processes x threads", "server", "transport", "requests/s", "/ tcp", "rounds"], rows))
        o.append("")

    for mode in TTCP_MODES:
        o.append(f"## ttcp: {TTCP_MODE_NAMES[mode]}, MB/s\n")
        o.append(f"{fmt_size(p['ttcp_total'])} per point (MB = 10^6 bytes), one client process per point, "
                 f"server: thread per connection"
                 + ("; one-way ends with received() polled until every byte is counted" if mode == "oneway" else "")
                 + ".\n")
        rows = []
        for size in p["ttcp_sizes"]:
            row = [fmt_size(size)]
            b = next((e for e in res["ttcp"] if e["transport"] == "tcp" and e["mode"] == mode and e["size"] == size),
                     None)
            for t in r.transports:
                x = next((e for e in res["ttcp"] if e["transport"] == t and e["mode"] == mode and e["size"] == size),
                         None)
                if x is None:
                    row.append("failed" if t in r.failed_transports else "-")
                else:
                    row.append(f"{fmt_num(x['mb_per_s'])} ({fmt_ratio(ratio(x['mb_per_s'], b and b['mb_per_s']))})")
            rows.append(row)
        o.append(md_table(["size"] + r.transports, rows))
        o.append("")

    o.append("## Idle server CPU, % of one core\n")
    o.append(f"One echo call, then {p['idle_seconds']:.0f} s idle with the client's connection open. "
             f"utime+stime from /proc/PID/stat (resolution {1000 / os.sysconf('SC_CLK_TCK'):.0f} ms, so "
             f"{100 / os.sysconf('SC_CLK_TCK') / p['idle_seconds']:.0f} % over this window); schedstat: "
             f"run time of the server's threads in ns.\n")
    rows = []
    for mode, (mname, _) in MODES.items():
        for t in r.transports:
            x = next((e for e in res["idle"] if e["transport"] == t and e["mode"] == mode), None)
            if x is None:
                rows.append([t, mname, "failed" if t in r.failed_transports else "-", "-", "-"])
            else:
                sched = x["server_pct_schedstat"]
                rows.append([t, mname, f"{x['server_pct']:.1f}", "-" if sched is None else f"{sched:.2f}",
                             f"{x['client_pct']:.1f}"])
    o.append(md_table(["transport", "server threads", "server % (stat)", "server % (schedstat)",
                       "idle client % (stat)"], rows))
    o.append("")

    if res.get("loss"):
        o.extend(loss_markdown(r))

    o.append("## Targets\n")
    o.append(md_table(["target", "measured", "status"], [[x["target"], x["measured"], x["status"]]
                                                         for x in r.targets]))
    o.append("")
    if r.failures:
        o.append("## Failures\n")
        for f in r.failures:
            detail = f["detail"].strip().replace("\n", "\n    ")
            o.append(f"- {f['what']} ({f['transport']}):\n\n    {detail}\n")
    return "\n".join(o)


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def write_outputs_impl(r):
    out, res = r.out, r.results
    with open(os.path.join(out, "comparison.json"), "w") as f:
        json.dump(dict(meta=r.meta, failures=r.failures, failed_transports=r.failed_transports,
                       targets=r.targets, loss_notes=r.loss_notes, **res), f, indent=1)
    hdr = ["transport", "mode", "count", "p50_us", "p90_us", "p99_us", "max_us", "mean_us", "p50_vs_tcp"]
    rows = []
    for key, e in res["echo"].items():
        t, m = key.split("/")
        tcp = res["echo"].get(f"tcp/{m}")
        rows.append([t, m, e["count"], e["p50_us"], e["p90_us"], e["p99_us"], e["max_us"], round(e["mean_us"], 3),
                     ratio(e["p50_us"], tcp and tcp["p50_us"])])
    if res["zmq"]:
        e, tcp = res["zmq"], res["echo"].get("tcp/tpc")
        rows.append(["zmq", "-", e["count"], e["p50_us"], e["p90_us"], e["p99_us"], e["max_us"], round(e["mean_us"], 3),
                     ratio(e["p50_us"], tcp and tcp["p50_us"])])
    write_csv(os.path.join(out, "echo.csv"), hdr, rows)
    write_csv(os.path.join(out, "echo_samples.csv"), ["transport", "mode", "round", "us"], r.samples)
    write_csv(os.path.join(out, "rate.csv"),
              ["transport", "mode", "clients", "requests", "seconds", "requests_per_s", "connect_retries"],
              [[e["transport"], e["mode"], e["clients"], e["requests"], round(e["seconds"], 6),
                e["requests_per_s"], e["connect_retries"]] for e in res["rate"]])
    write_csv(os.path.join(out, "rate_procs.csv"),
              ["transport", "mode", "processes", "threads", "requests_per_s", "requests_per_s_rounds"],
              [[e["transport"], e["mode"], e["procs"], e["threads"], e["requests_per_s"],
                " ".join(f"{x:.1f}" for x in e["requests_per_s_rounds"])] for e in res["rate_procs"]])
    write_csv(os.path.join(out, "ttcp.csv"), ["transport", "mode", "size", "bytes", "seconds", "mb_per_s"],
              [[e["transport"], e["mode"], e["size"], e["bytes"], e["seconds"], e["mb_per_s"]] for e in res["ttcp"]])
    write_csv(os.path.join(out, "idle.csv"),
              ["transport", "mode", "seconds", "server_pct", "server_pct_schedstat", "client_pct"],
              [[e["transport"], e["mode"], round(e["seconds"], 3), e["server_pct"], e["server_pct_schedstat"],
                e["client_pct"]] for e in res["idle"]])
    if res.get("loss"):
        write_csv(os.path.join(out, "loss.csv"),
                  ["loss_ppm", "echo_calls_sent", "echo_calls_completed", "p50_us", "p90_us", "p99_us", "max_us",
                   "mean_us", "calls_over_rto", "exactly_calls", "exactly_counted_calls", "duplicates", "lost_calls", "oneway_sent",
                   "oneway_delivered"],
                  [[e["loss_ppm"], e["echo_calls_sent"], e["echo_calls_completed"]]
                   + ([e["echo"][k] for k in ("p50_us", "p90_us", "p99_us", "max_us")] + [round(e["echo"]["mean_us"], 3)]
                      if e.get("echo") else [None] * 5)
                   + [e.get("calls_over_rto"), e["exactly_calls"], e["exactly_counted_calls"], e["duplicates"], e["lost_calls"],
                      e["oneway_sent"], e["oneway_delivered"]] for e in res["loss"]])
        write_csv(os.path.join(out, "loss_samples.csv"), ["loss_ppm", "batch", "us"], r.loss_samples)
    write_csv(os.path.join(out, "targets.csv"), ["target", "measured", "status"],
              [[x["target"], x["measured"], x["status"]] for x in r.targets])
    md = markdown(r)
    with open(os.path.join(out, "comparison.md"), "w") as f:
        f.write(md + "\n")
    print(md, flush=True)
    plot_plots(out)


def plot_plots(out):
    """Plots with matplotlib; Debian's python3-matplotlib lives in /usr/bin/python3,
    which may not be the python3 first on PATH (pyenv, venv): then run the plot
    script with it."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        system_py = "/usr/bin/python3"
        if os.path.realpath(sys.executable) != os.path.realpath(system_py) and os.access(system_py, os.X_OK):
            p = subprocess.run([system_py, os.path.join(here, "plot_comparison.py"), out],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
            if p.returncode == 0:
                for png in p.stdout.decode().split():
                    log(f"wrote {png}")
            else:
                log(f"plots skipped: {p.stderr.decode(errors='replace').strip()[-500:]}")
        else:
            log("plots skipped: matplotlib is not installed (Debian: python3-matplotlib)")
        return
    try:
        sys.path.insert(0, here)
        import plot_comparison
        for png in plot_comparison.plot_all(out):
            log(f"wrote {png}")
    except Exception as e:  # plots are a convenience: report, do not fail the run
        log(f"plots skipped: {type(e).__name__}: {e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="CMake build directory (examples/ built)")
    ap.add_argument("--out", required=True, help="results directory")
    ap.add_argument("--quick", action="store_true", help="a short run (about 2 minutes)")
    ap.add_argument("--transports", default=DEFAULT_TRANSPORTS,
                    help=f"comma-separated, from: {', '.join(TRANSPORTS)} (default {DEFAULT_TRANSPORTS})")
    args = ap.parse_args()

    def on_term(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    # Ctrl-C even when started in the background by a shell that ignores SIGINT.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)
    runner = Runner(args)
    try:
        runner.run()
    except KeyboardInterrupt:
        log("interrupted: killing child processes")
        return 130
    finally:
        runner.cleanup()
    if runner.failures:
        log(f"{len(runner.failures)} failure(s): see the Failures section")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
