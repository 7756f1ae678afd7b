"""The comparison's verdicts. Every threshold and target text comes from
examples/targets.tsv (see its header); this module measures the value each
"comparison" line names and prints one verdict row per line, or per group of
lines (ids "row.part" form the verdict row "row")."""

import operator
import os
import statistics

from .config import KiB, MODES, OTP_RTO_US
from .fmt import find, fmt_num, fmt_ratio, md_table, ratio, write_csv

TARGETS_TSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "targets.tsv")
OPS = {"<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt, "==": operator.eq}
# The request rate is steady when this many rounds of one run stay close to their median.
STEADY_ROUNDS = 3


class Target:
    """One line of targets.tsv."""

    def __init__(self, fields):
        self.id, self.benchmark, self.op, value, self.what = fields
        if self.op not in OPS:
            raise ValueError(f"targets.tsv: {self.id}: unknown op {self.op!r}")
        self.value = float(value)

    def met(self, measured):
        return OPS[self.op](measured, self.value)

    def bound(self):
        return f"target {self.op} {self.value:.3g}"

    def row(self):
        """The verdict row this line belongs to."""
        return self.id.rsplit(".", 1)[0]


def read_targets(path=TARGETS_TSV):
    """Every line of targets.tsv, in file order."""
    out, header = [], None
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            fields = line.rstrip("\n").split("\t")
            if header is None:
                header = fields
                continue
            out.append(Target(fields))
    return out


def combined_what(lines):
    """The one text for a verdict row of several lines: their common prefix
    (up to ": ") once, then each line's remainder."""
    prefix = lines[0].what.split(": ", 1)[0] + ": "
    if all(t.what.startswith(prefix) for t in lines):
        return prefix + ", ".join(t.what[len(prefix):] for t in lines)
    return "; ".join(t.what for t in lines)


class Measures:
    """The values the comparison's targets name, from the run's results: for
    a verdict row, (needed transports, values by id or one value, text)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.res = ctx.results

    def echo_p50(self, t):
        e = self.res["echo"].get(f"{t}/tpc")
        return e["p50_us"] if e else None

    def rate(self, t, n, mode="tpc"):
        e = find(self.res["rate"], transport=t, clients=n, mode=mode)
        return e and e["requests_per_s"]

    def unmeasured_clients(self, n):
        """Why the single-process rate has no point at n clients in this profile, or ""."""
        if n in self.ctx.p["rate_clients"]:
            return ""
        return "not measured in --quick" if self.ctx.args.quick else f"{n} clients not measured"

    def rate_ratio(self, n, a, b):
        """The request rate at n clients of a over b, each (transport, mode)."""
        why = self.unmeasured_clients(n)
        if why:
            return [a[0], b[0]], None, why
        _, q, text = self.ratio_text("/".join(a), "/".join(b), self.rate(a[0], n, a[1]),
                                     self.rate(b[0], n, b[1]), "req/s")
        return [a[0], b[0]], q, text

    def rate_spread(self, t, m, n):
        """How steady the request rate of t in mode m at n clients is: its rounds' largest
        deviation from their median, as a fraction of the median."""
        e = find(self.res["rate"], transport=t, clients=n, mode=m)
        if e is None:
            return [t], None, ""
        rounds = e["requests_per_s_rounds"]
        if len(rounds) < STEADY_ROUNDS:
            return [t], None, f"{len(rounds)} round{'' if len(rounds) == 1 else 's'}, {STEADY_ROUNDS} needed"
        median = statistics.median(rounds)
        if not median:
            return [t], None, ""
        spread = max(abs(x - median) for x in rounds) / median
        return [t], spread, (f"{t}/{m} rounds {', '.join(fmt_num(x) for x in rounds)} req/s: largest deviation "
                             f"from their median {fmt_num(median)} = {spread:.2f}")

    def rate_procs(self, t, m):
        e = find(self.res["rate_procs"], transport=t, mode=m, clients=64)
        return e and e["requests_per_s"]

    def ttcp(self, t, mode, size):
        e = find(self.res["ttcp"], transport=t, mode=mode, size=size)
        return e and e["mb_per_s"]

    def echo_tail(self, t, m):
        """The null echo's tail in mode m: p90 against its own p50 and against tcp's p90."""
        e, tcp = self.res["echo"].get(f"{t}/{m}"), self.res["echo"].get(f"tcp/{m}")
        if not e or not tcp or not e["p50_us"] or not tcp["p90_us"]:
            return [t, "tcp"], None, ""
        row = f"{t}_echo_tail_{m}"
        own, vs_tcp = e["p90_us"] / e["p50_us"], e["p90_us"] / tcp["p90_us"]
        return [t, "tcp"], {f"{row}.p90_over_p50": own, f"{row}.p90_over_tcp_p90": vs_tcp}, (
            f"{t} p90 {fmt_num(e['p90_us'])} us / p50 {fmt_num(e['p50_us'])} us = {fmt_ratio(own)}; "
            f"/ tcp p90 {fmt_num(tcp['p90_us'])} us = {vs_tcp:.3f}")

    def echo_ratio(self, a, b, digits):
        x, y = self.echo_p50(a), self.echo_p50(b)
        q = ratio(x, y)
        if q is None:
            return [a, b], None, ""
        return [a, b], q, (f"{a} {fmt_num(x)} us / {b} {fmt_num(y)} us = "
                           + (fmt_ratio(q) if digits is None else f"{q:.{digits}f}"))

    def ratio_text(self, a, b, x, y, unit):
        q = ratio(x, y)
        return [a, b], q, "" if q is None else f"{a} {fmt_num(x)} / {b} {fmt_num(y)} {unit} = {fmt_ratio(q)}"

    def idle(self):
        idle = [i for i in self.res["idle"] if i["transport"] == "clan"]
        worst = max((i["server_pct"] for i in idle), default=None)
        return ["clan"], worst, "" if worst is None else (
            f"{worst:.1f} % (worst of {', '.join(i['mode'] for i in idle)})")

    def loss1(self):
        """otp at 1 % loss against the round trip at 0 %: the otp_loss1.* values."""
        loss = {e["loss_ppm"]: e for e in self.res.get("loss", [])}
        l0, l1 = loss.get(0), loss.get(10000)
        rt = l0["echo"]["p50_us"] if l0 and l0.get("echo") else None
        if l1 is None or rt is None or l1.get("echo") is None or l1.get("duplicates") is None:
            return ["otp"], None, ""
        bound = OTP_RTO_US + 3 * rt
        p99, done, sent = l1["echo"]["p99_us"], l1["echo_calls_completed"], l1["echo_calls_sent"]
        values = {"otp_loss1.incomplete_calls": sent - done, "otp_loss1.duplicates": l1["duplicates"],
                  "otp_loss1.lost_calls": l1["lost_calls"], "otp_loss1.p99_over_rto_plus_3rt": p99 / bound}
        return ["otp"], values, (
            f"{done}/{sent} echo calls ({100.0 * done / sent:.1f} %); exactly-once: {l1['duplicates']} duplicates, "
            f"{l1['lost_calls']} lost of {l1['exactly_calls']}; p99 {fmt_num(p99)} us vs {OTP_RTO_US} + 3 x "
            f"{fmt_num(rt)} = {fmt_num(bound)} us (RTO; round trip: otp p50 at 0 % loss)")

    def measure(self, row):
        """(transports needed, value or values by id, text) of a verdict row."""
        rows = {
            "clan_echo_over_tcp": lambda: self.echo_ratio("clan", "tcp", 3),
            "unix_echo_over_clan": lambda: self.echo_ratio("unix", "clan", None),
            "clan_rate4_over_tcp": lambda: self.ratio_text("clan", "tcp", self.rate("clan", 4),
                                                           self.rate("tcp", 4), "req/s"),
            "clan_ttcp_exactly_64k_over_tcp": lambda: self.ratio_text(
                "clan", "tcp", self.ttcp("clan", "exactly", 64 * KiB), self.ttcp("tcp", "exactly", 64 * KiB), "MB/s"),
            "clan_idle_server_pct": self.idle,
            "otp_echo_over_clan": lambda: self.echo_ratio("otp", "clan", 2),
            "tcp_echo_over_otp": lambda: self.echo_ratio("tcp", "otp", None),
            "via_echo_over_clan": lambda: self.echo_ratio("via", "clan", 2),
            "otp_loss1": self.loss1,
            "clan_rate4_pool_over_tcp": lambda: self.rate_ratio(4, ("clan", "pool"), ("tcp", "pool")),
            "clan_rate4_pool_spread": lambda: self.rate_spread("clan", "pool", 4),
            "clan_rate16_pool_over_tpc": lambda: self.rate_ratio(16, ("clan", "pool"), ("clan", "tpc")),
        }
        rows.update({f"{t}_echo_tail_{m}": (lambda t=t, m=m: self.echo_tail(t, m))
                     for t in ("clan", "otp", "via") for m in MODES})
        rows.update({f"otp_rate64_over_tcp_{m}": (lambda m=m: self.ratio_text(
            "otp", "tcp", self.rate_procs("otp", m), self.rate_procs("tcp", m), "req/s")) for m in MODES})
        rows.update({f"otp_rate16_over_tcp_{m}": (lambda m=m: self.rate_ratio(16, ("otp", m), ("tcp", m)))
                     for m in MODES})
        if row not in rows:
            raise KeyError(f"targets.tsv: the comparison measures nothing named {row!r}")
        return rows[row]()


def verdict(ctx, measures, row, lines):
    """One verdict row: target, measured, value, status. A row without a value
    says why: the text its measure gives, or "not measured"."""
    needs, value, text = measures.measure(row)
    what = lines[0].what if len(lines) == 1 else combined_what(lines)
    missing = [t for t in needs if not ctx.have(t)]
    if missing or value is None:
        why = f"{', '.join(missing)} not run" if missing else (text or "not measured")
        return dict(id=row, target=what, measured=f"n/a ({why})", value=None, status="n/a",
                    lines={t.id: "n/a" for t in lines})
    values = {lines[0].id: value} if len(lines) == 1 else value
    met = {t.id: t.met(values[t.id]) for t in lines}
    if len(lines) == 1:
        text = f"{text} ({lines[0].bound()})"
    return dict(id=row, target=what, measured=text, value=value, status=status(all(met.values())),
                lines={i: status(m) for i, m in met.items()})


def status(met):
    return "MET" if met else "NOT MET"


def compute_targets(ctx, targets):
    """The verdict rows of the comparison's lines of targets.tsv, in its order."""
    rows = {}
    for t in targets:
        if t.benchmark == "comparison":
            rows.setdefault(t.row(), []).append(t)
    measures = Measures(ctx)
    return [verdict(ctx, measures, row, lines) for row, lines in rows.items()]


class Targets:
    """The verdicts, and every benchmark's targets beside them."""

    def __init__(self, ctx, path):
        self.ctx = ctx
        self.lines = read_targets(path)
        self.rows = []

    def run(self):
        self.rows = compute_targets(self.ctx, self.lines)
        return self.rows

    def markdown(self):
        o = ["## Targets\n",
             md_table(["target", "measured", "status"], [[x["target"], x["measured"], x["status"]]
                                                         for x in self.rows]), ""]
        o.append("Every benchmark's targets (examples/targets.tsv): the comparison's from this run, the others "
                 "in their own benchmark's output.\n")
        status = {i: s for x in self.rows for i, s in x["lines"].items()}
        o.append(md_table(["benchmark", "target", "status"],
                          [[t.benchmark, t.what, status.get(t.id, "-") if t.benchmark == "comparison"
                            else f"in `{t.benchmark}`'s output"] for t in self.lines]))
        o.append("")
        return o

    def write_csv(self):
        write_csv(os.path.join(self.ctx.out, "targets.csv"), ["target", "measured", "status"],
                  [[x["target"], x["measured"], x["status"]] for x in self.rows])
