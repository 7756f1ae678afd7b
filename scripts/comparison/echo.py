"""Null echo (paper 000 Table 3, paper 002 Table 3): round trips of an empty
echoString per transport and server threading mode, a new client process per
round, with ZeroMQ REQ/REP over ipc as a non-CORBA reference. Each round's
p50 is printed beside the whole run's: a round stuck in a slow regime (two
spinning threads sharing one CPU, say) shows there even when the others
hide it in the overall percentiles."""

import os
import signal
import subprocess
import time

from .config import MODES
from .fmt import fmt_num, fmt_ratio, log, md_table, ratio, summarize, summary_cells, write_csv
from .processes import read_samples
from .section import Section



def round_p50s(p50s):
    """Each round's p50, in round order, "-" for a round without samples
    (thousands separators would read as more rounds)."""
    return " / ".join("-" if v is None else f"{v:.1f}" for v in p50s)

class NullEcho(Section):
    def __init__(self, ctx):
        super().__init__(ctx)
        self.per_round = {}  # (transport, mode) -> p50 of each round

    def run(self, servers):
        ctx, rounds = self.ctx, self.ctx.p["echo_rounds"]
        zmq_ep = f"ipc://{ctx.tmp}/zmq-echo.ipc"
        with open(os.path.join(ctx.tmp, "zmq.err"), "w") as zmq_err:
            zmq = ctx.children.popen([ctx.exe("zmq_echo"), "server", zmq_ep], stdout=subprocess.DEVNULL,
                                     stderr=zmq_err, stdin=subprocess.DEVNULL)
            time.sleep(0.2)
            for r in range(rounds):
                for m in MODES:
                    for t in ctx.active(servers, m):
                        log(f"[echo] round {r + 1}/{rounds} {m} {t}: {ctx.p['echo_calls']} calls")
                        self._orb_round(servers[(t, m)], t, m, r)
                log(f"[echo] round {r + 1}/{rounds} zmq ipc")
                if zmq.poll() is not None:
                    ctx.fail("zmq_echo server", "zmq", f"exited with status {zmq.returncode}")
                    break
                self._zmq_round(zmq_ep, r)
            self._stop_zmq(zmq)
        self._summarize()

    def _calls(self, samples_file):
        p = self.ctx.p
        return ["--calls", str(p["echo_calls"]), "--warmup", str(p["echo_warmup"]), "--samples", samples_file]

    def _orb_round(self, server, t, m, r):
        ctx = self.ctx
        sf = os.path.join(ctx.tmp, f"samples-{t}-{m}-{r}.txt")
        res = ctx.client([ctx.exe("echo_client"), server.ior] + self._calls(sf), 120, "null echo", t)
        if res is None:
            return
        ctx.samples += [(t, m, r, v) for v in read_samples(sf)]
        self.per_round.setdefault((t, m), []).append(res["p50_us"])
        ctx.results["echo_rounds"].append(dict(transport=t, mode=m, round=r, **res))

    def _zmq_round(self, endpoint, r):
        ctx = self.ctx
        sf = os.path.join(ctx.tmp, f"samples-zmq-{r}.txt")
        res = ctx.client([ctx.exe("zmq_echo"), "client", endpoint] + self._calls(sf), 120, "zmq echo", "zmq")
        if res is not None:
            ctx.samples += [("zmq", "-", r, v) for v in read_samples(sf)]
            self.per_round.setdefault(("zmq", "-"), []).append(res["p50_us"])

    def _stop_zmq(self, zmq):
        if zmq.poll() is None:
            zmq.send_signal(signal.SIGTERM)
            try:
                zmq.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(zmq.pid, signal.SIGKILL)
                zmq.wait()
        self.ctx.children.forget(zmq)

    def _summarize(self):
        ctx = self.ctx
        for (t, m), p50s in self.per_round.items():
            summ = summarize([s[3] for s in ctx.samples if s[0] == t and s[1] == m])
            if summ:
                summ["p50_per_round_us"] = p50s
                if t == "zmq":
                    ctx.results["zmq"] = summ
                else:
                    ctx.results["echo"][f"{t}/{m}"] = summ

    HEADING = "## Null echo round trip, server: {}\n"

    INTRO = ("Round trips in us, empty string; {echo_rounds} rounds x {echo_calls} calls after {echo_warmup} "
             "warm-up calls per round (a new client process and connection per round).\n")

    def mode_lines(self, mode):
        res = self.ctx.results
        tcp = res["echo"].get(f"tcp/{mode}")
        entries = [(t, res["echo"].get(f"{t}/{mode}")) for t in self.ctx.transports]
        if mode == "tpc":
            entries.append(("zmq REQ/REP ipc (not CORBA)", res["zmq"]))
        return [md_table(["transport", "calls", "p50", "p90", "p99", "max", "mean", "p50 / tcp", "mean / tcp",
                          "p50 of each round"], [self._row(t, e, tcp) for t, e in entries]), ""]

    def _row(self, t, e, tcp):
        if e is None:
            return [t] + ["failed" if t in self.ctx.failed_transports else "-"] + ["-"] * 8
        return ([t, e["count"]] + summary_cells(e)
                + [fmt_ratio(ratio(e["p50_us"], tcp and tcp["p50_us"])),
                   fmt_ratio(ratio(e["mean_us"], tcp and tcp["mean_us"])),
                   round_p50s(e.get("p50_per_round_us", []))])

    def write_csv(self):
        ctx, res = self.ctx, self.ctx.results
        rows = []
        entries = [(key.split("/"), e) for key, e in res["echo"].items()]
        if res["zmq"]:
            entries.append((["zmq", "-"], res["zmq"]))
        for (t, m), e in entries:
            tcp = res["echo"].get(f"tcp/{m if t != 'zmq' else 'tpc'}")
            rows.append([t, m, e["count"], e["p50_us"], e["p90_us"], e["p99_us"], e["max_us"],
                         round(e["mean_us"], 3), ratio(e["p50_us"], tcp and tcp["p50_us"])])
        write_csv(os.path.join(ctx.out, "echo.csv"),
                  ["transport", "mode", "count", "p50_us", "p90_us", "p99_us", "max_us", "mean_us", "p50_vs_tcp"],
                  rows)
        write_csv(os.path.join(ctx.out, "echo_samples.csv"), ["transport", "mode", "round", "us"], ctx.samples)
        write_csv(os.path.join(ctx.out, "echo_rounds.csv"), ["transport", "mode", "round", "p50_us", "p90_us"],
                  [[r["transport"], r["mode"], r["round"], r.get("p50_us"), r.get("p90_us")]
                   for r in res["echo_rounds"]])
