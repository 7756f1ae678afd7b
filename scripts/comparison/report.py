"""The comparison's outputs: the machine header, the Markdown of every
section in order, comparison.json, one CSV per table and the plots."""

import datetime
import json
import os
import platform
import subprocess
import sys

from .config import LOSS_PPMS, OTP_RTO_US, OTP_WINDOW, TRANSPORTS
from .fmt import log


def machine_meta(ctx):
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return dict(
        date=datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        cpu=cpu, cores=os.cpu_count(), kernel=platform.release(), pinned="no",
        spin_ns=os.environ.get("CLAN_SPIN_NS"), profile="quick" if ctx.args.quick else "full",
        transports=ctx.transports, otp_rto_us=OTP_RTO_US, otp_window=OTP_WINDOW,
        loss_ppms=LOSS_PPMS if "otp" in ctx.transports else [],
        endpoints={t: " ".join(TRANSPORTS[t]("<tmpdir>", "<name>")) for t in ctx.transports},
        params=ctx.p)


def header_markdown(ctx, meta):
    m = meta
    spin = f"CLAN_SPIN_NS={m['spin_ns']}" if m["spin_ns"] else "default (CLAN_SPIN_NS unset)"
    o = ["# omniORB transport comparison\n",
         f"- date: {m['date']}; run: {m['profile']} ({m.get('duration_s', '?')} s)",
         f"- machine: {m['cpu']}, {m['cores']} cores, kernel {m['kernel']}; pinned: {m['pinned']}",
         f"- spin budget: {spin}",
         "- endpoints: " + "; ".join(f"{t} `{e}`" for t, e in m["endpoints"].items())]
    if "otp" in m["transports"]:
        o.append(f"- otp: window {OTP_WINDOW} credits, RTO {OTP_RTO_US} us (defaults); no loss except in the "
                 f"\"under loss\" section")
    o.append("- transports alternated in rounds; ratios are to tcp in the same run")
    if ctx.failures:
        o.append(f"- **failures: {len(ctx.failures)}** (see the end)")
    o.append("")
    return o


def failures_markdown(ctx):
    if not ctx.failures:
        return []
    o = ["## Failures\n"]
    for f in ctx.failures:
        detail = f["detail"].strip().replace("\n", "\n    ")
        o.append(f"- {f['what']} ({f['transport']}):\n\n    {detail}\n")
    return o


def write_outputs(ctx, meta, sections, targets):
    """comparison.json, the CSVs, comparison.md (also printed) and the plots."""
    out = ctx.out
    with open(os.path.join(out, "comparison.json"), "w") as f:
        json.dump(dict(meta=meta, failures=ctx.failures, failed_transports=ctx.failed_transports,
                       targets=targets.rows, loss_notes=ctx.loss_notes, **ctx.results), f, indent=1)
    for s in sections + [targets]:
        s.write_csv()
    md = header_markdown(ctx, meta)
    for s in sections + [targets]:
        md += s.markdown()
    md = "\n".join(md + failures_markdown(ctx))
    with open(os.path.join(out, "comparison.md"), "w") as f:
        f.write(md + "\n")
    print(md, flush=True)
    plot_plots(out)


def plot_plots(out):
    """Plots with matplotlib; Debian's python3-matplotlib lives in /usr/bin/python3,
    which may not be the python3 first on PATH (pyenv, venv): then run the plot
    script with it."""
    scripts = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        system_py = "/usr/bin/python3"
        if os.path.realpath(sys.executable) != os.path.realpath(system_py) and os.access(system_py, os.X_OK):
            p = subprocess.run([system_py, os.path.join(scripts, "plot_comparison.py"), out],
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
        sys.path.insert(0, scripts)
        import plot_comparison
        for png in plot_comparison.plot_all(out):
            log(f"wrote {png}")
    except Exception as e:  # plots are a convenience: report, do not fail the run
        log(f"plots skipped: {type(e).__name__}: {e}")
