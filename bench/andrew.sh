#!/usr/bin/env bash
# The Andrew benchmark (thesis section 9.3; SOSP 2001 section 4.3) on an antsched mount: k
# clients (default 2), each a separate process per phase with its own repository on the
# emulated disk, run the five phases one after another:
#   mkdir  make work/ and DIRS directories in it (one `mkdir`)
#   cp     copy the 71 source files from src/ into work/ (one `cp -R`; it reads from the mount
#          and writes into the mount)
#   stat   stat every file and directory of work/ (`find -exec stat`)
#   scan   `grep -r` over work/, then `wc` over every file of it (read(2), page cache)
#   gcc    compile every C file of work/ (`gcc -O1 -c`, one gcc per file, objects written
#          into work/) and link the program work/andrew
#
# - The sources: real C that gcc compiles, written by bench/andrew-gen.py from SEED: per
#   client a header and 70 C files (the paper's 71 C source files), spread over DIRS
#   directories (default 5), log-normal sizes (target median 4 KiB, clipped to 600 B..48 KiB:
#   about 6 KB a file and 440 KB a client, as the original Andrew tree's 70 files and 200 KB).
#   Each client's tree has its own bytes. The program each client builds must equal a
#   reference build made outside the mount, and the stat, grep and wc outputs the reference's.
# - The backing directory holds c1/ (client 1: src/, then work/), c1-gap/gap (a sparse file),
#   c2/, ...; the mount lays them out in that order, each directory's files side by side, so
#   the gap's size is added to the distance between client 1's trees and client 2's on the
#   emulated disk (0 for the main table; swept afterwards for the scan phase).
# - Every phase runs on a fresh mount of the Deskstar 34GXP (the paper's disk) after the
#   host's caches are dropped and the backing files, the compiler and the tools read back into
#   them, so the phase starts cold on the emulated disk and only the emulated disk is timed.
#   A fresh mount lays out the files written by the previous phase in tree order, as FFS
#   keeps a directory's files in its cylinder group; within a phase, new files (cp's copies,
#   gcc's objects) get the mount's next free extents.
# - Schedulers: aged-sptf, as-aged-sptf and the mount's default (no --scheduler); the mount
#   schedules per process (its default --context tgid). REPS runs each (default 3); the
#   medians of each phase and of the runs' totals are compared. One client alone is run
#   under aged-sptf and as-aged-sptf as well (the paper: no difference).
# - The simulator runs bench/andrew.fio (the scan phase as a job file) at the same distances,
#   and replays the requests the mount recorded in the cp and scan phases of the first
#   aged-sptf run (two clients, and one) under both schedulers.
# - The distance between the clients' trees is swept for the scan phase (one run a point),
#   with the scan also run over each tree's files in name order, their order on the disk
#   (grep -r reads them in the order the backing file system lists them).
# - After the main runs every file of every tree is read through a fresh mount and its SHA-256 compared
#   with the backing file's.
# Prints the tables and writes the figures to $ANTSCHED_BENCH_DIR/andrew/andrew.json.
# About 9 minutes on a shared 2-core machine.
#
# What the mount does not model shows in the figures: directories and stat are not on the
# emulated disk (mkdir and stat make no disk requests), and writes are write-through (cp's
# and gcc's writes each wait for the disk); the README's section on this script says how
# that moves each phase's gain from the paper's.
#
#   sudo bench/andrew.sh [REPS] [SEED]   (REPS 1 to 20, default 3; SEED a whole number, default 1)
#   ANDREW_CLIENTS=2 (clients of the main table, 2 to 8)  ANDREW_DIRS=5 (directories a tree)
#   ANDREW_ONE=1 (also run one client alone; 0 skips it)
#   ANDREW_DISTANCES="1024 4096 16384 30720" (MiB added between the trees; "" skips the sweep)
#   ANDREW_REPORT_ONLY=1 (reprint the last run's tables from $ANTSCHED_BENCH_DIR/andrew; the
#                         simulations run again, nothing is measured)
set -euo pipefail

