// Handle validation: every handle given out is registered with its kind; a
// call with a stale or foreign handle gets VIP_INVALID_PARAMETER. A thread
// that uses the same handles again finds them without the shared lock.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "via/handles.hpp"

namespace via {

namespace {
std::mutex g_handles_mu;
std::unordered_map<const void*, Kind>& handles() {
  static std::unordered_map<const void*, Kind> h;
  return h;
}
// Bumped (under g_handles_mu) whenever a handle goes.
std::atomic<uint64_t> g_handles_epoch{1};
// Per thread and kind: the last few handles found valid, and in which epoch.
struct SeenHandle {
  const void* handle = nullptr;
  uint64_t epoch = 0;
};
constexpr size_t kSeenPerKind = 4;
thread_local SeenHandle t_seen[5][kSeenPerKind];
thread_local uint32_t t_seen_next[5];
}  // namespace

void register_handle(const void* h, Kind k) {
  std::lock_guard lock(g_handles_mu);
  handles()[h] = k;
}
void unregister_handle(const void* h) {
  std::lock_guard lock(g_handles_mu);
  handles().erase(h);
  g_handles_epoch.fetch_add(1, std::memory_order_release);
}
bool is_handle(const void* h, Kind k) {
  if (h == nullptr) return false;
  // The common case, a thread using the same handles again: no shared lock.
  const auto kind = static_cast<size_t>(k);
  const uint64_t epoch = g_handles_epoch.load(std::memory_order_acquire);
  for (const SeenHandle& seen : t_seen[kind]) {
    if (seen.handle == h && seen.epoch == epoch) return true;
  }
  std::lock_guard lock(g_handles_mu);
  auto it = handles().find(h);
  if (it == handles().end() || it->second != k) return false;
  t_seen[kind][t_seen_next[kind]++ % kSeenPerKind] =
      SeenHandle{h, g_handles_epoch.load(std::memory_order_relaxed)};
  return true;
}

}  // namespace via
