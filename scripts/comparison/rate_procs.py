"""Request rate from many client processes: P rate_client processes of T
threads each against one server, every one in a session of its own, started
together once all have connected (--wait-go) so that their counting windows
coincide and the sum is a rate."""

import json
import os
import subprocess
import tempfile
import time

from .config import MODES, RATE_READY_TIMEOUT
from .fmt import find, fmt_num, fmt_ratio, log, md_table, ratio, write_csv
from .processes import read_line
from .section import Section


class ClientsFailed(Exception):
    """A client process of a multi-process run failed: the run counts nothing."""


class RequestRateProcs(Section):

    def run(self, servers):
        """Transports and modes alternated within each round."""
        ctx, p = self.ctx, self.ctx.p
        acc = {}
        for r in range(p["rate_procs_rounds"]):
            for procs, threads in p["rate_procs"]:
                for m in MODES:
                    for t in ctx.active(servers, m):
                        log(f"[rate] round {r + 1}/{p['rate_procs_rounds']} {procs} processes x {threads} threads "
                            f"{m} {t}")
                        x = self.once(servers[(t, m)], procs, threads)
                        if x is not None:
                            acc.setdefault((t, m, procs, threads), []).append(x)
        for (t, m, procs, threads), rounds in acc.items():
            ctx.results["rate_procs"].append(dict(
                transport=t, mode=m, procs=procs, threads=threads, clients=procs * threads,
                requests_per_s=sum(rounds) / len(rounds), requests_per_s_rounds=rounds))

    def once(self, server, procs, threads):
        """One measurement: the summed requests/s, or None on failure."""
        ctx, p = self.ctx, self.ctx.p
        cmd = [ctx.exe("rate_client"), server.ior, "--clients", str(threads), "--seconds", str(p["rate_seconds"]),
               "--warmup", str(p["rate_warmup"]), "--wait-go"]
        errs = [tempfile.TemporaryFile() for _ in range(procs)]
        clients = [ctx.children.popen(cmd, stdout=subprocess.PIPE, stderr=e, stdin=subprocess.PIPE) for e in errs]
        try:
            self._start_together(clients, errs)
            return sum(self._result(c, e) for c, e in zip(clients, errs))
        except ClientsFailed as e:
            for c in clients:
                ctx.children.kill(c)
            ctx.fail(f"request rate {procs} processes x {threads} threads", server.transport, str(e))
            return None
        finally:
            for e in errs:
                e.close()

    @staticmethod
    def _start_together(clients, errs):
        deadline = time.monotonic() + RATE_READY_TIMEOUT
        for c, e in zip(clients, errs):
            line = read_line(c.stdout, deadline)
            if line != "ready":
                e.seek(0)
                raise ClientsFailed(f"a client did not get ready ({line!r}): "
                                    f"{e.read().decode(errors='replace')[-1000:]}")
        for c in clients:
            c.stdin.write(b"go\n")
            c.stdin.flush()

    def _result(self, c, e):
        p = self.ctx.p
        try:
            out, _ = c.communicate(timeout=60 + p["rate_warmup"] + p["rate_seconds"] * 2)
        except subprocess.TimeoutExpired:
            raise ClientsFailed("a client did not finish in time")
        self.ctx.children.forget(c)
        e.seek(0)
        if c.returncode != 0:
            raise ClientsFailed(f"exit status {c.returncode}: {e.read().decode(errors='replace').strip()[-1000:]}")
        try:
            return json.loads(out.decode().strip().splitlines()[-1])["requests_per_s"]
        except (ValueError, IndexError, KeyError):
            raise ClientsFailed(f"no JSON on stdout: {out[:200]!r}")

    def markdown(self):
        ctx, p, res = self.ctx, self.ctx.p, self.ctx.results["rate_procs"]
        if not res:
            return []
        o = ["## Request rate from many client processes (requests/s)\n",
             f"P client processes of T threads each against one server, every process in a session of its own, "
             f"one outstanding null echo per thread; the processes connect, then start together and count "
             f"{p['rate_seconds']} s after {p['rate_warmup']} s warm-up; {p['rate_procs_rounds']} rounds, the "
             f"transports alternated; mean of the rounds (each round's figure in brackets).\n"]
        rows = []
        for procs, threads in p["rate_procs"]:
            for mode, (mname, _) in MODES.items():
                key = dict(mode=mode, procs=procs, threads=threads)
                tcp = find(res, transport="tcp", **key)
                rows += [[f"{procs} x {threads}", mname, t] + self._cells(t, find(res, transport=t, **key), tcp)
                         for t in ctx.transports]
        o.append(md_table(["processes x threads", "server", "transport", "requests/s", "/ tcp", "rounds"], rows))
        o.append("")
        return o

    def _cells(self, t, e, tcp):
        if e is None:
            return ["failed" if t in self.ctx.failed_transports else "-", "-", "-"]
        return [fmt_num(e["requests_per_s"]), fmt_ratio(ratio(e["requests_per_s"], tcp and tcp["requests_per_s"])),
                ", ".join(fmt_num(x) for x in e["requests_per_s_rounds"])]

    def write_csv(self):
        write_csv(os.path.join(self.ctx.out, "rate_procs.csv"),
                  ["transport", "mode", "processes", "threads", "requests_per_s", "requests_per_s_rounds"],
                  [[e["transport"], e["mode"], e["procs"], e["threads"], e["requests_per_s"],
                    " ".join(f"{x:.1f}" for x in e["requests_per_s_rounds"])] for e in self.ctx.results["rate_procs"]])
