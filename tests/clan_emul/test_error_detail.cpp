// The words next to an Errc (clan_emul/error_detail.hpp): set where a failure
// happens, given context by callers, per thread; and the failures a user
// meets when a node starts, each with its cause and an honest code (kSystem
// only when a system call failed, with its errno).
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/oob_manager.hpp"
#include "clan_emul/shared_memory.hpp"
#include "support/oob_runtime.hpp"

using namespace clan;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A regular file inside `dir`, to stand where a directory is expected.
std::string make_file(const test::RuntimeDir& dir) {
  const std::string path = dir.path + "/a-file";
  std::ofstream(path) << "not a directory\n";
  return path;
}

// Sets an environment variable for one scope.
struct ScopedEnv {
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_.empty()) unsetenv(name_);
    else setenv(name_, old_.c_str(), 1);
  }
  const char* name_;
  std::string old_;
};

}  // namespace

TEST_CASE("error detail: set_error records the code, the message and errno's text", "[error]") {
  clear_error();
  CHECK(set_error(Errc::kSystem, EACCES, "cannot create '%s': mkdir", "/x/y") == Errc::kSystem);
  CHECK(last_error_code() == Errc::kSystem);
  CHECK(last_errno() == EACCES);
  CHECK(last_error_message() == "cannot create '/x/y': mkdir: Permission denied (errno 13)");
  CHECK(set_error(Errc::kInvalidArgument, 0, "no errno here") == Errc::kInvalidArgument);
  CHECK(last_error_message() == "no errno here");
  CHECK(last_errno() == 0);
}

TEST_CASE("error detail: a message longer than the formatting buffer is kept whole", "[error]") {
  const std::string long_path(1000, 'p');
  set_error(Errc::kSystem, ENOENT, "open '%s'", long_path.c_str());
  CHECK(last_error_message() == "open '" + long_path + "': No such file or directory (errno 2)");
}

TEST_CASE("error detail: each caller's context goes in front, the outermost first", "[error]") {
  set_error(Errc::kSystem, ENOTDIR, "mkdir '%s'", "/f/x");
  CHECK(append_error_context(Errc::kSystem, "node '%s'", "a") == Errc::kSystem);
  append_error_context(Errc::kSystem, "cannot start");
  CHECK(last_error_message() == "cannot start: node 'a': mkdir '/f/x': Not a directory (errno 20)");
  CHECK(error_message(Errc::kSystem) == last_error_message());
  CHECK(last_errno() == ENOTDIR);
}

TEST_CASE("error detail: without a message for the code, the context precedes the code's name", "[error]") {
  clear_error();
  append_error_context(Errc::kTimeout, "connect to '%s'", "b");
  CHECK(last_error_message() == "connect to 'b': timed out");
  // A message recorded for another code is not this failure's.
  set_error(Errc::kRefused, 0, "refused by b");
  append_error_context(Errc::kNoResources, "export");
  CHECK(last_error_message() == "export: NIC resource exhausted");
  CHECK(last_error_code() == Errc::kNoResources);
}

TEST_CASE("error detail: error_message falls back to the code's name, clear_error forgets", "[error]") {
  set_error(Errc::kRefused, 0, "node 'x' refused");
  CHECK(error_message(Errc::kRefused) == "node 'x' refused");
  CHECK(error_message(Errc::kTimeout) == "timed out");
  clear_error();
  CHECK(last_error_code() == Errc::kOk);
  CHECK(last_error_message().empty());
  CHECK(error_message(Errc::kRefused) == "connection refused");
}

TEST_CASE("error detail: each thread has its own", "[error]") {
  set_error(Errc::kRefused, 0, "this thread's");
  std::string seen_there, after_set_there;
  std::thread t([&] {
    seen_there = last_error_message();
    set_error(Errc::kSystem, EIO, "that thread's");
    after_set_there = last_error_message();
  });
  t.join();
  CHECK(seen_there.empty());
  CHECK(after_set_there == "that thread's: Input/output error (errno 5)");
  CHECK(last_error_message() == "this thread's");
  CHECK(last_error_code() == Errc::kRefused);
}

TEST_CASE("node start: a runtime directory under a file is kSystem with the path and mkdir's errno",
          "[error][oob]") {
  test::RuntimeDir dir;
  const std::string bad = make_file(dir) + "/x";
  OobConfig c = test::oob_config(dir, "n1");
  c.runtime_dir = bad;
  auto m = OobManager::start(c);
  REQUIRE_FALSE(m);
  CHECK(m.error() == Errc::kSystem);
  CHECK(last_errno() == ENOTDIR);
  CHECK(error_message(m.error()) ==
        "cannot create the runtime directory '" + bad + "': mkdir: Not a directory (errno 20)");
}

