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
source "$(dirname "$0")/../lib.sh"
QUERIES=${1:-25000}
DISK=deskstar-34gxp
SCHED=as-aged-sptf
LIMIT=256M
HOG_MB=${2:-50}
HOG_AT=10
SEED=1
# C_disk of the cost rule: the Deskstar's random read (9.0 ms average seek + 4.2 ms half
# rotation). memd measures /proc/diskstats, which has no line for an antsched mount.
PAGING_DISK_MS=13

for t in python3 mountpoint; do
  command -v "$t" >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq python3 util-linux fuse3 >/dev/null; break; }
done
need python3 mountpoint
[ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ] || { echo "bench: no cgroup v1 memory controller at /sys/fs/cgroup/memory" >&2; exit 2; }
(cd "$ROOT" && cargo build --release -q -p antsched-query-cache)
QC="$ROOT/target/release/query-cache"

OUT="$WORK/query-cache"
mkdir -p "$OUT"
rm -f "$OUT"/*.json "$OUT"/*.csv "$OUT"/*.svg "$OUT"/*.log
TMP=$(mktemp -d /tmp/antsched-qcache.XXXXXX)
B="$TMP/backing"
M="$TMP/mnt"
SOCK="$TMP/memd.sock"
MEMD_PID=""
RUN_PID=""

# Everything this script started, by PID, and what they made; on success, failure and Ctrl-C.
finish() {
  local status=$?
  trap - EXIT INT TERM
  if [ -n "$RUN_PID" ]; then
    kill -TERM "$RUN_PID" 2>/dev/null || true
    wait "$RUN_PID" 2>/dev/null || true
    # mem run removes its group; if it could not, remove it (its name is run-<its PID>).
    for g in /sys/fs/cgroup/memory/antsched/run-"$RUN_PID" /sys/fs/cgroup/unified/antsched/run-"$RUN_PID"; do
      [ -d "$g" ] && rmdir "$g" 2>/dev/null || true
    done
  fi
  if [ -n "$MEMD_PID" ]; then
    kill -TERM "$MEMD_PID" 2>/dev/null || true
    wait "$MEMD_PID" 2>/dev/null || true
  fi
  cleanup   # lib.sh: the mount's PID
  if mountpoint -q "$M" 2>/dev/null; then umount -l "$M" || true; fi
  rm -rf "$TMP"
  exit "$status"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "query-cache: outputs in $OUT"
mkdir -p "$B"
# Made in the backing directory, so the mount shows it as one file laid out in order (and
# populating 200 MB through the emulated disk would take minutes of the 15).
"$QC" populate --db "$B/atis.db" --size-mb 200 --seed "$SEED" | tee "$OUT/populate.log"
mount_with "$B" "$M" "$SCHED" --disk "$DISK"
"$ANTSCHED" memd --socket "$SOCK" --interval 100ms 2>"$OUT/memd.log" &
MEMD_PID=$!
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || { cat "$OUT/memd.log" >&2; echo "bench: memd did not come up" >&2; exit 1; }

# run NAME CACHE [query-cache run options...]: one configuration in its own 256 MB group.
run() {
  local name=$1 cache=$2; shift 2
  echo "--- $name (--cache $cache $*)"
  "$ANTSCHED" mem run --limit "$LIMIT" --socket "$SOCK" -- \
    "$QC" run --db "$M/atis.db" --queries "$QUERIES" --cache "$cache" --seed "$SEED" \
    --socket "$SOCK" --paging-disk-ms "$PAGING_DISK_MS" \
    --json "$OUT/$name.json" --timeline "$OUT/$name.csv" "$@" >"$OUT/$name.log" 2>&1 &
  RUN_PID=$!
  local status=0
  wait "$RUN_PID" || status=$?
  RUN_PID=""
  grep -v '^antsched mem run' "$OUT/$name.log" || true
  # 137: SIGKILL, the memory cgroup's OOM killer (no swap).
  echo "$status" > "$OUT/$name.status"
}

run fixed-0 fixed:0
LIMIT_S=$(python3 -c 'import json,sys; print(round(2 * json.load(open(sys.argv[1]))["runtime_s"], 1))' "$OUT/fixed-0.json")
echo "time limit of the other runs: $LIMIT_S s (twice the 0 MB run's)"
run fixed-100 fixed:100M --time-limit "$LIMIT_S"
run fixed-170 fixed:170M --time-limit "$LIMIT_S"
run fixed-300 fixed:300M --time-limit "$LIMIT_S"
run adaptive adaptive --time-limit "$LIMIT_S"
run hog-adaptive adaptive --time-limit "$LIMIT_S" --hog-mb "$HOG_MB" --hog-at "$HOG_AT"
run hog-fixed-200 fixed:200M --time-limit "$LIMIT_S" --hog-mb "$HOG_MB" --hog-at "$HOG_AT"
unmount_saving "$OUT/mount-stats.json"

for f in adaptive hog-adaptive hog-fixed-200; do
  [ -f "$OUT/$f.csv" ] && "$QC" plot "$OUT/$f.csv" --out "$OUT/$f.svg" || echo "(no plot of $f)"
done

python3 - "$OUT" "$QUERIES" "$LIMIT_S" "$HOG_MB" "$HOG_AT" <<'PY'
import json, os, sys
out, queries, limit_s = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
hog_mb, hog_at = int(sys.argv[4]), float(sys.argv[5])
names = ["fixed-0", "fixed-100", "fixed-170", "fixed-300", "adaptive", "hog-adaptive", "hog-fixed-200"]
runs = []
for n in names:
    status = int(open(os.path.join(out, n + ".status")).read())
    p = os.path.join(out, n + ".json")
    r = json.load(open(p)) if os.path.exists(p) else {}
    r["name"] = n
    r["exit_status"] = status
    r["outcome"] = ("finished" if r.get("completed") else "time limit") if r else (
        "killed by the OOM killer" if status == 137 else f"failed (exit {status})")
    runs.append(r)
def f(x, fmt):
    return "-" if x is None else fmt.format(x)
print()
print(f"query-cache: {queries} queries, 200 MB database on antsched mount (deskstar-34gxp, as-aged-sptf), 256 MB group, hog {hog_mb} MB at {hog_at:g} s")
print(f"{'run':<15} {'runtime_s':>10} {'queries':>8} {'hit_rate':>9} {'peak_anon':>10} {'group_peak':>11} {'cache_peak':>11} {'reaction ms mean/max':>21}  outcome")
for r in runs:
    rt = r.get("runtime_s")
    react = r.get("reaction", {})
    rx = "-" if not react.get("count") else f"{react['mean_ms']:.1f} / {react['max_ms']:.1f}"
    print(f"{r['name']:<15} {f(rt, '{:.1f}'):>10} {f(r.get('completed_queries'), '{}'):>8} "
          f"{f(r.get('hit_rate') and r['hit_rate'] * 100, '{:.1f}%'):>9} {f(r.get('peak_anon_mb'), '{:.0f} MB'):>10} "
          f"{f(r.get('group_peak_mb'), '{:.0f} MB'):>11} {f(r.get('peak_cache_mb'), '{:.0f} MB'):>11} {rx:>21}  {r['outcome']}")
doc = {
    "experiment": "query-cache",
    "queries": queries,
    "time_limit_s": limit_s,
    "disk": "deskstar-34gxp", "scheduler": "as-aged-sptf", "limit_mb": 256, "hog_mb": hog_mb, "hog_at_s": hog_at,
    "thesis": {"runtime_min": {"fixed-0": 46.7, "fixed-100": 34.7, "fixed-170": 34.1, "fixed-300": 28.8, "adaptive": 30.6,
                                "hog-adaptive": 40.9, "hog-fixed-200": None},
               "reaction_ms": {"mean": 8, "max": 88}},
    "runs": runs,
}
json.dump(doc, open(os.path.join(out, "query-cache.json"), "w"), indent=2)
print(f"\nJSON: {os.path.join(out, 'query-cache.json')}")
PY
