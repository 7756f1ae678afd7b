#!/usr/bin/python3
"""The comparison's request-rate verdict rows (scripts/comparison/targets.py)
on fabricated results, with the thresholds of examples/targets.tsv: clan's
thread-pool rate against tcp's and its steadiness over rounds, and the
16-client rows, each met, not met, and without the data to judge (too few
rounds, a profile without 16 clients, a transport not run). Also the rate
table's per-round figures. No program runs.

Usage: comparison_targets_test.py
"""
import os
import sys
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))

from comparison.config import PROFILES  # noqa: E402
from comparison.rate import RequestRate  # noqa: E402
from comparison.targets import compute_targets, read_targets  # noqa: E402

TRANSPORTS = ["tcp", "clan", "otp"]
RATE_ROWS = ["clan_rate4_pool_over_tcp", "clan_rate4_pool_spread", "clan_rate16_pool_over_tpc",
             "otp_rate16_over_tcp_tpc", "otp_rate16_over_tcp_pool"]


def rate_entry(transport, mode, clients, rounds):
    return dict(transport=transport, mode=mode, clients=clients, requests=0, seconds=0.0,
                requests_per_s=sum(rounds) / len(rounds), requests_per_s_rounds=rounds,
                sockets=[clients] * len(rounds), connect_retries=0)


def context(rate, quick=False, transports=TRANSPORTS):
    ctx = types.SimpleNamespace(
        p=PROFILES["quick" if quick else "full"], args=types.SimpleNamespace(quick=quick),
        transports=transports, failed_transports={},
        results=dict(echo={}, echo_rounds=[], zmq=None, rate=rate, rate_procs=[], ttcp=[], idle=[], loss=[]))
    ctx.have = lambda t: t in ctx.transports and t not in ctx.failed_transports
    return ctx


def full_run(clan_pool4, tcp_pool4, clan16, otp16, tcp16):
    """Rate entries: clan_pool4 and tcp_pool4 are round lists; clan16, otp16
    and tcp16 map a mode to one figure at 16 clients."""
    rate = [rate_entry("clan", "pool", 4, clan_pool4), rate_entry("tcp", "pool", 4, tcp_pool4)]
    for t, by_mode in (("clan", clan16), ("otp", otp16), ("tcp", tcp16)):
        rate += [rate_entry(t, m, 16, [x] * 3) for m, x in by_mode.items()]
    return rate


def verdicts(ctx):
    return {r["id"]: r for r in compute_targets(ctx, read_targets()) if r["id"] in RATE_ROWS}


class RateTargets(unittest.TestCase):

    def test_every_row_is_in_targets_tsv(self):
        self.assertEqual(sorted(verdicts(context([]))), sorted(RATE_ROWS))

    def test_met(self):
        rows = verdicts(context(full_run([600e3, 550e3, 650e3], [100e3] * 3, dict(tpc=250e3, pool=300e3),
                                         dict(tpc=90e3, pool=120e3), dict(tpc=90e3, pool=60e3))))
        self.assertEqual({i: r["status"] for i, r in rows.items()}, {i: "MET" for i in RATE_ROWS})
        self.assertIn("= 0.08", rows["clan_rate4_pool_spread"]["measured"])

    def test_not_met(self):
        rows = verdicts(context(full_run([1046e3, 215e3, 600e3], [150e3] * 3, dict(tpc=404e3, pool=94e3),
                                         dict(tpc=100e3, pool=50e3), dict(tpc=80e3, pool=80e3))))
        self.assertEqual(rows["clan_rate4_pool_over_tcp"]["status"], "NOT MET")
        self.assertEqual(rows["clan_rate4_pool_spread"]["status"], "NOT MET")
        self.assertAlmostEqual(rows["clan_rate4_pool_spread"]["value"], 446 / 600)
        self.assertEqual(rows["clan_rate16_pool_over_tpc"]["status"], "NOT MET")
        self.assertEqual(rows["otp_rate16_over_tcp_tpc"]["status"], "MET")
        self.assertEqual(rows["otp_rate16_over_tcp_pool"]["status"], "NOT MET")

    def test_too_few_rounds(self):
        for rounds, why in (([600e3], "n/a (1 round, 3 needed)"), ([600e3, 610e3], "n/a (2 rounds, 3 needed)")):
            rows = verdicts(context([rate_entry("clan", "pool", 4, rounds), rate_entry("tcp", "pool", 4, [1e5])]))
            self.assertEqual(rows["clan_rate4_pool_spread"]["status"], "n/a")
            self.assertEqual(rows["clan_rate4_pool_spread"]["measured"], why)

    def test_quick_profile_has_no_16_clients(self):
        rows = verdicts(context([rate_entry("clan", "pool", 4, [600e3]), rate_entry("tcp", "pool", 4, [1e5])],
                                quick=True))
        self.assertEqual(rows["clan_rate4_pool_over_tcp"]["status"], "MET")
        for i in ("clan_rate16_pool_over_tpc", "otp_rate16_over_tcp_tpc", "otp_rate16_over_tcp_pool"):
            self.assertEqual((rows[i]["status"], rows[i]["measured"]), ("n/a", "n/a (not measured in --quick)"))

    def test_transport_not_run(self):
        rows = verdicts(context([], transports=["tcp", "clan"]))
        self.assertEqual(rows["otp_rate16_over_tcp_tpc"]["measured"], "n/a (otp not run)")
        self.assertEqual(rows["clan_rate16_pool_over_tpc"]["measured"], "n/a (not measured)")


class RateTable(unittest.TestCase):

    def test_each_round_is_shown_when_there_are_several(self):
        ctx = context([rate_entry("clan", "pool", 4, [600e3, 550e3, 650e3])])
        text = "\n".join(RequestRate(ctx).mode_lines("pool"))
        self.assertIn("| clan | - | - | 600,000, 550,000, 650,000 | - | - |", text)

    def test_one_round_has_no_rounds_table(self):
        ctx = context([rate_entry("clan", "pool", 4, [600e3])], quick=True)
        self.assertNotIn("Each round", "\n".join(RequestRate(ctx).mode_lines("pool")))


if __name__ == "__main__":
    unittest.main()
