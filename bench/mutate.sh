#!/usr/bin/env bash
# Issue 17's mutation run: 10,000 mutated fio job files, scheduler SPECs and DiskSim files
# (from examples/, bench/ and data/), each run through `antsched sim` in its own process:
# no panic, no abort, no run past its limit (60 s of wall time, and a job's runtime= in
# virtual time), under 1 GB resident. Writes $ANTSCHED_BENCH_DIR/mutate.json, prints a table,
# keeps failing inputs in $ANTSCHED_BENCH_DIR/mutate/failures/ and exits 1 if there are any.
#
#   bench/mutate.sh [--count N] [--seed S]
# Needs python3; no root, FUSE or fio.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${ANTSCHED_BENCH_DIR:-/tmp/antsched-bench}"
mkdir -p "$WORK"
if [ -z "${ANTSCHED:-}" ]; then
  (cd "$ROOT" && cargo build --release -q -p antsched)
  ANTSCHED="$ROOT/target/release/antsched"
fi
exec python3 "$ROOT/bench/mutate.py" --antsched "$ANTSCHED" --work "$WORK" "$@"
