#!/usr/bin/env bash
# The JVM experiment of issue 15 (the thesis's section 6.3: a Scribe-like multicast simulation
# on the Sun JVM in a 256 MB machine). bench/mem/jvm/Multicast.java (nodes of a multicast tree
# each buffering a window of 1 MB messages; a live set of about 40 MB; 6 GB allocated per run)
# runs on OpenJDK 17 with Shenandoah (static heuristic: a cycle when under 10% of the heap is
# free, so the whole heap is in use, as with the thesis's collector) in a 256 MB memory group
# made by `antsched mem run`, governed by an `antsched memd` this script starts:
#
# 1. runtime against heap size (-Xms = -Xmx, fixed), to find the thrashing cliff. This machine
#    has no swap: without one, a JVM whose heap does not fit in the group is killed by the OOM
#    killer instead of paging; and a swap file on the machine's own disk (a virtual disk the
#    host caches) pages in a few microseconds, so nothing would thrash. So the script pages to
#    the thesis's kind of disk: a 512 MB image on an `antsched mount` of the emulated 7,200 rpm
#    Deskstar 34GXP (--direct-io), attached as a loop device (direct I/O) and enabled with
#    swapon only for the runs that can page (heaps over 224 MB, the hog runs, the adaptive
#    run), since swap is the machine's; at exit (also on failure and Ctrl-C) swapoff, the loop
#    device detached, the mount unmounted, the image removed.
# 2. a 90 MB hog (bench/mem/hog.c, all of its pages touched every 100 ms) in the same group,
#    started 3 s before the JVM: the JVM at the largest fixed heap under 256 MB that ran alone without
#    paging (the thesis's 220 MB), without adaptation, and with adaptation (-Xms16m, the same
#    -Xmx, --adapt: examples/jvm-bridge pipes memd's notifications to the program, which calls
#    System.gc() when S < 10 min and holds its heap's size through SoftMaxHeapSize while S <
#    S_max, growing back at S_max); and the adaptive JVM alone with -Xmx past the cliff (the
#    thesis's "no manual heap sizing").
# 3. the hog niced +14 into the next class (the thesis: the heap back at its full 220 MB): the
#    adaptive run with the hog again, the hog in a group of its own inside the JVM's, niced +14
#    (a nested `antsched mem run --nice 14`, in jvm-group.sh), so that memd enforces its weight
#    (a held limit: docs/memd.md, "Held limits"). The program prints its heap
#    (used, committed, the soft limit it holds) every 10 messages: the table shows the heap
#    over time of both hog runs with adaptation, and whether it got back to -Xmx.
#
# Each run has a time limit (LIMIT_S, default 60 s: about 6 times the best run); a run that
# reaches it "did not finish". Table on stdout, JSON to $ANTSCHED_BENCH_DIR/jvm.json. About 9
# minutes.
#
#   sudo bench/mem/jvm.sh [MESSAGES [LIMIT_S]]     (defaults 300 and 60)
source "$(dirname "$0")/lib.sh"

MESSAGES=${1:-300}
LIMIT_S=${2:-60}
HEAPS=(64 128 192 224 256 288 320)
ADAPT_XMX=320
HOG_MB=90

need_root
apt_install gcc:gcc java:openjdk-17-jdk-headless javac:openjdk-17-jdk-headless
java -XX:+UseShenandoahGC -version >/dev/null 2>&1 ||
  { echo "jvm: this JDK has no Shenandoah collector (java -XX:+UseShenandoahGC)" >&2; exit 2; }
echo "bench: cargo build --release -p antsched-jvm-bridge" >&2
(cd "$ROOT" && cargo build --release -q -p antsched-jvm-bridge)

T=$(mktemp -d /tmp/antsched-jvm.XXXXXX)
add_cleanup "rm -rf --one-file-system '$T'"
cc -O2 -Wall -o "$T/hog" "$ROOT/bench/mem/hog.c"
mkdir -p "$T/classes"
javac -d "$T/classes" "$ROOT/bench/mem/jvm/Multicast.java"

