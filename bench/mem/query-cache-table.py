#!/usr/bin/env python3
"""The query-cache benches' table and JSON (bench/mem/query-cache-lib.sh's qc_table).

  query-cache-table.py OUT JSON_NAME COMPARE QUERIES LIMIT_S HOG_MB HOG_AT NAME...

Reads OUT/NAME.json and OUT/NAME.status of each run, prints the table, and with COMPARE 1 a
line for each anchor policy (psi, halve, senpai), alone and with the hog, saying whether the
adaptive run is ahead of it on runtime at equal or smaller peak memory, with the figures that
decide it. Writes OUT/JSON_NAME.
"""
import json
import os
import sys

out, json_name, compare = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
queries, limit_s = int(sys.argv[4]), float(sys.argv[5])
hog_mb, hog_at = int(sys.argv[6]), float(sys.argv[7])
names = sys.argv[8:]

runs = []
for n in names:
    try:
        status = int(open(os.path.join(out, n + ".status")).read())
    except (OSError, ValueError):
        status = None
    p = os.path.join(out, n + ".json")
    r = json.load(open(p)) if os.path.exists(p) else {}
    r["outcome"] = ("finished" if r.get("completed") else "time limit") if "completed" in r else (
        "not run" if status is None else
        "killed by the OOM killer" if status == 137 else f"failed (exit {status})")
    r["name"] = n
    r["exit_status"] = status
    try:
        # The machine's reclaim (kswapd and direct) while the run ran, MB: another job on the
        # machine filling the page cache reclaims from every group, ours too.
        r["machine_reclaim_mb"] = int(open(os.path.join(out, n + ".machine-reclaim")).read()) * 4096 / 2**20
    except (OSError, ValueError):
        r["machine_reclaim_mb"] = None
    try:
        # What memd's enforcement took from the run's group, MB (its log): it does so when the
        # machine is below tau, whoever filled it.
        r["memd_took_mb"] = int(open(os.path.join(out, n + ".memd-took")).read()) / 1024
    except (OSError, ValueError):
        r["memd_took_mb"] = None
    runs.append(r)


def f(x, fmt):
    return "-" if x is None else fmt.format(x)


print()
print(f"query-cache: {queries} queries, 200 MB database on antsched mount (deskstar-34gxp, as-aged-sptf), "
      f"256 MB group, hog {hog_mb} MB at {hog_at:g} s, time limit {limit_s:g} s")
print(f"{'run':<15} {'runtime_s':>10} {'queries':>8} {'hit_rate':>9} {'peak_anon':>10} {'group_peak':>11} "
      f"{'group_mean':>11} {'cache_peak':>11} {'reaction ms mean/max':>21} {'machine_rcl':>11} {'memd_took':>9}  outcome")
for r in runs:
    react = r.get("reaction") or {}
    rx = "-" if not react.get("count") else f"{react['mean_ms']:.1f} / {react['max_ms']:.1f}"
    hit = r.get("hit_rate")
    print(f"{r['name']:<15} {f(r.get('runtime_s'), '{:.1f}'):>10} {f(r.get('completed_queries'), '{}'):>8} "
          f"{f(None if hit is None else hit * 100, '{:.1f}%'):>9} {f(r.get('peak_anon_mb'), '{:.0f} MB'):>10} "
          f"{f(r.get('group_peak_mb'), '{:.0f} MB'):>11} {f(r.get('mean_group_mb'), '{:.0f} MB'):>11} "
          f"{f(r.get('peak_cache_mb'), '{:.0f} MB'):>11} {rx:>21} {f(r.get('machine_reclaim_mb'), '{:.0f} MB'):>11} {f(r.get('memd_took_mb'), '{:.0f} MB'):>9}  {r['outcome']}")
def disturbed_run(r):
    return (r.get("machine_reclaim_mb") or 0) >= 64 or (r.get("memd_took_mb") or 0) >= 1


disturbed = [r["name"] for r in runs if disturbed_run(r)]
if disturbed:
    print("machine_rcl: what the kernel reclaimed machine-wide during the run (kswapd and direct); memd_took: "
          "what memd's enforcement took from the run's group because the machine was below tau; "
          f"{', '.join(disturbed)}: another job filled the machine's memory meanwhile, and that reclaim took "
          "the database's pages from the group whatever its policy: compare those runs with care")
