// The copy-out trick (paper 002 sect. 4.4, Fig. 9): send_in_place() sends a
// chunk from the caller's buffer without copying it. A sink records where
// each packet came from: a packet whose bytes lie inside the caller's buffer
// was sent in place (no copy); the buffer must hold its original bytes again
// after every call.
#include <catch2/catch.hpp>

#include <numeric>

#include "wire.hpp"

namespace otp::test {

namespace {

struct Sent {
  const std::byte* at;
  std::vector<std::byte> bytes;  // as transmitted
};

struct RecordingSink final : PacketSink {
  std::vector<Sent> packets;
  void transmit(const std::byte* packet, size_t len) override {
    packets.push_back(Sent{packet, std::vector<std::byte>(packet, packet + len)});
  }
};

std::vector<std::byte> pattern(size_t n) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::byte(static_cast<uint8_t>(i * 7 + 3));
  return v;
}

bool inside(const std::byte* p, const std::vector<std::byte>& buf) {
  return p >= buf.data() && p < buf.data() + buf.size();
}

Header header_of(const Sent& s) {
  Header h;
  REQUIRE(decode(s.bytes.data(), s.bytes.size(), h) == Errc::kOk);
  return h;
}

std::vector<std::byte> payload_of(const Sent& s) {
  return std::vector<std::byte>(s.bytes.begin() + kHeaderSize, s.bytes.end());
}

EngineConfig cfg(size_t max_payload, size_t pool = 64) {
  EngineConfig c;
  c.mtu = kHeaderSize + max_payload;
  c.pool_buffers = pool;
  return c;
}

// A server with call 1 (an exactly-once request) received: it is replying.
Engine replying_server(const EngineConfig& c) {
  Engine s(Role::kServer, c);
  feed(s, pkt(PacketType::kComplete, 1, 0, true, 4));
  REQUIRE(s.state() == State::kReplying);
  received(s);
  return s;
}

// Feeds the packets to a peer and returns the data it delivered, concatenated.
std::vector<std::byte> deliver_to(Engine& peer, const std::vector<Sent>& packets) {
  for (const Sent& p : packets) peer.on_packet(p.bytes.data(), p.bytes.size(), 0);
  std::vector<std::byte> all;
  for (auto& r : received(peer)) {
    if (r.what == Delivery::kData) all.insert(all.end(), r.data.begin(), r.data.end());
  }
  return all;
}

}  // namespace

TEST_CASE("copy-out: send_in_place sends the caller's buffer without a copy and restores it", "[otp][copyout]") {
  struct Row {
    const char* name;
    Role role;
    size_t max_payload;
    size_t len;
    bool eo;
    Retain retain;
  };
  const Row rows[] = {
      {"client eo, 9 bytes (head + 1)", Role::kClient, 100, 9, true, Retain::kCopy},
      {"client eo, fits one packet after the head", Role::kClient, 100, 108, true, Retain::kCopy},
      {"client eo, fragmented into 4 + head", Role::kClient, 100, 8 + 350, true, Retain::kCopy},
      {"client eo, exact multiple", Role::kClient, 100, 8 + 300, true, Retain::kBorrow},
      {"client one-way, fragmented", Role::kClient, 100, 1000, false, Retain::kCopy},
      {"client one-way, borrow (never kept)", Role::kClient, 64, 777, false, Retain::kBorrow},
      {"server reply, fragmented", Role::kServer, 100, 8 + 250, true, Retain::kCopy},
      {"server reply, borrowed", Role::kServer, 100, 8 + 250, true, Retain::kBorrow},
      {"client eo, large at the default MTU", Role::kClient, 9180 - kHeaderSize, 64 * 1024, true, Retain::kCopy},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      const EngineConfig c = cfg(row.max_payload);
      Engine e = row.role == Role::kClient ? Engine(Role::kClient, c) : replying_server(c);
      RecordingSink sink;
      e.set_sink(&sink);
      std::vector<std::byte> buf = pattern(row.len);
      const std::vector<std::byte> original = buf;
      REQUIRE(e.send_in_place(buf.data(), buf.size(), true, row.eo, row.retain, 0) == Errc::kOk);

      CHECK(buf == original);  // restored intact
      Engine::Packet none;
      CHECK_FALSE(e.next_packet(none));  // everything went to the sink
      const size_t n = 1 + (row.len - kHeaderSize + row.max_payload - 1) / row.max_payload;
      REQUIRE(sink.packets.size() == n);

      // Packet 0: the copied-out head, a small packet of its own.
      CHECK_FALSE(inside(sink.packets[0].at, buf));
      CHECK(sink.packets[0].bytes.size() == 2 * kHeaderSize);
      size_t off = 0;
      for (size_t i = 0; i < n; ++i) {
        const Sent& s = sink.packets[i];
        const Header h = header_of(s);
        CHECK(h.pkt_seq == i);
        CHECK(h.fragmented);
        CHECK(h.exactly_once == (row.role == Role::kServer || row.eo));
        CHECK(h.type == (i + 1 == n ? PacketType::kComplete : PacketType::kPartial));
        const std::vector<std::byte> pl = payload_of(s);
        CHECK(std::equal(pl.begin(), pl.end(), original.begin() + static_cast<ptrdiff_t>(off)));
        if (i != 0) {
          // In place: the header sits just in front of the payload, in the buffer.
          CHECK(s.at == buf.data() + off - kHeaderSize);
        }
        off += pl.size();
      }
      CHECK(off == row.len);

      const bool kept = row.role == Role::kServer || row.eo;
      CHECK(e.stats().buffers_held == (kept ? n : 0));
      CHECK(e.borrowed() == (kept && row.retain == Retain::kBorrow));

      // The peer reassembles exactly the original bytes.
      Engine peer = row.role == Role::kClient ? Engine(Role::kServer, c) : Engine(Role::kClient, c);
      if (row.role == Role::kServer) {  // a client waiting for the reply to call 1
        const std::byte req[4]{};
        REQUIRE(peer.send(req, sizeof req, true, true, 0) == Errc::kOk);
        sent(peer);
      }
      CHECK(deliver_to(peer, sink.packets) == original);
    }
  }
}

