#!/usr/bin/env bash
# bench/mem/jvm-group.sh: what bench/mem/jvm.sh runs inside the memory group that `antsched mem
# run --limit 256M` makes (so the JVM, the hog and the bridge are all charged to that group).
#
#   jvm-group.sh SOCKET OUT HOG MB|0 ADAPT 0|1 TIMEOUT_S [HOG_NICE] -- JAVA [ARGS...]
#
# Starts HOG (bench/mem/hog.c) with MB megabytes 3 s before the JVM when MB > 0; when
# HOG_NICE is given, in a group of its own inside this one, niced (`antsched mem run --nice
# HOG_NICE`, nested; memd's answer in OUT.nice; a refusal fails the run); runs the JVM
# command under `timeout TIMEOUT_S` (its stdout in OUT.java), with, when ADAPT is 1,
# examples/jvm-bridge subscribed to this group piped into its stdin; samples the JVM's VmRSS
# and VmSwap every 0.5 s (OUT.rss). Writes the JVM's exit status to OUT.status (124: the time
# limit), the wall time, the group's memory.oom_control (OUT.oom) and the peak of memory plus
# swap (OUT.memsw). Stops what it started on exit, SIGINT or SIGTERM.
set -euo pipefail
SOCK=$1 OUT=$2 HOG=$3 HOG_MB=$4 ADAPT=$5 LIMIT=$6
shift 6
HOG_NICE=""
if [ "$1" != "--" ]; then HOG_NICE=$1; shift; fi
[ "$1" = "--" ] && shift
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BRIDGE="$ROOT/target/release/jvm-bridge"
ANTSCHED="${ANTSCHED:-$ROOT/target/release/antsched}"
domain="/sys/fs/cgroup/memory$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)"

source "$(dirname "${BASH_SOURCE[0]}")/group-lib.sh"

if [ "$HOG_MB" -gt 0 ]; then
  if [ -n "$HOG_NICE" ]; then
    # The hog in a group of its own inside this one (a nested `mem run`, niced), so that
    # memd can enforce its weight: v1 reclaims a group as a whole, and a nice on a process
    # that shares its group with the JVM is not enforced (docs/memd.md, "Whose nice").
    "$ANTSCHED" mem run --nice "$HOG_NICE" --socket "$SOCK" -- "$HOG" "$HOG_MB" \
      > "$OUT.hog" 2> "$OUT.nice.err" &
    pids+=("$!")
    echo "$(date +%s.%N) hog $! nice $HOG_NICE" > "$OUT.nice"
    for _ in $(seq 100); do
      grep -q 'memd set nice' "$OUT.nice.err" 2>/dev/null && break
      sleep 0.02
    done
    grep 'memd set nice' "$OUT.nice.err" >> "$OUT.nice" ||
      { echo "jvm-group: the hog's group was not niced: $(cat "$OUT.nice.err")" >&2; exit 1; }
  else
    "$HOG" "$HOG_MB" > "$OUT.hog" &
    pids+=("$!")
  fi
  sleep 3
fi
rc=0
if [ "$ADAPT" = 1 ]; then
  mkfifo "$OUT.fifo"
  "$BRIDGE" "$SOCK" "$domain" > "$OUT.fifo" 2> "$OUT.bridge.err" &
  pids+=("$!")
  timeout -k 5 "$LIMIT" "$@" < "$OUT.fifo" > "$OUT.java" 2> "$OUT.java.err" &
else
  timeout -k 5 "$LIMIT" "$@" < /dev/null > "$OUT.java" 2> "$OUT.java.err" &
fi
tp=$!
pids+=("$tp")
# The JVM is timeout's child.
jp=""
for _ in $(seq 100); do
  jp=$(pgrep -P "$tp" | head -1 || true)
  [ -n "$jp" ] && break
  sleep 0.02
done
(
  while [ -n "$jp" ] && [ -r "/proc/$jp/status" ]; do
    awk -v t="$(date +%s.%N)" '/^VmRSS|^VmSwap/ { v[$1] = $2 } END { print t, v["VmRSS:"], v["VmSwap:"] }' "/proc/$jp/status" 2>/dev/null || true
    sleep 0.5
  done
) > "$OUT.rss" &
pids+=("$!")
t0=$(date +%s.%N)
wait "$tp" || rc=$?
echo "$rc $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')" > "$OUT.status"
cat "$domain/memory.oom_control" > "$OUT.oom" 2>/dev/null || true
cat "$domain/memory.memsw.max_usage_in_bytes" > "$OUT.memsw" 2>/dev/null || true
