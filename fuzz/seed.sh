#!/usr/bin/env bash
# Builds the fuzz targets' starting corpora in fuzz/corpus/TARGET from the repository's own
# inputs (examples/, data/, bench/) and the small hand-written seeds in fuzz/seeds/TARGET
# (strings from the tests, one SPEC per scheduler with every tunable). The seeds are added to
# what is there: a corpus the fuzzer has grown is kept (it stays out of git, fuzz/.gitignore).
set -euo pipefail
cd "$(dirname "$0")"
root=..
for t in fio spec disksim seek trace curve scenario; do
  mkdir -p "corpus/$t"
  cp seeds/"$t"/* "corpus/$t/" 2>/dev/null || true
done
cp "$root"/examples/jobs/*.fio "$root"/bench/*.fio corpus/fio/
cp "$root"/examples/memory/*.toml corpus/scenario/
for f in "$root"/data/disksim/*.parv "$root"/data/disksim/*.diskspecs "$root"/data/disksim/*.model; do
  cp "$f" corpus/disksim/
done
cp "$root"/data/disksim/*.seek corpus/seek/
# The traces are 470 KB each; their first 40 lines are what a mutation can reach in a run.
for f in "$root"/data/disksim/*.trace; do
  head -n 40 "$f" > "corpus/trace/$(basename "$f")"
done
echo "corpora:"
for t in corpus/*; do echo "  $t: $(ls "$t" | wc -l) files"; done
