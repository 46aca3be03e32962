#!/usr/bin/env bash
# Real fio on an antsched mount: two processes read two 256 MiB files sequentially, 64 KiB
# at a time, with O_DIRECT and pread (bench/fio-two-readers.fio: psync, direct=1, bs=64k,
# runtime 20 s), on the emulated IBM Deskstar 34GXP, under aged-sptf and as-aged-sptf; and
# what `antsched sim` predicts for the same job file. Prints fio's aggregate bandwidth of
# each run and the median, the mount's own figure, the prediction, and the ratio. About
# three minutes.
#
#   sudo bench/fio.sh            (ANTSCHED_BENCH_DIR=/tmp/antsched-bench by default)
source "$(dirname "$0")/lib.sh"
need fio python3
JOB="$ROOT/bench/fio-two-readers.fio"
DISK=deskstar-34gxp
B="$WORK/fio/backing"
M="$WORK/fio/mnt"
mkdir -p "$B"
# The files are made in the backing directory before mounting, so the mount lays them out
# at its start, one after the other, where the simulator puts them too.
for f in reader1.dat reader2.dat; do
  if [ "$(stat -c %s "$B/$f" 2>/dev/null || echo 0)" != 268435456 ]; then
    head -c 268435456 /dev/urandom > "$B/$f"
  fi
done

# Under a work-conserving scheduler the two readers alternate, and how much of a rotation
# each switch loses depends on the rotational phase between the two files' streams, which is
# set by when the second reader's first request comes (the emulated disk is punctual enough
# to keep that phase for the whole run; the simulator starts both readers at the same
# instant). So each scheduler runs RUNS times (default 3), and the median is compared.
RUNS=${RUNS:-3}
median() { tr ' ' '\n' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

declare -A FIO OWN SIM ALL
for s in aged-sptf as-aged-sptf; do
  runs=""
  own=""
  for r in $(seq "$RUNS"); do
    # Dropped caches, then the backing files read into the host's cache, so that only the
    # emulated disk is timed: a cold backing read on this machine's disk can take longer
    # than the other reader's emulated request, and the late reply breaks the alternation.
    drop_caches
    cat "$B"/reader*.dat > /dev/null
    mount_with "$B" "$M" "$s" --disk "$DISK"
    (cd "$M" && fio --output-format=terse --terse-version=3 "$JOB") > "$WORK/fio-$s-$r.terse"
    unmount_saving "$WORK/fio-$s-$r.stats.json"
    # terse v3: field 6 read KiB, field 9 read runtime ms; aggregate = all bytes / longest job.
    runs="$runs $(awk -F';' '{kb+=$6; if ($9>ms) ms=$9} END {printf "%.2f", kb*1024/1e6/(ms/1000)}' "$WORK/fio-$s-$r.terse")"
    own="$own $(printf '%.2f' "$(run_mb_s "$WORK/fio-$s-$r.stats.json")")"
  done
  ALL[$s]=$runs
  FIO[$s]=$(echo $runs | median)
  OWN[$s]=$(echo $own | median)
  "$ANTSCHED" sim "$JOB" --disk "$DISK" --scheduler "$s" --json "$WORK/fio-$s.sim.json" >/dev/null
  SIM[$s]=$(printf '%.2f' "$(run_mb_s "$WORK/fio-$s.sim.json")")
done

echo
echo "fio on antsched mount, $DISK: two psync direct=1 bs=64k sequential readers of 256 MiB files (20 s)"
printf '%-14s %22s %12s %12s %12s %10s\n' scheduler "fio MB/s, each run" "fio median" "mount MB/s" "sim MB/s" "fio/sim"
for s in aged-sptf as-aged-sptf; do
  printf '%-14s %22s %12s %12s %12s %9s%%\n' "$s" "${ALL[$s]# }" "${FIO[$s]}" "${OWN[$s]}" "${SIM[$s]}" \
    "$(calc "${FIO[$s]} / ${SIM[$s]} * 100")"
done
# The simulator starts both readers at the same instant; fio starts one a little before the
# other, so that one is a request or more ahead for the whole run, which shifts the rotational
# phase of every switch between the files. The baseline's prediction for such a skew: the
# second file placed k requests further on (the same phase as reader1 being k requests ahead).
skews=""
for k in 0 1 2 3 4 5; do
  sed "s/^\[reader2\]/[reader2]\nantsched_disk_offset=$((268435456 + k * 65536))/" "$JOB" > "$WORK/fio-skew-$k.fio"
  "$ANTSCHED" sim "$WORK/fio-skew-$k.fio" --disk "$DISK" --scheduler aged-sptf --json "$WORK/fio-skew-$k.json" >/dev/null
  skews="$skews $(printf '%.2f' "$(run_mb_s "$WORK/fio-skew-$k.json")")"
done
echo "aged-sptf simulated with one reader 0, 1, ..., 5 requests ahead:$skews MB/s"
echo "as-aged-sptf / aged-sptf (medians): fio $(calc "${FIO[as-aged-sptf]} / ${FIO[aged-sptf]}")x, sim $(calc "${SIM[as-aged-sptf]} / ${SIM[aged-sptf]}")x"
echo "(fio's terse output and the mount's stats.json of every run are in $WORK)"
