#!/usr/bin/env bash
# The real kernel's schedulers on the same emulated disk (issue 18): a loop device with direct
# I/O over a 2 GiB file on an `antsched mount` of the emulated IBM Deskstar 34GXP, the mount's
# own scheduler `noop` (first come, first served, one request at a time: the emulated IDE
# disk), so that the kernel's scheduler in front of the loop device is the one deciding. On it:
#
# - Linux's `none`, `mq-deadline`, `bfq` with `low_latency` 1 (its default), `bfq` with
#   `low_latency` 0, and `bfq` with `low_latency` 0 and `slice_idle` 0, each under fio's two
#   sequential readers (seq2), two random readers (rand2) and a reader against a writer (rw):
#   psync, direct=1, 64 KiB, the two jobs in the two halves of the device (offset 0 and 1 GiB),
#   20 s each (KP_RUNTIME, in seconds). The loop device is marked rotational (its sysfs
#   `queue/rotational` 1), as BFQ decides idling by it.
# - Beside each, what `antsched sim` predicts for the very same job file (its
#   `filename=/dev/loopN` is the simulated disk addressed at `offset`, and the mount lays the
#   file out from sector 0, so both address the same sectors) under antsched's model of that
#   scheduler: `noop` for none, `deadline` for mq-deadline, `bfq` (whose `low_latency` is 1 by
#   default, as Linux's) for bfq, `bfq:low_latency=0` and `bfq:low_latency=0,slice_idle=0` for
#   the other two settings. For the work-conserving rows of the two
#   sequential patterns it also prints the prediction with the second job 1 to 5 requests
#   further on (KP_SKEWS), the range the rotational phase between the two streams spans; and
#   for every kernel row the mount's recording of it (the requests as the loop device sent
#   them, in its order, with its gaps) replayed on the disk model under noop.
# - antsched's own schedulers on the mount itself, without a loop device: fio on the same
#   2 GiB file through the mount (each fio job its own process, so its own context), under
#   the mount's default scheduler (no --scheduler), `as-rw-sptf`, and `noop` (the kernel's
#   `none` row without the loop device in between), with their predictions.
# - What the mount sees behind a loop device: its statistics (stats.json) name the contexts
#   that issued each row's requests, and a blkparse recording of the mount (--record) gives
#   the most requests it had at once. Probes of KP_PROBE_RUNTIME s (default 10), each on a
#   fresh mount under the default scheduler with the loop device's `none`: two sequential
#   readers; one random reader with libaio at iodepth 8 (also with a 4 KiB logical sector
#   size, `losetup --sector-size 4096`); the two readers in separate blkio cgroups (fio's
#   `cgroup`, when cgroup v1's blkio is mounted: the loop driver has a worker per cgroup);
#   and with the mount offering FUSE's asynchronous direct I/O (`--async-dio`).
# - For every BFQ row, BFQ's own log, read through ftrace's blk tracer on the loop device
#   (only when no one else uses ftrace: the current tracer is `nop` and no events are set;
#   KP_TRACE=0 skips it): how its queues expired (preempted, budget exhausted, budget
#   timeout, too idle), how many dispatches were weight-raised (interactive, coefficient 30;
#   soft real-time, 3000), queue merges and the dispatches from a merged queue.
#
# Prints the tables; figures in $ANTSCHED_BENCH_DIR/kernel-peers/kernel-peers.json (and every
# fio output, simulation, mount statistics and recording beside it). About 10 minutes.
# Everything it made (the loop devices, the mounts, the 2 GiB file, fio's cgroups, the
# tracer) is undone on success, failure and Ctrl-C.
#
#   sudo bench/kernel-peers.sh          (ANTSCHED_BENCH_DIR=/tmp/antsched-bench by default)
#   KP_RUNTIME=20 KP_PROBE_RUNTIME=10 KP_SKEWS="1 2 3 4 5" KP_TRACE=1
set -euo pipefail

