// ORB options of clanorb's transports. They must be registered before
// ORB_init parses its arguments, hence static registration.
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

ULongOption spin("clanSpinNs", "clanSpinNs = n >= 0 nanoseconds a blocked giop:clan call spins",
                 "-ORBclanSpinNs < n >= 0 >",
                 [](CORBA::ULong v) { fabric_options().spin_ns = v; },
                 [] { return CORBA::ULong(fabric_options().spin_ns); });
ULongOption ring("clanRingBytes", "clanRingBytes = n, power of two >= 128 KiB: giop:clan ring size",
                 "-ORBclanRingBytes < n >",
                 [](CORBA::ULong v) { fabric_options().ring_bytes = v; },
                 [] { return CORBA::ULong(fabric_options().ring_bytes); });
ULongOption dma("clanDmaThreshold",
                "clanDmaThreshold = n >= 0: giop:clan sends chunks of n bytes or more by DMA (0 = never)",
                "-ORBclanDmaThreshold < n >= 0 >",
                [](CORBA::ULong v) { fabric_options().dma_threshold = v; },
                [] { return CORBA::ULong(fabric_options().dma_threshold); });

struct Register {
  Register() {
    orbOptions::singleton().registerHandler(spin);
    orbOptions::singleton().registerHandler(ring);
    orbOptions::singleton().registerHandler(dma);
  }
} registered;

}  // namespace
}  // namespace clanorb
