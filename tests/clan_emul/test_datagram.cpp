// The unreliable in-order datagram channel and its seeded fault model.
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "clan_emul/crc32.hpp"
#include "clan_emul/datagram_receiver.hpp"
#include "clan_emul/datagram_sender.hpp"
#include "clan_emul/dmq_sender.hpp"
#include "clan_emul/fault_model.hpp"
#include "clan_emul/nic.hpp"

using namespace clan;
using namespace std::chrono_literals;

namespace {

// Payload of datagram `seq`: its size and bytes are functions of seq alone,
// so the receiver can check every delivered byte.
size_t payload_size(uint64_t seq, size_t mtu) {
  uint64_t s = seq * 31 + 7;
  const uint64_t r = splitmix64(s);
  if (seq % 97 == 5) return mtu;  // some full-MTU datagrams
  if (seq % 89 == 3) return 0;    // and some empty ones
  return 1 + r % (mtu < 1500 ? mtu : 1500);
}

void fill_payload(uint64_t seq, std::byte* p, size_t len) {
  uint64_t s = seq ^ 0xfeedfacecafebeefull;
  for (size_t i = 0; i < len; i += 8) {
    const uint64_t w = splitmix64(s);
    std::memcpy(p + i, &w, len - i < 8 ? len - i : 8);
  }
}

bool payload_ok(uint64_t seq, const std::byte* p, size_t len, size_t mtu) {
  if (len != payload_size(seq, mtu)) return false;
  std::vector<std::byte> want(len);
  fill_payload(seq, want.data(), len);
  return len == 0 || std::memcmp(want.data(), p, len) == 0;
}

struct Link {
  std::unique_ptr<Nic> tx_nic, rx_nic;
  std::unique_ptr<DatagramSender> tx;
  std::unique_ptr<DatagramReceiver> rx;
};

std::unique_ptr<Nic> open_nic(const char* name) {
  NicConfig nc;
  nc.name = name;
  auto nic = Nic::open(nc);
  REQUIRE(nic.ok());
  return std::move(nic.value());
}

Link make_link(const DatagramConfig& cfg) {
  Link l;
  l.tx_nic = open_nic("dgram-tx");
  l.rx_nic = open_nic("dgram-rx");
  auto tx = DatagramSender::create(*l.tx_nic, cfg);
  REQUIRE(tx.ok());
  auto rx = DatagramReceiver::create(*l.rx_nic, cfg);
  REQUIRE(rx.ok());
  l.tx = std::move(tx.value());
  l.rx = std::move(rx.value());
  REQUIRE(l.tx->attach(l.rx->cookie()) == Errc::kOk);
  REQUIRE(l.rx->attach(l.tx->cookie()) == Errc::kOk);
  return l;
}

struct Outcome {
  std::vector<uint64_t> sequences;          // delivered, in delivery order
  std::vector<Clock::time_point> arrivals;  // when each was delivered
  std::vector<Clock::time_point> send_times;  // per sent datagram, taken before send()
  size_t bad_content = 0;
  Errc end = Errc::kOk;      // how the receive loop ended (kClosed expected)
  Errc send_error = Errc::kOk;
  DatagramSenderStats tx;
  DatagramReceiverStats rx;
};

// Streams `count` datagrams through a fresh link: the receiver runs on its
// own thread until the close arrives; every wait is bounded.
Outcome run_stream(const DatagramConfig& cfg, uint64_t count, bool copy_out = false,
                   Transfer how = Transfer::kPio) {
  Link l = make_link(cfg);
  Outcome out;
  out.send_times.reserve(count);
  std::thread receiver([&] {
    std::vector<std::byte> buf(cfg.mtu);
    for (;;) {
      const Deadline deadline = Deadline::after(30s);
      if (copy_out) {
        uint64_t seq = 0;
        auto n = l.rx->receive_into(buf.data(), buf.size(), deadline, &seq);
        if (!n) { out.end = n.error(); return; }
        out.arrivals.push_back(Clock::now());
        out.sequences.push_back(seq);
        if (!payload_ok(seq, buf.data(), n.value(), cfg.mtu)) ++out.bad_content;
      } else {
        auto d = l.rx->receive(deadline);
        if (!d) { out.end = d.error(); return; }
        out.arrivals.push_back(Clock::now());
        out.sequences.push_back(d->sequence);
        if (!payload_ok(d->sequence, d->data, d->size, cfg.mtu)) ++out.bad_content;
        if (l.rx->release() != Errc::kOk) { out.end = Errc::kInvalidArgument; return; }
      }
    }
  });
  std::vector<std::byte> payload(cfg.mtu);
  for (uint64_t seq = 0; seq < count; ++seq) {
    const size_t len = payload_size(seq, cfg.mtu);
    fill_payload(seq, payload.data(), len);
    out.send_times.push_back(Clock::now());
    if (Errc e = l.tx->send(payload.data(), len, Deadline::after(30s), how); e != Errc::kOk) {
      out.send_error = e;
      break;
    }
  }
  if (out.send_error == Errc::kOk) out.send_error = l.tx->close(Deadline::after(30s));
  else l.rx->abort(Errc::kClosed);
  receiver.join();
  out.tx = l.tx->stats();
  out.rx = l.rx->stats();
  return out;
}

// The delivered sequence numbers the fault model predicts for `count` datagrams.
std::vector<uint64_t> predicted_deliveries(const FaultModel& m, uint64_t count) {
  FaultInjector f(m);
  std::vector<uint64_t> seqs;
  for (uint64_t i = 0; i < count; ++i) {
    if (f.next().action == FaultAction::kDeliver) seqs.push_back(i);
  }
  return seqs;
}

bool strictly_increasing(const std::vector<uint64_t>& v) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] <= v[i - 1]) return false;
  }
  return true;
}