RT=${KP_RUNTIME:-20}
PRT=${KP_PROBE_RUNTIME:-10}
SKEWS=${KP_SKEWS-1 2 3 4 5}
TRACE=${KP_TRACE:-1}
die() { echo "bench/kernel-peers.sh: $*" >&2; exit 2; }
if ! { [[ $RT =~ ^[0-9]+$ ]] && [ "$RT" -ge 2 ] && [ "$RT" -le 600 ]; }; then die "KP_RUNTIME must be 2 to 600 seconds, not '$RT'"; fi
if ! { [[ $PRT =~ ^[0-9]+$ ]] && [ "$PRT" -ge 2 ] && [ "$PRT" -le 600 ]; }; then die "KP_PROBE_RUNTIME must be 2 to 600 seconds, not '$PRT'"; fi
for k in $SKEWS; do [[ $k =~ ^[0-9]{1,3}$ ]] || die "KP_SKEWS holds request counts (0 to 999), not '$k'"; done
[[ $TRACE =~ ^[01]$ ]] || die "KP_TRACE must be 0 or 1, not '$TRACE'"
[ "$(id -u)" -eq 0 ] || die "run as root (loop devices, mounting, the block schedulers)"

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

# What the benchmark needs from the distribution, installed if missing.
missing=()
command -v fio >/dev/null 2>&1 || missing+=(fio)
command -v fusermount3 >/dev/null 2>&1 || missing+=(fuse3)
command -v losetup >/dev/null 2>&1 || missing+=(mount)
command -v mountpoint >/dev/null 2>&1 || missing+=(util-linux)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
install_missing "${missing[@]}"

need fio python3 losetup truncate
DISK=deskstar-34gxp
D="$WORK/kernel-peers"
B="$D/backing"
M="$D/mnt"
JOBS="$D/jobs"
PY="$ROOT/bench/kernel-peers.py"
IMG_BYTES=$((2 * 1024 * 1024 * 1024))
SYSQ=""       # /sys/block/loopN/queue of the loop device in use
LOOP=""       # /dev/loopN
FIO_PID=""
TRACING=""    # set while this script has the blk tracer on
TRACE_PID=""
T=/sys/kernel/tracing
TRACEFS_MOUNTED=""  # set when this script mounted tracefs at $T itself (and unmounts it)
CG_PREFIX="antsched-kp-$$"
MOUNT_LOGS=$D
# The loop driver and BFQ may be modules (built in, modprobe does nothing).
modprobe -q loop 2>/dev/null || true
modprobe -q bfq 2>/dev/null || true

mkdir -p "$D"
rm -rf "$JOBS" "$D"/*.json "$D"/*.blk "$D"/*.trace "$D"/rows.tsv "$D"/*.fio.json
mkdir -p "$JOBS"

trace_off() {
  [ -n "$TRACING" ] || return 0
  if [ -n "$SYSQ" ]; then echo 0 > "${SYSQ%/queue}/trace/enable" 2>/dev/null || true; fi
  if [ -n "$TRACE_PID" ]; then
    kill -TERM "$TRACE_PID" 2>/dev/null || true
    wait "$TRACE_PID" 2>/dev/null || true
    TRACE_PID=""
  fi
  echo nop > "$T/current_tracer" 2>/dev/null || true
  TRACING=""
}

detach_loop() {
  [ -n "$LOOP" ] || return 0
  losetup -d "$LOOP" 2>/dev/null || true
  for _ in $(seq 50); do
    losetup "$LOOP" >/dev/null 2>&1 || break
    sleep 0.1
  done
  LOOP=""
  SYSQ=""
}

# Cleanup on success, failure and Ctrl-C: fio, the tracer, the loop device (before the mount,
# which it keeps busy), the mount (lib.sh's cleanup), fio's cgroups, the mount point and the
# 2 GiB file. The results in $D stay.
kp_cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  if [ -n "$FIO_PID" ]; then
    kill -TERM "$FIO_PID" 2>/dev/null || true
    wait "$FIO_PID" 2>/dev/null || true
    FIO_PID=""
  fi
  trace_off
  if [ -n "$TRACEFS_MOUNTED" ]; then umount "$T" 2>/dev/null || true; fi
  detach_loop
  cleanup
  if [ -n "$MOUNT_DIR" ] && mountpoint -q "$MOUNT_DIR"; then umount -l "$MOUNT_DIR" 2>/dev/null || true; fi
  local cg
  for cg in /sys/fs/cgroup/*/"$CG_PREFIX"-* /sys/fs/cgroup/"$CG_PREFIX"-*; do
    if [ -d "$cg" ]; then rmdir "$cg" 2>/dev/null || true; fi
  done
  if [ -d "$M" ] && ! mountpoint -q "$M"; then rmdir "$M" 2>/dev/null || true; fi
  rm -rf --one-file-system "$B"
  exit "$rc"
}
trap kp_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# --- The job files: the same file for fio on the loop device and for the simulator. ---------
# write_job NAME FILENAME PATTERN1 PATTERN2 [ENGINE DEPTH] [CGROUPS]: two jobs (or one, if
# PATTERN2 is -) in the two halves of FILENAME.
write_job() {
  local name=$1 file=$2 p1=$3 p2=$4 engine=${5:-psync} depth=${6:-1} cg=${7:-} n1=reader1 n2=reader2 rt=$RT
  if [[ $name == probe-* ]]; then rt=$PRT; fi
  if [ "$p2" = write ]; then n1=reader; n2=writer; fi
  {
    echo "; bench/kernel-peers.sh: $name. Runs unchanged under fio and \`antsched sim\` (a /dev/"
    echo "; path is the simulated disk, addressed at offset, where the mount lays the file out)."
    echo "[global]"
    echo "ioengine=$engine"
    if [ "$depth" != 1 ]; then echo "iodepth=$depth"; fi
    echo "direct=1"
    echo "bs=64k"
    echo "size=1g"
    echo "runtime=${rt}s"
    echo "time_based"
    echo "filename=$file"
    echo
    echo "[$n1]"
    echo "rw=$p1"
    echo "offset=0"
    if [ -n "$cg" ]; then echo "cgroup=$CG_PREFIX-1"; fi
    if [ "$p2" != - ]; then
      echo
      echo "[$n2]"
      echo "rw=$p2"
      echo "offset=${SKEW_OFFSET:-1g}"
      if [ -n "$cg" ]; then echo "cgroup=$CG_PREFIX-2"; fi
    fi
  } > "$JOBS/$name.fio"
}
WORKLOADS=(seq2 rand2 rw)
declare -A P1=([seq2]=read [rand2]=randread [rw]=read)
declare -A P2=([seq2]=read [rand2]=randread [rw]=write)

