// DMA requests for a non-resident endpoint (paper 004 sect. 3.2): held and
// retried without stalling the engine's other requests, never dropped, and
// in order per aperture and per stream.
#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "clan_emul/aperture.hpp"
#include "clan_emul/dma_engine.hpp"
#include "clan_emul/dma_stream.hpp"
#include "clan_emul/endpoint.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/region.hpp"
#include "clan_emul/replacement.hpp"
#include "clan_emul/resident_set.hpp"
#include "tests/clan_emul/resident_loci.hpp"

using namespace clan;
using namespace clan::test;
using namespace std::chrono_literals;

namespace {

NicConfig with_frames(uint32_t frames, std::chrono::nanoseconds cost) {
  NicConfig c;
  c.frames = frames;
  c.remap_cost = cost;
  return c;
}

// Queues a word, retrying while the engine's queue is full.
uint64_t queue_word(DmaStream& s, Aperture& ap, size_t off, uint64_t value) {
  for (;;) {
    auto t = s.write_word(ap, off, value);
    if (t) return t.value();
    REQUIRE(t.error() == Errc::kWouldBlock);
    std::this_thread::yield();
  }
}

// Waits, with a bound, for a condition another thread brings about.
template <class F>
bool eventually(F f) {
  const Deadline d = Deadline::after(30s);
  while (!f()) {
    if (d.expired()) return false;
    std::this_thread::yield();
  }
  return true;
}

// Three endpoints of an owner with two frames whose re-mapping never ends
// (LRU): endpoint 0 is in use, 1 is not, so a write for 2 takes 1's frame
// and stays held on the host meanwhile.
struct OneStuck {
  std::unique_ptr<Nic> owner, writer;
  std::vector<Locus> l;
  OneStuck() {
    NicConfig c = with_frames(2, 3600s);
    c.replacement = Replacement::kLru;
    owner = std::move(Nic::open(c).value());
    writer = std::move(Nic::open({}).value());
    l = loci(*owner, *writer, 3);
    REQUIRE(l[0].ap.write_word(16, 1) == Errc::kOk);
  }
};

}  // namespace

TEST_CASE("a DMA request held for a non-resident endpoint stalls none of the engine's others",
          "[dma][resident]") {
  OneStuck one;
  auto& [owner, writer, l] = one;
  REQUIRE(l[2].endpoint.residency() == Residency::kOnHostReadOnly);
  DmaStream held(*writer), other(*writer);
  const uint64_t data = queue_word(held, l[2].ap, 0, 1);
  const uint64_t pointer = queue_word(held, l[2].ap, 8, 2);
  REQUIRE(eventually([&] { return owner->resident_set_stats().evictions == 1; }));
  REQUIRE(l[0].endpoint.residency() == Residency::kOnNic);

  uint64_t last = 0;
  for (uint64_t i = 1; i <= 8; ++i) last = queue_word(other, l[0].ap, 0, i);
  CHECK(other.wait(last, Deadline::after(30s)) == Errc::kOk);
  CHECK(other.error() == Errc::kOk);
  CHECK(word(l[0].region, 0) == 8);
  CHECK_FALSE(held.done(data));
  CHECK(word(l[2].region, 0) == 0);

  // Revoked while held: returned to the sender, nothing written, not lost.
  l[2].region.reset();
  CHECK(held.wait(pointer, Deadline::after(30s)) == Errc::kOk);
  CHECK(held.error() == Errc::kStaleCookie);
  CHECK(writer->dma().performed() == 10);
}

TEST_CASE("a held DMA request leaves the idle engine asleep: others' requests go at once, inline",
          "[dma][resident]") {
  OneStuck one;
  auto& [owner, writer, l] = one;
  DmaStream held(*writer), other(*writer);
  const uint64_t pending = queue_word(held, l[2].ap, 0, 1);
  REQUIRE(eventually([&] { return owner->resident_set_stats().evictions == 1; }));
  REQUIRE(l[0].endpoint.residency() == Residency::kOnNic);
  // Between its passes over the held request the engine sleeps, token
  // free: a submitter finds it asleep and performs its own request.
  const uint64_t inline_before = writer->dma().performed_inline();
  for (uint64_t i = 1; i <= 50; ++i) {
    const uint64_t t = queue_word(other, l[0].ap, 0, i);
    CHECK(other.wait(t, Deadline::after(30s)) == Errc::kOk);
  }
  CHECK(word(l[0].region, 0) == 50);
  CHECK(writer->dma().performed_inline() > inline_before);
  CHECK_FALSE(held.done(pending));
  l[2].region.reset();
  CHECK(held.wait(pending, Deadline::after(30s)) == Errc::kOk);
  CHECK(held.error() == Errc::kStaleCookie);
}

