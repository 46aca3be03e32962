#!/usr/bin/env bash
# TPC-B (thesis section 9.6; SOSP 2001 section 4.5) with PostgreSQL's pgbench on an antsched
# mount: a private postgres instance whose data directory lies on the emulated Deskstar 34GXP,
# with two clients, under aged-sptf, as-aged-sptf and the mount's default scheduler.
#
# - The paper ran MySQL with 4 KB records and a 780 MB database against 128 MB of RAM. Here:
#   pgbench at scale PGBENCH_SCALE (default 6: 600,000 accounts) with fillfactor 10, so the
#   accounts table holds about six rows per 8 KiB page and is about 780 MiB, as the paper's;
#   shared_buffers 4 MB, and the mount's --direct-io, so no page cache of the host holds the
#   databases and every page postgres asks for beyond its 4 MB comes from the emulated disk
#   (the index of a database, 13 MiB, does not fit either: a transaction reads an index page
#   and a heap page, at places hundreds of MiB apart; an update's dirty page is written later,
#   mostly by postgres's background writer, when its buffer is needed).
# - Four variants, as in the paper: "update" is pgbench's standard TPC-B-like transaction
#   (synchronous_commit off, so commits do not wait for the log: a read, and a write later, as
#   the paper's updates); "select" is pgbench -S (one primary-key SELECT). "one": two clients
#   on one database (pgbench -c 2); "two": two databases, one client (pgbench process) each.
#   Each postgres backend is its own process, so the mount (--context tgid) sees each client
#   as a scheduling context.
# - The cluster (databases db1 and db2) is initialised once with pgbench -i outside the mount
#   and kept in $ANTSCHED_BENCH_DIR/pgbench/init; before every timed run the backing directory
#   is brought back to that state (files whose size or time changed are compared and their
#   changed blocks copied back), so each run starts from the same files.
# - The mount lays the data directory out in name order: base/<db1>/ (with the sparse file
#   zz-gap last), then base/<db2>/, then the log (pg_wal). zz-gap is empty for the main table,
#   so the two databases lie side by side; the distance between them is swept afterwards
#   (PGBENCH_DISTANCES, MiB; one run a point of the "two" variants under aged-sptf and
#   as-aged-sptf).
# - Every run: restore, mount (fresh, nothing cached), start postgres (cold shared_buffers),
#   the clients for SECONDS, stop postgres (immediate: its shutdown checkpoint is not timed
#   and the next run restores anyway), unmount. A result is transactions per second (the
#   clients' sum of pgbench's figure without connection time), the median of REPS runs.
# - The simulator runs bench/pgbench-{select,update}-{one,two}.fio (the variants' access
#   patterns as job files) under both schedulers, at each distance, and replays the two
#   client backends' requests the mount recorded in the first aged-sptf run of each variant.
# - Finally, with postgres stopped, every file of the data directory is read through a fresh
#   mount and its SHA-256 compared with the backing file's.
# Prints the tables and writes the figures to $ANTSCHED_BENCH_DIR/pgbench/pgbench.json.
# About 16 minutes with the defaults.
#
#   sudo bench/pgbench.sh [REPS] [SECONDS]   (REPS 1 to 20, default 3; SECONDS 5 to 600 a run,
#                                             default 15)
#   PGBENCH_DISTANCES="4096 16384" (MiB between the databases for the sweep; "" skips it)
#   PGBENCH_SCALE=6 (pgbench scale of each database; 1 is about 130 MiB at fillfactor 10)
#   PGBENCH_PORT=54329 (the private instance's port; its socket is in a scratch directory)
#   PGBENCH_BUFFERS=4MB (postgres's shared_buffers)
#   PGBENCH_PREWARM=1 (before the clients start, read each database's accounts index into the
#                      buffers with an index-only scan, so that with PGBENCH_BUFFERS=64MB a
#                      transaction reads only its table page from the disk, as the paper's
#                      MySQL with its index in memory may have)
set -euo pipefail

REPS=${1:-3}
DUR=${2:-15}
DISTANCES=${PGBENCH_DISTANCES-4096 16384}
SCALE=${PGBENCH_SCALE:-6}
PORT=${PGBENCH_PORT:-54329}
FILLFACTOR=10
BUFFERS=${PGBENCH_BUFFERS:-4MB}
PREWARM=${PGBENCH_PREWARM:-0}
if ! [[ $REPS =~ ^[0-9]+$ ]] || [ "$REPS" -lt 1 ] || [ "$REPS" -gt 20 ]; then
  echo "bench/pgbench.sh: REPS must be a whole number from 1 to 20, not '$REPS'" >&2; exit 2
