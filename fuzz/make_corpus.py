#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (fuzz/corpus/<target>/): a handful of
valid and edge-case inputs per target, named for what they are. Run it from
anywhere after changing a target's input layout; inputs kept because they
once broke something (named crash-*, found by the fuzzer) are left alone.

Targets that read their input with FuzzedDataProvider take integers from the
end of the input and byte strings from the front: Fdp below writes inputs in
that layout, mirroring each target's reads in order."""
import os
import struct
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


class Fdp:
    """Builds an input that FuzzedDataProvider reads back as the values given."""

    def __init__(self):
        self.front, self.back = bytearray(), bytearray()

    def int(self, v, lo, hi, bits=64):
        rng, n = hi - lo, 0
        while n * 8 < bits and (rng >> (n * 8)) > 0:
            n += 1
        assert lo <= v <= hi
        x = v - lo
        # Consumed from the end, most significant byte first.
        self.back += bytes((x >> (8 * (n - 1 - i))) & 0xFF for i in range(n))
        return self

    def u(self, v, bits):
        return self.int(v, 0, (1 << bits) - 1, bits)

    def bool(self, b):
        return self.u(1 if b else 0, 8)

    def bytes(self, b):
        self.front += b
        return self

    def data(self):
        return bytes(self.front) + bytes(reversed(self.back))


