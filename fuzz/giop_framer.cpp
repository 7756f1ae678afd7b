// GIOP framer (orb_transports/otp/giop_framer.*): a byte stream, first whole
// and then cut into pieces at input-chosen places. Contracts checked: a
// piece never claims more bytes than it was given and always makes progress;
// a call ends at a message header boundary, and only with its flags known;
// how the stream is cut changes nothing: both framers find the same calls
// (end offset, answer expected, close) and the same first invalid offset.
#include <fuzzer/FuzzedDataProvider.h>

#include <vector>

#include "fuzz/check.hpp"
#include "orb_transports/otp/giop_framer.hpp"

namespace {

struct Call {
  size_t end;
  bool expects_reply, close;
  bool operator==(const Call&) const = default;
};

struct Outcome {
  std::vector<Call> calls;
  size_t invalid_at = SIZE_MAX;  // stream offset of the piece found invalid
};

// Frames `stream` handed over in chunks of the given sizes (the rest at the end).
Outcome frame(const std::vector<std::byte>& stream, const std::vector<size_t>& cuts) {
  clanorb::GiopFramer f;
  Outcome out;
  size_t at = 0, cut = 0;
  while (at < stream.size()) {
    size_t chunk = cut < cuts.size() ? cuts[cut++] : stream.size() - at;
    if (chunk > stream.size() - at) chunk = stream.size() - at;
    size_t done = 0;
    while (done < chunk) {  // as the transport does: one piece per call at most
      const auto p = f.next(stream.data() + at + done, chunk - done);
      if (!p.valid) {
        out.invalid_at = at + done;
        return out;
      }
      FUZZ_CHECK(p.len <= chunk - done);
      FUZZ_CHECK(p.len > 0);
      done += p.len;
      if (p.ends_call) {
        FUZZ_CHECK(f.at_header());
        FUZZ_CHECK(p.known);
        out.calls.push_back(Call{at + done, p.expects_reply, p.close});
      }
    }
    at += chunk;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  std::vector<size_t> cuts(in.ConsumeIntegralInRange<size_t>(0, 32));
  for (auto& c : cuts) c = in.ConsumeIntegralInRange<size_t>(1, 64);
  std::vector<std::byte> stream;
  for (uint8_t b : in.ConsumeRemainingBytes<uint8_t>()) stream.push_back(std::byte{b});
  const Outcome whole = frame(stream, {});
  const Outcome cut = frame(stream, cuts);
  FUZZ_CHECK(whole.calls == cut.calls);
  // Validity is decided per message header: the same header in both, though
  // the piece that reached it may start earlier in one of them.
  FUZZ_CHECK((whole.invalid_at == SIZE_MAX) == (cut.invalid_at == SIZE_MAX));
  return 0;
}
