// Datagram link credit and probe logic (clan_emul/datagram_link.*): a real
// DatagramLink accepted from a hand-played peer (its own DatagramSender and
// DatagramReceiver, the handshake made by hand as a peer may) with a window
// and ack interval from the input. The input then drives both: the peer's
// data frames (sequence numbers near or far, any piggybacked credit, any
// payload), credit acks and probes with arbitrary counts, malformed link
// frames; the link's send, receive, try_receive, readable and flush with
// short deadlines; the peer reading what the link sent.
// Invariants: no call waits much past its deadline (no hang); the link never
// sends more than a window beyond the credit the peer ever gave (counted
// from the peer's side, frame by frame, and from the link's statistics);
// its queue never holds more than a window; the credit it returns (acks,
// piggybacked credit) never exceeds what the peer sent or announced by
// probe, and never goes back; it hands the user each datagram at most once,
// in increasing order, with the peer's bytes; its control frames are well
// formed; once broken it stays broken.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "clan_emul/datagram_link.hpp"
#include "clan_emul/datagram_receiver.hpp"
#include "clan_emul/datagram_sender.hpp"
#include "fuzz/check.hpp"
#include "fuzz/fabric.hpp"

namespace {

using namespace clan;
using namespace std::chrono_literals;

// Mirrors the link's wire (clan_emul/datagram_link_frame.hpp), as a peer must.
constexpr uint32_t kData = 0x4c44a7a1, kAck = 0x4c44ac4b, kProbe = 0x4c44960b;
struct LinkHeader {
  uint32_t type, credit;
  uint64_t value;
};
struct Hello {
  uint32_t magic, version;
  uint64_t mtu, ring_bytes, window;
  RdmaCookie ring, read_pointer;
};
static_assert(sizeof(Hello) == 128);

// However loaded the machine, a call given a millisecond that takes this
// long is hanging, not slow.
constexpr auto kHang = 20s;

fuzz::Fabric& fabric() {
  static fuzz::Fabric f("raw", "link");
  static bool listening = [] {
    f.listener = std::move(f.link->listen(7).value());
    return true;
  }();
  (void)listening;
  return f;
}

uint8_t pattern(uint64_t seq, size_t i) { return static_cast<uint8_t>(seq * 31 + i); }

struct Peer {
  std::unique_ptr<DatagramReceiver> rx;
  std::unique_ptr<DatagramSender> tx;
  std::shared_ptr<OobConnection> conn;
  std::unique_ptr<DatagramLink> link;
};

bool connect(Peer& p, const DatagramLinkConfig& c) {
  auto& f = fabric();
  p.rx = std::move(DatagramReceiver::create(*f.raw_nic, c).value());
  p.tx = std::move(DatagramSender::create(*f.raw_nic, c).value());
  const Hello mine{0x444c4e4b, 1, c.mtu, c.ring_bytes, c.window, p.rx->cookie(), p.tx->cookie()};
  std::vector<std::byte> blob(sizeof mine);
  std::memcpy(blob.data(), &mine, sizeof mine);
  std::thread t([&] {
    auto r = f.raw->connect("link", 7, blob, Deadline::after(kHang));
    if (r) p.conn = std::move(r.value());
  });
  auto req = f.listener->next_request(Deadline::after(kHang));
  if (req) {
    auto l = DatagramLink::accept(*f.link_nic, *req, c);
    if (l) p.link = std::move(l.value());
  }
  t.join();
  if (!p.conn || !p.link) return false;
  Hello theirs;
  FUZZ_CHECK(p.conn->peer_blob().size() == sizeof theirs);
  std::memcpy(&theirs, p.conn->peer_blob().data(), sizeof theirs);
  return p.tx->attach(theirs.ring) == Errc::kOk && p.rx->attach(theirs.read_pointer) == Errc::kOk;
}

// What the peer knows, to judge the link by.
struct Model {
  uint64_t window = 0;
  uint64_t credit_given = 0;     // most credit the peer ever claimed to the link (acks, piggybacked)
  uint64_t announced = 0;        // data numbers the peer sent or announced by probe (max + 1)
  uint64_t credit_returned = 0;  // most credit the link returned
  uint64_t link_data_seen = 0;   // the link's data frames seen by the peer
  bool first_delivery = true;
  uint64_t last_delivered = 0;
  Errc broken = Errc::kOk;       // the link reported kCorrupt or kPeerDead

