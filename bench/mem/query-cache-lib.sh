# Shared by bench/mem/query-cache.sh and bench/mem/query-cache-anchors.sh: the tools, the
# build, the 200 MB database on an antsched mount of the 7,200 rpm paper disk, a private
# antsched memd, one configuration in its own 256 MB group (qc_run), and the table and JSON
# (qc_table). Built on bench/mem/lib.sh, whose cleanup runs on success, failure and Ctrl-C:
# it stops the running `mem run` by its PID (and removes the group a killed one left, killing
# by PID what is still in it), the memd this script started (by PID) and the mount (by PID),
# then unmounts the mount point if it is still mounted and removes the temporary directory.
#
# Source it with OUT_NAME set (the outputs' directory under $ANTSCHED_BENCH_DIR); then
# qc_setup, qc_run NAME CACHE [query-cache run options...] for each configuration, and
# qc_table TITLE JSON_NAME COMPARE NAME... (COMPARE: 1 prints whether adaptive is ahead of each
# anchor policy run).

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DISK=deskstar-34gxp
SCHED=as-aged-sptf
LIMIT=256M
SEED=1
# C_disk of the cost rule: the Deskstar's random read (9.0 ms average seek + 4.2 ms half
# rotation). memd measures /proc/diskstats, which has no line for an antsched mount.
PAGING_DISK_MS=13

for t in python3 mountpoint; do
  command -v "$t" >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq python3 util-linux fuse3 >/dev/null; break; }
done
need python3 mountpoint
need_root
(cd "$ROOT" && cargo build --release -q -p antsched-query-cache)
QC="$ROOT/target/release/query-cache"

OUT="$WORK/$OUT_NAME"
mkdir -p "$OUT"
rm -f "$OUT"/*.json "$OUT"/*.csv "$OUT"/*.svg "$OUT"/*.log "$OUT"/*.status "$OUT"/*.machine-reclaim "$OUT"/*.memd-took
TMP=$(mktemp -d /tmp/antsched-qcache.XXXXXX)
B="$TMP/backing"
M="$TMP/mnt"
# Run by lib.sh's cleanup after the `mem run` is stopped: memd and the mount, each by the PID
# this script started it with, a mount point still mounted unmounted lazily, then the
# temporary directory (the database, the socket).
qc_cleanup() {
  if [ -n "$MEMD_PID" ]; then
    kill -TERM "$MEMD_PID" 2>/dev/null || true
    wait "$MEMD_PID" 2>/dev/null || true
    MEMD_PID=""
  fi
  if [ -n "$MOUNT_PID" ]; then
    kill -TERM "$MOUNT_PID" 2>/dev/null || true
    wait "$MOUNT_PID" 2>/dev/null || true
    MOUNT_PID=""
  fi
  if mountpoint -q "$M" 2>/dev/null; then umount -l "$M" || true; fi
  rm -rf --one-file-system "$TMP"
}
add_cleanup qc_cleanup

# qc_setup: the database (made in the backing directory, so the mount shows it as one file
# laid out in order; populating 200 MB through the emulated disk would take minutes), the
# mount, memd (every 100 ms).
qc_setup() {
  echo "query-cache: outputs in $OUT"
  mkdir -p "$B"
  "$QC" populate --db "$B/atis.db" --size-mb 200 --seed "$SEED" | tee "$OUT/populate.log"
  mount_with "$B" "$M" "$SCHED" --disk "$DISK"
  start_memd "$TMP/memd.sock" --interval 100ms
  cp "$WORK/memd.err" "$OUT/memd.log" 2>/dev/null || true
}

# The machine's reclaim so far, pages (kswapd's and direct): on this shared machine another
# engineer's job that fills the page cache makes the kernel reclaim from every group, our
# database's mapped pages too, which no policy in the group chose; qc_run records it per run.
machine_reclaim_pages() {
  awk '$1 == "pgsteal_kswapd" || $1 == "pgsteal_direct" { n += $2 } END { print n + 0 }' /proc/vmstat
}

# qc_run NAME CACHE [query-cache run options...]: one configuration in its own 256 MB group;
# its output in $OUT/NAME.log, its exit status in $OUT/NAME.status (137: SIGKILL, the memory
# cgroup's OOM killer, as there is no swap), the machine's reclaim during it (pages, from
# /proc/vmstat) in $OUT/NAME.machine-reclaim, and what memd's enforcement took from the run's
# group (KiB, from memd's log: when the *machine* is below tau, memd takes file pages from
# every group it governs, ours too, whoever filled the machine) in $OUT/NAME.memd-took.
qc_run() {
  local name=$1 cache=$2; shift 2
  echo "--- $name (--cache $cache $*)"
  local reclaim0
  reclaim0=$(machine_reclaim_pages)
  "$ANTSCHED" mem run --limit "$LIMIT" --socket "$MEMD_SOCK" -- \
    "$QC" run --db "$M/atis.db" --queries "$QUERIES" --cache "$cache" --seed "$SEED" \
    --socket "$MEMD_SOCK" --paging-disk-ms "$PAGING_DISK_MS" \
    --json "$OUT/$name.json" --timeline "$OUT/$name.csv" "$@" >"$OUT/$name.log" 2>&1 &
  MEMRUN_PID=$!
  local status=0 group="/antsched/run-$MEMRUN_PID"
  wait "$MEMRUN_PID" || status=$?
  MEMRUN_PID=""
  echo $(( $(machine_reclaim_pages) - reclaim0 )) > "$OUT/$name.machine-reclaim"
  awk -v g="$group" '/enforcement: / && $NF ~ (g "$") { for (i = 1; i < NF; i++) if ($i == "took") kb += $(i + 1) } END { print kb + 0 }' \
    "$WORK/memd.err" > "$OUT/$name.memd-took"
  grep -v '^antsched mem run' "$OUT/$name.log" || true
  echo "$status" > "$OUT/$name.status"
}

# qc_time_limit NAME: twice that run's runtime (the simulator's rule for the runtime table).
qc_time_limit() {
  python3 -c 'import json,sys; print(round(2 * json.load(open(sys.argv[1]))["runtime_s"], 1))' "$OUT/$1.json"
}

# qc_finish: the mount's statistics, then unmount.
qc_finish() {
  unmount_saving "$OUT/mount-stats.json"
  cp "$WORK/memd.err" "$OUT/memd.log" 2>/dev/null || true
}

# qc_table JSON_NAME COMPARE NAME...: the table (and, with COMPARE 1, adaptive against each
# anchor policy, alone and with the hog), and $OUT/JSON_NAME with every run.
qc_table() {
  local json=$1 compare=$2; shift 2
  python3 "$ROOT/bench/mem/query-cache-table.py" "$OUT" "$json" "$compare" "$QUERIES" \
    "$LIMIT_S" "$HOG_MB" "$HOG_AT" "$@"
}