DatagramConfig lossy(uint64_t seed, double drop, double corrupt) {
  DatagramConfig cfg;
  cfg.faults.seed = seed;
  cfg.faults.drop_rate = drop;
  cfg.faults.corrupt_rate = corrupt;
  return cfg;
}

// Sender and receiver accounts agree with each other for a finished stream.
void check_accounts(const Outcome& o, uint64_t count) {
  CHECK(o.send_error == Errc::kOk);
  CHECK(o.end == Errc::kClosed);
  CHECK(o.bad_content == 0);
  CHECK(o.tx.sent == count);
  CHECK(o.tx.dropped + o.tx.delivered == count);
  CHECK(o.tx.held == 0);
  CHECK(o.rx.frames == o.tx.delivered);
  CHECK(o.rx.discarded_corrupt == o.tx.corrupted);
  CHECK(o.rx.discarded_malformed == 0);
  CHECK(o.rx.delivered == o.tx.delivered - o.tx.corrupted);
  CHECK(o.rx.delivered == o.sequences.size());
  CHECK(strictly_increasing(o.sequences));
  if (!o.sequences.empty()) CHECK(o.rx.missing + o.rx.delivered == o.sequences.back() + 1);
}

}  // namespace

TEST_CASE("datagram: crc32 matches the IEEE check value and composes incrementally", "[datagram]") {
  const char* check = "123456789";
  CHECK(crc32(check, 9) == 0xCBF43926u);
  CHECK(crc32(nullptr, 0) == 0u);
  std::vector<std::byte> data(1000);
  fill_payload(1, data.data(), data.size());
  for (size_t cut : {0, 1, 7, 8, 9, 500, 999, 1000}) {
    CHECK(crc32_update(crc32(data.data(), cut), data.data() + cut, data.size() - cut) ==
          crc32(data.data(), data.size()));
  }
}

