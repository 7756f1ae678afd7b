#include "clan_emul/fault_model.hpp"

#include <cmath>

namespace clan {

bool valid(const FaultModel& m) {
  auto prob = [](double p) { return std::isfinite(p) && p >= 0.0 && p <= 1.0; };
  return prob(m.drop_rate) && prob(m.corrupt_rate) && m.drop_rate + m.corrupt_rate <= 1.0 &&
         m.delay.count() >= 0;
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

Xoshiro256ss::Xoshiro256ss(uint64_t seed) {
  uint64_t sm = seed;
  for (auto& s : s_) s = splitmix64(sm);  // never all zero: splitmix64 is a bijection of a counter
}

uint64_t Xoshiro256ss::next() {
  auto rotl = [](uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

FaultDecision FaultInjector::next() {
  // A faultless model decides nothing: no draws (the rates never change).
  if (model_.drop_rate <= 0 && model_.corrupt_rate <= 0) return {};
  // Always two draws, so decision i depends on the seed and i only.
  const double u = rng_.uniform();
  const uint64_t where = rng_.next();
  FaultDecision d;
  if (u < model_.drop_rate) {
    d.action = FaultAction::kDrop;
  } else if (u < model_.drop_rate + model_.corrupt_rate) {
    d.action = FaultAction::kCorrupt;
    d.position = where;
    d.mask = static_cast<uint8_t>(1 + Xoshiro256ss::scale(where * 0x9e3779b97f4a7c15ull, 255));
  }
  return d;
}

void FaultInjector::apply(const FaultDecision& d, void* frame, size_t frame_len) {
  if (d.action != FaultAction::kCorrupt || frame_len == 0) return;
  static_cast<unsigned char*>(frame)[d.offset_in(frame_len)] ^= d.mask;
}

}  // namespace clan
