#include "clan_emul/oob_manager.hpp"

#include "clan_emul/oob_core.hpp"

namespace clan {

static_assert(kOobMaxBlob == oob_wire::kMaxBlob);

OobManager::OobManager(std::shared_ptr<oob_detail::Core> core) : core_(std::move(core)) {}

Result<std::unique_ptr<OobManager>> OobManager::start(OobConfig cfg) {
  auto core = oob_detail::Core::start(std::move(cfg));
  if (!core) return core.error();
  return std::unique_ptr<OobManager>(new OobManager(std::move(core).value()));
}

OobManager::~OobManager() {
  if (!core_->in_owner_process()) {
    // A forked child: the thread and sockets exist only in the parent, and
    // touching them (even to destroy them) could hang. Leak on purpose.
    new std::shared_ptr<oob_detail::Core>(std::move(core_));
    return;
  }
  core_->stop();
}

const std::string& OobManager::node() const { return core_->node(); }
const std::string& OobManager::runtime_dir() const { return core_->runtime_dir(); }
OobStats OobManager::stats() const { return core_->stats(); }
std::chrono::milliseconds OobManager::peer_timeout() const { return core_->peer_timeout(); }
const std::string& OobManager::listen_address() const { return core_->listen_address(); }
uint16_t OobManager::listen_port() const { return core_->listen_port(); }

Result<std::unique_ptr<OobListener>> OobManager::listen(uint16_t port) {
  auto l = core_->listen(port);
  if (!l) return l.error();
  return std::make_unique<OobListener>(core_, std::move(l).value());
}

Result<std::shared_ptr<OobConnection>> OobManager::connect(const std::string& node, uint16_t port,
                                                           std::vector<std::byte> blob,
                                                           Deadline deadline) {
  auto c = core_->connect(node, port, std::move(blob), deadline);
  if (!c) return c.error();
  return std::make_shared<OobConnection>(core_, std::move(c).value());
}

}  // namespace clan