TEST_CASE("copy-out: retransmission of a fragment after NACK", "[otp][copyout]") {
  struct Row {
    const char* name;
    Role role;
    Retain retain;
  };
  const Row rows[] = {
      {"client request, copy retained", Role::kClient, Retain::kCopy},
      {"client request, borrowed buffer", Role::kClient, Retain::kBorrow},
      {"server reply, copy retained", Role::kServer, Retain::kCopy},
      {"server reply, borrowed buffer", Role::kServer, Retain::kBorrow},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      const EngineConfig c = cfg(100);
      Engine e = row.role == Role::kClient ? Engine(Role::kClient, c) : replying_server(c);
      RecordingSink sink;
      e.set_sink(&sink);
      std::vector<std::byte> buf = pattern(8 + 400);  // head + 4 fragments: pkt 0..4
      const std::vector<std::byte> original = buf;
      REQUIRE(e.send_in_place(buf.data(), buf.size(), true, true, row.retain, 0) == Errc::kOk);
      REQUIRE(sink.packets.size() == 5);
      const std::vector<Sent> first = sink.packets;
      sink.packets.clear();
      if (row.retain == Retain::kCopy) {
        // The call is over: the caller may reuse its buffer at once.
        std::fill(buf.begin(), buf.end(), std::byte{0xEE});
      }

      // The peer lost pkt 2: NACK(call 1, 2) -> pkt 2, 3, 4 again.
      feed(e, pkt(PacketType::kNack, 1, 2), 1000);
      REQUIRE(sink.packets.size() == 3);
      for (size_t i = 0; i < 3; ++i) {
        const Sent& s = sink.packets[i];
        CHECK(header_of(s).pkt_seq == i + 2);
        CHECK(s.bytes == first[i + 2].bytes);  // the same packet, byte for byte
        if (row.retain == Retain::kBorrow) {
          CHECK(s.at == first[i + 2].at);  // again in place
        } else {
          CHECK_FALSE(inside(s.at, buf));  // from the retained copy
        }
      }
      CHECK(e.stats().packets_retransmitted == 3);
      if (row.retain == Retain::kBorrow) {
        CHECK(buf == original);  // restored after the retransmission too
        CHECK(e.borrowed());
      }

      // Acknowledged: the engine lets go of the buffer.
      if (row.role == Role::kClient) {
        feed(e, pkt(PacketType::kComplete, 1, 0, true, 4), 2000);
      } else {
        feed(e, pkt(PacketType::kCallAck, 1, 0), 2000);
      }
      CHECK(e.stats().buffers_held == 0);
      CHECK_FALSE(e.borrowed());
    }
  }
}

