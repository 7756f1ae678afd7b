// VIs and the data path (paper 001 sect. 3.3-3.7): receive descriptors become
// RDMA cookies in the cookie queue; a send takes them and writes the data
// straight into the receive buffers (PIO or DMA), then a transfer-queue
// record, published (its tag written) after the data landed.
//
// Progress is made inside the calls (post, done, wait, CQ): there is no
// library thread. All of it runs under the VI's lock.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <optional>

#include "clan_emul/futex.hpp"
#include "via/internal.hpp"

namespace via {

using clan::Errc;

namespace {

// A copy of descriptor memory that is checked and then used as it was read:
// descriptors may live in memory a peer can write (a region exported for
// receiving), and a field read again after its check could have changed
// (a length that passed against its registration, then a larger one sent).
// The compiler barrier keeps the compiler from reading the source again.
template <class T>
T read_once(const T& shared) {
  T copy;
  std::memcpy(&copy, &shared, sizeof copy);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  return copy;
}

VIP_DESCRIPTOR_SEGMENT* segments(VIP_DESCRIPTOR* d) {
  return reinterpret_cast<VIP_DESCRIPTOR_SEGMENT*>(reinterpret_cast<char*>(d) +
                                                   offsetof(VIP_DESCRIPTOR, DS));
}

bool reliable(const Vi& vi) { return vi.attrs.ReliabilityLevel != VIP_SERVICE_UNRELIABLE; }

VIP_RETURN result_of(const VIP_DESCRIPTOR* d) {
  return (d->CS.Status & VIP_STATUS_ERROR_MASK) ? VIP_DESCRIPTOR_ERROR : VIP_SUCCESS;
}

// VipRecvWait polls this many times before it reads the clock and waits.
constexpr int kQuickSpins = 256;

}  // namespace

void Conn::wake() {
  if (tq_rx) tq_rx->tripwire().poke();
  if (ck_rx) ck_rx->tripwire().wake_waiters();
  if (recv_cq) recv_cq->eq.notify(recv_src);
  if (send_cq) send_cq->eq.notify(send_src);
}

const MemReg* Vi::find_mem(VIP_MEM_HANDLE h) {
  const uint64_t epoch = nic->mem_epoch.load(std::memory_order_acquire);
  for (const MemHit& m : mem_hits) {
    if (m.handle == h && m.epoch == epoch) return &m.reg;
  }
  std::lock_guard lock(nic->mu);
  auto it = nic->mems.find(h);
  if (it == nic->mems.end()) return nullptr;
  MemHit& m = mem_hits[mem_next];
  mem_next = (mem_next + 1) % std::size(mem_hits);
  m = MemHit{h, nic->mem_epoch.load(std::memory_order_relaxed), it->second};
  return &m.reg;
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
// Under the VI's lock: one more completion. A waiter (about to be) asleep on
// `tripwire` whose ready() compares the count is woken to see it.
void count_completion(std::atomic<uint64_t>& count, uint32_t waiters, const clan::Tripwire* tripwire) {
  const uint64_t n = count.load(std::memory_order_relaxed) + 1;
  if (waiters == 0) {
    count.store(n, std::memory_order_relaxed);
    return;
  }
  count.store(n, std::memory_order_seq_cst);
  if (tripwire) tripwire->wake_waiters();
}

// Lets go of what a send holds in CLAN blocks (see MemRegion::in_use).
void release_blocks(QueuedSend& s) {
  unhold(s.block);
  s.block = nullptr;
  for (MemRegion* r : s.data_blocks) unhold(r);
  s.data_blocks.clear();
}
}  // namespace

void Vi::finish_send(QueuedSend& s, uint32_t status) {
  s.d->CS.Status = status | VIP_STATUS_DONE | VIP_STATUS_OP_SEND;
  send_done.push_back(Done{s.d, s.block});  // its block stays held until it is handed back
  s.block = nullptr;
  release_blocks(s);  // its buffers' blocks
  // A VipSendWait asleep on the cookie ring: this send may have taken the
  // descriptor it was woken for.
  count_completion(send_completions, cookie_waiters, conn ? &conn->ck_rx->tripwire() : nullptr);
  if (send_cq) send_cq->push(this, false);
}

void Vi::finish_recv(PostedRecv& p, uint32_t status) {
  p.d->CS.Status = status | VIP_STATUS_DONE | VIP_STATUS_OP_RECEIVE;
  for (MemRegion* r : p.regions) nic->release(r);  // may revoke the peer's access
  recv_done.push_back(Done{p.d, p.block});  // its block stays held until it is handed back
  p.block = nullptr;
  // A VipRecvWait in another thread, (about to be) blocked.
  count_completion(recv_completions, recv_waiters, conn ? &conn->tq_rx->tripwire() : nullptr);
  if (recv_cq && recv_notify) recv_cq->push(this, true);
}

void Vi::teardown() {
  if (!conn) return;
  std::shared_ptr<Conn> c = std::move(conn);
  if (c->oob) {
    c->oob->disconnect();
    c->oob.reset();  // waits for an on_down call in progress
  }
  // Everything queued on the DMA engine reads our send buffers and pins:
  // let it finish (local, so quick) before they go.
  c->dma->wait(c->dma->submitted(), clan::Deadline::after(std::chrono::seconds(5)));
  c->down.store(1, std::memory_order_release);
  c->wake();
  for (size_t i = 0; i < sends.size(); ++i) sends[i].pins.clear();
  remote.clear();
  last_map.reset();
}

void Vi::fail(uint32_t status) {
  teardown();
  state = VIP_STATE_ERROR;
  for (size_t i = 0; i < posted.size(); ++i) {
    finish_recv(posted[i], VIP_STATUS_DESC_FLUSHED_ERROR | status);
  }
  posted.clear();
  for (size_t i = 0; i < sends.size(); ++i) {
    QueuedSend& s = sends[i];
    finish_send(s, s.in_flight ? s.status : VIP_STATUS_DESC_FLUSHED_ERROR | status);
  }
  sends.clear();
}

size_t encode_post(const PostedRecv& p, std::byte* out) {
  wire::PostHeader h{wire::kPostMagic, static_cast<uint32_t>(p.segs.size()), p.capacity,
                     p.split ? wire::kSplit : 0u, p.seq};
  std::memcpy(out, &h, sizeof h);
  size_t len = sizeof h;
  for (const auto& s : p.segs) {
    std::memcpy(out + len, &s, sizeof s);
    len += sizeof s;
  }
  return len;
}

bool parse_post(const std::byte* p, size_t len, uint64_t expect_seq, size_t& used,
                RemoteDesc& out) {
  wire::PostHeader h;
  if (len < sizeof h) return false;
  std::memcpy(&h, p, sizeof h);
  if (h.magic != wire::kPostMagic || h.segments > kMaxSegments || h.seq != expect_seq ||
      (h.flags & ~wire::kSplit) != 0) {
    return false;
  }
  used = sizeof h + h.segments * sizeof(wire::PostSegment);
  if (len < used) return false;
  out.seq = h.seq;
  out.capacity = h.capacity;
  out.split = (h.flags & wire::kSplit) != 0;
  out.segs.clear();
  uint64_t sum = 0;
  for (uint32_t i = 0; i < h.segments; ++i) {
    wire::PostSegment s;
    std::memcpy(&s, p + sizeof h + i * sizeof s, sizeof s);
    if (s.length > s.cookie.length || s.offset > s.cookie.length - s.length) return false;
    sum += s.length;
    out.segs.push_back(s);
  }
  return sum == h.capacity;
}

Errc Vi::push_post(const PostedRecv& p) {
  std::byte msg[kCookieMessage];
  size_t len = encode_post(p, msg);
  // The ring holds more than a full receive queue: it is never full.
  Errc e = conn->ck_tx->push(p.seq, msg, len);
  if (e == Errc::kOk) pushed = p.seq + 1;
  return e;
}

void Vi::poll_records() {
  while (conn && state == VIP_STATE_CONNECTED) {
    auto r = conn->tq_rx->peek();
    if (!r) return fail(VIP_STATUS_TRANSPORT_ERROR);  // garbage in our ring
    if (!*r) return;
    const wire::Record rec = **r;
    if (posted.empty()) return fail(VIP_STATUS_TRANSPORT_ERROR);
    PostedRecv& head = posted.front();
    if (rec.desc_seq != head.seq || rec.length > head.capacity ||
        ((rec.flags & wire::kMore) && !head.split)) {
      return fail(VIP_STATUS_TRANSPORT_ERROR);
    }
    conn->tq_rx->consume();
    uint32_t status = 0;
    if (rec.flags & wire::kImmediate) {
      status |= VIP_STATUS_IMMEDIATE;
      head.d->CS.ImmediateData = rec.immediate;
    }
    if (rec.flags & wire::kMore) status |= VIP_STATUS_CLAN_MORE;
    if (rec.flags & wire::kError) {
      uint32_t e = rec.status & VIP_STATUS_ERROR_MASK;
      status |= e ? e : VIP_STATUS_TRANSPORT_ERROR;
    }
    head.d->CS.Length = (rec.flags & wire::kError) ? 0 : rec.length;
    finish_recv(head, status);
    posted.pop_front();
    if ((rec.flags & wire::kError) && reliable(*this)) return fail(0);
  }
}

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
  ++next_remote;
  remote.push_back(rd);
  return true;
}

