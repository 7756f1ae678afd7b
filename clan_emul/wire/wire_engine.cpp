// Opening and closing the wire: the provider for the listening address,
// its fabric, domain, queues and passive endpoint.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fi_errno.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cstring>

#include "clan_emul/wire/fi_loader.hpp"
#include "clan_emul/error_detail.hpp"
#include "clan_emul/wire/fi_error.hpp"
#include "clan_emul/wire/wire_address.hpp"
#include "clan_emul/wire/wire_engine.hpp"
#include "clan_emul/wire/wire_hints.hpp"

namespace clan::wire {

Errc WireEngine::open() {
  if (Errc e = load_libfabric(); e != Errc::kOk) return e;
  if (Errc e = open_fabric(); e != Errc::kOk) return e;
  if (Errc e = open_queues(); e != Errc::kOk) return e;
  if (Errc e = listen(); e != Errc::kOk) return e;
  if (Errc e = watch_cq(); e != Errc::kOk) return e;
  if (Errc e = watch(&eq_->fid, eq_watch_, "event queue"); e != Errc::kOk) return e;
  start_loop();
  return Errc::kOk;
}

Errc WireEngine::open_fabric() {
  auto where = parse_wire_address(config_.listen);
  if (!where) return where.error();
  HintsPtr hints = make_hints(config_.provider);
  if (!hints) return set_error(Errc::kNoResources, 0, "wire: fi_allocinfo failed");
  const std::string service = where->service();
  int r = clan_fi_getinfo(kFiVersion, where->host.c_str(), service.c_str(), FI_SOURCE, hints.get(), &info_);
  if (r != 0) {
    return fi_fail(r, "wire: no libfabric provider '%s' with RMA on FI_EP_MSG for '%s' (fi_getinfo; fi_info -l "
                      "lists the providers)", config_.provider.c_str(), config_.listen.c_str());
  }
  inject_size_ = info_->tx_attr->inject_size;
  if ((r = clan_fi_fabric(info_->fabric_attr, &fabric_, nullptr)) != 0) return fi_fail(r, "wire: fi_fabric");
  if ((r = fi_domain(fabric_, info_, &domain_, nullptr)) != 0) return fi_fail(r, "wire: fi_domain");
  return Errc::kOk;
}

Errc WireEngine::open_queues() {
  fi_eq_attr eq_attr{};
  eq_attr.size = 256;
  eq_attr.wait_obj = FI_WAIT_FD;
  if (int r = fi_eq_open(fabric_, &eq_attr, &eq_, nullptr); r != 0) return fi_fail(r, "wire: fi_eq_open");
  fi_cq_attr cq_attr{};
  cq_attr.size = 4096;
  cq_attr.format = FI_CQ_FORMAT_DATA;
  cq_attr.wait_obj = FI_WAIT_FD;
  if (int r = fi_cq_open(domain_, &cq_attr, &cq_, nullptr); r != 0) return fi_fail(r, "wire: fi_cq_open");
  return Errc::kOk;
}

Errc WireEngine::listen() {
  int r = fi_passive_ep(fabric_, info_, &pep_, nullptr);
  if (r != 0) return fi_fail(r, "wire: fi_passive_ep on '%s'", config_.listen.c_str());
  if ((r = fi_pep_bind(pep_, &eq_->fid, 0)) != 0) return fi_fail(r, "wire: fi_pep_bind");
  if ((r = fi_listen(pep_)) != 0) {
    return fi_fail(r, "wire: cannot listen on '%s' (fi_listen; is the port in use?)", config_.listen.c_str());
  }
  sockaddr_storage name{};
  size_t len = sizeof name;
  if ((r = fi_getname(&pep_->fid, &name, &len)) != 0) return fi_fail(r, "wire: fi_getname");
  char host[INET6_ADDRSTRLEN] = "";
  uint16_t port = 0;
  if (name.ss_family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&name);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    port = ntohs(in->sin_port);
  } else {
    return set_error(Errc::kInvalidArgument, 0, "wire: '%s' is not an IPv4 address (only IPv4 is supported)",
                     config_.listen.c_str());
  }
  address_ = std::string(host) + ":" + std::to_string(port);
  return Errc::kOk;
}

// A queue's wait descriptor: a CQ or EQ opened with FI_WAIT_FD hands back
// an int (checked with FI_GETWAITOBJ first: other wait objects hand back a
// struct). It stays libfabric's.
Errc WireEngine::wait_fd(fid* queue, const char* what, int& fd) {
  enum fi_wait_obj obj = FI_WAIT_NONE;
  if (int r = fi_control(queue, FI_GETWAITOBJ, &obj); r != 0) return fi_fail(r, "wire: %s: FI_GETWAITOBJ", what);
  if (obj != FI_WAIT_FD) {
    return set_error(Errc::kNotPermitted, 0, "wire: the %s waits on object %d, not a descriptor", what,
                     static_cast<int>(obj));
  }
  if (int r = fi_control(queue, FI_GETWAIT, &fd); r != 0) return fi_fail(r, "wire: %s: FI_GETWAIT", what);
  return Errc::kOk;
}

// The event queue's wait descriptor, duplicated for Asio to own.
Errc WireEngine::watch(fid* queue, boost::asio::posix::stream_descriptor& watch, const char* what) {
  int fd = -1;
  if (Errc e = wait_fd(queue, what, fd); e != Errc::kOk) return e;
  const int own = ::dup(fd);
  if (own < 0) return set_error(Errc::kSystem, errno, "wire: %s: dup of its wait descriptor", what);
  watch.assign(own);
  return Errc::kOk;
}

// The completion queue's wait descriptor, inside an epoll set of the
// wire's own that Asio watches: standing down takes the descriptor out of
// that set, and a waiter about to sleep puts it back, from any thread.
Errc WireEngine::watch_cq() {
  if (Errc e = wait_fd(&cq_->fid, "completion queue", cq_fd_); e != Errc::kOk) return e;
  cq_set_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (cq_set_ < 0) return set_error(Errc::kSystem, errno, "wire: epoll_create1 for the completion queue");
  cq_watch_.assign(cq_set_);
  epoll_event ev{};
  ev.events = EPOLLIN;
  if (::epoll_ctl(cq_set_, EPOLL_CTL_ADD, cq_fd_, &ev) != 0) {
    return set_error(Errc::kSystem, errno, "wire: epoll_ctl adding the completion queue's descriptor");
  }
  return Errc::kOk;
}

WireEngine::~WireEngine() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
  close_all();
}

void WireEngine::close_all() {
  {
    std::lock_guard lock(links_mu_);
    for (auto& [id, link] : links_) {
      std::lock_guard link_lock(link->mu_);
      link->close_endpoint();
      link->set_down(Errc::kClosed);
    }
    links_.clear();
    count_links();
    by_nic_.clear();
  }
  {
    std::lock_guard lock(progress_mu_);
    for (auto& [region, r] : registrations_) release(r);
    registrations_.clear();
  }
  boost::system::error_code ignored;
  cq_watch_.close(ignored);
  eq_watch_.close(ignored);
  if (pep_) fi_close(&pep_->fid);
  if (cq_) fi_close(&cq_->fid);
  if (eq_) fi_close(&eq_->fid);
  if (domain_) fi_close(&domain_->fid);
  if (fabric_) fi_close(&fabric_->fid);
  if (info_) clan_fi_freeinfo(info_);
}

}  // namespace clan::wire
