#!/usr/bin/env bash
# Apache serving a web workload (SOSP 2001 section 4.4; thesis section 9.4) from an antsched
# mount: the distribution's apache2, prefork MPM (a process a connection, so the mount, which
# schedules per process, sees each client's requests as one context), a private instance with
# its own config, port and PID file, serving a generated file set from the mount to wrk.
#
# - The file set and the request list come from bench/apache-gen.py and SEED: 4,000 files of
#   the paper's size spread (median 4,733 B, mean 87 KB, mean 13.4 KB without the largest 5%;
#   the paper's requests: 4,768 B, 86 KB, 13 KB), requested with a Zipf popularity (1,000
#   requests touch about 740 distinct files; the paper: 745). The script prints both sets of
#   figures. The backing files' SHA-256 are written when they are generated.
# - wrk replays the request list (bench/apache-wrk.lua; each of its 2 threads from its own
#   place in the list) over C keep-alive connections for DURATION seconds, at C = 16 (one of
#   the paper's client machines of 16 processes) and 48 (all three): the paper found its
#   results insensitive to the number of clients, so both. A result is wrk's bytes and
#   completed requests over its duration.
# - Three modes, for the paper's three columns. "read": EnableMMAP Off, EnableSendfile Off
#   (Apache read()s every file, 8 KB at a time), on the mount's page cache with the kernel's
#   read-ahead (the paper's read column; its FreeBSD clustered reads too). "mmap": EnableMMAP
#   On and the mount's --readahead 0, so every page Apache's write of a mapped file touches is
#   one synchronous page fault and one 4 KiB disk read (the paper's mmap column: the access
#   that leaves the disk deceptively idle). "mixed": EnableMMAP On on the mount's defaults:
#   APR maps files under 4 MiB and read()s larger ones (the paper's default mode, Apache 1.3
#   did the same), and the kernel reads around each fault.
# - Schedulers: aged-sptf, as-aged-sptf and the mount's default (no --scheduler). REPS runs
#   each (default 3), each on a fresh mount of the Deskstar 34GXP after dropping the host's
#   caches and reading the backing files back in (so the mount starts cold and only the
#   emulated disk is timed); Apache is started and stopped around each run.
# - The simulator runs bench/apache.fio (the workload as a job file) in the read and mmap
#   modes at both concurrencies, and replays the disk requests the mount recorded in the first
#   aged-sptf run of each mode and concurrency, under both schedulers.
# - Finally every file is fetched from Apache on a fresh mount and its SHA-256 compared with
#   the backing file's.
# Prints the table and writes the figures to $ANTSCHED_BENCH_DIR/apache/apache.json. About
# 13 minutes with the defaults (on a shared 2-core machine).
#
#   sudo bench/apache.sh [REPS] [SEED]   (REPS 1 to 20, default 3; SEED a whole number, default 1)
#   APACHE_DURATION=10 (seconds a run)  APACHE_CLIENTS="16 48"  APACHE_PORT=18416
#   APACHE_MODES="read mmap mixed"
#   APACHE_REPORT_ONLY=1 (reprint the last run's table from $ANTSCHED_BENCH_DIR/apache; the
#                         simulations run again, nothing is measured)
set -euo pipefail

REPS=${1:-3}
SEED=${2:-1}
DURATION=${APACHE_DURATION:-10}
CLIENTS=${APACHE_CLIENTS:-16 48}
read -r -a CLIENT_LIST <<< "$CLIENTS"
PORT=${APACHE_PORT:-18416}
read -r -a MODES <<< "${APACHE_MODES:-read mmap mixed}"
FILES=4000
WRK_THREADS=2
if ! [[ $REPS =~ ^[0-9]+$ ]] || [ "$REPS" -lt 1 ] || [ "$REPS" -gt 20 ]; then
  echo "bench/apache.sh: REPS must be a whole number from 1 to 20, not '$REPS'" >&2; exit 2
fi
if ! [[ $SEED =~ ^[0-9]{1,18}$ ]]; then
  echo "bench/apache.sh: SEED must be a whole number (up to 18 digits), not '$SEED'" >&2; exit 2
fi
if ! [[ $DURATION =~ ^[0-9]+$ ]] || [ "$DURATION" -lt 2 ] || [ "$DURATION" -gt 600 ]; then
  echo "bench/apache.sh: APACHE_DURATION is seconds from 2 to 600, not '$DURATION'" >&2; exit 2