unmount_swap_mount() {
  [ -n "$MOUNT_PID" ] || return 0
  kill -TERM "$MOUNT_PID" 2>/dev/null || true
  wait "$MOUNT_PID" 2>/dev/null || true
  MOUNT_PID=""
  if mountpoint -q "$T/swap-mnt"; then umount -l "$T/swap-mnt" || true; fi
}
# The swap device: a loop device over an image on an antsched mount of the emulated disk, so
# that a page written out and read back costs what it cost on the thesis's disk. Removed at exit
# in the reverse order: swapoff, the loop device, the mount, the directory.
mkdir -p "$T/swap-backing"
fallocate -l 512M "$T/swap-backing/swap.img"
echo "jvm: swap on a loop device over $T/swap-mnt/swap.img (antsched mount, deskstar-34gxp)" >&2
mount_with "$T/swap-backing" "$T/swap-mnt" as-aged-sptf --disk deskstar-34gxp --direct-io
add_cleanup unmount_swap_mount
LOOP=$(losetup -f --show --direct-io=on "$T/swap-mnt/swap.img")
add_cleanup "losetup -d '$LOOP'"
mkswap "$LOOP" > /dev/null
# Swap is the machine's, not the group's: while it is on, the kernel may page out any group
# that meets its limit (another bench's too). So it is on only for the runs that page.
SWAP_ON=""
swap_on() { swapon "$LOOP"; SWAP_ON=1; }
swap_off() { if [ -n "$SWAP_ON" ]; then swapoff "$LOOP"; SWAP_ON=""; fi; }
add_cleanup swap_off

start_memd "$T/memd.sock" --interval 200ms

JAVA=(java -XX:+UseShenandoahGC -XX:ShenandoahGCHeuristics=static -Xlog:disable -cp "$T/classes")
# run NAME HOG_MB ADAPT SWAP HOG_NICE|- JAVA_OPTIONS...
run() {
  local name=$1 hog=$2 adapt=$3 swap=$4 nice=$5; shift 5
  local nice_arg=()
  [ "$nice" != - ] && nice_arg=("$nice")
  if [ "$swap" = 1 ]; then swap_on; fi
  local args=(--messages "$MESSAGES")
  [ "$adapt" = 1 ] && args+=(--adapt)
  echo "jvm: $name" >&2
  mem_run "$WORK/jvm-$name.memrun.err" --limit 256M --socket "$MEMD_SOCK" -- \
    "$ROOT/bench/mem/jvm-group.sh" "$MEMD_SOCK" "$T/$name" "$T/hog" "$hog" "$adapt" "$LIMIT_S" "${nice_arg[@]}" -- \
    "${JAVA[@]}" "$@" Multicast "${args[@]}" || true
  for f in java java.err rss status oom memsw hog bridge.err nice; do
    [ -f "$T/$name.$f" ] && cp "$T/$name.$f" "$WORK/jvm-$name.$f"
  done
  swap_off
  return 0
}

NAMES=()
for h in "${HEAPS[@]}"; do
  # Heaps up to 224 MB fit the group with their JVM (about 35 MB more) and never page.
  run "heap-$h" 0 0 "$([ "$h" -gt 224 ] && echo 1 || echo 0)" - "-Xms${h}m" "-Xmx${h}m"
  NAMES+=("heap-$h")