TEST_CASE("datagram: crc32c matches the Castagnoli check value, hardware and tables agree", "[datagram]") {
  const char* check = "123456789";
  CHECK(crc32c(check, 9) == 0xE3069283u);
  CHECK(crc32c_update_portable(0, check, 9) == 0xE3069283u);
  CHECK(crc32c(nullptr, 0) == 0u);
  std::vector<std::byte> data(1000);
  fill_payload(2, data.data(), data.size());
  for (size_t len : {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 999, 1000}) {
    CHECK(crc32c(data.data(), len) == crc32c_update_portable(0, data.data(), len));
  }
  for (size_t cut : {0, 1, 7, 8, 9, 500, 999, 1000}) {
    CHECK(crc32c_update(crc32c(data.data(), cut), data.data() + cut, data.size() - cut) ==
          crc32c(data.data(), data.size()));
  }
  INFO("hardware CRC-32C: " << crc32c_hardware());
  SUCCEED();
}

TEST_CASE("datagram: a frame's payload gathered from two pieces equals one from a single piece", "[datagram]") {
  std::vector<std::byte> payload(100);
  fill_payload(4, payload.data(), payload.size());
  std::vector<std::byte> one(dgram::kFrameHeader + 100), two(dgram::kFrameHeader + 100);
  dgram::encode_frame(one.data(), 9, payload.data(), payload.size());
  dgram::encode_frame(two.data(), 9, payload.data(), 16, payload.data() + 16, 84);
  CHECK(one == two);
  CHECK(dgram::check_frame(two.data(), two.size(), 9180, nullptr) == dgram::FrameCheck::kOk);
}

TEST_CASE("datagram: the frame CRC detects every single-byte corruption of a frame", "[datagram]") {
  std::vector<std::byte> frame(dgram::kFrameHeader + 40);
  std::vector<std::byte> payload(40);
  fill_payload(3, payload.data(), payload.size());
  dgram::encode_frame(frame.data(), 3, payload.data(), payload.size());
  REQUIRE(dgram::check_frame(frame.data(), frame.size(), 9180, nullptr) == dgram::FrameCheck::kOk);
  size_t undetected = 0;
  for (size_t at = 0; at < frame.size(); ++at) {
    for (int mask = 1; mask < 256; ++mask) {
      frame[at] ^= std::byte(mask);
      if (dgram::check_frame(frame.data(), frame.size(), 9180, nullptr) == dgram::FrameCheck::kOk) {
        ++undetected;
      }
      frame[at] ^= std::byte(mask);
    }
  }
  CHECK(undetected == 0);
}

TEST_CASE("datagram: splitmix64 and xoshiro256** give fixed sequences for a seed", "[datagram]") {
  uint64_t s = 0;
  CHECK(splitmix64(s) == 0xe220a8397b1dcdafull);  // the published first output for state 0
  Xoshiro256ss a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.next();
    CHECK(x == b.next());
    differs |= x != c.next();
  }
  CHECK(differs);
  for (int i = 0; i < 1000; ++i) {
    const double u = a.uniform();
    CHECK((u >= 0.0 && u < 1.0));
    CHECK(Xoshiro256ss::scale(a.next(), 17) < 17);
  }
}

TEST_CASE("datagram: fault model rejects invalid rates and delays", "[datagram]") {
  CHECK(valid(FaultModel{}));
  CHECK(valid(FaultModel{1, 1.0, 0.0, 0ns}));
  CHECK(valid(FaultModel{1, 0.5, 0.5, 1ms}));
  CHECK_FALSE(valid(FaultModel{1, -0.1, 0.0, 0ns}));
  CHECK_FALSE(valid(FaultModel{1, 1.5, 0.0, 0ns}));
  CHECK_FALSE(valid(FaultModel{1, 0.6, 0.6, 0ns}));
  CHECK_FALSE(valid(FaultModel{1, NAN, 0.0, 0ns}));
  CHECK_FALSE(valid(FaultModel{1, 0.0, 0.0, -1ns}));
  auto nic = open_nic("dgram-cfg");
  DatagramConfig bad;
  bad.faults.drop_rate = 2.0;
  CHECK(DatagramSender::create(*nic, bad).error() == Errc::kInvalidArgument);
  bad = DatagramConfig{};
  bad.mtu = 0;
  CHECK(DatagramReceiver::create(*nic, bad).error() == Errc::kInvalidArgument);
  bad.mtu = 200 * 1024;  // larger than half the default ring
  CHECK(DatagramSender::create(*nic, bad).error() == Errc::kInvalidArgument);
}

