// ORB options of clanorb's transports. They must be registered before
// ORB_init parses its arguments, hence static registration.
#include <cstdint>
#include <initializer_list>

#include <omniORB4/CORBA.h>
#include <omniORB4/internal/orbOptions.h>

#include "orb_transports/common/fabric.hpp"

OMNI_USING_NAMESPACE(omni)

namespace clanorb {
namespace {

// A numeric option. `check` (optional) says what is wrong with a value, or
// nullptr: ORB_init then refuses it (INITIALIZE, with the option and the
// reason logged) rather than clamping it or failing later at connect time.
class ULongOption : public orbOptions::Handler {
 public:
  using Check = const char* (*)(CORBA::ULong);
  ULongOption(const char* key, const char* usage, const char* argv_usage,
              void (*set)(CORBA::ULong), CORBA::ULong (*get)(), Check check = nullptr)
      : Handler(key, usage, 1, argv_usage), set_(set), get_(get), check_(check) {}
  void visit(const char* value, orbOptions::Source) override {
    CORBA::ULong v;
    if (!orbOptions::getULong(value, v)) {
      throw orbOptions::BadParam(key(), value, orbOptions::expect_ulong_msg);
    }
    if (const char* why = check_ ? check_(v) : nullptr) throw orbOptions::BadParam(key(), value, why);
    set_(v);
  }
  void dump(orbOptions::sequenceString& result) override {
    orbOptions::addKVULong(key(), get_(), result);
  }

 private:
  void (*set_)(CORBA::ULong);
  CORBA::ULong (*get_)();
  Check check_;
};

// giop:clan's ring must hold its largest message (64 KiB) twice over, and a
// peer accepts rings up to 1 GiB.
const char* check_ring_bytes(CORBA::ULong v) {
  const bool pow2 = v != 0 && (v & (v - 1)) == 0;
  return pow2 && v >= 256 * 1024 && v <= (1u << 30) ? nullptr
                                                     : "Expect a power of two from 262144 (256 KiB) to 1073741824";
}
// Loss and corruption are shares of the same datagrams.
const char* check_loss_ppm(CORBA::ULong v) {
  return uint64_t{v} + fabric_options().otp_corrupt_ppm <= 1000000
             ? nullptr
             : "Expect at most 1000000 per million, together with otpCorruptPpm";
}
const char* check_corrupt_ppm(CORBA::ULong v) {
  return uint64_t{v} + fabric_options().otp_loss_ppm <= 1000000
             ? nullptr
             : "Expect at most 1000000 per million, together with otpLossPpm";
}
// Each side's ring must hold a window of 9 KiB datagrams.
constexpr CORBA::ULong kMaxOtpWindow = 1024;
const char* check_otp_window(CORBA::ULong v) {
  return v <= kMaxOtpWindow ? nullptr : "Expect 0 (no flow control) to 1024 credits";
}
const char* check_rto_us(CORBA::ULong v) { return v >= 1 ? nullptr : "Expect at least 1 microsecond"; }

}  // namespace

// Called by every transport's static registration (so this file is linked
// even from a static library, and before any ORB_init parses options).
void register_orb_options() {
  // Function-local: constructed on first call, whichever static calls first.
  static ULongOption spin("clanSpinNs", "clanSpinNs = n >= 0 nanoseconds a blocked giop:clan call spins",
                   "-ORBclanSpinNs < n >= 0 >",
                   [](CORBA::ULong v) { fabric_options().spin_ns = v; },
                   [] { return CORBA::ULong(fabric_options().spin_ns); });
  static ULongOption ring("clanRingBytes",
                   "clanRingBytes = n, a power of two from 256 KiB to 1 GiB: giop:clan's receive ring, "
                   "giop:via's receive buffers",
                   "-ORBclanRingBytes < n: power of two, 262144 .. 1073741824 >",
                   [](CORBA::ULong v) { fabric_options().ring_bytes = v; },
                   [] { return CORBA::ULong(fabric_options().ring_bytes); }, check_ring_bytes);
  static ULongOption dma("clanDmaThreshold",
                  "clanDmaThreshold = n >= 0: giop:clan sends chunks of n bytes or more by DMA (0 = never)",
                  "-ORBclanDmaThreshold < n >= 0 >",
                  [](CORBA::ULong v) { fabric_options().dma_threshold = v; },
                  [] { return CORBA::ULong(fabric_options().dma_threshold); });

  static ULongOption otp_loss("otpLossPpm", "otpLossPpm = n: giop:otp datagrams this process drops, per million",
                       "-ORBotpLossPpm < n <= 1000000 >",
                       [](CORBA::ULong v) { fabric_options().otp_loss_ppm = v; },
                       [] { return CORBA::ULong(fabric_options().otp_loss_ppm); }, check_loss_ppm);
  static ULongOption otp_corrupt("otpCorruptPpm",
                          "otpCorruptPpm = n: giop:otp datagrams this process corrupts, per million",
                          "-ORBotpCorruptPpm < n <= 1000000 >",
                          [](CORBA::ULong v) { fabric_options().otp_corrupt_ppm = v; },
                          [] { return CORBA::ULong(fabric_options().otp_corrupt_ppm); }, check_corrupt_ppm);
  static ULongOption otp_seed("otpSeed", "otpSeed = n: seed of the giop:otp fault model", "-ORBotpSeed < n >",
                       [](CORBA::ULong v) { fabric_options().otp_seed = v; },
                       [] { return CORBA::ULong(fabric_options().otp_seed); });
  static ULongOption otp_window("otpWindow", "otpWindow = n <= 1024: giop:otp credits per direction (0 = none)",
                         "-ORBotpWindow < 0 .. 1024 >",
                         [](CORBA::ULong v) { fabric_options().otp_window = v; },
                         [] { return CORBA::ULong(fabric_options().otp_window); }, check_otp_window);
  static ULongOption otp_rto("otpRtoUs", "otpRtoUs = n: giop:otp retransmission timeout in microseconds",
                      "-ORBotpRtoUs < n >= 1 >",
                      [](CORBA::ULong v) { fabric_options().otp_rto_us = v; },
                      [] { return CORBA::ULong(fabric_options().otp_rto_us); }, check_rto_us);
  static const bool done = [] {
    for (orbOptions::Handler* h : std::initializer_list<orbOptions::Handler*>{
             &spin, &ring, &dma, &otp_loss, &otp_corrupt, &otp_seed, &otp_window, &otp_rto}) {
      orbOptions::singleton().registerHandler(*h);
    }
    return true;
  }();
  (void)done;
}

}  // namespace clanorb
