#!/usr/bin/env bash
# The allocator experiment of issue 15 (the thesis's section 6.4: the C library's handler gave
# 38 MB back in under 0.5 s): a C program (bench/mem/fragment.c) allocates 200 MB in small
# blocks of mixed sizes and frees 90% of them, leaving kept blocks all over its heap (and at its
# top), so that only releasing free pages inside the heap (madvise), never shrinking its top,
# can give the memory back; then it idles. It runs in a 256 MB memory group made by `antsched
# mem run`, governed by an `antsched memd` this script starts, with antsched's LD_PRELOAD
# library (libantsched_mem_preload.so) and glibc's malloc, jemalloc or mimalloc; and once
# without the library (the control).
#
# The trigger: after the program is ready, a second process in the same group streams a 400 MB
# file through the group's page cache (cat in a loop). The group fills to its limit, the kernel
# reclaims its page cache, so memd sees free memory under tau and a turnover of pages (the
# candidate age), S falls and the group's subscribers are told. A group limit small enough for
# the program's own RSS alone would not do: with nothing to reclaim (anonymous memory, no
# swap) memd's candidate age is infinite and S stays S_max until the OOM killer acts; an
# anonymous hog would meet the same OOM. Page cache is what the kernel can reclaim, so a
# stream is the reliable way to make a group's memory expensive on a machine without swap.
#
# Measured: the program's VmRSS every 10 ms (bench/mem/watch.py, which also subscribes to the
# group and logs its wake-ups), and the time the library's thread woke for the first
# notification (its log, ANTSCHED_MEM_PRELOAD_LOG=1, "woken at T s", CLOCK_MONOTONIC; the
# control has no library, so the watcher's first wake-up stands in). Per allocator: bytes
# freed, bytes returned within 3 s of the notification, % returned, and the time from the
# notification until 90% of the freed bytes were returned. Table on stdout, JSON to
# $ANTSCHED_BENCH_DIR/malloc.json. About a minute.
#
# First, as a baseline, each allocator's own release called from the thread that allocated and
# freed (no library, no group): whether the allocator can give the pages back at all.
#
#   sudo bench/mem/malloc.sh
source "$(dirname "$0")/lib.sh"

need_root
apt_install gcc:gcc
apt_install_lib libjemalloc.so.2 libjemalloc2
apt_install_lib libmimalloc.so.2 libmimalloc2.0
JEMALLOC=$(lib_path libjemalloc.so.2)
MIMALLOC=$(lib_path libmimalloc.so.2)
[ -f "$ROOT/target/release/libantsched_mem_preload.so" ] || (cd "$ROOT" && cargo build --release -q -p antsched-memd-preload)
PRELOAD="$ROOT/target/release/libantsched_mem_preload.so"

T=$(mktemp -d /tmp/antsched-malloc.XXXXXX)
add_cleanup "rm -rf --one-file-system '$T'"
cc -O2 -Wall -o "$T/fragment" "$ROOT/bench/mem/fragment.c"
echo "malloc: making a 400 MB file to stream through the group's page cache" >&2
dd if=/dev/urandom of="$T/stream.dat" bs=1M count=400 status=none
# The baseline: each allocator's own release, called from the thread that allocated and freed
# (fragment.c's FRAGMENT_OWN_RELEASE), with no library and no notification: what the allocator
# gives back at best. Not in a group: nothing here pages.
for a in "glibc|" "jemalloc|$JEMALLOC" "mimalloc|$MIMALLOC"; do
  echo "malloc: ${a%%|*}, its own release on the owning thread" >&2
  FRAGMENT_OWN_RELEASE=1 LD_PRELOAD="${a#*|}" "$T/fragment" 200 0 > "$WORK/malloc-own-${a%%|*}.frag"
done

start_memd "$T/memd.sock" --interval 100ms

# name, then the program's environment (LD_PRELOAD and allocator options).
RUNS=(
  "control-glibc|"
  "glibc|LD_PRELOAD=$PRELOAD"
  "jemalloc|LD_PRELOAD=$JEMALLOC:$PRELOAD"
  "mimalloc|LD_PRELOAD=$MIMALLOC:$PRELOAD"
  "mimalloc-decommit0|LD_PRELOAD=$MIMALLOC:$PRELOAD MIMALLOC_DECOMMIT_DELAY=0"
)
for r in "${RUNS[@]}"; do
  name=${r%%|*}
  read -r -a envs <<< "${r#*|}"
  echo "malloc: $name" >&2
  mem_run "$WORK/malloc-$name.memrun.err" --limit 256M --socket "$MEMD_SOCK" -- \
    "$ROOT/bench/mem/malloc-group.sh" "$MEMD_SOCK" "$T/$name" "$T/fragment" "$T/stream.dat" 6 \
    "${envs[@]}"
  for f in frag log watch; do cp "$T/$name.$f" "$WORK/malloc-$name.$f"; done
done

