#!/usr/bin/env bash
# The query cache of bench/mem/query-cache.sh (issue 15, the thesis's section 6.2) with the
# anchors' policies driving it instead of antsched's, beside the adaptive cache, alone and with
# the memory hog: each run in its own 256 MB group (`antsched mem run`), the 200 MB database on
# an antsched mount of the 7,200 rpm paper disk, a private memd (every 100 ms).
#
#   - psi (lmkd/GLib-style levels on the group's PSI `some` avg10: 10% halves the cache, 40%
#     drops it; growth held 10 s after the last level), a 300 MB configured cache;
#   - halve (MariaDB 11.8: PSI `some` avg10 at 10% halves the cache, at most once a minute,
#     never grows back), a 300 MB configured cache;
#   - senpai (a Senpai-style controller in the program stepping its own group's v1
#     memory.limit_in_bytes: down 1% of the limit while the group's memory stall, PSI `some
#     total` over the interval, is under 0.1%, up 1% when over, never under the workload's
#     floor nor over the 256 MB it started with, which is restored at the end; the memory
#     simulator's Senpai constants), a 300 MB configured cache. Its interval is scaled from
#     the simulator's 6 s to 1 s, as these runs are some 60 times shorter than the thesis's
#     (at 6 s it would make a handful of steps in a run). Without swap a lower limit can only
#     reclaim the database's file pages, never the anonymous cache.
#
# Runs: fixed-0 (its runtime sets the time limit: twice it, the simulator's rule), adaptive,
# psi, halve, senpai; then the same four with the hog (50 MB at 10 s). Prints the table
# (runtime, peak memory of the group and of the process's anonymous memory, the group's mean
# usage) and one line per anchor, alone and with the hog, saying whether adaptive is ahead of
# it on runtime at equal or smaller peak memory (the group's peak), with the figures. Outputs
# in $ANTSCHED_BENCH_DIR/query-cache-anchors/ (JSON: query-cache-anchors.json; timelines as
# CSV; plots of the senpai and PSI runs as SVG). About 13 minutes on the shared 2-core
# machine (each anchor run that passes the limit costs the limit plus the 10 s warm-up).
#
#   sudo bench/mem/query-cache-anchors.sh [QUERIES [HOG_MB [LIMIT_S]]]
#        (default 25000, 50, and twice the fixed-0 run's runtime; a LIMIT_S given skips
#        fixed-0)
#
# Shares bench/mem/query-cache-lib.sh with query-cache.sh; on success, failure and Ctrl-C the
# cleanup (bench/mem/lib.sh) stops what was started by PID (the run, memd, the mount),
# removes a group a killed run left, and the temporary directory.
OUT_NAME=query-cache-anchors
QUERIES=${1:-25000}
HOG_MB=${2:-50}
LIMIT_S=${3:-}
HOG_AT=10
SENPAI_INTERVAL=1
case "$QUERIES$HOG_MB" in *[!0-9]*) echo "query-cache-anchors: QUERIES and HOG_MB are whole numbers" >&2; exit 2 ;; esac
if [ -n "$LIMIT_S" ] && ! [[ "$LIMIT_S" =~ ^[0-9]+(\.[0-9]+)?$ && "$LIMIT_S" != 0 ]]; then
  echo "query-cache-anchors: LIMIT_S $LIMIT_S: a number of seconds above 0" >&2
  exit 2
fi
source "$(dirname "$0")/query-cache-lib.sh"

qc_setup
NAMES=()
if [ -z "$LIMIT_S" ]; then
  qc_run fixed-0 fixed:0
  LIMIT_S=$(qc_time_limit fixed-0)
  NAMES+=(fixed-0)
  echo "time limit of the other runs: $LIMIT_S s (twice the 0 MB run's)"
fi
for hog in 0 1; do
  pre="" hog_args=()
  if [ "$hog" = 1 ]; then pre="hog-" hog_args=(--hog-mb "$HOG_MB" --hog-at "$HOG_AT"); fi
  qc_run "${pre}adaptive" adaptive --time-limit "$LIMIT_S" "${hog_args[@]}"
  qc_run "${pre}psi" psi --time-limit "$LIMIT_S" "${hog_args[@]}"
  qc_run "${pre}halve" halve --time-limit "$LIMIT_S" "${hog_args[@]}"
  qc_run "${pre}senpai" senpai --senpai-interval "$SENPAI_INTERVAL" --time-limit "$LIMIT_S" "${hog_args[@]}"
  NAMES+=("${pre}adaptive" "${pre}psi" "${pre}halve" "${pre}senpai")
done
qc_finish

for f in psi senpai hog-psi hog-senpai; do
  [ -f "$OUT/$f.csv" ] && "$QC" plot "$OUT/$f.csv" --out "$OUT/$f.svg" || echo "(no plot of $f)"
done

qc_table query-cache-anchors.json 1 "${NAMES[@]}"