void Vi::complete_sends() {
  while (!sends.empty() && sends.front().in_flight) {
    QueuedSend& s = sends.front();
    if (s.ticket != 0 && conn && !conn->dma->done(s.ticket)) return;
    uint32_t status = s.status;
    if (s.ticket != 0 && conn && conn->dma->error() != Errc::kOk) {
      status |= VIP_STATUS_TRANSPORT_ERROR;
    }
    finish_send(s, status);
    sends.pop_front();
  }
}

void Vi::process_sends() {
  size_t idx = 0;
  while (idx < sends.size() && sends[idx].in_flight) ++idx;
  Conn* c = conn.get();
  // Publishes the records put so far: by PIO, or by DMA behind the data (and
  // behind any pointer update still in flight, which must not land later).
  auto publish = [&](bool dma) -> clan::Result<uint64_t> {
    if (dma || c->dma->completed() < last_dma_ticket) {
      auto t = c->tq_tx->publish_dma(*c->dma);
      if (t.error() == Errc::kWouldBlock) {
        c->dma->wait(c->dma->submitted(), clan::Deadline::after(std::chrono::seconds(1)));
        t = c->tq_tx->publish_dma(*c->dma);
      }
      if (t) last_dma_ticket = *t;
      return t;
    }
    Errc e = c->tq_tx->publish_pio();
    if (e != Errc::kOk) return e;
    return uint64_t{0};
  };
  // Completes the receiver's descriptor `rd` with an error, and the send too.
  auto reject = [&](QueuedSend& s, uint32_t error) -> bool {
    wire::Record rec{0, remote.front().seq, 0, 0, wire::kError, error, 0, {}};
    remote.pop_front();
    if (c->tq_tx->put(rec) != Errc::kOk) return false;
    auto t = publish(false);
    if (!t) return false;
    s.in_flight = true;
    s.ticket = *t;
    s.status = error;
    return true;
  };

  while (conn && state == VIP_STATE_CONNECTED && idx < sends.size()) {
    QueuedSend& s = sends[idx];
    Errc space = c->tq_tx->space();
    if (space == Errc::kWouldBlock) break;  // the receiver has not caught up yet
    if (space != Errc::kOk) return fail(VIP_STATUS_TRANSPORT_ERROR);

    // Which receive descriptors take this message? Pulled from the peer
    // until they hold it (or the peer has posted no more).
    size_t need = 0;
    bool too_small = false;
    do {
      uint64_t cap = 0;
      for (size_t k = 0; k < remote.size(); ++k) {
        if (k > 0 && !(remote[0].split && remote[k].split)) break;
        cap += remote[k].capacity;
        if (cap >= s.total) {
          need = k + 1;
          break;
        }
      }
      if (need == 0 && !remote.empty() && !remote[0].split) too_small = true;
    } while (need == 0 && !too_small && pull_cookie());
    if (!conn || state != VIP_STATE_CONNECTED) return;  // the peer wrote garbage

    if (need == 0 && !too_small) {
      // Overrun (sect. 3.3.4): detected here, nothing is transmitted.
      if (ext.DeferSends) break;  // sect. 3.7.1: wait for a receive descriptor
      if (!reliable(*this)) {
        bump(dropped_sends);
        s.in_flight = true;
        s.ticket = 0;
        s.status = 0;  // dropped, and the send completes
        ++idx;
        continue;
      }
      s.in_flight = true;
      s.ticket = 0;
      s.status = VIP_STATUS_TRANSPORT_ERROR;
      complete_sends();
      return fail(0);
    }
    if (too_small) {
      if (!reject(s, VIP_STATUS_LENGTH_ERROR)) return fail(VIP_STATUS_TRANSPORT_ERROR);
      ++idx;
      if (reliable(*this)) {
        complete_sends();
        return fail(0);
      }
      continue;
    }

    // Map the receive buffers (PIO mapping cache) and move the data.
    const bool use_dma = ext.TransferMode == VIP_CLAN_TRANSFER_DMA ||
                         (ext.TransferMode == VIP_CLAN_TRANSFER_AUTO && s.total > ext.PioThreshold);
    std::vector<std::shared_ptr<clan::Aperture>> pins;  // DMA only
    size_t local = 0, local_off = 0;
    uint32_t remaining = s.total;
    bool ok = true;
    for (size_t k = 0; ok && k < need; ++k) {
      uint32_t in_desc = std::min<uint64_t>(remote[k].capacity, remaining);
      remaining -= in_desc;
      for (const wire::PostSegment& seg : remote[k].segs) {
        if (in_desc == 0) break;
        Errc map_error = Errc::kOk;
        const std::shared_ptr<clan::Aperture>* ap = map(seg.cookie, map_error);
        if (!ap || (*ap)->size() < seg.offset + seg.length) {
          ok = false;
          break;
        }
        if (use_dma) pins.push_back(*ap);
        uint64_t seg_off = 0;
        uint32_t n = std::min<uint64_t>(seg.length, in_desc);
        in_desc -= n;
        while (n > 0 && ok) {
          while (local < s.segs.size() && local_off == s.segs[local].length) {
            ++local;
            local_off = 0;
          }
          uint32_t chunk = std::min<uint64_t>(n, s.segs[local].length - local_off);
          const std::byte* src = s.segs[local].data + local_off;
          Errc e;
          if (use_dma) {
            auto t = c->dma->write(**ap, seg.offset + seg_off, src, chunk);
            if (t.error() == Errc::kWouldBlock) {
              c->dma->wait(c->dma->submitted(), clan::Deadline::after(std::chrono::seconds(1)));
              t = c->dma->write(**ap, seg.offset + seg_off, src, chunk);
            }
            e = t.error();
          } else {
            e = (*ap)->write(seg.offset + seg_off, src, chunk);
          }
          ok = e == Errc::kOk;
          local_off += chunk;
          seg_off += chunk;
          n -= chunk;
        }
      }
    }
    if (!ok && !pins.empty()) {
      // Chunks already queued by DMA read through `pins`: let them land
      // before the pins go.
      c->dma->wait(c->dma->submitted(), clan::Deadline::after(std::chrono::seconds(1)));
    }
    if (!ok) {
      // A receive buffer we may not write (revoked, forged, out of range).
      if (!reject(s, VIP_STATUS_PROTECTION_ERROR)) return fail(VIP_STATUS_TRANSPORT_ERROR);
      ++idx;
      if (reliable(*this)) {
        complete_sends();
        return fail(0);
      }
      continue;
    }
    const bool imm = (s.d->CS.Control & VIP_CONTROL_IMMEDIATE) != 0;
    remaining = s.total;
    for (size_t k = 0; k < need; ++k) {
      const uint32_t bytes = std::min<uint64_t>(remote[k].capacity, remaining);
      remaining -= bytes;
      uint32_t flags = (k + 1 < need ? wire::kMore : 0u) | (imm && k + 1 == need ? wire::kImmediate : 0u);
      wire::Record rec{0, remote[k].seq, bytes, imm ? s.d->CS.ImmediateData : 0u, flags, 0, 0, {}};
      if (c->tq_tx->put(rec) != Errc::kOk) return fail(VIP_STATUS_TRANSPORT_ERROR);
    }
    auto t = publish(use_dma);
    if (!t) return fail(VIP_STATUS_TRANSPORT_ERROR);
    remote.pop_front(need);
    bump(use_dma ? dma_sends : pio_sends);
    s.in_flight = true;
    s.ticket = *t;
    s.status = 0;
    if (s.ticket != 0) s.pins = std::move(pins);
    ++idx;
  }
  complete_sends();
}

