#!/usr/bin/env bash
# build.sh DIR [cmake options...] [-- targets...]: configures and builds one
# build tree (all targets unless some are named after --).
set -euo pipefail
dir=$1
shift
opts=()
while (($#)) && [ "$1" != "--" ]; do opts+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
targets=()
for t in "$@"; do targets+=(--target "$t"); done
root=$(cd "$(dirname "$0")/.." && pwd)
cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCLANORB_WERROR=ON "${opts[@]}" >/dev/null
cmake --build "$dir" --parallel "$(nproc)" "${targets[@]}"
