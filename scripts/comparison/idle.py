"""Idle CPU: after one call, with the connection held open, the server's CPU
over a second, from /proc/PID/stat and from schedstat, in both modes."""

import os
import select
import subprocess
import time

from .config import MODES
from .fmt import log, md_table, write_csv
from .processes import RunFailed, proc_cpu_ns, proc_cpu_ticks
from .section import Section


class IdleCpu(Section):
    def __init__(self, ctx):
        super().__init__(ctx)
        self.tick = os.sysconf("SC_CLK_TCK")

    def run(self):
        ctx, idle = self.ctx, self.ctx.p["idle_seconds"]
        for m in MODES:
            for t in ctx.transports:
                if t in ctx.failed_transports:
                    continue
                log(f"[idle] {m} {t}: one call, then {idle:.1f} s idle with the connection open")
                srv = ctx.start_server("echo_server", t, m, ctx.tag("idle", t, m), "echo_server start (idle)")
                if srv is not None:
                    self._measure(srv, t, m)
                    ctx.stop_server(srv, "server shutdown (idle)")

    def _measure(self, srv, t, m):
        ctx, idle = self.ctx, self.ctx.p["idle_seconds"]
        cli = None
        try:
            cli = ctx.children.popen([ctx.exe("echo_client"), srv.ior, "--warmup", "1", "--calls", "1",
                                      "--hold", str(idle + 2.0)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
            r, _, _ = select.select([cli.stdout], [], [], 15)
            line = cli.stdout.readline() if r else b""
            if not line.startswith(b"{"):
                raise RunFailed(f"idle client gave no result: {line[:200]!r}")
            time.sleep(0.2)  # let the call's aftermath settle
            ctx.results["idle"].append(dict(transport=t, mode=m, **self._sample(srv.proc.pid, cli.pid, idle)))
            cli.wait(idle + 15)
            if cli.returncode != 0:
                raise RunFailed(f"idle client exit status {cli.returncode}: "
                                f"{cli.stderr.read().decode(errors='replace')[-1000:]}")
        except (RunFailed, OSError, subprocess.TimeoutExpired) as e:
            ctx.fail("idle CPU", t, str(e))
        finally:
            if cli is not None:
                ctx.children.kill(cli)
                cli.stdout.close()
                cli.stderr.close()

    def _sample(self, server_pid, client_pid, idle):
        """The server's and the client's CPU over `idle` seconds."""
        s0, n0, c0 = proc_cpu_ticks(server_pid), proc_cpu_ns(server_pid), proc_cpu_ticks(client_pid)
        t0 = time.monotonic()
        time.sleep(idle)
        s1, n1, c1 = proc_cpu_ticks(server_pid), proc_cpu_ns(server_pid), proc_cpu_ticks(client_pid)
        dt = time.monotonic() - t0
        return dict(seconds=dt, server_pct=100.0 * (s1 - s0) / self.tick / dt,
                    server_pct_schedstat=(100.0 * (n1 - n0) / 1e9 / dt) if n0 is not None and n1 is not None
                    else None,
                    client_pct=100.0 * (c1 - c0) / self.tick / dt)

    def markdown(self):
        ctx, p = self.ctx, self.ctx.p
        o = ["## Idle server CPU, % of one core\n",
             f"One echo call, then {p['idle_seconds']:.0f} s idle with the client's connection open. "
             f"utime+stime from /proc/PID/stat (resolution {1000 / self.tick:.0f} ms, so "
             f"{100 / self.tick / p['idle_seconds']:.0f} % over this window); schedstat: "
             f"run time of the server's threads in ns.\n"]
        rows = []
        for mode, (mname, _) in MODES.items():
            for t in ctx.transports:
                x = next((e for e in ctx.results["idle"] if e["transport"] == t and e["mode"] == mode), None)
                if x is None:
                    rows.append([t, mname, "failed" if t in ctx.failed_transports else "-", "-", "-"])
                else:
                    sched = x["server_pct_schedstat"]
                    rows.append([t, mname, f"{x['server_pct']:.1f}", "-" if sched is None else f"{sched:.2f}",
                                 f"{x['client_pct']:.1f}"])
        o.append(md_table(["transport", "server threads", "server % (stat)", "server % (schedstat)",
                           "idle client % (stat)"], rows))
        o.append("")
        return o

    def write_csv(self):
        write_csv(os.path.join(self.ctx.out, "idle.csv"),
                  ["transport", "mode", "seconds", "server_pct", "server_pct_schedstat", "client_pct"],
                  [[e["transport"], e["mode"], round(e["seconds"], 3), e["server_pct"], e["server_pct_schedstat"],
                    e["client_pct"]] for e in self.ctx.results["idle"]])
