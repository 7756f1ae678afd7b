// The frame both fabric programs run in: start-up, the two processes with
// the measuring side's driver, and the end (the peer reaped, the tables
// printed, the result files written).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/channel.hpp"
#include "bench/machine.hpp"
#include "bench/options.hpp"
#include "bench/process_pair.hpp"
#include "clan_emul/futex.hpp"
#include "clan_emul/nic.hpp"

namespace fabric_bench {

// What both programs' results start with: the machine, and the spin budget
// and pinning in force.
struct RunInfo {
  bench::MachineInfo machine;
  int64_t spin_ns = 0;
  bool pinned = false;
};

// The program's name in messages, its target ids checked against
// targets.tsv, SIGPIPE ignored (a dead peer must turn into an error
// message), and the spin budget of --spin-ns applied. Returns the machine
// (read before the fork).
bench::MachineInfo start_program(const char* name, const std::vector<std::string>& targets, int64_t spin_ns);

// Maps `bytes` of memory shared across the fork; dies if it cannot.
void* map_shared(size_t bytes, const char* what);

// With --pin, pins this process to the n-th allowed CPU (the measuring side
// 0, the peer 1). True if pinned and a second CPU exists for the peer.
bool pin_side(const bench::CommonOptions& o, int n);

// The measuring side's NIC: a driver's base.
class Side {
 public:
  std::chrono::nanoseconds spin_budget() const { return nic_->spin_budget(); }
  bool pinned() const { return pinned_; }

 protected:
  // Opens the NIC "fabric-a"; dies if it cannot.
  void open_nic(int64_t spin_ns);

  std::unique_ptr<clan::Nic> nic_;
  bool pinned_ = false;
};

// The peer's NIC and control channel: a peer's base.
class PeerSide {
 protected:
  explicit PeerSide(bench::Channel ctl) : ctl_(std::move(ctl)) {}
  // Opens the NIC "fabric-b"; false if it cannot.
  bool open_nic(int64_t spin_ns);

  bench::Channel ctl_;
  std::unique_ptr<clan::Nic> nic_;
};

// The peer's command loop: run(command) gives each reply, whose wake-up
// calls are counted here. A failed command's reply ends the peer (exit code
// 30); so do kQuit (0) and a lost control channel (20, 21).
template <class Command, class Reply, class Run>
int serve_commands(bench::Channel& ctl, Run run) {
  for (;;) {
    Command c{};
    // The measuring side may spend a while on its own measurements and output.
    if (!ctl.get(c, std::chrono::seconds(600))) return 20;
    if (c.op == decltype(c.op)::kQuit) return 0;
    const uint64_t wakes0 = clan::futex_wake_calls();
    Reply r = run(c);
    if (r.status != 0) {
      ctl.put(r);
      return 30;
    }
    r.wakes = clan::futex_wake_calls() - wakes0;
    if (!ctl.put(r)) return 21;
  }
}

// Parses the command line: the common options (the fabric programs do not
// pin unless asked), then take(argument, i) for the program's own (false:
// not one of them, `usage`).
template <class Take>
void parse_options(int argc, char** argv, bench::CommonOptions& common, void (*usage)(const char* argv0), Take take) {
  common.pin = false;
  for (int i = 1; i < argc; ++i) {
    if (bench::take_common_option(argc, argv, i, common, usage)) continue;
    if (!take(std::string(argv[i]), i)) usage(argv[0]);
  }
}

// Prints "usage: argv0 options" and exits with status 2.
[[noreturn]] void print_usage(const char* argv0, const char* options);

// A numeric option's value (argv[i + 1], i advanced); `usage` if it is
// missing, not a number or below `min`.
long long option_number(int argc, char** argv, int& i, void (*usage)(const char* argv0), long long min = 0);

// The peer's life: pinned with --pin, set up (0 or the exit code of the
// step that failed), then serving commands until told to quit.
template <class Peer, class Shared>
int serve_as_peer(const bench::CommonOptions& o, Shared& sh, bench::Channel ctl) {
  pin_side(o, 1);
  Peer peer(sh, std::move(ctl));
  const int code = peer.setup(o);
  return code != 0 ? code : peer.serve();
}

// What a program prints and writes at its end.
struct Ending {
  std::function<void()> print;
  std::function<bool()> write;  // with --out
  const char* files;            // what write() writes, named on stderr
};

// `quit` sent, the peer reaped, then the tables printed and (with --out)
// the files written: the exit status, non-zero if anything failed.
int end_program(bench::ProcessPair& pair, const std::function<void()>& quit, const bench::CommonOptions& o,
                const Ending& e);

// The program started (start_program: the machine recorded in `info`), then
// its two processes: the shared memory and socketpair made before the fork,
// the peer forked, the driver set up; its spin budget and pinning recorded
// in `info`.
template <class Shared, class Driver>
class FabricPair {
 public:
  using PeerMain = int (*)(const bench::CommonOptions&, Shared&, bench::Channel);
  struct Program {
    const char* name;
    const std::vector<std::string>& targets;
  };

  FabricPair(Program program, const bench::CommonOptions& o, PeerMain peer, RunInfo& info)
      : o_(o),
        machine_(info.machine = start_program(program.name, program.targets, o.spin_ns)),
        pair_([this, peer](bench::Channel ctl) { return start_peer(peer, std::move(ctl)); }),
        drv_(o, kept(sh_), pair_.take_control()) {
    drv_.setup();
    info.spin_ns = drv_.spin_budget().count();
    info.pinned = drv_.pinned();
  }

  Driver& driver() { return drv_; }

  // The peer told to quit and reaped, then `e`: the exit status.
  int end(const Ending& e) {
    return end_program(pair_, [this] { drv_.quit(); }, o_, e);
  }

 private:
  int start_peer(PeerMain peer, bench::Channel ctl) {
    sh_.unix_pair.keep(1);
    return peer(o_, sh_, std::move(ctl));
  }
  static Shared& kept(Shared& sh) {
    sh.unix_pair.keep(0);
    return sh;
  }
  const bench::CommonOptions& o_;
  bench::MachineInfo machine_;  // the program started before anything else is made
  Shared sh_;
  bench::ProcessPair pair_;
  Driver drv_;
};

}  // namespace fabric_bench