TEST_CASE("held DMA requests all land, in order per aperture, as endpoints come and go",
          "[dma][resident]") {
  // Three endpoints on one frame: nearly every request finds its target on
  // the host, while the engine also serves the others.
  auto owner = std::move(Nic::open(with_frames(1, 200us)).value());
  auto writer = std::move(Nic::open({}).value());
  constexpr size_t kLoci = 3;
  constexpr uint64_t kRounds = 200;
  auto l = loci(*owner, *writer, kLoci);
  std::vector<std::unique_ptr<DmaStream>> streams;
  for (size_t k = 0; k < kLoci; ++k) streams.push_back(std::make_unique<DmaStream>(*writer));

  // A data word, then the pointer that publishes it: the pointer never
  // shows a round whose data has not landed.
  std::atomic<bool> done{false};
  std::atomic<int> overtaken{0};
  std::thread reader([&] {
    while (!done.load()) {
      for (size_t k = 0; k < kLoci; ++k) {
        const uint64_t p = word(l[k].region, 8);
        if (word(l[k].region, 0) < p) overtaken.fetch_add(1);
      }
      std::this_thread::yield();
    }
  });
  std::vector<uint64_t> last(kLoci);
  for (uint64_t round = 1; round <= kRounds; ++round) {
    for (size_t k = 0; k < kLoci; ++k) {
      queue_word(*streams[k], l[k].ap, 0, round);
      last[k] = queue_word(*streams[k], l[k].ap, 8, round);
    }
  }
  for (size_t k = 0; k < kLoci; ++k) {
    CHECK(streams[k]->wait(last[k], Deadline::after(60s)) == Errc::kOk);
    CHECK(streams[k]->error() == Errc::kOk);
    CHECK(word(l[k].region, 0) == kRounds);
    CHECK(word(l[k].region, 8) == kRounds);
  }
  done = true;
  reader.join();
  CHECK(overtaken.load() == 0);
  CHECK(owner->resident_set_stats().remaps >= 2);
}

TEST_CASE("a stream past its share of held DMA requests is pushed back alone, and never waits",
          "[dma][resident]") {
  // As above: endpoint 2 stays on the host, endpoint 0 on the NIC.
  NicConfig c = with_frames(2, 3600s);
  c.replacement = Replacement::kLru;
  auto owner = std::move(Nic::open(c).value());
  NicConfig small;
  small.dma_queue_depth = 4;
  auto writer = std::move(Nic::open(small).value());
  auto l = loci(*owner, *writer, 3);
  REQUIRE(l[2].endpoint.residency() == Residency::kOnHostReadOnly);
  REQUIRE(l[0].ap.write_word(16, 1) == Errc::kOk);
  DmaStream held(*writer), other(*writer);
  // A peer whose endpoint stays on the host: its stream's requests are held
  // until it has its share, then a submit says so instead of waiting.
  uint64_t last = 0;
  int refused = 0;
  for (int i = 0; i < 64 && refused == 0; ++i) {
    auto t = held.write_word(l[2].ap, 0, static_cast<uint64_t>(i + 1));
    if (t) {
      last = t.value();
    } else {
      CHECK(t.error() == Errc::kWouldBlock);
      ++refused;
    }
  }
  CHECK(refused == 1);
  CHECK(last >= 1);
  REQUIRE(eventually([&] { return owner->resident_set_stats().evictions == 1; }));
  REQUIRE(l[0].endpoint.residency() == Residency::kOnNic);
  // Another stream, to a resident endpoint, still goes: the held list and
  // the queue are not the stopped peer's alone.
  for (uint64_t i = 1; i <= 16; ++i) {
    uint64_t t = 0;
    REQUIRE(eventually([&] {
      auto r = other.write_word(l[0].ap, 0, i);
      if (r) t = r.value();
      return static_cast<bool>(r);
    }));
    CHECK(other.wait(t, Deadline::after(30s)) == Errc::kOk);
  }
  CHECK(other.error() == Errc::kOk);
  CHECK(word(l[0].region, 0) == 16);
  CHECK(word(l[2].region, 0) == 0);
  // Revoked while held: returned to the sender, nothing written, not lost.
  l[2].region.reset();
  CHECK(held.wait(last, Deadline::after(30s)) == Errc::kOk);
  CHECK(held.error() == Errc::kStaleCookie);
  CHECK(writer->dma().performed() == last + 16);
}