fi
if ! [[ $DUR =~ ^[0-9]+$ ]] || [ "$DUR" -lt 5 ] || [ "$DUR" -gt 600 ]; then
  echo "bench/pgbench.sh: SECONDS must be a whole number from 5 to 600, not '$DUR'" >&2; exit 2
fi
if ! [[ $SCALE =~ ^[0-9]+$ ]] || [ "$SCALE" -lt 1 ] || [ "$SCALE" -gt 100 ]; then
  echo "bench/pgbench.sh: PGBENCH_SCALE must be a whole number from 1 to 100, not '$SCALE'" >&2; exit 2
fi
if ! [[ $PORT =~ ^[0-9]+$ ]] || [ "$PORT" -lt 1024 ] || [ "$PORT" -gt 65535 ]; then
  echo "bench/pgbench.sh: PGBENCH_PORT must be a port from 1024 to 65535, not '$PORT'" >&2; exit 2
fi
if ! [[ $BUFFERS =~ ^[0-9]+[kMG]B$ ]]; then
  echo "bench/pgbench.sh: PGBENCH_BUFFERS is postgres's shared_buffers, as 4MB or 512kB, not '$BUFFERS'" >&2; exit 2
fi
if ! [[ $PREWARM =~ ^[01]$ ]]; then
  echo "bench/pgbench.sh: PGBENCH_PREWARM is 0 or 1, not '$PREWARM'" >&2; exit 2
fi
for d in $DISTANCES; do
  if ! [[ $d =~ ^[0-9]+$ ]] || [ "$d" -gt 30000 ]; then
    echo "bench/pgbench.sh: PGBENCH_DISTANCES holds MiB from 0 to 30000 (the disk is 34.2 GB), not '$d'" >&2; exit 2
  fi
done
[ "$(id -u)" -eq 0 ] || { echo "bench/pgbench.sh: run as root (installing, mounting, running postgres as its user)" >&2; exit 2; }

# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"

# What the benchmark needs from the distribution, installed if missing.
# (Nothing, and success, before postgresql is installed: find fails on the missing directory,
# which pipefail would make this assignment's failure and set -e the script's silent exit.)
pgbin() { find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin 2>/dev/null | sort -V | tail -1 || true; }
missing=()
PGBIN=$(pgbin)
[ -n "$PGBIN" ] && [ -x "$PGBIN/pgbench" ] && [ -x "$PGBIN/pg_ctl" ] || missing+=(postgresql)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
command -v fusermount3 >/dev/null 2>&1 || missing+=(fuse3)
command -v mountpoint >/dev/null 2>&1 || missing+=(util-linux)
install_missing "${missing[@]}"
PGBIN=$(pgbin)
id postgres >/dev/null 2>&1 || { echo "bench/pgbench.sh: no postgres user (the postgresql package makes it)" >&2; exit 2; }

need python3 sha256sum truncate cmp runuser
PGVERSION=$("$PGBIN/postgres" --version | sed -n 's/^postgres (PostgreSQL) \([^ ]*\).*/PostgreSQL \1/p')
DISK=deskstar-34gxp
D="$WORK/pgbench"
INIT="$D/init"       # the initialised cluster every run starts from
B="$D/backing"       # what the mount shows: INIT's files, restored before each run
SCRATCH=$(mktemp -d /tmp/pgbench-XXXXXX)
chmod 755 "$SCRATCH"
M="$SCRATCH/mnt"
SOCK="$SCRATCH/sock"
LOGDIR="$SCRATCH/log"
mkdir -p "$D" "$SOCK" "$LOGDIR"
chown postgres: "$SOCK" "$LOGDIR"
VARIANTS=(update-one update-two select-one select-two)
SCHEDS=(aged-sptf as-aged-sptf default)

# As the postgres user, from a directory it may read.
as_pg() { (cd / && runuser -u postgres -- "$@"); }
psql_q() { as_pg "$PGBIN/psql" -h "$SOCK" -p "$PORT" -X -q -At "$@"; }

