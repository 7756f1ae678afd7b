#!/usr/bin/env bash
# Installs the Debian 12 packages clanorb needs, if any are missing.
# Sourced by the two top-level commands; safe to run again.
set -euo pipefail

CLANORB_PACKAGES=(
  g++ cmake ninja-build pkg-config python3
  omniorb omniidl omniorb-nameserver omniorb-doc libomniorb4-dev libomnithread4-dev
  libzmq3-dev cppzmq-dev
  libboost-dev
  libfabric-dev libfabric-bin  # the remote wire: libfabric's tcp (RMA) and udp (datagrams) providers
  iproute2 util-linux  # two hosts on one machine: network namespaces joined by a veth pair
  catch2
  python3-matplotlib
  clang-14 libclang-rt-14-dev  # the fuzz targets (fuzz/): libFuzzer and its sanitizers
)

missing=()
for p in "${CLANORB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "clanorb: installing missing packages: ${missing[*]}" >&2
  SUDO=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "clanorb: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
