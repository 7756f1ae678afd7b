// A completion queue behind a VIP_CQ_HANDLE (cq.cpp).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "clan_emul/deadline.hpp"
#include "clan_emul/event_queue.hpp"
#include "via/containers.hpp"

namespace via {

struct NicImpl;
struct Vi;

struct Cq {
  NicImpl* nic;
  clan::EventQueue eq;
  uint32_t kick = 0;  // source for completions found by other threads
  std::atomic<uint32_t> wakes{0};  // VipClanCQWake calls not yet seen by a waiter
  // The event queue has one consumer at a time: the turn is held while
  // polling or waiting on `eq` (VipCQDone only tries for it: the holder
  // progresses the VIs). A mutex and a condition variable rather than a
  // timed mutex, whose timed lock ThreadSanitizer does not see.
  std::mutex turn_mu;
  std::condition_variable turn_cv;
  bool turn_taken = false;
  int turn_waiters = 0;
  // Takes the turn, waiting for it until `deadline`; false if it did not come.
  bool take_turn(clan::Deadline deadline);
  bool try_take_turn();
  void give_turn();
  // VIs whose last progress left writes held (vi_held.cpp): nothing posts an
  // event when their peer becomes resident, so the turn's holder progresses
  // them again at every VipCQDone and VipCQWait. Touched under the turn only.
  std::vector<uint64_t> held_vis;
  // Progresses VI `id` for an event, noting whether it is left with held
  // writes.
  void progress(uint64_t id);
  // Progresses the VIs noted as held again.
  void progress_held();
  std::mutex mu;
  Fifo<std::pair<Vi*, bool>> entries;
  size_t capacity;
  uint32_t vis = 0;  // VIs attached (under nic->mu)
  void push(Vi* vi, bool recv);
};

}  // namespace via
