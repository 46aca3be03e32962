#!/usr/bin/env bash
# The Andrew benchmark's scan phase (SOSP 2001, section 4.3) on an antsched mount: two
# clients, each with its own repository of N directories of 71 small C source files; one
# process runs `grep -r` over one repository while another runs `wc` over the other, through
# read(2) with the kernel's page cache and read-ahead (cold: a fresh mount, caches dropped).
# Timed under aged-sptf and as-aged-sptf on the emulated Deskstar 34GXP; then every file is
# read through the mount again and its SHA-256 compared with the backing file's. Prints the
# phase times and the ratio (the paper: 54% shorter). A minute or two.
#
#   sudo bench/scan.sh [DIRS]      (DIRS per repository, default 20)
source "$(dirname "$0")/lib.sh"
need grep wc sha256sum python3
DIRS=${1:-20}
DISK=deskstar-34gxp
B="$WORK/scan/backing"
M="$WORK/scan/mnt"

# Two repositories of DIRS directories x 71 files of C-like text, 1 to 16 KiB (a few KiB
# typical), deterministic. Made directly in the backing directory, so the mount lays each
# repository's files out directory by directory, one repository after the other.
if [ "$(cat "$WORK/scan/made" 2>/dev/null)" != "$DIRS" ]; then
  rm -rf "$B"
  mkdir -p "$B"
  for r in 1 2; do
    awk -v root="$B/repo$r" -v dirs="$DIRS" -v seed="$r" 'BEGIN {
      srand(seed)
      for (d = 0; d < dirs; d++) {
        dir = sprintf("%s/dir%03d", root, d)
        system("mkdir -p " dir)
        for (f = 0; f < 71; f++) {
          file = sprintf("%s/file%02d.c", dir, f)
          size = int(1024 + 15360 * rand() * rand())
          n = 0
          printf "#include <stdio.h>\n/* %s */\n", file > file
          while (n < size) {
            line = sprintf("static int f%d_%d(int x) { return x * %d + %d; }\n", f, n, int(rand() * 1000), int(rand() * 100000))
            printf "%s", line > file
            n += length(line)
          }
          close(file)
        }
      }
    }'
  done
  echo "$DIRS" > "$WORK/scan/made"
fi
FILES=$(find "$B" -type f | wc -l)
BYTES=$(du -sb "$B" | cut -f1)

# Each run: caches dropped, then the backing tree read into the host's page cache, so that
# only the emulated disk is timed (a cold backing file system would add its own latency to
# every open and lookup, which the mount passes through untimed); the mount itself starts
# cold, as every new mount does.
warm() { drop_caches; find "$B" -type f -print0 | xargs -0 cat > /dev/null; }

declare -A T
for s in aged-sptf as-aged-sptf; do
  warm
  mount_with "$B" "$M" "$s" --disk "$DISK"
  t0=$(now)
  grep -r -c include "$M/repo1" > /dev/null &
  g=$!
  find "$M/repo2" -type f -print0 | xargs -0 wc > /dev/null &
  w=$!
  wait $g
  wait $w
  t1=$(now)
  T[$s]=$(calc "$t1 - $t0")
  unmount_saving "$WORK/scan-$s.stats.json"
done

# Integrity: every file, read through a fresh mount from a cold cache, against the backing
# file's SHA-256.
warm
mount_with "$B" "$M" as-aged-sptf --disk "$DISK"
(cd "$B" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > "$WORK/scan-backing.sha256"
(cd "$M" && find . -path ./.antsched -prune -o -type f -print0 | sort -z | xargs -0 sha256sum) > "$WORK/scan-mount.sha256"
unmount_saving "$WORK/scan-verify.stats.json"
if cmp -s "$WORK/scan-backing.sha256" "$WORK/scan-mount.sha256"; then
  VERIFY="all $FILES files read through the mount have the backing files' SHA-256"
else
  VERIFY="MISMATCH: see diff $WORK/scan-backing.sha256 $WORK/scan-mount.sha256"
fi

echo
echo "Andrew scan phase on antsched mount, $DISK: grep -r over one repository, wc over the other"
echo "($FILES files in 2 x $DIRS directories, $BYTES bytes; page cache and read-ahead, cold)"
printf '%-14s %10s %12s\n' scheduler "time s" "mount MB/s"
for s in aged-sptf as-aged-sptf; do
  printf '%-14s %10s %12.2f\n' "$s" "${T[$s]}" "$(run_mb_s "$WORK/scan-$s.stats.json")"
done
echo "as-aged-sptf takes $(calc "(1 - ${T[as-aged-sptf]} / ${T[aged-sptf]}) * 100")% less time than aged-sptf ($(calc "${T[aged-sptf]} / ${T[as-aged-sptf]}")x faster; the paper: 54% less)"
echo "integrity: $VERIFY"
[ "${VERIFY#MISMATCH}" = "$VERIFY" ]