REPS=${1:-3}
SEED=${2:-1}
CLIENTS=${ANDREW_CLIENTS:-2}
DIRS=${ANDREW_DIRS:-5}
ONE=${ANDREW_ONE:-1}
DISTANCES=${ANDREW_DISTANCES-1024 4096 16384 30720}
die() { echo "bench/andrew.sh: $*" >&2; exit 2; }
if ! { [[ $REPS =~ ^[0-9]+$ ]] && [ "$REPS" -ge 1 ] && [ "$REPS" -le 20 ]; }; then die "REPS must be a whole number from 1 to 20, not '$REPS'"; fi
[[ $SEED =~ ^[0-9]{1,18}$ ]] || die "SEED must be a whole number (up to 18 digits), not '$SEED'"
if ! { [[ $CLIENTS =~ ^[0-9]+$ ]] && [ "$CLIENTS" -ge 2 ] && [ "$CLIENTS" -le 8 ]; }; then die "ANDREW_CLIENTS must be 2 to 8, not '$CLIENTS'"; fi
if ! { [[ $DIRS =~ ^[0-9]+$ ]] && [ "$DIRS" -ge 1 ] && [ "$DIRS" -le 70 ]; }; then die "ANDREW_DIRS must be 1 to 70, not '$DIRS'"; fi
[[ $ONE =~ ^[01]$ ]] || die "ANDREW_ONE must be 0 or 1, not '$ONE'"
for d in $DISTANCES; do
  if ! { [[ $d =~ ^[0-9]+$ ]] && [ "$d" -le 32000 ]; }; then die "ANDREW_DISTANCES holds MiB from 0 to 32000 (the disk is 34.2 GB), not '$d'"; fi
done
[ "$(id -u)" -eq 0 ] || die "run as root (installing, mounting, dropping caches)"

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

# What the benchmark needs from the distribution, installed if missing.
missing=()
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
command -v ld >/dev/null 2>&1 || missing+=(binutils)
[ -e /usr/include/stdio.h ] || missing+=(libc6-dev)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
command -v fusermount3 >/dev/null 2>&1 || missing+=(fuse3)
command -v mountpoint >/dev/null 2>&1 || missing+=(util-linux)
command -v find >/dev/null 2>&1 || missing+=(findutils)
command -v grep >/dev/null 2>&1 || missing+=(grep)
install_missing "${missing[@]}"

need gcc ld python3 find grep wc stat cp sha256sum truncate cmp sort xargs
DISK=deskstar-34gxp
D="$WORK/andrew"
B="$D/backing"
M="$D/mnt"
OUT="$D/out"
REF="$D/ref"
JOB="$ROOT/bench/andrew.fio"
CFLAGS=(-O1 -pipe)
PHASES=(mkdir cp stat scan gcc)
mkdir -p "$D"

# Cleanup on success, failure and Ctrl-C: the clients still running, then the mount (lib.sh's
# cleanup), then the mount point and the scratch outputs. The generated sources stay in $B.
CLIENT_PIDS=()
andrew_cleanup() {
  local p
  for p in "${CLIENT_PIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true; done
  for p in "${CLIENT_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  CLIENT_PIDS=()
  cleanup
  if [ -d "$M" ] && ! mountpoint -q "$M"; then rmdir "$M" 2>/dev/null || true; fi
  rm -rf "$OUT" "$D/warm"
}
trap andrew_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ANDREW_REPORT_ONLY=1 reprints the tables of the last run in $D from its saved figures (the
# simulations, which are deterministic and take seconds, run again); otherwise measure.
if [ "${ANDREW_REPORT_ONLY:-0}" = 1 ]; then
for f in "$D/run.txt" "$D/results.tsv" "$D/sizes" "$D/traces/many-scan.blk"; do
  [ -s "$f" ] || die "ANDREW_REPORT_ONLY=1 needs a finished run in $D, and $f is missing"
done
{ read -r REPS; read -r SEED; read -r CLIENTS; read -r DISTANCES; read -r REF_LINE; read -r VERIFY; read -r WALL; } < "$D/run.txt"
read -r -a REF_S <<< "$REF_LINE"
RESULTS="$D/results.tsv"
else

# --- The sources: generated once per seed, clients and directories. -------------------------
NGEN=$((CLIENTS > 1 ? CLIENTS : 1))
KEY="seed=$SEED clients=$NGEN dirs=$DIRS gen=$(sha256sum "$ROOT/bench/andrew-gen.py" | cut -c1-16)"
if [ "$(cat "$D/made" 2>/dev/null)" != "$KEY" ]; then
  echo "bench/andrew.sh: generating $NGEN x 71 source files (seed $SEED)..." >&2
  rm -rf "$B" "$REF" "$D/made"
  mkdir -p "$B"
  python3 "$ROOT/bench/andrew-gen.py" "$SEED" "$NGEN" "$DIRS" "$B"
  mv "$B/sizes" "$D/sizes"
  mkdir -p "$B/c1-gap"
  echo "$KEY" > "$D/made"
fi
: > "$B/c1-gap/gap"
rm -f "$D/run.txt"

# The commands of each phase, run by client I in its tree ($PWD is cI). Outputs that the
# reference must equal go to $2.
phase_cmd() {
  local phase=$1 out=$2 d
  case $phase in
    mkdir)
      local dirs=(work)
      for d in $(seq 0 $((DIRS - 1))); do dirs+=("work/d$d"); done
      mkdir "${dirs[@]}" ;;
    cp) cp -R src/. work/ ;;
    stat) find work -exec stat -c '%n %s %F' {} + | LC_ALL=C sort > "$out.stat" ;;
    scan)
      grep -r -c include work | LC_ALL=C sort > "$out.grep"
      find work -type f -print0 | LC_ALL=C sort -z | xargs -0 wc > "$out.wc" ;;
    scanord)
      # The scan with each tree's files in name order, which is their order on the emulated
      # disk, instead of the order the directories list them (ext4's hash order).
      find work -type f -print0 | LC_ALL=C sort -z | xargs -0 grep -c include | LC_ALL=C sort > "$out.grep"
      find work -type f -print0 | LC_ALL=C sort -z | xargs -0 wc > "$out.wc" ;;
    gcc)
      (cd work && for f in d*/*.c; do gcc "${CFLAGS[@]}" -c "$f" -o "${f%.c}.o"; done &&
        gcc -o andrew d*/*.o) ;;
  esac
}