fi
for c in "${CLIENT_LIST[@]}"; do
  if ! [[ $c =~ ^[0-9]+$ ]] || [ "$c" -lt "$WRK_THREADS" ] || [ "$c" -gt 200 ] || [ $((c % WRK_THREADS)) -ne 0 ]; then
    echo "bench/apache.sh: APACHE_CLIENTS holds even numbers from 2 to 200, not '$c'" >&2; exit 2
  fi
done
if ! [[ $PORT =~ ^[0-9]+$ ]] || [ "$PORT" -lt 1024 ] || [ "$PORT" -gt 65535 ]; then
  echo "bench/apache.sh: APACHE_PORT must be from 1024 to 65535, not '$PORT'" >&2; exit 2
fi
for m in "${MODES[@]}"; do
  case $m in read|mmap|mixed) ;; *) echo "bench/apache.sh: APACHE_MODES holds read, mmap and mixed, not '$m'" >&2; exit 2 ;; esac
done
[ "$(id -u)" -eq 0 ] || { echo "bench/apache.sh: run as root (installing, mounting, dropping caches)" >&2; exit 2; }

D="${ANTSCHED_BENCH_DIR:-/tmp/antsched-bench}/apache"
MOUNT_LOGS="$D/logs"   # not $WORK: other scripts may run beside this one
source "$(dirname "$0")/lib.sh"

# What the benchmark needs from the distribution, installed if missing. The package's own
# apache2 service is not started (install_missing, bench/lib.sh) or touched: this script runs a
# private instance.
missing=()
[ -x /usr/sbin/apache2 ] && [ -f /usr/lib/apache2/modules/mod_mpm_prefork.so ] || missing+=(apache2)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
command -v fusermount3 >/dev/null 2>&1 || missing+=(fuse3)
command -v mountpoint >/dev/null 2>&1 || missing+=(util-linux)
install_missing "${missing[@]}"
id www-data >/dev/null 2>&1 || { echo "bench/apache.sh: no www-data user for Apache's children" >&2; exit 2; }

need wrk python3 sha256sum
DISK=deskstar-34gxp
B="$D/backing"
M="$D/mnt"
H="$D/httpd"
JOB="$ROOT/bench/apache.fio"
LUA="$ROOT/bench/apache-wrk.lua"
SCHEDS=(aged-sptf as-aged-sptf default)
T_START=$(now)
UPTIME_START=$(uptime)

# Cleanup on success, failure and Ctrl-C: Apache (its parent stops its children), then the
# mount (lib.sh's cleanup), then the mount point, Apache's directory and the file set.
APACHE_PID=""
stop_apache() {
  if [ -n "$APACHE_PID" ]; then
    kill -TERM "$APACHE_PID" 2>/dev/null || true
    for _ in $(seq 300); do
      kill -0 "$APACHE_PID" 2>/dev/null || break
      sleep 0.05
    done
    if kill -0 "$APACHE_PID" 2>/dev/null; then
      echo "bench/apache.sh: Apache (pid $APACHE_PID) did not stop in 15 s; killing it" >&2
      kill -KILL "$APACHE_PID" 2>/dev/null || true
    fi
    APACHE_PID=""
  fi
}
apache_cleanup() {
  stop_apache
  cleanup
  if [ -d "$M" ] && ! mountpoint -q "$M"; then rmdir "$M" 2>/dev/null || true; fi
  rm -rf "$H" "$B"
}
trap apache_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

# APACHE_REPORT_ONLY=1 reprints the table of the last run in $D from its saved figures (the
# simulations, which are deterministic and take seconds, run again); otherwise measure.
if [ "${APACHE_REPORT_ONLY:-0}" = 1 ]; then
for f in "$D/run.txt" "$D/results.tsv" "$D/gen/stats.json"; do
  [ -s "$f" ] || { echo "bench/apache.sh: APACHE_REPORT_ONLY=1 needs a finished run in $D, and $f is missing" >&2; exit 1; }
done
{ read -r REPS; read -r SEED; read -r DURATION; read -r CLIENTS; read -r MODES_LINE; read -r VERIFY; read -r WALL
  read -r UPTIME_START; read -r UPTIME_END; } < "$D/run.txt"