TEST_CASE("node start: CLAN_PEER_TIMEOUT_MS sets the peer timeout, and a bad value is named", "[error][oob]") {
  test::RuntimeDir dir;
  OobConfig c = test::oob_config(dir, "n1");  // heartbeat every 50 ms
  for (const char* bad : {"abc", "-5", "50", "86400001"}) {
    INFO(bad);
    ::setenv("CLAN_PEER_TIMEOUT_MS", bad, 1);
    auto m = OobManager::start(c);
    REQUIRE_FALSE(m);
    CHECK(m.error() == Errc::kInvalidArgument);
    CHECK(error_message(m.error()).rfind(std::string("CLAN_PEER_TIMEOUT_MS='") + bad + "' ", 0) == 0);
    CHECK(error_message(m.error()).find("51 to 86400000 milliseconds") != std::string::npos);
  }
  ::setenv("CLAN_PEER_TIMEOUT_MS", "45000", 1);
  auto m = OobManager::start(c);
  ::unsetenv("CLAN_PEER_TIMEOUT_MS");
  REQUIRE(m);
  CHECK((*m)->peer_timeout() == std::chrono::milliseconds(45000));
}

TEST_CASE("node start: a runtime directory that is a file is kInvalidArgument, not kSystem",
          "[error][oob]") {
  test::RuntimeDir dir;
  const std::string file = make_file(dir);
  OobConfig c = test::oob_config(dir, "n1");
  c.runtime_dir = file;
  auto m = OobManager::start(c);
  REQUIRE_FALSE(m);
  CHECK(m.error() == Errc::kInvalidArgument);
  CHECK(last_errno() == 0);
  CHECK(error_message(m.error()) == "the runtime directory '" + file + "' exists and is not a directory");
}

TEST_CASE("node start: another user's runtime directory is kNotPermitted, naming its owner",
          "[error][oob]") {
  test::RuntimeDir dir;
  // As root: a directory given to another uid. Otherwise: "/", which root owns.
  std::string theirs = "/";
  uid_t other = 0;
  if (::getuid() == 0) {
    theirs = dir.path + "/theirs";
    REQUIRE(::mkdir(theirs.c_str(), 0700) == 0);
    other = 1;
    const int rc = ::chown(theirs.c_str(), other, static_cast<gid_t>(-1));
    INFO("chown: " << std::strerror(errno));
    REQUIRE(rc == 0);
  }
  // Checked for the directory the environment names: a configured one is the caller's choice.
  ScopedEnv env("CLAN_RUNTIME_DIR", theirs);
  OobConfig c = test::oob_config(dir, "n1");
  c.runtime_dir.clear();
  auto m = OobManager::start(c);
  REQUIRE_FALSE(m);
  CHECK(m.error() == Errc::kNotPermitted);
  CHECK(error_message(m.error()) == "the runtime directory '" + theirs + "' belongs to uid " +
                                        std::to_string(other) + ", not to this user (uid " +
                                        std::to_string(::getuid()) + ")");
}

TEST_CASE("node start: a node name taken in this process says so, with the lock file", "[error][oob]") {
  test::RuntimeDir dir;
  auto first = OobManager::start(test::oob_config(dir, "taken"));
  REQUIRE(first);
  auto second = OobManager::start(test::oob_config(dir, "taken"));
  REQUIRE_FALSE(second);
  CHECK(second.error() == Errc::kAddressInUse);
  CHECK(error_message(second.error()) ==
        "node name 'taken' is already taken by this process (lock '" + dir.path + "/taken.lock')");
}

TEST_CASE("node start: a bad node name and a too long socket path are named", "[error][oob]") {
  test::RuntimeDir dir;
  auto bad = OobManager::start(test::oob_config(dir, "a/b"));
  REQUIRE_FALSE(bad);
  CHECK(bad.error() == Errc::kInvalidArgument);
  CHECK(contains(error_message(bad.error()), "'a/b' is not a node name"));

  OobConfig c = test::oob_config(dir, "n1");
  c.runtime_dir = dir.path + "/" + std::string(100, 'd');
  auto deep = OobManager::start(c);
  REQUIRE_FALSE(deep);
  CHECK(deep.error() == Errc::kInvalidArgument);
  CHECK(contains(error_message(deep.error()), "above the 107 a unix socket allows"));
}

TEST_CASE("connect: no such node, and a port listened on twice, are named", "[error][oob]") {
  test::RuntimeDir dir;
  auto m = OobManager::start(test::oob_config(dir, "me"));
  REQUIRE(m);
  auto c = (*m)->connect("nobody", 1, {}, Deadline::after(std::chrono::seconds(5)));
  REQUIRE_FALSE(c);
  CHECK(c.error() == Errc::kRefused);
  CHECK(error_message(c.error()) == "no node 'nobody' is running in the runtime directory '" + dir.path + "'");

  auto l = (*m)->listen(7);
  REQUIRE(l);
  auto again = (*m)->listen(7);
  REQUIRE_FALSE(again);
  CHECK(error_message(again.error()) == "node 'me' already listens on port 7");
}

TEST_CASE("NIC: a name too long for the NIC and an empty region are named", "[error][nic]") {
  NicConfig nc;
  nc.name = std::string(64, 'n');
  auto nic = Nic::open(nc);
  REQUIRE_FALSE(nic);
  CHECK(nic.error() == Errc::kInvalidArgument);
  CHECK(contains(error_message(nic.error()), "is 64 characters; 1 to 63 allowed"));

  auto mem = SharedMemory::create("empty", 0);
  REQUIRE_FALSE(mem);
  CHECK(mem.error() == Errc::kInvalidArgument);
  CHECK(error_message(mem.error()) == "shared memory 'empty' of 0 bytes");
}
