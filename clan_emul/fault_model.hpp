// The seeded fault model of the emulated ATM-like link (paper 002: an
// unreliable, in-order datagram network that discards frames failing their
// CRC). It is applied on the sending side, per datagram, in send order:
//
//   drop     the frame is not sent at all;
//   corrupt  one byte of the finished frame (after its CRC was computed) is
//            XORed with a non-zero mask, so the receiver's CRC check fails;
//   deliver  the frame goes out unchanged.
//
// plus an optional fixed link delay (frames are held and released in order).
//
// Determinism: the decisions depend only on the seed and on the index of the
// datagram (each decision consumes exactly two PRNG outputs, whatever the
// frame size), never on the standard library: the PRNG is xoshiro256**
// seeded by splitmix64, and uniform doubles take the top 53 bits.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace clan {

struct FaultModel {
  uint64_t seed = 0;
  double drop_rate = 0.0;     // probability in [0, 1]
  double corrupt_rate = 0.0;  // probability in [0, 1]; drop_rate + corrupt_rate <= 1
  std::chrono::nanoseconds delay{0};  // fixed one-way link delay, >= 0
};

// Rates are probabilities summing to at most 1, the delay is not negative.
bool valid(const FaultModel& model);

// splitmix64: one step of the seeding generator (also handy for test data).
uint64_t splitmix64(uint64_t& state);

// xoshiro256** 1.0 (Blackman and Vigna), our own code so that sequences are
// identical across compilers and standard libraries.
class Xoshiro256ss {
 public:
  explicit Xoshiro256ss(uint64_t seed);
  uint64_t next();
  // Uniform in [0, 1) from the top 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n) by 128-bit multiply (Lemire, without rejection: the
  // bias is below n / 2^64, irrelevant here and deterministic anyway).
  static uint64_t scale(uint64_t r, uint64_t n) {
    __extension__ typedef unsigned __int128 u128;  // GCC/Clang; silences -Wpedantic
    return static_cast<uint64_t>((static_cast<u128>(r) * n) >> 64);
  }

 private:
  uint64_t s_[4];
};

enum class FaultAction : uint8_t { kDeliver, kDrop, kCorrupt };

constexpr const char* to_string(FaultAction a) {
  switch (a) {
    case FaultAction::kDeliver: return "deliver";
    case FaultAction::kDrop: return "drop";
    case FaultAction::kCorrupt: return "corrupt";
  }
  return "unknown";
}

struct FaultDecision {
  FaultAction action = FaultAction::kDeliver;
  // For kCorrupt: the byte to damage, as a fraction of the frame (apply with
  // offset_in(frame_len)) and the non-zero XOR mask.
  uint64_t position = 0;
  uint8_t mask = 0;
  size_t offset_in(size_t frame_len) const { return Xoshiro256ss::scale(position, frame_len); }
};

// The per-datagram decision stream of one link. Thread safety: one thread at
// a time. Two injectors built from equal models yield equal streams.
class FaultInjector {
 public:
  explicit FaultInjector(const FaultModel& model) : model_(model), rng_(model.seed) {}
  FaultDecision next();
  // Applies a kCorrupt decision to a finished frame (no-op otherwise).
  static void apply(const FaultDecision& d, void* frame, size_t frame_len);
  const FaultModel& model() const { return model_; }

 private:
  FaultModel model_;
  Xoshiro256ss rng_;
};

}  // namespace clan
