// ORB options of clanorb's transports. They must be registered before
// ORB_init parses its arguments, hence static registration.
#include <initializer_list>

#include <omniORB4/CORBA.h>
#include <omniORB4/internal/orbOptions.h>

#include "orb_transports/common/fabric.hpp"

OMNI_USING_NAMESPACE(omni)

namespace clanorb {
namespace {

class ULongOption : public orbOptions::Handler {
 public:
  ULongOption(const char* key, const char* usage, const char* argv_usage,
              void (*set)(CORBA::ULong), CORBA::ULong (*get)())
      : Handler(key, usage, 1, argv_usage), set_(set), get_(get) {}
  void visit(const char* value, orbOptions::Source) override {
    CORBA::ULong v;
    if (!orbOptions::getULong(value, v)) {
      throw orbOptions::BadParam(key(), value, orbOptions::expect_ulong_msg);
    }
    set_(v);
  }
  void dump(orbOptions::sequenceString& result) override {
    orbOptions::addKVULong(key(), get_(), result);
  }

 private:
  void (*set_)(CORBA::ULong);
  CORBA::ULong (*get_)();
};

}  // namespace

// Called by every transport's static registration (so this file is linked
// even from a static library, and before any ORB_init parses options).
void register_orb_options() {
  // Function-local: constructed on first call, whichever static calls first.
  static ULongOption spin("clanSpinNs", "clanSpinNs = n >= 0 nanoseconds a blocked giop:clan call spins",
                   "-ORBclanSpinNs < n >= 0 >",
                   [](CORBA::ULong v) { fabric_options().spin_ns = v; },
                   [] { return CORBA::ULong(fabric_options().spin_ns); });
  static ULongOption ring("clanRingBytes", "clanRingBytes = n, power of two >= 128 KiB: giop:clan ring size",
                   "-ORBclanRingBytes < n >",
                   [](CORBA::ULong v) { fabric_options().ring_bytes = v; },
                   [] { return CORBA::ULong(fabric_options().ring_bytes); });
  static ULongOption dma("clanDmaThreshold",
                  "clanDmaThreshold = n >= 0: giop:clan sends chunks of n bytes or more by DMA (0 = never)",
                  "-ORBclanDmaThreshold < n >= 0 >",
                  [](CORBA::ULong v) { fabric_options().dma_threshold = v; },
                  [] { return CORBA::ULong(fabric_options().dma_threshold); });

  static ULongOption otp_loss("otpLossPpm", "otpLossPpm = n: giop:otp datagrams this process drops, per million",
                       "-ORBotpLossPpm < n <= 1000000 >",
                       [](CORBA::ULong v) { fabric_options().otp_loss_ppm = v > 1000000 ? 1000000 : v; },
                       [] { return CORBA::ULong(fabric_options().otp_loss_ppm); });
  static ULongOption otp_corrupt("otpCorruptPpm",
                          "otpCorruptPpm = n: giop:otp datagrams this process corrupts, per million",
                          "-ORBotpCorruptPpm < n <= 1000000 >",
                          [](CORBA::ULong v) { fabric_options().otp_corrupt_ppm = v > 1000000 ? 1000000 : v; },
                          [] { return CORBA::ULong(fabric_options().otp_corrupt_ppm); });
  static ULongOption otp_seed("otpSeed", "otpSeed = n: seed of the giop:otp fault model", "-ORBotpSeed < n >",
                       [](CORBA::ULong v) { fabric_options().otp_seed = v; },
                       [] { return CORBA::ULong(fabric_options().otp_seed); });
  static ULongOption otp_window("otpWindow", "otpWindow = n: giop:otp credits per direction (0 = none)",
                         "-ORBotpWindow < n >",
                         [](CORBA::ULong v) { fabric_options().otp_window = v; },
                         [] { return CORBA::ULong(fabric_options().otp_window); });
  static ULongOption otp_rto("otpRtoUs", "otpRtoUs = n: giop:otp retransmission timeout in microseconds",
                      "-ORBotpRtoUs < n >= 1 >",
                      [](CORBA::ULong v) { fabric_options().otp_rto_us = v ? v : 1; },
                      [] { return CORBA::ULong(fabric_options().otp_rto_us); });
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
