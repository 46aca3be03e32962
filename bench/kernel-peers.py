#!/usr/bin/env python3
"""The tables and the JSON of bench/kernel-peers.sh, from what it left in its directory.

    python3 bench/kernel-peers.py report DIR --disk NAME --runtime S ...

DIR holds rows.tsv (one line per fio run: kind, workload, setting, simulated scheduler, fio's
JSON, the mount's stats.json before and after the run, the mount's blkparse recording, BFQ's
trace, tunables or job file), the simulations (WORKLOAD.sim.json, WORKLOAD-skewK.sim.json) and
the files those lines name. Writes DIR/kernel-peers.json and prints the tables.
"""

import argparse
import json
import os
import re
import sys
from collections import Counter

TOLERANCE = 0.15


def fio_jobs(path):
    """{job name: {mb_s, p99_ms, iops, dir}} from fio's JSON output."""
    d = json.load(open(path))
    out = {}
    for j in d["jobs"]:
        part = "read" if j["read"]["io_bytes"] > 0 or j["write"]["io_bytes"] == 0 else "write"
        x = j[part]
        pct = x.get("clat_ns", {}).get("percentile", {})
        p99 = pct.get("99.000000")
        out[j["jobname"]] = {
            "dir": part,
            "mb_s": x["bw_bytes"] / 1e6,
            "iops": x["iops"],
            "p99_ms": p99 / 1e6 if p99 is not None else None,
        }
    return out


def sim_runs(path):
    """{scheduler spec: {total, jobs: {name: {mb_s, p99_ms}}}} from `antsched sim --json`."""
    if not os.path.exists(path):
        return {}
    d = json.load(open(path))
    out = {}
    for r in d["runs"]:
        out[r["scheduler"]] = {
            "total": r["throughput_mb_s"],
            "jobs": {
                c["name"]: {"mb_s": c["throughput_mb_s"], "p99_ms": c["latency_ms"]["p99"]}
                for c in r["contexts"]
            },
            "anticipation": r.get("anticipation"),
        }
    return out


def stats_diff(before, after):
    """The contexts that issued I/O between two stats.json snapshots: [(name, ios, MB)]."""
    b = json.load(open(before))["runs"][0]
    a = json.load(open(after))["runs"][0]
    key = lambda c: (c.get("pid"), c["name"])
    was = {key(c): c for c in b["contexts"]}
    seen = []
    for c in a["contexts"]:
        old = was.get(key(c), {"ios": 0, "bytes": 0})
        ios = c["ios"] - old["ios"]
        if ios > 0:
            seen.append({"name": c["name"], "ios": ios, "mb": (c["bytes"] - old["bytes"]) / 1e6})
    return seen, b["mounted_s"], a["mounted_s"]


_records = {}


def record_events(path):
    """[(issue, completion, ctx)] of every request in a blkparse recording of the mount."""
    if path in _records:
        return _records[path]
    ev = []
    q = {}
    for line in open(path):
        f = line.split()
        if len(f) < 10 or f[5] not in ("Q", "C"):
            continue
        seq, t = int(f[2]), float(f[3])
        if f[5] == "Q":
            q[seq] = (t, f[-1])
        else:
            got = q.pop(seq - 1, None)
            if got is not None:
                ev.append((got[0], t, got[1]))
    _records[path] = ev
    return ev


