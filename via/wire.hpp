// What travels between two VIs, in shared memory and in the OOB handshake.
// Everything here is read from memory a peer can write: via/ checks each
// field before use (tests/via/test_peers.cpp plays a peer that does not).
#pragma once

#include <cstddef>
#include <cstdint>

#include "clan_emul/cookie.hpp"
#include "clan_emul/nic_locator.hpp"

namespace via::wire {

// The OOB handshake blob each side sends (connect request, accept reply).
struct Hello {
  uint32_t magic;
  uint16_t version;
  uint16_t kind;  // kHello or kReject
  uint16_t reliability;
  uint16_t discriminator_len;
  uint32_t max_transfer;
  uint8_t discriminator[16];
  uint32_t flags;          // kRdmaWrite
  uint32_t tq_slots;  // transfer-queue ring this side receives into
  uint32_t ck_slots;  // cookie-queue ring this side receives into
  uint32_t reserved;
  // This side's channel block (see block_layout): everything the peer
  // writes for this VI, at the offsets block_layout(ck_slots, tq_slots) gives.
  clan::RdmaCookie block;
  // Where this side's NIC is: a peer on another host links its wire to it.
  clan::NicLocator nic;
};
constexpr uint32_t kHelloMagic = 0x56495043;  // "VIPC"
constexpr uint16_t kVersion = 5;  // 5: the NIC's locator
constexpr uint16_t kHello = 0;
constexpr uint16_t kReject = 1;
constexpr uint32_t kRdmaWrite = 1;

// Cookie queue (receiver -> sender): one message per posted receive
// descriptor, a header then one entry per data segment (paper 001 sect. 3.3.1),
// in the handshake or in a slot of the cookie ring.
struct PostHeader {
  uint32_t magic;
  uint32_t segments;
  uint32_t capacity;  // sum of the segment lengths
  uint32_t flags;     // kSplit: the message may continue in the next descriptor
  uint64_t seq;       // descriptor number on this VI: 0, 1, 2, ...
};
struct PostSegment {
  clan::RdmaCookie cookie;  // the registered memory (a CLAN region)
  uint64_t offset;          // of the buffer within the region
  uint64_t length;
};
constexpr uint32_t kPostMagic = 0x504f5354;  // "POST"
constexpr uint32_t kSplit = 1;

// Transfer queue (sender -> receiver): a ring of fixed records, one per
// receive descriptor the sender filled (sect. 3.3.1), written by PIO. A
// record's tag (its ring position + 1) is written last, after the data
// landed: a receiver that polls the slot finds the whole record in the line
// it polled. The write pointer follows the tags; its tripwire wakes sleepers.
struct Record {
  uint64_t tag;       // ring position + 1: checked against the reader's
  uint64_t desc_seq;  // the receive descriptor it completes
  uint32_t length;
  uint32_t immediate;
  uint32_t flags;   // kImmediate | kMore | kError
  uint32_t status;  // with kError: VIP_STATUS_*_ERROR bits for the receiver
  uint64_t check;
  uint64_t reserved[3];  // zero (checked): a record is a cache line of its own
};
static_assert(sizeof(Record) == 64);
constexpr uint32_t kImmediate = 1;
constexpr uint32_t kMore = 2;
constexpr uint32_t kError = 4;
constexpr uint32_t kKnownFlags = kImmediate | kMore | kError;

constexpr uint64_t record_check(const Record& r) {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ r.tag;
  h = (h ^ r.desc_seq) * 0xff51afd7ed558ccdULL;
  h = (h ^ (uint64_t{r.length} << 32 | r.immediate)) * 0xc4ceb9fe1a85ec53ULL;
  h ^= uint64_t{r.flags} << 32 | r.status;
  return h ^ (h >> 29);
}

// Transfer-queue ring layout (in the receiver's block): [0] write pointer
// (the tripwire watches it), records from kTqRing, one per cache line. In the
// sender's block: [0] read pointer.
constexpr size_t kTqWrite = 0;
constexpr size_t kTqRing = 64;
constexpr size_t kTqRead = 0;
constexpr size_t tq_region_bytes(uint32_t slots) { return kTqRing + size_t{slots} * sizeof(Record); }

// Cookie ring layout (in the block of the VI that sends; the peer writes it):
// [0] doorbell (the tripwire watches it), slots from kCkRing, each [0] tag =
// descriptor number + 1, written last, then the message. In the block of the
// VI that posts: [0] read pointer, [8] doorbell wanted (non-zero: ring it
// after each push).
constexpr size_t kCkDoorbell = 0;
constexpr size_t kCkRing = 64;
constexpr size_t kCkSlot = 576;
constexpr size_t kCkMessage = kCkSlot - 8;
constexpr size_t kCkRead = 0;
constexpr size_t kCkWant = 8;
constexpr size_t kCkSenderBytes = 64;
constexpr size_t ck_region_bytes(uint32_t slots) { return kCkRing + size_t{slots} * kCkSlot; }
constexpr size_t kTqSenderBytes = 64;

// A VI's channel block: one CLAN region holding everything its peer writes
// for it: the cookie ring the peer pushes its receive descriptors into, the
// transfer-queue ring it writes records into, and the read pointers of our
// own two rings in the peer. Every part is written by the peer alone, so one
// region (one cookie, one memfd, one import at the peer) protects them as
// four would. Offsets of the parts, and the block's size:
struct BlockLayout {
  size_t ck_ring;    // cookie ring (ck_region_bytes)
  size_t tq_ring;    // transfer-queue ring (tq_region_bytes)
  size_t ck_sender;  // the read pointer and doorbell request of our cookie ring in the peer
  size_t tq_sender;  // the read pointer of our transfer queue in the peer
  size_t bytes;
};
constexpr BlockLayout block_layout(uint32_t ck_slots, uint32_t tq_slots) {
  BlockLayout l{};
  l.ck_ring = 0;
  l.tq_ring = ck_region_bytes(ck_slots);
  l.ck_sender = l.tq_ring + tq_region_bytes(tq_slots);
  l.tq_sender = l.ck_sender + kCkSenderBytes;
  l.bytes = l.tq_sender + kTqSenderBytes;
  return l;
}

}  // namespace via::wire
