#include "clan_emul/datagram_receiver.hpp"

#include <cstring>

#include "clan_emul/nic.hpp"
#include "clan_emul/wire/udp_channel.hpp"

namespace clan {

using namespace dgram;

Result<std::unique_ptr<DatagramReceiver>> DatagramReceiver::create(Nic& nic,
                                                                   const DatagramConfig& config,
                                                                   EventQueue* queue,
                                                                   uint64_t user,
                                                                   const Endpoint* endpoint) {
  if (!valid(config)) return Errc::kInvalidArgument;
  std::unique_ptr<DatagramReceiver> r(new DatagramReceiver(config));
  auto dmq = DmqReceiver::create(nic, dmq_config(config), queue, user, endpoint);
  if (!dmq) return dmq.error();
  r->dmq_ = std::move(dmq.value());
  r->copy_.resize(kFrameHeader + config.mtu);
  return r;
}

Result<std::unique_ptr<DatagramReceiver>> DatagramReceiver::create(
    std::shared_ptr<wire::UdpChannel> channel, const DatagramConfig& config) {
  if (!channel || !valid(config) || kFrameHeader + config.mtu > channel->max_frame()) {
    return Errc::kInvalidArgument;
  }
  std::unique_ptr<DatagramReceiver> r(new DatagramReceiver(config));
  r->udp_ = std::move(channel);
  r->copy_.resize(kFrameHeader + config.mtu);
  return r;
}

DatagramReceiver::~DatagramReceiver() = default;

Result<DmqMessage> DatagramReceiver::next_frame(Deadline deadline) {
  if (!udp_) return dmq_->receive(deadline);
  auto f = udp_->receive(deadline);
  if (!f) return f.error();
  return DmqMessage{f->data, f->size};
}

Errc DatagramReceiver::release_frame() { return udp_ ? udp_->release() : dmq_->release(); }

bool DatagramReceiver::readable() const { return udp_ ? udp_->readable() : dmq_->readable(); }

Errc DatagramReceiver::close() {
  if (!udp_) return dmq_->close();
  udp_->abort_receive(Errc::kClosed);
  return Errc::kOk;
}

void DatagramReceiver::abort(Errc reason) {
  if (udp_) {
    udp_->abort_receive(reason);
  } else {
    dmq_->abort(reason);
  }
}

void DatagramReceiver::peer_closed() {
  if (udp_) {
    udp_->peer_closed();
  } else {
    dmq_->peer_closed();
  }
}

Errc DatagramReceiver::notify_to(EventQueue* queue, uint32_t source) {
  if (udp_) return udp_->notify_to(queue, source);
  dmq_->notify_to(queue, source);
  return Errc::kOk;
}

Errc DatagramReceiver::status() const {
  return udp_ ? udp_->receive_status() : dmq_->status();
}

DatagramReceiverStats DatagramReceiver::stats() const {
  DatagramReceiverStats s = stats_;
  if (udp_) {
    const wire::UdpChannelStats u = udp_->stats();
    s.truncated = u.truncated;
    s.foreign = u.foreign;
  }
  return s;
}

void DatagramReceiver::count(FrameCheck c) {
  switch (c) {
    case FrameCheck::kOk: break;
    case FrameCheck::kCorrupt: ++stats_.discarded_corrupt; break;
    case FrameCheck::kMalformed: ++stats_.discarded_malformed; break;
  }
}

void DatagramReceiver::delivered(uint64_t sequence, size_t bytes) {
  ++stats_.delivered;
  stats_.bytes += bytes;
  // In order on an honest link; a sequence that goes backwards (only a
  // misbehaving peer can produce one) is delivered but not counted as a gap.
  if (sequence >= expected_sequence_) {
    stats_.missing += sequence - expected_sequence_;
    expected_sequence_ = sequence + 1;
  }
}

Result<Datagram> DatagramReceiver::receive(Deadline deadline) {
  if (pending_) return Errc::kInvalidArgument;
  for (;;) {
    auto m = next_frame(deadline);
    if (!m) return m.error();
    ++stats_.frames;
    uint64_t sequence = 0;
    const FrameCheck c = check_frame(m->data, m->size, config_.mtu, &sequence);
    if (c == FrameCheck::kOk) {
      pending_ = true;
      delivered(sequence, m->size - kFrameHeader);
      return Datagram{m->data + kFrameHeader, m->size - kFrameHeader, sequence};
    }
    count(c);
    if (Errc e = release_frame(); e != Errc::kOk) return e;
  }
}

Errc DatagramReceiver::release() {
  if (!pending_) return Errc::kInvalidArgument;
  pending_ = false;
  return release_frame();
}

Result<size_t> DatagramReceiver::receive_into(void* buf, size_t cap, Deadline deadline,
                                              uint64_t* sequence) {
  if (pending_) return Errc::kInvalidArgument;
  if (cap < config_.mtu || buf == nullptr) return Errc::kInvalidArgument;
  for (;;) {
    auto m = next_frame(deadline);
    if (!m) return m.error();
    ++stats_.frames;
    // The DMQ bounds the size by its max_message (= header + mtu); check anyway.
    const size_t size = m->size <= copy_.size() ? m->size : 0;
    if (size) std::memcpy(copy_.data(), m->data, size);
    if (Errc e = release_frame(); e != Errc::kOk) return e;
    uint64_t seq = 0;
    const FrameCheck c =
        size ? check_frame(copy_.data(), size, config_.mtu, &seq) : FrameCheck::kMalformed;
    if (c == FrameCheck::kOk) {
      const size_t payload = size - kFrameHeader;
      std::memcpy(buf, copy_.data() + kFrameHeader, payload);
      if (sequence) *sequence = seq;
      delivered(seq, payload);
      return payload;
    }
    count(c);
  }
}

}  // namespace clan
