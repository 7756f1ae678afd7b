#include "wire_bench/server.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/channel.hpp"
#include "wire_bench/exchange.hpp"
#include "wire_bench/protocol.hpp"

namespace wire_bench {
namespace {

class Server {
 public:
  Server(bench::Channel ctl, std::string host) : ctl_(std::move(ctl)), host_(std::move(host)) {
    links_.resize(wires().size());
  }

  // Commands until quit (0) or a failure (its status).
  int serve() {
    for (;;) {
      Command c;
      if (!ctl_.get(c, std::chrono::seconds(600))) return fail("the control channel ended without quit");
      if (c.op == Op::kQuit) return 0;
      Reply r;
      r.status = carry_out(c, r);
      if (!ctl_.put(r)) return fail("cannot reply on the control channel");
      if (r.status != 0) return fail("command failed with status " + std::to_string(r.status));
    }
  }

 private:
  int32_t carry_out(const Command& c, Reply& r) {
    if (c.wire >= links_.size() || c.size > kMaxMessage) return kBadCommand;
    if (c.op == Op::kSetup) return setup(c.wire);
    Link* link = links_[c.wire].get();
    if (!link) return kNoLink;
    switch (c.op) {
      case Op::kPong:
        return pong(*link, c.size, c.count, c.wait) ? 0 : kLinkFailed;
      case Op::kSink:
        r.value = c.count * c.size;
        return stream_in(*link, c.size, c.count, c.wait);
      default:
        return kBadCommand;
    }
  }

  int32_t setup(uint32_t wire) {
    std::string error;
    links_[wire] = wires()[wire].accept(host_, ctl_, error);
    if (links_[wire]) return 0;
    std::fprintf(stderr, "bench_wire server: %s wire: %s\n", wires()[wire].name, error.c_str());
    return kSetupFailed;
  }

  static int fail(const std::string& why) {
    std::fprintf(stderr, "bench_wire server: %s\n", why.c_str());
    return 1;
  }

  bench::Channel ctl_;
  std::string host_;
  std::vector<std::unique_ptr<Link>> links_;
};

}  // namespace

int run_server(const ServerOptions& o) {
  std::string error;
  const int listener = listen_tcp(o.listen, error);
  if (listener < 0) {
    std::fprintf(stderr, "bench_wire server: %s\n", error.c_str());
    return 1;
  }
  std::printf("listening %s:%u\n", o.listen.host.c_str(), bound_port(listener));
  std::fflush(stdout);
  const int fd = accept_within(listener, o.accept_seconds, error);
  close(listener);
  if (fd < 0) {
    std::fprintf(stderr, "bench_wire server: no client: %s\n", error.c_str());
    return 1;
  }
  Server server(bench::Channel(fd), o.listen.host);
  return server.serve();
}

}  // namespace wire_bench
