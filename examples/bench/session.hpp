// The measuring side of a two-process benchmark: the program's name in its
// messages, the way it gives up (die), and the clan_emul set-up both
// processes share (a private runtime directory, one spin budget).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "clan_emul/nic.hpp"

namespace bench {

// The name every message starts with ("bench_via_latency: error: ...").
void set_program_name(const char* name);
const char* program_name();

// Prints the error, kills the peer if one is registered (and reports its
// exit status), removes the private runtime directory and exits with 1.
[[noreturn]] void die(const std::string& what);

// The peer die() kills; -1 for none.
void register_peer(pid_t pid);

// A private clan_emul runtime directory (the OOB name service), set in
// CLAN_RUNTIME_DIR so that the peer inherits it; dies if it cannot be made.
std::string make_runtime_dir(const char* prefix);
// Removes it (die() does too); harmless when there is none.
void remove_runtime_dir();

// One spin budget for every NIC of both processes: sets CLAN_SPIN_NS when
// spin_ns >= 0 (the command line wins over the environment).
void apply_spin_budget(int64_t spin_ns);
// A NIC named `name`; spin_ns >= 0 sets its spin budget (CLAN_SPIN_NS,
// when set, still overrides it in Nic::open).
clan::NicConfig nic_config(const std::string& name, int64_t spin_ns = -1);

// Where the budget in force comes from: " (--spin-ns)", " (CLAN_SPIN_NS)"
// or " (clan_emul default)".
const char* spin_budget_source(int64_t spin_ns);

}  // namespace bench
