// The transfer queue on its own (via/transfer_queue.*): a record is
// published by its tag, written after the rest (by PIO, or by DMA behind
// the data); the write pointer that follows is a doorbell that fires the
// tripwire and is never read; tags of older laps and garbage are told apart.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "clan_emul/dma_stream.hpp"
#include "clan_emul/event_queue.hpp"
#include "clan_emul/nic.hpp"
#include "via/transfer_queue.hpp"
#include "via/wire.hpp"

using namespace std::chrono_literals;
using clan::Errc;
using via::wire::Record;

namespace {

constexpr uint32_t kSlots = 8;

// A NIC whose waiters spin for `spin` before they sleep.
clan::NicConfig nic_config(std::chrono::nanoseconds spin = std::chrono::microseconds(50)) {
  clan::NicConfig c;
  c.spin_budget = spin;
  return c;
}

// Both ends in one channel block, written through one aperture into it (as
// two VIs of one NIC would be, each the other's peer).
struct Queue {
  explicit Queue(clan::NicConfig config = nic_config()) : nic(std::move(clan::Nic::open(config).value())) {
    REQUIRE(tx->attach(block_ap, kLayout.tq_ring, kSlots) == Errc::kOk);
    REQUIRE(rx->attach(block_ap, kLayout.tq_sender) == Errc::kOk);
  }
  static constexpr via::wire::BlockLayout kLayout = via::wire::block_layout(8, kSlots);
  std::unique_ptr<clan::Nic> nic;
  clan::Region block = std::move(nic->export_region(kLayout.bytes).value());
  clan::Aperture block_ap = std::move(nic->import(block.cookie()).value());
  std::unique_ptr<via::TransferReceiver> rx =
      std::move(via::TransferReceiver::create(*nic, block, kLayout.tq_ring, kSlots).value());
  std::unique_ptr<via::TransferSender> tx =
      std::make_unique<via::TransferSender>(block.data() + kLayout.tq_sender);
  // What a hostile peer writes with: the receiver's ring, imported directly.
  clan::Aperture ring = std::move(nic->import(block.cookie()).value());
  // The next record, which must be there.
  Record take() {
    auto r = rx->peek();
    REQUIRE(r.ok());
    REQUIRE(r->has_value());
    rx->consume();
    return **r;
  }
  bool nothing() {
    auto r = rx->peek();
    return r.ok() && !r->has_value() && !rx->readable();
  }
};

Record record(uint64_t desc_seq, uint32_t length) {
  return Record{0, desc_seq, length, 0, 0, 0, 0, {}};
}

}  // namespace

TEST_CASE("a transfer-queue record appears when published, not when put", "[via][tq]") {
  Queue q;
  const uint32_t fired = q.rx->tripwire().fired();
  REQUIRE(q.tx->put(record(7, 100)) == Errc::kOk);
  CHECK(q.nothing());
  CHECK(q.rx->tripwire().fired() == fired);
  REQUIRE(q.tx->publish_pio() == Errc::kOk);
  CHECK(q.rx->tripwire().fired() != fired);  // the write pointer is the doorbell
  REQUIRE(q.rx->readable());
  const Record r = q.take();
  CHECK(r.desc_seq == 7);
  CHECK(r.length == 100);
  CHECK(q.nothing());
}

TEST_CASE("records put together are published together, in order", "[via][tq]") {
  Queue q;
  for (uint64_t i = 0; i < 3; ++i) REQUIRE(q.tx->put(record(i, 10)) == Errc::kOk);
  CHECK(q.nothing());
  REQUIRE(q.tx->publish_pio() == Errc::kOk);
  for (uint64_t i = 0; i < 3; ++i) CHECK(q.take().desc_seq == i);
  CHECK(q.nothing());
}

TEST_CASE("a record published by DMA appears once the engine has written its tag", "[via][tq]") {
  Queue q;
  clan::DmaStream dma(*q.nic, nullptr, 0);
  REQUIRE(q.tx->put(record(1, 64)) == Errc::kOk);
  auto t = q.tx->publish_dma(dma);
  REQUIRE(t.ok());
  REQUIRE(dma.wait(*t, clan::Deadline::after(10s)) == Errc::kOk);
  CHECK(q.take().desc_seq == 1);
  CHECK(q.nothing());
}

