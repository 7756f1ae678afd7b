// rate_client IOR --clients N --seconds S [--warmup S] [--wait-go]
// Request rate (paper 000 Table 4): N threads, each with one outstanding
// null echo at a time, in a loop. After --warmup seconds (default 0.5) the
// completed calls are counted for --seconds. With --wait-go, once every
// thread's connection is open the program prints "ready" and waits for a
// line on stdin before the warm-up starts: a runner starting several client
// processes against one server lets them all connect, then starts them
// together, so their counting windows coincide. Prints one JSON line:
//   {"clients":N,"requests":..,"seconds":..,"requests_per_s":..,"sockets":..,"connect_retries":..}
// omniORB opens one connection per concurrent call (oneCallPerConnection=1),
// up to -ORBmaxGIOPConnectionPerServer, which this program raises to 64 unless
// given, so N threads use N connections. "sockets" is the number of socket
// descriptors this process opened (for tcp and unix: the connections; other
// transports may use none or several per connection).
#include <dirent.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "echo.hh"
#include "orb_common.hpp"

namespace {

int count_sockets() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    char link[256];
    std::string path = std::string("/proc/self/fd/") + e->d_name;
    ssize_t len = readlink(path.c_str(), link, sizeof link - 1);
    if (len > 0) {
      link[len] = '\0';
      if (std::strncmp(link, "socket:", 7) == 0) ++n;
    }
  }
  closedir(d);
  return n;
}

struct alignas(64) Counter {
  std::atomic<uint64_t> calls{0};
};

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "rate_client IOR --clients N --seconds S [--warmup S] [--wait-go] [-ORB options]";
  return orbx::guarded_main("rate_client", usage, [&]() -> int {
    orbx::OrbArgs oa(argc, argv);
    oa.add_default("-ORBmaxGIOPConnectionPerServer", "64");
    oa.add_default("-ORBclientCallTimeOutPeriod", "10000");
    oa.add_default("-ORBclientConnectTimeOutPeriod", "5000");
    int sockets_before = count_sockets();
    CORBA::ORB_var orb = CORBA::ORB_init(oa.argc(), oa.argv());
    int rc = orbx::guarded_main("rate_client", usage, [&]() -> int {
      orbx::Args args(oa.argc(), oa.argv());
      uint64_t clients = args.take_u64("--clients", 1);
      double seconds = args.take_double("--seconds", 2);
      double warmup = args.take_double("--warmup", 0.5);
      const bool wait_go = args.take_flag("--wait-go");
      std::string ior = args.positional("IOR");
      args.finish();
      if (clients == 0 || clients > 1000) throw orbx::UsageError("--clients must be 1 .. 1000");

      CORBA::Object_var obj = orb->string_to_object(ior.c_str());
      echo_var ref = echo::_narrow(obj);
      if (CORBA::is_nil(ref)) throw std::runtime_error("IOR is not an echo object");

      std::vector<Counter> counters(clients);
      std::atomic<bool> stop{false};
      std::atomic<uint64_t> connected{0};  // threads whose first call returned
      std::atomic<uint64_t> retries{0};
      std::mutex err_mu;
      std::string first_error;
      // omniORB's giop:unix endpoint listens with a backlog of 5, and a
      // non-blocking AF_UNIX connect to a full backlog fails at once
      // (TRANSIENT_ConnectFailed) instead of waiting as TCP does. So threads
      // make their first call (which opens their connection) one after the
      // other, and a refused connect is retried (counted in "connect_retries").
      auto call = [&] {
        for (int attempt = 0;; ++attempt) {
          try {
            CORBA::String_var r = ref->echoString("");
            return;
          } catch (const CORBA::TRANSIENT& e) {
            if (e.minor() != omni::TRANSIENT_ConnectFailed || attempt >= 100) throw;
            retries.fetch_add(1);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
          }
        }
      };
      std::atomic<bool> go{!wait_go};
      std::vector<std::thread> threads;
      for (uint64_t t = 0; t < clients; ++t) {
        threads.emplace_back([&, t] {
          try {
            while (connected.load() < t && !stop.load()) std::this_thread::sleep_for(std::chrono::microseconds(200));
            if (!stop.load()) {
              call();
              counters[t].calls.fetch_add(1, std::memory_order_relaxed);
            }
            connected.fetch_add(1);
            while (!go.load() && !stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            while (!stop.load(std::memory_order_relaxed)) {
              call();
              counters[t].calls.fetch_add(1, std::memory_order_relaxed);
            }
          } catch (const CORBA::Exception& e) {
            std::lock_guard<std::mutex> g(err_mu);
            if (first_error.empty()) first_error = "client thread: CORBA exception " + orbx::describe(e);
          } catch (const std::exception& e) {
            std::lock_guard<std::mutex> g(err_mu);
            if (first_error.empty()) first_error = std::string("client thread: ") + e.what();
          }
          connected.fetch_add(1);  // never leave a later thread waiting
          stop.store(true);        // one failure ends the run
        });
      }
      while (connected.load() < clients && !stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (wait_go && !stop.load()) {
        std::cout << "ready" << std::endl;
        std::string line;
        if (!std::getline(std::cin, line)) stop.store(true);  // the runner went away: end quietly
        go.store(true);
      }
      auto sum = [&] {
        uint64_t s = 0;
        for (auto& c : counters) s += c.calls.load(std::memory_order_relaxed);
        return s;
      };
      std::this_thread::sleep_for(std::chrono::duration<double>(warmup));
      uint64_t n0 = sum();
      auto t0 = orbx::Clock::now();
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
      uint64_t n1 = sum();
      auto t1 = orbx::Clock::now();
      int sockets = count_sockets() - sockets_before;
      stop.store(true);
      for (auto& th : threads) th.join();
      if (!first_error.empty()) throw std::runtime_error(first_error);

      double secs = static_cast<double>(orbx::elapsed_ns(t0, t1)) / 1e9;
      char out[256];
      std::snprintf(out, sizeof out,
                    "{\"clients\":%llu,\"requests\":%llu,\"seconds\":%.6f,\"requests_per_s\":%.1f,\"sockets\":%d,"
                    "\"connect_retries\":%llu}",
                    static_cast<unsigned long long>(clients), static_cast<unsigned long long>(n1 - n0), secs,
                    static_cast<double>(n1 - n0) / secs, sockets,
                    static_cast<unsigned long long>(retries.load()));
      std::cout << out << std::endl;
      return 0;
    });
    orb->destroy();
    return rc;
  });
}
