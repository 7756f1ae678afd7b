#!/usr/bin/python3
"""bench_wire between the two hosts, a short run: its server in B on B's
address, its client in A; both exit 0, the client prints the round-trip and
bandwidth tables, and its files hold a row for every wire, wait and size with
the round trips asked for.

Usage: bench_wire_smoke.py SCRIPT PREFIX BENCH_WIRE
(the hosts of PREFIX exist: CTest's fixture made them)
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

SIZES = {8, 256, 4096, 65536}


def fail(why):
    sys.exit(f"FAILED: {why}")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    script, prefix, exe = sys.argv[1:]
    addr = subprocess.run([script, "addr", "B", prefix], stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    # Not under /tmp: each host has its own.
    out = tempfile.mkdtemp(prefix="bench-wire-", dir=os.getcwd())
    server = subprocess.Popen([script, "exec", "B", prefix, "--", exe, "server", "--listen", f"{addr}:0",
                               "--accept-seconds", "30"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline().split()
        if len(line) != 2 or line[0] != "listening":
            fail(f"the server's first line is {' '.join(line)!r}")
        client = subprocess.run([script, "exec", "A", prefix, "--", exe, "client", line[1], "--roundtrips", "200",
                                 "--alternations", "2", "--stream-mib", "4", "--out", out],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=90)
        if client.returncode != 0:
            fail(f"client exit status {client.returncode}: {client.stderr[-2000:]}")
        _, err = server.communicate(timeout=30)
        if server.returncode != 0:
            fail(f"server exit status {server.returncode}: {err[-2000:]}")
        check_outputs(client.stdout, out)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        shutil.rmtree(out, ignore_errors=True)
    print("passed")


def check_outputs(stdout, out):
    for heading in ("## Round trips between the hosts (us)", "## Bandwidth from A to B (MB/s)"):
        if heading not in stdout:
            fail(f"no {heading!r} in the client's output:\n{stdout}")
    with open(os.path.join(out, "wire_latency.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    cells = {(r["wire"], r["wait"], int(r["size_bytes"])) for r in rows}
    expected = {("tcp", w, s) for w in ("busy", "blocking") for s in SIZES}
    if cells != expected or len(rows) != len(expected):
        fail(f"wire_latency.csv holds {sorted(cells)}, not {sorted(expected)}")
    for r in rows:
        if int(r["round_trips"]) != 200 or not float(r["p50_us"]) > 0 or len(r["p50_us_per_round"].split()) != 2:
            fail(f"wire_latency.csv row {r}")
    with open(os.path.join(out, "wire_bandwidth.csv"), newline="") as f:
        bw = list(csv.DictReader(f))
    if len(bw) != 1 or bw[0]["wire"] != "tcp" or not float(bw[0]["mb_per_s"]) > 0:
        fail(f"wire_bandwidth.csv: {bw}")
    with open(os.path.join(out, "wire.json")) as f:
        doc = json.load(f)
    if doc.get("benchmark") != "wire" or len(doc.get("latency", [])) != len(expected) or len(doc["bandwidth"]) != 1:
        fail(f"wire.json: {json.dumps(doc)[:500]}")


if __name__ == "__main__":
    main()
