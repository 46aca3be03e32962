#!/usr/bin/env bash
# Memory nice (the thesis's section 4.5, Eqs. 4.5 to 4.7) with real programs: two identical
# cache programs (examples/zipf-cache: 4 KiB values over a catalogue of a million keys whose
# popularity is section 4.5.1's power law (the M most popular keys carry (M / keys)^(1 - alpha)
# of the asks, the law Eqs. 4.6 and 4.7 are worked out for; POPULARITY=zipf for Zipf's law,
# whose head the model leaves out: the table's top-M column then says by how much), alpha 0.8, a miss
# costs C_r, the cache is antsched-mem's AdaptiveCache priced by frequency as the simulator's)
# in one 256 MB memory group made by `antsched mem run --limit 256M`, governed by a private
# `antsched memd`, the first niced by eta = 1, 5 and 32. Measured over the second half of each
# run: each cache's mean size and hit rate. Against the model: the shares of Eq. 4.5
# (M2 / M1 = eta^(1/alpha)) and each cache's hit rate relative to the even split (eta = 1) of
# Eqs. 4.6 and 4.7; "within 15%" is |measured / model - 1| <= 0.15.
#
# Memory nice is an integer N with weight 2^(0.75 N): eta = 1, 5, 32 become N = 0, 3, 7
# (weights 1, 4.76, 38.1; the nearest N by log), and the model is evaluated at the weight used.
#
# Why a stream: the caches are anonymous memory and this machine has no swap, so the kernel
# cannot reclaim them; a group of caches alone has no page turnover, memd's candidate age is
# infinite and S stays at S_max until the OOM killer comes. A third process in the group
# (`zipf-cache stream`) reads a 512 MB file through the group's page cache at 2 MB/s in a loop:
# the pages the kernel reclaims when the caches grow, which give memd its candidate age.
#
# Scaled to settle in minutes (the thesis's S_max is an hour): memd runs with --s-max 60s and
# a 100 ms tick, and reminds a cache below S_max every 100 ms (--repeat; the thesis's 1 s scaled
# by 60 s / 3600 s is 17 ms, finer than the tick, which then bounds it; REPEAT=1s runs the
# unscaled repeat, under which a cache's release rounds come 60 times as seldom against the
# scaled S_max as the thesis's did); a miss costs C_r = 0.2 ms (a sleep); the cost rule's C_disk is 0.07 ms
# (--paging-disk-ms), chosen once, the same for every eta, so that two caches of nice 0 want
# more than the group holds: they are squeezed by the group as the model assumes (memory full,
# M1 + M2 = M_system), not by S_max (at the even split S averaged 28 s over the second half,
# at S_max 10% of the time). The caches fill the group in about 45 s; each run serves for
# DURATION s (default 180; the second half is measured), about 9.5 minutes in all with the
# build. The group's memory.swappiness is 0 (nice-group.sh): no cache is swapped even while
# another experiment has a swap area on.
#
#   sudo [POPULARITY=zipf] [REPEAT=1s] bench/mem/nice.sh [DURATION]
#
# Outputs in $ANTSCHED_BENCH_DIR/nice/ (default /tmp/antsched-bench/nice/): nice.json (every
# run's measurements and the model's figures), each program's JSON and timeline CSV. Cleans up
# (the group, memd, the temporary directory) on success, failure and Ctrl-C, by PID.
DURATION=${1:-180}
[[ "$DURATION" =~ ^[0-9]+([.][0-9]+)?$ ]] && [ "${DURATION%%.*}" -ge 10 ] ||
  { echo "nice: DURATION $DURATION: a number of seconds, at least 10" >&2; exit 2; }
source "$(dirname "$0")/lib.sh"

ALPHA=0.8
KEYS=1000000
POPULARITY=${POPULARITY:-power-law}
case "$POPULARITY" in power-law|zipf) ;; *)
  echo "nice: POPULARITY=$POPULARITY: power-law or zipf" >&2; exit 2 ;; esac
MISS_MS=0.2
PAGING_DISK_MS=0.07
S_MAX=60
REPEAT=${REPEAT:-100ms}
STREAM_MB_S=2
NICES=(0 3 7)   # eta = 1, 5, 32 as the nearest memory nice
FAILED=0

need_root
apt_install python3:python3
echo "nice: cargo build --release -p antsched-zipf-cache" >&2
(cd "$ROOT" && cargo build --release -q -p antsched-zipf-cache)
ZC="$ROOT/target/release/zipf-cache"

