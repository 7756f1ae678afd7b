#include "bench/start_signal.hpp"

#include <sys/mman.h>

#include <chrono>
#include <new>

#include "bench/session.hpp"
#include "clan_emul/deadline.hpp"
#include "clan_emul/futex.hpp"

namespace bench {

StartSignal::StartSignal() {
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) die("mmap of the shared page failed");
  count_ = new (page) std::atomic<uint64_t>(0);
}

void StartSignal::wait_for(uint64_t n, const std::string& what) const {
  const clan::Deadline dl = clan::Deadline::after(std::chrono::seconds(30));
  for (uint32_t spins = 0; count_->load(std::memory_order_acquire) != n;) {
    clan::cpu_relax();
    if ((++spins & 0xffff) == 0 && dl.expired()) die("no handshake from the peer for " + what);
  }
}

}  // namespace bench
