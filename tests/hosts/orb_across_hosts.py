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
import subprocess
import sys

TIMEOUT = 60


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
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ior = p.stdout.readline().strip()
    if not ior.startswith("IOR:"):
        p.kill()
        raise Failed(f"the server printed no IOR: {p.stderr.read()}")
    return p, ior


def run_client(script, prefix, client, ior, extra):
    argv = [script, "exec", "A", prefix, "--", client, ior, "--calls", "500"] + extra
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)


def clan_echo(script, prefix, server, client):
    a, b = addr(script, prefix, "A"), addr(script, prefix, "B")
    srv, ior = start_server(script, prefix, server, ["giop:clan::"], b)
    try:
        c = run_client(script, prefix, client, ior, ["-ORBclanHost", a])
        if c.returncode != 0:
            raise Failed(f"the client failed ({c.returncode}): {c.stderr[-2000:]}")
        result = json.loads(c.stdout.strip().splitlines()[-1])
        if result.get("count") != 500:
            raise Failed(f"the client made {result.get('count')} calls, not 500")
    finally:
        srv.terminate()
        _, err = srv.communicate(timeout=TIMEOUT)
    if "Accepted connection from giop:clan:" not in err:
        raise Failed(f"the server accepted no giop:clan connection: {err[-2000:]}")


def no_host_words(script, prefix, server, client):
    b = addr(script, prefix, "B")
    srv, ior = start_server(script, prefix, server, [f"giop:tcp:{b}:", "giop:clan::"], b)
    try:
        c = run_client(script, prefix, client, ior, ["-ORBtraceLevel", "10"])
        if c.returncode != 0:
            raise Failed(f"the client failed ({c.returncode}): {c.stderr[-2000:]}")
        if "this process has no -ORBclanHost" not in c.stderr:
            raise Failed(f"the client did not say why it left giop:clan: {c.stderr[-3000:]}")
    finally:
        srv.terminate()
        srv.communicate(timeout=TIMEOUT)


CASES = {"clan_echo": clan_echo, "no_host_words": no_host_words}

if __name__ == "__main__":
    if len(sys.argv) != 6 or sys.argv[5] not in CASES:
        sys.exit(__doc__)
    try:
        CASES[sys.argv[5]](*sys.argv[1:5])
    except (Failed, subprocess.SubprocessError, json.JSONDecodeError, IndexError) as e:
        print(f"orb_across_hosts.py {sys.argv[5]}: {e}", file=sys.stderr)
        sys.exit(1)
