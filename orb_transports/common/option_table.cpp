#include "orb_transports/common/option_table.hpp"

#include <array>
#include <cstring>
#include <limits>
#include <type_traits>

#include "clan_emul/decimal.hpp"
#include "clan_emul/nic.hpp"
#include "clan_emul/wait_mode.hpp"

namespace clanorb {
namespace {

using clan::describe;
using clan::parse_decimal;
using clan::ParsedValue;
using clan::ValueProblem;

template <auto Field>
uint64_t get_field(const FabricOptions& o) {
  return static_cast<uint64_t>(o.*Field);
}
template <auto Field>
void set_field(FabricOptions& o, uint64_t v) {
  o.*Field = static_cast<std::remove_reference_t<decltype(o.*Field)>>(v);
}

constexpr uint64_t kGiB = uint64_t{1} << 30;
// The NIC's tables grow with it (an endpoint, two regions, two tripwires and
// an event source a connection); 65536 connections make them a few MiB.
constexpr uint64_t kMaxConnections = 65536;
static_assert(2 * kMaxConnections <= clan::kMaxRegionsLimit);

// clan::Replacement's values, by number.
constexpr const char* kReplacementNames[] = {"random", "lru", nullptr};
static_assert(static_cast<uint32_t>(clan::Replacement::kRandom) == 0 &&
              static_cast<uint32_t>(clan::Replacement::kLru) == 1);
// clan::WaitMode's values, by number.
constexpr const char* kWaitModeNames[] = {clan::wait_mode_name(clan::WaitMode::kAdaptive),
                                          clan::wait_mode_name(clan::WaitMode::kPoll),
                                          clan::wait_mode_name(clan::WaitMode::kBlock), nullptr};
static_assert(static_cast<int>(clan::WaitMode::kAdaptive) == 0 && static_cast<int>(clan::WaitMode::kPoll) == 1 &&
              static_cast<int>(clan::WaitMode::kBlock) == 2);

// The bounds are what is sane, not what the field holds: a spin beyond a
// second, or a timeout beyond ten, is a mistake. A ring must hold giop:clan's
// largest message (64 KiB) twice over, and a peer accepts rings up to 1 GiB.
// otp's window is bounded by what its ring can hold of 9 KiB datagrams.
constexpr std::array<OrbOptionSpec, 14> kTable{{
    {"clanSpinNs", "giop:clan, giop:otp", "ns", 0, clan::kMaxSpinNs, false, nullptr,
     "How long a call blocked on the fabric spins before it sleeps (at most 1 s).",
     get_field<&FabricOptions::spin_ns>, set_field<&FabricOptions::spin_ns>},
    {"clanWaitMode", "giop:clan, giop:otp, giop:via", "", 0, 2, false, nullptr,
     "How a call blocked on the fabric waits: adaptive spins while the thread that will answer runs on "
     "another CPU, then sleeps (and may move a waiting thread to another CPU its affinity allows, to run "
     "apart from the thread it waits for); poll never sleeps; block sleeps at once. CLAN_WAIT_MODE "
     "overrides it.",
     get_field<&FabricOptions::wait_mode>, set_field<&FabricOptions::wait_mode>, kWaitModeNames},
    {"clanRingBytes", "giop:clan, giop:via", "bytes", 256 * 1024, kGiB, true, nullptr,
     "Receive ring of each giop:clan connection; receive buffers of each giop:via connection.",
     get_field<&FabricOptions::ring_bytes>, set_field<&FabricOptions::ring_bytes>},
    {"clanDmaThreshold", "giop:clan, giop:via", "bytes", 0, kGiB, false, nullptr,
     "Chunks of this many bytes or more are sent by DMA, smaller ones by PIO (0: never DMA).",
     get_field<&FabricOptions::dma_threshold>, set_field<&FabricOptions::dma_threshold>},
    {"otpLossPpm", "giop:otp", "per million", 0, 1'000'000, false, "otpCorruptPpm",
     "Datagrams this process drops on sending (emulated loss).",
     get_field<&FabricOptions::otp_loss_ppm>, set_field<&FabricOptions::otp_loss_ppm>},
    {"otpCorruptPpm", "giop:otp", "per million", 0, 1'000'000, false, "otpLossPpm",
     "Datagrams this process corrupts on sending (the receiver's CRC discards them).",
     get_field<&FabricOptions::otp_corrupt_ppm>, set_field<&FabricOptions::otp_corrupt_ppm>},
    {"otpSeed", "giop:otp", "", 0, std::numeric_limits<uint32_t>::max(), false, nullptr,
     "Seed of the emulated loss and corruption.",
     get_field<&FabricOptions::otp_seed>, set_field<&FabricOptions::otp_seed>},
    {"otpWindow", "giop:otp", "credits", 0, 1024, false, nullptr,
     "Flow-control credits per direction (0: no flow control).",
     get_field<&FabricOptions::otp_window>, set_field<&FabricOptions::otp_window>},
    {"otpRtoUs", "giop:otp", "us", 1, 10'000'000, false, nullptr,
     "Retransmission timeout (at most 10 s): the server's, and the floor of the client's, which follows "
     "its calls' round trips; repeated timeouts back off up to 16 times this.",
     get_field<&FabricOptions::otp_rto_us>, set_field<&FabricOptions::otp_rto_us>},
    {"clanMaxConnections", "giop:clan, giop:otp", "connections", 1, kMaxConnections, false, nullptr,
     "Connections the process's NIC has room for, giop:clan and giop:otp, in and out together, "
     "resident or not; a server out of room refuses new ones and logs it.",
     get_field<&FabricOptions::max_connections>, set_field<&FabricOptions::max_connections>},
    {"clanMaxConnectionsPerClient", "giop:clan, giop:otp, giop:via", "connections", 0, 65535, false,
     nullptr,
     "Connections one client (one node) may have to a server endpoint; more are refused and logged "
     "(0: no limit).",
     get_field<&FabricOptions::max_connections_per_client>,
     set_field<&FabricOptions::max_connections_per_client>},
    {"clanFrames", "giop:clan, giop:otp, giop:via", "frames", 1, kMaxConnections, false, nullptr,
     "Connections the process's NICs keep resident at once (paper 004's frames); the others wait "
     "in host memory and are re-mapped on their next message, evicting another.",
     get_field<&FabricOptions::frames>, set_field<&FabricOptions::frames>},
    {"clanRemapNs", "giop:clan, giop:otp, giop:via", "ns", 0, clan::kMaxSpinNs, false, nullptr,
     "The emulated cost of making a connection resident (at most 1 s).",
     get_field<&FabricOptions::remap_ns>, set_field<&FabricOptions::remap_ns>},
    {"clanReplacement", "giop:clan, giop:otp, giop:via", "", 0, 1, false, nullptr,
     "Which resident connection gives up its frame: any at random, or the least recently used.",
     get_field<&FabricOptions::replacement>, set_field<&FabricOptions::replacement>,
     kReplacementNames},
}};

// omniORB's -ORBdumpConfiguration prints every number as a CORBA::ULong.
static_assert([] {
  for (const OrbOptionSpec& spec : kTable)
    if (spec.max > std::numeric_limits<uint32_t>::max()) return false;
  return true;
}());

bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::string with_unit(uint64_t v, const char* unit) {
  return *unit ? std::to_string(v) + " " + unit : std::to_string(v);
}

}  // namespace

std::span<const OrbOptionSpec> orb_option_table() { return kTable; }

namespace {

bool host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

std::string host_problem(const char* text) {
  const std::string host = text;
  if (host.empty()) return "the value is empty";
  if (host.size() > 253) return "the value is longer than a host name may be (253 characters)";
  for (char c : host) {
    if (!host_char(c)) return std::string("character '") + c + "' is in no IPv4 address or host name";
  }
  return "";
}

std::string provider_problem(const char* text) {
  const std::string name = text;
  if (name.empty() || name.size() > 32) return "a provider's name is 1 to 32 characters";
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == ';')) {
      return std::string("character '") + c + "' is in no provider's name (fi_info -l lists them)";
    }
  }
  return "";
}

