// The VIPL calls that create, query, configure and destroy VIs.
#include "via/internal.hpp"

using namespace via;

namespace {

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

// The CQ a handle names (none for a null handle); false if it is no CQ of `n`.
bool cq_for(VIP_CQ_HANDLE h, NicImpl* n, Cq*& out) {
  out = nullptr;
  if (!h) return true;
  if (!is_handle(h, Kind::kCq)) return false;
  out = static_cast<Cq*>(h);
  return out->nic == n;
}

// Every event a VI's queues cause on a CQ carries the VI's id: one source
// per CQ. False if a CQ's event queue has no room for one more.
bool add_sources(Vi* vi) {
  if (vi->send_cq) {
    auto s = vi->send_cq->eq.add_source(vi->id);
    if (!s) return false;
    vi->send_src = *s;
  }
  if (vi->recv_cq) {
    auto s = vi->recv_cq->eq.add_source(vi->id);
    if (!s) {
      if (vi->send_cq) vi->send_cq->eq.remove_source(vi->send_src);
      return false;
    }
    vi->recv_src = *s;
  }
  return true;
}

// Takes a VI being destroyed off its CQs: its event sources and the entries
// it still has there.
void detach_from_cqs(Vi* vi) {
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
  if (!cq_for(SendCQHandle, n, scq) || !cq_for(RecvCQHandle, n, rcq)) return VIP_INVALID_PARAMETER;
  auto* vi = new Vi();
  vi->nic = n;
  vi->send_cq = scq;
  vi->recv_cq = rcq;
  vi->attrs = *ViAttributes;
  {
    std::lock_guard lock(n->mu);
    vi->id = n->next_vi++;
  }
  if (!add_sources(vi)) {
    delete vi;
    return VIP_ERROR_RESOURCE;
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
  detach_from_cqs(vi);
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
  if (!vi || !a || a->TransferMode > VIP_CLAN_TRANSFER_DMA || a->WaitMode > VIP_CLAN_WAIT_BLOCK) {
    return VIP_INVALID_PARAMETER;
  }
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

}  // extern "C"