TEST_CASE("copy-out: retransmission on timeout resends the fragments in place from a borrowed buffer", "[otp][copyout]") {
  Engine e(Role::kClient, cfg(100));
  RecordingSink sink;
  e.set_sink(&sink);
  std::vector<std::byte> buf = pattern(8 + 150);
  const std::vector<std::byte> original = buf;
  REQUIRE(e.send_in_place(buf.data(), buf.size(), true, true, Retain::kBorrow, 0) == Errc::kOk);
  REQUIRE(sink.packets.size() == 3);
  sink.packets.clear();
  // Client timeout: NACK(call, next expected reply packet), the server then asks
  // for pkt 1 on: only that fragment and the next go again.
  e.on_timer(*e.next_timer());
  REQUIRE(sink.packets.size() == 1);
  CHECK(header_of(sink.packets[0]).type == PacketType::kNack);
  sink.packets.clear();
  feed(e, pkt(PacketType::kNack, 1, 1), *e.next_timer() - 1);
  REQUIRE(sink.packets.size() == 2);
  CHECK(sink.packets[0].at == buf.data() + 8 - kHeaderSize);
  CHECK(sink.packets[1].at == buf.data() + 8 + 100 - kHeaderSize);
  CHECK(buf == original);
}

TEST_CASE("copy-out: Retain::kCopy with the pool full copies what waits, sends it after RECLAIM_ACK", "[otp][copyout]") {
  Engine e(Role::kClient, cfg(100, 2));  // pool of 2 buffers
  RecordingSink sink;
  e.set_sink(&sink);
  std::vector<std::byte> buf = pattern(8 + 400);  // 5 packets
  const std::vector<std::byte> original = buf;
  REQUIRE(e.send_in_place(buf.data(), buf.size(), true, true, Retain::kCopy, 0) == Errc::kOk);
  CHECK(buf == original);
  REQUIRE(sink.packets.size() == 3);  // head, pkt 1 (in place), RECLAIM
  CHECK(sink.packets[1].at == buf.data());
  CHECK(header_of(sink.packets[2]).type == PacketType::kReclaim);
  CHECK_FALSE(e.borrowed());
  std::vector<std::byte> got = payload_of(sink.packets[0]);
  auto p1 = payload_of(sink.packets[1]);
  got.insert(got.end(), p1.begin(), p1.end());
  std::fill(buf.begin(), buf.end(), std::byte{0xEE});  // the caller reuses its buffer

  // The peer has both: the waiting three go out (two, then another RECLAIM, then one).
  for (uint8_t have = 2; have <= 4; have = static_cast<uint8_t>(have + 2)) {
    sink.packets.clear();
    feed(e, pkt(PacketType::kReclaimAck, 1, have), 1000);
    for (const Sent& s : sink.packets) {
      const Header h = header_of(s);
      if (!is_data(h.type)) continue;
      CHECK_FALSE(inside(s.at, buf));
      auto pl = payload_of(s);
      got.insert(got.end(), pl.begin(), pl.end());
    }
  }
  CHECK(got == original);
}

TEST_CASE("copy-out: without a sink, or for a chunk no longer than a header, send_in_place copies like send", "[otp][copyout]") {
  SECTION("no sink: queued packets equal send()'s") {
    Engine a(Role::kClient, cfg(100));
    Engine b(Role::kClient, cfg(100));
    std::vector<std::byte> buf = pattern(250);
    const std::vector<std::byte> original = buf;
    REQUIRE(a.send_in_place(buf.data(), buf.size(), true, true, Retain::kBorrow, 0) == Errc::kOk);
    REQUIRE(b.send(buf.data(), buf.size(), true, true, 0) == Errc::kOk);
    CHECK(buf == original);
    CHECK_FALSE(a.borrowed());
    Engine::Packet pa, pb;
    size_t n = 0;
    while (a.next_packet(pa)) {
      REQUIRE(b.next_packet(pb));
      CHECK(pa.bytes == pb.bytes);
      ++n;
    }
    CHECK(n == 3);
    CHECK_FALSE(b.next_packet(pb));
  }
  SECTION("8 bytes: one packet, copied") {
    Engine e(Role::kClient, cfg(100));
    RecordingSink sink;
    e.set_sink(&sink);
    std::vector<std::byte> buf = pattern(kHeaderSize);
    REQUIRE(e.send_in_place(buf.data(), buf.size(), true, false, Retain::kBorrow, 0) == Errc::kOk);
    REQUIRE(sink.packets.size() == 1);
    CHECK_FALSE(inside(sink.packets[0].at, buf));
    CHECK_FALSE(header_of(sink.packets[0]).fragmented);
  }
  SECTION("wrong state: nothing sent, buffer untouched") {
    Engine e = replying_server(cfg(100));
    RecordingSink sink;
    e.set_sink(&sink);
    std::vector<std::byte> buf = pattern(300);
    REQUIRE(e.send_in_place(buf.data(), buf.size(), true, true, Retain::kCopy, 0) == Errc::kOk);
    const std::vector<std::byte> original = buf;
    sink.packets.clear();
    CHECK(e.send_in_place(buf.data(), buf.size(), true, true, Retain::kCopy, 0) == Errc::kWrongState);
    CHECK(sink.packets.empty());
    CHECK(buf == original);
  }
}

}  // namespace otp::test
