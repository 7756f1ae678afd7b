// What the two sides do on a link: round trips timed by the client and
// echoed by the server; a stream the client sends and the server receives
// and checks, closed by an acknowledgement. The first 8 bytes of every
// message carry its number, which the other side checks.
#pragma once

#include <cstdint>
#include <vector>

#include "wire_bench/wire.hpp"

namespace wire_bench {

// `warm` untimed round trips, then `count` timed ones (ns each) appended to
// `samples`. False if the link failed or a reply carried the wrong number.
bool ping(Link& link, uint32_t size, uint64_t warm, uint64_t count, Wait wait, std::vector<uint64_t>& samples);
// Echoes `count` messages. False if the link failed.
bool pong(Link& link, uint32_t size, uint64_t count, Wait wait);

// Sends `count` messages and waits for the acknowledgement: the elapsed ns,
// or 0 if the link failed or the acknowledgement was wrong.
uint64_t stream_out(Link& link, uint32_t size, uint64_t count, Wait wait);
// Receives `count` messages, checks their numbers and acknowledges them: 0,
// or the protocol's Failure.
int32_t stream_in(Link& link, uint32_t size, uint64_t count, Wait wait);

}  // namespace wire_bench