void Vi::progress() {
  if (!conn || state != VIP_STATE_CONNECTED) return;
  const int down = conn->down.load(std::memory_order_acquire);
  if (conn->tq_rx->readable()) poll_records();  // what the peer sent before it went is ours
  if (!conn) return;
  if (down != 0) return fail(down == 2 ? VIP_STATUS_TRANSPORT_ERROR : 0);
  if (sends.empty()) return;
  complete_sends();
  // Sends not yet in flight are the tail of the queue.
  if (conn && !sends.empty() && !sends.back().in_flight) process_sends();
}

}  // namespace via

using namespace via;

namespace {

Vi* vi_of(VIP_VI_HANDLE h) { return is_handle(h, Kind::kVi) ? static_cast<Vi*>(h) : nullptr; }

VIP_RETURN check_attributes(NicImpl* n, const VIP_VI_ATTRIBUTES* a) {
  if (!a) return VIP_INVALID_PARAMETER;
  if (a->ReliabilityLevel != VIP_SERVICE_UNRELIABLE &&
      a->ReliabilityLevel != VIP_SERVICE_RELIABLE_DELIVERY &&
      a->ReliabilityLevel != VIP_SERVICE_RELIABLE_RECEPTION) {
    return VIP_INVALID_RELIABILITY_LEVEL;
  }
  if (a->MaxTransferSize == 0 || a->MaxTransferSize > kMaxTransfer) return VIP_INVALID_MTU;
  if (a->QoS != nullptr) return VIP_INVALID_QOS;
  auto* p = static_cast<Ptag*>(a->Ptag);
  if (!is_handle(p, Kind::kPtag) || p->nic != n) return VIP_INVALID_PTAG;
  if (a->EnableRdmaRead) return VIP_INVALID_RDMAREAD;
  return VIP_SUCCESS;
}

// Checks a descriptor and its memory. VIP_SUCCESS, VIP_INVALID_PARAMETER (the
// descriptor itself is not in registered memory), or an error status to
// complete it with. For receives, also the cookies of its buffers, whose
// regions it holds. Under vi->mu.
VIP_RETURN check_descriptor(Vi* vi, VIP_DESCRIPTOR* d, VIP_MEM_HANDLE mh, bool recv,
                            uint32_t& error, uint32_t& total, PostedRecv* post,
                            QueuedSend* send) {
  NicImpl* nic = vi->nic;
  // Registrations seen from here on are checked again below if any was
  // removed meanwhile: only then could a CLAN block they name be gone.
  const uint64_t epoch = nic->mem_epoch.load(std::memory_order_acquire);
  // vi->find_mem's result stays valid until its next call.
  const MemReg* dm = vi->find_mem(mh);
  if (!dm || !covers(*dm, d, sizeof(VIP_CONTROL_SEGMENT))) return VIP_INVALID_PARAMETER;
  MemRegion* const desc_block = dm->region;
  error = 0;
  total = 0;
  const VIP_CONTROL_SEGMENT cs = read_once(d->CS);
  const uint32_t count = cs.SegCount;
  if ((cs.Control & VIP_CONTROL_OP_MASK) != VIP_CONTROL_OP_SENDRECV) {
    return VIP_ERROR_NOT_SUPPORTED;  // RDMA operations: not implemented (paper 001 neither)
  }
  if (count > kMaxSegments || (cs.Control & VIP_CONTROL_RESERVED) != 0) {
    error = VIP_STATUS_FORMAT_ERROR;
    return VIP_SUCCESS;
  }
  if (!covers(*dm, d, sizeof(VIP_CONTROL_SEGMENT) + count * sizeof(VIP_DESCRIPTOR_SEGMENT))) {
    return VIP_INVALID_PARAMETER;
  }
  // The CLAN blocks used, with the handles that named them.
  InlineVec<VIP_MEM_HANDLE, kMaxSegments> handles;
  InlineVec<MemRegion*, kMaxSegments> blocks;
  uint64_t sum = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const VIP_DATA_SEGMENT s = read_once(segments(d)[i].Local);
    const MemReg* m = vi->find_mem(s.Handle);
    if (!m || !covers(*m, s.Data.Address, s.Length) || m->ptag != vi->attrs.Ptag ||
        (recv && !m->region)) {
      error = VIP_STATUS_PROTECTION_ERROR;
      return VIP_SUCCESS;
    }
    sum += s.Length;
    if (m->region) {
      handles.push_back(s.Handle);
      blocks.push_back(m->region);
    }
    if (recv) {
      // The address for now; the offset in its block once the block is held.
      post->segs.push_back(wire::PostSegment{{}, reinterpret_cast<uintptr_t>(s.Data.Address), s.Length});
      post->regions.push_back(m->region);
    } else {
      send->segs.push_back(LocalSegment{static_cast<const std::byte*>(s.Data.Address), s.Length});
    }
  }
  if (sum > vi->attrs.MaxTransferSize) {
    error = VIP_STATUS_LENGTH_ERROR;
    return VIP_SUCCESS;
  }
  total = static_cast<uint32_t>(sum);
  if (!desc_block && blocks.size() == 0) return VIP_SUCCESS;  // no CLAN memory: nothing to hold
  // Hold the blocks (VipClanFreeMem waits for them) under the NIC's lock,
  // which VipDeregisterMem and VipClanFreeMem take: a registration still in
  // the table names a block that is still there.
  std::lock_guard lock(nic->mu);
  if (nic->mem_epoch.load(std::memory_order_relaxed) != epoch) {
    auto still = [nic](VIP_MEM_HANDLE h, const MemRegion* r) {
      auto it = nic->mems.find(h);
      return it != nic->mems.end() && it->second.region == r;
    };
    if (desc_block && !still(mh, desc_block)) return VIP_INVALID_PARAMETER;
    for (size_t i = 0; i < blocks.size(); ++i) {
      if (!still(handles[i], blocks[i])) {
        error = VIP_STATUS_PROTECTION_ERROR;
        return VIP_SUCCESS;
      }
    }
  }
  if (desc_block) desc_block->in_use.fetch_add(1, std::memory_order_relaxed);
  if (recv) {
    if (post) post->block = desc_block;
    // Hold each region and read its cookie under the region's lock: no
    // reissue can slip in between.
    for (size_t i = 0; i < post->regions.size(); ++i) {
      MemRegion* r = post->regions[i];
      std::lock_guard region_lock(r->mu);
      ++r->outstanding;
      post->segs[i].cookie = r->region.cookie();
      post->segs[i].offset -= reinterpret_cast<uintptr_t>(r->region.data());
    }
  } else {
    send->block = desc_block;
    for (MemRegion* r : blocks) {
      r->in_use.fetch_add(1, std::memory_order_relaxed);
      send->data_blocks.push_back(r);
    }
  }
  return VIP_SUCCESS;
}

