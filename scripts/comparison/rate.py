"""Request rate (paper 000 Table 4): N client threads in one process, each
with one null echo outstanding on a connection of its own."""

import os

from .config import MODES
from .fmt import find, fmt_num, log, md_table, write_csv
from .section import Section


class RequestRate(Section):
    def run(self, servers):
        ctx, p = self.ctx, self.ctx.p
        acc = {}
        for r in range(p["rate_rounds"]):
            for n in p["rate_clients"]:
                for m in MODES:
                    for t in ctx.active(servers, m):
                        log(f"[rate] round {r + 1}/{p['rate_rounds']} {n} clients {m} {t}")
                        res = ctx.client([ctx.exe("rate_client"), servers[(t, m)].ior, "--clients", str(n),
                                          "--seconds", str(p["rate_seconds"]), "--warmup", str(p["rate_warmup"])],
                                         60 + p["rate_seconds"] * 2, "request rate", t)
                        if res is not None:
                            self._add(acc.setdefault((t, m, n), dict(requests=0, seconds=0.0, sockets=[],
                                                                     retries=0, rounds=[])), res)
        for (t, m, n), a in acc.items():
            ctx.results["rate"].append(dict(
                transport=t, mode=m, clients=n, requests=a["requests"], seconds=a["seconds"],
                requests_per_s=a["requests"] / a["seconds"] if a["seconds"] else None,
                requests_per_s_rounds=a["rounds"], sockets=a["sockets"], connect_retries=a["retries"]))

    @staticmethod
    def _add(a, res):
        a["requests"] += res["requests"]
        a["seconds"] += res["seconds"]
        a["sockets"].append(res.get("sockets"))
        a["retries"] += res.get("connect_retries", 0)
        a["rounds"].append(res["requests_per_s"])

    HEADING = "## Request rate (requests/s), server: {}\n"

    INTRO = ("N client threads in one process, one outstanding null echo each, one connection each; "
             "{rate_rounds} rounds x {rate_seconds} s after {rate_warmup} s warm-up, counted together.\n")

    def mode_lines(self, mode):
        ctx, clients = self.ctx, self.ctx.p["rate_clients"]
        rows = [[t] + [self.vs_tcp(ctx.results["rate"], "requests_per_s", t, mode=mode, clients=n) for n in clients]
                for t in ctx.transports]
        header = ["transport"] + [f"{n} client{'s' if n > 1 else ''}" for n in clients]
        return [md_table(header, rows), ""] + self._rounds(mode, header) + [self._connections(mode)]

    def _rounds(self, mode, header):
        """Each round's figure, when the profile runs several: the steadiness target reads them."""
        ctx, clients = self.ctx, self.ctx.p["rate_clients"]
        if ctx.p["rate_rounds"] < 2:
            return []
        rows = [[t] + [self._round_cell(find(ctx.results["rate"], transport=t, mode=mode, clients=n))
                       for n in clients] for t in ctx.transports]
        return ["Each round's figure (requests/s), in the order run:\n", md_table(header, rows), ""]

    @staticmethod
    def _round_cell(e):
        return "-" if e is None else ", ".join(fmt_num(x) for x in e["requests_per_s_rounds"])

    def _connections(self, mode):
        rate = self.ctx.results["rate"]
        conns = [f"{e['transport']}/{e['clients']}: {'/'.join(str(s) for s in e['sockets'])}"
                 for e in rate if e["mode"] == mode and e["transport"] in ("tcp", "unix")
                 and any(s != e["clients"] for s in e["sockets"])]
        retries = sum(e["connect_retries"] for e in rate if e["mode"] == mode)
        return ("Connections: " + ("one socket per client thread for tcp and unix" if not conns
                                   else "socket counts differ from clients: " + ", ".join(conns))
                + (f"; {retries} refused connects retried" if retries else "") + ".\n")

    def write_csv(self):
        write_csv(os.path.join(self.ctx.out, "rate.csv"),
                  ["transport", "mode", "clients", "requests", "seconds", "requests_per_s", "connect_retries",
                   "requests_per_s_rounds"],
                  [[e["transport"], e["mode"], e["clients"], e["requests"], round(e["seconds"], 6),
                    e["requests_per_s"], e["connect_retries"], " ".join(f"{x:.1f}" for x in e["requests_per_s_rounds"])]
                   for e in self.ctx.results["rate"]])