# Cleanup on success, failure and Ctrl-C: the clients, postgres (before its files' mount
# goes), the mount (lib.sh's cleanup), the scratch directory. INIT and B stay for the next run.
CLIENT_PIDS=()
PG_DATA=""
stop_postgres() {
  [ -n "$PG_DATA" ] || return 0
  local pid
  pid=$(head -1 "$PG_DATA/postmaster.pid" 2>/dev/null || true)
  as_pg "$PGBIN/pg_ctl" -D "$PG_DATA" -m immediate -w -t 60 stop >/dev/null 2>&1 || true
  if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
    kill -QUIT "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  PG_DATA=""
}
pg_cleanup() {
  local p
  for p in "${CLIENT_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${CLIENT_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  CLIENT_PIDS=()
  stop_postgres
  cleanup
  if mountpoint -q "$M" 2>/dev/null; then umount -l "$M" || true; fi
  rm -rf "$SCRATCH"
}
trap pg_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_postgres() {   # DATADIR
  PG_DATA=$1
  if ! as_pg "$PGBIN/pg_ctl" -D "$PG_DATA" -o "-p $PORT -k $SOCK -c shared_buffers=$BUFFERS" -l "$LOGDIR/postgres.log" -w -t 120 start >/dev/null; then
    cat "$LOGDIR/postgres.log" >&2
    echo "bench/pgbench.sh: postgres did not start on $PG_DATA" >&2
    exit 1
  fi
}

# --- The cluster: initialised once per scale and postgres version. --------------------------
KEY="scale=$SCALE fillfactor=$FILLFACTOR $PGVERSION conf=2"
if [ "$(cat "$D/made" 2>/dev/null)" != "$KEY" ] || [ ! -s "$D/db1.oid" ]; then
  echo "bench/pgbench.sh: initialising two databases at scale $SCALE (pgbench -i, outside the mount)..." >&2
  rm -rf "$INIT" "$B" "$D/made"
  mkdir -p "$INIT"
  chmod 755 "$INIT"
  chown postgres: "$INIT"
  as_pg "$PGBIN/initdb" -D "$INIT/pgdata" -A trust -U postgres -E UTF8 --locale=C --no-sync >/dev/null
  # The run's settings: commits that do not wait for the log (the paper's delayed writes), no
  # autovacuum (the same work in every run), a small log. The port, the socket directory and
  # shared_buffers are given when it starts.
  cat >> "$INIT/pgdata/postgresql.conf" <<EOF

# bench/pgbench.sh
listen_addresses = ''
max_connections = 10
synchronous_commit = off
autovacuum = off
min_wal_size = 32MB
max_wal_size = 64MB
EOF
  # Loading runs without fsync; the setting is removed before any timed run.
  echo "fsync = off  # bench/pgbench.sh: loading only" >> "$INIT/pgdata/postgresql.conf"
  start_postgres "$INIT/pgdata"
  for db in db1 db2; do
    as_pg "$PGBIN/createdb" -h "$SOCK" -p "$PORT" "$db"
    as_pg "$PGBIN/pgbench" -h "$SOCK" -p "$PORT" -i -q -s "$SCALE" -F "$FILLFACTOR" "$db" >/dev/null 2>&1
  done
  psql_q -d postgres -c "SELECT oid FROM pg_database WHERE datname = 'db1'" > "$D/db1.oid"
  psql_q -d postgres -c "SELECT oid FROM pg_database WHERE datname = 'db2'" > "$D/db2.oid"
  psql_q -d db1 -c "CHECKPOINT"
  psql_q -d db1 -c "CHECKPOINT"
  as_pg "$PGBIN/pg_ctl" -D "$INIT/pgdata" -m fast -w stop >/dev/null
  PG_DATA=""
  sed -i '/^fsync = off/d' "$INIT/pgdata/postgresql.conf"
  # The gap between the databases: last among db1's files in name order.
  as_pg touch "$INIT/pgdata/base/$(cat "$D/db1.oid")/zz-gap"
  echo "$KEY" > "$D/made"
fi
OID1=$(cat "$D/db1.oid")
OID2=$(cat "$D/db2.oid")
GAP="pgdata/base/$OID1/zz-gap"
[ -d "$B" ] || { mkdir -p "$B"; chmod 755 "$B"; }

