// Test-process side of the end-to-end ORB tests: the client ORB (initialised
// once per test process, after which the process only ever execs children),
// and a Server: orb_test_peer in a child process over one transport and one
// threading mode.
#pragma once

#include <omniORB4/CORBA.h>
#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "echo.hh"
#include "orb/connect_retry.hpp"
#include "orb/process.hpp"
#include "orb/protocol.hpp"
#include "orb/transports.hpp"
#include "ttcp.hh"

namespace clan::orbtest {

using namespace std::chrono_literals;

// ORB_TEST_PEER is the path of the orb_test_peer program (set by CMake).
inline const std::string kPeerPath = ORB_TEST_PEER;

inline CORBA::ORB_ptr client_orb() {
  static CORBA::ORB_ptr orb = [] {
    static char arg0[] = "orb_tests";
    char* argv[] = {arg0, nullptr};
    int argc = 1;
    return CORBA::ORB_init(argc, argv);
  }();
  return orb;
}

// A fresh directory under /tmp, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    char templ[] = "/tmp/clanorb-orb-XXXXXX";
    if (!mkdtemp(templ)) std::abort();
    path_ = templ;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A ttcp buffer of `len` bytes carrying the pattern the test servant checks.
inline ttcp::Buffer pattern_buffer(size_t len) {
  ttcp::Buffer buf(static_cast<CORBA::ULong>(len));
  buf.length(static_cast<CORBA::ULong>(len));
  if (len > 0) fill_pattern(buf.get_buffer(), len);
  return buf;
}

inline std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// This process's environment with `extra` ("NAME=value") added.
inline std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

class Server {
 public:
  // `merge_stderr`: the server's log comes through its stdout too, for
  // wait_for_log(). `env`: variables ("NAME=value") the server gets besides ours.
  Server(const Transport& t, Threading mode, std::vector<std::string> extra = {},
         bool merge_stderr = false, const std::vector<std::string>& env = {}) {
    std::vector<std::string> args{"server"};
    for (const auto& ep : t.server_endpoints) {
      args.push_back("-ORBendPoint");
      args.push_back(replace_all(ep, "{dir}", dir_.path()));
    }
    for (auto& a : server_orb_args(mode)) args.push_back(a);
    for (auto& a : extra) args.push_back(a);
    proc_ = env.empty() ? std::make_unique<Process>(kPeerPath, args, merge_stderr)
                        : std::make_unique<Process>(kPeerPath, args, merge_stderr, environment_with(env));
    auto echo_line = proc_->wait_for_line("echo ");
    auto ttcp_line = proc_->wait_for_line("ttcp ");
    auto ready = proc_->wait_for_line("ready");
    REQUIRE(echo_line);
    REQUIRE(ttcp_line);
    REQUIRE(ready);
    echo_ior_ = echo_line->substr(5);
    ttcp_ior_ = ttcp_line->substr(5);
  }

  const std::string& echo_ior() const { return echo_ior_; }
  const std::string& ttcp_ior() const { return ttcp_ior_; }

  echo_ptr echo() const {
    CORBA::Object_var obj = client_orb()->string_to_object(echo_ior_.c_str());
    return echo::_narrow(obj);
  }
  ttcp_ptr ttcp_obj() const {
    CORBA::Object_var obj = client_orb()->string_to_object(ttcp_ior_.c_str());
    return ttcp::_narrow(obj);
  }

  // Waits for the servant to report a call blocked in "@stall".
  bool wait_stalled(std::chrono::milliseconds limit = 20s) {
    return proc_->wait_for_line("stalled", limit).has_value();
  }
  bool release_one() { return proc_->send_line(kReleaseLine); }
  // The next line of output containing `text` (a server made with
  // merge_stderr: its log too); lines before it are passed over.
  std::optional<std::string> wait_for_log(const std::string& text, std::chrono::milliseconds limit = 20s) {
    return proc_->wait_for_line(text, limit, /*anywhere=*/true);
  }
  // Makes the server use up its descriptors (see kExhaustFdsLine).
  bool exhaust_fds(std::chrono::milliseconds limit = 20s) {
    return proc_->send_line(kExhaustFdsLine) && proc_->wait_for_line("exhausted", limit).has_value();
  }

  // The server's allocator figures ("heap arenas=... in-use=... free=...").
  std::string heap_report(std::chrono::milliseconds limit = 20s) {
    if (!proc_->send_line(kHeapLine)) return "";
    return proc_->wait_for_line("heap ", limit).value_or("");
  }
  // Makes the server return its allocator's free memory to the system.
  bool trim_heap(std::chrono::milliseconds limit = 20s) {
    return proc_->send_line(kTrimLine) && proc_->wait_for_line("trimmed", limit).has_value();
  }
  // How often the server's NIC made a connection's endpoint resident again
  // for want of frames so far; nullopt if it could not tell.
  std::optional<unsigned long long> remaps(std::chrono::milliseconds limit = 20s) {
    if (!proc_->send_line(kRemapsLine)) return std::nullopt;
    const auto line = proc_->wait_for_line("remaps ", limit);
    unsigned long long n = 0;
    if (!line || std::sscanf(line->c_str(), "remaps %llu", &n) != 1) return std::nullopt;
    return n;
  }

  // Asks the server to shut down; its exit code (0 = clean), -1 if it hung.
  int stop(std::chrono::milliseconds limit = 20s) {
    proc_->close_stdin();
    return proc_->wait(limit);
  }
  void kill_now() { proc_->kill_now(SIGKILL); }
  pid_t pid() const { return proc_->pid(); }
  int wait(std::chrono::milliseconds limit = 20s) { return proc_->wait(limit); }

 private:
  TempDir dir_;
  std::unique_ptr<Process> proc_;
  std::string echo_ior_, ttcp_ior_;
};

// orb_test_peer client with these arguments (see orb_test_peer.cpp).
inline std::unique_ptr<Process> start_client(const std::vector<std::string>& args) {
  std::vector<std::string> all{"client"};
  all.insert(all.end(), args.begin(), args.end());
  return std::make_unique<Process>(kPeerPath, all);
}

// Runs `call`; the name of the CORBA system exception it threw ("TRANSIENT",
// "COMM_FAILURE", ...), or "" if it returned.
template <class F>
std::string system_exception_of(F&& call) {
  try {
    call();
  } catch (const CORBA::SystemException& ex) {
    return ex._name();
  }
  return "";
}

}  // namespace clan::orbtest
