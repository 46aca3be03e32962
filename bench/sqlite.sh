#!/usr/bin/env bash
# A database case after the paper's TPC-B "select, two databases" variant (section 4.5):
# two sqlite3 processes, each doing random primary-key SELECTs on its own database file, on
# an antsched mount with --direct-io (so no page cache holds the databases, however much
# memory the machine has: every page sqlite asks for comes from the emulated disk, as when
# the paper's 780 MB database met 128 MB of RAM). Records are about 3 KB, one per 4 KiB
# page, like the paper's 4 KB records. Timed under aged-sptf and as-aged-sptf on the
# emulated Deskstar 34GXP, caches dropped first. Both processes query for the same SECONDS
# and the queries each completed are counted (so the rate is that of two concurrent clients
# throughout, as the paper's transactions per second are). Prints the query rates and the
# ratio (the paper: +60%, 61 to 98 transactions per second). About a minute and a half.
#
#   sudo bench/sqlite.sh [ROWS] [SECONDS]   (rows per database, default 40000 (~160 MB);
#                                            seconds per scheduler, default 20)
source "$(dirname "$0")/lib.sh"
need sqlite3 stdbuf timeout
ROWS=${1:-40000}
SECONDS_EACH=${2:-20}
QUERIES=100000
DISK=deskstar-34gxp
B="$WORK/sqlite/backing"
M="$WORK/sqlite/mnt"

# The databases are made directly in the backing directory, so the mount lays them out one
# after the other.
if [ "$(cat "$WORK/sqlite/made" 2>/dev/null)" != "$ROWS" ]; then
  rm -rf "$B"
  mkdir -p "$B"
  for d in 1 2; do
    # (The journal_mode pragma answers "off" on stdout.)
    sqlite3 "$B/db$d.sqlite" >/dev/null <<SQL
PRAGMA page_size = 4096;
PRAGMA journal_mode = OFF;
CREATE TABLE account (id INTEGER PRIMARY KEY, balance INTEGER, filler BLOB);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $ROWS)
INSERT INTO account SELECT i, i * 7 % 1000, randomblob(3000) FROM n;
SQL
  done
  echo "$ROWS" > "$WORK/sqlite/made"
fi
# Each process's queries: random keys, fixed seeds, the same for both schedulers.
for d in 1 2; do
  awk -v n="$QUERIES" -v rows="$ROWS" -v seed="$d" 'BEGIN {
    srand(seed)
    for (q = 0; q < n; q++) printf "SELECT balance, length(filler) FROM account WHERE id = %d;\n", 1 + int(rand() * rows)
  }' > "$WORK/sqlite/queries$d.sql"
done

declare -A RATE P1 P2
for s in aged-sptf as-aged-sptf; do
  # Dropped caches, then the backing files read into the host's cache so that only the
  # emulated disk is timed; the mount has no page cache at all (--direct-io).
  drop_caches
  cat "$B"/db*.sqlite > /dev/null
  mount_with "$B" "$M" "$s" --disk "$DISK" --direct-io
  # Line-buffered output: one line per completed query, counted after the time is up.
  pids=()
  for d in 1 2; do
    timeout "$SECONDS_EACH" stdbuf -oL sqlite3 "$M/db$d.sqlite" < "$WORK/sqlite/queries$d.sql" \
      > "$WORK/sqlite-$s.out$d" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || true; done   # timeout ends them: status 124
  unmount_saving "$WORK/sqlite-$s.stats.json"
  P1[$s]=$(calc "$(wc -l < "$WORK/sqlite-$s.out1") / $SECONDS_EACH")
  P2[$s]=$(calc "$(wc -l < "$WORK/sqlite-$s.out2") / $SECONDS_EACH")
  RATE[$s]=$(calc "${P1[$s]} + ${P2[$s]}")
done

echo
echo "sqlite3 on antsched mount (--direct-io), $DISK: two processes, random primary-key SELECTs"
echo "on two databases of $ROWS rows ($(du -sh "$B" | cut -f1) in all), $SECONDS_EACH s each"
printf '%-14s %14s %18s\n' scheduler "queries/s" "per process"
for s in aged-sptf as-aged-sptf; do
  printf '%-14s %14s %18s\n' "$s" "${RATE[$s]}" "${P1[$s]} / ${P2[$s]}"
done
echo "as-aged-sptf serves $(calc "(${RATE[as-aged-sptf]} / ${RATE[aged-sptf]} - 1) * 100")% more queries per second than aged-sptf (the paper: +60%)"