# restore: B becomes INIT again. A file whose size and modification time are INIT's is taken
# as unchanged (postgres changes the time of every file it writes); any other is compared
# block by block and its changed blocks written back; files INIT does not have are removed.
# The gap file is left to the caller.
restore() {
  python3 - "$INIT" "$B" "$GAP" <<'PY'
import os, shutil, sys
src, dst, gap = sys.argv[1:]
CHUNK = 1 << 16
keep = set()
for root, dirs, files in os.walk(src):
    rel = os.path.relpath(root, src)
    droot = os.path.join(dst, rel) if rel != "." else dst
    st = os.stat(root)
    if not os.path.isdir(droot):
        os.mkdir(droot)
    os.chown(droot, st.st_uid, st.st_gid)
    os.chmod(droot, st.st_mode & 0o7777)
    keep.add(os.path.normpath(droot))
    for f in files:
        s, d = os.path.join(root, f), os.path.join(droot, f)
        keep.add(os.path.normpath(d))
        if os.path.relpath(s, src) == gap:
            if not os.path.exists(d):
                shutil.copy2(s, d)
                os.chown(d, st.st_uid, st.st_gid)
            continue
        ss = os.stat(s)
        try:
            ds = os.lstat(d)
        except FileNotFoundError:
            ds = None
        if ds is not None and ds.st_size == ss.st_size and ds.st_mtime_ns == ss.st_mtime_ns:
            continue
        if ds is None or not os.path.isfile(d) or os.path.islink(d):
            if ds is not None:
                os.remove(d)
            shutil.copy2(s, d)
        else:
            with open(s, "rb") as a, open(d, "r+b") as b:
                off = 0
                while True:
                    x = a.read(CHUNK)
                    if not x:
                        break
                    b.seek(off)
                    y = b.read(len(x))
                    if x != y:
                        b.seek(off)
                        b.write(x)
                    off += len(x)
                b.truncate(off)
        os.chown(d, ss.st_uid, ss.st_gid)
        os.chmod(d, ss.st_mode & 0o7777)
        os.utime(d, ns=(ss.st_atime_ns, ss.st_mtime_ns))
for root, dirs, files in os.walk(dst, topdown=False):
    for n in files + dirs:
        p = os.path.normpath(os.path.join(root, n))
        if p not in keep:
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            else:
                os.remove(p)
PY
}

if [ "${PGBENCH_REPORT_ONLY:-0}" = 1 ]; then
for f in "$D/run.txt" "$D/results.tsv"; do
  [ -s "$f" ] || { echo "bench/pgbench.sh: PGBENCH_REPORT_ONLY=1 needs a finished run in $D, and $f is missing" >&2; exit 1; }
done
{ read -r REPS; read -r DUR; read -r DISTANCES; read -r VERIFY; read -r BUFFERS || true; read -r PREWARM || true; } < "$D/run.txt"
BUFFERS=${BUFFERS:-4MB}   # (a run.txt from before these were saved: the defaults then)
PREWARM=${PREWARM:-0}
RESULTS="$D/results.tsv"
else
rm -f "$D/run.txt"   # written again when this run finishes; a cut-short run has none
RESULTS="$D/results.tsv"
: > "$RESULTS"
mkdir -p "$D/stats" "$D/traces" "$D/out"

# run_case VARIANT SCHED GAP_MIB REP [TRACE]: one timed run on a fresh mount and a fresh
# postgres (with TRACE, the mount records every disk request, each with its process);
# appends "variant sched gap rep tps tps-client1 tps-client2 scheduler-name utilization
# disk-ios" to $RESULTS.
run_case() {
  local variant=$1 sched=$2 gap=$3 rep=$4 trace=${5:-} label p i
  label="$variant-$sched-$gap-$rep"
  restore
  truncate -s "${gap}M" "$B/$GAP"
  local opts=(--disk "$DISK" --direct-io --allow-other)
  [ -n "$trace" ] && opts+=(--record "$trace" --record-format blkparse --show-layout)
  if [ "$sched" = default ]; then
    mount_default "$B" "$M" "${opts[@]}"
  else
    mount_with "$B" "$M" "$sched" "${opts[@]}"
  fi
  start_postgres "$M/pgdata"
  local mode=() dbs=()
  case $variant in
    select-*) mode=(-S) ;;
  esac
  local pgb=("$PGBIN/pgbench" -h "$SOCK" -p "$PORT" -n -T "$DUR" "${mode[@]}")
  case $variant in
    *-one) dbs=(db1); pgb+=(-c 2) ;;
    *-two) dbs=(db1 db2) ;;
  esac
  if [ "$PREWARM" = 1 ]; then
    for i in "${dbs[@]}"; do
      psql_q -d "$i" -c "SET enable_seqscan = off" -c "SET enable_bitmapscan = off" \
        -c "SELECT count(*) FROM pgbench_accounts" > /dev/null
    done
  fi
  rm -f "$D/out/$label".*
  for i in "${!dbs[@]}"; do
    as_pg "${pgb[@]}" "${dbs[$i]}" > "$D/out/$label.$i" 2>&1 &
    CLIENT_PIDS+=($!)
  done
  for p in "${CLIENT_PIDS[@]}"; do
    if ! wait "$p"; then
      cat "$D/out/$label".* >&2
      echo "bench/pgbench.sh: pgbench failed in run $label" >&2
      exit 1
    fi
  done
  CLIENT_PIDS=()
  stop_postgres
  unmount_saving "$D/stats/$label.json"
  # Where each file lay (the mount prints it with --show-layout), to tell the recorded
  # requests' files apart.
  [ -n "$trace" ] && cp "$WORK/mount-$sched.out" "${trace%.blk}.layout"
  python3 - "$D/stats/$label.json" "$variant $sched $gap $rep" "$D/out/$label".* >> "$RESULTS" <<'PY'
