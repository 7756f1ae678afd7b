// Setting up and tearing down a UdpChannel: the provider found on the given
// address, its fabric, domain, address vector, completion queue (with a wait
// fd) and endpoint, the receive buffers posted, the peer's name inserted.
#include <arpa/inet.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "clan_emul/wire/fi_loader.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/wire/fi_error.hpp"
#include "clan_emul/wire/udp_channel.hpp"
#include "clan_emul/wire/udp_channel_objects.hpp"
#include "clan_emul/wire/udp_name.hpp"
#include "clan_emul/wire/udp_notifier.hpp"

namespace clan::wire {

namespace {

// FI_SOCKADDR_IN or FI_SOCKADDR_IN6 for a numeric address; 0 if it is
// neither or the unspecified address (a peer could not send to its name).
uint32_t address_format(const std::string& address) {
  in6_addr a6;
  in_addr a4;
  if (inet_pton(AF_INET, address.c_str(), &a4) == 1) {
    return a4.s_addr == htonl(INADDR_ANY) ? 0 : FI_SOCKADDR_IN;
  }
  if (inet_pton(AF_INET6, address.c_str(), &a6) == 1) {
    return IN6_IS_ADDR_UNSPECIFIED(&a6) ? 0 : FI_SOCKADDR_IN6;
  }
  return 0;
}

// The udp provider's datagram endpoint on `address`:`port`, or an error.
Result<fi_info*> find_provider(const UdpOptions& o, uint32_t format) {
  fi_info* hints = clan_fi_allocinfo();
  if (hints == nullptr) return set_error(Errc::kNoResources, 0, "fi_allocinfo failed");
  hints->ep_attr->type = FI_EP_DGRAM;
  hints->caps = FI_MSG | FI_SOURCE;
  hints->addr_format = format;
  hints->domain_attr->threading = FI_THREAD_SAFE;
  hints->fabric_attr->prov_name = strdup("udp");
  const std::string service = std::to_string(o.port);
  fi_info* info = nullptr;
  const int r = clan_fi_getinfo(FI_VERSION(1, 17), o.address.c_str(), service.c_str(), FI_SOURCE,
                           hints, &info);
  clan_fi_freeinfo(hints);
  if (r != 0) {
    return fi_fail(r, "no libfabric udp provider for %s:%u (fi_getinfo)", o.address.c_str(),
                   o.port);
  }
  return info;
}

}  // namespace

UdpChannel::Objects::~Objects() {
  if (ep) fi_close(&ep->fid);
  if (av) fi_close(&av->fid);
  if (cq) fi_close(&cq->fid);
  if (domain) fi_close(&domain->fid);
  if (fabric) fi_close(&fabric->fid);
  if (info) clan_fi_freeinfo(info);
}

UdpChannel::UdpChannel(const UdpOptions& options) : options_(options) {}

UdpChannel::~UdpChannel() {
  notifier_.reset();
  fi_.reset();  // the endpoint first: nothing lands in the buffers after this
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

Result<std::unique_ptr<UdpChannel>> UdpChannel::open(const UdpOptions& options) {
  if (Errc e = load_libfabric(); e != Errc::kOk) return e;
  const uint32_t format = address_format(options.address);
  if (format == 0) {
    return set_error(Errc::kInvalidArgument, 0,
                     "udp address '%s' is not a numeric IPv4 or IPv6 address a peer can send to",
                     options.address.c_str());
  }
  if (options.max_frame == 0 || options.max_frame > kUdpMaxPayload ||
      options.receive_buffers == 0) {
    return set_error(Errc::kInvalidArgument, 0,
                     "udp frames of %zu bytes with %zu receive buffers: frames must be 1 to %zu "
                     "bytes, the largest UDP payload on Ethernet, and buffers at least one",
                     options.max_frame, options.receive_buffers, kUdpMaxPayload);
  }
  std::unique_ptr<UdpChannel> c(new UdpChannel(options));
  auto info = find_provider(options, format);
  if (!info) return info.error();
  c->fi_ = std::make_unique<Objects>();
  c->fi_->info = info.value();
  if (Errc e = c->open_objects(); e != Errc::kOk) return e;
  c->wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (c->wake_fd_ < 0) return set_error(Errc::kSystem, errno, "udp channel: eventfd");
  if (Errc e = c->post_receives(); e != Errc::kOk) return e;
  return c;
}

Errc UdpChannel::open_objects() {
  Objects& o = *fi_;
  // Every frame leaves with fi_inject: the provider must take the largest
  // whole (the udp provider's inject size is its message size, 1472).
  const size_t inject = o.info->tx_attr->inject_size, msg = o.info->ep_attr->max_msg_size;
  if (inject < options_.max_frame || msg < options_.max_frame) {
    return set_error(Errc::kInvalidArgument, 0,
                     "udp channel: frames of %zu bytes, but the provider injects at most %zu "
                     "and carries at most %zu",
                     options_.max_frame, inject, msg);
  }
  int r = clan_fi_fabric(o.info->fabric_attr, &o.fabric, nullptr);
  if (r != 0) return fi_fail(r, "udp channel: fi_fabric");
  if ((r = fi_domain(o.fabric, o.info, &o.domain, nullptr)) != 0) {
    return fi_fail(r, "udp channel: fi_domain");
  }
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  av_attr.count = 1;
  if ((r = fi_av_open(o.domain, &av_attr, &o.av, nullptr)) != 0) {
    return fi_fail(r, "udp channel: fi_av_open");
  }
  fi_cq_attr cq_attr{};
  cq_attr.size = options_.receive_buffers + 16;
  cq_attr.format = FI_CQ_FORMAT_MSG;
  cq_attr.wait_obj = FI_WAIT_FD;
  if ((r = fi_cq_open(o.domain, &cq_attr, &o.cq, nullptr)) != 0) {
    return fi_fail(r, "udp channel: fi_cq_open");
  }
  // Only an FI_WAIT_FD queue hands back an int: others give a struct.
  fi_wait_obj wait_obj = FI_WAIT_NONE;
  if ((r = fi_control(&o.cq->fid, FI_GETWAITOBJ, &wait_obj)) != 0) {
    return fi_fail(r, "udp channel: fi_control(FI_GETWAITOBJ)");
  }
  if (wait_obj != FI_WAIT_FD) {
    return set_error(Errc::kSystem, 0, "udp channel: the completion queue has no wait fd");
  }
  if ((r = fi_control(&o.cq->fid, FI_GETWAIT, &wait_fd_)) != 0) {
    return fi_fail(r, "udp channel: fi_control(FI_GETWAIT)");
  }
  if ((r = fi_endpoint(o.domain, o.info, &o.ep, nullptr)) != 0) {
    return fi_fail(r, "udp channel: fi_endpoint on %s", options_.address.c_str());
  }
  if ((r = fi_ep_bind(o.ep, &o.av->fid, 0)) != 0) return fi_fail(r, "udp channel: bind the AV");
  if ((r = fi_ep_bind(o.ep, &o.cq->fid, FI_TRANSMIT | FI_RECV)) != 0) {
    return fi_fail(r, "udp channel: bind the CQ");
  }
  if ((r = fi_enable(o.ep)) != 0) return fi_fail(r, "udp channel: fi_enable");
  name_.resize(kUdpMaxName);
  size_t len = name_.size();
  if ((r = fi_getname(&o.ep->fid, name_.data(), &len)) != 0 || len > kUdpMaxName) {
    return fi_fail(r != 0 ? r : -FI_ETOOSMALL, "udp channel: fi_getname");
  }
  name_.resize(len);
  return find_socket();
}

// The endpoint's socket: among the descriptors the queue's wait fd (an
// epoll set) watches, as /proc lists them, the one bound to our name. Only
// descriptors libfabric made for this channel are looked at.
Errc UdpChannel::find_socket() {
  const std::string path = "/proc/self/fdinfo/" + std::to_string(wait_fd_);
  FILE* info = std::fopen(path.c_str(), "re");
  if (info == nullptr) return set_error(Errc::kSystem, errno, "udp channel: %s", path.c_str());
  char line[256];
  while (socket_fd_ < 0 && std::fgets(line, sizeof line, info) != nullptr) {
    int fd = -1;
    if (std::sscanf(line, "tfd: %d", &fd) != 1 || fd < 0) continue;
    sockaddr_storage addr;
    socklen_t len = sizeof addr;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0 &&
        len == name_.size() && std::memcmp(&addr, name_.data(), len) == 0) {
      socket_fd_ = fd;
    }
  }
  std::fclose(info);
  if (socket_fd_ < 0) {
    return set_error(Errc::kSystem, 0, "udp channel: the wait fd watches no socket bound to %s",
                     udp_name_text(name_.data(), name_.size()).c_str());
  }
  return Errc::kOk;
}

Errc UdpChannel::post_receives() {
  buffer_bytes_ = options_.max_frame + 1;  // one more: a filled buffer was truncated
  buffers_.resize(options_.receive_buffers * buffer_bytes_);
  for (size_t slot = 0; slot < options_.receive_buffers; ++slot) {
    if (Errc e = repost(slot); e != Errc::kOk) return e;
  }
  return Errc::kOk;
}

Errc UdpChannel::notify_to(EventQueue* queue, uint32_t source) {
  if (!notifier_ && queue != nullptr) {
    auto n = UdpNotifier::start(socket_fd_);
    if (!n) return n.error();
    notifier_ = std::move(n.value());
    armer_.store(notifier_.get(), std::memory_order_release);
  }
  if (notifier_) notifier_->direct(queue, source);
  return Errc::kOk;
}

Errc UdpChannel::connect(const std::byte* name, size_t len) {
  if (has_peer_) return set_error(Errc::kInvalidArgument, 0, "udp channel: peer already set");
  if (Errc e = check_udp_name(name, len, udp_name_family(name_.data(), name_.size()));
      e != Errc::kOk) {
    return e;
  }
  fi_addr_t addr = FI_ADDR_NOTAVAIL;
  const int r = fi_av_insert(fi_->av, name, 1, &addr, 0, nullptr);
  if (r != 1) {
    return fi_fail(r < 0 ? r : -FI_EINVAL, "udp channel: fi_av_insert of %s",
                   udp_name_text(name, len).c_str());
  }
  peer_ = addr;
  has_peer_ = true;
  return Errc::kOk;
}

}  // namespace clan::wire
