// The connections each client has to one endpoint, and the most one client
// may have, so that one client cannot take every connection the NIC has room
// for. A client is a peer node (its OOB or VIA node name). An entry lives
// only while its client has a connection: a client that has gone leaves
// nothing behind. Taken and given back on accept and close only (it locks).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace clanorb {

class ClientSlots : public std::enable_shared_from_this<ClientSlots> {
 public:
  // One connection's place among its client's; given back when destroyed.
  class Slot {
   public:
    Slot() = default;
    Slot(Slot&&) = default;
    Slot& operator=(Slot&& o) noexcept;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() { give_back(); }

   private:
    friend class ClientSlots;
    void give_back();
    std::shared_ptr<ClientSlots> owner_;
    std::string client_;
  };

  // `cap`: the most connections one client may have; 0: no limit.
  static std::shared_ptr<ClientSlots> create(uint32_t cap);
  uint32_t cap() const { return cap_; }

  // A slot for one more connection of `client`; nullopt if it has `cap`.
  std::optional<Slot> take(const std::string& client);
  // Clients with a connection now.
  size_t clients() const;

 private:
  explicit ClientSlots(uint32_t cap) : cap_(cap) {}
  void give_back(const std::string& client);

  const uint32_t cap_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, uint32_t> held_;  // connections per client, never 0
};

}  // namespace clanorb