python3 - "$WORK" "${RUNS[@]%%|*}" <<'PY'
import json, re, sys
work, names = sys.argv[1], sys.argv[2:]
rows = []
for n in names:
    base = f"{work}/malloc-{n}"
    frag = dict(l.split(None, 1) for l in open(base + ".frag") if l.strip())
    freed = int(frag["freed_bytes"])
    rss, wakes = [], []
    for l in open(base + ".watch"):
        w = l.split()
        if w[0] == "rss":
            rss.append((float(w[1]), int(w[2]) * 1024))
        elif w[0] == "wake" and w[3] != "plenty":
            wakes.append((float(w[1]), float(w[2]), w[3]))
    log = open(base + ".log").read()
    lib = [(float(m.group(3)), float(m.group(1)), float(m.group(2)), m.group(0))
           for m in re.finditer(r"S ([\d.]+) s: released with .*? in ([\d.]+) ms \(woken at ([\d.]+) s\)", log)]
    if lib:
        t0, s0, call_ms, what = lib[0]
        released_with = re.search(r"released with (.*?) in", what).group(1)
        source = "library"
    elif wakes:
        t0, s0, _ = wakes[0]
        call_ms, released_with, source = None, "nothing (no library)", "watcher"
    else:
        sys.exit(f"malloc: {n}: no notification came (see {base}.watch)")
    before = [b for t, b in rss if t < t0]
    after = [(t, b) for t, b in rss if t0 <= t <= t0 + 3.0]
    rss0 = before[-1]
    low = min(b for _, b in after)
    returned = max(0, rss0 - low)
    t90 = next((t - t0 for t, b in after if rss0 - b >= 0.9 * freed), None)
    rss_free = int(frag["rss_after_free_kib"]) * 1024
    rows.append({
        "allocator": n,
        "released_with": released_with,
        "freed_bytes": freed,
        "rss_after_free_bytes": rss_free,
        "returned_before_notification_bytes": max(0, int(frag["rss_after_alloc_kib"]) * 1024 - rss0),
        "rss_at_notification_bytes": rss0,
        "returned_bytes": returned,
        "returned_pct": 100.0 * returned / freed,
        "t90_ms": None if t90 is None else round(t90 * 1e3, 1),
        "release_call_ms": call_ms,
        "severity_s_at_notification": s0,
        "notification_seen_by": source,
        "notifications_in_run": len(lib) if lib else len(wakes),
        "meets_90pct_in_500ms": t90 is not None and t90 <= 0.5,
    })
mib = lambda b: b / 2**20
print()
print("malloc: 200 MB in blocks of 24 B to 3000 B, 90% freed leaving kept blocks all over the heap;")
print("a 256 MB group; the first notification's release (thesis: 38 MB returned in under 0.5 s)")
print(f"{'allocator':<20} {'freed MiB':>9} {'at notif. MiB':>13} {'returned MiB':>12} {'returned':>9} {'90% after':>10} {'call':>8} {'S s':>7}")
for r in rows:
    t90 = "never" if r["t90_ms"] is None else f"{r['t90_ms']:.0f} ms"
    call = "-" if r["release_call_ms"] is None else f"{r['release_call_ms']:.1f} ms"
    print(f"{r['allocator']:<20} {mib(r['freed_bytes']):>9.1f} {mib(r['rss_at_notification_bytes']):>13.1f} "
          f"{mib(r['returned_bytes']):>12.1f} {r['returned_pct']:>8.1f}% {t90:>10} {call:>8} {r['severity_s_at_notification']:>7.1f}")
print("(returned: the fall of VmRSS within 3 s of the first notification, as a share of the bytes freed;")
print(" 90% after: from the notification until VmRSS had fallen by 90% of the bytes freed; call: the")
print(" library's release call; 'at notif.': VmRSS just before it)")
for r in rows:
    if r["returned_before_notification_bytes"] > 0.05 * r["freed_bytes"]:
        print(f"{r['allocator']}: the allocator itself returned {mib(r['returned_before_notification_bytes']):.1f} MiB before any notification")
own = []
for n in ["glibc", "jemalloc", "mimalloc"]:
    frag = dict(l.split(None, 1) for l in open(f"{work}/malloc-own-{n}.frag") if l.strip())
    call, before, after, ms = frag["own_release"].split()
    own.append({"allocator": n, "call": call, "freed_bytes": int(frag["freed_bytes"]),
                "returned_bytes": max(0, (int(before) - int(after)) * 1024),
                "call_ms": float(ms)})
print()
print("the allocator's own release, called from the thread that freed, 200 ms after the frees:")
print(f"{'allocator':<20} {'call':<16} {'returned MiB':>12} {'returned':>9} {'call':>9}")
for r in own:
    print(f"{r['allocator']:<20} {r['call']:<16} {mib(r['returned_bytes']):>12.1f} "
          f"{100.0 * r['returned_bytes'] / r['freed_bytes']:>8.1f}% {r['call_ms']:>6.1f} ms")
json.dump({"experiment": "malloc", "thesis": {"returned_mb": 38, "within_s": 0.5},
           "group_limit_bytes": 256 << 20, "runs": rows, "own_thread_release": own},
          open(f"{work}/malloc.json", "w"), indent=2)
print(f"JSON: {work}/malloc.json")
PY
