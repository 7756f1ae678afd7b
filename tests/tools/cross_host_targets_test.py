#!/usr/bin/python3
"""The cross-host section's Targets table (scripts/comparison/
cross_host_clan_wire.py) on fabricated results: the raw clan wire's 8 B
round trip against the bare TCP socket's, polling and blocking, and
giop:clan's null echo against giop:tcp's, each met, not met, and not
measured when its figures are missing. No program runs.

Usage: cross_host_targets_test.py
"""
import os
import sys
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))

from comparison.cross_host_clan_wire import targets_markdown  # noqa: E402


def context(socket_p50, raw_p50, echo):
    sock = [dict(wire="tcp", wait=w, size_bytes=8, p50_us=v) for w, v in socket_p50.items()]
    raw = [dict(transport="clan wire", wait=w, size_bytes=8, p50_us=v) for w, v in raw_p50.items()]
    return types.SimpleNamespace(results=dict(
        wire=dict(latency=sock) if sock else None, clan_wire=dict(pingpong=raw) if raw else None,
        echo={k: dict(p50_us=v) for k, v in echo.items()}))


def rows(ctx):
    """target -> (ratio, verdict), from the Markdown table."""
    out = {}
    for line in targets_markdown(ctx):
        for row in line.splitlines():
            cells = [c.strip() for c in row.strip("|").split("|")]
            if len(cells) == 4 and cells[0] not in ("target", "---"):
                out[cells[0]] = (cells[2], cells[3])
    return out


POLL = "raw wire 8 B round trip (poll) / TCP socket (busy)"
BLOCK = "raw wire 8 B round trip (block) / TCP socket (blocking)"
TPC = "giop:clan null echo p50 / giop:tcp (tpc)"
POOL = "giop:clan null echo p50 / giop:tcp (pool)"


class Targets(unittest.TestCase):
    def test_met_and_not_met(self):
        r = rows(context({"busy": 10.0, "blocking": 50.0}, {"poll": 14.0, "block": 80.0},
                         {"tcp/tpc": 20.0, "clan/tpc": 22.0, "tcp/pool": 20.0, "clan/pool": 30.0}))
        self.assertEqual(r[POLL][1], "met")
        self.assertEqual(r[BLOCK][1], "NOT MET")
        self.assertEqual(r[TPC][1], "met")
        self.assertEqual(r[POOL][1], "NOT MET")
        self.assertIn("1.4", r[POLL][0])
        self.assertIn("1.5", r[POOL][0])

    def test_missing_figures_are_not_measured(self):
        r = rows(context({}, {"poll": 14.0}, {"tcp/tpc": 20.0}))
        self.assertEqual(set(v for _, v in r.values()), {"not measured"})
        self.assertEqual(len(r), 4)


if __name__ == "__main__":
    unittest.main()
