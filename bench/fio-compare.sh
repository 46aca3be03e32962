#!/usr/bin/env bash
# IOPS of the antsched-io runtime (noop scheduler, file backend, O_DIRECT) against fio's
# io_uring engine on the same file: 4 KiB random reads at queue depth 1 and 32.
#
#   bench/fio-compare.sh [FILE] [--seconds S] [--rounds N] [--realtime]
#
# FILE defaults to antsched-out/bench.img (1 GiB of random data, made if missing: a sparse
# file would be answered without touching the device). Each round runs fio, then ours, at
# QD1 and at QD32, so both see the same background load; the medians are printed, with the
# ratio. --realtime runs both in the SCHED_FIFO class (fio under `chrt -f 2`, ours with
# --realtime), which makes the figures far less sensitive to other work on the machine.
#
# Ours runs in two configurations: "default" (the runtime's defaults: a waiter spins up to
# 200 us for its result where the device's recent latency is at most half that, else sleeps;
# after delivering results the loop polls its queue for up to 50 us where callers have lately
# answered within half that, so the next request needs no wake-up, else it sleeps in
# io_uring_enter) and "no polling" (--poll-us 0: the loop always sleeps).
set -euo pipefail
cd "$(dirname "$0")/.."

file=antsched-out/bench.img
seconds=5
rounds=3
realtime=0
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --realtime) realtime=1 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) file=$1 ;;
  esac
  shift
done
command -v fio >/dev/null || { echo "fio is not installed (apt-get install fio)" >&2; exit 1; }
if [ ! -f "$file" ]; then
  mkdir -p "$(dirname "$file")"
  echo "creating $file (1 GiB of random data)" >&2
  dd if=/dev/urandom of="$file" bs=1M count=1024 status=none
  sync
fi
cargo build --release -q -p antsched-io --example iops
ours=target/release/examples/iops

chrt_=()
ours_rt=()
if [ "$realtime" = 1 ]; then chrt_=(chrt -f 2); ours_rt=(--realtime); fi

fio_iops() { # QD
  "${chrt_[@]}" fio --name=qd$1 --filename="$file" --ioengine=io_uring --direct=1 --rw=randread \
    --bs=4k --iodepth="$1" --runtime="$seconds" --time_based --ramp_time=1 \
    --output-format=terse --terse-version=3 2>/dev/null | awk -F';' '{printf "%d %.1f\n", $8, $40}'
}
ours_iops() { # QD, extra options
  local qd=$1; shift
  "$ours" "$file" --qd "$qd" --seconds "$seconds" --scheduler "noop:depth=$qd" "${ours_rt[@]}" "$@" \
    | sed -E 's/.*iops=([0-9]+) mean_lat_us=([0-9.]+).*/\1 \2/'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

declare -A f o p fl ol pl
for qd in 1 32; do f[$qd]=""; o[$qd]=""; p[$qd]=""; fl[$qd]=""; ol[$qd]=""; pl[$qd]=""; done
for r in $(seq "$rounds"); do
  for qd in 1 32; do
    read -r fi_ fl_ < <(fio_iops "$qd"); f[$qd]+="$fi_"$'\n'; fl[$qd]+="$fl_"$'\n'
    read -r oi ol_ < <(ours_iops "$qd"); o[$qd]+="$oi"$'\n'; ol[$qd]+="$ol_"$'\n'
    read -r pi pl_ < <(ours_iops "$qd" --poll-us 0); p[$qd]+="$pi"$'\n'; pl[$qd]+="$pl_"$'\n'
    echo "round $r, qd $qd: fio $fi_ IOPS, ours $oi IOPS (default), $pi IOPS (no polling)" >&2
  done
done
echo "file: $file, 4 KiB random reads, O_DIRECT, median of $rounds rounds of ${seconds}s, realtime=$realtime, load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-4s %10s %12s %7s %14s %7s %12s %12s %12s\n" qd fio_iops default_iops ratio nopoll_iops ratio fio_lat_us default_lat_us nopoll_lat_us
for qd in 1 32; do
  fi_=$(echo -n "${f[$qd]}" | median); oi=$(echo -n "${o[$qd]}" | median); pi=$(echo -n "${p[$qd]}" | median)
  flm=$(echo -n "${fl[$qd]}" | median); olm=$(echo -n "${ol[$qd]}" | median); plm=$(echo -n "${pl[$qd]}" | median)
  printf "%-4s %10s %12s %7.2f %14s %7.2f %12s %12s %12s\n" "$qd" "$fi_" "$oi" "$(echo "$oi / $fi_" | bc -l)" \
    "$pi" "$(echo "$pi / $fi_" | bc -l)" "$flm" "$olm" "$plm"
done