import json, re, sys
run = json.load(open(sys.argv[1]))["runs"][0]
tps = []
for f in sys.argv[3:]:
    m = re.search(r"^tps = ([0-9.]+) \(without initial connection time\)", open(f).read(), re.M)
    if not m:
        sys.exit(f"bench/pgbench.sh: no tps in {f}")
    tps.append(float(m.group(1)))
while len(tps) < 2:
    tps.append(0.0)   # one pgbench process with two clients: its figure is both clients'
ios = sum(c["ios"] for c in run["contexts"])
print(sys.argv[2], f"{sum(tps):.2f}", f"{tps[0]:.2f}", f"{tps[1]:.2f}", run["scheduler"],
      f"{run['utilization']:.3f}", ios)
PY
  echo "  $label: $(tail -1 "$RESULTS" | cut -d' ' -f5) tps" >&2
}

# --- The main table: the databases side by side, REPS runs of each case. --------------------
for rep in $(seq "$REPS"); do
  for v in "${VARIANTS[@]}"; do
    for s in "${SCHEDS[@]}"; do
      if [ "$rep" -eq 1 ] && [ "$s" = aged-sptf ]; then
        run_case "$v" "$s" 0 "$rep" "$D/traces/$v.blk"
      else
        run_case "$v" "$s" 0 "$rep"
      fi
    done
  done
done

# --- The sweep: the distance between the databases. -----------------------------------------
for gap in $DISTANCES; do
  [ "$gap" -eq 0 ] && continue   # the main table's runs
  for v in update-two select-two; do
    for s in aged-sptf as-aged-sptf; do
      run_case "$v" "$s" "$gap" 1
    done
  done
done
: > "$B/$GAP"

# --- Integrity: every file of the data directory read through a fresh mount (postgres
# stopped), against its backing file's SHA-256. It holds the last run's changes. ------------
(cd "$B" && find pgdata -type f -print0 | sort -z | xargs -0 sha256sum) > "$D/backing.sha256"
mount_with "$B" "$M" as-aged-sptf --disk "$DISK" --readahead 1024
(cd "$M" && find pgdata -type f -print0 | sort -z | xargs -0 sha256sum) > "$D/mount.sha256"
unmount_saving "$D/stats/verify.json"
NFILES=$(wc -l < "$D/backing.sha256")
if cmp -s "$D/backing.sha256" "$D/mount.sha256"; then
  VERIFY="all $NFILES files of the data directory read through the mount have their backing files' SHA-256"
else
  VERIFY="MISMATCH: see diff $D/backing.sha256 $D/mount.sha256"
fi
printf '%s\n' "$REPS" "$DUR" "$DISTANCES" "$VERIFY" "$BUFFERS" "$PREWARM" > "$D/run.txt"

fi  # PGBENCH_REPORT_ONLY

