// orb_test_peer: the other process of the end-to-end ORB tests.
//
//   orb_test_peer server [ORB options]
//     Serves an echo and a ttcp object; prints "echo IOR:...", "ttcp IOR:...",
//     "ready" on stdout. echoString("@stall") prints "stalled" and blocks until
//     a "release" line arrives on stdin. End of stdin: release every stalled
//     call, shut down, exit 0.
//     The ttcp servant checks every buffer against the pattern in
//     protocol.hpp: receive_exactly_once and receive_marshalled throw
//     BAD_PARAM on a mismatch; a bad one-way buffer makes received() return
//     ~0 from then on. An "exhaust-fds" line on stdin: open descriptors until
//     none is left (kept to the end), then print "exhausted". A "heap" line:
//     print the allocator's figures ("heap arenas=N in-use=B free=B mmap=B");
//     a "trim" line: give the allocator's free memory back to the system
//     (malloc_trim), then print "trimmed". Without glibc's allocator, "heap"
//     prints "heap unknown" and "trim" only "trimmed". A "remaps" line: print
//     the re-mappings of the NIC behind its -ORBendPoint ("remaps R evictions
//     E", peer_nic_stats.hpp; "remaps unknown" in orb_test_peer_plain).
//
//   orb_test_peer client (--ior IOR | --ns CORBALOC --name NAME)
//                        [--calls N] [--size BYTES] [--tag T] [--stall]
//                        [--expect EXCEPTION] [--retry-connect] [--threads T]
//                        [--pause-after K] [ORB options]
//     Calls echoString N times with distinct messages of about BYTES bytes and
//     checks each reply (--stall: one call of "@stall" instead). --expect: the
//     calls must end in that CORBA system exception (e.g. TRANSIENT).
//     --retry-connect: retry a refused connect (see Transport::
//     small_listen_backlog). --threads: T threads do all that at once (with
//     --stall, T calls stall together, each on a connection of its own when
//     -ORBmaxGIOPConnectionPerServer allows). --pause-after (one thread
//     only): after K answered calls print "paused" and wait for a "go" line
//     on stdin (or its end) before the next call; its connection stays
//     open meanwhile. Exit codes in protocol.hpp.
//
//   orb_test_peer ttcp --ior TTCP_IOR --mode ... [ORB options]
//     A client of the ttcp object: orb_test_peer_ttcp.cpp.
//
//   TEST_PEER_CHDIR=DIR in the environment: chdir to DIR before ORB_init.
//   TEST_PEER_MAX_FDS=N: lower the soft limit on open descriptors to N
//   (RLIMIT_NOFILE) before ORB_init.
#include <omniORB4/CORBA.h>
#include <omniORB4/Naming.hh>
#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "echo.hh"
#include "orb/connect_retry.hpp"
#include "orb/orb_test_peer_ttcp.hpp"
#ifdef ORB_TEST_PEER_NIC_STATS
#include "orb/peer_nic_stats.hpp"
#endif
#include "orb/protocol.hpp"
#include "ttcp.hh"

using namespace clan::orbtest;

namespace {

std::mutex out_mu;

// One line on stdout, written whole with write(2) so that no buffering delays it.
void emit(const std::string& line) {
  std::lock_guard lock(out_mu);
  std::string s = line + "\n";
  const char* p = s.data();
  size_t left = s.size();
  while (left > 0) {
    ssize_t n = ::write(1, p, left);
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

// Stalled calls wait here until released by a stdin line or by shutdown.
class Gate {
 public:
  void stall() {
    std::unique_lock lock(mu_);
    emit("stalled");
    cv_.wait(lock, [&] { return releases_ > 0 || open_; });
    if (!open_) --releases_;
  }
  void release_one() {
    std::lock_guard lock(mu_);
    ++releases_;
    cv_.notify_all();
  }
  void open_for_good() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  long releases_ = 0;
  bool open_ = false;
};

Gate gate;

// Opens descriptors until the kernel refuses one; they stay open for good.
void exhaust_fds() {
  long n = 0;
  while (::open("/dev/null", O_RDONLY | O_CLOEXEC) >= 0) ++n;
  emit("exhausted " + std::to_string(n));
}

// The allocator's state, for tests that look at the server's memory: how many
// arenas (one per thread, up to glibc's limit), bytes in use, bytes free inside
// the heaps, bytes in separate mappings.
void report_heap() {
#ifdef __GLIBC__
  const struct mallinfo2 m = mallinfo2();
  char* text = nullptr;
  size_t size = 0;
  long arenas = 0;
  if (FILE* f = open_memstream(&text, &size)) {
    malloc_info(0, f);
    std::fclose(f);
    for (const char* p = text; (p = std::strstr(p, "<heap nr=")) != nullptr; ++p) ++arenas;
    std::free(text);
  }
  emit("heap arenas=" + std::to_string(arenas) + " in-use=" + std::to_string(m.uordblks + m.hblkhd) +
       " free=" + std::to_string(m.fordblks) + " mmap=" + std::to_string(m.hblkhd));
#else
  emit("heap unknown");
#endif
}

void trim_heap() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
  emit("trimmed");
}

std::atomic<unsigned long> connect_retries{0};

// The first -ORBendPoint, kept before ORB_init takes the options out of argv.
std::string server_endpoint;

std::string first_endpoint(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "-ORBendPoint") == 0) return argv[i + 1];
  }
  return "";
}