# A phase of every client, in their trees under ROOTDIR; each client its own process group.
run_clients() {
  local phase=$1 n=$2 rootdir=$3 outdir=$4 i p ok=0
  CLIENT_PIDS=()
  for i in $(seq "$n"); do
    set -m
    (cd "$rootdir/c$i" && phase_cmd "$phase" "$outdir/c$i") &
    set +m
    CLIENT_PIDS+=($!)
  done
  for p in "${CLIENT_PIDS[@]}"; do wait "$p" || ok=1; done
  CLIENT_PIDS=()
  return $ok
}

# --- The reference: every phase run outside the mount, from a warm cache. ------------------
# Its outputs are what every timed run must produce; its times are the phases' own (CPU and
# the host's file system) without the emulated disk.
rm -rf "$REF"
mkdir -p "$REF/out"
for i in $(seq "$NGEN"); do mkdir -p "$REF/c$i" && cp -R "$B/c$i/src" "$REF/c$i/"; done
REF_S=()
for phase in "${PHASES[@]}"; do
  t0=$(now)
  run_clients "$phase" "$CLIENTS" "$REF" "$REF/out" || die "the reference $phase phase failed"
  t1=$(now)
  REF_S+=("$(calc "$t1 - $t0")")
done
for i in $(seq "$CLIENTS"); do
  [ "$(cd "$REF/c$i/work" && ./andrew)" != "" ] || die "the reference program of client $i printed nothing"
done

# Caches dropped, then the backing trees, the compiler, its headers and the tools read back
# into the host's caches (a warm-up build outside the mount), so that a phase reads cold only
# from the emulated disk; the mount itself starts with nothing cached.
warm() {
  drop_caches
  find "$B" -path "$B/c1-gap" -prune -o -type f -print0 | xargs -0 -r cat > /dev/null
  rm -rf "$D/warm"
  mkdir -p "$D/warm/c1"
  cp -R "$REF/c1/src" "$D/warm/c1/"
  (cd "$D/warm/c1" && phase_cmd mkdir "$D/warm/x" && phase_cmd cp "$D/warm/x" &&
    phase_cmd stat "$D/warm/x" && phase_cmd scan "$D/warm/x" &&
    gcc "${CFLAGS[@]}" -c work/d0/main.c -o work/d0/main.o &&
    echo 'int main(void) { return 0; }' | gcc -x c -o "$D/warm/t" -) > /dev/null
  rm -rf "$D/warm"
}

RESULTS="$D/results.tsv"
: > "$RESULTS"
rm -rf "$D/stats" "$D/traces"
mkdir -p "$D/stats" "$D/traces" "$OUT"

# reset_trees N: each client's repository as before the mkdir phase (src/ only).
reset_trees() { local i; for i in $(seq "$1"); do rm -rf "$B/c$i/work"; done; }

