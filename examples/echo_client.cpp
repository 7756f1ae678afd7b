// echo_client IOR [--calls N] [--warmup N] [--size BYTES] [--samples F] [--hold S] [--pause-us N]
// Null-echo round-trip latency: --warmup calls, then --calls timed calls of
// echoString with a string of --size bytes (empty by default), each timed on
// the steady clock. Prints one JSON line:
//   {"count":N,"p50_us":..,"p90_us":..,"p99_us":..,"max_us":..,"mean_us":..}
// --samples F writes every round trip (us, one per line); --hold S keeps the
// connection open S seconds after printing (idle-CPU measurements);
// --pause-us N sleeps N us before each timed call (untimed): the latency of
// a call to a server that has been idle that long.
// Calls time out after -ORBclientCallTimeOutPeriod (default here: 10 s).
#include <thread>

#include "echo.hh"
#include "orb_common.hpp"

int main(int argc, char** argv) {
  const char* usage =
      "echo_client IOR [--calls N] [--warmup N] [--size BYTES] [--samples F] [--hold SECONDS] [--pause-us N] "
      "[-ORB options]";
  return orbx::guarded_main("echo_client", usage, [&]() -> int {
    orbx::OrbArgs oa(argc, argv);
    orbx::add_client_timeouts(oa, "10000");
    return orbx::run_with_orb("echo_client", usage, oa, [](CORBA::ORB_ptr orb, int ac, char** av) -> int {
      orbx::Args args(ac, av);
      uint64_t calls = args.take_u64("--calls", 10000);
      uint64_t warmup = args.take_u64("--warmup", 1000);
      uint64_t size = args.take_u64("--size", 0);
      std::string samples_path = args.take("--samples", "");
      double hold = args.take_double("--hold", 0);
      uint64_t pause_us = args.take_u64("--pause-us", 0);
      std::string ior = args.positional("IOR");
      args.finish();

      CORBA::Object_var obj = orb->string_to_object(ior.c_str());
      echo_var ref = echo::_narrow(obj);
      if (CORBA::is_nil(ref)) throw std::runtime_error("IOR is not an echo object");
      std::string msg(size, 'x');

      for (uint64_t i = 0; i < warmup; ++i) {
        CORBA::String_var r = ref->echoString(msg.c_str());
      }
      std::vector<uint64_t> ns;
      ns.reserve(calls);
      for (uint64_t i = 0; i < calls; ++i) {
        if (pause_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(pause_us));
        auto t0 = orbx::Clock::now();
        CORBA::String_var r = ref->echoString(msg.c_str());
        auto t1 = orbx::Clock::now();
        ns.push_back(orbx::elapsed_ns(t0, t1));
        if (i == 0 && std::strlen(r.in()) != size) throw std::runtime_error("echo returned a different string");
      }
      orbx::write_samples(samples_path, ns);
      std::cout << orbx::latency_json(std::move(ns)) << std::endl;
      if (hold > 0) std::this_thread::sleep_for(std::chrono::duration<double>(hold));
      return 0;
    });
  });
}
