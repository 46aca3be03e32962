#!/usr/bin/env bash
# bench/mem/malloc-group.sh: what bench/mem/malloc.sh runs inside the memory group that
# `antsched mem run --limit 256M` makes (so everything here is charged to that group).
#
#   malloc-group.sh SOCKET OUT FRAGMENT STREAM_FILE IDLE_S [VAR=VALUE]...
#
# 1. Starts FRAGMENT (bench/mem/fragment.c) with the VAR=VALUE environment (LD_PRELOAD of an
#    allocator and of libantsched_mem_preload.so, or nothing for the control) and waits until it
#    has allocated and freed ("ready" on its stdout, OUT.frag; the library's log in OUT.log).
# 2. Starts bench/mem/watch.py: the program's VmRSS every 10 ms and the group's notifications,
#    into OUT.watch.
# 3. After a second of baseline, streams STREAM_FILE through the group's page cache (cat in a
#    loop, its cached pages dropped first so that they are charged here), which fills the group
#    to its limit: the kernel reclaims the group's page cache, memd sees free memory fall under
#    tau and the pages turn over, and S falls (the trigger; see malloc.sh).
# 4. Stops when FRAGMENT exits (after IDLE_S seconds of idling), or on SIGINT/SIGTERM, killing
#    what it started, so that the group is empty and `mem run` can remove it.
set -euo pipefail
SOCK=$1 OUT=$2 FRAGMENT=$3 STREAM=$4 IDLE=$5
shift 5
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
domain="/sys/fs/cgroup/memory$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)"

source "$(dirname "${BASH_SOURCE[0]}")/group-lib.sh"

env ANTSCHED_MEMD_SOCKET="$SOCK" ANTSCHED_MEMD_DOMAIN="$domain" ANTSCHED_MEM_PRELOAD_LOG=1 "$@" \
  "$FRAGMENT" 200 "$IDLE" > "$OUT.frag" 2> "$OUT.log" &
fp=$!
pids+=("$fp")
for _ in $(seq 600); do
  grep -q '^ready' "$OUT.frag" && break
  kill -0 "$fp" 2>/dev/null || { echo "malloc-group: the fragment program died: $(cat "$OUT.log")" >&2; exit 1; }
  sleep 0.05
done
grep -q '^ready' "$OUT.frag" || { echo "malloc-group: the fragment program never got ready" >&2; exit 1; }
python3 "$HERE/watch.py" "$SOCK" "$domain" "$fp" "$OUT.watch" &
pids+=("$!")
sleep 1
dd if="$STREAM" iflag=nocache count=0 status=none
(
  c=""
  trap '[ -n "$c" ] && kill -TERM "$c" 2>/dev/null; exit 0' TERM
  while kill -0 "$fp" 2>/dev/null; do
    cat "$STREAM" > /dev/null &
    c=$!
    wait "$c" || true
  done
) &
pids+=("$!")
wait "$fp"