read -r -a CLIENT_LIST <<< "$CLIENTS"
read -r -a MODES <<< "$MODES_LINE"
RESULTS="$D/results.tsv"
else
rm -f "$D/run.txt"   # written again when this run finishes; a cut-short run has none
if port_busy; then
  echo "bench/apache.sh: something already listens on 127.0.0.1:$PORT; set APACHE_PORT" >&2; exit 1
fi
if mountpoint -q "$M" 2>/dev/null; then
  echo "bench/apache.sh: $M is mounted (another run of this script?)" >&2; exit 1
fi

# --- The file set and the request list. -------------------------------------------------------
echo "bench/apache.sh: generating $FILES files and the request list (seed $SEED)..." >&2
rm -rf "$B" "$D/apache.json" "$D/fetched.sha256" "$D/gen" "$D/stats" "$D/wrk" "$D/traces" "$D/sim" "$MOUNT_LOGS"
mkdir -p "$D/gen" "$D/stats" "$D/wrk" "$D/traces" "$D/sim" "$MOUNT_LOGS"
python3 "$ROOT/bench/apache-gen.py" "$SEED" "$FILES" "$D/gen"
mv "$D/gen/www" "$B"
chmod -R a+rX "$B"   # Apache's children run as www-data

# --- A private Apache: its own directory, config, port and PID file. -------------------------
# apache_conf MODE CLIENTS: the config for a run. Prefork with a child for every connection
# started up front (so no connection waits for a fork), keep-alive without a request limit (a
# connection stays with its child, one context on the mount), no access log.
apache_conf() {
  local mode=$1 c=$2 mmap=On
  [ "$mode" = read ] && mmap=Off
  local n=$((c + 4))
  cat <<EOF
ServerRoot $H
DefaultRuntimeDir $H
PidFile $H/httpd.pid
Mutex file:$H default
Listen 127.0.0.1:$PORT
ServerName localhost
LoadModule mpm_prefork_module /usr/lib/apache2/modules/mod_mpm_prefork.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
User www-data
Group www-data
ErrorLog $H/error.log
LogLevel warn
DocumentRoot $M
<Directory />
  Require all granted
  AllowOverride None
  Options None
</Directory>
StartServers $n
MinSpareServers $n
MaxSpareServers $n
ServerLimit $n
MaxRequestWorkers $n
MaxConnectionsPerChild 0
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 120
Timeout 300
EnableMMAP $mmap
EnableSendfile Off
EOF
}

# start_apache MODE CLIENTS: starts Apache, which detaches into a session of its own (its
# parent signals its whole process group when stopped, so it must not share ours), and waits
# until it accepts connections with all its children up. Its parent's pid is in its PID file.
start_apache() {
  local mode=$1 c=$2
  rm -rf "$H"; mkdir -p "$H"
  apache_conf "$mode" "$c" > "$H/httpd.conf"
  /usr/sbin/apache2 -f "$H/httpd.conf" -k start
  for _ in $(seq 200); do
    [ -s "$H/httpd.pid" ] && break
    sleep 0.05
  done
  APACHE_PID=$(cat "$H/httpd.pid" 2>/dev/null || true)
  for _ in $(seq 200); do
    [ -n "$APACHE_PID" ] || break
    if port_busy && [ "$(ps --ppid "$APACHE_PID" --no-headers | wc -l)" -ge $((c + 4)) ]; then
      return 0
    fi
    kill -0 "$APACHE_PID" 2>/dev/null || break
    sleep 0.05
  done
  cat "$H/error.log" >&2 2>/dev/null || true
  echo "bench/apache.sh: Apache did not come up on port $PORT" >&2
  exit 1
}

RESULTS="$D/results.tsv"
: > "$RESULTS"

