// Connection management over the CLAN out-of-band manager (paper 001 sect.
// 3.3.1): each side's handshake blob carries the cookie of its channel block
// (its cookie-queue and transfer-queue rings, wire::block_layout), and the
// receive descriptors it posted before the connection existed, so a peer may
// send as soon as the connection is up.
// Host names are OOB node names; the discriminator selects the port.
#include <cstring>

#include "via/internal.hpp"
#include "via/post_message.hpp"

using namespace via;
using clan::Errc;

namespace {

constexpr size_t kHelloRoom = 60 * 1024;  // below the OOB blob limit (64 KiB)

struct Address {
  std::string host;
  uint16_t port = 0;
  uint8_t disc[VIP_CLAN_MAX_DISCRIMINATOR] = {};
  uint16_t disc_len = 0;
};

// Host bytes then discriminator bytes; the port is a hash of the discriminator.
bool parse_address(const VIP_NET_ADDRESS* a, bool need_host, Address& out) {
  if (!a || a->HostAddressLen > VIP_CLAN_MAX_HOST_ADDRESS ||
      a->DiscriminatorLen > VIP_CLAN_MAX_DISCRIMINATOR || (need_host && a->HostAddressLen == 0)) {
    return false;
  }
  out.host.assign(reinterpret_cast<const char*>(a->HostAddress), a->HostAddressLen);
  out.disc_len = a->DiscriminatorLen;
  std::memcpy(out.disc, a->HostAddress + a->HostAddressLen, a->DiscriminatorLen);
  uint32_t h = 2166136261u;
  for (uint16_t i = 0; i < out.disc_len; ++i) h = (h ^ out.disc[i]) * 16777619u;
  out.port = static_cast<uint16_t>(h % 65535u + 1);
  return true;
}

void write_address(VIP_NET_ADDRESS* a, const std::string& host, const uint8_t* disc,
                   uint16_t disc_len) {
  a->HostAddressLen = static_cast<VIP_UINT16>(host.size());
  a->DiscriminatorLen = disc_len;
  std::memcpy(a->HostAddress, host.data(), host.size());
  std::memcpy(a->HostAddress + host.size(), disc, disc_len);
}

clan::Result<std::shared_ptr<Conn>> make_conn(Vi* vi) {
  clan::Nic& nic = *vi->nic->nic;
  auto c = std::make_shared<Conn>();
  auto endpoint = nic.create_endpoint();
  if (!endpoint) return endpoint.error();
  c->endpoint = std::move(endpoint.value());
  // One region for all four parts: one descriptor for the VI, not four.
  const wire::BlockLayout l = wire::block_layout(kCookieSlots, kTransferSlots);
  auto block = nic.export_region(l.bytes, &c->endpoint);
  if (!block) return block.error();
  c->block = std::move(block.value());
  auto ck_rx = CookieReceiver::create(nic, c->block, l.ck_ring, kCookieSlots);
  if (!ck_rx) return ck_rx.error();
  c->ck_rx = std::move(ck_rx.value());
  c->ck_tx = std::make_unique<CookieSender>(c->block.data() + l.ck_sender);
  auto tq_rx = TransferReceiver::create(nic, c->block, l.tq_ring, kTransferSlots);
  if (!tq_rx) return tq_rx.error();
  c->tq_rx = std::move(tq_rx.value());
  c->tq_tx = std::make_unique<TransferSender>(c->block.data() + l.tq_sender);
  // Completion queues (sect. 3.6): the transfer queue's tripwire posts to the
  // receive CQ; DMA completions and arriving receive descriptors (which let
  // deferred sends go) to the send CQ.
  c->send_cq = vi->send_cq;
  c->recv_cq = vi->recv_cq;
  c->send_src = vi->send_src;
  c->recv_src = vi->recv_src;
  if (vi->recv_cq && vi->recv_notify) c->tq_rx->tripwire().set_queue(&vi->recv_cq->eq, vi->recv_src);
  if (vi->send_cq) c->ck_rx->tripwire().set_queue(&vi->send_cq->eq, vi->send_src);
  c->dma = std::make_unique<clan::DmaStream>(nic, vi->send_cq ? &vi->send_cq->eq : nullptr, vi->id);
  return c;
}

// Under vi->mu.
std::vector<std::byte> hello_of(Vi* vi, const Conn& c, const Address& local) {
  wire::Hello h{};
  h.magic = wire::kHelloMagic;
  h.version = wire::kVersion;
  h.kind = wire::kHello;
  h.reliability = vi->attrs.ReliabilityLevel;
  h.discriminator_len = local.disc_len;
  std::memcpy(h.discriminator, local.disc, local.disc_len);
  h.max_transfer = static_cast<uint32_t>(vi->attrs.MaxTransferSize);
  h.flags = vi->attrs.EnableRdmaWrite ? wire::kRdmaWrite : 0;
  h.tq_slots = c.tq_rx->slots();
  h.ck_slots = c.ck_rx->slots();
  h.block = c.block.cookie();
  h.nic = clan::locate(*vi->nic->nic);
  std::vector<std::byte> blob(sizeof h);
  std::memcpy(blob.data(), &h, sizeof h);
  // The receive descriptors posted so far, as far as they fit.
  std::byte msg[kCookieMessage];
  vi->pushed = 0;
  for (size_t i = 0; i < vi->posted.size(); ++i) {
    const PostedRecv& p = vi->posted[i];
    size_t len = encode_post(p, msg);
    if (blob.size() + len > kHelloRoom) break;
    blob.insert(blob.end(), msg, msg + len);
    vi->pushed = p.seq + 1;
  }
  return blob;
}

bool read_hello(const std::vector<std::byte>& blob, wire::Hello& h) {
  if (blob.size() < sizeof h) return false;
  std::memcpy(&h, blob.data(), sizeof h);
  return h.magic == wire::kHelloMagic && h.version == wire::kVersion &&
         (h.kind == wire::kHello || h.kind == wire::kReject) &&
         h.discriminator_len <= VIP_CLAN_MAX_DISCRIMINATOR;
}

// Under vi->mu: maps the peer's rings and takes its initial receive descriptors.
Errc attach(Vi* vi, Conn& c, const std::vector<std::byte>& blob) {
  wire::Hello h;
  if (!read_hello(blob, h) || h.kind != wire::kHello) return Errc::kCorrupt;
  // Our receive descriptors may fill the peer's ring up to the queue depth,
  // plus its read pointer's lag: smaller rings are refused.
  if (h.tq_slots == 0 || h.tq_slots > 4096 || h.ck_slots < kCookieSlots || h.ck_slots > 4096) {
    return Errc::kCorrupt;
  }
  const wire::BlockLayout l = wire::block_layout(h.ck_slots, h.tq_slots);
  if (h.block.length < l.bytes || h.block.nic_id != h.nic.nic_id) return Errc::kCorrupt;
  clan::Nic& nic = *vi->nic->nic;
  if (Errc e = clan::reach(nic, h.nic, clan::Deadline::after(nic.config().wire.setup_timeout)); e != Errc::kOk) {
    return e;
  }
  auto peer = nic.import(h.block, &c.endpoint);
  if (!peer) return peer.error();
  c.peer_block = std::move(peer.value());
  if (Errc e = c.ck_tx->attach(c.peer_block, l.ck_ring, h.ck_slots); e != Errc::kOk) return e;
  if (Errc e = c.tq_tx->attach(c.peer_block, l.tq_ring, h.tq_slots); e != Errc::kOk) return e;
  if (Errc e = c.tq_rx->attach(c.peer_block, l.tq_sender); e != Errc::kOk) return e;
  vi->remote.clear();
  vi->next_remote = 0;
  size_t at = sizeof h;
  while (at < blob.size()) {
    RemoteDesc rd;
    size_t used = 0;
    if (!parse_post(blob.data() + at, blob.size() - at, vi->next_remote, used, rd)) {
      return Errc::kCorrupt;
    }
    at += used;
    ++vi->next_remote;
    vi->remote.push_back(rd);
  }
  // The ring carries the peer's descriptors from here on.
  if (Errc e = c.ck_rx->attach(c.peer_block, l.ck_sender, vi->next_remote); e != Errc::kOk) return e;
  // A send CQ hears of every arriving descriptor (deferred sends may go).
  if (vi->send_cq) {
    c.ck_rx->want_doorbell(true);
    c.ck_rx->tripwire().poke();  // for any pushed before the peer saw the request
  }
  return Errc::kOk;
}

void remote_attributes(const wire::Hello& h, VIP_VI_ATTRIBUTES* a) {
  std::memset(a, 0, sizeof *a);
  a->ReliabilityLevel = h.reliability;
  a->MaxTransferSize = h.max_transfer;
  a->EnableRdmaWrite = (h.flags & wire::kRdmaWrite) ? VIP_TRUE : VIP_FALSE;
}

// Under vi->mu: the connection is up.
void go_live(Vi* vi, std::shared_ptr<Conn> c, std::shared_ptr<clan::OobConnection> oob) {
  c->oob = std::move(oob);
  Conn* raw = c.get();
  vi->conn = std::move(c);
  vi->state = VIP_STATE_CONNECTED;
  vi->last_dma_ticket = 0;
  // Runs on the OOB manager's thread: atomics and wake-ups only.
  raw->oob->set_on_down([raw](clan::OobState s) {
    raw->down.store(s == clan::OobState::kPeerDead ? 2 : 1, std::memory_order_release);
    raw->wake();
  });
  // Those the peer's endpoint is not resident for go at the next progress.
  if (Errc e = vi->push_posts(); e != Errc::kOk && e != Errc::kTimeout) {
    return vi->fail(VIP_STATUS_TRANSPORT_ERROR);
  }
  vi->note_held();
}

VIP_RETURN oob_error(Errc e) {
  switch (e) {
    case Errc::kRefused: return VIP_NO_MATCH;
    case Errc::kTimeout: return VIP_TIMEOUT;
    case Errc::kPeerDead: return VIP_NOT_REACHABLE;
    case Errc::kInvalidArgument: return VIP_INVALID_PARAMETER;
    default: return VIP_ERROR_RESOURCE;
  }
}

}  // namespace