constexpr std::array<OrbTextOptionSpec, 2> kTextTable{{
    {"clanHost", "giop:clan, giop:otp, giop:via", "an IPv4 address or host name of this host",
     "Where clients and servers on other hosts reach this process: its NICs' wires and its nodes listen "
     "there, giop:otp's datagrams to and from other hosts use it, and its object references say so. "
     "Unset, the transports serve this host only.",
     &FabricOptions::host, host_problem},
    {"clanProvider", "giop:clan, giop:via", "a libfabric provider's name",
     "The libfabric provider of the wire to other hosts (tcp everywhere; verbs and others where the "
     "hardware is).",
     &FabricOptions::provider, provider_problem},
}};

}  // namespace

std::span<const OrbTextOptionSpec> orb_text_option_table() { return kTextTable; }

const OrbOptionSpec* find_orb_option(const char* key) {
  for (const OrbOptionSpec& spec : kTable)
    if (std::strcmp(spec.key, key) == 0) return &spec;
  return nullptr;
}

std::string accepted_range(const OrbOptionSpec& spec) {
  if (spec.names) {
    std::string r = spec.names[0];
    for (size_t i = 1; spec.names[i]; ++i)
      r += (spec.names[i + 1] ? ", " : " or ") + std::string(spec.names[i]);
    return r;
  }
  std::string r = spec.power_of_two ? "a power of two from " : "";
  r += std::to_string(spec.min) + " to " + with_unit(spec.max, spec.unit);
  if (spec.shares_max_with)
    r += std::string(", and with ") + spec.shares_max_with + " at most " + std::to_string(spec.max);
  return r;
}