def in_flight(path, t0, t1):
    """Requests issued in [t0, t1]: how many, contexts, the most at once at the mount, the mean
    while any was there, and how long the emulated disk stood idle before a request that found
    the mount empty (the median gap, microseconds, and how many requests found it so)."""
    ev = sorted(e for e in record_events(path) if t0 <= e[0] <= t1)
    if not ev:
        return {"requests": 0, "contexts": 0, "max": 0, "mean": 0.0, "idle_gap_us_p50": None,
                "found_idle": 0}
    pts = sorted([(e[0], 1) for e in ev] + [(e[1], -1) for e in ev], key=lambda p: (p[0], p[1]))
    n = mx = 0
    area = busy = 0.0
    last = None
    for t, d in pts:
        if last is not None and n > 0:
            area += n * (t - last)
            busy += t - last
        n += d
        mx = max(mx, n)
        last = t
    gaps = []
    done = ev[0][1]
    for issue, completion, _ in ev[1:]:
        if issue > done:
            gaps.append((issue - done) * 1e6)
        done = max(done, completion)
    gaps.sort()
    return {
        "requests": len(ev),
        "contexts": len({e[2] for e in ev}),
        "max": mx,
        "mean": round(area / busy, 2) if busy > 0 else 0.0,
        "idle_gap_us_p50": round(gaps[len(gaps) // 2], 1) if gaps else None,
        "found_idle": len(gaps),
    }


EXPIRE = {0: "too_idle", 1: "budget_timeout", 2: "budget_exhausted", 3: "no_more_requests", 4: "preempted"}


def bfq_trace(path):
    """What BFQ's log (the blk tracer's messages) says about a run."""
    if not path or path == "-" or not os.path.exists(path):
        return None
    expire = Counter()
    served = 0
    raised = Counter()
    merges = 0
    shared = 0
    first = first_merge = None
    for line in open(path):
        if " m " not in line:
            continue
        ts = re.search(r" (\d+\.\d+): ", line)
        if ts and first is None:
            first = float(ts.group(1))
        if ts and first_merge is None and "merging with queue" in line:
            first_merge = float(ts.group(1))
        m = re.search(r"expire \((\d)", line)
        if m:
            expire[EXPIRE.get(int(m.group(1)), m.group(1))] += 1
        if "bfqq_served" in line:
            served += 1
            if "bfqSHARED" in line:
                shared += 1
        m = re.search(r"raising period dur \d+/\d+ msec, old coeff (\d+)", line)
        if m:
            c = int(m.group(1))
            raised["soft_rt" if c >= 3000 else "interactive" if c > 1 else "none"] += 1
        if "merging with queue" in line:
            merges += 1
    return {
        "dispatches": served,
        "weight_raised_interactive": raised["interactive"],
        "weight_raised_soft_rt": raised["soft_rt"],
        "dispatches_from_merged_queue": shared,
        "queue_merges": merges,
        "first_merge_s": round(first_merge - first, 3) if first_merge is not None else None,
        "expirations": dict(expire),
    }


def fmt(x, nd=2):
    return "-" if x is None else f"{x:.{nd}f}"


def cut(record, before, after, out):
    """The requests of a blkparse recording issued between two stats.json snapshots, for a
    replay (`antsched sim --trace`)."""
    t0 = json.load(open(before))["runs"][0]["mounted_s"]
    t1 = json.load(open(after))["runs"][0]["mounted_s"]
    keep = False
    n = 0
    with open(out, "w") as w:
        for line in open(record):
            f = line.split()
            if len(f) < 10 or f[5] not in ("Q", "C"):
                continue
            if f[5] == "Q":
                keep = t0 <= float(f[3]) <= t1
                n += keep
            if keep:
                w.write(line)
    return n


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "cut":
        if len(sys.argv) != 6:
            sys.exit("usage: kernel-peers.py cut RECORDING BEFORE.json AFTER.json OUT")
        n = cut(*sys.argv[2:])
        if n == 0:
            sys.exit(f"kernel-peers.py: no request of {sys.argv[2]} between the snapshots")
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["report"])
    ap.add_argument("dir")
    for o in ["disk", "runtime", "probe-runtime", "skews", "default-scheduler", "start", "load",
              "load-end", "wall", "kernel", "fio"]:
        ap.add_argument("--" + o, default="")
    a = ap.parse_args()
    d = a.dir
    rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(d, "rows.tsv")) if l.strip()]
    skews = [int(k) for k in a.skews.split()]
    sims = {}

    def sim(workload):
        if workload not in sims:
            sims[workload] = sim_runs(os.path.join(d, f"{workload}.sim.json"))
        return sims[workload]

    out = {
        "bench": "kernel-peers",
        "disk": a.disk,
        "runtime_s": int(a.runtime),
        "probe_runtime_s": int(a.probe_runtime),
        "start": a.start,
        "load_start": a.load,
        "load_end": a.load_end,
        "wall_s": float(a.wall) if a.wall else None,
        "kernel": a.kernel,
        "fio": a.fio,
        "default_scheduler": a.default_scheduler,
        "rows": [],
        "skews": [],
        "probes": [],
    }
    for r in rows:
        kind, workload, setting, simsched, fio, before, after, rec, trace, info = r
        jobs = fio_jobs(fio)
        seen, t0, t1 = stats_diff(before, after)
        flight = in_flight(rec, t0, t1)
        if kind == "probe":
            out["probes"].append({
                "probe": workload,
                "setup": setting,
                "job": open(info).read() if os.path.exists(info) else info,
                "jobs": jobs,
                "total_mb_s": sum(j["mb_s"] for j in jobs.values()),
                "total_iops": sum(j["iops"] for j in jobs.values()),
                "mount_contexts": seen,
                "mount_in_flight": flight,
                "scheduler": json.load(open(after))["runs"][0]["scheduler"],
                "async_dio": json.load(open(after))["runs"][0].get("async_dio"),
            })
            continue
        if simsched == "default":
            simsched = a.default_scheduler
        s = sim(workload).get(simsched)
        total = sum(j["mb_s"] for j in jobs.values())
        replay = sim_runs(os.path.join(d, f"{workload}-{setting}.replay.json"))
        row = {
            "kind": kind,
            "workload": workload,
            "setting": setting if kind == "kernel" else f"mount {setting}" + (
                f" ({a.default_scheduler})" if setting == "default" else ""),
            "tunables": info,
            "jobs": jobs,
            "total_mb_s": total,
            "sim_scheduler": simsched,
            "sim_jobs": s["jobs"] if s else None,
            "sim_total_mb_s": s["total"] if s else None,
            "ratio": total / s["total"] if s and s["total"] > 0 else None,
            # The mount's recording of the run replayed on the model under the mount's own
            # scheduler: the same requests in the same order with the same gaps.
            "replay_mb_s": next(iter(replay.values()))["total"] if replay else None,
            "mount_contexts": seen,
            "mount_in_flight": flight,
            "bfq_trace": bfq_trace(trace),
        }
        out["rows"].append(row)

    # The rotational phase between the two sequential streams, for work-conserving schedulers.
    for w in ("seq2", "rw"):
        for sch in ("noop", "deadline", "bfq:low_latency=0,slice_idle=0", "bfq"):
            vals = []
            base = sim(w).get(sch)
            if base:
                vals.append((0, base["total"]))
            for k in skews:
                x = sim_runs(os.path.join(d, f"{w}-skew{k}.sim.json")).get(sch)
                if x:
                    vals.append((k, x["total"]))
            if vals:
                lo = min(v for _, v in vals)
                hi = max(v for _, v in vals)
                out["skews"].append({"workload": w, "scheduler": sch, "by_skew": dict(vals), "min": lo, "max": hi})
    skew_of = {(s["workload"], s["scheduler"]): s for s in out["skews"]}
    for row in out["rows"]:
        r = row["ratio"]
        row["within_15pct"] = r is not None and abs(r - 1) <= TOLERANCE
        sk = skew_of.get((row["workload"], row["sim_scheduler"]))
        if sk and row["kind"] == "kernel":
            lo, hi = sk["min"] * (1 - TOLERANCE), sk["max"] * (1 + TOLERANCE)
            row["sim_skew_range_mb_s"] = [sk["min"], sk["max"]]
            row["within_15pct_of_skew_range"] = lo <= row["total_mb_s"] <= hi

    json.dump(out, open(os.path.join(d, "kernel-peers.json"), "w"), indent=2)

    # --- Tables --------------------------------------------------------------------------
    print()
    print(f"The kernel's schedulers on a loop device (direct I/O, rotational) over an antsched mount "
          f"(noop) of {a.disk}, and antsched's own schedulers on the mount;")
    print(f"fio psync direct=1 64 KiB, the two jobs at offset 0 and 1 GiB, {a.runtime} s a run; "
          f"started {a.start}, load {a.load} (at the end {a.load_end}), {a.wall} s; "
          f"Linux {a.kernel}, {a.fio}")
    hdr = ("workload", "setting", "fio MB/s (each)", "total", "antsched sim", "sim MB/s (each)", "total",
           "fio/sim", "p99 ms fio (each)", "p99 ms sim (each)", "ctx", "max", "idle us", "replay")
    w = (8, 28, 15, 6, 16, 15, 6, 7, 17, 17, 3, 3, 7, 6)
    line = lambda cols: "  ".join(str(c).ljust(n) if i < 2 or i == 4 else str(c).rjust(n)
                                  for i, (c, n) in enumerate(zip(cols, w)))
    print(line(hdr))
    order = {"seq2": 0, "rand2": 1, "rw": 2}
    last = None
    for row in sorted(out["rows"], key=lambda r: (order.get(r["workload"], 9), r["kind"] != "kernel")):
        if last is not None and row["workload"] != last:
            print()
        last = row["workload"]
        names = list(row["jobs"])
        each = " / ".join(fmt(row["jobs"][n]["mb_s"]) for n in names)
        p99 = " / ".join(fmt(row["jobs"][n]["p99_ms"], 1) for n in names)
        sj = row["sim_jobs"] or {}
        seach = " / ".join(fmt(sj.get(n, {}).get("mb_s")) for n in names)
        sp99 = " / ".join(fmt(sj.get(n, {}).get("p99_ms"), 1) for n in names)
        ratio = fmt(row["ratio"])
        if row["ratio"] is not None and not row["within_15pct"]:
            ratio += "*"
        print(line((row["workload"], row["setting"], each, fmt(row["total_mb_s"]), row["sim_scheduler"], seach,
                    fmt(row["sim_total_mb_s"]), ratio, p99, sp99, len(row["mount_contexts"]),
                    row["mount_in_flight"]["max"], fmt(row["mount_in_flight"]["idle_gap_us_p50"], 0),
                    fmt(row["replay_mb_s"]))))
    print("(* more than 15% apart. ctx: contexts the mount saw issue the run's requests; max: the most "
          "requests the mount had at once; idle us: the median time the emulated disk stood idle before "
          "a request that found the mount empty; replay: the mount's recording of the run replayed on the "
          "disk model under noop, MB/s)")
    print("seq2/rand2: reader1 / reader2; rw: reader / writer. Settings: bfq-ll1 = bfq low_latency 1 "
          "(the kernel's default), bfq-ll0 = low_latency 0, bfq-ll0-idle0 = low_latency 0, slice_idle 0.")

    print()
    print("Work-conserving predictions with the second job k requests (64 KiB) further on "
          f"(k = 0, {', '.join(map(str, skews))}), total MB/s:")
    for s in out["skews"]:
        ks = ", ".join(fmt(v) for _, v in sorted(s["by_skew"].items()))
        kern = [r for r in out["rows"] if r["kind"] == "kernel" and r["workload"] == s["workload"]
                and r["sim_scheduler"] == s["scheduler"]]
        kt = ", ".join(f"{r['setting']} {fmt(r['total_mb_s'])}" +
                       ("" if r.get("within_15pct_of_skew_range") else " (outside)") for r in kern)
        print(f"  {s['workload']:5} {s['scheduler']:17} {ks}  (range {fmt(s['min'])} to {fmt(s['max'])}; kernel: {kt})")

    traced = [r for r in out["rows"] if r["bfq_trace"]]
    if traced:
        print()
        print("BFQ's own log (ftrace's blk tracer on the loop device):")
        print(f"  {'workload':8} {'setting':14} {'dispatches':>10} {'raised int.':>11} {'raised soft-rt':>14} "
              f"{'merged queue':>12} {'merges':>6} {'first at':>8}  expirations")
        for r in traced:
            t = r["bfq_trace"]
            ex = ", ".join(f"{k} {v}" for k, v in sorted(t["expirations"].items(), key=lambda kv: -kv[1]))
            print(f"  {r['workload']:8} {r['setting']:14} {t['dispatches']:>10} {t['weight_raised_interactive']:>11} "
                  f"{t['weight_raised_soft_rt']:>14} {t['dispatches_from_merged_queue']:>12} {t['queue_merges']:>6} {fmt(t['first_merge_s'], 2) + ' s' if t['first_merge_s'] is not None else '-':>8}  {ex}")

    if out["probes"]:
        print()
        print(f"What the mount sees behind the loop device ({a.probe_runtime} s each; loop device scheduler "
              f"none, mount scheduler {out['probes'][0]['scheduler']}):")
        print(f"  {'probe':20} {'setup':58} {'MB/s':>6} {'IOPS':>6} {'ctx':>3} {'max':>3} {'mean':>5} {'idle us':>7}  contexts")
        for p in out["probes"]:
            ctx = ", ".join(f"{c['name']} ({c['ios']})" for c in p["mount_contexts"])
            f = p["mount_in_flight"]
            print(f"  {p['probe']:20} {p['setup']:58} {fmt(p['total_mb_s']):>6} {p['total_iops']:>6.0f} "
                  f"{len(p['mount_contexts']):>3} {f['max']:>3} {fmt(f['mean']):>5} {fmt(f['idle_gap_us_p50'], 0):>7}  {ctx}")
        print("  (probe-seq2*: two psync sequential readers; probe-aio8*: one libaio random reader at iodepth 8;"
              " ctx: contexts the mount saw; max, mean: requests at the mount at once)")
    print()
    print(f"(figures in {os.path.join(d, 'kernel-peers.json')}; fio's outputs, the simulations, the mounts' "
          f"statistics and recordings beside it)")


if __name__ == "__main__":
    sys.exit(main())