TEST_CASE("datagram: same seed gives identical deliveries and statistics, another seed differs",
          "[datagram]") {
  const uint64_t n = 3000;
  const Outcome a = run_stream(lossy(42, 0.10, 0.05), n);
  const Outcome b = run_stream(lossy(42, 0.10, 0.05), n);
  const Outcome c = run_stream(lossy(43, 0.10, 0.05), n);
  check_accounts(a, n);
  check_accounts(c, n);
  CHECK(a.sequences == b.sequences);
  CHECK(a.tx == b.tx);
  CHECK(a.rx == b.rx);
  CHECK(a.sequences != c.sequences);
  CHECK(a.sequences == predicted_deliveries(lossy(42, 0.10, 0.05).faults, n));
}

TEST_CASE("datagram: 20000 datagrams at 10% drop and 5% corruption stay within 5 sigma, exact per seed",
          "[datagram]") {
  const uint64_t n = 20000;
  const double p_drop = 0.10, p_corrupt = 0.05;
  const Outcome o = run_stream(lossy(20240601, p_drop, p_corrupt), n);
  check_accounts(o, n);
  auto within_5_sigma = [n](uint64_t k, double p) {
    const double mean = n * p, sigma = std::sqrt(n * p * (1 - p));
    return std::fabs(static_cast<double>(k) - mean) <= 5 * sigma;
  };
  CHECK(within_5_sigma(o.tx.dropped, p_drop));
  CHECK(within_5_sigma(o.tx.corrupted, p_corrupt));
  CHECK(within_5_sigma(o.rx.delivered, 1 - p_drop - p_corrupt));
  // Regression: the counts are a pure function of the seed.
  INFO("dropped " << o.tx.dropped << " corrupted " << o.tx.corrupted << " delivered "
                  << o.rx.delivered << " missing " << o.rx.missing << " bytes " << o.rx.bytes);
  CHECK(o.tx.dropped == 2064u);
  CHECK(o.tx.corrupted == 986u);
  CHECK(o.rx.delivered == 16950u);
  CHECK(o.rx.missing == 3050u);
  CHECK(o.tx.bytes == 16664791u);
  CHECK(o.rx.bytes == 14168621u);
}

TEST_CASE("datagram: corrupted frames are always detected and never delivered", "[datagram]") {
  const uint64_t n = 5000;
  SECTION("in place") {
    const Outcome o = run_stream(lossy(7, 0.0, 0.5), n);
    check_accounts(o, n);
    CHECK(o.tx.corrupted > 2000);
  }
  SECTION("copied out") {
    const Outcome o = run_stream(lossy(8, 0.0, 0.5), n, true);
    check_accounts(o, n);
    CHECK(o.tx.corrupted > 2000);
  }
}

TEST_CASE("datagram: a lossless channel delivers every datagram in order", "[datagram]") {
  const uint64_t n = 5000;
  const Outcome o = run_stream(DatagramConfig{}, n);
  check_accounts(o, n);
  CHECK(o.rx.delivered == n);
  CHECK(o.rx.missing == 0);
  CHECK(o.tx.dropped == 0);
  CHECK(o.tx.corrupted == 0);
  CHECK(o.rx.bytes == o.tx.bytes);
  std::vector<uint64_t> all(n);
  for (uint64_t i = 0; i < n; ++i) all[i] = i;
  CHECK(o.sequences == all);
}