# run_fio JOBFILE OUT: fio in the background (so that a Ctrl-C reaches our trap at once).
run_fio() {
  fio --output-format=json --output="$2" "$1" > /dev/null &
  FIO_PID=$!
  wait "$FIO_PID"
  FIO_PID=""
}

# The stats.json snapshot of the mount now.
snap() { cp "$M/.antsched/stats.json" "$1"; }

# attach_loop FILE [losetup options...]: a loop device with direct I/O over FILE, rotational.
attach_loop() {
  local f=$1; shift
  LOOP=$(losetup --direct-io=on "$@" --show -f "$f")
  SYSQ="/sys/block/${LOOP#/dev/}/queue"
  [ "$(cat "${SYSQ%/queue}/loop/dio")" = 1 ] || { echo "bench: $LOOP did not get direct I/O" >&2; exit 1; }
  echo 1 > "$SYSQ/rotational"
}

# set_sched SETTING: the kernel scheduler of the loop device and its tunables.
set_sched() {
  local k=${1%%-ll*}
  echo "$k" > "$SYSQ/scheduler"
  grep -q "\[$k\]" "$SYSQ/scheduler" \
    || { echo "bench: $LOOP would not take scheduler $k ($(cat "$SYSQ/scheduler"))" >&2; exit 1; }
  case $1 in
    bfq-ll1) echo 1 > "$SYSQ/iosched/low_latency" ;;
    bfq-ll0) echo 0 > "$SYSQ/iosched/low_latency" ;;
    bfq-ll0-idle0) echo 0 > "$SYSQ/iosched/low_latency"; echo 0 > "$SYSQ/iosched/slice_idle" ;;
  esac
}
declare -A SIM_OF=([none]=noop [mq-deadline]=deadline [bfq-ll1]=bfq [bfq-ll0]=bfq:low_latency=0 [bfq-ll0-idle0]=bfq:low_latency=0,slice_idle=0)
SETTINGS=(none mq-deadline bfq-ll1 bfq-ll0 bfq-ll0-idle0)

# The tunables in effect, for the record: "name=value ..." of the loop device's scheduler.
tunables() {
  local out f
  out="scheduler=$(sed -E 's/.*\[([^]]+)\].*/\1/' "$SYSQ/scheduler")"
  for f in low_latency slice_idle timeout_sync max_budget read_expire write_expire fifo_batch; do
    [ -f "$SYSQ/iosched/$f" ] && out+=" $f=$(cat "$SYSQ/iosched/$f")"
  done
  echo "$out"
}

