#include "via/mapping_cache.hpp"

#include "clan_emul/error_detail.hpp"

namespace via {

clan::Result<std::shared_ptr<clan::Aperture>> MappingCache::get(clan::Nic& nic,
                                                                const clan::RdmaCookie& c) {
  Key key{c.nic_id, c.region, c.generation, c.secret[0], c.secret[1]};
  std::lock_guard lock(mu_);
  if (auto it = index_.find(key); it != index_.end()) {
    ++hits_;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->aperture;
  }
  ++misses_;
  auto ap = nic.import(c);
  if (!ap) {
    // The import table may be full of our own cached mappings: make room once.
    if (ap.error() != clan::Errc::kNoResources || lru_.empty()) return ap.error();
    index_.erase(lru_.back().key);
    lru_.pop_back();
    ++evictions_;
    ap = nic.import(c);
    if (!ap) return ap.error();
    clan::clear_error();  // recovered: the full table's words must not name a later failure
  }
  auto shared = std::make_shared<clan::Aperture>(std::move(ap.value()));
  lru_.push_front(Entry{key, shared});
  index_[key] = lru_.begin();
  trim();
  return shared;
}

void MappingCache::set_capacity(size_t n) {
  std::lock_guard lock(mu_);
  capacity_ = n ? n : 1;
  trim();
}

void MappingCache::trim() {
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().key);
    lru_.pop_back();
    ++evictions_;
  }
}

}  // namespace via