# run_phase PHASE SCHED N GAP REP [TRACE]: one timed phase on a fresh mount; appends
# "phase sched n gap rep seconds disk-requests disk-MB scheduler-name utilization disk-s
# waits load" to $RESULTS, where disk-s is the emulated disk's busy time plus its
# anticipation waits (which host CPU contention does not lengthen) and load the host's
# 1-minute load average as the phase ended (the machine may be shared).
run_phase() {
  local phase=$1 sched=$2 n=$3 gap=$4 rep=$5 trace=${6:-} t0 t1 label i
  label="$phase-$sched-$n-$gap-$rep"
  truncate -s "${gap}M" "$B/c1-gap/gap"
  warm
  local opts=(--disk "$DISK")
  [ -n "$trace" ] && opts+=(--record "$trace" --record-format blkparse)
  if [ "$sched" = default ]; then
    mount_default "$B" "$M" "${opts[@]}"
  else
    mount_with "$B" "$M" "$sched" "${opts[@]}"
  fi
  t0=$(now)
  run_clients "$phase" "$n" "$M" "$OUT" || { echo "bench/andrew.sh: the $phase phase failed in run $label; see $WORK/mount-*.err" >&2; exit 1; }
  t1=$(now)
  unmount_saving "$D/stats/$label.json"
  for i in $(seq "$n"); do
    case $phase in
      stat) cmp -s "$OUT/c$i.stat" "$REF/out/c$i.stat" || { echo "bench/andrew.sh: run $label: client $i's stat output differs from the reference" >&2; exit 1; } ;;
      scan|scanord) for x in grep wc; do cmp -s "$OUT/c$i.$x" "$REF/out/c$i.$x" || { echo "bench/andrew.sh: run $label: client $i's $x output differs from the reference" >&2; exit 1; }; done ;;
      gcc) cmp -s "$B/c$i/work/andrew" "$REF/c$i/work/andrew" || { echo "bench/andrew.sh: run $label: client $i's program differs from the reference build" >&2; exit 1; } ;;
    esac
  done
  python3 - "$D/stats/$label.json" "$phase $sched $n $gap $rep $(calc "$t1 - $t0")" "$(cut -d' ' -f1 /proc/loadavg)" >> "$RESULTS" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
ios = sum(c["ios"] for c in run["contexts"])
disk_s = run["duration_s"] * run["utilization"] + run["anticipation"]["waited_ms"] / 1000
print(sys.argv[2], ios, f"{run['bytes'] / 1e6:.3f}", run["scheduler"], f"{run['utilization']:.2f}",
      f"{disk_s:.3f}", run["anticipation"]["waits"], sys.argv[3])
PY
  echo "  $label: $(tail -1 "$RESULTS" | cut -d' ' -f6) s" >&2
}

# run_all SCHED N REP [TRACE_PREFIX]: the five phases, from src/ only; with TRACE_PREFIX the
# cp and scan phases record their disk requests to TRACE_PREFIX-cp.blk and -scan.blk.
run_all() {
  local sched=$1 n=$2 rep=$3 trace=${4:-} phase
  reset_trees "$n"
  for phase in "${PHASES[@]}"; do
    if [ -n "$trace" ] && { [ "$phase" = cp ] || [ "$phase" = scan ]; }; then
      run_phase "$phase" "$sched" "$n" 0 "$rep" "$trace-$phase.blk"
    else
      run_phase "$phase" "$sched" "$n" 0 "$rep"
    fi
  done
}

# --- The main table: CLIENTS clients, REPS runs of each scheduler; one client alone. --------
SCHEDS=(aged-sptf as-aged-sptf default)
T_START=$(now)
for rep in $(seq "$REPS"); do
  for s in "${SCHEDS[@]}"; do
    first=$([ "$rep" -eq 1 ] && [ "$s" = aged-sptf ] && echo 1 || echo 0)
    run_all "$s" "$CLIENTS" "$rep" "$([ "$first" = 1 ] && echo "$D/traces/many")"
    if [ "$ONE" = 1 ] && [ "$s" != default ]; then
      run_all "$s" 1 "$rep" "$([ "$first" = 1 ] && echo "$D/traces/one")"
    fi
  done
done