# Where tracefs is not mounted (a container's /sys, a minimal boot), mount it for the run, so
# that BFQ's log is read rather than skipped; kp_cleanup unmounts what was mounted here.
mount_tracefs() {
  [ "$TRACE" = 1 ] && [ ! -f "$T/current_tracer" ] && grep -qw tracefs /proc/filesystems \
    || return 0
  if mount -t tracefs nodev "$T" 2>/dev/null; then
    TRACEFS_MOUNTED=1
  else
    echo "kernel-peers: tracefs is not mounted at $T and could not be; BFQ's log is skipped" >&2
  fi
}
mount_tracefs

can_trace() {
  [ "$TRACE" = 1 ] && [ -f "$T/current_tracer" ] && [ "$(cat "$T/current_tracer")" = nop ] \
    && [ -z "$(cat "$T/set_event" 2>/dev/null)" ] && grep -qw blk "$T/available_tracers" 2>/dev/null
}
trace_on() { # FILE
  echo blk > "$T/current_tracer"
  TRACING=1
  cat "$T/trace_pipe" > "$1" &
  TRACE_PID=$!
  echo 1 > "${SYSQ%/queue}/trace/enable"
}

# One line per row for kernel-peers.py: kind, workload, setting, the scheduler antsched
# simulates for it, fio's output, the mount's statistics before and after, its recording,
# BFQ's trace, and the tunables (or the job file).
row() { local IFS=$'\t'; echo "$*" >> "$D/rows.tsv"; }

START=$(date -u +%Y-%m-%dT%H:%M:%SZ)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
T0=$(now)

# --- Part 1: the kernel's schedulers on a loop device over the mount (mount: noop). --------
mkdir -p "$B"
truncate -s "$IMG_BYTES" "$B/disk.img"
start_mount kernel "$B" "$M" --disk "$DISK" --scheduler noop --show-layout \
  --record "$D/kernel.blk" --record-format blkparse
grep -Eq '^ +0 +4194304 +2147483648 +disk.img' "$D/mount-kernel.out" \
  || { cat "$D/mount-kernel.out" >&2; echo "bench: the mount did not lay disk.img out from sector 0" >&2; exit 1; }
attach_loop "$M/disk.img"
echo "kernel-peers: $LOOP over $M/disk.img (direct I/O, rotational), mount scheduler noop, $RT s a run" >&2
for w in "${WORKLOADS[@]}"; do
  write_job "$w" "$LOOP" "${P1[$w]}" "${P2[$w]}"
  for s in "${SETTINGS[@]}"; do
    set_sched "$s"
    tun=$(tunables)
    echo "kernel-peers: $w, $s ($tun)" >&2
    tr=-
    if [[ $s == bfq-* ]] && can_trace; then
      tr="$D/$w-$s.trace"
      trace_on "$tr"
    fi
    snap "$D/$w-$s.before.json"
    run_fio "$JOBS/$w.fio" "$D/$w-$s.fio.json"
    snap "$D/$w-$s.after.json"
    trace_off
    row kernel "$w" "$s" "${SIM_OF[$s]}" "$D/$w-$s.fio.json" "$D/$w-$s.before.json" "$D/$w-$s.after.json" "$D/kernel.blk" "$tr" "$tun"
  done
done
detach_loop
unmount_saving "$D/mount-kernel.stats.json"

# --- Part 2: antsched's schedulers on the mount itself (fio's processes are its contexts). --
for ms in default as-rw-sptf noop; do
  if [ "$ms" = default ]; then
    mount_default "$B" "$M" --disk "$DISK" --record "$D/mount-$ms.blk" --record-format blkparse
  else
    mount_with "$B" "$M" "$ms" --disk "$DISK" --record "$D/mount-$ms.blk" --record-format blkparse
  fi
  for w in "${WORKLOADS[@]}"; do
    sed "s#^filename=.*#filename=$M/disk.img#" "$JOBS/$w.fio" > "$JOBS/$w-mount.fio"
    echo "kernel-peers: $w, on the mount, $ms" >&2
    snap "$D/$w-mount-$ms.before.json"
    run_fio "$JOBS/$w-mount.fio" "$D/$w-mount-$ms.fio.json"
    snap "$D/$w-mount-$ms.after.json"
    row mount "$w" "$ms" "$ms" "$D/$w-mount-$ms.fio.json" "$D/$w-mount-$ms.before.json" "$D/$w-mount-$ms.after.json" "$D/mount-$ms.blk" - "mount scheduler"
  done
  unmount_saving "$D/mount-$ms.stats.json"
