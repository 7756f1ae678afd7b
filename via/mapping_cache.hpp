// The PIO mapping cache (paper 001 sect. 3.5): imported remote regions
// (apertures), least recently used evicted first. Entries are regions of
// registered memory, not buffers, so a few cover many receive buffers.
// Apertures are shared: a send whose DMA is in flight keeps its aperture
// alive after eviction. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "clan_emul/aperture.hpp"
#include "clan_emul/nic.hpp"

namespace via {

class MappingCache {
 public:
  explicit MappingCache(size_t capacity) : capacity_(capacity ? capacity : 1) {}
  clan::Result<std::shared_ptr<clan::Aperture>> get(clan::Nic& nic, const clan::RdmaCookie& c);
  void set_capacity(size_t n);
  size_t capacity() {
    std::lock_guard lock(mu_);
    return capacity_;
  }
  uint64_t hits() const { return hits_.load(); }
  uint64_t misses() const { return misses_.load(); }
  uint64_t evictions() const { return evictions_.load(); }

 private:
  using Key = std::tuple<uint64_t, uint32_t, uint32_t, uint64_t, uint64_t>;
  struct Entry {
    Key key;
    std::shared_ptr<clan::Aperture> aperture;
  };
  void trim();

  std::mutex mu_;
  size_t capacity_;
  std::list<Entry> lru_;  // most recent first
  std::map<Key, std::list<Entry>::iterator> index_;
  std::atomic<uint64_t> hits_{0}, misses_{0}, evictions_{0};
};

}  // namespace via