# --- Integrity: every file read through a fresh mount, against its backing SHA-256. --------
# The trees as the last timed run left them (sources, copies, objects, programs).
warm
(cd "$B" && find c[0-9]* -path c1-gap -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) > "$D/backing.sha256"
mount_with "$B" "$M" as-aged-sptf --disk "$DISK"
(cd "$M" && find c[0-9]* -path c1-gap -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) > "$D/mount.sha256"
unmount_saving "$D/stats/verify.json"
NFILES=$(wc -l < "$D/backing.sha256")
if cmp -s "$D/backing.sha256" "$D/mount.sha256"; then
  VERIFY="all $NFILES files read through the mount (sources, copies, objects, programs) have their backing files' SHA-256; every timed run's stat, grep and wc outputs and programs equal the reference's"
else
  VERIFY="MISMATCH: see diff $D/backing.sha256 $D/mount.sha256"
fi
# --- The sweep: the distance between the clients' trees, scan phase, one run a point. ------
# The trees as after the cp phase (copied outside the mount: the same bytes). At each
# distance the scan also runs with the files in their order on the disk (scanord).
reset_trees "$CLIENTS"
for i in $(seq "$CLIENTS"); do cp -R "$REF/c$i/src" "$B/c$i/work"; done
for gap in 0 $DISTANCES; do
  for s in aged-sptf as-aged-sptf; do
    [ "$gap" -eq 0 ] || run_phase scan "$s" "$CLIENTS" "$gap" 1
    run_phase scanord "$s" "$CLIENTS" "$gap" 1
  done
done
: > "$B/c1-gap/gap"

WALL=$(calc "$(now) - $T_START")
printf '%s\n' "$REPS" "$SEED" "$CLIENTS" "$DISTANCES" "${REF_S[*]}" "$VERIFY" "$WALL" > "$D/run.txt"

fi  # ANDREW_REPORT_ONLY

# --- The simulator: bench/andrew.fio at the same distances; the recorded scan replayed. -----
rm -rf "$D/sim"
mkdir -p "$D/sim"
# The real distance between client 1's copy and client 2's: client 1's copy plus client 2's
# sources, in whole 4 KiB blocks; the job file's first client starts at 0, so the second
# starts that far plus the gap.
TREE_KIB=$(awk -v c="c1/" 'index($1, c) == 1 { kib += int(($2 + 4095) / 4096) * 4 } END { print kib }' "$D/sizes")
TREE2_KIB=$(awk -v c="c2/" 'index($1, c) == 1 { kib += int(($2 + 4095) / 4096) * 4 } END { print kib }' "$D/sizes")
for gap in 0 $DISTANCES; do
  { cat "$JOB"; echo "antsched_disk_offset=$((TREE_KIB + TREE2_KIB + gap * 1024))k"; } > "$D/sim/scan-$gap.fio"
  "$ANTSCHED" sim "$D/sim/scan-$gap.fio" --disk "$DISK" --scheduler aged-sptf --scheduler as-aged-sptf \
    --json "$D/sim/scan-$gap.json" > /dev/null
