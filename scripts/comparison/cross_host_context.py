"""The comparison's context with the two hosts of scripts/two_hosts.sh:
servers run in host B on B's address, clients in host A. Files the
processes share (samples, logs) live in the results directory, since each
host's /tmp is its own."""

import os
import shutil
import tempfile

from .config import CROSS_HOST_PROGRAMS, CROSS_HOST_TRANSPORTS, MODES
from .processes import Context

SERVER_HOST, CLIENT_HOST = "B", "A"


class HostsContext(Context):
    def __init__(self, args, hosts):
        super().__init__(args)
        shutil.rmtree(self.tmp, ignore_errors=True)
        os.makedirs(self.out, exist_ok=True)
        self.tmp = tempfile.mkdtemp(prefix="work-", dir=self.out)
        self.hosts = hosts
        self.wires = [w.strip() for w in args.wires.split(",") if w.strip()]
        self.results.update(wire=None, clan_wire=None, hosts={})

    def check(self):
        for t in self.transports:
            if t not in CROSS_HOST_TRANSPORTS:
                raise SystemExit(f"transport {t!r} does not run across hosts; across hosts: "
                                 f"{', '.join(CROSS_HOST_TRANSPORTS)}")
        for prog in CROSS_HOST_PROGRAMS:
            if not os.access(self.exe(prog), os.X_OK):
                raise SystemExit(f"{self.exe(prog)} not found: build the examples first")

    def server_cmd(self, prog, transport, mode, tag, extra=()):
        argv = [self.exe(prog)] + CROSS_HOST_TRANSPORTS[transport](self.hosts.addr(SERVER_HOST)) + MODES[mode][1]
        return self.hosts.cmd(SERVER_HOST, argv + list(extra))

    def client_cmd(self, cmd):
        cmd = list(cmd)
        if os.path.basename(cmd[0]) in ("echo_client", "rate_client"):
            # Where the server of another host writes back to a giop:clan client.
            cmd += ["-ORBclanHost", self.hosts.addr(CLIENT_HOST)]
        return self.hosts.cmd(CLIENT_HOST, cmd)

    def endpoints(self):
        return {t: " ".join(CROSS_HOST_TRANSPORTS[t](self.hosts.addr(SERVER_HOST))) for t in self.transports}
