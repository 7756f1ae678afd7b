#!/usr/bin/env bash
# run.sh TARGET SEEDS WORK SECONDS [libFuzzer options...]: runs one fuzz
# target for SECONDS over the committed seed corpus SEEDS. New inputs go to
# WORK/corpus, never into SEEDS; a crash's input to WORK/artifacts, and its
# bytes are printed here so that a CI log alone reproduces it.
set -uo pipefail
target=$1 seeds=$2 work=$3 seconds=$4
shift 4
mkdir -p "$work/corpus" "$work/artifacts"
rm -f "$work"/artifacts/*
"$target" -max_total_time="$seconds" -timeout=30 -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" "$@" "$work/corpus" "$seeds"
status=$?
if [ $status -ne 0 ]; then
  for f in "$work"/artifacts/*; do
    [ -f "$f" ] || continue
    echo "== reproducer $f ($(stat -c %s "$f") bytes); run: $target $f"
    od -A d -t x1 "$f" | head -64
  done
fi
exit $status
