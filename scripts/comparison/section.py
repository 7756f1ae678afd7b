"""What every section of the comparison shares: the run's context, and the
Markdown of a table per server threading mode."""

from .config import MODES
from .fmt import find, fmt_num, fmt_ratio, ratio


class Section:
    """One section: run() measures, markdown() gives its lines, write_csv()
    writes its files."""

    def __init__(self, ctx):
        self.ctx = ctx

    def markdown(self):
        return self.per_mode()

    def per_mode(self):
        """A table per server threading mode: the HEADING (with the mode's
        name), the INTRO (with the profile's figures) and mode_lines(mode)."""
        o = []
        for mode, (mname, _) in MODES.items():
            o += [self.HEADING.format(mname), self.INTRO.format(**self.ctx.p)] + self.mode_lines(mode)
        return o

    def vs_tcp(self, entries, field, t, **key):
        """A transport's figure with its ratio to tcp's in the same run, or why there is none."""
        x, b = find(entries, transport=t, **key), find(entries, transport="tcp", **key)
        if x is None:
            return "failed" if t in self.ctx.failed_transports else "-"
        return f"{fmt_num(x[field])} ({fmt_ratio(ratio(x[field], b and b[field]))})"
