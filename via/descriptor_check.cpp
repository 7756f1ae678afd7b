// The application's descriptors, checked when posted: the descriptor and its
// buffers must lie in registered memory of the VI's protection tag (receive
// buffers in CLAN memory a peer may write), and the CLAN blocks they use are
// held until the descriptor is handed back (VipClanFreeMem waits for them).
#include <cstring>
#include <iterator>

#include "via/nic_impl.hpp"
#include "via/vi.hpp"

namespace via {

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

// What a descriptor is checked for, and where its checked parts go.
struct Checked {
  bool recv;
  PostedRecv* post;  // receives
  QueuedSend* send;  // sends
  // The CLAN blocks its buffers use, with the handles that named them.
  InlineVec<VIP_MEM_HANDLE, kMaxSegments> handles;
  InlineVec<MemRegion*, kMaxSegments> blocks;
  uint64_t sum = 0;  // bytes in its buffers
};

// Checks the descriptor's `count` data segments, each read once, and notes
// them in `out`: 0, or the error status to complete it with.
uint32_t check_segments(Vi* vi, VIP_DESCRIPTOR* d, uint32_t count, Checked& out) {
  for (uint32_t i = 0; i < count; ++i) {
    const VIP_DATA_SEGMENT s = read_once(segments(d)[i].Local);
    const MemReg* m = vi->find_mem(s.Handle);
    if (!m || !covers(*m, s.Data.Address, s.Length) || m->ptag != vi->attrs.Ptag ||
        (out.recv && !m->region)) {
      return VIP_STATUS_PROTECTION_ERROR;
    }
    out.sum += s.Length;
    if (m->region) {
      out.handles.push_back(s.Handle);
      out.blocks.push_back(m->region);
    }
    if (out.recv) {
      // The address for now; the offset in its block once the block is held.
      out.post->segs.push_back(
          wire::PostSegment{{}, reinterpret_cast<uintptr_t>(s.Data.Address), s.Length});
      out.post->regions.push_back(m->region);
    } else {
      out.send->segs.push_back(LocalSegment{static_cast<const std::byte*>(s.Data.Address), s.Length});
    }
  }
  return 0;
}

// Under the NIC's lock, with registrations removed since the descriptor was
// checked: whether those it used are still there. VIP_SUCCESS (with `error`
// set if a buffer's went) or VIP_INVALID_PARAMETER (the descriptor's went).
VIP_RETURN check_still_registered(NicImpl* nic, VIP_MEM_HANDLE mh, MemRegion* desc_block,
                                  const Checked& c, uint32_t& error) {
  auto still = [nic](VIP_MEM_HANDLE h, const MemRegion* r) {
    auto it = nic->mems.find(h);
    return it != nic->mems.end() && it->second.region == r;
  };
  if (desc_block && !still(mh, desc_block)) return VIP_INVALID_PARAMETER;
  for (size_t i = 0; i < c.blocks.size(); ++i) {
    if (!still(c.handles[i], c.blocks[i])) {
      error = VIP_STATUS_PROTECTION_ERROR;
      return VIP_SUCCESS;
    }
  }
  return VIP_SUCCESS;
}

// Holds a receive's regions and reads their cookies, each under the
// region's lock: no reissue can slip in between.
void hold_recv(PostedRecv& post) {
  for (size_t i = 0; i < post.regions.size(); ++i) {
    MemRegion* r = post.regions[i];
    std::lock_guard region_lock(r->mu);
    ++r->outstanding;
    post.segs[i].cookie = r->region.cookie();
    post.segs[i].offset -= reinterpret_cast<uintptr_t>(r->region.data());
  }
}

// Holds the blocks (VipClanFreeMem waits for them) under the NIC's lock,
// which VipDeregisterMem and VipClanFreeMem take: a registration still in
// the table names a block that is still there.
VIP_RETURN hold_blocks(NicImpl* nic, uint64_t epoch, VIP_MEM_HANDLE mh, MemRegion* desc_block,
                       Checked& c, uint32_t& error) {
  std::lock_guard lock(nic->mu);
  if (nic->mem_epoch.load(std::memory_order_relaxed) != epoch) {
    VIP_RETURN r = check_still_registered(nic, mh, desc_block, c, error);
    if (r != VIP_SUCCESS || error != 0) return r;
  }
  if (desc_block) desc_block->in_use.fetch_add(1, std::memory_order_relaxed);
  if (c.recv) {
    if (c.post) c.post->block = desc_block;
    hold_recv(*c.post);
  } else {
    c.send->block = desc_block;
    for (MemRegion* r : c.blocks) {
      r->in_use.fetch_add(1, std::memory_order_relaxed);
      c.send->data_blocks.push_back(r);
    }
  }
  return VIP_SUCCESS;
}

}  // namespace

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
  Checked c{recv, post, send, {}, {}, 0};
  if ((error = check_segments(vi, d, count, c)) != 0) return VIP_SUCCESS;
  if (c.sum > vi->attrs.MaxTransferSize) {
    error = VIP_STATUS_LENGTH_ERROR;
    return VIP_SUCCESS;
  }
  total = static_cast<uint32_t>(c.sum);
  if (!desc_block && c.blocks.size() == 0) return VIP_SUCCESS;  // no CLAN memory: nothing to hold
  return hold_blocks(nic, epoch, mh, desc_block, c, error);
}

}  // namespace via
