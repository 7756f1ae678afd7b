#include "fabric_bench/memcpy_bandwidth.hpp"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "bench/session.hpp"
#include "fabric_bench/words.hpp"

namespace fabric_bench {

double memcpy_bandwidth(size_t block, double secs) {
  using Clock = std::chrono::steady_clock;
  std::unique_ptr<std::byte, void (*)(void*)> src(static_cast<std::byte*>(std::aligned_alloc(64, block)), std::free);
  std::unique_ptr<std::byte, void (*)(void*)> dst(static_cast<std::byte*>(std::aligned_alloc(64, block)), std::free);
  if (!src || !dst) bench::die("out of memory");
  std::memset(src.get(), 1, block);
  std::memset(dst.get(), 2, block);
  const int batch = block >= (1u << 20) ? 1 : 256;
  for (int i = 0; i < (block >= (1u << 20) ? 1 : 64); ++i) {  // warm-up
    std::memcpy(dst.get(), src.get(), block);
    clobber(dst.get());
  }
  uint64_t copies = 0;
  const auto t0 = Clock::now();
  auto t1 = t0;
  do {
    for (int i = 0; i < batch; ++i) {
      std::memcpy(dst.get(), src.get(), block);
      clobber(dst.get());
      clobber(src.get());
    }
    copies += static_cast<uint64_t>(batch);
    t1 = Clock::now();
  } while (std::chrono::duration<double>(t1 - t0).count() < secs);
  return static_cast<double>(copies * block) / std::chrono::duration<double>(t1 - t0).count();
}

}  // namespace fabric_bench
