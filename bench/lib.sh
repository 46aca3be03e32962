# shellcheck shell=bash
# Shared by the bench/ scripts: build antsched, mount and unmount it, time things.
# Source it; it sets ANTSCHED, WORK and helpers. Needs root, /dev/fuse and the tools each
# script names (apt-get install fuse3 fio sqlite3).

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${ANTSCHED_BENCH_DIR:-/tmp/antsched-bench}"
mkdir -p "$WORK"

# install_missing PACKAGE...: installs what a script found missing from the distribution, after
# one apt-get update (waiting up to 10 minutes for another apt); nothing if it names none.
# Packages that bring a service (apache2, postgresql) start it on install where the init system
# lets them, and leave it running (apache2 on port 80, a postgres cluster on 5432); the
# benchmarks run their own instances. So nothing is started: while apt runs, a policy-rc.d that
# refuses (exit 101, Debian's convention, which invoke-rc.d and deb-systemd-invoke follow),
# only where the machine has none of its own, removed when apt ends, fails or is interrupted.
install_missing() {
  [ $# -gt 0 ] || return 0
  echo "bench/$(basename "$0"): installing $*" >&2
  apt-get -o DPkg::Lock::Timeout=600 update -q
  if [ -e /usr/sbin/policy-rc.d ]; then
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q "$@"
    return
  fi
  (
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    printf '#!/bin/sh\n# bench/lib.sh: no service starts while a benchmark installs packages\nexit 101\n' \
      > /usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q "$@"
  )
}

need() {
  for t in "$@"; do
    command -v "$t" >/dev/null 2>&1 || { echo "bench: $t is not installed (apt-get install fuse3 fio sqlite3)" >&2; exit 2; }
  done
  [ "$(id -u)" -eq 0 ] || { echo "bench: run as root (mounting, dropping caches)" >&2; exit 2; }
  [ -c /dev/fuse ] || { echo "bench: no /dev/fuse here" >&2; exit 2; }
}

if [ -z "${ANTSCHED:-}" ]; then
  (cd "$ROOT" && cargo build --release -q -p antsched)
  ANTSCHED="$ROOT/target/release/antsched"
fi

MOUNT_PID=""
MOUNT_DIR=""

# Where the mounts' output goes; a script run beside others that share $WORK may set its own.
MOUNT_LOGS=${MOUNT_LOGS:-$WORK}

# start_mount TAG BACKING MOUNTPOINT [antsched mount options...]: mounts in the background
# (its output in $MOUNT_LOGS/mount-TAG.{out,err}) and waits until the mount is up.
start_mount() {
  local tag=$1 backing=$2 mnt=$3; shift 3
  mkdir -p "$mnt" "$MOUNT_LOGS"
  "$ANTSCHED" mount "$backing" "$mnt" "$@" \
    >"$MOUNT_LOGS/mount-$tag.out" 2>"$MOUNT_LOGS/mount-$tag.err" &
  MOUNT_PID=$!
  MOUNT_DIR=$mnt
  for _ in $(seq 400); do
    if mountpoint -q "$mnt"; then return 0; fi
    if ! kill -0 "$MOUNT_PID" 2>/dev/null; then break; fi
    sleep 0.05
  done
  cat "$MOUNT_LOGS/mount-$tag.err" >&2
  echo "bench: the mount did not come up" >&2
  exit 1
}

# mount_with BACKING MOUNTPOINT SCHEDULER [antsched mount options...]
mount_with() {
  local backing=$1 mnt=$2 sched=$3; shift 3
  start_mount "$sched" "$backing" "$mnt" --scheduler "$sched" "$@"
}

# mount_default BACKING MOUNTPOINT [antsched mount options...]: as mount_with, but without
# --scheduler, so the mount runs the scheduler it uses when none is named (its stats.json
# says which). Its output goes to $MOUNT_LOGS/mount-default.{out,err}.
mount_default() {
  local backing=$1 mnt=$2; shift 2
  start_mount default "$backing" "$mnt" "$@"
}

# Copies the live statistics to FILE, then unmounts (SIGTERM) and waits.
unmount_saving() {
  cp "$MOUNT_DIR/.antsched/stats.json" "$1"
  kill -TERM "$MOUNT_PID"
  wait "$MOUNT_PID"
  MOUNT_PID=""
  if mountpoint -q "$MOUNT_DIR"; then
    echo "bench: $MOUNT_DIR is still mounted after antsched exited; see $MOUNT_LOGS/mount-*.err" >&2
    umount -l "$MOUNT_DIR"
    exit 1
  fi
}

cleanup() {
  if [ -n "$MOUNT_PID" ]; then
    kill -TERM "$MOUNT_PID" 2>/dev/null || true
    wait "$MOUNT_PID" 2>/dev/null || true
  fi
}
trap cleanup EXIT

drop_caches() {
  sync
  echo 3 > /proc/sys/vm/drop_caches
}

now() { date +%s.%N; }

# run_mb_s FILE: the first run's throughput in antsched's JSON ({"runs": [...]}), which
# `antsched sim --json` writes and a mount's stats.json holds.
run_mb_s() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["runs"][0]["throughput_mb_s"])' "$1"
}

# calc EXPR: arithmetic with two decimals (awk, so no bc needed).
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }
