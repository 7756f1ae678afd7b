#!/usr/bin/python3
"""omniORB across the two hosts of scripts/two_hosts.sh over giop:clan: the
server in B, the client in A, each with -ORBclanHost its own address, so
the client connects to the server's node over tcp and the queues run over
the NICs' wires (no shared memory can pass between the hosts).

Usage: orb_across_hosts.py SCRIPT PREFIX ECHO_SERVER ECHO_CLIENT CASE

CASE:
  clan_echo        the server publishes giop:clan only: 500 echo calls
                   succeed, so they went over the wire;
  no_host_words    the server publishes giop:clan and giop:tcp, the client
                   has no -ORBclanHost: its calls go over tcp, and it says
                   why it did not use giop:clan.
Exit status 0 when the case holds.
"""
import json
import os
import subprocess
import sys
import threading

TIMEOUT = 30  # each step; CTest's own timeout bounds the whole case

# The hosts' processes find each other by address alone.
ENV = {k: v for k, v in os.environ.items() if k not in ("CLAN_RUNTIME_DIR", "CLAN_OOB_LISTEN", "CLAN_WIRE_LISTEN")}


class Failed(Exception):
    pass


def addr(script, prefix, host):
    return subprocess.run([script, "addr", host, prefix], stdout=subprocess.PIPE, text=True, check=True,
                          timeout=TIMEOUT).stdout.strip()


def start_server(script, prefix, server, endpoints, host_b):
    argv = [script, "exec", "B", prefix, "--", server]
    for e in endpoints:
        argv += ["-ORBendPoint", e]
    argv += ["-ORBclanHost", host_b, "-ORBtraceLevel", "5"]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    first = []
    reader = threading.Thread(target=lambda: first.append(p.stdout.readline().strip()), daemon=True)
    reader.start()
    reader.join(TIMEOUT)
    ior = first[0] if first else ""
    if not ior.startswith("IOR:"):
        raise Failed(f"the server printed no IOR within {TIMEOUT} s: {stop(p)[-2000:]}")
    return p, ior


def stop(srv):
    """Ends the server; its stderr."""
    srv.terminate()
    try:
        return srv.communicate(timeout=10)[1]
    except subprocess.TimeoutExpired:
        srv.kill()
        return srv.communicate()[1]


def run_client(script, prefix, client, ior, extra):
    argv = [script, "exec", "A", prefix, "--", client, ior, "--calls", "500"] + extra
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT,
                          env=ENV)


def clan_echo(script, prefix, server, client):
    a, b = addr(script, prefix, "A"), addr(script, prefix, "B")
    srv, ior = start_server(script, prefix, server, ["giop:clan::"], b)
    try:
        c = run_client(script, prefix, client, ior, ["-ORBclanHost", a, "-ORBtraceLevel", "10"])
    finally:
        err = stop(srv)
    if c.returncode != 0:
        raise Failed(f"the client failed ({c.returncode}): {c.stderr[-2000:]}\nthe server: {err[-2000:]}")
    result = json.loads(c.stdout.strip().splitlines()[-1])
    if result.get("count") != 500:
        raise Failed(f"the client made {result.get('count')} calls, not 500")
    if "Accepted connection from giop:clan:" not in err:
        raise Failed(f"the server accepted no giop:clan connection: {err[-2000:]}")


def no_host_words(script, prefix, server, client):
    b = addr(script, prefix, "B")
    srv, ior = start_server(script, prefix, server, [f"giop:tcp:{b}:", "giop:clan::"], b)
    try:
        c = run_client(script, prefix, client, ior, ["-ORBtraceLevel", "10"])
    finally:
        err = stop(srv)
    if c.returncode != 0:
        raise Failed(f"the client failed ({c.returncode}): {c.stderr[-2000:]}\nthe server: {err[-2000:]}")
    if "this process has no -ORBclanHost" not in c.stderr:
        raise Failed(f"the client did not say why it left giop:clan: {c.stderr[-3000:]}")


CASES = {"clan_echo": clan_echo, "no_host_words": no_host_words}

if __name__ == "__main__":
    if len(sys.argv) != 6 or sys.argv[5] not in CASES:
        sys.exit(__doc__)
    try:
        CASES[sys.argv[5]](*sys.argv[1:5])
    except (Failed, subprocess.SubprocessError, json.JSONDecodeError, IndexError) as e:
        print(f"orb_across_hosts.py {sys.argv[5]}: {e}", file=sys.stderr)
        sys.exit(1)