# run_case MODE SCHED CLIENTS REP [TRACE]: one timed run on a fresh mount (with TRACE, the
# mount records every disk request, each with its process, to that file); appends
# "mode sched clients rep wrk-s requests bytes errors scheduler disk-bytes disk-ios
#  utilization waited-ms threads" to $RESULTS. The mount has a FUSE thread for each read and
# read-ahead the clients' processes can have in flight (2 x CLIENTS), so that every process's
# request reaches the scheduler; MOUNT_THREADS set overrides that (the check at the end).
run_case() {
  local mode=$1 sched=$2 c=$3 rep=$4 trace=${5:-} label
  local threads=${MOUNT_THREADS:-$((2 * c))}
  label="$mode-$sched-$c-$rep"
  [ -n "${MOUNT_THREADS:-}" ] && label="$label-t$threads"
  drop_caches
  cat "$B"/*/* > /dev/null
  local opts=(--disk "$DISK" --allow-other --threads "$threads")
  [ "$mode" = mmap ] && opts+=(--readahead 0)
  [ -n "$trace" ] && opts+=(--record "$trace" --record-format blkparse)
  if [ "$sched" = default ]; then
    mount_default "$B" "$M" "${opts[@]}"
  else
    mount_with "$B" "$M" "$sched" "${opts[@]}"
  fi
  start_apache "$mode" "$c"
  if ! APACHE_WRK_OUT="$D/wrk/$label.json" wrk -t "$WRK_THREADS" -c "$c" -d "${DURATION}s" --timeout 300s \
      -s "$LUA" "http://127.0.0.1:$PORT" -- "$D/gen/urls.txt" "$WRK_THREADS" > "$D/wrk/$label.txt" 2>&1; then
    cat "$D/wrk/$label.txt" >&2
    echo "bench/apache.sh: wrk failed in run $label" >&2
    exit 1
  fi
  stop_apache
  unmount_saving "$D/stats/$label.json"
  python3 - "$D/wrk/$label.json" "$D/stats/$label.json" "$mode $sched $c $rep" "$threads" >> "$RESULTS" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
run = json.load(open(sys.argv[2]))["runs"][0]
errors = w["connect"] + w["read"] + w["write"] + w["status"] + w["timeout"]
ios = sum(c["ios"] for c in run["contexts"])
print(sys.argv[3], f"{w['duration_us'] / 1e6:.3f}", w["requests"], w["bytes"], errors,
      run["scheduler"], run["bytes"], ios, f"{run['utilization']:.3f}",
      f"{run['anticipation']['waited_ms']:.0f}", sys.argv[4])
PY
  local row
  read -r -a row < <(tail -1 "$RESULTS")
  if [ "${row[7]}" -ne 0 ]; then
    echo "bench/apache.sh: run $label: wrk counted ${row[7]} errors (see $D/wrk/$label.txt)" >&2; exit 1
  fi
  echo "  $label: $(calc "${row[6]} / ${row[4]} / 1000000") MB/s, $(calc "${row[5]} / ${row[4]}") requests/s" >&2
}

# --- The runs: every mode, concurrency and scheduler, REPS times, interleaved. ---------------
for mode in "${MODES[@]}"; do
  for c in "${CLIENT_LIST[@]}"; do
    for rep in $(seq "$REPS"); do
      for s in "${SCHEDS[@]}"; do
        if [ "$rep" -eq 1 ] && [ "$s" = aged-sptf ]; then
          run_case "$mode" "$s" "$c" "$rep" "$D/traces/$mode-$c.blk"
        else
          run_case "$mode" "$s" "$c" "$rep"
        fi
      done
    done
  done
done

# --- The mount's default of 16 FUSE threads at the highest concurrency, in the mixed mode (the
# paper's default): one run under each of the two schedulers, to show what a limit on the
# requests the scheduler sees does to the gain.
CMAX=$(printf '%s\n' "${CLIENT_LIST[@]}" | sort -n | tail -1)
CHECK_THREADS=16
if [ "${APACHE_THREADS_CHECK:-1}" = 1 ] && [ "$CMAX" -gt "$CHECK_THREADS" ] && [[ " ${MODES[*]} " == *" mixed "* ]]; then
  for s in aged-sptf as-aged-sptf; do
    MOUNT_THREADS=$CHECK_THREADS run_case mixed "$s" "$CMAX" 1
  done
fi

# --- Integrity: every file fetched from Apache (mixed mode: mapped and read files) on a fresh
# mount, against the backing file's SHA-256. -----------------------------------------------
drop_caches
mount_default "$B" "$M" --disk "$DISK" --allow-other
start_apache mixed 2
python3 - "$PORT" "$D/gen/backing.sha256" > "$D/fetched.sha256" <<'PY'
import hashlib, http.client, sys
conn = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=300)
for line in open(sys.argv[2]):
    path = line.split()[1]
    conn.request("GET", "/" + path)
    resp = conn.getresponse()
    body = resp.read()
    if resp.status != 200:
        print(f"HTTP {resp.status}  {path}")
        continue
    print(f"{hashlib.sha256(body).hexdigest()}  {path}")
PY
stop_apache
unmount_saving "$D/stats/verify.json"
NFILES=$(wc -l < "$D/gen/backing.sha256")
if cmp -s "$D/gen/backing.sha256" "$D/fetched.sha256"; then
  VERIFY="all $NFILES files fetched from Apache on a fresh mount have their backing files' SHA-256"
else
  VERIFY="MISMATCH: see diff $D/gen/backing.sha256 $D/fetched.sha256"
fi

fi  # APACHE_REPORT_ONLY

# --- The simulator: bench/apache.fio in the read and mmap modes at each concurrency, and the
# recorded requests replayed. ------------------------------------------------------------------
read -r PAGES READS SIZE_MIB < <(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
print(round(s["request_list"]["pages_per_request"]), round(s["request_list"]["reads_per_request"]),
      -(-s["file_bytes"] // 1048576))' "$D/gen/stats.json")
DELAYS="0 50 100 150 200 300"
sim_job() {  # sim_job MODE CLIENTS > job: bench/apache.fio for this seed, mode and concurrency
  local mode=$1 c=$2 n=$PAGES
  [ "$mode" = read ] && n=$READS
  local s="s/^numjobs=16\$/numjobs=$c/; s/^size=333m\$/size=${SIZE_MIB}m/; s/^rw=randread:19\$/rw=randread:$n/; s/^thinktime_blocks=19\$/thinktime_blocks=$n/"
  [ "$mode" = read ] && s="$s; s/^ioengine=mmap\$/ioengine=psync/; s/^bs=4k\$/bs=8k/"
  sed "$s" "$JOB"
}
for c in "${CLIENT_LIST[@]}"; do
  for mode in read mmap; do
    sim_job "$mode" "$c" > "$D/sim/$mode-$c.fio"
    n=$PAGES; [ "$mode" = read ] && n=$READS
    if [ "$(grep -c -e "^numjobs=$c\$" -e "^size=${SIZE_MIB}m\$" -e "^rw=randread:$n\$" -e "^thinktime_blocks=$n\$" \
        "$D/sim/$mode-$c.fio")" -ne 4 ]; then
      echo "bench/apache.sh: $JOB lacks a line the script rewrites (numjobs=16, size=333m, rw=randread:19, thinktime_blocks=19)" >&2
      exit 1
    fi
    "$ANTSCHED" sim "$D/sim/$mode-$c.fio" --disk "$DISK" --scheduler aged-sptf --scheduler as-aged-sptf \
      --json "$D/sim/$mode-$c.json" > /dev/null
  done
  # How the simulated mmap gain depends on the time between a page's completion and the next
  # page fault reaching the disk (the report prints what the mount saw).
  for us in $DELAYS; do
    sed "s/^antsched_issue_delay=.*/antsched_issue_delay=${us}us/" "$D/sim/mmap-$c.fio" > "$D/sim/mmap-$c-delay-$us.fio"
    "$ANTSCHED" sim "$D/sim/mmap-$c-delay-$us.fio" --disk "$DISK" --scheduler aged-sptf --scheduler as-aged-sptf \
      --json "$D/sim/mmap-$c-delay-$us.json" > /dev/null
  done
  for mode in "${MODES[@]}"; do
    "$ANTSCHED" sim --trace "$D/traces/$mode-$c.blk" --replay closed --disk "$DISK" \
      --scheduler aged-sptf --scheduler as-aged-sptf --json "$D/sim/trace-$mode-$c.json" > /dev/null
  done
done

# --- Tables and JSON. ------------------------------------------------------------------------
if [ "${APACHE_REPORT_ONLY:-0}" != 1 ]; then
  WALL=$(calc "$(now) - $T_START")
  UPTIME_END=$(uptime)
  # What the report needs besides results.tsv, stats/, wrk/, traces/ and gen/stats.json.
  printf '%s\n' "$REPS" "$SEED" "$DURATION" "$CLIENTS" "${MODES[*]}" "$VERIFY" "$WALL" "$UPTIME_START" "$UPTIME_END" > "$D/run.txt"
fi
BENCH_DIR="$ROOT/bench" python3 - "$RESULTS" "$D" "$REPS" "$SEED" "$DURATION" "$CLIENTS" "${MODES[*]}" "$DISK" "$VERIFY" \
  "$WALL" "$UPTIME_START" "$UPTIME_END" "$(/usr/sbin/apache2 -v | head -1)" "$(wrk -v 2>&1 | head -1)" \
  "$DELAYS" <<'PY'
import json, os, statistics, sys
(res, d, reps, seed, duration, clients, modes, disk, verify, wall, up0, up1, apache_v, wrk_v, delays) = sys.argv[1:]
delays = [int(x) for x in delays.split()]
reps, clients, modes = int(reps), [int(c) for c in clients.split()], modes.split()
rows = [l.split() for l in open(res) if l.strip()]
gen = json.load(open(os.path.join(d, "gen", "stats.json")))
PAPER = {"read": 29, "mmap": 71, "mixed": 59}
PAPER_MIXED_MB_S = (2.2, 3.5)
TITLE = {"read": "read: EnableMMAP Off, page cache with the kernel's read-ahead (paper: read)",
         "mmap": "mmap: EnableMMAP On, --readahead 0, a disk read a page (paper: mmap)",
         "mixed": "mixed: EnableMMAP On (under 4 MiB; read() above), page cache and read-around (paper: default)"}

def runs(mode, sched, c, threads=None):
    t = str(threads or 2 * c)
    return [r for r in rows if r[0] == mode and r[1] == sched and r[2] == str(c) and r[13] == t]
sys.path.insert(0, os.environ["BENCH_DIR"])
from report import med, gain, pct  # noqa: E402
def sim(name):
    p = os.path.join(d, "sim", name)
    if not os.path.exists(p):
        return None
    return {r["scheduler"]: r["throughput_mb_s"] for r in json.load(open(p))["runs"]}

def trace_figures(path):
    """From a blkparse recording (a Q and a C line a request): the mean request size; the share
    of a process's requests that start where its previous one ended (a file continued); of
    those, the share issued before the previous one completed (read-ahead in flight, so the
    disk is not left idle); and the median time from a completion to the same process's next
    request, before a continuing read (negative: issued before)."""
    reqs, issued = {}, {}
    for line in open(path):
        f = line.split()
        if len(f) < 10 or f[5] not in ("Q", "C"):
            continue
        t, key = float(f[3]), (int(f[7]), int(f[9]))
        if f[5] == "Q":
            issued[key] = (t, f[4])
        elif key in issued:
            q, ctx = issued.pop(key)
            reqs.setdefault(ctx, []).append((q, t, key[0], key[1]))
    n = cont = overlap = size = 0
    gaps = []
    for rs in reqs.values():
        rs.sort()
        for prev, r in zip([None] + rs[:-1], rs):
            n += 1
            size += r[3] * 512
            if prev and r[2] == prev[2] + prev[3]:
                cont += 1
                overlap += r[0] < prev[1]
                gaps.append((r[0] - prev[1]) * 1e6)
    waits = [g for g in gaps if g > 0]
    return {"requests": n, "mean_kib": size / max(1, n) / 1024, "continuing_pct": cont / max(1, n) * 100,
            "continuing_in_flight_pct": overlap / max(1, cont) * 100, "median_think_continuing_us": med(gaps),
            "mean_think_continuing_after_us": statistics.mean(waits) if waits else None}

def anticipation(mode, c):
    """The as-aged-sptf runs' anticipation, from their mount statistics: waits a second, the
    share that the process's next request ended (hits), the mean wait and the share of the
    run the disk spent waiting."""
    st = [json.load(open(os.path.join(d, "stats", f"{mode}-as-aged-sptf-{c}-{r}.json")))["runs"][0]
          for r in range(1, reps + 1)]
    a = [x["anticipation"] for x in st]
    return {"waits_per_s": med([x["waits"] / s["duration_s"] for x, s in zip(a, st)]),
            "hits_pct": med([x["hits"] / max(1, x["waits"]) * 100 for x in a]),
            "mean_wait_us": med([x["waited_ms"] * 1000 / max(1, x["waits"]) for x in a]),
            "waiting_share_pct": med([x["waited_ms"] / 10 / s["duration_s"] for x, s in zip(a, st)])}

default_name = next((r[8] for r in rows if r[1] == "default"), "?")
out = {"disk": disk, "seed": int(seed), "reps": reps, "duration_s": int(duration), "clients": clients,
       "apache": apache_v, "wrk": wrk_v, "workload": gen, "default_scheduler": default_name,
       "paper_gain_pct": PAPER, "paper_mixed_mb_s": PAPER_MIXED_MB_S, "modes": {},
       "wall_s": float(wall), "uptime_start": up0.strip(), "uptime_end": up1.strip(), "verify": verify}
fs, rl = gen["file_set"], gen["request_list"]
print()
print(f"Apache on an antsched mount, {disk}: {apache_v.split(': ')[-1]} prefork, {gen['files']} files "
      f"({gen['file_bytes'] / 1048576:.0f} MiB; seed {seed}), wrk keep-alive, {duration} s a run, median of {reps}")
print(f"files: median {fs['median_bytes']:.0f} B, mean {fs['mean_bytes'] / 1000:.1f} KB, "
      f"{fs['mean_without_top5_bytes'] / 1000:.1f} KB without the largest 5%; request list: median "
      f"{rl['median_bytes']:.0f} B, mean {rl['mean_bytes'] / 1000:.1f} KB, {rl['mean_without_top5_bytes'] / 1000:.1f} KB; "
      f"1,000 requests touch {gen['distinct_in_1000']:.0f} files")
print("(paper: median 4,768 B, mean 86 KB, 13 KB without the largest 5%; 1,000 requests touch 745 files)")
for mode in modes:
    print(f"\n{TITLE[mode]}:")
    print(f"{'clients':>7} {'scheduler':<27} {'MB/s':>6} {'req/s':>7} {'gain':>6} {'req':>5} {'disk MB/s':>9} "
          f"{'disk busy':>9} {'KiB/read':>8} {'sim MB/s':>8} {'sim gain':>8} {'replay':>7} {'paper':>6}")
    m = out["modes"][mode] = {}
    for c in clients:
        mc = m[str(c)] = {}
        s_job = sim(f"{mode}-{c}.json")
        s_tr = sim(f"trace-{mode}-{c}.json")
        tf = trace_figures(os.path.join(d, "traces", f"{mode}-{c}.blk"))
        base = base_req = None
        for s in ("aged-sptf", "as-aged-sptf", "default"):
            rs = runs(mode, s, c)
            mbs = [int(r[6]) / float(r[4]) / 1e6 for r in rs]
            rps = [int(r[5]) / float(r[4]) for r in rs]
            dmbs = [int(r[9]) / float(r[4]) / 1e6 for r in rs]
            util = [float(r[11]) for r in rs]
            kib = [int(r[9]) / max(1, int(r[10])) / 1024 for r in rs]
            mb, rq = med(mbs), med(rps)
            if s == "aged-sptf":
                base, base_req = mb, rq
            g = gain(base, mb) if s != "aged-sptf" else None
            gr = gain(base_req, rq) if s != "aged-sptf" else None
            simv = s_job.get(s) if s_job else None
            sg = gain(s_job["aged-sptf"], s_job["as-aged-sptf"]) if s_job and s == "as-aged-sptf" else None
            trg = gain(s_tr["aged-sptf"], s_tr["as-aged-sptf"]) if s_tr and s == "as-aged-sptf" else None
            label = s if s != "default" else f"default ({default_name})"
            paper = f"+{PAPER[mode]}%" if s == "as-aged-sptf" else ""
            print(f"{c:>7} {label:<27} {mb:6.2f} {rq:7.1f} {pct(g) if s != 'aged-sptf' else '':>6} {pct(gr) if s != 'aged-sptf' else '':>5} {med(dmbs):9.2f} "
                  f"{med(util):9.2f} {med(kib):8.1f} {(f'{simv:.2f}' if simv else '-'):>8} "
                  f"{(pct(sg) if sg is not None else ''):>8} {(pct(trg) if trg is not None else ''):>7} {paper:>6}")
            mc[s] = {"mb_s": mb, "req_s": rq, "gain_pct": g, "req_gain_pct": gr, "disk_mb_s": med(dmbs),
                     "disk_utilization": med(util), "disk_kib_per_read": med(kib), "runs_mb_s": mbs,
                     "runs_req_s": rps, "sim_mb_s": simv}
        mc["sim_gain_pct"] = gain(s_job["aged-sptf"], s_job["as-aged-sptf"]) if s_job else None
        mc["replay_mb_s"] = s_tr
        mc["replay_gain_pct"] = gain(s_tr["aged-sptf"], s_tr["as-aged-sptf"]) if s_tr else None
        mc["recorded_aged_sptf"] = tf
        an = mc["anticipation_as_aged_sptf"] = anticipation(mode, c)
        mt = tf["mean_think_continuing_after_us"]
        print(f"{'':>7} recorded (aged-sptf): {tf['requests']} reads of {tf['mean_kib']:.1f} KiB mean; "
              f"{tf['continuing_pct']:.0f}% continue the process's previous read, {tf['continuing_in_flight_pct']:.0f}% of "
              f"those issued before it completed; from its completion median {tf['median_think_continuing_us'] or 0:.0f} us"
              + (f", mean {mt:.0f} us of those after" if mt else ""))
        print(f"{'':>7} as-aged-sptf anticipation: {an['waits_per_s']:.0f} waits a second, {an['hits_pct']:.0f}% ended by "
              f"the process's next request, mean wait {an['mean_wait_us']:.0f} us, the disk waiting {an['waiting_share_pct']:.0f}% of the run")
print("\n(MB/s and req/s: wrk's bytes and completed requests over its run; gain, req: as-aged-sptf or the default")
print(" over aged-sptf in MB/s and in req/s; disk MB/s, disk busy, KiB/read: what reached the emulated disk; sim: antsched sim of")
print(" bench/apache.fio for the mode (the mixed mode has no job of its own); replay: the requests the mount")
print(" recorded in the first aged-sptf run, replayed closed-loop under both schedulers; paper: SOSP 2001, 4.4)")
if "mmap" in modes:
    print("sim gain of bench/apache.fio (mmap) by the time from a page's completion to the next fault reaching the disk")
    print("(antsched_issue_delay; the job file: 50 us):")
    for c in clients:
        sw = {us: sim(f"mmap-{c}-delay-{us}.json") for us in delays}
        out["modes"]["mmap"][str(c)]["sim_gain_by_issue_delay_us"] = {
            str(us): gain(v["aged-sptf"], v["as-aged-sptf"]) for us, v in sw.items()}
        print(f"  {c} clients: " + ", ".join(f"{us} us {pct(gain(v['aged-sptf'], v['as-aged-sptf']))}" for us, v in sw.items()))
if "mixed" in modes:
    mx = out["modes"]["mixed"]
    print("paper, default mode: 2.2 -> 3.5 MB/s; here " + "; ".join(
        f"{c} clients {mx[str(c)]['aged-sptf']['mb_s']:.2f} -> {mx[str(c)]['as-aged-sptf']['mb_s']:.2f} MB/s"
        for c in clients))
check = [r for r in rows if int(r[13]) != 2 * int(r[2])]
if check:
    c, t = int(check[0][2]), int(check[0][13])
    a = [int(r[6]) / float(r[4]) / 1e6 for r in runs("mixed", "aged-sptf", c, t)]
    b = [int(r[6]) / float(r[4]) / 1e6 for r in runs("mixed", "as-aged-sptf", c, t)]
    ta = out["modes"]["mixed"][str(c)]
    if a and b:
        print(f"\nthe mount's default {t} FUSE threads instead of {2 * c}, {c} clients, mixed, one run each: aged-sptf "
              f"{a[0]:.2f} MB/s, as-aged-sptf {b[0]:.2f} MB/s ({pct(gain(a[0], b[0]))}); with {2 * c} threads (above) "
              f"{ta['aged-sptf']['mb_s']:.2f} and {ta['as-aged-sptf']['mb_s']:.2f} MB/s")
        out["threads_check"] = {"clients": c, "threads": t, "mode": "mixed", "aged_sptf_mb_s": a[0],
                                "as_aged_sptf_mb_s": b[0], "gain_pct": gain(a[0], b[0])}
print(f"\nintegrity: {verify}")
print(f"wall time {float(wall) / 60:.1f} min; load at start: {up0.split('load average: ')[-1]}; at end: {up1.split('load average: ')[-1]}")
json.dump(out, open(os.path.join(d, "apache.json"), "w"), indent=1)
print(f"(figures in {os.path.join(d, 'apache.json')}; each run's mount statistics in {os.path.join(d, 'stats')}, "
      f"wrk's output in {os.path.join(d, 'wrk')}, the recorded requests in {os.path.join(d, 'traces')})")
PY
[ "${VERIFY#MISMATCH}" = "$VERIFY" ]
