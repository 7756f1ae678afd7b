#!/usr/bin/env bash
# run.sh BUILD_DIR find_package|pkg-config
# Installs the clanorb build tree BUILD_DIR into a fresh temporary prefix,
# builds the consumer project (consumer/, a copy outside the source tree)
# against that prefix only, with find_package(clanorb) or with
# `pkg-config --cflags --libs clanorb`, and makes one call between two of its
# processes. The server offers only giop:clan, and the client's trace must
# show the connection over giop:clan: the call cannot have gone over tcp.
# Both ways also check that a plugin named on its own (-lclanorb_clan, or the
# CMake target clanorb::clan) does not link.
set -euo pipefail
build=$(cd "$1" && pwd)
how=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

work=$(mktemp -d /tmp/clanorb-install-XXXXXX)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "install test ($how): $*" >&2; exit 1; }

prefix=$work/prefix
src=$work/src
out=$work/out
cmake --install "$build" --prefix "$prefix" >/dev/null || fail "cmake --install $build failed"
cp -r "$here/consumer" "$src"
mkdir -p "$out"

build_with_find_package() {
  cmake -S "$src" -B "$out" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON >"$work/configure.log" 2>&1 ||
    fail "configure against $prefix failed: $(cat "$work/configure.log")"
  cmake --build "$out" >"$work/build.log" 2>&1 || fail "build failed: $(cat "$work/build.log")"
  # Nothing may come from clanorb's source or build tree.
  if grep -q -e "$root/" -e "$build/" "$out/build.ninja"; then
    fail "the consumer's build names clanorb's source or build tree"
  fi
  "$out/layers" || fail "the layers program (clanorb::via, clanorb::clan_emul) failed"
}

build_with_pkg_config() {
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  local flags
  flags=$(pkg-config --cflags --libs clanorb) || fail "pkg-config does not know clanorb"
  (cd "$out" && omniidl -bcxx "$src/greeter.idl") || fail "omniidl failed"
  # shellcheck disable=SC2086  # the flags are words
  g++ -std=c++17 -I"$out" "$src/consumer.cpp" "$out/greeterSK.cc" $flags -o "$out/consumer" ||
    fail "g++ with \`pkg-config --cflags --libs clanorb\` ($flags) failed"
  # pkg-config gives no run path: a shared build's libraries are found here.
  export LD_LIBRARY_PATH=$prefix/lib
}

# A plugin named on its own would come without its registration anchors: it
# must not link at all rather than link and lack the transport at run time.
check_plugin_not_linkable_by_name() {
  local log=$work/by-name.log
  if g++ -std=c++17 -I"$out" "$src/consumer.cpp" "$out/greeterSK.cc" -L"$prefix/lib" \
      -lclanorb_clan $(pkg-config --libs omniORB4) -o "$out/by-name" >"$log" 2>&1; then
    fail "-lclanorb_clan linked; it must fail to link"
  fi
  grep -q "cannot find -lclanorb_clan" "$log" || fail "-lclanorb_clan failed otherwise: $(cat "$log")"
}

# The same with CMake: a project linking the exported plugin target alone.
check_plugin_target_alone_does_not_link() {
  local alone=$work/alone log=$work/alone.log
  mkdir -p "$alone"
  cat >"$alone/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(plugin_alone CXX)
find_package(clanorb REQUIRED)
file(WRITE ${CMAKE_BINARY_DIR}/main.cpp "int main() { return 0; }\n")
add_executable(plugin_alone ${CMAKE_BINARY_DIR}/main.cpp)
target_link_libraries(plugin_alone PRIVATE clanorb::clan)
CMAKE
  cmake -S "$alone" -B "$alone/out" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON >"$log" 2>&1 || fail "configure of plugin_alone failed: $(cat "$log")"
  if cmake --build "$alone/out" >>"$log" 2>&1; then
    fail "a program linking clanorb::clan alone linked; it must fail to link"
  fi
  grep -q "clanorb_otp_anchor" "$log" || fail "clanorb::clan alone failed otherwise: $(cat "$log")"
}

call_over_clan() {
  mkfifo "$work/server.out"
  "$out/consumer" server -ORBendPoint giop:clan:: >"$work/server.out" &
  server_pid=$!
  local ior reply
  exec 3<"$work/server.out"
  IFS= read -r -t 60 ior <&3 || fail "the server printed no IOR (it failed or hung)"
  [[ $ior == IOR:* ]] || fail "the server printed '$ior', not an IOR"
  reply=$(timeout 60 "$out/consumer" client "$ior" -ORBtraceLevel 25 2>&1) || fail "the call failed: $reply"
  grep -q "reply: hello over clanorb" <<<"$reply" || fail "wrong reply: $reply"
  grep -q "Client opened connection to giop:clan:" <<<"$reply" ||
    fail "the call did not go over giop:clan: $reply"
  echo "install test ($how): one call over giop:clan from a project built against $prefix"
}

case $how in
  find_package) build_with_find_package && check_plugin_target_alone_does_not_link ;;
  pkg-config) build_with_pkg_config && check_plugin_not_linkable_by_name ;;
  *) fail "unknown way '$how' (find_package or pkg-config)" ;;
esac
call_over_clan
