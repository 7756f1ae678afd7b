// ttcp_client IOR --mode oneway|exactly|marshalled --size BYTES --total BYTES
// Sends --total bytes in --size chunks: oneway receive_at_most_once(Buffer),
// two-way receive_exactly_once(Buffer), or receive_marshalled(PairSeq) with
// size/8 Pair elements (each marshalled field by field). A one-way transfer
// ends by polling received() until the server has counted every byte, so the
// clock stops only when the data has arrived. Sizes accept K/M suffixes.
// Prints one JSON line: {"mode":..,"size":..,"bytes":..,"seconds":..,"mb_per_s":..}
// (MB = 10^6 bytes). Calls time out after -ORBclientCallTimeOutPeriod
// (default here: 30 s).
#include <thread>

#include "orb_common.hpp"
#include "ttcp.hh"

namespace {

struct Options {
  std::string mode;
  uint64_t size = 0;
  uint64_t total = 0;
  std::string ior;
};

Options parse(int argc, char** argv) {
  orbx::Args args(argc, argv);
  Options o;
  o.mode = args.take("--mode", "exactly");
  o.size = args.take_u64("--size", 65536);
  o.total = args.take_u64("--total", 10 * 1024 * 1024);
  o.ior = args.positional("IOR");
  args.finish();
  if (o.mode != "oneway" && o.mode != "exactly" && o.mode != "marshalled")
    throw orbx::UsageError("--mode must be oneway, exactly or marshalled");
  if (o.size == 0 || o.size > 64 * 1024 * 1024) throw orbx::UsageError("--size must be 1 .. 64M");
  if (o.mode == "marshalled" && (o.size < 8 || o.size % 8 != 0))
    throw orbx::UsageError("--size must be a multiple of 8 for marshalled");
  return o;
}

// What one call sends: a Buffer of `size` octets, or size/8 Pairs.
struct Payload {
  ttcp::Buffer buf;
  ttcp::PairSeq pairs;

  Payload(const std::string& mode, uint64_t size) {
    if (mode == "marshalled") {
      auto n = static_cast<CORBA::ULong>(size / 8);
      pairs.length(n);
      for (CORBA::ULong i = 0; i < n; ++i) {
        pairs[i].a = static_cast<CORBA::Long>(i);
        pairs[i].b = -static_cast<CORBA::Long>(i);
      }
    } else {
      buf.length(static_cast<CORBA::ULong>(size));
      for (CORBA::ULong i = 0; i < buf.length(); ++i) buf[i] = static_cast<CORBA::Octet>(i * 7);
    }
  }
};

void send(ttcp_ptr ref, const std::string& mode, const Payload& p) {
  if (mode == "oneway") ref->receive_at_most_once(p.buf);
  else if (mode == "exactly") ref->receive_exactly_once(p.buf);
  else ref->receive_marshalled(p.pairs);
}

// The bytes the servant counted since `base`, polled for up to 30 s: one-way
// requests may still be queued or in upcalls on other threads.
uint64_t wait_counted(ttcp_ptr ref, uint64_t base, uint64_t bytes) {
  uint64_t got = ref->received() - base;
  auto give_up = orbx::Clock::now() + std::chrono::seconds(30);
  while (got < bytes && orbx::Clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    got = ref->received() - base;
  }
  return got;
}

int run(CORBA::ORB_ptr orb, const Options& o) {
  uint64_t calls = std::max<uint64_t>(1, (o.total + o.size - 1) / o.size);
  uint64_t bytes = calls * o.size;
  CORBA::Object_var obj = orb->string_to_object(o.ior.c_str());
  ttcp_var ref = ttcp::_narrow(obj);
  if (CORBA::is_nil(ref)) throw std::runtime_error("IOR is not a ttcp object");
  const Payload payload(o.mode, o.size);

  // One untimed call of the same size first: it opens the connection and
  // takes the first-time costs (buffers allocated and touched on both
  // sides) out of the figure, which at 10 calls per point they would
  // dominate. Exactly-once, so the servant has counted it before `base`.
  send(ref, o.mode == "marshalled" ? o.mode : "exactly", payload);
  uint64_t base = ref->received();

  auto t0 = orbx::Clock::now();
  for (uint64_t i = 0; i < calls; ++i) send(ref, o.mode, payload);
  uint64_t got = wait_counted(ref, base, bytes);
  auto t1 = orbx::Clock::now();
  if (got != bytes) {
    std::ostringstream os;
    os << "server counted " << got << " bytes of " << bytes << " sent"
       << (o.mode == "oneway" ? " (one-way requests lost?)" : "");
    throw std::runtime_error(os.str());
  }
  double secs = static_cast<double>(orbx::elapsed_ns(t0, t1)) / 1e9;
  char out[256];
  std::snprintf(out, sizeof out, "{\"mode\":\"%s\",\"size\":%llu,\"bytes\":%llu,\"seconds\":%.6f,\"mb_per_s\":%.3f}",
                o.mode.c_str(), static_cast<unsigned long long>(o.size), static_cast<unsigned long long>(bytes), secs,
                secs > 0 ? static_cast<double>(bytes) / secs / 1e6 : 0.0);
  std::cout << out << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage =
      "ttcp_client IOR --mode oneway|exactly|marshalled --size BYTES --total BYTES [-ORB options]";
  return orbx::guarded_main("ttcp_client", usage, [&]() -> int {
    orbx::OrbArgs oa(argc, argv);
    orbx::add_client_timeouts(oa, "30000");
    return orbx::run_with_orb("ttcp_client", usage, oa,
                              [](CORBA::ORB_ptr orb, int ac, char** av) { return run(orb, parse(ac, av)); });
  });
}
