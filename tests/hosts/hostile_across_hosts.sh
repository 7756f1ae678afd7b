#!/usr/bin/env bash
# The hostile-peer tests of the remote wire and of the udp datagram link
# across the two hosts of scripts/two_hosts.sh: the test binary runs in host
# B, its NICs and links listening on B's address, and its hostile peers make
# their endpoints in host A's network namespace (tests/clan_emul/peer_host.hpp),
# so that forged cookies, wrong keys, garbage and crafted frames reach the
# NIC over the veth pair between the hosts.
#
#   hostile_across_hosts.sh SCRIPT PREFIX TEST_BINARY TEST_SPEC
set -Eeuo pipefail
(($# == 4)) || { sed -n '9s/^# *//p' "$0" >&2; exit 2; }
script=$1 prefix=$2 binary=$3 spec=$4
b=$("$script" addr B "$prefix")
a=$("$script" addr A "$prefix")
# A's namespace file is not visible inside B's mount namespace: it is opened
# here, and the test reaches it through the descriptor it inherits.
exec 9<"$("$script" netns A "$prefix")"
exec "$script" exec B "$prefix" -- env CLANORB_TEST_HOST="$b" CLANORB_TEST_PEER_HOST="$a" \
  CLANORB_TEST_PEER_NETNS=/proc/self/fd/9 "$binary" "$spec"
