#include "clan_emul/oob_listener.hpp"

#include "clan_emul/oob_core.hpp"

namespace clan {

// ---- OobRequest ----

OobRequest::OobRequest(std::shared_ptr<oob_detail::Core> core,
                       std::unique_ptr<oob_detail::PendingRequest> r)
    : core_(std::move(core)), r_(std::move(r)) {}

OobRequest::OobRequest(OobRequest&& o) noexcept = default;

OobRequest& OobRequest::operator=(OobRequest&& o) noexcept {
  if (this != &o) {
    reject();
    core_ = std::move(o.core_);
    r_ = std::move(o.r_);
  }
  return *this;
}

OobRequest::~OobRequest() { reject(); }

const std::vector<std::byte>& OobRequest::peer_blob() const {
  static const std::vector<std::byte> kEmpty;
  return r_ ? r_->blob : kEmpty;
}
const std::string& OobRequest::peer_node() const {
  static const std::string kEmpty;
  return r_ ? r_->hdr.node : kEmpty;
}
const std::string& OobRequest::peer_address() const {
  static const std::string kEmpty;
  return r_ ? r_->address : kEmpty;
}
pid_t OobRequest::peer_pid() const { return r_ ? r_->hdr.pid : 0; }
bool OobRequest::peer_on_this_host() const { return r_ && r_->on_this_host; }
OobBootId OobRequest::peer_boot_id() const { return r_ ? r_->hdr.boot_id : OobBootId{}; }

Result<std::shared_ptr<OobConnection>> OobRequest::accept(std::vector<std::byte> blob) {
  if (!r_ || blob.size() > kOobMaxBlob) return Errc::kInvalidArgument;
  auto r = std::move(r_);
  auto res = core_->accept(std::move(*r), std::move(blob));
  if (!res) return res.error();
  return std::make_shared<OobConnection>(core_, std::move(res).value());
}

void OobRequest::reject() {
  if (!r_) return;
  auto r = std::move(r_);
  core_->reject(std::move(*r));
}

// ---- OobListener ----

OobListener::OobListener(std::shared_ptr<oob_detail::Core> core,
                         std::shared_ptr<oob_detail::ListenerShared> s)
    : core_(std::move(core)), s_(std::move(s)) {}

OobListener::~OobListener() { close(); }

void OobListener::close() { core_->unlisten(s_); }

uint16_t OobListener::port() const { return s_->port; }

Result<OobRequest> OobListener::next_request(Deadline deadline) {
  if (!core_->in_owner_process()) return Errc::kInvalidArgument;
  std::unique_lock g(s_->mu);
  auto ready = [this] { return s_->closed || !s_->queue.empty(); };
  if (deadline.is_never()) {
    s_->cv.wait(g, ready);
  } else if (!s_->cv.wait_until(g, deadline.when(), ready)) {
    return Errc::kTimeout;
  }
  if (s_->closed) return Errc::kClosed;
  auto r = std::make_unique<oob_detail::PendingRequest>(std::move(s_->queue.front()));
  s_->queue.pop_front();
  return OobRequest(core_, std::move(r));
}

}  // namespace clan