# --- The simulator: the variants as job files, at each distance, and the recorded requests. -
mkdir -p "$D/sim"
SIM_SCHEDS=(--scheduler aged-sptf --scheduler as-aged-sptf)
# Where the second database starts in the job files (after the first's heap and index) and
# where bench/pgbench.sh's layout puts it: the sizes of db1's files.
DB1_MIB=$(du -sm --apparent-size --exclude=zz-gap "$INIT/pgdata/base/$OID1" | cut -f1)
for v in "${VARIANTS[@]}"; do
  job="$ROOT/bench/pgbench-$v.fio"
  [ -s "$job" ] || { echo "bench/pgbench.sh: $job is missing" >&2; exit 1; }
  sed "s/^runtime=.*/runtime=${DUR}s/" "$job" > "$D/sim/$v-0.fio"
  "$ANTSCHED" sim "$D/sim/$v-0.fio" --disk "$DISK" "${SIM_SCHEDS[@]}" --json "$D/sim/$v-0.json" > /dev/null
  case $v in *-two)
    for gap in $DISTANCES; do
      { cat "$D/sim/$v-0.fio"; echo "antsched_disk_offset=$((DB1_MIB + gap))m"; } > "$D/sim/$v-$gap.fio"
      "$ANTSCHED" sim "$D/sim/$v-$gap.fio" --disk "$DISK" "${SIM_SCHEDS[@]}" --json "$D/sim/$v-$gap.json" > /dev/null
    done ;;
  esac
  # The two client backends' requests (the two processes that made the most reads in the
  # second half of the recording, after postgres's start and any prewarming), so that the
  # replay's length is theirs and not that of postgres's start or its periodic writers.
  python3 - "$D/traces/$v.blk" > "$D/sim/trace-$v.blk" <<'PY'