std::string value_text(const OrbOptionSpec& spec, uint64_t value) {
  return spec.names ? spec.names[value] : std::to_string(value);
}

std::optional<std::string> check_value(const OrbOptionSpec& spec, const char* text,
                                       uint64_t& value) {
  if (spec.names) {
    for (uint64_t i = 0; spec.names[i]; ++i) {
      if (std::strcmp(text, spec.names[i]) != 0) continue;
      value = i;
      return std::nullopt;
    }
    return std::string("the value is not one of its names; ") + spec.key + " takes " +
           accepted_range(spec);
  }
  const ParsedValue p = parse_decimal(text);
  std::string problem;
  if (p.problem != ValueProblem::kNone) {
    problem = describe(p.problem);
  } else if (p.value < spec.min || p.value > spec.max) {
    problem = "is out of range";
  } else if (spec.power_of_two && !is_power_of_two(p.value)) {
    problem = "is not a power of two";
  } else {
    value = p.value;
    return std::nullopt;
  }
  return "the value " + problem + "; " + spec.key + " takes " + accepted_range(spec) +
         ", in decimal digits";
}

std::optional<SharedMaxProblem> check_shared_maxima(const FabricOptions& o) {
  for (const OrbOptionSpec& spec : kTable) {
    if (!spec.shares_max_with) continue;
    const OrbOptionSpec& other = *find_orb_option(spec.shares_max_with);
    const uint64_t mine = spec.get(o), theirs = other.get(o);
    if (mine + theirs <= spec.max) continue;
    return SharedMaxProblem{&spec, std::to_string(mine) + " + " + std::to_string(theirs),
                            std::string(spec.key) + " and " + other.key + " add up to " +
                                std::to_string(mine + theirs) + "; together they take at most " +
                                std::to_string(spec.max)};
  }
  return std::nullopt;
}

std::string orb_options_markdown() {
  const FabricOptions defaults;
  std::string t =
      "| Option | Transports | Default | Accepted values | What it does |\n"
      "|---|---|---|---|---|\n";
  for (const OrbOptionSpec& spec : kTable) {
    t += std::string("| `-ORB") + spec.key + "` | " + spec.transports + " | " +
         (spec.names ? value_text(spec, spec.get(defaults))
                     : with_unit(spec.get(defaults), spec.unit)) +
         " | " + accepted_range(spec) + " | " + spec.what +
         " |\n";
  }
  for (const OrbTextOptionSpec& spec : kTextTable) {
    const std::string& value = defaults.*spec.field;
    t += std::string("| `-ORB") + spec.key + "` | " + spec.transports + " | " + (value.empty() ? "unset" : value) +
         " | " + spec.accepted + " | " + spec.what + " |\n";
  }
  return t;
}

}  // namespace clanorb