OUT="$WORK/nice"
mkdir -p "$OUT"
rm -f "$OUT"/*.json "$OUT"/*.csv "$OUT"/*.log
T=$(mktemp -d /tmp/antsched-nice.XXXXXX)
add_cleanup "rm -rf --one-file-system '$T'"
echo "nice: making a 512 MB file to stream through the group's page cache" >&2
dd if=/dev/urandom of="$T/stream.dat" bs=1M count=512 status=none
start_memd "$T/memd.sock" --interval 100ms --s-max "${S_MAX}s" --repeat "$REPEAT"

for n in "${NICES[@]}"; do
  echo "nice: memory nice $n (runs ${DURATION} s)" >&2
  status=0
  mem_run "$OUT/nice$n.memrun.log" --limit 256M --socket "$MEMD_SOCK" -- \
    "$ROOT/bench/mem/nice-group.sh" "$ANTSCHED" "$MEMD_SOCK" "$T/nice$n" "$ZC" "$T/stream.dat" \
    "$STREAM_MB_S" "$n" \
    --keys "$KEYS" --alpha "$ALPHA" --popularity "$POPULARITY" --miss-ms "$MISS_MS" --duration "$DURATION" \
    --s-max "$S_MAX" --paging-disk-ms "$PAGING_DISK_MS" || status=$?
  # A run that failed (137: the group's OOM killer) is reported as such; the others go on.
  echo "$status" > "$OUT/nice$n.status"
  for s in a b; do
    for f in json csv; do [ -f "$T/nice$n.$s.$f" ] && cp "$T/nice$n.$s.$f" "$OUT/nice$n-$s.$f"; done
    cat "$T/nice$n.$s.out" 2>/dev/null || true
  done
  [ "$status" -eq 0 ] || { echo "nice: memory nice $n failed (exit $status); see $OUT/nice$n.memrun.log" >&2; FAILED=1; }
done
cp "$WORK/memd.err" "$OUT/memd.log"
[ -f "$OUT/nice0-a.json" ] && [ -f "$OUT/nice0-b.json" ] ||
  { echo "nice: the even split (nice 0) has no measurements; nothing to compare with" >&2; exit 1; }

python3 - "$OUT" "$ALPHA" "$KEYS" "$MISS_MS" "$PAGING_DISK_MS" "$S_MAX" "$STREAM_MB_S" "$DURATION" "$POPULARITY" "$REPEAT" "${NICES[@]}" <<'PY'
import json, sys
out, alpha, keys = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
miss_ms, disk_ms, s_max, stream, duration = map(float, sys.argv[4:9])
popularity, repeat = sys.argv[9], sys.argv[10]
nices = [int(n) for n in sys.argv[11:]]
ETA = {0: 1, 3: 5, 7: 32}
def load(n, s):
    return json.load(open(f"{out}/nice{n}-{s}.json"))
def top_mass(m):
    # P(rank < m) for antsched_mem::sim::Zipf (the continuous inverse over [1, keys + 1) for
    # Zipf's law, over (0, keys] for the power law): the hit rate of a cache that holds exactly
    # the m most popular keys.
    m = max(0.0, min(m, keys))
    if popularity == "power-law":
        return (m / keys) ** (1 - alpha)
    return ((m + 1) ** (1 - alpha) - 1) / ((keys + 1) ** (1 - alpha) - 1)
values_per_mb = 1048576 / 4096
even_a, even_b = load(0, "a"), load(0, "b")
h_even = (even_a["second_half"]["hit_rate"] + even_b["second_half"]["hit_rate"]) / 2
m_even = (even_a["second_half"]["cache_mb_mean"] + even_b["second_half"]["cache_mb_mean"]) / 2
q_even = (even_a["second_half"]["hits"] + even_b["second_half"]["hits"]) / 2
def within(measured, model):
    return abs(measured / model - 1) <= 0.15
rows = []
failed = []
for n in nices:
    try:
        a, b = load(n, "a"), load(n, "b")
    except FileNotFoundError:
        failed.append(n)
        continue
    w = 2 ** (0.75 * n)
    k = w ** (1 / alpha)
    m1, m2 = a["second_half"]["cache_mb_mean"], b["second_half"]["cache_mb_mean"]
    h1 = a["second_half"]["hit_rate"] / h_even
    h2 = b["second_half"]["hit_rate"] / h_even
    r = {
        "nice": n, "eta": ETA.get(n), "weight": w,
        "niced_mb": m1, "other_mb": m2,
        "niced_share": m1 / (m1 + m2), "niced_share_eq_4_5": 1 / (1 + k),
        "other_share": m2 / (m1 + m2), "other_share_eq_4_5": k / (1 + k),
        "ratio": m2 / m1 if m1 > 0 else None, "ratio_eq_4_5": k,
        "effective_eta": (m2 / m1) ** alpha if m1 > 0 else None,
        "niced_hit_rate": a["second_half"]["hit_rate"], "other_hit_rate": b["second_half"]["hit_rate"],
        "niced_rel": h1, "niced_rel_eq_4_6": (2 / (1 + k)) ** (1 - alpha),
        "other_rel": h2, "other_rel_eq_4_7": (2 * k / (1 + k)) ** (1 - alpha),
        # The same model with whole keys: a cache of the most popular keys in the memory each held.
        "niced_rel_top": top_mass(m1 * values_per_mb) / top_mass(m_even * values_per_mb),
        "other_rel_top": top_mass(m2 * values_per_mb) / top_mass(m_even * values_per_mb),
        "niced_hits_rel": a["second_half"]["hits"] / q_even,
        "other_hits_rel": b["second_half"]["hits"] / q_even,
        "niced_s_mean": a["second_half"]["severity_s_mean"], "other_s_mean": b["second_half"]["severity_s_mean"],
        "niced_qps": a["queries_per_s"], "other_qps": b["queries_per_s"],
    }
    checks = [within(r["niced_share"], r["niced_share_eq_4_5"]), within(r["other_share"], r["other_share_eq_4_5"])]
    if n != 0:
        checks += [within(h1, r["niced_rel_eq_4_6"]), within(h2, r["other_rel_eq_4_7"])]
    r["within_15"] = all(checks)
    rows.append(r)
print()
print(f"nice: two zipf-cache programs ({popularity}, alpha {alpha}, {keys} keys of 4 KiB, miss {miss_ms} ms sleep) in one 256 MB group, "
      f"memd --s-max {s_max:g}s --repeat {repeat}, C_disk {disk_ms} ms, stream {stream:g} MB/s; second half of {duration:g} s")
print(f"{'eta':>4} {'N':>3} {'weight':>7} {'niced MB':>9} {'other MB':>9} {'niced share (4.5)':>18} {'other share (4.5)':>18} "
      f"{'niced rel. hit (4.6)':>21} {'other rel. hit (4.7)':>21} {'top-M niced/other':>18}  within 15%")
for r in rows:
    rel = lambda m, e: "-" if r["nice"] == 0 else f"{m:.3f} ({e:.3f})"
    print(f"{r['eta']:>4} {r['nice']:>3} {r['weight']:>7.2f} {r['niced_mb']:>9.1f} {r['other_mb']:>9.1f} "
          f"{r['niced_share']:>8.3f} ({r['niced_share_eq_4_5']:.3f}) {r['other_share']:>8.3f} ({r['other_share_eq_4_5']:.3f}) "
          f"{rel(r['niced_rel'], r['niced_rel_eq_4_6']):>21} {rel(r['other_rel'], r['other_rel_eq_4_7']):>21} "
          f"{'-' if r['nice'] == 0 else format(r['niced_rel_top'], '.3f') + ' / ' + format(r['other_rel_top'], '.3f'):>18}  "
          f"{'yes' if r['within_15'] else 'no'}")
for n in failed:
    print(f"{ETA.get(n):>4} {n:>3}  failed: exit {open(f'{out}/nice{n}.status').read().strip()} (137: the group's OOM killer)")
print(f"(even split: {m_even:.1f} MB and a hit rate of {h_even * 100:.1f}% a cache; the model's figures in brackets, at the weight used; "
      f"top-M: the hit rate of a cache holding exactly the most popular keys in the same memory, relative to the even split's)")
doc = {
    "experiment": "nice",
    "alpha": alpha, "popularity": popularity, "keys": keys, "value_bytes": 4096, "miss_ms": miss_ms, "miss_work": "sleep",
    "paging_disk_ms": disk_ms, "s_max_s": s_max, "repeat": repeat, "stream_mb_s": stream, "duration_s": duration,
    "limit_mb": 256, "even_split": {"cache_mb": m_even, "hit_rate": h_even},
    "rows": rows,
    "failed": failed,
    "runs": {str(n): {"niced": load(n, "a"), "other": load(n, "b")} for n in nices if n not in failed},
}
json.dump(doc, open(f"{out}/nice.json", "w"), indent=2)
print(f"\nJSON: {out}/nice.json")
PY
exit "$FAILED"