std::string remaps_report() {
#ifdef ORB_TEST_PEER_NIC_STATS
  return remaps_line(nic_of_endpoint(server_endpoint));
#else
  return "remaps unknown";
#endif
}

class EchoImpl : public POA_echo {
 public:
  char* echoString(const char* mesg) override {
    if (std::strcmp(mesg, kStallMessage) == 0) gate.stall();
    return CORBA::string_dup(mesg);
  }
};

class TtcpImpl : public POA_ttcp {
 public:
  void receive_at_most_once(const ttcp::Buffer& data) override {
    bool ok = check_pattern(data.get_buffer(), data.length());
    std::lock_guard lock(mu_);
    if (!ok) poisoned_ = true;
    received_ += data.length();
  }
  void receive_exactly_once(const ttcp::Buffer& data) override {
    if (!check_pattern(data.get_buffer(), data.length()))
      throw CORBA::BAD_PARAM(0, CORBA::COMPLETED_YES);
    std::lock_guard lock(mu_);
    received_ += data.length();
  }
  void receive_marshalled(const ttcp::PairSeq& data) override {
    for (CORBA::ULong i = 0; i < data.length(); ++i)
      if (data[i].a != pair_a(i) || data[i].b != pair_b(i))
        throw CORBA::BAD_PARAM(0, CORBA::COMPLETED_YES);
    std::lock_guard lock(mu_);
    received_ += 8ull * data.length();
  }
  CORBA::ULongLong received() override {
    std::lock_guard lock(mu_);
    return poisoned_ ? ~0ull : received_;
  }

 private:
  std::mutex mu_;
  unsigned long long received_ = 0;
  bool poisoned_ = false;
};

int run_server(CORBA::ORB_ptr orb) {
  CORBA::Object_var obj = orb->resolve_initial_references("RootPOA");
  PortableServer::POA_var poa = PortableServer::POA::_narrow(obj);
  auto* echo_servant = new EchoImpl;
  auto* ttcp_servant = new TtcpImpl;
  PortableServer::ObjectId_var echo_id = poa->activate_object(echo_servant);
  PortableServer::ObjectId_var ttcp_id = poa->activate_object(ttcp_servant);
  echo_servant->_remove_ref();
  ttcp_servant->_remove_ref();
  CORBA::Object_var echo_ref = poa->id_to_reference(echo_id);
  CORBA::Object_var ttcp_ref = poa->id_to_reference(ttcp_id);
  PortableServer::POAManager_var pman = poa->the_POAManager();
  pman->activate();
  CORBA::String_var echo_ior = orb->object_to_string(echo_ref);
  CORBA::String_var ttcp_ior = orb->object_to_string(ttcp_ref);
  emit(std::string("echo ") + echo_ior.in());
  emit(std::string("ttcp ") + ttcp_ior.in());

  // The control thread: "release" lines, then end of file shuts down.
  std::thread control([orb] {
    std::string line;
    while (std::getline(std::cin, line)) {
      if (line == kReleaseLine) gate.release_one();
      if (line == kExhaustFdsLine) exhaust_fds();
      if (line == kHeapLine) report_heap();
      if (line == kTrimLine) trim_heap();
      if (line == kRemapsLine) emit(remaps_report());
    }
    gate.open_for_good();
    orb->shutdown(false);
  });
  emit("ready");
  orb->run();
  control.join();
  orb->destroy();
  return 0;
}

struct ClientOptions {
  std::string ior, ns, name, tag = "c", expect;
  bool retry_connect = false;
  long calls = 1;
  size_t size = 16;
  bool stall = false;
  long threads = 1;
  long pause_after = 0;  // 0: no pause
};

// Tells the test the first calls are answered, and waits for its go.
void pause_until_go() {
  emit(kPausedLine);
  std::string line;
  while (std::getline(std::cin, line) && line != kGoLine) {
  }
}

// The calls of one client thread; an exit code of protocol.hpp.
int make_calls(echo_ptr target, const ClientOptions& o, const std::string& tag) {
  try {
    if (o.stall) {
      CORBA::String_var r = target->echoString(kStallMessage);
      if (!o.expect.empty()) return kClientNotTheExpectedException;
      return std::strcmp(r.in(), kStallMessage) == 0 ? kClientOk : kClientWrongReply;
    }
    for (long i = 0; i < o.calls; ++i) {
      std::string m = tag + "-" + std::to_string(i) + "-";
      if (m.size() < o.size) m.append(o.size - m.size(), static_cast<char>('a' + i % 26));
      CORBA::String_var r = target->echoString(m.c_str());
      if (m != r.in()) return kClientWrongReply;
      if (i + 1 == o.pause_after) pause_until_go();
    }
  } catch (const CORBA::SystemException& ex) {
    if (!o.expect.empty() && o.expect == ex._name()) return kClientOk;
    std::cerr << "orb_test_peer client " << tag << ": " << ex._name() << " minor 0x" << std::hex
              << ex.minor() << "\n";
    return o.expect.empty() ? kClientSystemException : kClientNotTheExpectedException;
  }
  return o.expect.empty() ? kClientOk : kClientNotTheExpectedException;
}

