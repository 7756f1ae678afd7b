// orb_test_peer ttcp: a client of the server's ttcp object, for tests whose
// client runs in a process of its own (on another host, for instance).
//
//   orb_test_peer ttcp --ior TTCP_IOR --mode oneway|exactly|marshalled|corrupt
//                      [--size BYTES] [--calls N] [ORB options]
//     oneway, exactly, marshalled: N buffers (or size/8 pairs) of BYTES in
//     the pattern of protocol.hpp, then received() must have grown by N *
//     BYTES (one-ways: polled until it has, or 30 s have passed). corrupt:
//     one two-way buffer off the pattern, which the servant must refuse with
//     BAD_PARAM, completed yes; then one good buffer must still be taken.
//     Exit codes of protocol.hpp (kClientWrongReply: the count is wrong or
//     the corrupt buffer was taken).
#include "orb/orb_test_peer_ttcp.hpp"

#include <chrono>
#include <iostream>
#include <string>
#include <thread>

#include "orb/protocol.hpp"
#include "ttcp.hh"

namespace clan::orbtest {
namespace {

struct TtcpOptions {
  std::string ior, mode;
  size_t size = 4096;
  long calls = 1;
};

bool parse(int argc, char** argv, TtcpOptions& o) {
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--ior") o.ior = next();
    else if (a == "--mode") o.mode = next();
    else if (a == "--size") o.size = std::stoul(next());
    else if (a == "--calls") o.calls = std::stol(next());
    else return false;
  }
  const bool known = o.mode == "oneway" || o.mode == "exactly" || o.mode == "marshalled" || o.mode == "corrupt";
  return !o.ior.empty() && known && o.size >= 8 && o.size % 8 == 0 && o.calls >= 1;
}

ttcp::Buffer pattern_buffer(size_t size) {
  ttcp::Buffer b;
  b.length(static_cast<CORBA::ULong>(size));
  fill_pattern(b.get_buffer(), size);
  return b;
}

ttcp::PairSeq pattern_pairs(size_t size) {
  ttcp::PairSeq p;
  p.length(static_cast<CORBA::ULong>(size / 8));
  for (CORBA::ULong i = 0; i < p.length(); ++i) {
    p[i].a = pair_a(i);
    p[i].b = pair_b(i);
  }
  return p;
}

// received() once it reaches `want` or stops moving for good (30 s): one-way
// requests may still be queued in the server when the last one is sent.
CORBA::ULongLong await_received(ttcp_ptr t, CORBA::ULongLong want) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  CORBA::ULongLong got = t->received();
  while (got < want && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    got = t->received();
  }
  return got;
}

// One buffer off the pattern must be refused, and a good one then taken.
int corrupt_then_good(ttcp_ptr t, size_t size) {
  ttcp::Buffer bad = pattern_buffer(size);
  bad[static_cast<CORBA::ULong>(size / 2)] ^= 0xff;
  const CORBA::ULongLong before = t->received();
  try {
    t->receive_exactly_once(bad);
    std::cerr << "orb_test_peer ttcp: the corrupt buffer was taken\n";
    return kClientWrongReply;
  } catch (const CORBA::BAD_PARAM& ex) {
    if (ex.completed() != CORBA::COMPLETED_YES) return kClientNotTheExpectedException;
  }
  t->receive_exactly_once(pattern_buffer(size));
  return t->received() == before + size ? kClientOk : kClientWrongReply;
}

int send_all(ttcp_ptr t, const TtcpOptions& o) {
  const CORBA::ULongLong before = t->received();
  const ttcp::Buffer buf = pattern_buffer(o.size);
  const ttcp::PairSeq pairs = o.mode == "marshalled" ? pattern_pairs(o.size) : ttcp::PairSeq();
  for (long i = 0; i < o.calls; ++i) {
    if (o.mode == "oneway") t->receive_at_most_once(buf);
    else if (o.mode == "exactly") t->receive_exactly_once(buf);
    else t->receive_marshalled(pairs);
  }
  const CORBA::ULongLong want = before + o.size * static_cast<CORBA::ULongLong>(o.calls);
  const CORBA::ULongLong got = await_received(t, want);
  if (got == want) return kClientOk;
  std::cerr << "orb_test_peer ttcp: the server counted " << got - before << " bytes, not " << want - before
            << "\n";
  return kClientWrongReply;
}

}  // namespace

int run_ttcp_client(CORBA::ORB_ptr orb, int argc, char** argv) {
  TtcpOptions o;
  if (!parse(argc, argv, o)) return kClientUsage;
  ttcp_var t;
  try {
    CORBA::Object_var obj = orb->string_to_object(o.ior.c_str());
    t = ttcp::_narrow(obj);
  } catch (const CORBA::Exception& ex) {
    std::cerr << "orb_test_peer ttcp: resolve: " << ex._name() << "\n";
    return kClientResolveFailed;
  }
  if (CORBA::is_nil(t)) return kClientResolveFailed;
  try {
    return o.mode == "corrupt" ? corrupt_then_good(t, o.size) : send_all(t, o);
  } catch (const CORBA::SystemException& ex) {
    std::cerr << "orb_test_peer ttcp: " << ex._name() << " minor 0x" << std::hex << ex.minor() << "\n";
    return kClientSystemException;
  }
}

}  // namespace clan::orbtest