for r in runs:
    s = r.get("senpai")
    if s:
        print(f"{r['name']}: the group's limit from {s['start_limit_mb']:.0f} MB (its usage) down to "
              f"{s['min_limit_mb']:.0f}, mean {s['mean_limit_mb']:.0f}, last {s['final_limit_mb']:.0f}; "
              f"{s['lowered']} steps down, {s['raised']} up, {s['refused']} refused, every {s['interval_s']:g} s; "
              f"{s['over_target']} of {s['intervals']} intervals over the {s['target'] * 100:.2f}% stall target; "
              f"restored {s['ceiling_mb']:.0f} MB: {'yes' if s['restored'] else 'NO'}")
if any(r.get("senpai") for r in runs):
    print("senpai: without swap a lower limit reclaims only the database's file pages, never the "
          "anonymous result cache")

by = {r["name"]: r for r in runs}
verdicts = []


def runtime_text(r):
    if r.get("completed"):
        return f"{r['runtime_s']:.1f} s"
    if r.get("completed_queries") is not None:
        return f"did not finish ({r['completed_queries']} of {queries} queries in {r['runtime_s']:.1f} s)"
    return r.get("outcome", "not run")


if compare:
    print()
    for prefix, setting in (("", "alone"), ("hog-", f"with the {hog_mb} MB hog")):
        a = by.get(prefix + "adaptive")
        for anchor in ("psi", "halve", "senpai"):
            b = by.get(prefix + anchor)
            if not a or not b or "completed" not in a or "completed" not in b:
                continue
            if a["completed"] and b["completed"]:
                faster = a["runtime_s"] < b["runtime_s"]
            elif a["completed"] != b["completed"]:
                faster = a["completed"]
            else:
                # Neither finished in the same time limit: the one that answered more.
                faster = a["completed_queries"] > b["completed_queries"]
            pa, pb = a.get("group_peak_mb"), b.get("group_peak_mb")
            # Equal within 1% (the group peaks sit at the 256 MB limit).
            smaller = pa is not None and pb is not None and pa <= pb * 1.01
            ahead = faster and smaller
            why = []
            if not faster:
                why.append("slower")
            if not smaller:
                why.append("a larger peak")
            verdict = "ahead" if ahead else "not ahead (" + " and ".join(why) + ")"
            line = (f"adaptive vs {anchor}, {setting}: {verdict}: runtime {runtime_text(a)} against {runtime_text(b)}; "
                    f"group peak {f(pa, '{:.0f}')} against {f(pb, '{:.0f}')} MB, mean "
                    f"{f(a.get('mean_group_mb'), '{:.0f}')} against {f(b.get('mean_group_mb'), '{:.0f}')} MB; "
                    f"anonymous peak {a['peak_anon_mb']:.0f} against {b['peak_anon_mb']:.0f} MB; "
                    f"hit rate {a['hit_rate'] * 100:.1f}% against {b['hit_rate'] * 100:.1f}%")
            if disturbed_run(a) or disturbed_run(b):
                line += (f" [disturbed: the machine reclaimed {a.get('machine_reclaim_mb') or 0:.0f} and "
                         f"{b.get('machine_reclaim_mb') or 0:.0f} MB, memd took {a.get('memd_took_mb') or 0:.0f} and "
                         f"{b.get('memd_took_mb') or 0:.0f} MB from the groups during these runs: not a fair comparison]")
            print(line)
            verdicts.append({"anchor": anchor, "hog": bool(prefix), "ahead": ahead, "faster": faster,
                             "equal_or_smaller_peak": smaller, "text": line})

doc = {
    "experiment": json_name.removesuffix(".json"),
    "queries": queries,
    "time_limit_s": limit_s,
    "disk": "deskstar-34gxp", "scheduler": "as-aged-sptf", "limit_mb": 256, "hog_mb": hog_mb, "hog_at_s": hog_at,
    "thesis": {"runtime_min": {"fixed-0": 46.7, "fixed-100": 34.7, "fixed-170": 34.1, "fixed-300": 28.8, "adaptive": 30.6,
                               "hog-adaptive": 40.9, "hog-fixed-200": None},
               "reaction_ms": {"mean": 8, "max": 88}},
    "runs": runs,
}
if compare:
    doc["adaptive_vs_anchors"] = verdicts
json.dump(doc, open(os.path.join(out, json_name), "w"), indent=2)
print(f"\nJSON: {os.path.join(out, json_name)}")
