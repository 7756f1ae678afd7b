#!/usr/bin/python3
"""Smoke test of examples/bench_contention: the quick variant's smallest
case (one client, small messages, short window) runs, and its CSV and JSON
parse and hold a row for every server configuration and every target.

Usage: bench_contention_smoke.py PATH_TO_bench_contention
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

CONFIGS = {"OneVN", "ST", "MT", "fixed"}
TARGETS = {
    "contention_overcommit8_over_96",
    "contention_min_client_over_fair_share",
    "contention_96_frames_over_fixed",
}


def fail(why):
    print(f"bench_contention_smoke: {why}", file=sys.stderr)
    sys.exit(1)


def check(out_dir, stdout):
    with open(os.path.join(out_dir, "contention.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    if {r["config"] for r in rows} != CONFIGS:
        fail(f"configurations in the CSV: {sorted({r['config'] for r in rows})}")
    for r in rows:
        if r["error"] or r["clients"] != "1" or float(r["aggregate_msg_s"]) <= 0:
            fail(f"bad row {r}")
    with open(os.path.join(out_dir, "contention.json")) as f:
        doc = json.load(f)
    if doc["benchmark"] != "contention" or len(doc["points"]) != len(rows):
        fail("the JSON's points do not match the CSV")
    if {t["id"] for t in doc["targets"]} != TARGETS:
        fail(f"targets in the JSON: {[t['id'] for t in doc['targets']]}")
    for heading in ("| config |", "| target |"):
        if heading not in stdout:
            fail(f"no table headed {heading!r} on stdout")


def main():
    if len(sys.argv) != 2:
        fail("usage: bench_contention_smoke.py PATH_TO_bench_contention")
    with tempfile.TemporaryDirectory(prefix="contention-smoke-") as out_dir:
        cmd = [sys.argv[1], "--quick", "--max-clients", "1", "--sizes", "small", "--warm-ms", "20", "--ms", "100",
               "--out", out_dir]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
        if run.returncode != 0:
            fail(f"exit status {run.returncode}\n{run.stderr}")
        check(out_dir, run.stdout)
    print("bench_contention_smoke: ok")


if __name__ == "__main__":
    main()
