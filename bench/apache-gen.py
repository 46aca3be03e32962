#!/usr/bin/env python3
"""Writes the web file set and the request list of bench/apache.sh from a seed.

    apache-gen.py SEED FILES OUTDIR

OUTDIR/www/dNN/fNNNN.html  the files (pseudo-random bytes, so the page cache cannot share
                           pages and compression could not shrink them)
OUTDIR/urls.txt            REQUESTS request paths, one a line, in the order the load generator
                           replays them
OUTDIR/stats.json          the size distribution of the requests and their reuse, beside the
                           paper's figures

The paper's load (SOSP 2001 section 4.4; thesis 9.4) replays the UC Berkeley CS web trace: a
request's median size 4,768 B, mean 86 KB, mean 13 KB without the largest 5%; 1,000 requests
touch 745 distinct files. The trace is not public; this draws a stand-in with those figures:

- sizes: 95% of the files from a log-normal with median 4,500 B and sigma 2.0 (natural log)
  truncated to 64 B .. 128 KiB, the body of web traces; the other 5% log-uniform between
  128 KiB and 5.5 MiB, the heavy tail that carries most of the bytes. The sizes are the two
  parts' evenly spaced quantiles (so the file set has median 4,733 B, mean 87 KB, mean
  13.4 KB without the largest 5%, whatever the seed), dealt to the files at random. About 0.5%
  of the files are over 4 MiB, which Apache read()s where it mmaps the rest.
- popularity: Zipf with exponent 0.65 over the files (rank i drawn with weight 1 / i^0.65),
  ranks given to files at random, so a file's size does not depend on its popularity and
  popular files lie anywhere on the disk. With 4,000 files, 1,000 requests touch about 745
  distinct files.
"""
import bisect
import hashlib
import itertools
import json
import math
import os
import random
import statistics
import sys

BODY_MEDIAN = 4500
BODY_SIGMA = 2.0
BODY_MIN = 64
TAIL_FROM = 128 * 1024
TAIL_TO = int(5.5 * 1024 * 1024)
TAIL_SHARE = 0.05
ZIPF = 0.65
PER_DIR = 64
REQUESTS = 40000
PAPER = {"median_bytes": 4768, "mean_bytes": 86000, "mean_without_top5_bytes": 13000,
         "distinct_in_1000": 745}


def sizes_for(nfiles, r):
    """The files' sizes: evenly spaced quantiles of the two parts (so the file set has the
    distribution's figures whatever the seed), dealt to the files at random."""
    nd = statistics.NormalDist(math.log(BODY_MEDIAN), BODY_SIGMA)
    lo, hi = nd.cdf(math.log(BODY_MIN)), nd.cdf(math.log(TAIL_FROM))
    ntail = round(nfiles * TAIL_SHARE)
    nbody = nfiles - ntail
    body = [int(math.exp(nd.inv_cdf(lo + (k + 0.5) / nbody * (hi - lo)))) for k in range(nbody)]
    span = math.log(TAIL_TO) - math.log(TAIL_FROM)
    tail = [int(math.exp(math.log(TAIL_FROM) + (k + 0.5) / ntail * span)) for k in range(ntail)]
    sizes = body + tail
    r.shuffle(sizes)
    return sizes


def main():
    seed, nfiles, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    r = random.Random(seed)
    sizes = sizes_for(nfiles, r)
    paths = [f"d{i // PER_DIR:02d}/f{i:04d}.html" for i in range(nfiles)]
    www = os.path.join(out, "www")
    for i, (p, n) in enumerate(zip(paths, sizes)):
        full = os.path.join(www, p)
        if i % PER_DIR == 0:
            os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(r.randbytes(n))
    # Popularity: Zipf over ranks, ranks dealt to files at random.
    order = list(range(nfiles))
    r.shuffle(order)
    cum = list(itertools.accumulate(1 / (k + 1) ** ZIPF for k in range(nfiles)))
    reqs = [order[bisect.bisect(cum, r.random() * cum[-1])] for _ in range(REQUESTS)]
    with open(os.path.join(out, "urls.txt"), "w") as f:
        f.writelines(f"/{paths[i]}\n" for i in reqs)
    # The checks against the paper's figures, over the whole request list.
    def figures(xs):
        xs = sorted(xs)
        return {"median_bytes": statistics.median(xs), "mean_bytes": round(statistics.mean(xs)),
                "mean_without_top5_bytes": round(statistics.mean(xs[:int(len(xs) * 0.95)])),
                "over_4mib_pct": round(sum(x >= 4 << 20 for x in xs) / len(xs) * 100, 2),
                # what one request costs the disk in 4 KiB pages, and in Apache's 8,000-byte
                # read()s (APR's file bucket), on average: bench/apache.fio's runs
                "pages_per_request": round(statistics.mean(-(-x // 4096) for x in xs), 2),
                "reads_per_request": round(statistics.mean(-(-x // 8000) for x in xs), 2)}
    distinct = [len(set(reqs[k:k + 1000])) for k in range(0, REQUESTS - 999, 1000)]
    stats = {
        "seed": seed, "files": nfiles, "file_bytes": sum(sizes), "requests": REQUESTS,
        "file_set": figures(sizes), "request_list": figures(sizes[i] for i in reqs),
        "distinct_in_1000": round(statistics.mean(distinct), 1),
        "distribution": {"body": f"{100 - TAIL_SHARE * 100:.0f}% log-normal, median {BODY_MEDIAN} B, "
                                 f"sigma {BODY_SIGMA}, {BODY_MIN} B to 128 KiB",
                         "tail": f"{TAIL_SHARE * 100:.0f}% log-uniform, 128 KiB to 5.5 MiB",
                         "sizes": "evenly spaced quantiles of each part, dealt to the files at random",
                         "popularity": f"Zipf {ZIPF} over the files, ranks at random"},
        "paper": PAPER,
    }
    with open(os.path.join(out, "stats.json"), "w") as f:
        json.dump(stats, f, indent=1)
    # Each file's SHA-256, as sha256sum prints it (relative to www/).
    with open(os.path.join(out, "backing.sha256"), "w") as f:
        for p in paths:
            with open(os.path.join(www, p), "rb") as g:
                f.write(f"{hashlib.sha256(g.read()).hexdigest()}  {p}\n")


if __name__ == "__main__":
    main()
