#!/usr/bin/env python3
"""Compares omniORB GIOP transports in one run: null echo latency, request
rate, ttcp throughput and idle server CPU.

  compare_transports.py --build DIR --out RESULTS_DIR [--quick]
                        [--transports tcp,unix,clan]

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
reported with the server's stderr and skipped. All child processes are killed
on exit, including on Ctrl-C and SIGTERM (each runs in its own process group).

Method: shared/design/BENCHMARKS.md. A new transport joins by adding a line
to TRANSPORTS below.
"""

import argparse
import csv
import datetime
import json
import os
import platform
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
    # "otp": lambda tmp, tag: ["-ORBendPoint", "giop:otp::"],
    # "via": lambda tmp, tag: ["-ORBendPoint", "giop:via::"],
}
DEFAULT_TRANSPORTS = "tcp,unix,clan"

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
        ttcp_sizes=[64, 256, KiB, 4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, MiB], ttcp_total=10 * MiB,
        idle_seconds=1.0,
    ),
    "quick": dict(
        echo_rounds=2, echo_calls=500, echo_warmup=100,
        rate_clients=[1, 4], rate_rounds=1, rate_seconds=0.5, rate_warmup=0.2,
        ttcp_sizes=[64, 4 * KiB, 64 * KiB, MiB], ttcp_total=2 * MiB,
        idle_seconds=1.0,
    ),
}

SERVER_START_TIMEOUT = 15.0
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


def tail(path, lines=20):
    try:
        with open(path, errors="replace") as f:
            text = f.read().strip().splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


class Server:
    def __init__(self, runner, prog, transport, mode, tag):
        self.runner = runner
        self.transport, self.mode, self.tag = transport, mode, tag
        self.err_path = os.path.join(runner.tmp, tag + ".err")
        cmd = [runner.exe(prog)] + TRANSPORTS[transport](runner.tmp, tag) + MODES[mode][1]
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
        self.results = dict(echo={}, echo_rounds=[], zmq=None, rate=[], ttcp=[], idle=[])
        self.samples = []  # (transport, mode, round, us)

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
        finally:
            self.stop_servers(servers)
        self.run_ttcp()
        self.run_idle()
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
        transports=runner.transports,
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
    return out


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
                       targets=r.targets, **res), f, indent=1)
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
    write_csv(os.path.join(out, "ttcp.csv"), ["transport", "mode", "size", "bytes", "seconds", "mb_per_s"],
              [[e["transport"], e["mode"], e["size"], e["bytes"], e["seconds"], e["mb_per_s"]] for e in res["ttcp"]])
    write_csv(os.path.join(out, "idle.csv"),
              ["transport", "mode", "seconds", "server_pct", "server_pct_schedstat", "client_pct"],
              [[e["transport"], e["mode"], round(e["seconds"], 3), e["server_pct"], e["server_pct_schedstat"],
                e["client_pct"]] for e in res["idle"]])
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
    ap.add_argument("--quick", action="store_true", help="a short run (well under 2 minutes)")
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
