// A connected VI's channel: the rings both ways, the DMA stream, the OOB
// connection (vi_teardown.cpp; set up in connect.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "clan_emul/aperture.hpp"
#include "clan_emul/dma_stream.hpp"
#include "clan_emul/endpoint.hpp"
#include "clan_emul/oob_connection.hpp"
#include "clan_emul/region.hpp"
#include "via/cookie_ring.hpp"
#include "via/transfer_queue.hpp"

namespace via {

struct Cq;

// The shared-memory channel of a connected VI (paper 001 Fig. 3).
struct Conn {
  // The VI's endpoint (paper 004 sect. 3): both channel blocks are its, so
  // the channel is resident only while it holds a frame. First: released
  // after everything created with it.
  clan::Endpoint endpoint;
  // Both channel blocks (wire::block_layout), before the rings that use
  // them: destroyed after them.
  clan::Region block;         // ours: the peer writes it
  clan::Aperture peer_block;  // the peer's, mapped once connected
  std::unique_ptr<CookieSender> ck_tx;       // our receive descriptors -> peer
  std::unique_ptr<CookieReceiver> ck_rx;     // peer's receive descriptors
  std::unique_ptr<TransferSender> tq_tx;     // records -> peer
  std::unique_ptr<TransferReceiver> tq_rx;   // peer's records
  // Apertures that requests still queued on `dma` read through, kept by no
  // send (one rejected part way, or the sends of a channel torn down): a
  // request held for a non-resident endpoint outlives any wait, so they are
  // released only once the stream has performed them (let_go_pins), or
  // after it, which waits for all of them: declared before it.
  std::vector<std::shared_ptr<clan::Aperture>> orphan_pins;
  uint64_t orphan_until = 0;  // the stream's last ticket that reads them
  std::unique_ptr<clan::DmaStream> dma;      // data + pointer updates, in order
  std::atomic<int> down{0};                  // 1: peer closed, 2: peer died
  Cq* send_cq = nullptr;
  Cq* recv_cq = nullptr;
  uint32_t send_src = 0, recv_src = 0;
  std::shared_ptr<clan::OobConnection> oob;  // last: destroyed first
  void wake();                               // after `down` changed
  // Keeps `pins` until every request now queued on `dma` is performed
  // (vi_teardown.cpp); lets go of those kept that are.
  void keep_pins(std::vector<std::shared_ptr<clan::Aperture>>& pins);
};

}  // namespace via
