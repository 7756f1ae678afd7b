#!/usr/bin/python3
"""The two hosts of scripts/two_hosts.sh, checked with real processes inside
them: each host has a boot id and a host name of its own; a file in a host's
/tmp and a POSIX shared memory object in its /dev/shm reach a second process
of that host and nothing else; A reaches B over TCP on B's address; `up`
again keeps the hosts; a second prefix gets hosts of its own and `down`
removes them, twice safely; and a machine that cannot make namespaces gets
the script's one-line message.

Usage: hosts_test.py SCRIPT PREFIX CASE

The hosts of PREFIX exist already (CTest's fixture ran `SCRIPT up PREFIX`),
except for the cases named cannot_*, which make their own attempt. CASE is
one of the functions named in CASES. Exit status 0 when the case holds.
"""
import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid

TIMEOUT = 30
PY = sys.executable
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def run(argv, expect=0, **kw):
    """Runs argv; its stdout, stripped. A different exit status is a failure."""
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT,
                       stdin=subprocess.DEVNULL, text=True, **kw)
    if expect is not None and p.returncode != expect:
        raise Failed(f"{' '.join(argv)}: exit status {p.returncode}, expected {expect}\n{p.stderr.strip()}")
    return p.stdout.strip()


class Hosts:
    def __init__(self, script, prefix):
        self.script, self.prefix = script, prefix

    def cmd(self, host, argv):
        return [self.script, "exec", host, self.prefix, "--"] + argv

    def run(self, host, argv, expect=0):
        return run(self.cmd(host, argv), expect)

    def python(self, host, code, *args, expect=0):
        return self.run(host, [PY, "-c", code] + [str(a) for a in args], expect)

    def addr(self, host):
        return run([self.script, "addr", host, self.prefix])


def boot_ids(h):
    a1 = h.run("A", ["cat", "/proc/sys/kernel/random/boot_id"])
    a2 = h.run("A", ["cat", "/proc/sys/kernel/random/boot_id"])
    b = h.run("B", ["cat", "/proc/sys/kernel/random/boot_id"])
    with open("/proc/sys/kernel/random/boot_id") as f:
        real = f.read().strip()
    for name, v in (("A", a1), ("B", b)):
        check(UUID.match(v), f"host {name}'s boot id {v!r} is not a UUID")
    check(a1 == a2, f"two processes of A see different boot ids: {a1} and {a2}")
    check(len({a1, b, real}) == 3, f"boot ids not distinct: A {a1}, B {b}, real host {real}")


def host_names(h):
    a, b, real = h.run("A", ["hostname"]), h.run("B", ["hostname"]), run(["hostname"])
    check((a, b) == (f"{h.prefix}-a", f"{h.prefix}-b"), f"host names are {a!r} and {b!r}")
    check(real not in (a, b), f"the real host's name {real!r} changed")


def tmp_file(h):
    """A file one process of A makes in /tmp, seen by the next process of A only."""
    name = f"/tmp/hosts-test-{uuid.uuid4().hex}"
    text = f"made in A {uuid.uuid4().hex}"
    write = "import sys; open(sys.argv[1], 'w').write(sys.argv[2])"
    exists = "import os, sys; print(os.path.exists(sys.argv[1]))"
    h.python("A", write, name, text)
    try:
        seen = h.python("A", "import sys; print(open(sys.argv[1]).read())", name)
        check(seen == text, f"a second process of A reads {seen!r} from {name}, not {text!r}")
        check(h.python("B", exists, name) == "False", f"{name}, made in A, exists in B")
        check(not os.path.exists(name), f"{name}, made in A, exists on the real host")
    finally:
        h.run("A", ["rm", "-f", name])


# POSIX shared memory through the C library (shm_open(3)), so that the object
# outlives the process that made it, as a NIC region does.
SHM = """
import ctypes, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shm_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint]
name, op = sys.argv[1].encode(), sys.argv[2]
if op == "make":
    fd = libc.shm_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    assert fd >= 0, os.strerror(ctypes.get_errno())
    data = sys.argv[3].encode()
    os.ftruncate(fd, len(data))
    with mmap.mmap(fd, len(data)) as m:
        m[:] = data
elif op == "read":
    fd = libc.shm_open(name, os.O_RDONLY, 0)
    if fd < 0:
        print("absent" if ctypes.get_errno() == 2 else os.strerror(ctypes.get_errno()))
    else:
        print(os.read(fd, 4096).decode())
elif op == "unlink":
    libc.shm_unlink(name)
"""


