#!/usr/bin/python3
"""omniORB across the two hosts of scripts/two_hosts.sh: orb_test_peer's
server in B, its clients in A, each with -ORBclanHost its own address, so
that the client reaches the server's node over tcp and the transport runs
between the hosts (no shared memory can pass between them).

Usage: orb_across_hosts.py SCRIPT PREFIX PEER PEER_PLAIN TRANSPORT CASE

PEER is orb_test_peer, PEER_PLAIN the same program without clanorb;
TRANSPORT clan, otp or via. CASE:
  echo           the server publishes giop:TRANSPORT only: small and large
                 echo calls all come back, over that transport;
  ttcp           two-way, marshalled and one-way ttcp transfers all arrive
                 intact (the servant checks every byte);
  exception      a corrupt ttcp buffer comes back as BAD_PARAM (completed
                 yes), and the connection then carries a good one;
  killed         the server is killed while it holds a call: the client
                 gets COMM_FAILURE or TRANSIENT, and does not hang;
  names          the echo IOR passes through omniNames (in B, over tcp) and
                 the client resolved from it calls over giop:TRANSPORT;
  plain          the server publishes giop:TRANSPORT and giop:tcp: a client
                 without clanorb calls it over tcp;
  no_host_words  the same server, a clanorb client without -ORBclanHost: its
                 calls go over tcp, and it says why not giop:TRANSPORT;
  loss           giop:otp only: server and client each drop 2 % and
                 corrupt 0.2 % of what they send (the seeded fault model,
                 on top of UDP): echo calls and exactly-once ttcp transfers
                 all succeed intact, and the logs show retransmissions.
Exit status 0 when the case holds.
"""
import os
import re
import signal
import subprocess
import sys
import threading

TRANSPORTS = ("clan", "otp", "via")
TIMEOUT = 60  # each step; CTest's own timeout bounds the whole case

# The hosts' processes find each other by address alone.
ENV = {k: v for k, v in os.environ.items() if k not in ("CLAN_RUNTIME_DIR", "CLAN_OOB_LISTEN", "CLAN_WIRE_LISTEN")}

# orb_test_peer's client exit codes (tests/orb/protocol.hpp).
CLIENT_OK, CLIENT_SYSTEM_EXCEPTION = 0, 2


class Failed(Exception):
    pass


