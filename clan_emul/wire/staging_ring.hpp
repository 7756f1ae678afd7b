// A wire connection's transmit buffer: a write larger than the provider's
// inject size is copied here and posted from here, so the writer's buffer
// is free when write() returns, as after a PIO write. Space comes back as
// the provider completes the writes, which it does in order on one
// connection (a byte stream for the tcp provider). One writer at a time
// (the link's lock); completions only count, from whichever thread reads
// the completion queue.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace clan::wire {

class StagingRing {
 public:
  explicit StagingRing(size_t bytes, size_t max_in_flight = 1024)
      : buffer_(new std::byte[bytes]), size_(bytes), ends_(max_in_flight) {}

  size_t size() const { return size_; }
  // Room for `n` contiguous bytes, or nullptr while the ring is full.
  std::byte* reserve(size_t n) {
    reclaim();
    if (posted_ - popped_ == ends_.size()) return nullptr;
    const size_t at = head_ % size_;
    const size_t skip = at + n > size_ ? size_ - at : 0;  // never split a write
    if (n > size_ || head_ + skip + n - tail_ > size_) return nullptr;
    head_ += skip;
    return buffer_.get() + head_ % size_;
  }
  // The reserved bytes were posted: they come back at its completion.
  void commit(size_t n) {
    head_ += n;
    ends_[posted_++ % ends_.size()] = head_;
  }
  // One posted write completed (or failed): called from any thread.
  void completed() { done_.fetch_add(1, std::memory_order_release); }
  size_t in_flight() const { return posted_ - done_.load(std::memory_order_acquire); }

 private:
  void reclaim() {
    const uint64_t done = done_.load(std::memory_order_acquire);
    while (popped_ < done && popped_ < posted_) tail_ = ends_[popped_++ % ends_.size()];
  }

  std::unique_ptr<std::byte[]> buffer_;
  size_t size_;
  uint64_t head_ = 0, tail_ = 0;      // bytes reserved / given back, free-running
  uint64_t posted_ = 0, popped_ = 0;  // writes posted / given back
  std::vector<uint64_t> ends_;        // head_ after each posted write
  std::atomic<uint64_t> done_{0};     // completions seen
};

}  // namespace clan::wire
