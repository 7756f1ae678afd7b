// zmq_echo: the non-CORBA reference row of the null-echo table, ZeroMQ
// REQ/REP (libzmq through cppzmq), normally over ipc://.
//   zmq_echo server ENDPOINT            binds REP, prints ENDPOINT as the first
//                                       line of stdout, echoes until SIGINT/SIGTERM
//   zmq_echo client ENDPOINT [--calls N] [--warmup N] [--size BYTES] [--samples F]
// The client prints the same JSON line as echo_client. Receives time out after
// --timeout-ms (default 10000), so the client never hangs.
#include <signal.h>

#include <atomic>
#include <zmq.hpp>

#include <iostream>

#include "cli_common.hpp"

namespace {

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

int run_server(const std::string& endpoint) {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);

  zmq::context_t ctx(1);
  zmq::socket_t rep(ctx, zmq::socket_type::rep);
  rep.set(zmq::sockopt::linger, 0);
  rep.set(zmq::sockopt::rcvtimeo, 100);  // to notice signals
  rep.bind(endpoint);
  std::cout << endpoint << std::endl;
  zmq::message_t msg;
  while (!g_stop) {
    zmq::recv_result_t r;
    try {
      r = rep.recv(msg);
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      throw;
    }
    if (!r) continue;  // timeout
    rep.send(msg, zmq::send_flags::none);
  }
  std::cerr << "zmq_echo: shutting down" << std::endl;
  return 0;
}

int run_client(const std::string& endpoint, orbx::Args& args) {
  uint64_t calls = args.take_u64("--calls", 10000);
  uint64_t warmup = args.take_u64("--warmup", 1000);
  uint64_t size = args.take_u64("--size", 0);
  std::string samples_path = args.take("--samples", "");
  auto timeout_ms = static_cast<int>(args.take_u64("--timeout-ms", 10000));
  args.finish();

  zmq::context_t ctx(1);
  zmq::socket_t req(ctx, zmq::socket_type::req);
  req.set(zmq::sockopt::linger, 0);
  req.set(zmq::sockopt::rcvtimeo, timeout_ms);
  req.set(zmq::sockopt::sndtimeo, timeout_ms);
  req.connect(endpoint);
  std::string payload(size, 'x');
  zmq::message_t reply;
  auto call = [&] {
    if (!req.send(zmq::buffer(payload), zmq::send_flags::none)) throw std::runtime_error("send timed out");
    if (!req.recv(reply)) throw std::runtime_error("no reply within " + std::to_string(timeout_ms) + " ms from " + endpoint);
    if (reply.size() != size) throw std::runtime_error("echo returned a different message");
  };
  for (uint64_t i = 0; i < warmup; ++i) call();
  std::vector<uint64_t> ns;
  ns.reserve(calls);
  for (uint64_t i = 0; i < calls; ++i) {
    auto t0 = orbx::Clock::now();
    call();
    ns.push_back(orbx::elapsed_ns(t0, orbx::Clock::now()));
  }
  orbx::write_samples(samples_path, ns);
  std::cout << orbx::latency_json(std::move(ns)) << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage =
      "zmq_echo server ENDPOINT | zmq_echo client ENDPOINT [--calls N] [--warmup N] [--size BYTES] [--samples F] "
      "[--timeout-ms MS]";
  try {
    orbx::Args args(argc, argv);
    std::string mode = args.positional("mode (server or client)");
    std::string endpoint = args.positional("ENDPOINT");
    if (mode == "server") {
      args.finish();
      return run_server(endpoint);
    }
    if (mode == "client") return run_client(endpoint, args);
    throw orbx::UsageError("mode must be server or client");
  } catch (const orbx::UsageError& e) {
    std::cerr << "zmq_echo: " << e.what() << "\nusage: " << usage << std::endl;
    return 2;
  } catch (const std::exception& e) {  // zmq::error_t too
    std::cerr << "zmq_echo: " << e.what() << std::endl;
    return 1;
  }
}
