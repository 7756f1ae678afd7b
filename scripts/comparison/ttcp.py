"""ttcp (paper 002 sect. 5.2, Figs. 10-12): one-way and exactly-once
sequence<octet> and a marshalled sequence of pairs, one client process per
point, thread-per-connection servers."""

import os

from .config import TTCP_MODE_NAMES, TTCP_MODES
from .fmt import fmt_size, log, md_table, write_csv
from .section import Section


class Ttcp(Section):
    def run(self):
        ctx, p = self.ctx, self.ctx.p
        servers = ctx.start_servers("ttcp_server", "ttcp", ["tpc"])
        try:
            for size in p["ttcp_sizes"]:
                for mode in TTCP_MODES:
                    for t in ctx.active(servers, "tpc"):
                        log(f"[ttcp] {mode} {fmt_size(size)} x {fmt_size(p['ttcp_total'])} {t}")
                        res = ctx.client([ctx.exe("ttcp_client"), servers[(t, "tpc")].ior, "--mode", mode,
                                          "--size", str(size), "--total", str(p["ttcp_total"])],
                                         300, f"ttcp {mode} {fmt_size(size)}", t)
                        if res is not None:
                            ctx.results["ttcp"].append(dict(transport=t, **res))
        finally:
            ctx.stop_servers(servers)

    def markdown(self):
        ctx, p, o = self.ctx, self.ctx.p, []
        for mode in TTCP_MODES:
            o.append(f"## ttcp: {TTCP_MODE_NAMES[mode]}, MB/s\n")
            o.append(f"{fmt_size(p['ttcp_total'])} per point (MB = 10^6 bytes), one client process per point, "
                     f"server: thread per connection"
                     + ("; one-way ends with received() polled until every byte is counted" if mode == "oneway"
                        else "")
                     + ".\n")
            rows = [[fmt_size(size)] + [self.vs_tcp(ctx.results["ttcp"], "mb_per_s", t, mode=mode, size=size)
                                        for t in ctx.transports] for size in p["ttcp_sizes"]]
            o.append(md_table(["size"] + ctx.transports, rows))
            o.append("")
        return o

    def write_csv(self):
        write_csv(os.path.join(self.ctx.out, "ttcp.csv"), ["transport", "mode", "size", "bytes", "seconds", "mb_per_s"],
                  [[e["transport"], e["mode"], e["size"], e["bytes"], e["seconds"], e["mb_per_s"]]
                   for e in self.ctx.results["ttcp"]])
