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

struct Options {
  uint64_t clients = 1;
  double seconds = 2;
  double warmup = 0.5;
  bool wait_go = false;
  std::string ior;
};

Options parse(int argc, char** argv) {
  orbx::Args args(argc, argv);
  Options o;
  o.clients = args.take_u64("--clients", 1);
  o.seconds = args.take_double("--seconds", 2);
  o.warmup = args.take_double("--warmup", 0.5);
  o.wait_go = args.take_flag("--wait-go");
  o.ior = args.positional("IOR");
  args.finish();
  if (o.clients == 0 || o.clients > 1000) throw orbx::UsageError("--clients must be 1 .. 1000");
  return o;
}

// N client threads, each with one null echo outstanding. They connect one
// after the other, then wait for `go`; the first failure ends the run.
class ClientThreads {
 public:
  ClientThreads(echo_ptr ref, uint64_t clients, bool wait_go)
      : ref_(ref), counters_(clients), go_(!wait_go) {
    for (uint64_t t = 0; t < clients; ++t) threads_.emplace_back([this, t] { body(t); });
  }
  ~ClientThreads() {
    stop();
    for (auto& th : threads_)
      if (th.joinable()) th.join();
  }
  ClientThreads(const ClientThreads&) = delete;
  ClientThreads& operator=(const ClientThreads&) = delete;

  // Waits until every thread's connection is open (or one failed).
  void wait_connected() {
    while (connected_.load() < counters_.size() && !stop_.load())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  bool stopped() const { return stop_.load(); }
  void start() { go_.store(true); }
  void stop() { stop_.store(true); }

  uint64_t calls() const {
    uint64_t s = 0;
    for (const auto& c : counters_) s += c.calls.load(std::memory_order_relaxed);
    return s;
  }
  uint64_t retries() const { return retries_.load(); }

  // Joins the threads; throws the first thread's error.
  void join() {
    stop();
    for (auto& th : threads_)
      if (th.joinable()) th.join();
    if (!first_error_.empty()) throw std::runtime_error(first_error_);
  }

 private:
  // omniORB's giop:unix endpoint listens with a backlog of 5, and a
  // non-blocking AF_UNIX connect to a full backlog fails at once
  // (TRANSIENT_ConnectFailed) instead of waiting as TCP does. So threads
  // make their first call (which opens their connection) one after the
  // other, and a refused connect is retried (counted in "connect_retries").
  void call() {
    for (int attempt = 0;; ++attempt) {
      try {
        CORBA::String_var r = ref_->echoString("");
        return;
      } catch (const CORBA::TRANSIENT& e) {
        if (e.minor() != omni::TRANSIENT_ConnectFailed || attempt >= 100) throw;
        retries_.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
  }

  void calls_until_stopped(uint64_t t) {
    while (connected_.load() < t && !stop_.load()) std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (!stop_.load()) {
      call();
      counters_[t].calls.fetch_add(1, std::memory_order_relaxed);
    }
    connected_.fetch_add(1);
    while (!go_.load() && !stop_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    while (!stop_.load(std::memory_order_relaxed)) {
      call();
      counters_[t].calls.fetch_add(1, std::memory_order_relaxed);
    }
  }

  void body(uint64_t t) {
    try {
      calls_until_stopped(t);
    } catch (const CORBA::Exception& e) {
      record("client thread: CORBA exception " + orbx::describe(e));
    } catch (const std::exception& e) {
      record(std::string("client thread: ") + e.what());
    }
    connected_.fetch_add(1);  // never leave a later thread waiting
    stop_.store(true);        // one failure ends the run
  }

  void record(const std::string& error) {
    std::lock_guard<std::mutex> g(err_mu_);
    if (first_error_.empty()) first_error_ = error;
  }

  echo_ptr ref_;
  std::vector<Counter> counters_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> go_;
  std::atomic<uint64_t> connected_{0};  // threads whose first call returned
  std::atomic<uint64_t> retries_{0};
  std::mutex err_mu_;
  std::string first_error_;
  std::vector<std::thread> threads_;
};

// With --wait-go: "ready" on stdout, then a line on stdin starts the threads.
void start_on_go(ClientThreads& threads, bool wait_go) {
  if (wait_go && !threads.stopped()) {
    std::cout << "ready" << std::endl;
    std::string line;
    if (!std::getline(std::cin, line)) threads.stop();  // the runner went away: end quietly
    threads.start();
  }
}

void print_result(uint64_t clients, uint64_t requests, double secs, int sockets, uint64_t retries) {
  char out[256];
  std::snprintf(out, sizeof out,
                "{\"clients\":%llu,\"requests\":%llu,\"seconds\":%.6f,\"requests_per_s\":%.1f,\"sockets\":%d,"
                "\"connect_retries\":%llu}",
                static_cast<unsigned long long>(clients), static_cast<unsigned long long>(requests), secs,
                static_cast<double>(requests) / secs, sockets, static_cast<unsigned long long>(retries));
  std::cout << out << std::endl;
}

// The measurement: warm-up, then the calls completed in the counting window.
int run(CORBA::ORB_ptr orb, const Options& o, int sockets_before) {
  CORBA::Object_var obj = orb->string_to_object(o.ior.c_str());
  echo_var ref = echo::_narrow(obj);
  if (CORBA::is_nil(ref)) throw std::runtime_error("IOR is not an echo object");

  ClientThreads threads(ref.in(), o.clients, o.wait_go);
  threads.wait_connected();
  start_on_go(threads, o.wait_go);
  std::this_thread::sleep_for(std::chrono::duration<double>(o.warmup));
  uint64_t n0 = threads.calls();
  auto t0 = orbx::Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
  uint64_t n1 = threads.calls();
  auto t1 = orbx::Clock::now();
  int sockets = count_sockets() - sockets_before;
  threads.join();
  print_result(o.clients, n1 - n0, static_cast<double>(orbx::elapsed_ns(t0, t1)) / 1e9, sockets, threads.retries());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "rate_client IOR --clients N --seconds S [--warmup S] [--wait-go] [-ORB options]";
  return orbx::guarded_main("rate_client", usage, [&]() -> int {
    orbx::OrbArgs oa(argc, argv);
    oa.add_default("-ORBmaxGIOPConnectionPerServer", "64");
    orbx::add_client_timeouts(oa, "10000");
    const int sockets_before = count_sockets();
    return orbx::run_with_orb("rate_client", usage, oa, [&](CORBA::ORB_ptr orb, int ac, char** av) {
      return run(orb, parse(ac, av), sockets_before);
    });
  });
}
