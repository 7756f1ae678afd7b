// Every end-to-end test body runs once per (transport, server threading mode).
#pragma once

#include <catch2/catch.hpp>

#include "orb/transports.hpp"

// Declares `t` (the Transport) and `mode` (the server's Threading) in a test
// body, generated over transports() and both threading modes.
#define ORB_TEST_OVER_EVERY_TRANSPORT()                                                  \
  const ::clan::orbtest::Transport t = GENERATE(from_range(::clan::orbtest::transports())); \
  const ::clan::orbtest::Threading mode = GENERATE(                                      \
      ::clan::orbtest::Threading::kPerConnection, ::clan::orbtest::Threading::kPool);    \
  INFO("transport " << t.name << ", server " << ::clan::orbtest::to_string(mode))