def shm_object(h):
    name = f"/hosts-test-{uuid.uuid4().hex}"
    text = f"shared in A {uuid.uuid4().hex}"
    h.python("A", SHM, name, "make", text)
    try:
        seen = h.python("A", SHM, name, "read")
        check(seen == text, f"a second process of A reads {seen!r} from shm {name}, not {text!r}")
        seen_b = h.python("B", SHM, name, "read")
        check(seen_b == "absent", f"shm {name}, made in A, in B: {seen_b!r}")
        real = run([PY, "-c", SHM, name, "read"])
        check(real == "absent", f"shm {name}, made in A, on the real host: {real!r}")
    finally:
        h.python("A", SHM, name, "unlink")


ECHO_SERVER = """
import socket, sys
s = socket.create_server((sys.argv[1], 0))
print(s.getsockname()[1], flush=True)
c, peer = s.accept()
data = b""
while not data.endswith(b"\\n"):
    chunk = c.recv(4096)
    if not chunk:
        break
    data += chunk
c.sendall(data)
print(peer[0], flush=True)
"""

ECHO_CLIENT = """
import socket, sys
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=20)
c.sendall(sys.argv[3].encode() + b"\\n")
data = b""
while not data.endswith(b"\\n"):
    chunk = c.recv(4096)
    if not chunk:
        break
    data += chunk
print(data.decode().strip())
"""


def tcp_echo(h):
    """A server in B on B's address, a client in A: the bytes come back, and
    the server sees A's address."""
    a, b = h.addr("A"), h.addr("B")
    check(a != b, f"A and B share the address {a}")
    server = subprocess.Popen(h.cmd("B", [PY, "-c", ECHO_SERVER, b]), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        port = server.stdout.readline().strip()
        if not port.isdigit():
            server.kill()
            raise Failed(f"the echo server in B printed {port!r}, not a port: {server.communicate()[1]}")
        text = f"over the veth {uuid.uuid4().hex}"
        back = h.python("A", ECHO_CLIENT, b, port, text)
        check(back == text, f"A sent {text!r} to {b}:{port} and got {back!r}")
        out, err = server.communicate(timeout=TIMEOUT)
        check(server.returncode == 0, f"the echo server in B exited with {server.returncode}: {err}")
        check(out.strip() == a, f"the server in B saw the client at {out.strip()!r}, not A's {a}")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def up_again(h):
    """`up` on existing hosts changes nothing: A's /tmp and both boot ids stay."""
    name = f"/tmp/hosts-test-{uuid.uuid4().hex}"
    ids = [h.run(x, ["cat", "/proc/sys/kernel/random/boot_id"]) for x in "AB"]
    h.run("A", ["touch", name])
    try:
        run([h.script, "up", h.prefix])
        check(h.run("A", ["ls", name], expect=None) == name, f"{name} in A's /tmp is gone after a second up")
        again = [h.run(x, ["cat", "/proc/sys/kernel/random/boot_id"]) for x in "AB"]
        check(again == ids, f"boot ids changed by a second up: {ids} -> {again}")
    finally:
        h.run("A", ["rm", "-f", name])


def leftovers(prefix):
    """What exists of a prefix: its namespaces, state directory and mounts."""
    found = [ns for ns in run(["ip", "netns", "list"]).split() if ns in (f"{prefix}-a", f"{prefix}-b")]
    state = f"/run/clanorb-hosts/{prefix}"
    if os.path.exists(state):
        found.append(state)
    with open("/proc/self/mountinfo") as f:
        found += [line.split()[4] for line in f if line.split()[4].startswith(state)]
    return found


def second_prefix(h):
    """Hosts of another prefix: their own subnet, boot ids and /tmp, and no
    namespace files of other hosts held alive; `down` removes all of them
    and is harmless a second time."""
    other = Hosts(h.script, h.prefix + "-2")
    run([h.script, "down", other.prefix])
    run([h.script, "up", other.prefix])
    try:
        subnets = {x.addr(y).rsplit(".", 1)[0] for x in (h, other) for y in "AB"}
        check(len(subnets) == 2, f"two prefixes share a subnet: {subnets}")
        ids = {x.run(y, ["cat", "/proc/sys/kernel/random/boot_id"]) for x in (h, other) for y in "AB"}
        check(len(ids) == 4, f"four hosts with only {len(ids)} boot ids")
        name = f"/tmp/hosts-test-{uuid.uuid4().hex}"
        h.run("A", ["touch", name])
        seen = other.run("A", ["ls", name], expect=None)
        h.run("A", ["rm", "-f", name])
        check(seen != name, f"{name}, made in {h.prefix}'s A, exists in {other.prefix}'s A")
        held = other.run("B", ["findmnt", "-rn", "-t", "nsfs", "-o", "TARGET"], expect=None)
        check(held == "", f"{other.prefix}'s B holds namespace files: {held}")
    finally:
        run([h.script, "down", other.prefix])
    left = leftovers(other.prefix)
    check(not left, f"after down, {other.prefix} left {left}")
    run([h.script, "down", other.prefix])
    check(h.run("A", ["true"]) == "", f"{h.prefix}'s host A went with {other.prefix}")


def cannot(h, how, expect_words):
    """`up` where namespaces cannot be made: status 2, one line on stderr
    naming what is missing, and nothing left behind."""
    scratch = tempfile.mkdtemp(prefix="hosts-test-")
    os.chmod(scratch, 0o755)
    try:
        script = os.path.join(scratch, "two_hosts.sh")
        shutil.copy(h.script, script)
        os.chmod(script, 0o755)
        prefix = h.prefix + "-x"
        argv, env = how(scratch, [script, "up", prefix])
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT,
                           env=env, stdin=subprocess.DEVNULL)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 2, f"exit status {p.returncode}, not 2; stderr: {p.stderr!r}")
        check(len(lines) == 1 and lines[0].startswith("two_hosts.sh: cannot make two hosts: "),
              f"stderr is not the script's one line: {p.stderr!r}")
        for w in expect_words:
            check(w in lines[0], f"the message does not name {w!r}: {lines[0]}")
        left = leftovers(prefix)
        check(not left, f"a failed up left {left}")
    finally:
        shutil.rmtree(scratch)


