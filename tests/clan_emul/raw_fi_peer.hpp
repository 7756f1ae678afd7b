// A hostile peer of the remote wire: a bare libfabric FI_EP_MSG endpoint
// (tcp provider) connected to a wired NIC's address, that speaks the
// wire's protocol by hand (wire_message.hpp, write_notice.hpp) and so can
// send what no clan_emul NIC would: writes with a wrong key, notices that
// do not match their write, garbage control messages, or simply vanish.
// Everything polls with a deadline; nothing sleeps.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clan_emul/cookie.hpp"
#include "clan_emul/deadline.hpp"
#include "clan_emul/wire/wire_message.hpp"
#include "clan_emul/wire/write_notice.hpp"

namespace clan::test {

class RawFiPeer {
 public:
  // Connects to `address` ("host:port"); nullptr (with a message on
  // stderr) if the provider or the connection refuses.
  static std::unique_ptr<RawFiPeer> connect(const std::string& address, Deadline deadline);
  ~RawFiPeer();
  RawFiPeer(const RawFiPeer&) = delete;
  RawFiPeer& operator=(const RawFiPeer&) = delete;

  // Sends `len` raw bytes as one message (a control message slot).
  bool send_bytes(const void* data, size_t len);
  bool send_message(const wire::WireMessage& m);
  // Asks the NIC to check `cookie` and waits for its reply's status.
  std::optional<Errc> import(const RdmaCookie& cookie, Deadline deadline);
  // One RMA write of [src, src+len) at `offset` under `key`, then
  // `notice` as the wire's notice message; false if the provider refuses
  // to post either.
  bool write(uint64_t key, uint64_t offset, const void* src, size_t len, const wire::WriteNotice& notice);
  // Makes progress until the NIC has ended this connection (a shutdown
  // event or a failed completion): false at the deadline.
  bool wait_closed(Deadline deadline);
  // Makes progress until every write posted so far has completed locally.
  bool wait_writes(Deadline deadline);
  bool closed() const { return closed_; }
  // Deaf, the peer stops posting receives: it leaves what the NIC sends
  // it unread. Hearing again, it posts them anew.
  void set_deaf(bool deaf);
  // Makes progress until a reply to `request` (or a later one) arrived.
  bool await_reply(uint64_t request, Deadline deadline);
  // Closes the endpoint at once, writes in flight or not.
  void vanish();

 private:
  RawFiPeer() = default;
  bool open(const std::string& address, Deadline deadline);
  bool await_connected(Deadline deadline);
  void progress();  // reads the completion and event queues once
  void post_receives();

  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_eq* eq_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_ep* ep_ = nullptr;
  bool closed_ = false;
  bool deaf_ = false;
  std::vector<void*> idle_slots_;  // receives not posted again while deaf
  uint64_t highest_reply_ = 0;
  uint64_t writes_posted_ = 0, writes_done_ = 0;
  uint64_t next_request_ = 1;
  std::vector<std::byte> receive_;
  std::vector<std::vector<std::byte>> staged_;  // fi_writedata's buffers, kept until the end
  std::vector<wire::WireMessage> replies_;
};

}  // namespace clan::test