def write(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- otp_header: one raw datagram ----------------------------------------
def otp_header_bytes(t, eo, size, call, pkt, frag, pad=0):
    return struct.pack(">BBHBBBB", t, eo, size, call, pkt, frag, pad)


def otp_header():
    for t in range(1, 7):
        write("otp_header", f"type{t}", otp_header_bytes(t, t % 2, 8, 3, 250, 0))
    write("otp_header", "payload", otp_header_bytes(2, 1, 12, 255, 0, 1) + b"GIOP")
    write("otp_header", "size-mismatch", otp_header_bytes(1, 1, 9, 0, 0, 0))
    write("otp_header", "padding", otp_header_bytes(1, 1, 8, 0, 0, 0, 1))
    write("otp_header", "type7", otp_header_bytes(7, 0, 8, 0, 0, 0))
    write("otp_header", "truncated", otp_header_bytes(1, 0, 7, 0, 0, 0)[:7])


# ---- otp_engine -----------------------------------------------------------
def engine_config(f, payload=32, pool=8, retries=4):
    f.int(payload, 1, 96).int(pool, 1, 16).int(retries, 0, 8, 32)


def engine_send(f, side, length, complete, eo):
    f.bool(side).int(3, 0, 6, 32).int(length, 0, 256).bool(complete).bool(eo)


def engine_deliver(f, side):  # last step: every queued packet arrives
    f.bool(side).int(1, 0, 6, 32)


def otp_engine():
    f = Fdp()
    engine_config(f)
    engine_send(f, 0, 20, True, True)
    engine_deliver(f, 1)
    write("otp_engine", "request", f.data())
    f = Fdp()
    engine_config(f, payload=8)
    engine_send(f, 0, 100, True, False)  # a one-way of 13 packets
    engine_deliver(f, 1)
    write("otp_engine", "oneway-fragmented", f.data())
    f = Fdp()
    engine_config(f)
    engine_send(f, 0, 5, False, True)
    f.bool(0).int(2, 0, 6, 32).int(50_000_000, 0, 96_000_000)  # timers run
    f.bool(1).int(0, 0, 6, 32).bool(False).int(4, 1, 6, 8).bool(True).u(0, 8).u(0, 8).bool(False).int(0, 0, 32)
    engine_deliver(f, 1)
    write("otp_engine", "partial-timeout-nack", f.data())
    f = Fdp()
    engine_config(f)
    f.bool(0).int(0, 0, 6, 32).bool(True).int(8, 0, 42).bytes(otp_header_bytes(2, 1, 8, 0, 0, 0))
    write("otp_engine", "stray-complete", f.data())


# ---- giop_framer: cuts from the end, the stream from the front ------------
def giop(minor, msg_type, body, flags=0, little=True):
    f = flags | (1 if little else 0)
    return b"GIOP" + bytes([1, minor, f, msg_type]) + struct.pack("<I" if little else ">I", len(body)) + body


def giop_framer():
    req12 = giop(2, 0, struct.pack("<IB", 7, 3) + b"\0" * 27)
    oneway12 = giop(2, 0, struct.pack("<IB", 8, 0) + b"\0" * 11)
    ctx = struct.pack("<II", 1, 4) + b"abcd"  # one service context of 4 bytes
    req10 = giop(0, 0, struct.pack("<I", 1) + ctx + struct.pack("<IB", 9, 1) + b"\0" * 7)
    reply = giop(2, 1, struct.pack("<II", 7, 0))
    frag = giop(1, 0, struct.pack("<IIB", 0, 5, 1) + b"\0" * 3, flags=2) + giop(1, 7, b"rest")
    close = giop(2, 5, b"")
    big = giop(2, 0, struct.pack(">IB", 1, 1) + b"\0" * 600, little=False)

    def seed(name, stream, cuts=()):
        f = Fdp().int(len(cuts), 0, 32)
        for c in cuts:
            f.int(c, 1, 64)
        write("giop_framer", name, f.bytes(stream).data())

    seed("request-1.2", req12)
    seed("oneway-1.2-split", oneway12, [3, 9, 1])
    seed("request-1.0-contexts", req10, [13, 2, 5])
    seed("reply-then-close", reply + close)
    seed("fragmented-request", frag, [12, 12, 7])
    seed("big-endian-long-header", big, [64] * 10)
    seed("calls-back-to-back", req12 + reply + oneway12 + close, [1] * 32)
    seed("not-giop", b"GIOX" + req12[4:])
    seed("fragment-without-call", giop(1, 7, b"x"))


# ---- oob_wire: one raw frame ---------------------------------------------
def oob(t, node=b"node-1", body=b"", instance=0x1234, pid=42):
    return (struct.pack("<IBBB", 0x424F4C43, 1, t, len(node)) + node +
            struct.pack("<Qi", instance, pid) + bytes(range(16)) + struct.pack("<Q", 99) + body)


def oob_wire():
    write("oob_wire", "connect-req", oob(1, body=struct.pack("<QHI", 5, 7, 3) + b"abc"))
    write("oob_wire", "accept", oob(2, body=struct.pack("<QQI", 5, 6, 0)))
    write("oob_wire", "reject", oob(3, body=struct.pack("<QB", 5, 2)))
    write("oob_wire", "disconnect", oob(4, body=struct.pack("<QQ", 5, 6)))
    write("oob_wire", "heartbeat", oob(5))
    write("oob_wire", "dot-name", oob(5, node=b".."))
    write("oob_wire", "blob-too-long", oob(1, body=struct.pack("<QHI", 5, 7, 9) + b"abc"))
    write("oob_wire", "zero-instance", oob(5, instance=0))


# ---- datagram_frame --------------------------------------------------------
def datagram_frame():
    def frame(f, fix, seq, payload, length=None, size=None):
        b = struct.pack("<QII", seq, len(payload) if length is None else length, 0) + payload
        b = b[:size] if size is not None else b
        f.bool(fix).int(len(b), 0, 16 + MTU + 8).bytes(b)

    MTU = 64
    f = Fdp().int(MTU, 1, 512)
    for i in range(4):
        frame(f, True, i, bytes(range(i * 16)))
    write("datagram_frame", "good-frames", f.data())
    f = Fdp().int(MTU, 1, 512)
    frame(f, True, 0, b"abc")
    frame(f, True, 1, b"abcd", length=3)  # length field disagrees
    frame(f, False, 2, b"corrupt")        # CRC left zero
    frame(f, True, 3, b"", size=10)       # shorter than a header
    frame(f, True, 9, b"after a gap")
    write("datagram_frame", "bad-frames-between-good", f.data())
    f = Fdp().int(MTU, 1, 512)
    frame(f, True, 0, b"x" * MTU)
    frame(f, True, 1, b"y" * (MTU + 1))   # longer than the MTU
    write("datagram_frame", "mtu-edge", f.data())


# ---- dmq_receiver ----------------------------------------------------------
def dmq_receiver():
    def header(f, delta, length):
        f.int(1, 0, 5, 32).int(delta, 0, 64).int(length, 0, 4200, 32)

    def lw(f, delta):
        f.int(2, 0, 5, 32).bool(True).int(delta, 0, 600)

    def receive(f):
        f.int(4, 0, 5, 32)

    f = Fdp().int(512, 1, 2040)
    header(f, 0, 16)
    lw(f, 3)
    receive(f)
    header(f, 0, 5)  # at read_i = 24
    lw(f, 2)
    receive(f)
    f.int(3, 0, 5, 32).int(1, 0, 2)  # the sender closes
    receive(f)
    write("dmq_receiver", "two-messages-then-close", f.data())
    f = Fdp().int(512, 1, 2040)
    header(f, 0, 513)  # longer than max_message
    lw(f, 66)
    receive(f)
    receive(f)
    write("dmq_receiver", "too-long", f.data())
    f = Fdp().int(64, 1, 2040)
    f.int(2, 0, 5, 32).bool(False).u(13, 64)  # misaligned write pointer
    receive(f)
    write("dmq_receiver", "misaligned-pointer", f.data())
    f = Fdp().int(64, 1, 2040)
    header(f, 0, 8)
    lw(f, 1)  # published less than the message
    receive(f)
    write("dmq_receiver", "short-publish", f.data())


# ---- transfer_queue --------------------------------------------------------
def transfer_queue():
    def put(f, length, flags=0):
        f.int(3, 0, 7, 32).u(length, 32).u(0, 32).int(flags, 0, 7, 32)

    def publish(f):
        f.int(4, 0, 7, 32)

    def peek(f):
        f.int(5, 0, 7, 32)

    f = Fdp().int(4, 1, 16, 32)
    for i in range(6):
        put(f, 100 + i, i % 8)
        publish(f)
        peek(f)
    write("transfer_queue", "records-wrap", f.data())
    f = Fdp().int(4, 1, 16, 32)
    put(f, 1)
    put(f, 2)
    peek(f)
    publish(f)
    peek(f)
    peek(f)
    write("transfer_queue", "batch-published", f.data())
    f = Fdp().int(2, 1, 16, 32)
    f.int(1, 0, 7, 32).int(0, 0, 2).u(0, 64).u(5, 32).u(0, 32).int(8, 0, 8, 32).u(0, 32)  # unknown flag
    peek(f)
    write("transfer_queue", "forged-record-bad-flags", f.data())
    f = Fdp().int(2, 1, 16, 32)
    put(f, 1)
    f.int(2, 0, 7, 32).bool(False).u(5, 64)  # a read pointer beyond what was written
    put(f, 2)
    write("transfer_queue", "read-pointer-ahead", f.data())


# ---- cookie_ring ------------------------------------------------------------
def cookie_ring():
    def push(f, msg):
        f.int(2, 0, 5, 32).int(len(msg), 0, 568).bytes(msg)

    def peek(f):
        f.int(4, 0, 5, 32)

    f = Fdp().int(8, 8, 24, 32).int(0, 0, 40)
    for i in range(12):
        push(f, bytes([i]) * (i * 40))
        peek(f)
    write("cookie_ring", "pushes-wrap", f.data())
    f = Fdp().int(8, 8, 24, 32).int(3, 0, 40)
    push(f, b"first after the handshake")
    push(f, b"x" * 568)
    peek(f)
    peek(f)
    peek(f)
    write("cookie_ring", "full-message", f.data())
    f = Fdp().int(8, 8, 24, 32).int(0, 0, 40)
    f.int(1, 0, 5, 32).bool(False).bool(False).u(1 << 40, 64)  # read pointer ahead
    push(f, b"refused")
    write("cookie_ring", "read-pointer-ahead", f.data())
    f = Fdp().int(8, 8, 24, 32).int(0, 0, 40)
    f.int(0, 0, 5, 32).int(8, 0, 583).bool(True).int(1, 0, 9)  # slot 0: a tag for descriptor 0, no message
    peek(f)
    write("cookie_ring", "forged-tag", f.data())


# ---- datagram_link ------------------------------------------------------------
def datagram_link():
    WINDOWS = [0, 1, 2, 3, 8]

    def start(window, ack_every=0):
        f = Fdp().int(WINDOWS.index(window), 0, 4)
        f.int(ack_every, 0, window)
        return f

    def link_send(f, length):
        f.int(2, 0, 7, 32).bool(True).int(length, 0, 64)

    def receive(f, wait=True):
        f.int(3, 0, 7, 32).bool(wait).int(500, 0, 1000, 32)

    def peer_data(f, seq, credit, length):
        f.int(0, 0, 7, 32).int(0, 0, 3, 32).bool(False).u(seq, 64).bool(False).u(credit, 32).int(length, 0, 64)

    def peer_control(f, kind, value):  # kind 1 ack, 2 probe
        f.int(0, 0, 7, 32).int(kind, 0, 3, 32).bool(False).u(value, 64).int(1, 0, 7, 32)

    def drain(f):
        f.int(7, 0, 7, 32)

    def flush(f):
        f.int(6, 0, 7, 32).int(1000, 0, 1000, 32)

    f = start(8)
    for _ in range(3):
        link_send(f, 10)
    drain(f)
    peer_data(f, 0, 3, 5)
    peer_data(f, 1, 3, 0)
    receive(f)
    receive(f)
    flush(f)
    drain(f)
    write("datagram_link", "request-reply-piggyback", f.data())
    f = start(2, 1)
    for _ in range(3):
        link_send(f, 1)  # the third waits for credit: probes
    drain(f)
    peer_control(f, 1, 2)
    link_send(f, 1)
    peer_control(f, 2, 0)
    drain(f)
    write("datagram_link", "credit-ack-and-probe", f.data())
    f = start(3)
    peer_data(f, 0, 0, 1)
    peer_data(f, 2, 0, 1)  # a gap: 1 lost
    peer_control(f, 2, 5)  # a probe beyond the last data
    receive(f)
    receive(f)
    receive(f, wait=False)
    drain(f)
    write("datagram_link", "gap-and-probe", f.data())
    f = start(1)
    link_send(f, 1)
    peer_data(f, 0, 7, 1)  # credit for datagrams never sent
    receive(f)
    link_send(f, 1)
    write("datagram_link", "credit-lie", f.data())
    f = start(0)
    link_send(f, 64)
    peer_data(f, 0, 0, 64)
    receive(f)
    peer_data(f, 1, 1, 0)  # credit without flow control
    receive(f)
    write("datagram_link", "no-flow-control", f.data())


# ---- vipl_descriptors ----------------------------------------------------------
def vipl_descriptors():
    def desc(f, segs, control=0):  # segs: (kind, offset, length); kind 0 CLAN, 2 heap
        f.int(1, 0, 15, 32).int(len(segs), 0, 9, 16)
        f.int(1, 0, 7, 32).bool(control != 0).u(0, 32)
        for kind, off, length in segs:
            f.int(kind, 0, 3, 32)
            if kind == 0:
                f.int(off, 0, 512 * 1024 + 4096).int(1, 0, 7, 32)
            else:
                f.int(off, 0, 16 * 1024 + 64).bool(True)
            f.bool(True).int(length, 0, 9000, 32)

    def post(f, recv, segs, control=0):
        f.int(0 if recv else 1, 0, 9, 32)
        desc(f, segs, control)

    def peer_post(f, seq_ok, segs, capacity_ok=True):
        f.int(2, 0, 9, 32).int(1, 0, 15, 32).int(1, 0, 15, 32).int(len(segs), 0, 9, 32)
        f.int(1, 0, 7, 32).int(1 if seq_ok else 0, 0, 7, 32)
        if not seq_ok:
            f.u(77, 64)
        for off, length in segs:
            f.int(1, 0, 7, 32).int(off, 0, 65536 + 64).bool(True).int(length, 0, 9000)
        f.bool(capacity_ok)
        if not capacity_ok:
            f.u(1, 32)

    def record(f, length, delta=0, flags=0):
        f.int(3, 0, 9, 32).bool(True).int(delta, 0, 2).bool(True).int(length, 0, 9000, 32)
        f.u(0, 32).int(flags, 0, 8, 32).bool(True)

    def op(f, n):
        f.int(n, 0, 9, 32)

    f = Fdp().int(1, 0, 2, 32).int(1, 0, 3, 32)
    desc(f, [(0, 0, 4096)])  # a receive posted before the connection
    record(f, 100)
    op(f, 5)
    peer_post(f, True, [(0, 4096)])
    post(f, False, [(0, 8192, 100)])
    op(f, 6)
    op(f, 9)
    write("vipl_descriptors", "receive-and-send", f.data())
    f = Fdp().int(2, 0, 2, 32).int(0, 0, 3, 32)
    post(f, True, [(0, 0, 1000), (0, 4096, 1000)])
    record(f, 1500, flags=2)  # "more" on a descriptor that may not split
    op(f, 7)
    write("vipl_descriptors", "record-more-unsplit", f.data())
    f = Fdp().int(1, 0, 2, 32).int(0, 0, 3, 32)
    post(f, False, [(2, 0, 64)] * 3)
    peer_post(f, True, [(0, 100), (200, 100)], capacity_ok=False)
    post(f, False, [(0, 0, 10)])
    op(f, 6)
    write("vipl_descriptors", "send-to-bad-capacity", f.data())
    f = Fdp().int(0, 0, 2, 32).int(0, 0, 3, 32)
    post(f, True, [(0, 0, 10)] * 9)  # more segments than a descriptor takes
    post(f, True, [(2, 0, 10)])      # ordinary memory: not receivable
    post(f, True, [(0, 512 * 1024 + 4000, 200)])  # past the registration
    peer_post(f, False, [(0, 10)])
    post(f, False, [(0, 0, 20)])
    op(f, 6)
    write("vipl_descriptors", "bad-descriptors", f.data())


TARGETS = [otp_header, otp_engine, giop_framer, oob_wire, datagram_frame, dmq_receiver,
           transfer_queue, cookie_ring, datagram_link, vipl_descriptors]

if __name__ == "__main__":
    for t in TARGETS:
        if len(sys.argv) == 1 or t.__name__ in sys.argv[1:]:
            t()