TEST_CASE("datagram: a delayed link keeps order and never delivers before the delay", "[datagram]") {
  DatagramConfig cfg = lossy(99, 0.05, 0.05);
  cfg.faults.delay = 3ms;
  const uint64_t n = 2000;
  const Outcome o = run_stream(cfg, n);
  check_accounts(o, n);
  CHECK(o.sequences == predicted_deliveries(cfg.faults, n));
  size_t early = 0;
  for (size_t i = 0; i < o.sequences.size(); ++i) {
    if (o.arrivals[i] - o.send_times[o.sequences[i]] < cfg.faults.delay) ++early;
  }
  CHECK(early == 0);
}

TEST_CASE("datagram: frames copied by DMA arrive like PIO ones, with and without delay",
          "[datagram]") {
  const uint64_t n = 1000;
  DatagramConfig cfg = lossy(5, 0.05, 0.05);
  SECTION("no delay") {
    const Outcome o = run_stream(cfg, n, false, Transfer::kDma);
    check_accounts(o, n);
    CHECK(o.sequences == predicted_deliveries(cfg.faults, n));
  }
  SECTION("1 ms delay") {
    cfg.faults.delay = 1ms;
    const Outcome o = run_stream(cfg, n, false, Transfer::kDma);
    check_accounts(o, n);
    CHECK(o.sequences == predicted_deliveries(cfg.faults, n));
  }
}

TEST_CASE("datagram: a delayed link flushes held frames on close", "[datagram]") {
  DatagramConfig cfg;
  cfg.faults.delay = 20ms;
  Link l = make_link(cfg);
  std::vector<std::byte> p(cfg.mtu);
  for (uint64_t seq = 0; seq < 10; ++seq) {
    fill_payload(seq, p.data(), payload_size(seq, cfg.mtu));
    REQUIRE(l.tx->send(p.data(), payload_size(seq, cfg.mtu), Deadline::after(5s)) == Errc::kOk);
  }
  CHECK(l.tx->stats().held > 0);  // 20 ms have not passed yet on any sane machine
  REQUIRE(l.tx->close(Deadline::after(10s)) == Errc::kOk);
  CHECK(l.tx->stats().held == 0);
  CHECK(l.tx->stats().delivered == 10);
  for (uint64_t seq = 0; seq < 10; ++seq) {
    auto d = l.rx->receive(Deadline::after(5s));
    REQUIRE(d.ok());
    CHECK(d->sequence == seq);
    CHECK(payload_ok(seq, d->data, d->size, cfg.mtu));
    REQUIRE(l.rx->release() == Errc::kOk);
  }
  CHECK(l.rx->receive(Deadline::after(5s)).error() == Errc::kClosed);
  CHECK(l.tx->send(p.data(), 1, Deadline::after(1s)) == Errc::kClosed);
}

TEST_CASE("datagram: datagrams beyond the MTU are rejected with kInvalidArgument", "[datagram]") {
  DatagramConfig cfg;
  cfg.mtu = 1500;
  Link l = make_link(cfg);
  std::vector<std::byte> p(cfg.mtu + 1, std::byte{0x5a});
  CHECK(l.tx->send(p.data(), cfg.mtu + 1, Deadline::after(1s)) == Errc::kInvalidArgument);
  CHECK(l.tx->send(nullptr, 1, Deadline::after(1s)) == Errc::kInvalidArgument);
  CHECK(l.tx->stats().sent == 0);
  REQUIRE(l.tx->send(p.data(), cfg.mtu, Deadline::after(1s)) == Errc::kOk);
  REQUIRE(l.tx->send(nullptr, 0, Deadline::after(1s)) == Errc::kOk);
  auto d = l.rx->receive(Deadline::after(5s));
  REQUIRE(d.ok());
  CHECK(d->size == cfg.mtu);
  CHECK(d->sequence == 0);
  CHECK(std::memcmp(d->data, p.data(), cfg.mtu) == 0);
  CHECK(l.rx->receive(Deadline::after(1s)).error() == Errc::kInvalidArgument);  // not released
  REQUIRE(l.rx->release() == Errc::kOk);
  CHECK(l.rx->release() == Errc::kInvalidArgument);
  std::vector<std::byte> small(100);
  CHECK(l.rx->receive_into(small.data(), small.size(), Deadline::after(1s)).error() ==
        Errc::kInvalidArgument);  // buffer below the MTU
  std::vector<std::byte> buf(cfg.mtu);
  uint64_t seq = 0;
  auto n = l.rx->receive_into(buf.data(), buf.size(), Deadline::after(5s), &seq);
  REQUIRE(n.ok());
  CHECK(n.value() == 0);
  CHECK(seq == 1);
}

