#!/usr/bin/env bash
# The JVM experiment of issue 15 (the thesis's section 6.3: a Scribe-like multicast simulation
# on the Sun JVM in a 256 MB machine). bench/mem/jvm/Multicast.java (nodes of a multicast tree
# each buffering a window of 1 MB messages; a live set of about 40 MB; 6 GB allocated per run)
# runs on OpenJDK 17 with Shenandoah in a 256 MB memory group made by `antsched mem run`,
# governed by an `antsched memd` this script starts:
#
# 1. runtime against heap size (-Xms = -Xmx, fixed), to find the thrashing cliff. This machine
#    has no swap: without one, a JVM whose heap does not fit in the group is killed by the OOM
#    killer instead of paging. So the script makes a 512 MB swap file (swapon; swapoff and
#    removed at exit, also on failure and Ctrl-C), and the group pages to it as the thesis's
#    machine paged to its disk.
# 2. a 90 MB hog (bench/mem/hog.c, all of its pages touched every 100 ms) in the same group,
#    started 3 s before the JVM: the JVM at the best fixed heap without adaptation, and with
#    adaptation (-Xms16m, the same -Xmx, --adapt: examples/jvm-bridge pipes memd's
#    notifications to the program, which calls System.gc() when S < 10 min and holds its
#    heap's size through SoftMaxHeapSize while S < S_max, growing back at S_max).
# 3. the hog niced +14 into the next class: needs `antsched mem nice`, which is not on main
#    yet; the script says so and skips the run.
#
# Each run has a time limit (LIMIT_S, default 75 s: about 5 times the best run); a run that
# reaches it "did not finish". Table on stdout, JSON to $ANTSCHED_BENCH_DIR/jvm.json. About 10
# minutes.
#
#   sudo bench/mem/jvm.sh [MESSAGES [LIMIT_S]]     (defaults 300 and 75)
source "$(dirname "$0")/lib.sh"

MESSAGES=${1:-300}
LIMIT_S=${2:-75}
HEAPS=(64 128 160 192 208 224)
HOG_MB=90

need_root
apt_install gcc:gcc java:openjdk-17-jdk-headless javac:openjdk-17-jdk-headless
java -XX:+UseShenandoahGC -version >/dev/null 2>&1 ||
  { echo "jvm: this JDK has no Shenandoah collector (java -XX:+UseShenandoahGC)" >&2; exit 2; }
echo "bench: cargo build --release -p antsched-jvm-bridge" >&2
(cd "$ROOT" && cargo build --release -q -p antsched-jvm-bridge)

T=$(mktemp -d /tmp/antsched-jvm.XXXXXX)
add_cleanup "rm -rf '$T'"
cc -O2 -Wall -o "$T/hog" "$ROOT/bench/mem/hog.c"
mkdir -p "$T/classes"
javac -d "$T/classes" "$ROOT/bench/mem/jvm/Multicast.java"

# The swap file: the group's anonymous memory (the heap) can then be paged, as on the thesis's
# machine; removed at exit.
SWAP="$T/swapfile"
echo "jvm: swap file $SWAP (512 MB)" >&2
fallocate -l 512M "$SWAP"
chmod 600 "$SWAP"
mkswap "$SWAP" > /dev/null
add_cleanup "swapoff '$SWAP' 2>/dev/null; rm -f '$SWAP'"
swapon "$SWAP"

start_memd "$T/memd.sock" --interval 200ms

JAVA=(java -XX:+UseShenandoahGC -Xlog:disable -cp "$T/classes")
# run NAME HOG_MB ADAPT JAVA_OPTIONS...
run() {
  local name=$1 hog=$2 adapt=$3; shift 3
  local args=(--messages "$MESSAGES")
  [ "$adapt" = 1 ] && args+=(--adapt)
  echo "jvm: $name" >&2
  mem_run "$WORK/jvm-$name.memrun.err" --limit 256M --socket "$MEMD_SOCK" -- \
    "$ROOT/bench/mem/jvm-group.sh" "$MEMD_SOCK" "$T/$name" "$T/hog" "$hog" "$adapt" "$LIMIT_S" -- \
    "${JAVA[@]}" "$@" Multicast "${args[@]}" || true
  for f in java java.err rss status oom memsw hog bridge.err; do
    [ -f "$T/$name.$f" ] && cp "$T/$name.$f" "$WORK/jvm-$name.$f"
  done
  return 0
}

NAMES=()
for h in "${HEAPS[@]}"; do
  run "heap-$h" 0 0 "-Xms${h}m" "-Xmx${h}m"
  NAMES+=("heap-$h")
done
# The hog runs use the fastest heap that finished alone (the thesis's 220 MB).
BEST=$(python3 - "$WORK" "${HEAPS[@]}" <<'PY'
import sys
work, heaps = sys.argv[1], sys.argv[2:]
best = None
for h in heaps:
    try:
        kv = dict(l.split(None, 1) for l in open(f"{work}/jvm-heap-{h}.java") if " " in l)
        t = float(kv["runtime_s"])
    except (OSError, KeyError, ValueError):
        continue
    if best is None or t < best[0]:
        best = (t, h)
print(best[1] if best else 192)
PY
)
echo "jvm: the fastest fixed heap alone: $BEST MB" >&2
run "hog-fixed-$BEST" "$HOG_MB" 0 "-Xms${BEST}m" "-Xmx${BEST}m"
run "hog-adaptive-$BEST" "$HOG_MB" 1 "-Xms16m" "-Xmx${BEST}m" -XX:+UnlockExperimentalVMOptions -XX:ShenandoahUncommitDelay=1000
run "alone-adaptive-$BEST" 0 1 "-Xms16m" "-Xmx${BEST}m" -XX:+UnlockExperimentalVMOptions -XX:ShenandoahUncommitDelay=1000
NAMES+=("hog-fixed-$BEST" "hog-adaptive-$BEST" "alone-adaptive-$BEST")
NICE_NOTE="skipped: antsched mem nice is not on main yet (antsched mem --help has simulate, status, run)"
if "$ANTSCHED" mem nice --help >/dev/null 2>&1; then
  NICE_NOTE="skipped: antsched mem nice exists now, but this script does not run it yet"
