#include "clan_wire_bench/side.hpp"

#include <cstdio>

#include "clan_emul/error_detail.hpp"

namespace clan_wire_bench {
namespace {

bool failed(const char* what, clan::Errc e) {
  std::fprintf(stderr, "bench_clan_wire: %s: %s (%s)\n", what, clan::to_string(e), clan::last_error_message().c_str());
  return false;
}

}  // namespace

bool Side::open(const char* name, const std::string& ip, int64_t spin_ns) {
  clan::NicConfig c;
  c.name = name;
  c.wire.listen = ip.find(':') == std::string::npos ? ip + ":0" : ip;
  if (spin_ns >= 0) c.spin_budget = std::chrono::nanoseconds(spin_ns);
  auto nic = clan::Nic::open(c);
  if (!nic) return failed("opening the NIC with a wire", nic.error());
  nic_ = std::move(nic.value());
  auto region = nic_->export_region(kRegionBytes);
  if (!region) return failed("exporting the region", region.error());
  region_ = std::move(region.value());
  auto bell = nic_->arm_tripwire(region_, kBellAt);
  auto counter = nic_->arm_tripwire(region_, kCounterAt);
  if (!bell) return failed("arming the bell's tripwire", bell.error());
  if (!counter) return failed("arming the counter's tripwire", counter.error());
  bell_ = std::move(bell.value());
  counter_ = std::move(counter.value());
  return true;
}

bool Side::link(uint64_t nic_id, const std::string& address, const clan::RdmaCookie& cookie) {
  const auto deadline = clan::Deadline::after(kPeerPatience);
  if (clan::Errc e = nic_->connect_wire(nic_id, address, deadline); e != clan::Errc::kOk) {
    return failed(("connecting the wire to " + address).c_str(), e);
  }
  auto ap = nic_->import(cookie);
  if (!ap) return failed("importing the other side's region", ap.error());
  peer_ = std::move(ap.value());
  return true;
}

Rendezvous Side::rendezvous() const { return Rendezvous{nic_->id(), nic_->wire_address(), region_.cookie()}; }

void Side::set_mode(clan::WaitMode mode) {
  bell_.set_wait_mode(mode);
  counter_.set_wait_mode(mode);
}

uint64_t Side::next_bell(uint64_t last) const {
  const auto deadline = clan::Deadline::after(kPeerPatience);
  if (bell_.wait([&] { return word(kBellAt) != last; }, deadline) != clan::Errc::kOk) return 0;
  return word(kBellAt);
}

bool Side::await_bell(uint64_t value, clan::Deadline deadline) const {
  return bell_.wait([&] { return word(kBellAt) == value; }, deadline) == clan::Errc::kOk;
}

bool Side::await_counter(uint64_t value) const {
  const auto deadline = clan::Deadline::after(kPeerPatience);
  return counter_.wait([&] { return word(kCounterAt) >= value; }, deadline) == clan::Errc::kOk;
}

bool Side::put(size_t offset, const void* src, size_t len) {
  const clan::Errc e = peer_.write(offset, src, len);
  return e == clan::Errc::kOk || failed("writing over the wire", e);
}

bool Side::put_word(size_t offset, uint64_t value) {
  const clan::Errc e = peer_.write_word(offset, value);
  return e == clan::Errc::kOk || failed("writing a word over the wire", e);
}

}  // namespace clan_wire_bench
