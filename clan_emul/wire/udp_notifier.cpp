#include "clan_emul/wire/udp_notifier.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cerrno>
#include <thread>

#include "clan_emul/error_detail.hpp"
#include "clan_emul/event_queue.hpp"

namespace clan::wire {

namespace asio = boost::asio;

struct UdpNotifier::Loop {
  asio::io_context io{1};  // run by the notifier's thread only
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
  asio::posix::stream_descriptor fd{io};  // a dup of the watched fd, closed with it
  std::thread thread;
};

UdpNotifier::UdpNotifier() : loop_(std::make_unique<Loop>()) {}

Result<std::unique_ptr<UdpNotifier>> UdpNotifier::start(int fd) {
  const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) return set_error(Errc::kSystem, errno, "udp notifier: dup of the socket");
  std::unique_ptr<UdpNotifier> n(new UdpNotifier());
  boost::system::error_code ec;
  n->loop_->fd.assign(own, ec);
  if (ec) {
    ::close(own);
    return set_error(Errc::kSystem, ec.value(), "udp notifier: watching the socket");
  }
  n->loop_->thread = std::thread([l = n->loop_.get()] { l->io.run(); });
  return n;
}

UdpNotifier::~UdpNotifier() {
  loop_->io.stop();
  if (loop_->thread.joinable()) loop_->thread.join();
}

// On the notifier's thread: the descriptor is touched there only. The wait
// is queued before the look, and the reactor reports readiness only once
// this handler has returned: an arrival at any moment is seen by one of them.
void UdpNotifier::arm_now() {
  asio::post(loop_->io, [this] {
    loop_->fd.async_wait(asio::posix::stream_descriptor::wait_read,
                         [this](const boost::system::error_code& ec) {
                           if (!ec) fire();
                         });
    pollfd p{loop_->fd.native_handle(), POLLIN, 0};
    if (::poll(&p, 1, 0) > 0) {
      boost::system::error_code ignored;
      loop_->fd.cancel(ignored);  // its handler sees operation_aborted
      fire();
    }
  });
}

void UdpNotifier::fire() {
  armed_.store(false, std::memory_order_seq_cst);  // the reader re-arms once it runs dry
  std::lock_guard lk(mu_);
  if (queue_ == nullptr) return;
  queue_->notify(source_);
  ++posted_;
}

void UdpNotifier::direct(EventQueue* queue, uint32_t source) {
  {
    std::lock_guard lk(mu_);
    queue_ = queue;
    source_ = source;
  }
  if (queue != nullptr) arm();
}

uint64_t UdpNotifier::posted() const {
  std::lock_guard lk(mu_);
  return posted_;
}

}  // namespace clan::wire