def cannot_unprivileged(h):
    cannot(h, lambda _, argv: (["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + argv, None),
           ["root", "CAP_SYS_ADMIN", "CAP_NET_ADMIN", "uid 65534"])


def cannot_without_sys_admin(h):
    drop = ["setpriv", "--inh-caps=-sys_admin", "--ambient-caps=-sys_admin", "--bounding-set=-sys_admin"]
    cannot(h, lambda _, argv: (drop + argv, None), ["lacks CAP_SYS_ADMIN"])


def cannot_without_ip(h):
    def no_ip(scratch, argv):
        bin_dir = os.path.join(scratch, "bin")
        os.mkdir(bin_dir)
        for d in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"):
            for name in os.listdir(d) if os.path.isdir(d) else []:
                if name != "ip" and not os.path.exists(os.path.join(bin_dir, name)):
                    os.symlink(os.path.join(d, name), os.path.join(bin_dir, name))
        return argv, dict(os.environ, PATH=bin_dir)
    cannot(h, no_ip, ["missing command(s): ip"])


CASES = {f.__name__: f for f in (boot_ids, host_names, tmp_file, shm_object, tcp_echo, up_again, second_prefix,
                                 cannot_unprivileged, cannot_without_sys_admin, cannot_without_ip)}


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in CASES:
        sys.exit(f"usage: {sys.argv[0]} SCRIPT PREFIX CASE (CASE: {', '.join(CASES)})")
    h = Hosts(os.path.abspath(sys.argv[1]), sys.argv[2])
    try:
        CASES[sys.argv[3]](h)
    except Failed as e:
        sys.exit(f"FAILED {sys.argv[3]}: {e}")
    except subprocess.TimeoutExpired as e:
        sys.exit(f"FAILED {sys.argv[3]}: timed out: {e}")
    print(f"passed {sys.argv[3]}")


if __name__ == "__main__":
    main()