done
# The hog runs use the largest heap under the group's 256 MB that ran alone without paging
# (peak swap under 4 MB). A heap of the group's size or more can run alone without paging only
# because the JVM never touches all of it; once the niced hog is paged away the JVM's own
# memory beside a full heap does not fit (the thesis: a 220 MB heap in 256 MB).
BEST=$(python3 - "$WORK" "${HEAPS[@]}" <<'PY'
import sys
work, heaps = sys.argv[1], sys.argv[2:]
best = heaps[0]
for h in heaps:
    try:
        done = any(l.startswith("runtime_s ") for l in open(f"{work}/jvm-heap-{h}.java"))
        swap = max((int(l.split()[2]) for l in open(f"{work}/jvm-heap-{h}.rss") if len(l.split()) == 3), default=0)
    except (OSError, ValueError):
        continue
    if done and swap < 4096 and int(h) < 256:
        best = h
print(best)
PY
)
echo "jvm: the largest heap under 256 MB that ran alone without paging: $BEST MB" >&2
ADAPT=(-Xms16m -XX:+UnlockExperimentalVMOptions -XX:ShenandoahUncommitDelay=1000)
run "hog-fixed-$BEST" "$HOG_MB" 0 1 - "-Xms${BEST}m" "-Xmx${BEST}m"
run "hog-adaptive-$BEST" "$HOG_MB" 1 1 - "${ADAPT[@]}" "-Xmx${BEST}m"
run "alone-adaptive-$ADAPT_XMX" 0 1 1 - "${ADAPT[@]}" "-Xmx${ADAPT_XMX}m"
# The hog niced +14 (the low class), in a nested group of its own; the same adaptive JVM.
run "hog-niced14-adaptive-$BEST" "$HOG_MB" 1 1 14 "${ADAPT[@]}" "-Xmx${BEST}m"
NAMES+=("hog-fixed-$BEST" "hog-adaptive-$BEST" "alone-adaptive-$ADAPT_XMX" "hog-niced14-adaptive-$BEST")

python3 - "$WORK" "$MESSAGES" "$LIMIT_S" "$HOG_MB" "${NAMES[@]}" <<'PY'
import json, sys
work, messages, limit, hog_mb, names = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
def nice_of(base):
    # jvm-group.sh's OUT.nice: "T hog PID nice N", then antsched mem nice's answer.
    try:
        lines = [l.strip() for l in open(base + ".nice") if l.strip()]
    except OSError:
        return None
    w = lines[0].split()
    return {"set_at": float(w[0]), "pid": int(w[2]), "nice": int(w[4]), "answer": " ".join(lines[1:])}

rows = []
for n in names:
    base = f"{work}/jvm-{n}"
    kv, adapt_lines, heap = {}, [], []
    try:
        for l in open(base + ".java"):
            if l.startswith("adapt "):
                adapt_lines.append(l.strip())
            elif l.startswith("heap "):
                # heap T messages M used_mb U committed_mb C soft_mb S (a JVM stopped by the
                # time limit may leave the last line cut short)
                w = l.split()
                if len(w) != 10:
                    continue
                heap.append({"t": float(w[1]), "messages": int(w[3]), "used_mb": int(w[5]),
                             "committed_mb": int(w[7]), "soft_mb": int(w[9])})
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
        "adapt_gate_gcs": int(kv.get("adapt_gate_gcs", "0")),
        "adapt_min_s": float(kv["adapt_min_s"]) if "adapt_min_s" in kv else None,
        "first_notification_s": float(adapt_lines[0].split()[1]) if adapt_lines else None,
        "adapt_log": adapt_lines[:20],
        "hog_nice": nice_of(base),
        "heap_timeline": heap,
    })
print()
print(f"jvm: Multicast.java (20 nodes, a window of 2 x 1 MB, {messages} messages: {messages * 21 / 1024:.1f} GB allocated),")
print("OpenJDK 17 Shenandoah (static), a 256 MB group paging to an emulated 7,200 rpm disk; heap = -Xmx (MB)")
print(f"{'run':<24} {'heap':>5} {'outcome':>20} {'runtime s':>9} {'GC s':>6} {'GCs':>6} {'peak RSS':>8} {'peak swap':>9} {'asked/gate GCs':>14}")
def gates(r):
    return f"{r['adapt_full_gcs']}/{r['adapt_gate_gcs']}" if r["adaptive"] else "-"
