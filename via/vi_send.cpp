// A VI's send path (paper 001 sect. 3.3-3.7): a queued send takes the peer's
// next receive descriptor(s) from the cookie queue, writes the data straight
// into their buffers (PIO, or DMA through the VI's stream), then puts one
// transfer-queue record per descriptor and publishes them, their tags written
// after the data landed. Under the VI's lock; no allocation on the PIO path.
#include <algorithm>

#include "via/nic_impl.hpp"
#include "via/post_message.hpp"
#include "via/vi.hpp"

namespace via {

using clan::Errc;

// Takes the peer's next receive descriptor off the cookie ring, if it has
// posted one: true if it did. Pulled when a send needs one, and once ahead by
// a waiting VipRecvWait; not more eagerly: reading the slot after the last
// one posted takes its line from the peer, whose next post then waits for it.
bool Vi::pull_cookie() {
  if (!conn || state != VIP_STATE_CONNECTED) return false;
  const std::byte* m = conn->ck_rx->peek();
  if (!m) return false;
  // A message the peer wrote (and may still be writing): each field read
  // once and checked before use.
  RemoteDesc rd;
  size_t used = 0;
  if (!parse_post(m, kCookieMessage, next_remote, used, rd)) {
    fail(VIP_STATUS_TRANSPORT_ERROR);
    return false;
  }
  conn->ck_rx->consume();
  if (conn->ck_rx->owed()) held = true;  // the read pointer goes at the next progress
  ++next_remote;
  remote.push_back(rd);
  return true;
}

const std::shared_ptr<clan::Aperture>* Vi::map(const clan::RdmaCookie& c, Errc& e) {
  if (last_map && last_map->cookie() == c) {
    bump(mapping_hits);
    return &last_map;
  }
  auto ap = nic->cache.get(*nic->nic, c);
  if (!ap) {
    e = ap.error();
    return nullptr;
  }
  last_map = std::move(ap.value());
  return &last_map;
}

namespace {

using Pins = std::vector<std::shared_ptr<clan::Aperture>>;  // a DMA in flight reads through these

// What became of the send process_sends looked at, and what it does next.
enum class Outcome {
  kNext,      // on its way (or dropped, or rejected on an unreliable VI): the next send
  kDeferred,  // waits for a receive descriptor (DeferSends): no further send goes
  kHeld,      // the peer's endpoint is on the host: retried at the next progress
  kStopped,   // the VI broke (fail() done): stop at once
  kFatal,     // it completes with its error, then the reliable VI breaks
};

// The peer's receive descriptors chosen for a message: `need` of them from
// the front of vi.remote, or none (too small, or none posted).
struct Choice {
  size_t need = 0;
  bool too_small = false;  // the first descriptor cannot hold it and may not be split
};

// Which receive descriptors take `total` bytes: pulled from the peer until
// they hold it (or the peer has posted no more).
Choice choose_descriptors(Vi& vi, uint32_t total) {
  Choice c;
  do {
    uint64_t cap = 0;
    for (size_t k = 0; k < vi.remote.size(); ++k) {
      if (k > 0 && !(vi.remote[0].split && vi.remote[k].split)) break;
      cap += vi.remote[k].capacity;
      if (cap >= total) {
        c.need = k + 1;
        break;
      }
    }
    if (c.need == 0 && !vi.remote.empty() && !vi.remote[0].split) c.too_small = true;
  } while (c.need == 0 && !c.too_small && vi.pull_cookie());
  return c;
}

// Publishes the records put so far: by PIO, or by DMA behind the data (and
// behind any pointer update still in flight, which must not land later).
// The DMA ticket that publishes them, 0 for PIO. On kTimeout (PIO, the
// peer's endpoint on the host) the records not yet published are owed.
inline clan::Result<uint64_t> publish(Vi& vi, bool dma) {
  Conn& c = *vi.conn;
  if (dma || c.dma->completed() < vi.last_dma_ticket) {
    auto t = c.tq_tx->publish_dma(*c.dma);
    if (t) vi.last_dma_ticket = *t;
    return t;
  }
  Errc e = c.tq_tx->publish_pio(vi.peer_hold);
  if (e != Errc::kOk) return e;
  return uint64_t{0};
}

// A publication that timed out (or that the DMA engine would not take) is
// owed, not failed: the records are put, and their tags go at the next
// progress; `s` completes only after them.
inline clan::Result<uint64_t> publish_or_owe(Vi& vi, QueuedSend& s, bool dma) {
  auto t = publish(vi, dma);
  if (t.error() != Errc::kTimeout && t.error() != Errc::kWouldBlock) return t;
  vi.held = true;
  s.owed_to = vi.conn->tq_tx->mark();
  return uint64_t{0};
}

// The channel failed under a send: the VI breaks.
Outcome broken(Vi& vi) {
  vi.fail(VIP_STATUS_TRANSPORT_ERROR);
  return Outcome::kStopped;
}

// Completes the peer's next receive descriptor with `error`, and the send
// too: kNext, or kFatal on a reliable VI.
Outcome reject(Vi& vi, QueuedSend& s, uint32_t error) {
  wire::Record rec{0, vi.remote.front().seq, 0, 0, wire::kError, error, 0, {}};
  if (Errc e = vi.conn->tq_tx->put(rec, vi.peer_hold); e != Errc::kOk) {
    if (e != Errc::kTimeout) return broken(vi);
    vi.held = true;
    return Outcome::kHeld;
  }
  vi.remote.pop_front();
  auto t = publish_or_owe(vi, s, false);
  if (!t) return broken(vi);
  s.in_flight = true;
  s.ticket = *t;
  s.status = error;
  return reliable(vi) ? Outcome::kFatal : Outcome::kNext;
}

// No receive descriptor posted (sect. 3.3.4): detected here, nothing is
// transmitted.
Outcome overrun(Vi& vi, QueuedSend& s) {
  if (vi.ext.DeferSends) return Outcome::kDeferred;  // sect. 3.7.1: wait for one
  s.in_flight = true;
  s.ticket = 0;
  if (!reliable(vi)) {
    bump(vi.dropped_sends);
    s.status = 0;  // dropped, and the send completes
    return Outcome::kNext;
  }
  s.status = VIP_STATUS_TRANSPORT_ERROR;
  return Outcome::kFatal;
}

// The send's bytes in order, a chunk at a time.
class SendReader {
 public:
  explicit SendReader(const QueuedSend& s) : segs_(s.segs) {}
  // The next chunk, of at most `n` bytes (n no more than what is left).
  LocalSegment next(uint32_t n) {
    while (seg_ < segs_.size() && off_ == segs_[seg_].length) {
      ++seg_;
      off_ = 0;
    }
    const uint32_t chunk = std::min<uint64_t>(n, segs_[seg_].length - off_);
    const LocalSegment c{segs_[seg_].data + off_, chunk};
    off_ += chunk;
    return c;
  }