TEST_CASE("a record published by DMA: the engine writes its tag after the data and rings after the tag",
          "[via][tq]") {
  Queue q;
  clan::DmaStream dma(*q.nic, nullptr, 0);
  // Tripwires on the data's last word, the record's tag and the doorbell
  // post to one event queue, in the order the engine writes them.
  constexpr size_t kBig = 1 << 20;
  auto data = std::move(q.nic->export_region(kBig).value());
  auto data_ap = std::move(q.nic->import(data.cookie()).value());
  auto events = std::move(q.nic->create_event_queue().value());
  const uint32_t on_data = events.add_source(1).value();
  const uint32_t on_tag = events.add_source(2).value();
  auto data_tw = std::move(q.nic->arm_tripwire(data, kBig - 8).value());
  auto tag_tw = std::move(q.nic->arm_tripwire(q.block, Queue::kLayout.tq_ring + via::wire::kTqRing).value());
  data_tw.set_queue(&events, on_data);
  tag_tw.set_queue(&events, on_tag);
  const uint32_t on_bell = events.add_source(3).value();
  q.rx->tripwire().set_queue(&events, on_bell);

  std::vector<unsigned char> src(kBig, 0x3c);
  REQUIRE(dma.write(data_ap, 0, src.data(), kBig).ok());
  REQUIRE(q.tx->put(record(9, 4096)) == Errc::kOk);
  auto t = q.tx->publish_dma(dma);
  REQUIRE(t.ok());
  REQUIRE(dma.wait(*t, clan::Deadline::after(10s)) == Errc::kOk);
  std::vector<uint32_t> order;
  while (auto e = events.poll()) order.push_back(e->source);
  CHECK(order == std::vector<uint32_t>{on_data, on_tag, on_bell});
  CHECK(q.take().desc_seq == 9);
}

TEST_CASE("a waiter asleep on the doorbell wakes for a record published by DMA", "[via][tq]") {
  // No spinning: the waiter sleeps at once, and only the doorbell wakes it.
  Queue q(nic_config(std::chrono::nanoseconds(0)));
  clan::DmaStream dma(*q.nic, nullptr, 0);
  std::atomic<bool> woke{false};
  std::thread waiter([&] {
    woke = q.rx->tripwire().wait([&] { return q.rx->readable(); }, clan::Deadline::after(30s)) == Errc::kOk;
  });
  REQUIRE(q.tx->put(record(9, 64)) == Errc::kOk);
  auto t = q.tx->publish_dma(dma);
  REQUIRE(t.ok());
  waiter.join();
  CHECK(woke);
  REQUIRE(dma.wait(*t, clan::Deadline::after(10s)) == Errc::kOk);
  CHECK(q.take().desc_seq == 9);
}

TEST_CASE("the ring wraps: an older lap's tag is not taken for a new record", "[via][tq]") {
  Queue q;
  for (uint64_t i = 0; i < 3 * kSlots; ++i) {
    REQUIRE(q.tx->space() == Errc::kOk);
    REQUIRE(q.tx->put(record(i, 1)) == Errc::kOk);
    REQUIRE(q.tx->publish_pio() == Errc::kOk);
    CHECK(q.take().desc_seq == i);
    // The next slot holds the tag of the lap before: not a record.
    CHECK(q.nothing());
  }
}

TEST_CASE("a hostile peer's garbage: the write pointer is ignored, a bad record is an error",
          "[via][tq]") {
  Queue q;
  SECTION("garbage in the write pointer: nothing to read, no error") {
    REQUIRE(q.ring.write_word(Queue::kLayout.tq_ring + via::wire::kTqWrite, 0xdeadbeefcafeULL) == Errc::kOk);
    CHECK(q.nothing());
  }
  SECTION("the right tag on a body that does not match its check") {
    unsigned char junk[sizeof(Record) - 8];
    std::memset(junk, 0x5a, sizeof junk);
    REQUIRE(q.ring.write(Queue::kLayout.tq_ring + via::wire::kTqRing + 8, junk, sizeof junk) == Errc::kOk);
    CHECK(q.nothing());  // no tag yet
    REQUIRE(q.ring.write_word(Queue::kLayout.tq_ring + via::wire::kTqRing, 1) == Errc::kOk);
    CHECK(q.rx->readable());
    CHECK(q.rx->peek().error() == Errc::kCorrupt);
  }
  SECTION("a well-formed record with its reserved words not zero") {
    Record r = record(0, 4);
    r.reserved[1] = 1;
    r.tag = 1;
    r.check = via::wire::record_check(r);
    REQUIRE(q.ring.write(Queue::kLayout.tq_ring + via::wire::kTqRing, &r, sizeof r) == Errc::kOk);
    CHECK(q.rx->peek().error() == Errc::kCorrupt);
  }
  SECTION("a well-formed record with unknown flags") {
    Record r = record(0, 4);
    r.flags = 0x80;
    r.tag = 1;
    r.check = via::wire::record_check(r);
    REQUIRE(q.ring.write(Queue::kLayout.tq_ring + via::wire::kTqRing, &r, sizeof r) == Errc::kOk);
    CHECK(q.rx->peek().error() == Errc::kCorrupt);
  }
}