extern "C" {

VIP_RETURN VipConnectWait(VIP_NIC_HANDLE NicHandle, VIP_NET_ADDRESS* LocalAddr, VIP_ULONG Timeout,
                          VIP_NET_ADDRESS* RemoteAddr, VIP_VI_ATTRIBUTES* RemoteViAttributes,
                          VIP_CONN_HANDLE* ConnHandle) {
  if (!is_handle(NicHandle, Kind::kNic) || !RemoteAddr || !RemoteViAttributes || !ConnHandle) {
    return VIP_INVALID_PARAMETER;
  }
  auto* n = static_cast<NicImpl*>(NicHandle);
  Address local;
  if (!parse_address(LocalAddr, false, local) || (!local.host.empty() && local.host != n->name)) {
    return VIP_INVALID_PARAMETER;
  }
  const clan::Deadline deadline = deadline_ms(Timeout);
  // The first wait on a discriminator starts listening; requests that arrive
  // between waits queue in the listener.
  std::shared_ptr<clan::OobListener> listener;
  {
    std::lock_guard lock(n->mu);
    auto& l = n->listeners[local.port];
    if (!l) {
      auto made = n->oob->listen(local.port);
      if (!made) {
        n->listeners.erase(local.port);
        return VIP_ERROR_RESOURCE;
      }
      l = std::move(made.value());
    }
    listener = l;
  }
  for (;;) {
    auto req = listener->next_request(deadline);
    if (!req) return req.error() == Errc::kTimeout ? VIP_TIMEOUT : VIP_ERROR_RESOURCE;
    wire::Hello h;
    if (!read_hello(req->peer_blob(), h) || h.kind != wire::kHello ||
        req->peer_node().size() > VIP_CLAN_MAX_HOST_ADDRESS) {
      req->reject();  // not a VI: refuse it and keep waiting
      continue;
    }
    write_address(RemoteAddr, req->peer_node(), h.discriminator, h.discriminator_len);
    remote_attributes(h, RemoteViAttributes);
    auto* c = new ConnReq{n, std::move(req.value()), h};
    register_handle(c, Kind::kConn);
    *ConnHandle = c;
    return VIP_SUCCESS;
  }
}

VIP_RETURN VipClanStopListening(VIP_NIC_HANDLE NicHandle, VIP_NET_ADDRESS* LocalAddr) {
  if (!is_handle(NicHandle, Kind::kNic)) return VIP_INVALID_PARAMETER;
  auto* n = static_cast<NicImpl*>(NicHandle);
  Address local;
  if (!parse_address(LocalAddr, false, local) || (!local.host.empty() && local.host != n->name)) {
    return VIP_INVALID_PARAMETER;
  }
  std::shared_ptr<clan::OobListener> listener;
  {
    std::lock_guard lock(n->mu);
    auto it = n->listeners.find(local.port);
    if (it == n->listeners.end()) return VIP_INVALID_STATE;
    listener = std::move(it->second);
    n->listeners.erase(it);
  }
  listener->close();  // refuses what waits; a waiting VipConnectWait returns
  return VIP_SUCCESS;
}

VIP_RETURN VipConnectAccept(VIP_CONN_HANDLE ConnHandle, VIP_VI_HANDLE ViHandle) {
  if (!is_handle(ConnHandle, Kind::kConn) || !is_handle(ViHandle, Kind::kVi)) {
    return VIP_INVALID_PARAMETER;
  }
  auto* r = static_cast<ConnReq*>(ConnHandle);
  auto* vi = static_cast<Vi*>(ViHandle);
  if (vi->nic != r->nic) return VIP_INVALID_PARAMETER;
  std::lock_guard lock(vi->mu);
  if (vi->state != VIP_STATE_IDLE) return VIP_INVALID_STATE;
  // Incompatible attributes: the request stays pending (accept another VI, or reject).
  if (r->hello.reliability != vi->attrs.ReliabilityLevel) return VIP_INVALID_RELIABILITY_LEVEL;
  if (r->hello.max_transfer != vi->attrs.MaxTransferSize) return VIP_INVALID_MTU;
  auto finish = [r](VIP_RETURN ret) {
    unregister_handle(r);
    delete r;
    return ret;
  };
  auto c = make_conn(vi);
  if (!c) {
    r->request.reject();
    return finish(VIP_ERROR_RESOURCE);
  }
  if (attach(vi, **c, r->request.peer_blob()) != Errc::kOk) {
    r->request.reject();
    return finish(VIP_ERROR_RESOURCE);
  }
  Address local;
  local.disc_len = 0;
  auto oob = r->request.accept(hello_of(vi, **c, local));
  if (!oob) return finish(oob.error() == Errc::kPeerDead ? VIP_NOT_REACHABLE : VIP_ERROR_RESOURCE);
  go_live(vi, std::move(c.value()), std::move(oob.value()));
  return finish(VIP_SUCCESS);
}

VIP_RETURN VipConnectReject(VIP_CONN_HANDLE ConnHandle) {
  if (!is_handle(ConnHandle, Kind::kConn)) return VIP_INVALID_PARAMETER;
  auto* r = static_cast<ConnReq*>(ConnHandle);
  // Answered with a reject blob (not an OOB refusal), so the requester can
  // tell "rejected" (VIP_REJECT) from "nobody listening" (VIP_NO_MATCH).
  wire::Hello h{};
  h.magic = wire::kHelloMagic;
  h.version = wire::kVersion;
  h.kind = wire::kReject;
  std::vector<std::byte> blob(sizeof h);
  std::memcpy(blob.data(), &h, sizeof h);
  if (auto c = r->request.accept(std::move(blob)); c) (*c)->disconnect();
  unregister_handle(r);
  delete r;
  return VIP_SUCCESS;
}

VIP_RETURN VipConnectRequest(VIP_VI_HANDLE ViHandle, VIP_NET_ADDRESS* LocalAddr,
                             VIP_NET_ADDRESS* RemoteAddr, VIP_ULONG Timeout,
                             VIP_VI_ATTRIBUTES* RemoteViAttributes) {
  if (!is_handle(ViHandle, Kind::kVi) || !RemoteViAttributes) return VIP_INVALID_PARAMETER;
  auto* vi = static_cast<Vi*>(ViHandle);
  Address local, remote;
  if (!parse_address(LocalAddr, false, local) || !parse_address(RemoteAddr, true, remote)) {
    return VIP_INVALID_PARAMETER;
  }
  std::shared_ptr<Conn> c;
  std::vector<std::byte> hello;
  {
    std::lock_guard lock(vi->mu);
    if (vi->state != VIP_STATE_IDLE) return VIP_INVALID_STATE;
    auto made = make_conn(vi);
    if (!made) return VIP_ERROR_RESOURCE;
    c = std::move(made.value());
    hello = hello_of(vi, *c, local);
    vi->state = VIP_STATE_CONNECT_PENDING;
  }
  auto oob = vi->nic->oob->connect(remote.host, remote.port, std::move(hello), deadline_ms(Timeout));
  std::lock_guard lock(vi->mu);
  vi->state = VIP_STATE_IDLE;
  if (!oob) return oob_error(oob.error());
  wire::Hello h;
  if (read_hello((*oob)->peer_blob(), h) && h.kind == wire::kReject) {
    (*oob)->disconnect();
    return VIP_REJECT;
  }
  if (attach(vi, *c, (*oob)->peer_blob()) != Errc::kOk) {
    (*oob)->disconnect();
    return VIP_ERROR_RESOURCE;
  }
  remote_attributes(h, RemoteViAttributes);
  go_live(vi, std::move(c), std::move(oob.value()));
  return VIP_SUCCESS;
}

VIP_RETURN VipDisconnect(VIP_VI_HANDLE ViHandle) {
  if (!is_handle(ViHandle, Kind::kVi)) return VIP_INVALID_PARAMETER;
  auto* vi = static_cast<Vi*>(ViHandle);
  std::lock_guard lock(vi->mu);
  if (vi->state == VIP_STATE_IDLE || vi->state == VIP_STATE_CONNECT_PENDING) {
    return VIP_INVALID_STATE;
  }
  vi->progress();
  vi->teardown();  // waits for our DMA: sends in flight have landed
  for (size_t i = 0; i < vi->sends.size(); ++i) {
    QueuedSend& s = vi->sends[i];
    vi->finish_send(s, sent(s) ? s.status : VIP_STATUS_DESC_FLUSHED_ERROR);
  }
  vi->sends.clear();
  for (size_t i = 0; i < vi->posted.size(); ++i) {
    vi->finish_recv(vi->posted[i], VIP_STATUS_DESC_FLUSHED_ERROR);
  }
  vi->posted.clear();
  vi->state = VIP_STATE_IDLE;
  vi->next_post = vi->pushed = vi->next_remote = 0;
  vi->last_dma_ticket = 0;
  return VIP_SUCCESS;
}

}  // extern "C"