class Hosts:
    def __init__(self, script, prefix):
        self.script, self.prefix = script, prefix
        self.addr = {h: subprocess.run([script, "addr", h, prefix], stdout=subprocess.PIPE, text=True, check=True,
                                       timeout=TIMEOUT).stdout.strip() for h in ("A", "B")}

    def argv(self, host, *cmd):
        return [self.script, "exec", host, self.prefix, "--", *cmd]

    def run(self, host, *cmd):
        return subprocess.run(self.argv(host, *cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=TIMEOUT, env=ENV)


def read_until(stream, text):
    """Lines of `stream` up to one holding `text`, or up to its end or TIMEOUT."""
    got = []

    def read():
        for line in stream:
            got.append(line)
            if text in line:
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(TIMEOUT)
    return "".join(got)


class Server:
    """orb_test_peer server in B; its stdout lines are read as they come."""

    def __init__(self, hosts, peer, endpoints, extra=()):
        argv = [peer, "server"]
        for e in endpoints:
            argv += ["-ORBendPoint", e]
        argv += ["-ORBclanHost", hosts.addr["B"], "-ORBtraceLevel", "10", *extra]
        self.p = subprocess.Popen(hosts.argv("B", *argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=ENV)
        self.err = []
        threading.Thread(target=lambda: self.err.extend(self.p.stderr), daemon=True).start()
        self.ior = {}
        for _ in range(3):
            line = self.line()
            if line.startswith(("echo IOR:", "ttcp IOR:")):
                self.ior[line.split()[0]] = line.split()[1]
        if set(self.ior) != {"echo", "ttcp"}:
            raise Failed(f"the server printed no IORs within {TIMEOUT} s: {self.stop()[-2000:]}")

    def line(self):
        got = []
        reader = threading.Thread(target=lambda: got.append(self.p.stdout.readline().strip()), daemon=True)
        reader.start()
        reader.join(TIMEOUT)
        return got[0] if got else ""

    def log(self):
        return "".join(self.err)

    def stop(self):
        """Ends the server (end of stdin); its stderr."""
        try:
            self.p.stdin.close()
            self.p.wait(timeout=10)
        except (subprocess.TimeoutExpired, BrokenPipeError):
            self.p.kill()
            self.p.wait()
        return self.log()


def client(hosts, peer, args, host_words=True):
    extra = ["-ORBclanHost", hosts.addr["A"]] if host_words else []
    return hosts.run("A", peer, *args, *extra, "-ORBtraceLevel", "10")


def check_ok(c, what, srv_log):
    if c.returncode != CLIENT_OK:
        raise Failed(f"{what}: the client failed ({c.returncode}): {c.stderr[-2000:]}\nthe server: {srv_log[-2000:]}")


def check_over(transport, srv_log):
    if f"Accepted connection from giop:{transport}:" not in srv_log:
        raise Failed(f"the server accepted no giop:{transport} connection: {srv_log[-2000:]}")


def serve(hosts, peer, transport, with_tcp=False):
    endpoints = [f"giop:{transport}::"] + ([f"giop:tcp:{hosts.addr['B']}:"] if with_tcp else [])
    return Server(hosts, peer, endpoints)


def run_clients(hosts, srv, runs, over, program, host_words=True):
    """Runs each client of `runs` (what, arguments) in A against `srv`, each
    to succeed, then stops the server, which must have accepted a connection
    over giop:`over`. The clients' results and the server's log."""
    done = []
    try:
        for what, args in runs:
            c = client(hosts, program, args, host_words)
            check_ok(c, what, srv.log())
            done.append(c)
    finally:
        log = srv.stop()
    check_over(over, log)
    return done, log


def echo(hosts, peer, plain, transport):
    srv = serve(hosts, peer, transport)
    runs = [(f"{calls} echo calls of {size} bytes", ["client", "--ior", srv.ior["echo"], "--calls", calls, "--size", size])
            for calls, size in (("300", "16"), ("4", "200000"))]
    run_clients(hosts, srv, runs, transport, peer)


def ttcp(hosts, peer, plain, transport):
    srv = serve(hosts, peer, transport)
    runs = [(f"ttcp {mode} {calls} x {size} B",
             ["ttcp", "--ior", srv.ior["ttcp"], "--mode", mode, "--size", size, "--calls", calls])
            for mode, size, calls in (("exactly", "65536", "40"), ("marshalled", "65536", "10"),
                                      ("oneway", "8192", "200"))]
    run_clients(hosts, srv, runs, transport, peer)


def exception(hosts, peer, plain, transport):
    srv = serve(hosts, peer, transport)
    runs = [("a corrupt buffer", ["ttcp", "--ior", srv.ior["ttcp"], "--mode", "corrupt", "--size", "4096"])]
    run_clients(hosts, srv, runs, transport, peer)


def killed(hosts, peer, plain, transport):
    srv = serve(hosts, peer, transport)
    c = subprocess.Popen(hosts.argv("A", peer, "client", "--ior", srv.ior["echo"], "--stall", "-ORBclanHost",
                                    hosts.addr["A"], "-ORBtraceLevel", "10"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        if srv.line() != "stalled":
            raise Failed(f"the call never reached the servant: {srv.log()[-2000:]}")
        srv.p.send_signal(signal.SIGKILL)
        srv.p.wait()
        _, err = c.communicate(timeout=TIMEOUT)
    finally:
        if c.poll() is None:
            c.kill()
        srv.stop()
    if c.returncode != CLIENT_SYSTEM_EXCEPTION or not ("COMM_FAILURE" in err or "TRANSIENT" in err):
        raise Failed(f"the client ended with {c.returncode}, not COMM_FAILURE or TRANSIENT: {err[-2000:]}")


def names(hosts, peer, plain, transport):
    b = hosts.addr["B"]
    # A port of each transport's own: the cases of several transports may
    # run at once on the same hosts.
    port = 2809 + TRANSPORTS.index(transport)
    ns = subprocess.Popen(hosts.argv("B", "/bin/sh", "-c", f'd=$(mktemp -d) && exec omniNames -start {port} '
                                     f'-ignoreport -logdir "$d" -ORBendPoint giop:tcp:{b}:{port}'),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV)
    try:
        # It prints its root context once its endpoint is bound.
        said = read_until(ns.stdout, "Root context is ")
        if "Root context is " not in said:
            raise Failed(f"omniNames did not start: {said[-2000:]}")
        srv = serve(hosts, peer, transport)
        ref = f"corbaloc::{b}:{port}/NameService"
        bound = hosts.run("B", "nameclt", "-ORBInitRef", f"NameService={ref}", "bind", "echo", srv.ior["echo"])
        if bound.returncode != 0:
            srv.stop()
            raise Failed(f"nameclt could not bind the IOR: {bound.stdout}{bound.stderr}")
        runs = [("calls on the IOR from omniNames", ["client", "--ns", ref, "--name", "echo", "--calls", "20"])]
        run_clients(hosts, srv, runs, transport, peer)
    finally:
        ns.kill()
        ns.wait()


def over_tcp(hosts, peer, program, transport, what):
    """50 calls from `program` without -ORBclanHost to a server publishing
    giop:TRANSPORT and giop:tcp: all over tcp. The client's result."""
    srv = serve(hosts, peer, transport, with_tcp=True)
    runs = [(what, ["client", "--ior", srv.ior["echo"], "--calls", "50"])]
    return run_clients(hosts, srv, runs, "tcp", program, host_words=False)[0][0]


def plain(hosts, peer, plain_peer, transport):
    over_tcp(hosts, peer, plain_peer, transport, "a client without clanorb")


def no_host_words(hosts, peer, plain_peer, transport):
    c = over_tcp(hosts, peer, peer, transport, "a client without -ORBclanHost")
    if "this process has no -ORBclanHost" not in c.stderr:
        raise Failed(f"the client did not say why it left giop:{transport}: {c.stderr[-3000:]}")


def loss(hosts, peer, plain_peer, transport):
    if transport != "otp":
        raise Failed("the fault model is giop:otp's")
    faults = ["-ORBotpLossPpm", "20000", "-ORBotpCorruptPpm", "2000"]
    srv = Server(hosts, peer, ["giop:otp::"], [*faults, "-ORBotpSeed", "7"])
    runs = [(" ".join(args[:1] + args[3:]), [*args, *faults])
            for args in (["client", "--ior", srv.ior["echo"], "--calls", "300", "--size", "3000"],
                         ["ttcp", "--ior", srv.ior["ttcp"], "--mode", "exactly", "--size", "65536", "--calls", "20"])]
    clients, log = run_clients(hosts, srv, runs, transport, peer)
    # Each connection's end line counts its retransmitted packets.
    resent = sum(int(n) for n in re.findall(r"retransmitted (\d+);", log + "".join(c.stderr for c in clients)))
    if resent == 0:
        raise Failed(f"no connection retransmitted anything under loss: {log[-2000:]}")


CASES = {f.__name__: f for f in (echo, ttcp, exception, killed, names, plain, no_host_words, loss)}

if __name__ == "__main__":
    if len(sys.argv) != 7 or sys.argv[5] not in TRANSPORTS or sys.argv[6] not in CASES:
        sys.exit(__doc__)
    script, prefix, peer, plain_peer, transport, case = sys.argv[1:]
    try:
        CASES[case](Hosts(script, prefix), peer, plain_peer, transport)
    except (Failed, subprocess.SubprocessError) as e:
        print(f"orb_across_hosts.py {transport} {case}: {e}", file=sys.stderr)
        sys.exit(1)
