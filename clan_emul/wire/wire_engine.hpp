// The wire's insides (wire.hpp is the interface): the libfabric objects,
// the links, the registrations, and the Boost.Asio loop that makes
// progress. One concern per file: wire_engine.cpp (opening and closing),
// wire_progress.cpp (the loop, completions and connection events),
// wire_links.cpp (connecting and accepting), wire_registry.cpp (cookies
// checked, regions registered, writes delivered).
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "clan_emul/wire/wire.hpp"
#include "clan_emul/wire/write_notice.hpp"

namespace clan::wire {

// A region registered for writes from other hosts.
struct Registration {
  uint32_t generation = 0;
  uint64_t key = 0;
  fid_mr* mr = nullptr;
  std::byte* shadow = nullptr;  // what the provider writes (mmap'd)
  std::byte* base = nullptr;    // the region itself
  size_t length = 0;
};

class WireEngine {
 public:
  WireEngine(const WireConfig& config, WireOwner& owner) : config_(config), owner_(owner) { landed_.reserve(64); }
  ~WireEngine();
  Errc open();

  // wire_links.cpp
  Result<std::shared_ptr<WireLink>> link_to(uint64_t nic_id, const std::string& address, Deadline deadline);
  bool knows(uint64_t nic_id) const;
  // `replied` (optional): whether the exporter's reply came.
  Errc validate_import(WireLink& link, const RdmaCookie& cookie, Deadline deadline, bool* replied = nullptr);
  // wire_registry.cpp
  void close_registration(uint32_t region);
  // wire_progress.cpp
  void poll();
  void progress();
  // A waiter is about to sleep: the wire's thread watches the queue again.
  void kick();

  WireConfig config_;
  WireOwner& owner_;
  std::string address_;
  size_t inject_size_ = 0;
  fi_info* info_ = nullptr;  // the listening address's
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_eq* eq_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_pep* pep_ = nullptr;

  // Links by id (every one, both sides), and the connecting side's by peer NIC.
  mutable std::mutex links_mu_;
  std::map<uint64_t, std::shared_ptr<WireLink>> links_;
  std::map<uint64_t, std::shared_ptr<WireLink>> by_nic_;
  std::map<uint64_t, std::string> addresses_;  // where each peer NIC was reached
  uint64_t next_link_ = 1;
  // links_.size(), read without the lock: a NIC with no link has nothing
  // for a spinning waiter to read.
  std::atomic<size_t> live_links_{0};
  void count_links() { live_links_.store(links_.size(), std::memory_order_relaxed); }
  std::condition_variable link_cv_;  // a link changed state

  // Import checks this NIC is waiting for, by request number.
  std::mutex requests_mu_;
  std::condition_variable requests_cv_;
  // Each answered only over the link it was asked on.
  struct PendingImport {
    uint64_t link = 0;
    std::optional<Errc> status;
  };
  std::map<uint64_t, PendingImport> requests_;
  uint64_t next_request_ = 1;

  // Serializes reading the completion queue and delivering writes, and the
  // registrations (closed under it, so no delivery copies from a freed shadow).
  std::mutex progress_mu_;
  std::map<uint32_t, Registration> registrations_;
  // Writes the wire's thread delivered whose tripwires fire once it has
  // re-armed (drain_until_quiet); under progress_mu_.
  struct Landed {
    uint32_t region;
    uint64_t offset;
    uint64_t length;
  };
  bool defer_landed_ = false;
  std::vector<Landed> landed_;

  static constexpr size_t kMaxLinks = 4096;
  std::atomic<uint64_t> links_refused_{0};
  std::atomic<uint64_t> links_accepted_{0}, links_broken_{0}, notices_dropped_{0}, messages_dropped_{0};

  // The progress loop.
  boost::asio::io_context io_;
  boost::asio::posix::stream_descriptor cq_watch_{io_};
  boost::asio::posix::stream_descriptor eq_watch_{io_};
  boost::asio::steady_timer sweep_{io_};
  boost::asio::steady_timer standby_{io_};
  std::thread thread_;
  // While threads spin on the fabric they read the queue themselves, and
  // the wire's thread stands down (standby_) instead of waking for every
  // message. last_spin_ns_: when one last did; standing_down_: whether the
  // thread is standing down (a waiter that goes to sleep then calls kick).
  std::atomic<uint64_t> last_spin_ns_{0};
  std::atomic<bool> standing_down_{false};
  // The io thread's own: whether it waits on cq_watch_ (cq_set_, an epoll
  // set holding the queue's wait descriptor cq_fd_ unless standing down)
  // and whether a stand-by timer runs.
  bool cq_watched_ = false;
  bool in_standby_ = false;
  int cq_set_ = -1;  // owned by cq_watch_
  int cq_fd_ = -1;   // the queue's, owned by libfabric

 private:
  // wire_engine.cpp
  Errc open_fabric();
  Errc open_queues();
  Errc listen();
  Errc wait_fd(fid* queue, const char* what, int& fd);
  Errc watch(fid* queue, boost::asio::posix::stream_descriptor& watch, const char* what);
  Errc watch_cq();
  void close_all();
  // wire_progress.cpp
 public:
  void start_loop();
  void arm_cq();
  void watch_cq_set();
  bool stand_by();
  void resume_watch();
  bool spun_recently() const;
  bool drain_until_quiet();
  bool progress_unless_busy();
  void arm_eq();
  void arm_sweep();
  // Reads the completion queue until it is empty, or `max_batches` full
  // batches were read.
  static constexpr size_t kDeferredBatches = 4;
  void drain_cq(size_t max_batches = SIZE_MAX);
  void drain_eq();
  void on_completion(const fi_cq_data_entry& e);
  void on_completion_error();
  void on_receive(uint64_t context, size_t len);
  void on_notice(WireLink& link, size_t slot, const std::byte* data, size_t len);
  void on_connection_event(uint32_t event, const fi_eq_cm_entry& entry);
  void on_connection_error();
  // wire_links.cpp
  std::shared_ptr<WireLink> link_by_id(uint64_t id) const;
  Errc make_endpoint(WireLink& link, fi_info* info);
  // link_to's parts, under links_mu_ (wire_links.cpp).
  Result<std::shared_ptr<WireLink>> existing_link(std::unique_lock<std::mutex>& lock, uint64_t nic_id,
                                                  Deadline deadline);
  Result<std::shared_ptr<WireLink>> connect_link(std::unique_lock<std::mutex>& lock, uint64_t nic_id,
                                                 const std::string& to, fi_info* info, Deadline deadline);
  void accept(fi_info* info);
  void link_down(uint64_t id, Errc reason);
  // wire_registry.cpp
  void on_import_request(WireLink& link, uint64_t request, const RdmaCookie& cookie);
  void on_import_reply(WireLink& link, uint64_t request, Errc status);
  Errc register_region(const RdmaCookie& cookie, const WireOwner::Admitted& admitted);
  void deliver(WireLink& link, const WriteNotice& notice, const std::byte* inline_data);
  void release(Registration& r);
  void tell_revoked(uint32_t region, uint32_t generation);
};

// A completion's context: the link's id and what was posted (a receive
// slot, or a write).
inline constexpr uint64_t kWriteContext = 0xff;
inline constexpr uint64_t kReplyContext = 0xfe;
inline constexpr uint64_t kInjectContext = 0xfd;
inline void* make_context(uint64_t link, uint64_t what) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>((link << 8) | what));
}
inline uint64_t context_link(void* c) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(c)) >> 8; }
inline uint64_t context_what(void* c) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(c)) & 0xff; }

}  // namespace clan::wire
