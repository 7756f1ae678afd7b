// The transports every end-to-end ORB test runs over: the ONE list. A test
// body takes `const Transport& t = GENERATE(from_range(transports()))`, so a
// transport joins every test by adding one line here.
#pragma once

#include <string>
#include <vector>

namespace clan::orbtest {

struct Transport {
  std::string name;
  // The server's -ORBendPoint values. "{dir}" is replaced by a fresh temporary
  // directory owned by that server process (for socket paths).
  std::vector<std::string> server_endpoints;
  // omniORB's giop:unix listens with a backlog of 5 (unixEndpoint.cc) and
  // connects without blocking, so a burst of connects can be refused
  // (TRANSIENT_ConnectFailed). Tests that connect many clients at once then
  // let clients retry a refused connect; a transport should not need it.
  bool small_listen_backlog = false;
};

inline std::vector<Transport> transports() {
  std::vector<Transport> list = {
      {"tcp", {"giop:tcp:127.0.0.1:"}},
      {"unix", {"giop:unix:{dir}/orb.sock"}, /*small_listen_backlog=*/true},
      {"clan", {"giop:clan::"}},
      {"otp", {"giop:otp::"}},
      {"via", {"giop:via::"}},
  };
  return list;
}

// The transports over clan_emul, whose connections an out-of-band connection
// manager sets up and watches.
inline std::vector<Transport> fabric_transports() {
  std::vector<Transport> out;
  for (const Transport& t : transports()) {
    if (t.name == "clan" || t.name == "otp" || t.name == "via") out.push_back(t);
  }
  return out;
}

// The server's threading mode: omniORB's default thread per connection, or
// the thread pool (-ORBthreadPerConnectionPolicy 0), which drives a different
// path of the transport (setSelectable/Peek and the endpoint's monitor).
enum class Threading { kPerConnection, kPool };

inline const char* to_string(Threading m) {
  return m == Threading::kPool ? "thread pool" : "thread per connection";
}

inline std::vector<std::string> server_orb_args(Threading m) {
  if (m == Threading::kPool) return {"-ORBthreadPerConnectionPolicy", "0"};
  return {};
}

}  // namespace clan::orbtest
