"""The two hosts of scripts/two_hosts.sh from Python: made and removed under
a prefix of their own, their addresses, and a command line that runs a
program inside one of them (the same process: signals reach the program)."""

import os
import subprocess

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "two_hosts.sh")


class HostsUnavailable(Exception):
    """The hosts cannot be made here; the message is the script's."""


class TwoHosts:
    def __init__(self, prefix):
        self.prefix = prefix
        self.addresses = {}
        self.attempted = False  # up was called: down has something to remove
        self.unavailable = False  # up failed: the script has removed what it made

    def _run(self, *args):
        return subprocess.run([SCRIPT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              stdin=subprocess.DEVNULL, timeout=120)

    def up(self):
        self.attempted = True
        p = self._run("up", self.prefix)
        if p.returncode != 0:
            self.unavailable = True
            raise HostsUnavailable(p.stderr.strip() or f"{SCRIPT} up {self.prefix}: exit status {p.returncode}")
        for h in "AB":
            self.addresses[h] = self._run("addr", h, self.prefix).stdout.strip()
        return p.stdout.strip()

    def down(self):
        """Removes the hosts and everything in them; its message if it could not."""
        p = self._run("down", self.prefix)
        return None if p.returncode == 0 else p.stderr.strip()

    def addr(self, host):
        return self.addresses[host]

    def cmd(self, host, argv):
        return [SCRIPT, "exec", host, self.prefix, "--"] + list(argv)
