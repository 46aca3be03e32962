#!/usr/bin/env bash
# bench/mem/nice-group.sh: what bench/mem/nice.sh runs inside the memory group that
# `antsched mem run --limit 256M` makes (so everything here is charged to that group).
#
#   nice-group.sh ANTSCHED SOCKET OUT ZIPF_CACHE STREAM_FILE STREAM_MB_S NICE [zipf-cache run ARGS]...
#
# 0. Sets the group's memory.swappiness to 0 (no swap for its anonymous memory).
# 1. Starts the stream (`zipf-cache stream`: STREAM_FILE through the group's page cache at
#    STREAM_MB_S, in a loop): the pages the kernel reclaims when the caches grow, which give
#    memd a candidate age (anonymous memory cannot be reclaimed without swap).
# 2. Starts two identical `zipf-cache run ... ARGS` (seeds 1 and 2), each subscribed to the
#    group's domain and waiting for OUT.go; their JSON and timelines are OUT.a.* and OUT.b.*.
# 3. Sets the first one's memory nice to NICE (`antsched mem nice -n NICE PID`), waits for the
#    daemon's next records (0.5 s), and creates OUT.go: both start serving together.
# 4. Waits for both, then stops the stream. On SIGINT/SIGTERM it kills what it started (by
#    PID), so that the group is empty and `mem run` can remove it.
set -euo pipefail
ANTSCHED=$1 SOCK=$2 OUT=$3 ZC=$4 STREAM=$5 RATE=$6 NICE=$7
shift 7

source "$(dirname "${BASH_SOURCE[0]}")/group-lib.sh"

# No anonymous memory of this group goes to swap, even while another experiment has a swap
# area on (the machine has none of its own; bench/mem/jvm.sh turns one on for its runs): the
# experiment is about caches that cannot be paged, with the stream's page cache as the only
# memory the kernel can reclaim here.
domain="/sys/fs/cgroup/memory$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)"
echo 0 > "$domain/memory.swappiness"
rm -f "$OUT.go"
"$ZC" stream --file "$STREAM" --mb-s "$RATE" 2> "$OUT.stream.err" &
pids+=("$!")
"$ZC" run --socket "$SOCK" --wait-file "$OUT.go" --seed 1 --json "$OUT.a.json" \
  --timeline "$OUT.a.csv" "$@" > "$OUT.a.out" 2> "$OUT.a.err" &
a=$!
pids+=("$a")
"$ZC" run --socket "$SOCK" --wait-file "$OUT.go" --seed 2 --json "$OUT.b.json" \
  --timeline "$OUT.b.csv" "$@" > "$OUT.b.out" 2> "$OUT.b.err" &
b=$!
pids+=("$b")
for _ in $(seq 600); do
  grep -q 'waiting for' "$OUT.a.err" 2>/dev/null && grep -q 'waiting for' "$OUT.b.err" 2>/dev/null && break
  for p in "$a" "$b"; do
    kill -0 "$p" 2>/dev/null || { echo "nice-group: a cache program died: $(cat "$OUT.a.err" "$OUT.b.err")" >&2; exit 1; }
  done
  sleep 0.05
done
grep -q 'waiting for' "$OUT.a.err" && grep -q 'waiting for' "$OUT.b.err" ||
  { echo "nice-group: the cache programs never subscribed" >&2; exit 1; }
"$ANTSCHED" mem nice -n "$NICE" "$a" --socket "$SOCK" > "$OUT.nice" 2>&1 ||
  { cat "$OUT.nice" >&2; exit 1; }
echo "$a $b" > "$OUT.pids"
sleep 0.5
touch "$OUT.go"
status=0
wait "$a" || status=$?
wait "$b" || status=$?
exit "$status"