for r in rows:
    rt = "-" if r["runtime_s"] is None else f"{r['runtime_s']:.1f}"
    gct = "-" if r["gc_time_s"] is None else f"{r['gc_time_s']:.1f}"
    gcn = "-" if r["gc_count"] is None else str(r["gc_count"])
    print(f"{r['run']:<24} {r['heap_mb']:>5} {r['outcome']:>20} {rt:>9} {gct:>6} {gcn:>6} "
          f"{r['jvm_peak_rss_mb']:>7.0f}M {r['jvm_peak_swap_mb']:>8.0f}M {gates(r):>14}")
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
def heap_line(r):
    # The heap about every second: committed/soft limit, MB.
    out, next_t = [], 0.0
    for h in r["heap_timeline"]:
        if h["t"] >= next_t:
            out.append(f"{h['t']:.0f}s {h['committed_mb']}/{h['soft_mb']}")
            next_t = h["t"] + 1.0
    return " ".join(out)
nice_summary = {}
for r in rows:
    if r["adaptive"] and r["hog_mb"] and r["heap_timeline"]:
        ht = r["heap_timeline"]
        xmx = r["heap_mb"]
        # "Full size": the soft limit back at -Xmx and the committed heap within 10% of it.
        full = [h for h in ht if h["soft_mb"] >= xmx and h["committed_mb"] >= 0.9 * xmx]
        second = ht[len(ht) // 2:]
        s = {"xmx_mb": xmx, "max_committed_mb": max(h["committed_mb"] for h in ht),
             "mean_committed_second_half_mb": sum(h["committed_mb"] for h in second) / len(second),
             "last_soft_mb": ht[-1]["soft_mb"], "last_committed_mb": ht[-1]["committed_mb"],
             "at_full_size_from_s": full[0]["t"] if full else None,
             "samples_at_full_size": len(full), "samples": len(ht)}
        r["heap_summary"] = s
        nice_summary[r["run"]] = s
        print(f"{r['run']}: heap committed/soft limit MB over time: {heap_line(r)}")
        print(f"{r['run']}: back to the full {xmx} MB heap: "
              + (f"yes, from {s['at_full_size_from_s']:.1f} s ({len(full)} of {len(ht)} samples)" if full else
                 f"no (committed at most {s['max_committed_mb']} MB, {s['mean_committed_second_half_mb']:.0f} MB on average "
                 f"in the second half; soft limit at the end {s['last_soft_mb']} MB)")
              + (f"; hog's memory nice {r['hog_nice']['nice']}: {r['hog_nice']['answer']}" if r["hog_nice"] else ""))
niced = [r for r in rows if r["hog_nice"]]
nice_note = "not run"
if niced:
    r = niced[0]
    s = r.get("heap_summary")
    nice_note = (f"{r['outcome']}" + (f" in {r['runtime_s']:.1f} s" if r["runtime_s"] else "")
                 + ("" if not s else ("; heap back to its full size" if s["samples_at_full_size"] else "; heap not back to its full size")))
print(f"hog niced +14: {nice_note}")
json.dump({"experiment": "jvm", "messages": messages, "time_limit_s": limit, "group_limit_mb": 256,
           "swap": "512 MB loop device over an antsched mount of deskstar-34gxp (direct I/O)", "collector": "shenandoah, static heuristic",
           "thesis": {"runtime_s_by_heap_mb": {"220": 240.7, "225": 249.3, "227": 255.7, "228": 506.8, "230": 817.7, "231": None},
                      "hog_mb": 90, "hog_adaptive_slowdown": 1.55, "hog_fixed": "never finishes",
                      "hog_niced_14": "heap back at 220 MB"},
           "hog_niced": nice_note, "hog_heap": nice_summary, "runs": rows},
          open(f"{work}/jvm.json", "w"), indent=2)
print(f"JSON: {work}/jvm.json")
PY