fi
echo "jvm: the hog niced +14: $NICE_NOTE" >&2

python3 - "$WORK" "$MESSAGES" "$LIMIT_S" "$HOG_MB" "$NICE_NOTE" "${NAMES[@]}" <<'PY'
import json, sys
work, messages, limit, hog_mb, nice_note, names = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6:]
rows = []
for n in names:
    base = f"{work}/jvm-{n}"
    kv, adapt_lines = {}, []
    try:
        for l in open(base + ".java"):
            if l.startswith("adapt "):
                adapt_lines.append(l.strip())
            elif " " in l:
                k, v = l.split(None, 1)
                kv[k] = v.strip()
    except OSError:
        pass
    rc, wall = (open(base + ".status").read().split() + ["?", "?"])[:2]
    oom = {}
    try:
        oom = dict(l.split() for l in open(base + ".oom") if l.strip())
    except OSError:
        pass
    rss = []
    try:
        for l in open(base + ".rss"):
            w = l.split()
            if len(w) == 3:
                rss.append((float(w[0]), int(w[1]), int(w[2])))
    except OSError:
        pass
    finished = "runtime_s" in kv
    if finished:
        outcome = "finished"
    elif int(oom.get("oom_kill", "0")) > 0:
        outcome = "OOM-killed"
    elif rc in ("124", "137") or float(wall) >= limit:
        outcome = f"not finished in {limit:.0f} s"
    else:
        outcome = f"exit {rc}"
    xmx = kv.get("start", "")
    rows.append({
        "run": n,
        "hog_mb": hog_mb if n.startswith("hog") else 0,
        "adaptive": "adaptive" in n,
        "heap_mb": int(n.rsplit("-", 1)[1]),
        "outcome": outcome,
        "runtime_s": float(kv["runtime_s"]) if finished else None,
        "wall_s": float(wall) if wall != "?" else None,
        "gc_count": int(kv["gc_count"]) if finished else None,
        "gc_time_s": int(kv["gc_time_ms"]) / 1e3 if finished else None,
        "max_committed_heap_mb": int(kv["max_committed_mb"]) if finished else None,
        "jvm_peak_rss_mb": max((r[1] for r in rss), default=0) / 1024,
        "jvm_peak_swap_mb": max((r[2] for r in rss), default=0) / 1024,
        "oom_kills": int(oom.get("oom_kill", "0")),
        "adapt_full_gcs": int(kv.get("adapt_full_gcs", "0")),
        "adapt_min_s": float(kv["adapt_min_s"]) if "adapt_min_s" in kv else None,
        "adapt_log": adapt_lines[:20],
    })
print()
print(f"jvm: Multicast.java (20 nodes, a window of 2 x 1 MB, {messages} messages: {messages * 21 / 1024:.1f} GB allocated),")
print("OpenJDK 17 Shenandoah, a 256 MB group with a 512 MB swap file; heap = -Xmx (MB)")
print(f"{'run':<24} {'heap':>5} {'outcome':>20} {'runtime s':>9} {'GC s':>6} {'GCs':>6} {'peak RSS':>8} {'peak swap':>9} {'full GCs':>8}")
for r in rows:
    rt = "-" if r["runtime_s"] is None else f"{r['runtime_s']:.1f}"
    gct = "-" if r["gc_time_s"] is None else f"{r['gc_time_s']:.1f}"
    gcn = "-" if r["gc_count"] is None else str(r["gc_count"])
    print(f"{r['run']:<24} {r['heap_mb']:>5} {r['outcome']:>20} {rt:>9} {gct:>6} {gcn:>6} "
          f"{r['jvm_peak_rss_mb']:>7.0f}M {r['jvm_peak_swap_mb']:>8.0f}M {r['adapt_full_gcs'] if r['adaptive'] else '-':>8}")
by = {r["run"]: r for r in rows}
alone = [r for r in rows if r["run"].startswith("heap-") and r["runtime_s"]]
if alone:
    best = min(alone, key=lambda r: r["runtime_s"])
    small = min(alone, key=lambda r: r["heap_mb"])
    print(f"speed-up of the {best['heap_mb']} MB heap over the {small['heap_mb']} MB one: {small['runtime_s'] / best['runtime_s']:.2f}x (thesis, 1 MB case: 4.4x)")
    for r in rows:
        if r["run"].startswith("hog") or r["run"].startswith("alone-adaptive"):
            if r["runtime_s"]:
                print(f"{r['run']}: {r['runtime_s'] / best['runtime_s']:.2f}x the best fixed heap alone")
            else:
                print(f"{r['run']}: {r['outcome']}")
print(f"hog niced +14: {nice_note}")
json.dump({"experiment": "jvm", "messages": messages, "time_limit_s": limit, "group_limit_mb": 256,
           "swap_file_mb": 512, "collector": "shenandoah",
           "thesis": {"runtime_s_by_heap_mb": {"220": 240.7, "225": 249.3, "227": 255.7, "228": 506.8, "230": 817.7, "231": None},
                      "hog_mb": 90, "hog_adaptive_slowdown": 1.55, "hog_fixed": "never finishes",
                      "hog_niced_14": "heap back at 220 MB"},
           "hog_niced": nice_note, "runs": rows},
          open(f"{work}/jvm.json", "w"), indent=2)
print(f"JSON: {work}/jvm.json")
PY
