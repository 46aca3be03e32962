#!/usr/bin/env bash
# The thesis's database query cache (section 6.2, Fig. 6.1 and the runtime table) as a real
# program on Linux: examples/query-cache on a 200 MB SQLite database on an antsched mount of
# the 7,200 rpm paper disk (IBM Deskstar 34GXP, as-aged-sptf), each run in a 256 MB memory
# cgroup of its own (`antsched mem run --limit 256M`) governed by a private `antsched memd`.
#
# Runs: fixed caches of 0, 100, 170 and 300 MB and the adaptive cache, alone; then the
# adaptive cache and a fixed 200 MB cache with a memory hog (50 MB, see below) started
# part-way in the same group. Prints the table (runtime, hit rate, peak memory, reaction to notifications)
# and writes everything to $ANTSCHED_BENCH_DIR/query-cache/ (JSON: query-cache.json; the
# timelines as CSV; Fig. 6.1-like plots as SVG). About 11 minutes on an idle 2-core machine.
#
# Scaled to fit in 15 minutes (the thesis's runs took 30 to 47 minutes each):
#   - 25,000 queries per run instead of 430,000 (Zipf alpha 0.8 over 43 x 1,000 queries, so
#     an unbounded cache grows to about 190 MB, near the thesis's 300 MB cache's content);
#   - a run that has not finished by twice the 0 MB run's time never finishes (the
#     simulator's rule, `antsched paper`'s max_time = 2 x the 0 MB row);
#   - the hog starts 10 s into the queries (the thesis: 10 minutes into about 35), and takes
#     50 MB, not the thesis's 150: without swap a hog's memory cannot be paged out, and 150 MB
#     leaves 106 MB of the 256 to a database whose hot pages need about 190, so that every
#     configuration thrashes on database pages (docs/memory-real.md has that run too);
#   - memd observes every 100 ms (default 1 s) so that its 1 s repeat and the PSI trigger
#     drive rounds within a run of a minute. S_max stays 1 h.
#
#   sudo bench/mem/query-cache.sh [QUERIES] [HOG_MB]   (default 25000 and 50)
#
# Needs root, /dev/fuse and the cgroup v1 memory controller. No swap: the cache is anonymous
# memory and competes with the database's mapped pages inside the 256 MB limit.
#
# The anchors' policies (PSI levels, MariaDB's halving, a Senpai-style controller) beside
# adaptive are bench/mem/query-cache-anchors.sh (with all of them this one would pass 15
# minutes); both share bench/mem/query-cache-lib.sh. On success, failure and Ctrl-C the
# cleanup (bench/mem/lib.sh) stops what was started by PID (the run, memd, the mount), removes
# a group a killed run left and the temporary directory.
OUT_NAME=query-cache
QUERIES=${1:-25000}
HOG_MB=${2:-50}
HOG_AT=10
LIMIT_S=""
source "$(dirname "$0")/query-cache-lib.sh"

qc_setup
qc_run fixed-0 fixed:0
LIMIT_S=$(qc_time_limit fixed-0)
echo "time limit of the other runs: $LIMIT_S s (twice the 0 MB run's)"
qc_run fixed-100 fixed:100M --time-limit "$LIMIT_S"
qc_run fixed-170 fixed:170M --time-limit "$LIMIT_S"
qc_run fixed-300 fixed:300M --time-limit "$LIMIT_S"
qc_run adaptive adaptive --time-limit "$LIMIT_S"
qc_run hog-adaptive adaptive --time-limit "$LIMIT_S" --hog-mb "$HOG_MB" --hog-at "$HOG_AT"
qc_run hog-fixed-200 fixed:200M --time-limit "$LIMIT_S" --hog-mb "$HOG_MB" --hog-at "$HOG_AT"
qc_finish

for f in adaptive hog-adaptive hog-fixed-200; do
  [ -f "$OUT/$f.csv" ] && "$QC" plot "$OUT/$f.csv" --out "$OUT/$f.svg" || echo "(no plot of $f)"
done

qc_table query-cache.json 0 fixed-0 fixed-100 fixed-170 fixed-300 adaptive hog-adaptive hog-fixed-200
