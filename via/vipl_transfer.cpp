// The VIPL data-transfer calls: post a descriptor, take a completed one
// (Done: at once; Wait: until one completes). Each checks its handle and the
// descriptor, then hands over to the VI's data path under the VI's lock.
#include "via/internal.hpp"

using namespace via;

namespace {

// VipSendDone, VipRecvDone: the next completed descriptor of `done`, if any.
VIP_RETURN take_if_done(VIP_VI_HANDLE h, Fifo<Done> Vi::*done, VIP_DESCRIPTOR** out) {
  Vi* vi = vi_of(h);
  if (!vi || !out) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(vi->mu);
  vi->progress();
  if ((vi->*done).empty()) return VIP_NOT_DONE;
  return take_done(vi->*done, out);
}

}  // namespace

extern "C" {

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
  vi->note_held();
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
  // with an error, as those posted before did. One the peer's endpoint is
  // not resident for is pushed at the next progress (vi_held.cpp).
  if (push) {
    const clan::Errc e = vi->push_posts();
    if (e != clan::Errc::kOk && e != clan::Errc::kTimeout) vi->fail(VIP_STATUS_TRANSPORT_ERROR);
    vi->note_held();
  }
  return VIP_SUCCESS;
}

VIP_RETURN VipSendDone(VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR** DescriptorPtr) {
  return take_if_done(ViHandle, &Vi::send_done, DescriptorPtr);
}

VIP_RETURN VipRecvDone(VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR** DescriptorPtr) {
  return take_if_done(ViHandle, &Vi::recv_done, DescriptorPtr);
}

VIP_RETURN VipSendWait(VIP_VI_HANDLE ViHandle, VIP_ULONG TimeOut, VIP_DESCRIPTOR** DescriptorPtr) {
  Vi* vi = vi_of(ViHandle);
  if (!vi || !DescriptorPtr) return VIP_INVALID_PARAMETER;
  return wait_send(vi, TimeOut, DescriptorPtr);
}

VIP_RETURN VipRecvWait(VIP_VI_HANDLE ViHandle, VIP_ULONG TimeOut, VIP_DESCRIPTOR** DescriptorPtr) {
  Vi* vi = vi_of(ViHandle);
  if (!vi || !DescriptorPtr) return VIP_INVALID_PARAMETER;
  return wait_recv(vi, TimeOut, DescriptorPtr);
}

VIP_RETURN VipClanRecvReady(VIP_VI_HANDLE ViHandle, VIP_BOOLEAN* Ready) {
  Vi* vi = vi_of(ViHandle);
  if (!vi || !Ready) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(vi->mu);
  vi->progress();
  *Ready = vi->recv_done.empty() ? VIP_FALSE : VIP_TRUE;
  return VIP_SUCCESS;
}

}  // extern "C"
