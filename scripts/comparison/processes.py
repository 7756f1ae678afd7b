"""The comparison's processes: every child in a process group of its own, the
servers (started, their IOR read, stopped cleanly), the client runs and the
record of what failed to run. Every section runs its processes through one
Context."""

import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time

from .config import (MODES, PROFILES, PROGRAMS, SERVER_START_TIMEOUT, SERVER_STOP_TIMEOUT, TRANSPORTS)
from .fmt import log


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

    def kill(self, p):
        """SIGKILL to a child's whole group, then reaped and forgotten."""
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        self.forget(p)

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


def last_json(text):
    """The JSON object on a client's last line of output, or None."""
    try:
        return json.loads(text.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


class Server:
    """A server process with one endpoint of one transport; its IOR is read
    from its first line of output."""

    def __init__(self, ctx, prog, transport, mode, tag, extra=()):
        self.ctx = ctx
        self.transport, self.mode, self.tag = transport, mode, tag
        self.err_path = os.path.join(ctx.tmp, tag + ".err")
        self.cmd = ctx.server_cmd(prog, transport, mode, tag, extra)
        self.stderr = open(self.err_path, "w")
        self.proc = ctx.children.popen(self.cmd, stdout=subprocess.PIPE, stderr=self.stderr,
                                       stdin=subprocess.DEVNULL)
        self.ior = self._read_first_line(SERVER_START_TIMEOUT)
        if not self.ior.startswith("IOR:"):
            self.kill()
            raise RunFailed(f"{' '.join(self.cmd)}: first line is not an IOR: {self.ior[:80]!r}\n"
                            f"{tail(self.err_path)}")

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
        self.ctx.children.forget(self.proc)
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


class Context:
    """What every section shares: the options, the profile, the child
    processes, the results (comparison.json's fields) and the failures."""

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

    def check(self):
        """Unknown transports and missing programs end the run before it starts."""
        for t in self.transports:
            if t not in TRANSPORTS:
                raise SystemExit(f"unknown transport {t!r}; known: {', '.join(TRANSPORTS)}")
        for prog in PROGRAMS:
            if not os.access(self.exe(prog), os.X_OK):
                raise SystemExit(f"{self.exe(prog)} not found: build the examples first")
        os.makedirs(self.out, exist_ok=True)

    def exe(self, prog):
        return os.path.join(self.build, "examples", prog)

    def tag(self, kind, transport, mode):
        self.seq += 1
        return f"{kind}-{transport}-{mode}-{self.seq}"

    def have(self, t):
        return t in self.transports and t not in self.failed_transports

    def fail(self, what, transport, detail):
        log(f"FAILED {what} ({transport}): {detail}")
        self.failures.append(dict(what=what, transport=transport, detail=detail))

    def server_cmd(self, prog, transport, mode, tag, extra=()):
        """A server's command line: one endpoint of `transport`, threading `mode`."""
        return [self.exe(prog)] + TRANSPORTS[transport](self.tmp, tag) + MODES[mode][1] + list(extra)

    def client_cmd(self, cmd):
        """A client's command line as run (a context that runs clients elsewhere wraps it)."""
        return cmd

    def run_raw(self, cmd, timeout, what, transport):
        """Runs a client; (returncode, stdout, stderr), or None if it timed out (a failure)."""
        cmd = self.client_cmd(cmd)
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

    def client(self, cmd, timeout, what, transport):
        """Runs a client, returns its JSON line as a dict, or None on failure."""
        res = self.run_raw(cmd, timeout, what, transport)
        if res is None:
            return None
        rc, out, err = res
        if rc != 0:
            self.fail(what, transport, f"exit status {rc}: {err.strip()[-2000:]}")
            return None
        j = last_json(out)
        if j is None:
            self.fail(what, transport, f"no JSON on stdout: {out[:200].encode()!r}")
        return j

    def start_server(self, prog, transport, mode, tag, what, extra=()):
        """A server, or None (the failure recorded under `what`)."""
        try:
            return Server(self, prog, transport, mode, tag, extra)
        except RunFailed as e:
            self.fail(what, transport, str(e))
            return None

    def stop_server(self, srv, what):
        try:
            srv.stop()
        except RunFailed as e:
            self.fail(what, srv.transport, str(e))

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
        for srv in servers.values():
            self.stop_server(srv, "server shutdown")

    def active(self, servers, mode):
        return [t for t in self.transports if (t, mode) in servers and servers[(t, mode)].alive()]

    def cleanup(self):
        self.children.kill_all()
        shutil.rmtree(self.tmp, ignore_errors=True)


def read_samples(path):
    """A client's --samples file: one round trip in µs per line."""
    with open(path) as f:
        return [float(x) for x in f.read().split()]