  // Data numbers the link may have issued: a window beyond the credit given.
  // A peer may claim any credit (the link breaks on an impossible one), so
  // the sum saturates rather than wraps.
  uint64_t send_limit() const {
    return credit_given > UINT64_MAX - window ? UINT64_MAX : credit_given + window;
  }
};

// The peer reads everything the link sent and checks each frame.
void drain_peer(Peer& p, Model& m) {
  for (;;) {
    auto d = p.rx->try_receive();
    if (!d) return;
    FUZZ_CHECK(d->size >= sizeof(LinkHeader));
    LinkHeader h;
    std::memcpy(&h, d->data, sizeof h);
    const size_t payload = d->size - sizeof h;
    switch (h.type) {
      case kData: {
        FUZZ_CHECK(h.value == m.link_data_seen);  // numbers issued in order, none skipped here
        ++m.link_data_seen;
        if (m.window != 0) {
          FUZZ_CHECK(h.value < m.send_limit());
          FUZZ_CHECK(h.credit <= m.announced);
          FUZZ_CHECK(h.credit >= static_cast<uint32_t>(m.credit_returned));
          m.credit_returned = std::max<uint64_t>(m.credit_returned, h.credit);
        } else {
          FUZZ_CHECK(h.credit == 0);
        }
        break;
      }
      case kAck:
        FUZZ_CHECK(m.window != 0 && h.credit == 0 && payload == 0);
        FUZZ_CHECK(h.value <= m.announced);
        FUZZ_CHECK(h.value >= m.credit_returned);
        m.credit_returned = h.value;
        break;
      case kProbe:
        FUZZ_CHECK(m.window != 0 && h.credit == 0 && payload == 0);
        FUZZ_CHECK(h.value <= p.link->stats().data_sent);  // the link's own count
        break;
      default: FUZZ_CHECK(!"the link sent a frame of unknown type");
    }
    FUZZ_CHECK(p.rx->release() == Errc::kOk);
  }
}

void peer_send(Peer& p, FuzzedDataProvider& in, Model& m, uint64_t& next_seq) {
  std::vector<uint8_t> frame(sizeof(LinkHeader));
  LinkHeader h{};
  const int kind = in.ConsumeIntegralInRange<int>(0, 3);
  if (kind == 0) {  // data
    h.type = kData;
    h.value = in.ConsumeBool() ? next_seq + in.ConsumeIntegralInRange<uint64_t>(0, 3)
                               : in.ConsumeIntegral<uint64_t>();
    h.credit = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint32_t>(0, 64) : in.ConsumeIntegral<uint32_t>();
    const size_t len = in.ConsumeIntegralInRange<size_t>(0, p.link->mtu());
    for (size_t i = 0; i < len; ++i) frame.push_back(pattern(h.value, i));
  } else if (kind == 3) {  // any bytes
    frame = in.ConsumeBytes<uint8_t>(in.ConsumeIntegralInRange<size_t>(0, p.link->mtu() + 16));
  } else {
    h.type = kind == 1 ? kAck : kProbe;
    h.value = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint64_t>(0, 64) : in.ConsumeIntegral<uint64_t>();
    if (in.ConsumeIntegralInRange<int>(0, 7) == 0) h.credit = in.ConsumeIntegral<uint32_t>();
  }
  if (kind != 3) std::memcpy(frame.data(), &h, sizeof h);
  if (p.tx->send(frame.data(), frame.size(), Deadline::now()) != Errc::kOk) return;  // ring full: lost
  if (kind == 3) return;  // judged as whatever its bytes say: the model covers the well-formed
  if (h.type == kData) {
    next_seq = std::max(next_seq, h.value + 1);
    m.announced = std::max(m.announced, h.value + 1);
    m.credit_given = std::max<uint64_t>(m.credit_given, h.credit);
  } else if (h.type == kAck) {
    m.credit_given = std::max(m.credit_given, h.value);
  } else {
    m.announced = std::max(m.announced, h.value);
  }
}

Deadline soon(FuzzedDataProvider& in) {
  return Deadline::after(std::chrono::microseconds(in.ConsumeIntegralInRange<int>(0, 1000)));
}

void check_returned(Deadline d, Clock::time_point start) {
  FUZZ_CHECK(Clock::now() - std::max(d.when(), start) < kHang);
}

void note(Model& m, Errc e) {
  if (m.broken != Errc::kOk) FUZZ_CHECK(e == m.broken);
  if (e == Errc::kCorrupt || e == Errc::kPeerDead) m.broken = e;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  DatagramLinkConfig c;
  c.mtu = DatagramLink::kLinkHeader + 64;
  c.ring_bytes = 8192;
  const size_t windows[] = {0, 1, 2, 3, 8};
  c.window = windows[in.ConsumeIntegralInRange<size_t>(0, 4)];
  c.ack_every = in.ConsumeIntegralInRange<size_t>(0, c.window);
  c.probe_after = 50us;
  c.probe_max = 800us;
  Peer p;
  FUZZ_CHECK(connect(p, c));
  Model m;
  m.window = c.window;
  uint64_t next_seq = 0;
  std::vector<std::byte> buf(p.link->mtu());
  const std::byte payload[64] = {};
  for (int step = 0; step < 64 && in.remaining_bytes() > 0; ++step) {
    const auto start = Clock::now();
    switch (in.ConsumeIntegralInRange<int>(0, 7)) {
      case 0:
      case 1: peer_send(p, in, m, next_seq); break;
      case 2: {
        const Deadline d = in.ConsumeBool() ? Deadline::now() : soon(in);
        const Errc e = p.link->send(payload, in.ConsumeIntegralInRange<size_t>(0, sizeof payload), d);
        check_returned(d, start);
        note(m, e);
        break;
      }
      case 3:
      case 4: {
        const bool wait = in.ConsumeBool();
        const Deadline d = soon(in);
        uint64_t seq = 0;
        auto r = wait ? p.link->receive(buf.data(), buf.size(), d, &seq) : p.link->try_receive(buf.data(), buf.size());
        check_returned(wait ? d : Deadline::now(), start);
        if (!r) {
          note(m, r.error());
          break;
        }
        FUZZ_CHECK(m.broken == Errc::kOk);
        if (wait) {
          FUZZ_CHECK(m.first_delivery || seq > m.last_delivered);
          FUZZ_CHECK(seq < next_seq);
          for (size_t i = 0; i < *r; ++i) FUZZ_CHECK(buf[i] == std::byte{pattern(seq, i)});
          m.first_delivery = false;
          m.last_delivered = seq;
        }
        break;
      }
      case 5:
        (void)p.link->readable();
        check_returned(Deadline::now(), start);
        break;
      case 6: {
        const Deadline d = soon(in);
        const Errc e = p.link->flush(d);
        if (c.window != 0) note(m, e);  // without flow control there is nothing to flush: kOk
        check_returned(d, start);
        break;
      }
      case 7: drain_peer(p, m); break;
    }
    const auto s = p.link->stats();
    if (c.window != 0) {
      FUZZ_CHECK(s.max_queued <= c.window);
      FUZZ_CHECK(s.data_sent <= m.send_limit());
    }
  }
  drain_peer(p, m);
  return 0;
}