 private:
  const InlineVec<LocalSegment, kMaxSegments>& segs_;
  size_t seg_ = 0;
  size_t off_ = 0;
};

// kWouldBlock from the DMA engine (its queue full, or the stream's share of
// held requests taken, paper 004 sect. 3.2) is not fatal: the send is
// retried, whole, at the next progress; a waiter waits for the stream to
// move without the VI's lock (vi_wait.cpp).
Errc write_chunk(Vi& vi, clan::Aperture& ap, uint64_t offset, LocalSegment chunk, bool use_dma) {
  if (!use_dma) return ap.write(offset, chunk.data, chunk.length);
  return vi.conn->dma->write(ap, offset, chunk.data, chunk.length).error();
}

// Writes the next `n` bytes of the send into the receive buffer `seg`
// (mapped through the PIO mapping cache). kWouldBlock: the DMA engine took
// no more (retry the send); another error: it may not be written.
Errc copy_segment(Vi& vi, const wire::PostSegment& seg, uint32_t n, SendReader& from,
                  bool use_dma, Pins& pins) {
  Errc map_error = Errc::kOk;
  const std::shared_ptr<clan::Aperture>* ap = vi.map(seg.cookie, map_error);
  if (!ap || (*ap)->size() < seg.offset + seg.length) return Errc::kOutOfRange;
  if (use_dma) pins.push_back(*ap);
  for (uint64_t at = seg.offset; n > 0;) {
    const LocalSegment chunk = from.next(n);
    if (Errc e = write_chunk(vi, **ap, at, chunk, use_dma); e != Errc::kOk) return e;
    at += chunk.length;
    n -= chunk.length;
  }
  return Errc::kOk;
}

// Moves the send's data into the first `need` receive descriptors: as
// copy_segment (another error: a receive buffer is revoked, forged, out of
// range).
Errc copy_segments(Vi& vi, const QueuedSend& s, size_t need, bool use_dma, Pins& pins) {
  SendReader from(s);
  uint32_t remaining = s.total;
  for (size_t k = 0; k < need; ++k) {
    uint32_t in_desc = std::min<uint64_t>(vi.remote[k].capacity, remaining);
    remaining -= in_desc;
    for (const wire::PostSegment& seg : vi.remote[k].segs) {
      if (in_desc == 0) break;
      const uint32_t n = std::min<uint64_t>(seg.length, in_desc);
      in_desc -= n;
      if (Errc e = copy_segment(vi, seg, n, from, use_dma, pins); e != Errc::kOk) return e;
    }
  }
  return Errc::kOk;
}

// One record per descriptor taken (all but the last marked kMore), put
// before the data is written: unpublished, a record is not there for the
// reader, and one the peer's endpoint is not resident for (kTimeout) holds
// the send before anything of it is written.
Errc put_records(Vi& vi, const QueuedSend& s, size_t need) {
  const bool imm = (s.d->CS.Control & VIP_CONTROL_IMMEDIATE) != 0;
  uint32_t remaining = s.total;
  for (size_t k = 0; k < need; ++k) {
    const uint32_t bytes = std::min<uint64_t>(vi.remote[k].capacity, remaining);
    remaining -= bytes;
    uint32_t flags = (k + 1 < need ? wire::kMore : 0u) | (imm && k + 1 == need ? wire::kImmediate : 0u);
    wire::Record rec{0, vi.remote[k].seq, bytes, imm ? s.d->CS.ImmediateData : 0u, flags, 0, 0, {}};
    if (Errc e = vi.conn->tq_tx->put(rec, vi.peer_hold); e != Errc::kOk) return e;
  }
  return Errc::kOk;
}

// Sends `s` into the first `need` receive descriptors.
Outcome transmit(Vi& vi, QueuedSend& s, size_t need) {
  const bool use_dma = vi.ext.TransferMode == VIP_CLAN_TRANSFER_DMA ||
                       (vi.ext.TransferMode == VIP_CLAN_TRANSFER_AUTO && s.total > vi.ext.PioThreshold);
  TransferSender& tq = *vi.conn->tq_tx;
  const uint64_t mark = tq.mark();
  if (Errc e = put_records(vi, s, need); e != Errc::kOk) {
    if (e != Errc::kTimeout) return broken(vi);
    tq.rewind(mark);  // put again, whole, when retried
    vi.held = true;
    return Outcome::kHeld;
  }
  Pins pins;  // DMA only
  if (Errc e = copy_segments(vi, s, need, use_dma, pins); e != Errc::kOk) {
    // Chunks already queued by DMA read through `pins`, and may be held
    // behind a tag for the peer's endpoint: the channel keeps them until
    // the stream has performed them.
    if (!pins.empty()) vi.conn->keep_pins(pins);
    tq.rewind(mark);
    if (e != Errc::kWouldBlock) return reject(vi, s, VIP_STATUS_PROTECTION_ERROR);
    vi.held = true;  // sent again, whole, at the next progress
    return Outcome::kHeld;
  }
  auto t = publish_or_owe(vi, s, use_dma);
  if (!t) return broken(vi);
  vi.remote.pop_front(need);
  bump(use_dma ? vi.dma_sends : vi.pio_sends);
  s.in_flight = true;
  s.ticket = *t;
  s.status = 0;
  s.pins = std::move(pins);  // DMA only: its chunks read through them
  return Outcome::kNext;
}

Outcome send_one(Vi& vi, QueuedSend& s) {
  const Choice choice = choose_descriptors(vi, s.total);
  if (!vi.conn || vi.state != VIP_STATE_CONNECTED) return Outcome::kStopped;  // the peer wrote garbage
  if (choice.too_small) return reject(vi, s, VIP_STATUS_LENGTH_ERROR);
  if (choice.need == 0) return overrun(vi, s);
  return transmit(vi, s, choice.need);
}

}  // namespace

Errc Vi::republish() { return publish(*this, false).error(); }

void Vi::process_sends() {
  size_t idx = 0;
  while (idx < sends.size() && sends[idx].in_flight) ++idx;
  while (conn && state == VIP_STATE_CONNECTED && idx < sends.size()) {
    Errc space = conn->tq_tx->space();
    if (space == Errc::kWouldBlock) break;  // the receiver has not caught up yet
    if (space != Errc::kOk) return fail(VIP_STATUS_TRANSPORT_ERROR);
    const Outcome o = send_one(*this, sends[idx]);
    if (o == Outcome::kStopped) return;
    if (o == Outcome::kDeferred || o == Outcome::kHeld) break;
    if (o == Outcome::kFatal) {
      complete_sends();
      return fail(0);
    }
    ++idx;
  }
  complete_sends();
}

}  // namespace via
