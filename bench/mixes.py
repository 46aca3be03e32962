#!/usr/bin/env python3
"""Issue 18's line on mixes of many contexts, in the simulator: the default scheduler against the
best Linux peer on every job in bench/mixes/ and the mixes of examples/jobs/, over several seeds.

A run passes when `as-rw-sptf` (or --scheduler) makes no application request wait 2 s, gets at
least 95% of the throughput of the best Linux peer that makes none wait 2 s (`linux-as`,
`deadline`, `cfq`, `bfq`, `cas`), and its worst-served context gets at least half of what that
peer's worst-served context gets. The write-back daemon's context is left out of both, as the
comparison of `antsched paper` leaves it out: a buffered writer is judged by its own writes.

bench/mixes/ holds mixes written to try the scheduler on workloads of the issue's kinds that the
examples do not cover (many streams, readers against writers, chains against streams, mixes of
think times); each is plain fio with antsched's own options where it needs them.

    bench/mixes.py                       (target/release/antsched; seeds 1 to 5)
    bench/mixes.py --antsched BIN --seeds 1,2 --scheduler as-rw-sptf:estimator=calibrated

Prints one line per job and seed and the count that pass; writes every figure to
$ANTSCHED_BENCH_DIR/mixes/mixes.json (ANTSCHED_BENCH_DIR=/tmp/antsched-bench by default). Runs
only the simulator: nothing to install or clean up. About 3 s on two cores.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEERS = ["linux-as", "deadline", "cfq", "bfq", "cas"]
EXAMPLES = [
    "mix-of-readers.fio",
    "mix-of-think-times.fio",
    "mixed-think.fio",
    "readers-vs-flood.fio",
    "sixteen-readers.fio",
    "skipping-readers-vs-streams.fio",
]
STARVATION_MS = 2000.0


def summary(run):
    """(MB/s, worst-served context's MB/s, longest wait in ms) of one run, without write-back."""
    apps = [c for c in run["contexts"] if c["name"] != "writeback"]
    worst = min(c["throughput_mb_s"] for c in apps)
    wait = max(max(c["latency_ms"]["max"], c.get("stalled_ms") or 0.0) for c in apps)
    return run["throughput_mb_s"], worst, wait


def judge(antsched, ours, job, seed):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.json")
        cmd = [antsched, "sim", str(job), "--seed", str(seed), "--json", out]
        for s in [ours] + PEERS:
            cmd += ["--scheduler", s]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        runs = json.load(open(out))["runs"]
    mine, peers = summary(runs[0]), {r["scheduler"]: summary(r) for r in runs[1:]}
    fair = {k: v for k, v in peers.items() if v[2] < STARVATION_MS}
    best = max(fair, key=lambda k: fair[k][0]) if fair else None
    row = {
        "job": job.name,
        "seed": seed,
        "scheduler": ours,
        "mb_s": mine[0],
        "worst_mb_s": mine[1],
        "max_wait_ms": mine[2],
        "best_peer": best,
    }
    if best is None:
        row.update(ratio=None, peer_worst_mb_s=None, passed=mine[2] < STARVATION_MS)
        return row
    ratio = mine[0] / fair[best][0]
    row.update(
        peer_mb_s=fair[best][0],
        peer_worst_mb_s=fair[best][1],
        ratio=ratio,
        passed=mine[2] < STARVATION_MS and ratio >= 0.95 and mine[1] >= 0.5 * fair[best][1],
    )
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--antsched", default=str(ROOT / "target/release/antsched"))
    ap.add_argument("--scheduler", default="as-rw-sptf")
    ap.add_argument("--seeds", default="1,2,3,4,5")
    args = ap.parse_args()
    if not os.access(args.antsched, os.X_OK):
        sys.exit(f"mixes: {args.antsched} is not an executable (cargo build --release first)")
    seeds = [int(s) for s in args.seeds.split(",") if s]
    jobs = sorted((ROOT / "bench/mixes").glob("*.fio")) + [ROOT / "examples/jobs" / e for e in EXAMPLES]
    work = [(j, s) for j in jobs for s in seeds]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        rows = list(pool.map(lambda w: judge(args.antsched, args.scheduler, *w), work))
    print(f"{'job':42s} {'seed':>4s} {'MB/s':>7s} {'of best':>7s} {'worst':>7s} {'half':>7s}  best peer")
    for r in rows:
        ratio = f"{r['ratio']:.3f}" if r["ratio"] is not None else "-"
        half = f"{r['peer_worst_mb_s'] / 2:.3f}" if r["peer_worst_mb_s"] is not None else "-"
        print(
            f"{r['job']:42s} {r['seed']:4d} {r['mb_s']:7.2f} {ratio:>7s} {r['worst_mb_s']:7.3f} "
            f"{half:>7s}  {r['best_peer'] or '-':9s} {'pass' if r['passed'] else 'FAIL'}"
        )
    passed = sum(r["passed"] for r in rows)
    print(f"{args.scheduler}: {passed} of {len(rows)} pass")
    d = Path(os.environ.get("ANTSCHED_BENCH_DIR", "/tmp/antsched-bench")) / "mixes"
    d.mkdir(parents=True, exist_ok=True)
    with open(d / "mixes.json", "w") as f:
        json.dump({"scheduler": args.scheduler, "seeds": seeds, "passed": passed, "runs": rows}, f, indent=1)
    print(f"figures: {d / 'mixes.json'}")


if __name__ == "__main__":
    main()