import collections, sys
rows = [l.split() for l in open(sys.argv[1])]
issues = [f for f in rows if len(f) > 9 and f[5] == "Q"]
later = collections.Counter(f[4] for f in issues[len(issues) // 2:] if "R" in f[6])
clients = {ctx for ctx, _ in later.most_common(2)}
pending = collections.Counter()
for f in rows:
    if len(f) < 10 or f[5] not in ("Q", "C"):
        continue
    key = (f[0], f[7], f[9])
    if f[5] == "Q":
        if f[4] not in clients:
            continue
        pending[key] += 1
    elif pending[key] > 0:
        pending[key] -= 1
    else:
        continue
    print(" ".join(f))
PY
  "$ANTSCHED" sim --trace "$D/sim/trace-$v.blk" --replay closed --disk "$DISK" \
    "${SIM_SCHEDS[@]}" --json "$D/sim/trace-$v.json" > /dev/null
done

# --- Tables and JSON. ------------------------------------------------------------------------
BENCH_DIR="$ROOT/bench" python3 - "$RESULTS" "$D" "$DISK" "$REPS" "$DUR" "$SCALE" "$FILLFACTOR" "$VERIFY" "0 $DISTANCES" \
  "$PGVERSION" "$OID1" "$OID2" "$BUFFERS" "$PREWARM" <<'PY'
import bisect, collections, json, os, statistics, sys
res, d, disk, reps, dur, scale, ff, verify, distances, pgversion, oid1, oid2, buffers, prewarm = sys.argv[1:]
reps, dur, distances = int(reps), int(dur), [int(x) for x in distances.split()]
rows = [l.split() for l in open(res) if l.strip()]
VARIANTS = [("update-one", "update, same DB", 2), ("update-two", "update, two DBs", 30),
            ("select-one", "select, same DB", 5), ("select-two", "select, two DBs", 60)]
SCHEDS = ["aged-sptf", "as-aged-sptf", "default"]

def col(v, s, gap, k):
    return [float(r[k]) for r in rows if r[:3] == [v, s, str(gap)]]
sys.path.insert(0, os.environ["BENCH_DIR"])
from report import med, gain, pct  # noqa: E402
def sim(name):
    runs = json.load(open(os.path.join(d, "sim", name)))["runs"]
    return {r["scheduler"]: r for r in runs}
def sim_gain(name):
    # The clients' I/Os in the same time (the write-back daemon's delayed writes left out).
    r = sim(name)
    ios = {s: sum(c["ios"] for c in r[s]["contexts"] if c["name"].startswith("client")) for s in r}
    return gain(ios["aged-sptf"], ios["as-aged-sptf"])
def trace_gain(name):
    r = sim(name)   # the same requests: the gain is in the time they take
    return gain(1 / r["aged-sptf"]["duration_s"], 1 / r["as-aged-sptf"]["duration_s"])

def trace_stats(path):
    """From a recorded trace: its reads and writes; the median time from a completion to the
    same process's next request (us); and, for the two client backends (the two processes
    that made the most reads in the second half of the recording), the share of the writes
    they made, the median distance on the disk (MiB) from each of their requests to the same
    client's previous one and to the other client's latest one, and the share of their
    requests that went to an accounts table and to its index (in each database directory,
    the largest file and the second largest, from the layout the mount printed)."""
    pending, done, gaps, kinds = {}, {}, [], {"R": 0, "W": 0}
    rows = [l.split() for l in open(path)]
    for f in rows:
        if len(f) < 10 or f[5] not in ("Q", "C"):
            continue
        t, key = float(f[3]), (f[7], f[9])
        if f[5] == "Q":
            ctx = f[4]
            kinds["W" if "W" in f[6] else "R"] += 1
            if ctx in done:
                gaps.append((t - done.pop(ctx)) * 1e6)
            pending[key] = ctx
        elif key in pending:
            done[pending.pop(key)] = t
    issues = [f for f in rows if len(f) > 9 and f[5] == "Q"]
    later = collections.Counter(f[4] for f in issues[len(issues) // 2:] if "R" in f[6])
    clients = [c for c, _ in later.most_common(2)]
    layout = []
    for line in open(path[:-len(".blk")] + ".layout"):
        x = line.split()
        if len(x) == 4 and x[0].isdigit() and x[1].isdigit() and x[2].isdigit():
            layout.append((int(x[0]), int(x[0]) + int(x[1]), int(x[2]), x[3]))
    kind = {}
    for db in {os.path.dirname(p) for *_, p in layout if p.startswith("pgdata/base/")}:
        files = sorted((size, p) for _, _, size, p in layout if os.path.dirname(p) == db)
        kind[files[-1][1]], kind[files[-2][1]] = "heap", "index"
    layout.sort()
    starts = [e[0] for e in layout]
    def what(sector):
        i = bisect.bisect_right(starts, sector) - 1
        return kind.get(layout[i][3], "other") if i >= 0 and sector < layout[i][1] else "other"
    last, own, other, where = {}, [], [], collections.Counter()
    client_writes = sum(1 for f in issues if f[4] in clients and "W" in f[6])
    for f in issues:
        c, sector = f[4], int(f[7])
        if c not in clients:
            continue
        where[what(sector)] += 1
        o = clients[1] if c == clients[0] else clients[0]
        if c in last:
            own.append(abs(sector - last[c]) * 512 / 2**20)
        if o in last:
            other.append(abs(sector - last[o]) * 512 / 2**20)
        last[c] = sector
    med_or_none = lambda xs: statistics.median(xs) if xs else None
    n = max(1, sum(where.values()))
    return {"reads": kinds["R"], "writes": kinds["W"], "median_think_us": med_or_none(gaps),
            "client_writes_pct": 100 * client_writes / max(1, kinds["W"]),
            "client_heap_pct": 100 * where["heap"] / n, "client_index_pct": 100 * where["index"] / n,
            "median_mib_to_own_previous": med_or_none(own), "median_mib_to_other_client": med_or_none(other)}

default_name = next((r[7] for r in rows if r[1] == "default"), "?")
db_mib = {oid: sum(os.path.getsize(os.path.join(d, "init", "pgdata", "base", oid, f))
                   for f in os.listdir(os.path.join(d, "init", "pgdata", "base", oid)) if f != "zz-gap") / 2**20
          for oid in (oid1, oid2)}
out = {"disk": disk, "postgres": pgversion, "scale": int(scale), "fillfactor": int(ff),
       "db_mib": [round(db_mib[oid1]), round(db_mib[oid2])], "shared_buffers": buffers, "prewarmed_index": prewarm == "1", "reps": reps,
       "seconds": dur, "default_scheduler": default_name, "variants": {}, "sweep": [], "verify": verify}
print()
print(f"TPC-B (pgbench, {pgversion}) on antsched mount (--direct-io), {disk}: "
      f"two clients; scale {scale}, fillfactor {ff}: {db_mib[oid1]:.0f} MiB a database;")
print(f"shared_buffers {buffers}{' (index read in first)' if prewarm == '1' else ''}; synchronous_commit off; {dur} s a run from a fresh postgres; "
      f"median of {reps} runs; transactions per second (both clients)")
hdr = f"{'variant':<17} {'aged-sptf':>10} {'as-aged-sptf':>13} {'default':>9} {'gain':>7} {'default':>8} {'sim job':>8} {'sim trace':>10} {'paper':>6}"
print(hdr)
for v, title, paper in VARIANTS:
    a, b, c = (med(col(v, s, 0, 4)) for s in SCHEDS)
    g, gd = gain(a, b), gain(a, c)
    sj, st = sim_gain(f"{v}-0.json"), trace_gain(f"trace-{v}.json")
    ts = trace_stats(os.path.join(d, "traces", f"{v}.blk"))
    print(f"{title:<17} {a:10.1f} {b:13.1f} {c:9.1f} {pct(g):>7} {pct(gd):>8} {pct(sj):>8} {pct(st):>10} {'+' + str(paper) + '%':>6}")
    out["variants"][v] = {
        "title": title, "paper_gain_pct": paper,
        "tps": {s: med(col(v, s, 0, 4)) for s in SCHEDS},
        "tps_runs": {s: col(v, s, 0, 4) for s in SCHEDS},
        "tps_per_client": {s: [med(col(v, s, 0, 5)), med(col(v, s, 0, 6))] for s in SCHEDS},
        "disk_utilization": {s: med(col(v, s, 0, 8)) for s in SCHEDS},
        "disk_requests": {s: med(col(v, s, 0, 9)) for s in SCHEDS},
        "gain_pct": g, "default_gain_pct": gd, "sim_job_gain_pct": sj, "sim_trace_gain_pct": st,
        "trace_aged_sptf": ts,
    }
print(f"(gain: as-aged-sptf over aged-sptf; default: the mount's default scheduler, {default_name}, over")
print(" aged-sptf; sim job: antsched sim bench/pgbench-VARIANT.fio; sim trace: the requests the mount")
print(" recorded of the two client backends in the first aged-sptf run, replayed closed-loop; paper: MySQL, section 9.6)")
print("\nper variant, aged-sptf | as-aged-sptf: disk busy, disk requests a transaction; recorded trace (aged-sptf):")
print("its reads and writes (the clients' share of the writes), the median think time, the clients' requests to the heap")
print("and the index of pgbench_accounts, and the median distance from a client's request to its own previous one | to")
print("the other client's latest")
for v, title, _ in VARIANTS:
    m = out["variants"][v]
    per_txn = []
    for s in ("aged-sptf", "as-aged-sptf"):
        n = m["disk_requests"][s]
        per_txn.append(n / (m["tps"][s] * dur) if m["tps"][s] else 0)
    t = m["trace_aged_sptf"]
    print(f"  {title:<17} busy {m['disk_utilization']['aged-sptf']:.2f} | {m['disk_utilization']['as-aged-sptf']:.2f}; "
          f"requests/txn {per_txn[0]:.2f} | {per_txn[1]:.2f};\n    trace: {t['reads']} reads, {t['writes']} writes "
          f"({t['client_writes_pct']:.0f}% by the clients), think {t['median_think_us']:.0f} us, heap {t['client_heap_pct']:.0f}%, "
          f"index {t['client_index_pct']:.0f}%, {t['median_mib_to_own_previous']:.0f} | {t['median_mib_to_other_client']:.0f} MiB")
    m["disk_requests_per_txn"] = {"aged-sptf": per_txn[0], "as-aged-sptf": per_txn[1]}

print(f"\ndistance between the databases (MiB of gap after db1's {db_mib[oid1]:.0f} MiB; real: one run a point, at 0 the medians above):")
print(f"{'MiB':>6} | {'update-two: aged':>16} {'as':>6} {'gain':>6} {'sim':>6} | {'select-two: aged':>16} {'as':>6} {'gain':>6} {'sim':>6}")
for g in distances:
    row = {"gap_mib": g}
    line = f"{g:6d}"
    for v in ("update-two", "select-two"):
        a, b = med(col(v, "aged-sptf", g, 4)), med(col(v, "as-aged-sptf", g, 4))
        sg = sim_gain(f"{v}-{g}.json")
        row[v] = {"aged_sptf_tps": a, "as_aged_sptf_tps": b, "gain_pct": gain(a, b), "sim_gain_pct": sg}
        line += (f" | {a:16.1f} {b:6.1f} {pct(gain(a, b)):>6} {pct(sg):>6}" if a and b
                 else f" | {'-':>16} {'-':>6} {'-':>6} {pct(sg):>6}")
    print(line)
    out["sweep"].append(row)
print(f"\nintegrity: {verify}")
json.dump(out, open(os.path.join(d, "pgbench.json"), "w"), indent=1)
print(f"(figures in {os.path.join(d, 'pgbench.json')}; each run's mount statistics in {os.path.join(d, 'stats')}, "
      f"pgbench's output in {os.path.join(d, 'out')}, the recorded requests in {os.path.join(d, 'traces')})")
PY
[ "${VERIFY#MISMATCH}" = "$VERIFY" ]
