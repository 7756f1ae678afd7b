#include "sim_link.hpp"

#include <algorithm>
#include <memory>

namespace otp {

SimLink::SimLink(SimLinkConfig config) : cfg_(config), rng_(config.seed) {}

bool SimLink::send(std::vector<std::byte> datagram, uint64_t now_ns) {
  const uint64_t index = index_++;
  ++stats_.offered;
  if (mask_ && mask_(index, datagram.data(), datagram.size())) {
    ++stats_.dropped_mask;
    return false;
  }
  // Always draw, so that a mask does not shift the random loss pattern.
  const double u = rng_.uniform();
  if (u < cfg_.loss_rate) {
    ++stats_.dropped_random;
    return false;
  }
  // In order: never arrive before the previous datagram.
  const uint64_t arrival =
      std::max(now_ns + cfg_.latency_ns + cfg_.ns_per_byte * datagram.size(), last_arrival_);
  last_arrival_ = arrival;
  queue_.push_back(InFlight{arrival, std::move(datagram)});
  return true;
}

std::optional<uint64_t> SimLink::next_arrival() const {
  if (queue_.empty()) return std::nullopt;
  return queue_.front().arrival;
}

bool SimLink::receive(uint64_t now_ns, std::vector<std::byte>& out) {
  if (queue_.empty() || queue_.front().arrival > now_ns) return false;
  out = std::move(queue_.front().bytes);
  queue_.pop_front();
  ++stats_.delivered;
  return true;
}

SimLink::LossMask drop_nth(uint64_t n) {
  return [n](uint64_t index, const std::byte*, size_t) { return index == n; };
}

SimLink::LossMask drop_type(PacketType t, std::optional<uint64_t> n) {
  auto seen = std::make_shared<uint64_t>(0);
  return [t, n, seen](uint64_t, const std::byte* data, size_t len) {
    if (len < 1 || std::to_integer<uint8_t>(data[0]) != static_cast<uint8_t>(t)) return false;
    const uint64_t k = (*seen)++;
    return !n || k == *n;
  };
}

SimLink::LossMask drop_indices(std::vector<uint64_t> indices) {
  return [indices = std::move(indices)](uint64_t index, const std::byte*, size_t) {
    return std::find(indices.begin(), indices.end(), index) != indices.end();
  };
}

}  // namespace otp
