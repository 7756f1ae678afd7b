"""Formatting, statistics and table output shared by every section."""

import csv
import math
import sys

from .config import KiB, MiB


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


def fmt_loss(ppm):
    return f"{ppm / 10000:g} %"


def fmt_range(vals):
    """The spread of per-round (or per-batch) p50s."""
    return f"{min(vals):.1f} .. {max(vals):.1f}" if vals else "-"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def percentile(sorted_vals, q):
    """Nearest rank, as the C++ clients compute it."""
    if not sorted_vals:
        return None
    rank = max(1, min(len(sorted_vals), math.ceil(q * len(sorted_vals))))
    return sorted_vals[rank - 1]


def summarize(samples):
    s = sorted(samples)
    if not s:
        return None
    return dict(count=len(s), p50_us=percentile(s, 0.5), p90_us=percentile(s, 0.9),
                p99_us=percentile(s, 0.99), max_us=s[-1], mean_us=sum(s) / len(s))


def summary_cells(e):
    """p50, p90, p99, max and mean of a summary, formatted."""
    return [fmt_num(e[k]) for k in ("p50_us", "p90_us", "p99_us", "max_us", "mean_us")]


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def find(entries, **key):
    """The first entry whose fields equal key, or None."""
    return next((e for e in entries if all(e.get(k) == v for k, v in key.items())), None)
