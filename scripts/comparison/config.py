"""What the comparison runs: transports, server threading modes, profiles and
the loss settings. A new transport joins by adding a line to TRANSPORTS."""

# The transport table: name -> server endpoint options (tmp: a private
# directory, tag: a unique name for this server). Clients need only the IOR.
TRANSPORTS = {
    "tcp": lambda tmp, tag: ["-ORBendPoint", "giop:tcp:127.0.0.1:0"],
    "unix": lambda tmp, tag: ["-ORBendPoint", f"giop:unix:{tmp}/{tag}.sock"],
    "clan": lambda tmp, tag: ["-ORBendPoint", "giop:clan::"],
    "otp": lambda tmp, tag: ["-ORBendPoint", "giop:otp::"],
    "via": lambda tmp, tag: ["-ORBendPoint", "giop:via::"],
}
DEFAULT_TRANSPORTS = "tcp,unix,clan,otp,via"

# Across two hosts (scripts/comparison/cross_host.py): name -> server endpoint
# options, given the address of the server's host. A transport joins the
# cross-host section by a line here; a wire joins bench_wire's rows by its
# name in CROSS_HOST_WIRES.
CROSS_HOST_TRANSPORTS = {
    "tcp": lambda addr: ["-ORBendPoint", f"giop:tcp:{addr}:0"],
    # giop:clan over the NICs' wires: the server's node listens at its
    # host's address (clients get theirs in HostsContext.client_cmd).
    "clan": lambda addr: ["-ORBendPoint", "giop:clan::", "-ORBclanHost", addr],
    # giop:otp over the udp channel, giop:via over its NIC's wire.
    "otp": lambda addr: ["-ORBendPoint", "giop:otp::", "-ORBclanHost", addr],
    "via": lambda addr: ["-ORBendPoint", "giop:via::", "-ORBclanHost", addr],
}
CROSS_HOST_DEFAULT_TRANSPORTS = "tcp,clan,otp,via"
CROSS_HOST_WIRES = "tcp"
CROSS_HOST_PROGRAMS = ("echo_server", "echo_client", "rate_client", "bench_wire", "bench_clan_wire")

# Server threading modes.
MODES = {
    "tpc": ("thread per connection", ["-ORBthreadPerConnectionPolicy", "1"]),
    "pool": ("thread pool", ["-ORBthreadPerConnectionPolicy", "0"]),
}

TTCP_MODES = ["oneway", "exactly", "marshalled"]
TTCP_MODE_NAMES = {
    "oneway": "one-way `Buffer` (receive_at_most_once)",
    "exactly": "exactly-once `Buffer` (receive_exactly_once)",
    "marshalled": "marshalled `PairSeq` (receive_marshalled, size/8 elements)",
}

KiB = 1024
MiB = 1024 * 1024

PROFILES = {
    "full": dict(
        echo_rounds=5, echo_calls=2000, echo_warmup=500,
        rate_clients=[1, 2, 4, 8, 16], rate_rounds=3, rate_seconds=2.0, rate_warmup=0.5,
        rate_procs=[(16, 4)], rate_procs_rounds=3,
        ttcp_sizes=[64, 256, KiB, 4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, MiB], ttcp_total=10 * MiB,
        idle_seconds=1.0,
        loss_echo_calls=3000, loss_echo_batches=3, loss_echo_warmup=100,
        loss_ttcp_calls=500, loss_ttcp_size=4 * KiB, loss_oneway_calls=500,
    ),
    "quick": dict(
        echo_rounds=2, echo_calls=500, echo_warmup=100,
        rate_clients=[1, 4], rate_rounds=1, rate_seconds=0.5, rate_warmup=0.2,
        rate_procs=[(16, 4)], rate_procs_rounds=1,
        ttcp_sizes=[64, 4 * KiB, 64 * KiB, MiB], ttcp_total=2 * MiB,
        idle_seconds=1.0,
        loss_echo_calls=500, loss_echo_batches=2, loss_echo_warmup=50,
        loss_ttcp_calls=500, loss_ttcp_size=4 * KiB, loss_oneway_calls=500,
    ),
}

# omniTransport under loss (paper 002 sect. 4.2): datagrams each process drops,
# per million, applied to the server AND the client (both directions lossy).
# Seeds: every server -ORBotpSeed LOSS_SERVER_SEED, client k (k = 0, 1, ...)
# LOSS_CLIENT_SEED + k, the same at every loss rate. RTO and window are the
# transport's defaults, passed explicitly so that the target uses the RTO run.
LOSS_PPMS = [0, 1000, 10000, 50000]
LOSS_SERVER_SEED = 29
LOSS_CLIENT_SEED = 11
OTP_RTO_US = 2000
OTP_WINDOW = 16
# The one-way ttcp client polls received() for 30 s before it reports a
# one-way shortfall (examples/ttcp_client.cpp): one-ways lost under loss cost
# that wait (up to 3 x 30 s). They run one after another: in parallel (four
# polling clients on two cores) otp connections failed with COMM_FAILURE.
ONEWAY_SHORTFALL = r"server counted (\d+) bytes of (\d+) sent"

SERVER_START_TIMEOUT = 15.0
# Client processes of a multi-process rate run: each must have connected all
# its threads within this time after it started (16 ORBs starting on 2 busy
# cores take a few seconds).
RATE_READY_TIMEOUT = 60.0
SERVER_STOP_TIMEOUT = 10.0

# The programs the comparison runs, all from the build tree's examples/.
PROGRAMS = ("echo_server", "echo_client", "ttcp_server", "ttcp_client", "rate_client", "zmq_echo")


def otp_loss_args(ppm, seed):
    return ["-ORBotpLossPpm", str(ppm), "-ORBotpSeed", str(seed), "-ORBotpRtoUs", str(OTP_RTO_US),
            "-ORBotpWindow", str(OTP_WINDOW)]