done
# The recorded requests of the first aged-sptf run's cp and scan phases, replayed closed-loop
# (each process issues its next request its recorded think time after the previous one
# completes) under both schedulers.
for t in "$D"/traces/*.blk; do
  "$ANTSCHED" sim --trace "$t" --replay closed --disk "$DISK" \
    --scheduler aged-sptf --scheduler as-aged-sptf --json "$D/sim/trace-$(basename "$t" .blk).json" > /dev/null
done

# --- Tables and JSON. -----------------------------------------------------------------------
BENCH_DIR="$ROOT/bench" python3 - "$RESULTS" "$D" "$SEED" "$REPS" "$CLIENTS" "$DISK" "$VERIFY" "${REF_S[*]}" "0 $DISTANCES" "$WALL" "$TREE_KIB" "$TREE2_KIB" <<'PY'
import json, os, statistics, sys
res, d, seed, reps, clients, disk, verify, ref_s, distances, wall, tree_kib, tree2_kib = sys.argv[1:]
import builtins
def print(*parts):
    builtins.print(" ".join(str(x) for x in parts).rstrip())
reps, clients = int(reps), int(clients)
distances = [int(x) for x in distances.split()]
rows = [l.split() for l in open(res) if l.strip()]
PHASES = ["mkdir", "cp", "stat", "scan", "gcc"]
PAPER = {"mkdir": -16, "cp": -5, "stat": -5, "scan": -54, "gcc": 1.7, "total": -8.4}

def runs(phase, sched, n, gap=0):
    return [r for r in rows if r[:4] == [phase, sched, str(n), str(gap)]]
def col(phase, sched, n, k, gap=0):
    return [float(r[k]) for r in runs(phase, sched, n, gap)]
sys.path.insert(0, os.environ["BENCH_DIR"])
from report import med, gain as change, think_us  # noqa: E402
def pct(g):
    return "-" if g is None else f"{g:+.1f}%"
def totals(sched, n):
    by_rep = {}
    for r in rows:
        if r[1] == sched and r[2] == str(n) and r[3] == "0":
            by_rep.setdefault(r[4], 0.0)
            by_rep[r[4]] += float(r[5])
    return list(by_rep.values())

sizes = [int(l.split()[1]) for l in open(os.path.join(d, "sizes")) if l.startswith("c1/")]
default_name = next((r[8] for r in rows if r[1] == "default"), "?")
def sim(name):
    return {r["scheduler"]: r["duration_s"] for r in json.load(open(os.path.join(d, "sim", name)))["runs"]}
sim_scan = {g: sim(f"scan-{g}.json") for g in distances}
sim_trace = sim("trace-many-scan.json")

think = think_us(os.path.join(d, "traces", "many-scan.blk"))

ref = [float(x) for x in ref_s.split()]
out = {"disk": disk, "seed": int(seed), "clients": clients, "reps": reps,
       "files_per_client": len(sizes), "bytes_per_client": sum(sizes),
       "median_file_bytes": statistics.median(sizes), "default_scheduler": default_name,
       "paper_change_pct": PAPER, "no_disk_s": dict(zip(PHASES, ref)), "phases": {}, "one_client": {},
       "sweep": [], "sim": {"job": "bench/andrew.fio",
                             "scan_s": {str(g): v for g, v in sim_scan.items()},
                             "trace_replay_scan_s": sim_trace, "scan_trace_median_think_us": think},
       "verify": verify, "wall_s": float(wall)}

print()
print(f"Andrew benchmark on antsched mount, {disk}: {clients} clients, each {len(sizes)} C source files "
      f"({sum(sizes) / 1024:.0f} KiB, median {statistics.median(sizes) / 1024:.1f} KiB; seed {seed}); "
      f"every phase cold on a fresh mount; median of {reps} runs")
hdr = f"{'phase':<7} {'no disk s':>9} {'aged-sptf s':>12} {'as-aged-sptf s':>15} {'change':>8} " \
      f"{'default s':>10} {'change':>8} {'disk reqs':>10} {'disk s aged/as':>15} {'paper':>7}"
print(hdr)
base_tot, as_tot, def_tot = med(totals("aged-sptf", clients)), med(totals("as-aged-sptf", clients)), med(totals("default", clients))
for i, ph in enumerate(PHASES):
    a, b, c = (med(col(ph, s, clients, 5)) for s in ("aged-sptf", "as-aged-sptf", "default"))
    reqs = med(col(ph, "aged-sptf", clients, 6))
    da, db = med(col(ph, "aged-sptf", clients, 10)), med(col(ph, "as-aged-sptf", clients, 10))
    print(f"{ph:<7} {ref[i]:9.2f} {a:12.2f} {b:15.2f} {pct(change(a, b)):>8} {c:10.2f} {pct(change(a, c)):>8} "
          f"{reqs:10.0f} {da:7.2f}/{db:<7.2f} {pct(PAPER[ph]):>7}")
    out["phases"][ph] = {
        s: {"median_s": med(col(ph, s, clients, 5)), "runs_s": col(ph, s, clients, 5),
            "disk_requests": med(col(ph, s, clients, 6)), "disk_mb": med(col(ph, s, clients, 7)),
            "utilization": med(col(ph, s, clients, 9)), "disk_s": med(col(ph, s, clients, 10)),
            "anticipation_waits": med(col(ph, s, clients, 11))}
        for s in ("aged-sptf", "as-aged-sptf", "default")}
    out["phases"][ph]["change_pct"] = change(a, b)
    out["phases"][ph]["default_change_pct"] = change(a, c)
    out["phases"][ph]["paper_change_pct"] = PAPER[ph]
print(f"{'total':<7} {sum(ref):9.2f} {base_tot:12.2f} {as_tot:15.2f} {pct(change(base_tot, as_tot)):>8} "
      f"{def_tot:10.2f} {pct(change(base_tot, def_tot)):>8} {'':>10} {'':>15} {pct(PAPER['total']):>7}")
out["total"] = {"aged-sptf_s": base_tot, "as-aged-sptf_s": as_tot, "default_s": def_tot,
                "change_pct": change(base_tot, as_tot), "default_change_pct": change(base_tot, def_tot)}
print(f"(change: as-aged-sptf's time against aged-sptf's, negative is shorter; default: the mount's default "
      f"scheduler, {default_name}; no disk: the same phases outside the mount, warm; disk reqs: requests "
      f"the emulated disk served under aged-sptf; disk s: its busy time plus anticipation waits; total: median of the runs' sums)")

if runs("scan", "aged-sptf", 1):
    print("\none client alone:")
    print(f"{'phase':<7} {'aged-sptf s':>12} {'as-aged-sptf s':>15} {'change':>8} {'disk s aged/as':>15} {'runs aged-sptf':>17} {'runs as-aged-sptf':>18}")
    for ph in PHASES + ["total"]:
        if ph == "total":
            a, b = med(totals("aged-sptf", 1)), med(totals("as-aged-sptf", 1))
            da = db = None
        else:
            a, b = med(col(ph, "aged-sptf", 1, 5)), med(col(ph, "as-aged-sptf", 1, 5))
            da, db = med(col(ph, "aged-sptf", 1, 10)), med(col(ph, "as-aged-sptf", 1, 10))
        disk = f"{da:7.2f}/{db:<7.2f}" if da is not None else ""
        ra = totals("aged-sptf", 1) if ph == "total" else col(ph, "aged-sptf", 1, 5)
        rb = totals("as-aged-sptf", 1) if ph == "total" else col(ph, "as-aged-sptf", 1, 5)
        rng = lambda xs: f"{min(xs):.2f} to {max(xs):.2f}"
        print(f"{ph:<7} {a:12.2f} {b:15.2f} {pct(change(a, b)):>8} {disk:>15} {rng(ra):>17} {rng(rb):>18}")
        out["one_client"][ph] = {"aged-sptf_s": a, "as-aged-sptf_s": b, "change_pct": change(a, b),
                                 "disk_s": [da, db]}
    print(f"(paper: one client shows no difference)")

print("\nreal against the simulator's replay of the recorded requests (the first aged-sptf run's; change of as-aged-sptf):")
print(f"{'phase':<7} {'clients':>7} {'real wall':>10} {'real disk s':>12} {'sim of trace':>13} {'sim aged/as s':>14}")
out["trace_replay"] = {}
for n, tag in ((clients, "many"), (1, "one")):
    for ph in ("cp", "scan"):
        f = os.path.join(d, "sim", f"trace-{tag}-{ph}.json")
        if not os.path.exists(f):
            continue
        t = sim(f"trace-{tag}-{ph}.json")
        a, b = med(col(ph, "aged-sptf", n, 5)), med(col(ph, "as-aged-sptf", n, 5))
        da, db = med(col(ph, "aged-sptf", n, 10)), med(col(ph, "as-aged-sptf", n, 10))
        tc = change(t["aged-sptf"], t["as-aged-sptf"])
        print(f"{ph:<7} {n:7d} {pct(change(a, b)):>10} {pct(change(da, db)):>12} {pct(tc):>13} "
              f"{t['aged-sptf']:6.2f}/{t['as-aged-sptf']:<6.2f}")
        out["trace_replay"][f"{ph}-{n}"] = {"real_change_pct": change(a, b), "real_disk_change_pct": change(da, db),
                                           "sim_s": t, "sim_change_pct": tc}

sa, sb = sim_trace["aged-sptf"], sim_trace["as-aged-sptf"]
print(f"\nscan phase, real against simulated (aged-sptf / as-aged-sptf, change):")
ra, rb = med(col("scan", "aged-sptf", clients, 5)), med(col("scan", "as-aged-sptf", clients, 5))
rda, rdb = med(col("scan", "aged-sptf", clients, 10)), med(col("scan", "as-aged-sptf", clients, 10))
print(f"  real (wall)           {ra:6.2f} / {rb:6.2f} s  {pct(change(ra, rb))}")
print(f"  real (disk s)         {rda:6.2f} / {rdb:6.2f} s  {pct(change(rda, rdb))}")
print(f"  sim of the trace      {sa:6.2f} / {sb:6.2f} s  {pct(change(sa, sb))}   (the requests recorded in the first aged-sptf scan, replayed closed-loop)")
s0 = sim_scan[0]
print(f"  sim bench/andrew.fio  {s0['aged-sptf']:6.2f} / {s0['as-aged-sptf']:6.2f} s  {pct(change(s0['aged-sptf'], s0['as-aged-sptf']))}"
      f"   (71 files of 8 KiB a client, read in layout order; second client {int(tree_kib) + int(tree2_kib)} KiB on)")
print(f"  paper                                   {pct(PAPER['scan'])}")
print(f"  median time from a completion to the same process's next request in the recorded scan: {think:.0f} us"
      if think is not None else "  (no think time found in the recorded scan)")
out["sim"]["scan_trace_change_pct"] = change(sa, sb)

print("\nscan phase by distance between the clients' trees (MiB added; real: one run a point, at 0 for grep -r the medians above;")
print(" grep -r: files in the order the directories list them; in order: the same files in name order, their order on the disk;")
print(" wall: the phase's time; disk: the emulated disk's busy time plus anticipation waits):")
print(f"{'MiB':>6} | {'grep -r: aged s':>15} {'as s':>6} {'wall':>7} {'disk':>7} | {'in order: aged s':>16} {'as s':>6} {'wall':>7} {'disk':>7} | "
      f"{'sim: aged s':>11} {'as s':>6} {'change':>7}")
def pair(phase, g):
    a, b = med(col(phase, "aged-sptf", clients, 5, g)), med(col(phase, "as-aged-sptf", clients, 5, g))
    da, db = med(col(phase, "aged-sptf", clients, 10, g)), med(col(phase, "as-aged-sptf", clients, 10, g))
    return a, b, change(a, b), change(da, db)
def fmt(a, b, c, dc, w):
    return f"{a:{w}.2f} {b:6.2f} {pct(c):>7} {pct(dc):>7}" if a and b else f"{'-':>{w}} {'-':>6} {'-':>7} {'-':>7}"
for g in distances:
    a, b, c, dc = pair("scan", g)
    oa, ob, oc, odc = pair("scanord", g)
    sa, sb = sim_scan[g]["aged-sptf"], sim_scan[g]["as-aged-sptf"]
    print(f"{g:6d} | {fmt(a, b, c, dc, 15)} | {fmt(oa, ob, oc, odc, 16)} | {sa:11.3f} {sb:6.3f} {pct(change(sa, sb)):>7}")
    out["sweep"].append({"gap_mib": g,
                         "grep_r": {"aged_sptf_s": a, "as_aged_sptf_s": b, "change_pct": c, "disk_change_pct": dc},
                         "in_order": {"aged_sptf_s": oa, "as_aged_sptf_s": ob, "change_pct": oc, "disk_change_pct": odc},
                         "sim": {"aged_sptf_s": sa, "as_aged_sptf_s": sb, "change_pct": change(sa, sb)}})

# What each phase's requests were, by program (the first aged-sptf run).
print("\ndisk requests by program, first aged-sptf run (requests, MB):")
by_prog = {}
for ph in PHASES:
    f = os.path.join(d, "stats", f"{ph}-aged-sptf-{clients}-0-1.json")
    agg = {}
    for c in json.load(open(f))["runs"][0]["contexts"]:
        a = agg.setdefault(c["name"], [0, 0])
        a[0] += c["ios"]
        a[1] += c["bytes"]
    by_prog[ph] = {k: {"requests": v[0], "mb": round(v[1] / 1e6, 3)} for k, v in agg.items()}
    print(f"  {ph:<6} " + (", ".join(f"{k} {v[0]} ({v[1] / 1e6:.2f} MB)" for k, v in sorted(agg.items())) or "none"))
out["requests_by_program"] = by_prog
loads = [float(r[12]) for r in rows if len(r) > 12]
if loads:
    print(f"\nhost load (1-minute load average as each phase ended, {len(loads)} phases): "
          f"median {statistics.median(loads):.1f}, {min(loads):.1f} to {max(loads):.1f} on {os.cpu_count()} CPUs")
    out["host_load"] = {"median": statistics.median(loads), "min": min(loads), "max": max(loads), "cpus": os.cpu_count()}
print(f"\nintegrity: {verify}")
print(f"measured in {float(wall):.0f} s (runs, sweep and integrity check)")
json.dump(out, open(os.path.join(d, "andrew.json"), "w"), indent=1)
print(f"(figures in {os.path.join(d, 'andrew.json')}; each phase's mount statistics in {os.path.join(d, 'stats')})")
PY
[ "${VERIFY#MISMATCH}" = "$VERIFY" ]
