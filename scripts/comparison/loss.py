"""omniTransport under loss (paper 002 sect. 4.2): giop:otp at LOSS_PPMS in
both directions, thread-per-connection servers, a fresh one per rate: null
echo latency and completed calls (client batches alternated over the rates),
exactly-once ttcp (the servant's byte count gives duplicates and lost calls)
and one-way ttcp (delivered <= sent)."""

import os
import re

from .config import (LOSS_CLIENT_SEED, LOSS_PPMS, LOSS_SERVER_SEED, ONEWAY_SHORTFALL, OTP_RTO_US, OTP_WINDOW,
                     otp_loss_args)
from .fmt import fmt_loss, fmt_range, fmt_size, log, md_table, summarize, summary_cells, write_csv
from .processes import last_json, read_samples
from .section import Section


def empty_row(ppm):
    return dict(loss_ppm=ppm, echo_calls_sent=0, echo_calls_completed=0, echo_batches_failed=0, echo=None,
                exactly_calls=None, exactly_counted_calls=None, duplicates=None, lost_calls=None,
                oneway_sent=None, oneway_delivered=None, oneway_failed=False)


class Loss(Section):
    def __init__(self, ctx):
        super().__init__(ctx)
        self.rows = {ppm: empty_row(ppm) for ppm in LOSS_PPMS}

    def run(self):
        ctx = self.ctx
        if not ctx.have("otp"):
            return
        self._with_servers("echo_server", "echo", self._echo)
        self._summarize_echo()
        self._with_servers("ttcp_server", "ttcp", self._ttcp)
        ctx.results["loss"] = [self.rows[ppm] for ppm in LOSS_PPMS]

    def _with_servers(self, prog, kind, body):
        """One otp server per loss rate for the time of `body(servers)`."""
        ctx = self.ctx
        servers = {ppm: ctx.start_server(prog, "otp", "tpc", ctx.tag(f"{kind}-loss{ppm}", "otp", "tpc"),
                                         f"{prog} start (loss {fmt_loss(ppm)})",
                                         otp_loss_args(ppm, LOSS_SERVER_SEED)) for ppm in LOSS_PPMS}
        try:
            body({ppm: s for ppm, s in servers.items() if s is not None})
        finally:
            for ppm, srv in servers.items():
                if srv is not None:
                    ctx.stop_server(srv, f"server shutdown (loss {fmt_loss(ppm)})")

    def _echo(self, servers):
        """Batch k of every rate, then batch k+1 (rates alternated)."""
        batches = self.ctx.p["loss_echo_batches"]
        per = max(1, self.ctx.p["loss_echo_calls"] // batches)
        for k in range(batches):
            for ppm in LOSS_PPMS:
                srv = servers.get(ppm)
                if srv is not None and srv.alive():
                    log(f"[loss] echo batch {k + 1}/{batches} otp loss {fmt_loss(ppm)}: {per} calls")
                    self._echo_batch(srv, ppm, k, per)

    def _echo_batch(self, srv, ppm, k, per):
        ctx, row = self.ctx, self.rows[ppm]
        sf = os.path.join(ctx.tmp, f"loss-samples-{ppm}-{k}.txt")
        row["echo_calls_sent"] += per
        res = ctx.run_raw([ctx.exe("echo_client"), srv.ior, "--calls", str(per),
                           "--warmup", str(ctx.p["loss_echo_warmup"]), "--samples", sf]
                          + otp_loss_args(ppm, LOSS_CLIENT_SEED + k), 120,
                          f"null echo under loss {fmt_loss(ppm)}", "otp")
        if res is None:
            row["echo_batches_failed"] += 1
            return
        rc, out, err = res
        if rc != 0 or last_json(out) is None:
            # A call that failed under loss is a result, not a run failure.
            row["echo_batches_failed"] += 1
            ctx.loss_notes.append(f"loss {fmt_loss(ppm)}, echo batch {k + 1}: client exit status {rc}, "
                                  f"its {per} calls counted as not completed: "
                                  f"{err.strip()[-300:] or out.strip()[-300:]}")
            return
        vals = read_samples(sf)
        ctx.loss_samples += [(ppm, k, v) for v in vals]
        row["echo_calls_completed"] += len(vals)

    def _summarize_echo(self):
        for ppm, row in self.rows.items():
            per_batch = {}
            for q, k, v in self.ctx.loss_samples:
                if q == ppm:
                    per_batch.setdefault(k, []).append(v)
            samples = [v for _, vals in sorted(per_batch.items()) for v in vals]
            row["echo"] = summarize(samples)
            row["calls_over_rto"] = sum(1 for v in samples if v > OTP_RTO_US)
            row["p50_per_batch_us"] = [summarize(v)["p50_us"] for _, v in sorted(per_batch.items())]

    def _ttcp(self, servers):
        """Exactly-once at every rate, then one-way at every rate."""
        for ppm in LOSS_PPMS:
            srv = servers.get(ppm)
            if srv is not None and srv.alive():
                self._exactly(srv, ppm)
        for ppm in LOSS_PPMS:
            srv = servers.get(ppm)
            if srv is not None and srv.alive():
                self._oneway(srv, ppm)

    def _ttcp_client(self, srv, ppm, mode, calls, seed_offset, what):
        """A ttcp client under loss: (rc, servant's byte count or None, stderr), or None if it timed out."""
        ctx, size = self.ctx, self.ctx.p["loss_ttcp_size"]
        res = ctx.run_raw([ctx.exe("ttcp_client"), srv.ior, "--mode", mode, "--size", str(size),
                           "--total", str(calls * size)] + otp_loss_args(ppm, LOSS_CLIENT_SEED + seed_offset),
                          120, f"{what} under loss {fmt_loss(ppm)}", "otp")
        if res is None:
            return None
        rc, out, err = res
        j = last_json(out) if rc == 0 else None
        m = re.search(ONEWAY_SHORTFALL, err)
        counted = j["bytes"] if j is not None else int(m.group(1)) if m else None
        return rc, counted, err

    def _exactly(self, srv, ppm):
        calls, size = self.ctx.p["loss_ttcp_calls"], self.ctx.p["loss_ttcp_size"]
        log(f"[loss] exactly-once ttcp otp loss {fmt_loss(ppm)}: {calls} calls x {fmt_size(size)}")
        res = self._ttcp_client(srv, ppm, "exactly", calls, 100, "exactly-once ttcp")
        if res is None:
            return
        rc, counted, err = res
        if counted is None:
            self.ctx.loss_notes.append(f"loss {fmt_loss(ppm)}, exactly-once ttcp: client exit status {rc}, "
                                       f"no servant count: {err.strip()[-300:]}")
            return
        self.rows[ppm].update(exactly_calls=calls, exactly_counted_bytes=counted, exactly_counted_calls=counted / size,
                              duplicates=max(0, counted // size - calls), lost_calls=max(0, calls - counted // size))
        if rc != 0:
            self.ctx.loss_notes.append(f"loss {fmt_loss(ppm)}, exactly-once ttcp: {err.strip()[-300:]}")

    def _oneway(self, srv, ppm):
        calls, size = self.ctx.p["loss_oneway_calls"], self.ctx.p["loss_ttcp_size"]
        log(f"[loss] one-way ttcp otp loss {fmt_loss(ppm)}: {calls} x {fmt_size(size)}"
            f" (if one-ways were lost, the client polls received() for 30 s before it reports)")
        res = self._ttcp_client(srv, ppm, "oneway", calls, 200, "one-way ttcp")
        if res is None:
            return
        rc, counted, err = res
        row = self.rows[ppm]
        row["oneway_sent"] = calls
        if counted is not None:
            row["oneway_delivered"] = counted / size
        else:
            # The connection failing under loss is a result, not a run failure.
            row["oneway_failed"] = True
            self.ctx.loss_notes.append(f"loss {fmt_loss(ppm)}, one-way ttcp: client exit status {rc}, "
                                       f"no servant count: {err.strip()[-300:]}")

    def markdown(self):
        if not self.ctx.results.get("loss"):
            return []
        p, o = self.ctx.p, ["## omniTransport under loss (giop:otp, paper 002 sect. 4.2)\n"]
        o.append(f"Both directions lossy: the server and every client drop that share of the datagrams they send "
                 f"(-ORBotpLossPpm; seeds: server {LOSS_SERVER_SEED}, client k {LOSS_CLIENT_SEED} + k, the same at "
                 f"every rate); RTO {OTP_RTO_US} us, window {OTP_WINDOW} credits; server: thread per connection, a "
                 f"fresh one per rate. Null echo: {p['loss_echo_calls']} calls in {p['loss_echo_batches']} client "
                 f"processes (each after {p['loss_echo_warmup']} warm-up calls), the rates alternated; a client whose "
                 f"call fails exits non-zero and its batch counts as not completed. Round trips in us.\n")
        o.append(md_table(["loss", "calls completed", "p50", "p90", "p99", "max", "mean", "calls > RTO",
                           "p50 range over batches"], [self._echo_row(e) for e in self.ctx.results["loss"]]))
        o.append("")
        o.append(f"Delivery semantics: exactly-once ttcp, {p['loss_ttcp_calls']} calls x "
                 f"{fmt_size(p['loss_ttcp_size'])} (duplicates = servant bytes / size - calls sent, must be 0; lost = "
                 f"the shortfall, must be 0); one-way ttcp, {p['loss_oneway_calls']} x {fmt_size(p['loss_ttcp_size'])}"
                 f" (at most once: delivered, counted by the servant within 30 s of the last send, must be <= sent).\n")
        o.append(md_table(["loss", "exactly-once sent", "servant counted", "duplicates", "lost", "one-ways sent",
                           "delivered", "delivered / sent"],
                          [[fmt_loss(e["loss_ppm"])] + self._exactly_cells(e) + self._oneway_cells(e)
                           for e in self.ctx.results["loss"]]))
        o.append("")
        if self.ctx.loss_notes:
            o.append("Notes:\n")
            o.extend(f"- {n}" for n in self.ctx.loss_notes)
            o.append("")
        return o

    @staticmethod
    def _echo_row(e):
        x, sent, done = e.get("echo"), e["echo_calls_sent"], e["echo_calls_completed"]
        comp = f"{done}/{sent} ({100.0 * done / sent:.1f} %)" if sent else "-"
        if x is None:
            return [fmt_loss(e["loss_ppm"]), comp] + ["-"] * 7
        return ([fmt_loss(e["loss_ppm"]), comp] + summary_cells(x)
                + [e.get("calls_over_rto", "-"), fmt_range(e.get("p50_per_batch_us", []))])

    @staticmethod
    def _exactly_cells(e):
        if e.get("duplicates") is None:
            return ["-", "-", "-", "-"]
        dup, lost, cc = e["duplicates"], e["lost_calls"], e["exactly_counted_calls"]
        return [e["exactly_calls"], f"{cc:g}", f"{dup}" + ("" if dup == 0 else " (NOT 0)"),
                f"{lost}" + ("" if lost == 0 else " (NOT 0)")]

    @staticmethod
    def _oneway_cells(e):
        if e.get("oneway_sent") is None:
            return ["-", "-", "-"]
        if e.get("oneway_delivered") is None:
            return [e["oneway_sent"], "client failed (see notes)", "-"]
        s_, d_ = e["oneway_sent"], e["oneway_delivered"]
        return [s_, f"{d_:g}", f"{100.0 * d_ / s_:.1f} %" + ("" if d_ <= s_ else " (MORE THAN SENT)")]

    def write_csv(self):
        ctx, res = self.ctx, self.ctx.results
        if not res.get("loss"):
            return
        write_csv(os.path.join(ctx.out, "loss.csv"),
                  ["loss_ppm", "echo_calls_sent", "echo_calls_completed", "p50_us", "p90_us", "p99_us", "max_us",
                   "mean_us", "calls_over_rto", "exactly_calls", "exactly_counted_calls", "duplicates", "lost_calls",
                   "oneway_sent", "oneway_delivered"],
                  [[e["loss_ppm"], e["echo_calls_sent"], e["echo_calls_completed"]]
                   + ([e["echo"][k] for k in ("p50_us", "p90_us", "p99_us", "max_us")]
                      + [round(e["echo"]["mean_us"], 3)] if e.get("echo") else [None] * 5)
                   + [e.get("calls_over_rto"), e["exactly_calls"], e["exactly_counted_calls"], e["duplicates"],
                      e["lost_calls"], e["oneway_sent"], e["oneway_delivered"]] for e in res["loss"]])
        write_csv(os.path.join(ctx.out, "loss_samples.csv"), ["loss_ppm", "batch", "us"], ctx.loss_samples)