done

# --- Part 3: what the mount sees behind a loop device. --------------------------------------
# probe NAME MOUNT_OPTIONS LOSETUP_OPTIONS JOB_ARGS...: a fresh mount (default scheduler) and
# loop device (none), one fio job file.
probe() {
  local name=$1 mopts=$2 lopts=$3; shift 3
  # shellcheck disable=SC2086
  start_mount "$name" "$B" "$M" --disk "$DISK" $mopts --record "$D/$name.blk" --record-format blkparse
  # shellcheck disable=SC2086
  attach_loop "$M/disk.img" $lopts
  set_sched none
  write_job "$name" "$LOOP" "$@"
  echo "kernel-peers: probe $name" >&2
  snap "$D/$name.before.json"
  run_fio "$JOBS/$name.fio" "$D/$name.fio.json"
  snap "$D/$name.after.json"
  detach_loop
  unmount_saving "$D/$name.stats.json"
  row probe "$name" "mount${mopts:+ $mopts}, losetup --direct-io=on${lopts:+ $lopts}" - "$D/$name.fio.json" \
    "$D/$name.before.json" "$D/$name.after.json" "$D/$name.blk" - "$JOBS/$name.fio"
}
probe probe-seq2 "" "" read read
probe probe-aio8 "" "" randread - libaio 8
probe probe-aio8-4k "" "--sector-size 4096" randread - libaio 8
if [ -f /sys/fs/cgroup/blkio/cgroup.procs ] || grep -qw io /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
  probe probe-seq2-cgroups "" "" read read psync 1 cgroups
else
  echo "kernel-peers: no blkio cgroup controller mounted: the cgroup probe is skipped" >&2
fi
probe probe-seq2-async "--async-dio" "" read read
probe probe-aio8-async "--async-dio" "" randread - libaio 8
rm -f "$B/disk.img"

# --- The predictions: every job file above, unchanged, under antsched's models. ------------
DEFAULT_SCHED=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["runs"][0]["scheduler"])' "$D/mount-default.stats.json")
for w in "${WORKLOADS[@]}"; do
  "$ANTSCHED" sim "$JOBS/$w.fio" --disk "$DISK" --scheduler noop --scheduler deadline --scheduler bfq \
    --scheduler bfq:low_latency=0 --scheduler bfq:low_latency=0,slice_idle=0 --scheduler "$DEFAULT_SCHED" \
    --scheduler as-rw-sptf --json "$D/$w.sim.json" > /dev/null
done
# The work-conserving rows of the sequential patterns: the second job k requests further on.
for w in seq2 rw; do
  for k in $SKEWS; do
    SKEW_OFFSET=$((1024 * 1024 * 1024 + k * 65536)) write_job "$w-skew$k" /dev/loop-skew "${P1[$w]}" "${P2[$w]}"
    "$ANTSCHED" sim "$JOBS/$w-skew$k.fio" --disk "$DISK" --scheduler noop --scheduler deadline \
      --scheduler bfq:low_latency=0,slice_idle=0 --scheduler bfq --json "$D/$w-skew$k.sim.json" > /dev/null
  done
done

# The kernel rows' requests as the mount received them (one context, in the loop device's
# order, with its gaps), replayed on the disk model under the mount's noop.
while IFS=$'\t' read -r kind w s _ _ before after rec _; do
  [ "$kind" = kernel ] || continue
  python3 "$PY" cut "$rec" "$before" "$after" "$D/$w-$s.blk"
  "$ANTSCHED" sim --trace "$D/$w-$s.blk" --disk "$DISK" --scheduler noop --json "$D/$w-$s.replay.json" > /dev/null
done < "$D/rows.tsv"

WALL=$(calc "$(now) - $T0")
python3 "$PY" report "$D" --disk "$DISK" --runtime "$RT" --probe-runtime "$PRT" --skews "$SKEWS" \
  --default-scheduler "$DEFAULT_SCHED" --start "$START" --load "$LOAD0" --load-end "$(cut -d' ' -f1-3 /proc/loadavg)" \
  --wall "$WALL" --kernel "$(uname -r)" --fio "$(fio --version)"