TEST_CASE("datagram: a full ring times out a send without consuming a sequence number", "[datagram]") {
  DatagramConfig cfg;
  cfg.mtu = 1000;
  cfg.ring_bytes = 4096;
  Link l = make_link(cfg);
  std::vector<std::byte> p(cfg.mtu);
  uint64_t accepted = 0;
  Errc e = Errc::kOk;
  while ((e = l.tx->send(p.data(), p.size(), Deadline::after(50ms))) == Errc::kOk) {
    ++accepted;
    REQUIRE(accepted < 100);
  }
  CHECK(e == Errc::kTimeout);
  CHECK(l.tx->stats().sent == accepted);
  for (uint64_t i = 0; i < accepted; ++i) {
    auto d = l.rx->receive(Deadline::after(5s));
    REQUIRE(d.ok());
    CHECK(d->sequence == i);
    REQUIRE(l.rx->release() == Errc::kOk);
  }
  REQUIRE(l.tx->send(p.data(), p.size(), Deadline::after(5s)) == Errc::kOk);
  auto d = l.rx->receive(Deadline::after(5s));
  REQUIRE(d.ok());
  CHECK(d->sequence == accepted);
  REQUIRE(l.rx->release() == Errc::kOk);
  CHECK(l.rx->stats().missing == 0);
}

TEST_CASE("datagram: a receiver discards garbage frames from a raw DMQ sender and keeps working",
          "[datagram]") {
  DatagramConfig cfg;
  cfg.mtu = 2000;
  auto tx_nic = open_nic("dgram-raw");
  auto rx_nic = open_nic("dgram-rx");
  auto raw = DmqSender::create(*tx_nic, dgram::dmq_config(cfg));
  REQUIRE(raw.ok());
  auto rx = DatagramReceiver::create(*rx_nic, cfg);
  REQUIRE(rx.ok());
  REQUIRE(raw.value()->attach(rx.value()->cookie()) == Errc::kOk);
  REQUIRE(rx.value()->attach(raw.value()->cookie()) == Errc::kOk);
  DmqSender& dmq = *raw.value();
  DatagramReceiver& r = *rx.value();

  auto good = [&](uint64_t seq, size_t len) {
    std::vector<std::byte> f(dgram::kFrameHeader + len);
    std::vector<std::byte> p(len);
    fill_payload(seq, p.data(), len);
    dgram::encode_frame(f.data(), seq, p.data(), len);
    return f;
  };
  auto send = [&](const std::vector<std::byte>& f) {
    REQUIRE(dmq.send(f.data(), f.size(), Deadline::after(5s)) == Errc::kOk);
  };
  // A frame whose header fields are rewritten and whose CRC is then made valid.
  auto recrc = [](std::vector<std::byte>& f) {
    const uint32_t crc = dgram::frame_crc(f.data(), f.data() + dgram::kFrameHeader,
                                          f.size() - dgram::kFrameHeader);
    std::memcpy(f.data() + dgram::kCrc, &crc, 4);
  };

  send(std::vector<std::byte>{});                       // empty message: malformed
  send(std::vector<std::byte>(5, std::byte{0xff}));     // short frame: malformed
  auto wrong_crc = good(1, 300);
  wrong_crc[dgram::kFrameHeader + 17] ^= std::byte{0x01};
  send(wrong_crc);                                      // CRC mismatch: corrupt
  auto absurd = good(2, 300);
  const uint32_t huge = 0xffffffffu;
  std::memcpy(absurd.data() + dgram::kLength, &huge, 4);
  send(absurd);                                         // absurd length, stale CRC: corrupt
  recrc(absurd);
  send(absurd);                                         // absurd length, valid CRC: malformed
  auto shorter = good(3, 300);
  const uint32_t less = 100;
  std::memcpy(shorter.data() + dgram::kLength, &less, 4);
  recrc(shorter);
  send(shorter);                                        // length below the size: malformed
  send(std::vector<std::byte>(dgram::kFrameHeader + 64, std::byte{0}));  // zeros: corrupt
  send(good(4, 300));
  send(good(5, 0));

  auto d = r.receive(Deadline::after(5s));
  REQUIRE(d.ok());
  CHECK(d->sequence == 4);
  CHECK(payload_ok(4, d->data, d->size, cfg.mtu) == false);  // payload_size(4) differs from 300
  std::vector<std::byte> want(300);
  fill_payload(4, want.data(), want.size());
  CHECK(d->size == 300);
  CHECK(std::memcmp(d->data, want.data(), 300) == 0);
  REQUIRE(r.release() == Errc::kOk);
  d = r.receive(Deadline::after(5s));
  REQUIRE(d.ok());
  CHECK(d->sequence == 5);
  CHECK(d->size == 0);
  REQUIRE(r.release() == Errc::kOk);

  CHECK(r.stats().frames == 9);
  CHECK(r.stats().discarded_malformed == 4);
  CHECK(r.stats().discarded_corrupt == 3);
  CHECK(r.stats().delivered == 2);
  CHECK(r.stats().missing == 4);  // sequences 0..3 never arrived intact
  CHECK(r.status() == Errc::kOk);

  // The copying path discards the same way.
  send(wrong_crc);
  send(good(6, 10));
  std::vector<std::byte> buf(cfg.mtu);
  uint64_t seq = 0;
  auto n = r.receive_into(buf.data(), buf.size(), Deadline::after(5s), &seq);
  REQUIRE(n.ok());
  CHECK(n.value() == 10);
  CHECK(seq == 6);
  CHECK(r.stats().discarded_corrupt == 4);
  CHECK(r.try_receive().error() == Errc::kTimeout);
}