VIP_RETURN pop(Fifo<Done>& q, VIP_DESCRIPTOR** out) {
  const Done done = q.front();
  q.pop_front();
  *out = done.d;
  const VIP_RETURN r = result_of(done.d);
  unhold(done.block);  // the application's again
  return r;
}

}  // namespace

extern "C" {

VIP_RETURN VipCreateVi(VIP_NIC_HANDLE NicHandle, VIP_VI_ATTRIBUTES* ViAttributes,
                       VIP_CQ_HANDLE SendCQHandle, VIP_CQ_HANDLE RecvCQHandle,
                       VIP_VI_HANDLE* ViHandle) {
  if (!is_handle(NicHandle, Kind::kNic) || !ViHandle) return VIP_INVALID_PARAMETER;
  auto* n = static_cast<NicImpl*>(NicHandle);
  if (VIP_RETURN r = check_attributes(n, ViAttributes); r != VIP_SUCCESS) return r;
  Cq* scq = nullptr;
  Cq* rcq = nullptr;
  if (SendCQHandle) {
    if (!is_handle(SendCQHandle, Kind::kCq)) return VIP_INVALID_PARAMETER;
    scq = static_cast<Cq*>(SendCQHandle);
  }
  if (RecvCQHandle) {
    if (!is_handle(RecvCQHandle, Kind::kCq)) return VIP_INVALID_PARAMETER;
    rcq = static_cast<Cq*>(RecvCQHandle);
  }
  if ((scq && scq->nic != n) || (rcq && rcq->nic != n)) return VIP_INVALID_PARAMETER;
  auto* vi = new Vi();
  vi->nic = n;
  vi->send_cq = scq;
  vi->recv_cq = rcq;
  vi->attrs = *ViAttributes;
  {
    std::lock_guard lock(n->mu);
    vi->id = n->next_vi++;
  }
  // Every event a VI's queues cause on a CQ carries the VI's id.
  if (scq) {
    auto s = scq->eq.add_source(vi->id);
    if (!s) {
      delete vi;
      return VIP_ERROR_RESOURCE;
    }
    vi->send_src = *s;
  }
  if (rcq) {
    auto s = rcq->eq.add_source(vi->id);
    if (!s) {
      if (scq) scq->eq.remove_source(vi->send_src);
      delete vi;
      return VIP_ERROR_RESOURCE;
    }
    vi->recv_src = *s;
  }
  {
    std::lock_guard lock(n->mu);
    n->vis[vi->id] = vi;
    if (scq) ++scq->vis;
    if (rcq) ++rcq->vis;
  }
  register_handle(vi, Kind::kVi);
  *ViHandle = vi;
  return VIP_SUCCESS;
}

VIP_RETURN VipDestroyVi(VIP_VI_HANDLE ViHandle) {
  Vi* vi = vi_of(ViHandle);
  if (!vi) return VIP_INVALID_PARAMETER;
  NicImpl* n = vi->nic;
  {
    std::lock_guard lock(vi->mu);
    if (vi->state == VIP_STATE_CONNECTED || vi->state == VIP_STATE_CONNECT_PENDING ||
        !vi->posted.empty() || !vi->sends.empty()) {
      return VIP_INVALID_STATE;
    }
    vi->teardown();
  }
  unregister_handle(vi);
  {
    std::unique_lock gate(n->vi_gate);  // waits out CQ pollers progressing it
    std::lock_guard lock(n->mu);
    n->vis.erase(vi->id);
    if (vi->send_cq) --vi->send_cq->vis;
    if (vi->recv_cq) --vi->recv_cq->vis;
    n->pio_sends += vi->pio_sends.load();
    n->dma_sends += vi->dma_sends.load();
    n->dropped_sends += vi->dropped_sends.load();
    n->mapping_hits += vi->mapping_hits.load();
  }
  for (Cq* cq : {vi->send_cq, vi->recv_cq}) {
    if (!cq) continue;
    cq->eq.remove_source(cq == vi->send_cq ? vi->send_src : vi->recv_src);
    std::lock_guard lock(cq->mu);
    Fifo<std::pair<Vi*, bool>> keep;
    for (size_t i = 0; i < cq->entries.size(); ++i) {
      if (cq->entries[i].first != vi) keep.push_back(cq->entries[i]);
    }
    cq->entries = std::move(keep);
  }
  // Completed descriptors never handed back: their blocks are free again.
  for (Fifo<Done>* q : {&vi->send_done, &vi->recv_done}) {
    for (; !q->empty(); q->pop_front()) {
      unhold(q->front().block);
    }
  }
  delete vi;
  return VIP_SUCCESS;
}

VIP_RETURN VipQueryVi(VIP_VI_HANDLE ViHandle, VIP_VI_STATE* State, VIP_VI_ATTRIBUTES* Attributes,
                      VIP_BOOLEAN* SendQueueEmpty, VIP_BOOLEAN* RecvQueueEmpty) {
  Vi* vi = vi_of(ViHandle);
  if (!vi || !State || !Attributes || !SendQueueEmpty || !RecvQueueEmpty) {
    return VIP_INVALID_PARAMETER;
  }
  std::lock_guard lock(vi->mu);
  vi->progress();
  *State = vi->state;
  *Attributes = vi->attrs;
  *SendQueueEmpty = vi->sends.empty() && vi->send_done.empty();
  *RecvQueueEmpty = vi->posted.empty() && vi->recv_done.empty();
  return VIP_SUCCESS;
}

VIP_RETURN VipSetViAttributes(VIP_VI_HANDLE ViHandle, VIP_VI_ATTRIBUTES* Attributes) {
  Vi* vi = vi_of(ViHandle);
  if (!vi) return VIP_INVALID_PARAMETER;
  if (VIP_RETURN r = check_attributes(vi->nic, Attributes); r != VIP_SUCCESS) return r;
  std::lock_guard lock(vi->mu);
  if (vi->state != VIP_STATE_IDLE) return VIP_INVALID_STATE;
  vi->attrs = *Attributes;
  return VIP_SUCCESS;
}

VIP_RETURN VipClanSetViAttributes(VIP_VI_HANDLE ViHandle, const VIP_CLAN_VI_ATTRIBUTES* a) {
  Vi* vi = vi_of(ViHandle);
  if (!vi || !a || a->TransferMode > VIP_CLAN_TRANSFER_DMA) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(vi->mu);
  vi->ext = *a;
  vi->progress();  // deferred sends may go now, or be dropped
  return VIP_SUCCESS;
}

VIP_RETURN VipClanQueryViAttributes(VIP_VI_HANDLE ViHandle, VIP_CLAN_VI_ATTRIBUTES* a) {
  Vi* vi = vi_of(ViHandle);
  if (!vi || !a) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(vi->mu);
  *a = vi->ext;
  return VIP_SUCCESS;
}

VIP_RETURN VipClanCQNotify(VIP_VI_HANDLE ViHandle, VIP_BOOLEAN Enable) {
  Vi* vi = vi_of(ViHandle);
  if (!vi) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(vi->mu);
  if (!vi->recv_cq) return VIP_INVALID_STATE;
  vi->recv_notify = Enable != VIP_FALSE;
  vi->cq_readiness = true;
  // Arrivals fire the transfer queue's tripwire: into the CQ's event queue,
  // or (muted) only to this VI's own waiters.
  if (vi->conn) {
    vi->conn->tq_rx->tripwire().set_queue(vi->recv_notify ? &vi->recv_cq->eq : nullptr,
                                          vi->recv_src);
  }
  return VIP_SUCCESS;
}

VIP_RETURN VipClanRecvReady(VIP_VI_HANDLE ViHandle, VIP_BOOLEAN* Ready) {
  Vi* vi = vi_of(ViHandle);
  if (!vi || !Ready) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(vi->mu);
  vi->progress();
  *Ready = vi->recv_done.empty() ? VIP_FALSE : VIP_TRUE;
  return VIP_SUCCESS;
}

VIP_RETURN VipPostSend(VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR* DescriptorPtr,
                       VIP_MEM_HANDLE MemoryHandle) {
  Vi* vi = vi_of(ViHandle);
  if (!vi || !DescriptorPtr) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(vi->mu);
  QueuedSend s;
  s.d = DescriptorPtr;
  uint32_t error = 0;
  VIP_RETURN r = check_descriptor(vi, DescriptorPtr, MemoryHandle, false, error, s.total, nullptr, &s);
  if (r != VIP_SUCCESS) return r;
  if (error) {
    DescriptorPtr->CS.Status = VIP_STATUS_DONE | VIP_STATUS_OP_SEND | error;
    return VIP_DESCRIPTOR_ERROR;
  }
  vi->progress();
  // The descriptor this send will take, read now: a garbage one breaks the
  // VI before it accepts the send.
  if (vi->remote.empty()) vi->pull_cookie();
  if (vi->state != VIP_STATE_CONNECTED || vi->sends.size() >= kMaxDescriptorsPerQueue) {
    release_blocks(s);
    return vi->state != VIP_STATE_CONNECTED ? VIP_INVALID_STATE : VIP_ERROR_RESOURCE;
  }
  DescriptorPtr->CS.Status = 0;
  DescriptorPtr->CS.Length = s.total;
  vi->sends.push_back(std::move(s));
  vi->process_sends();
  return VIP_SUCCESS;
}

VIP_RETURN VipPostRecv(VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR* DescriptorPtr,
                       VIP_MEM_HANDLE MemoryHandle) {
  Vi* vi = vi_of(ViHandle);
  if (!vi || !DescriptorPtr) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(vi->mu);
  vi->progress();
  if (vi->state == VIP_STATE_ERROR) return VIP_INVALID_STATE;
  if (vi->posted.size() >= kMaxDescriptorsPerQueue) return VIP_ERROR_RESOURCE;
  PostedRecv p;
  p.d = DescriptorPtr;
  p.split = vi->ext.SplitRequests != VIP_FALSE;
  uint32_t error = 0;
  VIP_RETURN r =
      check_descriptor(vi, DescriptorPtr, MemoryHandle, true, error, p.capacity, &p, nullptr);
  if (r != VIP_SUCCESS) return r;
  if (error) {
    DescriptorPtr->CS.Status = VIP_STATUS_DONE | VIP_STATUS_OP_RECEIVE | error;
    return VIP_DESCRIPTOR_ERROR;
  }
  DescriptorPtr->CS.Status = 0;
  p.seq = vi->next_post++;
  const bool push = vi->conn && vi->state == VIP_STATE_CONNECTED;
  vi->posted.push_back(p);
  // The peer's ring is gone (it closed or died): the descriptor completes
  // with an error, as those posted before did.
  if (push && vi->push_post(vi->posted.back()) != clan::Errc::kOk) {
    vi->fail(VIP_STATUS_TRANSPORT_ERROR);
  }
  return VIP_SUCCESS;
}

VIP_RETURN VipSendDone(VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR** DescriptorPtr) {
  Vi* vi = vi_of(ViHandle);
  if (!vi || !DescriptorPtr) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(vi->mu);
  vi->progress();
  if (vi->send_done.empty()) return VIP_NOT_DONE;
  return pop(vi->send_done, DescriptorPtr);
}

VIP_RETURN VipRecvDone(VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR** DescriptorPtr) {
  Vi* vi = vi_of(ViHandle);
  if (!vi || !DescriptorPtr) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(vi->mu);
  vi->progress();
  if (vi->recv_done.empty()) return VIP_NOT_DONE;
  return pop(vi->recv_done, DescriptorPtr);
}

VIP_RETURN VipSendWait(VIP_VI_HANDLE ViHandle, VIP_ULONG TimeOut, VIP_DESCRIPTOR** DescriptorPtr) {
  Vi* vi = vi_of(ViHandle);
  if (!vi || !DescriptorPtr) return VIP_INVALID_PARAMETER;
  std::optional<clan::Deadline> deadline;  // read the clock only to wait
  bool waiting = false;                    // counted in vi->cookie_waiters
  // Under vi->mu: the last thread waiting for a receive descriptor lets the
  // peer stop ringing the doorbell (unless a send CQ wants to hear).
  auto stop_waiting = [vi, &waiting](const std::shared_ptr<Conn>& c) {
    if (!waiting) return;
    waiting = false;
    if (--vi->cookie_waiters == 0 && !vi->send_cq && c) c->ck_rx->want_doorbell(false);
  };
  std::shared_ptr<Conn> waited;  // the channel `waiting` asked to ring
  for (;;) {
    std::shared_ptr<Conn> c;
    uint64_t ticket = 0;
    uint64_t seen = 0;
    bool transfer_full = false;
    {
      std::lock_guard lock(vi->mu);
      stop_waiting(waited);
      vi->progress();
      if (!vi->send_done.empty()) return pop(vi->send_done, DescriptorPtr);
      if (vi->sends.empty()) {
        return vi->state == VIP_STATE_CONNECTED ? VIP_NOT_DONE : VIP_INVALID_STATE;
      }
      c = vi->conn;
      if (!c) return VIP_INVALID_STATE;
      if (vi->sends.front().in_flight) {
        ticket = vi->sends.front().ticket;
      } else {
        // From here the peer rings the doorbell when it posts.
        if (vi->cookie_waiters++ == 0) c->ck_rx->want_doorbell(true);
        waiting = true;
        waited = c;
        seen = vi->send_completions.load(std::memory_order_relaxed);
        transfer_full = c->tq_tx->space() == Errc::kWouldBlock;
      }
    }
    if (!deadline) deadline = deadline_ms(TimeOut);
    if (deadline->expired()) {
      std::lock_guard lock(vi->mu);
      stop_waiting(waited);
      return VIP_TIMEOUT;
    }
    if (ticket != 0) {
      c->dma->wait(ticket, *deadline);
    } else {
      // A deferred send waits for the peer's next receive descriptor (or the
      // transfer queue to drain: rare, so a short slice). With the queue
      // full, descriptors already there are no reason to look again: a peer
      // that posts but never drains would have us spin.
      auto slice = clan::Deadline::after(std::chrono::milliseconds(2));
      c->ck_rx->tripwire().wait(
          [&c, vi, seen, transfer_full] {
            return (!transfer_full && c->ck_rx->readable()) || c->down.load(std::memory_order_acquire) != 0 ||
                   vi->send_completions.load(std::memory_order_seq_cst) != seen;
          },
          slice.when() < deadline->when() ? slice : *deadline);
    }
  }
}

VIP_RETURN VipRecvWait(VIP_VI_HANDLE ViHandle, VIP_ULONG TimeOut, VIP_DESCRIPTOR** DescriptorPtr) {
  Vi* vi = vi_of(ViHandle);
  if (!vi || !DescriptorPtr) return VIP_INVALID_PARAMETER;
  std::optional<clan::Deadline> deadline;  // read the clock only to wait
  bool waiting = false;                    // counted in vi->recv_waiters
  bool looked_ahead = false;               // the peer's next descriptor was looked for
  for (;;) {
    std::shared_ptr<Conn> c;
    uint64_t seen = 0;
    {
      std::lock_guard lock(vi->mu);
      if (waiting) --vi->recv_waiters;
      waiting = false;
      vi->progress();
      if (!vi->recv_done.empty()) return pop(vi->recv_done, DescriptorPtr);
      if (vi->state != VIP_STATE_CONNECTED || !vi->conn) return VIP_INVALID_STATE;
      if (vi->posted.empty()) return VIP_NOT_DONE;
      if (TimeOut == 0) return VIP_TIMEOUT;
      // While the message is on its way, take the peer's next receive
      // descriptor, a cache miss, off the path of the send that will need it.
      // Not while sends are queued: progress() just gave them what there was,
      // and one taken here would wait, unseen by a VipSendWait watching the
      // ring, until the next progress. Once per wait: a slot the peer has not
      // written yet, read again at every wake-up, would take its line from
      // the peer's next post each time.
      if (!looked_ahead && vi->remote.empty() && vi->sends.empty()) {
        looked_ahead = true;
        vi->pull_cookie();
        if (vi->state != VIP_STATE_CONNECTED) continue;  // garbage: the VI broke
      }
      c = vi->conn;
      seen = vi->recv_completions.load(std::memory_order_relaxed);
      // From here, a completion found by another thread wakes us.
      ++vi->recv_waiters;
      waiting = true;
    }
    // The tripwire on the transfer queue's write pointer (sect. 3.4). Another
    // thread progressing this VI (VipCQWait, VipRecvDone) may take the record
    // first: its completion wakes us too.
    auto ready = [&c, vi, seen] {
      return c->tq_rx->readable() || c->down.load(std::memory_order_acquire) != 0 ||
             vi->recv_completions.load(std::memory_order_seq_cst) != seen;
    };
    // A message often lands within a few cache-line round trips: look for it
    // before reading the clock (microseconds at most, against a TimeOut in ms).
    bool found = false;
    for (int i = 0; i < kQuickSpins && !(found = ready()); ++i) clan::cpu_relax();
    if (found) continue;
    if (!deadline) deadline = deadline_ms(TimeOut);
    if (deadline->expired()) {
      std::lock_guard lock(vi->mu);
      --vi->recv_waiters;
      return VIP_TIMEOUT;
    }
    c->tq_rx->tripwire().wait(ready, *deadline);
  }
}

}  // extern "C"
