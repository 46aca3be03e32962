# Shared by bench/mem/*.sh: root, packages, the build, memd, `mem run`, and a cleanup that runs
# on success, on failure and on Ctrl-C (SIGINT, SIGTERM, SIGHUP), stopping only what the script
# started (by PID) and removing only the groups, swap files and directories it made.
# Source it from a script in bench/mem/.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

need_root() {
  [ "$(id -u)" -eq 0 ] || { echo "bench: run as root (memory groups, packages)" >&2; exit 2; }
  [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ] ||
    { echo "bench: no cgroup v1 memory controller at /sys/fs/cgroup/memory" >&2; exit 2; }
}

APT_UPDATED=""
apt_get_install() {
  if [ -z "$APT_UPDATED" ]; then
    echo "bench: apt-get update" >&2
    apt-get update -qq >&2
    APT_UPDATED=1
  fi
  echo "bench: apt-get install $*" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

# apt_install COMMAND:PACKAGE...: installs PACKAGE where COMMAND is missing.
apt_install() {
  for cp in "$@"; do
    command -v "${cp%%:*}" >/dev/null 2>&1 || apt_get_install "${cp#*:}"
  done
}

# lib_path NAME: the path of a shared library the dynamic linker knows, or nothing.
lib_path() { ldconfig -p | awk -v n="$1" '$1 == n && /x86-64|x86_64|64bit/ { print $NF; exit }'; }

# apt_install_lib SONAME PACKAGE: installs PACKAGE where no SONAME is known.
apt_install_lib() {
  [ -n "$(lib_path "$1")" ] || apt_get_install "$2"
  [ -n "$(lib_path "$1")" ] || { echo "bench: $2 did not provide $1" >&2; exit 2; }
}

# The antsched binary and the preload library, built from this tree (only these two).
build_antsched() {
  if [ -z "${ANTSCHED:-}" ]; then
    echo "bench: cargo build --release -p antsched -p antsched-memd-preload" >&2
    (cd "$ROOT" && cargo build --release -q -p antsched -p antsched-memd-preload)
    ANTSCHED="$ROOT/target/release/antsched"
  fi
  export ANTSCHED
}

# bench/lib.sh: WORK ($ANTSCHED_BENCH_DIR), calc, now. Its build is skipped when ANTSCHED is
# set, and its EXIT trap is replaced by ours below (ours calls its cleanup too).
ANTSCHED="${ANTSCHED:-}"
if [ -z "$ANTSCHED" ]; then build_antsched; fi
# shellcheck source=../lib.sh
source "$ROOT/bench/lib.sh"

CLEANUPS=()
# add_cleanup COMMAND: run at exit, in the reverse order of adding.
add_cleanup() { CLEANUPS+=("$1"); }

MEMD_PID=""
MEMD_SOCK=""
MEMRUN_PID=""

# Removes the group `mem run` (PID $1) made, if it is still there: its processes (all started by
# this script, inside that group) are killed by PID first.
remove_run_group() {
  local g="/sys/fs/cgroup/memory/antsched/run-$1" u="/sys/fs/cgroup/unified/antsched/run-$1"
  [ -d "$g" ] || [ -d "$u" ] || return 0
  for d in "$g" "$u"; do
    [ -f "$d/cgroup.procs" ] || continue
    while read -r p; do kill -KILL "$p" 2>/dev/null || true; done < "$d/cgroup.procs"
  done
  for _ in $(seq 50); do
    rmdir "$g" "$u" 2>/dev/null || true
    [ -d "$g" ] || [ -d "$u" ] || break
    sleep 0.1
  done
  [ -d "$g" ] && echo "bench: could not remove $g" >&2
  [ -d "$u" ] && echo "bench: could not remove $u" >&2
  return 0
}

mem_cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  if [ -n "$MEMRUN_PID" ]; then
    # mem run passes SIGTERM to its command and removes the group once it exits.
    kill -TERM "$MEMRUN_PID" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$MEMRUN_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$MEMRUN_PID" 2>/dev/null || true
    wait "$MEMRUN_PID" 2>/dev/null || true
    remove_run_group "$MEMRUN_PID"
  fi
  for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do eval "${CLEANUPS[$i]}" || true; done
  if [ -n "$MEMD_PID" ]; then
    kill -TERM "$MEMD_PID" 2>/dev/null || true
    wait "$MEMD_PID" 2>/dev/null || true
  fi
  cleanup   # bench/lib.sh's (a mount, if one was made)
  exit "$rc"
}
trap mem_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# start_memd SOCKET [memd options...]: runs antsched memd there (log in $WORK/memd.err).
start_memd() {
  MEMD_SOCK=$1; shift
  "$ANTSCHED" memd --socket "$MEMD_SOCK" "$@" > "$WORK/memd.out" 2> "$WORK/memd.err" &
  MEMD_PID=$!
  for _ in $(seq 100); do
    [ -S "$MEMD_SOCK" ] && return 0
    kill -0 "$MEMD_PID" 2>/dev/null || break
    sleep 0.05
  done
  cat "$WORK/memd.err" >&2
  echo "bench: antsched memd did not come up at $MEMD_SOCK" >&2
  exit 1
}

# mem_run LOG [mem run options...] -- CMD...: antsched mem run in the background (so that a
# Ctrl-C reaches our trap at once), its stderr in LOG; returns CMD's status.
mem_run() {
  local log=$1; shift
  "$ANTSCHED" mem run "$@" 2> "$log" &
  MEMRUN_PID=$!
  local rc=0
  wait "$MEMRUN_PID" || rc=$?
  MEMRUN_PID=""
  return "$rc"
}