TEST_CASE("datagram: check_frame rejects frames longer than header plus MTU", "[datagram]") {
  std::vector<std::byte> f(dgram::kFrameHeader + 101);
  std::vector<std::byte> p(101);
  dgram::encode_frame(f.data(), 0, p.data(), p.size());
  CHECK(dgram::check_frame(f.data(), f.size(), 101, nullptr) == dgram::FrameCheck::kOk);
  CHECK(dgram::check_frame(f.data(), f.size(), 100, nullptr) == dgram::FrameCheck::kMalformed);
  CHECK(dgram::check_frame(f.data(), 3, 100, nullptr) == dgram::FrameCheck::kMalformed);
}

namespace {

bool io_full(int fd, void* buf, size_t n, bool writing, Deadline deadline) {
  auto* p = static_cast<char*>(buf);
  while (n) {
    pollfd pfd{fd, static_cast<short>(writing ? POLLOUT : POLLIN), 0};
    const int r = ::poll(&pfd, 1, deadline.remaining_ms());
    if (r <= 0) return false;
    const ssize_t k = writing ? ::write(fd, p, n) : ::read(fd, p, n);
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

// Waits for the child with a bounded wait (pidfd + poll), killing it on timeout.
int wait_child(pid_t pid, Deadline deadline) {
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    pollfd pfd{pidfd, POLLIN, 0};
    const int r = ::poll(&pfd, 1, deadline.remaining_ms());
    ::close(pidfd);
    if (r <= 0) ::kill(pid, SIGKILL);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The child: a sender on its own NIC. Exit codes say what went wrong.
[[noreturn]] void sender_child(int to_parent, int from_parent, const DatagramConfig& cfg,
                               uint64_t count) {
  NicConfig nc;
  nc.name = "dgram-child";
  auto nic = Nic::open(nc);
  if (!nic) ::_exit(10);
  auto tx = DatagramSender::create(*nic.value(), cfg);
  if (!tx) ::_exit(11);
  RdmaCookie mine = tx.value()->cookie(), peer{};
  if (!io_full(to_parent, &mine, sizeof mine, true, Deadline::after(20s))) ::_exit(12);
  if (!io_full(from_parent, &peer, sizeof peer, false, Deadline::after(20s))) ::_exit(13);
  if (tx.value()->attach(peer) != Errc::kOk) ::_exit(14);
  std::vector<std::byte> payload(cfg.mtu);
  for (uint64_t seq = 0; seq < count; ++seq) {
    const size_t len = payload_size(seq, cfg.mtu);
    fill_payload(seq, payload.data(), len);
    if (tx.value()->send(payload.data(), len, Deadline::after(30s)) != Errc::kOk) ::_exit(15);
  }
  if (tx.value()->close(Deadline::after(30s)) != Errc::kOk) ::_exit(16);
  const DatagramSenderStats s = tx.value()->stats();
  const uint64_t expected = predicted_deliveries(cfg.faults, count).size();
  if (s.sent != count || s.delivered != expected || s.dropped != count - expected) ::_exit(17);
  // Stay until the parent has drained the ring (it writes our read pointer).
  char done = 0;
  if (!io_full(from_parent, &done, 1, false, Deadline::after(60s))) ::_exit(18);
  ::_exit(0);
}

}  // namespace

TEST_CASE("datagram: a forked sender streams 10000 datagrams at 1% loss to another process",
          "[datagram][fork]") {
  DatagramConfig cfg = lossy(1234567, 0.01, 0.0);
  const uint64_t n = 10000;
  int c2p[2], p2c[2];
  REQUIRE(::pipe(c2p) == 0);
  REQUIRE(::pipe(p2c) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(c2p[0]);
    ::close(p2c[1]);
    sender_child(c2p[1], p2c[0], cfg, n);
  }
  ::close(c2p[1]);
  ::close(p2c[0]);
  auto nic = open_nic("dgram-parent");
  auto rx = DatagramReceiver::create(*nic, cfg);
  REQUIRE(rx.ok());
  RdmaCookie mine = rx.value()->cookie(), peer{};
  REQUIRE(io_full(p2c[1], &mine, sizeof mine, true, Deadline::after(20s)));
  REQUIRE(io_full(c2p[0], &peer, sizeof peer, false, Deadline::after(20s)));
  REQUIRE(rx.value()->attach(peer) == Errc::kOk);

  std::vector<uint64_t> seqs;
  size_t bad = 0;
  Errc end = Errc::kOk;
  const Deadline overall = Deadline::after(60s);
  for (;;) {
    auto d = rx.value()->receive(overall);
    if (!d) {
      end = d.error();
      break;
    }
    seqs.push_back(d->sequence);
    if (!payload_ok(d->sequence, d->data, d->size, cfg.mtu)) ++bad;
    if (rx.value()->release() != Errc::kOk) break;
  }
  char done = 1;
  CHECK(io_full(p2c[1], &done, 1, true, Deadline::after(5s)));
  const int code = wait_child(pid, Deadline::after(30s));
  ::close(c2p[0]);
  ::close(p2c[1]);

  CHECK(code == 0);
  CHECK(end == Errc::kClosed);
  CHECK(bad == 0);
  const std::vector<uint64_t> expected = predicted_deliveries(cfg.faults, n);
  CHECK(seqs == expected);
  const DatagramReceiverStats& s = rx.value()->stats();
  INFO("delivered " << s.delivered << " missing " << s.missing);
  CHECK(s.delivered == expected.size());
  CHECK(s.discarded_corrupt == 0);
  CHECK(s.discarded_malformed == 0);
  CHECK(s.missing + s.delivered == expected.back() + 1);
  const double mean = n * 0.01, sigma = std::sqrt(n * 0.01 * 0.99);
  CHECK(std::fabs(static_cast<double>(n - s.delivered) - mean) <= 5 * sigma);
}
