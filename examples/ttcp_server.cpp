// ttcp_server: the bulk-transfer servant of paper 002 sect. 5.2. Counts the
// bytes it receives (received() returns the running total); same options and
// output as echo_server.
#include <atomic>

#include "orb_common.hpp"
#include "ttcp.hh"

namespace {

class TtcpServant final : public POA_ttcp {
 public:
  void receive_at_most_once(const ttcp::Buffer& data) override { add(data.length()); }
  void receive_exactly_once(const ttcp::Buffer& data) override { add(data.length()); }
  void receive_marshalled(const ttcp::PairSeq& data) override { add(data.length() * sizeof(CORBA::Long) * 2); }
  CORBA::ULongLong received() override { return bytes_.load(std::memory_order_acquire); }

 private:
  void add(uint64_t n) { bytes_.fetch_add(n, std::memory_order_acq_rel); }
  std::atomic<uint64_t> bytes_{0};
};

}  // namespace

int main(int argc, char** argv) {
  return orbx::run_server(argc, argv, "ttcp_server", [] { return new TtcpServant; });
}