// Every thread's calls at once; the first failing thread's exit code.
int make_calls_in_threads(echo_ptr target, const ClientOptions& o) {
  if (o.threads <= 1) return make_calls(target, o, o.tag);
  std::vector<int> codes(static_cast<size_t>(o.threads), kClientOk);
  std::vector<std::thread> threads;
  for (long t = 0; t < o.threads; ++t) {
    threads.emplace_back([&, t] {
      codes[static_cast<size_t>(t)] = make_calls(target, o, o.tag + "." + std::to_string(t));
    });
  }
  for (auto& t : threads) t.join();
  for (int c : codes)
    if (c != kClientOk) return c;
  return kClientOk;
}

int run_client(CORBA::ORB_ptr orb, int argc, char** argv) {
  ClientOptions o;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--ior") o.ior = next();
    else if (a == "--ns") o.ns = next();
    else if (a == "--name") o.name = next();
    else if (a == "--tag") o.tag = next();
    else if (a == "--calls") o.calls = std::stol(next());
    else if (a == "--size") o.size = std::stoul(next());
    else if (a == "--stall") o.stall = true;
    else if (a == "--expect") o.expect = next();
    else if (a == "--retry-connect") o.retry_connect = true;
    else if (a == "--threads") o.threads = std::stol(next());
    else if (a == "--pause-after") o.pause_after = std::stol(next());
    else return kClientUsage;
  }
  if (o.ior.empty() == o.ns.empty() || o.threads < 1 || (o.pause_after != 0 && o.threads != 1))
    return kClientUsage;

  echo_var target;
  try {
    CORBA::Object_var obj;
    if (!o.ior.empty()) {
      obj = orb->string_to_object(o.ior.c_str());
    } else {
      CORBA::Object_var nsobj = orb->string_to_object(o.ns.c_str());
      CosNaming::NamingContext_var nc = CosNaming::NamingContext::_narrow(nsobj);
      if (CORBA::is_nil(nc)) return kClientResolveFailed;
      CosNaming::Name n;
      n.length(1);
      n[0].id = o.name.c_str();
      n[0].kind = "";
      obj = nc->resolve(n);
    }
    target = echo::_narrow(obj);
    if (CORBA::is_nil(target)) return kClientResolveFailed;
    if (o.retry_connect)
      omniORB::installTransientExceptionHandler(target, &connect_retries, retry_refused_connect);
  } catch (const CORBA::Exception& ex) {
    std::cerr << "orb_test_peer client: resolve: " << ex._name() << "\n";
    return kClientResolveFailed;
  }

  const int code = make_calls_in_threads(target, o);
  if (connect_retries > 0)
    std::cerr << "orb_test_peer client " << o.tag << ": " << connect_retries
              << " refused connects retried\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  // A program that changes its working directory before ORB_init (as daemons
  // do): the preload library must not depend on the one it started in.
  if (const char* dir = std::getenv("TEST_PEER_CHDIR"); dir && ::chdir(dir) != 0) {
    std::cerr << "orb_test_peer: chdir " << dir << ": " << std::strerror(errno) << "\n";
    return kClientUsage;
  }
  if (const char* max = std::getenv("TEST_PEER_MAX_FDS"); max && *max) {
    struct rlimit lim {};
    getrlimit(RLIMIT_NOFILE, &lim);
    lim.rlim_cur = std::strtoul(max, nullptr, 10);
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) {
      std::cerr << "orb_test_peer: setrlimit(RLIMIT_NOFILE, " << max << "): " << std::strerror(errno) << "\n";
      return kClientUsage;
    }
  }
  server_endpoint = first_endpoint(argc, argv);
  CORBA::ORB_var orb;
  try {
    orb = CORBA::ORB_init(argc, argv);  // removes the -ORB options it knows
  } catch (const CORBA::Exception& ex) {
    std::cerr << "orb_test_peer: ORB_init: " << ex._name() << "\n";
    return kClientUsage;
  }
  std::string mode = argc > 1 ? argv[1] : "";
  int code = kClientUsage;
  try {
    if (mode == "server") code = run_server(orb);
    else if (mode == "client") code = run_client(orb, argc, argv);
    else if (mode == "ttcp") code = run_ttcp_client(orb, argc, argv);
    if (mode != "server") orb->destroy();
  } catch (const CORBA::Exception& ex) {
    std::cerr << "orb_test_peer " << mode << ": " << ex._name() << "\n";
    return kClientSystemException;
  }
  return code;
}
