#!/usr/bin/env python3
"""Mutation run of issue 17: mutates fio job files, scheduler SPECs and DiskSim files taken from
examples/, bench/ and data/, runs `antsched sim` on each mutant in a child process, and checks
that every one ends in a result or a one-line error: no panic, no abort or other signal, no run
past its stated limit (the wall-clock limit below, and a job's `runtime=` in virtual time), and
under 1 GB resident. Deterministic for a given --seed. Called by bench/mutate.sh."""

import argparse
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RSS_LIMIT_KB = 1 << 20  # 1 GiB
# What a child may use before the kernel stops it: well above the 1 GiB checked, so that a
# runaway input is counted (as over the limit) rather than taking the machine down.
AS_LIMIT = 8 << 30

INTERESTING = [
    "0", "-1", "1", "-0", "0.5", "1e308", "-1e308", "1e-320", "nan", "inf", "-inf",
    "18446744073709551615", "18446744073709551616", "9223372036854775807",
    "9223372036854775808", "4294967295", "4294967296", "2147483648", "65536", "1000000000",
    "99999999999999999999999999", "1.7976931348623157e308", "", " ", "x", "0x10", "1_000",
    "1ns", "1s", "3600s", "1000000000s", "9223372036854775807ns", "18446744073709551615ns",
    "1e18ns", "0.000001ms",
]
UNITS = ["", "k", "m", "g", "t", "p", "e", "ns", "us", "ms", "s", "h", "%", "KiB", "b"]
FIO_KEYS = [
    "rw", "bs", "size", "filesize", "nrfiles", "numjobs", "filename", "directory", "ioengine",
    "iodepth", "direct", "runtime", "time_based", "thinktime", "thinktime_blocks",
    "number_ios", "rwmixread", "offset", "startdelay", "exitall", "cgroup", "cgroup_weight",
    "prio", "prioclass", "fsync", "sync", "stonewall", "new_group", "loops", "zonesize",
    "antsched_issue_delay", "antsched_split", "antsched_readahead", "antsched_extent",
    "antsched_extent_gap", "antsched_disk_offset", "antsched_dir_files",
    "antsched_context_per_file", "antsched_writeback_interval", "antsched_dirty_limit",
    "antsched_thinktime_dist", "antsched_adversary", "antsched_split_flag",
]


def numbers_in(text):
    return list(re.finditer(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", text))


def mutate_text(text, rng, keys, max_edits=4):
    """One to `max_edits` edits of the kinds a careless or hostile user makes."""
    for _ in range(rng.randint(1, max_edits)):
        lines = text.split("\n")
        k = rng.randrange(11)
        if k == 0 and numbers_in(text):  # a number replaced by an interesting one
            m = rng.choice(numbers_in(text))
            text = text[: m.start()] + rng.choice(INTERESTING) + text[m.end():]
        elif k == 1 and numbers_in(text):  # a number scaled, with a unit
            m = rng.choice(numbers_in(text))
            n = rng.choice([0, 1, 7, 1000, 10**6, 10**9, 10**12, 10**18, 2**63, 2**64 - 1])
            text = text[: m.start()] + str(n) + rng.choice(UNITS) + text[m.end():]
        elif k == 2 and lines:  # a line dropped
            del lines[rng.randrange(len(lines))]
            text = "\n".join(lines)
        elif k == 3 and lines:  # a line repeated, possibly many times
            i = rng.randrange(len(lines))
            lines[i:i] = [lines[i]] * rng.choice([1, 2, 100])
            text = "\n".join(lines)
        elif k == 4 and len(lines) > 1:  # two lines swapped
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        elif k == 5 and keys:  # a known key with an interesting value
            lines.insert(
                rng.randrange(len(lines) + 1),
                f"{rng.choice(keys)}={rng.choice(INTERESTING)}{rng.choice(UNITS)}",
            )
            text = "\n".join(lines)
        elif k == 6 and text:  # bytes flipped
            b = bytearray(text.encode())
            for _ in range(rng.randint(1, 8)):
                b[rng.randrange(len(b))] = rng.randrange(256)
            text = b.decode("utf-8", "replace")
        elif k == 7 and text:  # a range deleted
            i = rng.randrange(len(text))
            text = text[:i] + text[i + rng.randint(1, 64):]
        elif k == 8 and text:  # a structural character inserted, possibly many times
            i = rng.randrange(len(text) + 1)
            c = rng.choice(["[", "]", "{", "}", "=", ",", ":", "\0", "\x1b", "\n", '"', "#", ";"])
            text = text[:i] + c * rng.choice([1, 1, 3, 10000]) + text[i:]
        elif k == 9 and text:  # a span copied elsewhere
            i = rng.randrange(len(text))
            span = text[i: i + rng.randint(1, 200)]
            j = rng.randrange(len(text) + 1)
            text = text[:j] + span + text[j:]
        else:  # truncated
            text = text[: rng.randrange(len(text) + 1)] if text else text
    return text


TIME_UNITS = {"": 1.0, "s": 1.0, "sec": 1.0, "ms": 1e-3, "msec": 1e-3, "us": 1e-6,
              "usec": 1e-6, "ns": 1e-9, "nsec": 1e-9, "m": 60.0, "min": 60.0, "h": 3600.0,
              "d": 86400.0}


def stated_runtime_s(text):
    """The longest runtime of a job file's jobs, in seconds, with fio's rule that a [global]
    section sets the default for the jobs after it; None if a job has none (or it does not
    read as a whole number with a unit: then antsched refuses the file)."""
    default, current, runtimes = None, None, []
    section = None
    for raw in text.split("\n"):
        line = raw.strip()
        m = re.match(r"^\[(.*)\]$", line)
        if m:
            if section not in (None, "global"):
                runtimes.append(current)
            section = m.group(1).strip()
            current = default
            continue
        m = re.match(r"^runtime\s*=\s*(\d+)\s*([a-zA-Z]*)$", line)
        if m and m.group(2).lower() in TIME_UNITS:
            value = int(m.group(1)) * TIME_UNITS[m.group(2).lower()]
            value = value or None  # runtime=0: no limit
            if section == "global":
                default = value
            current = value
    if section not in (None, "global"):
        runtimes.append(current)
    if not runtimes or any(r is None for r in runtimes):
        return None
    return max(runtimes)


def spec_corpus(antsched):
    """Every scheduler alone and with all its tunables at their defaults."""
    out = subprocess.run([antsched, "schedulers"], capture_output=True, text=True).stdout
    specs, cur = [], None
    for line in out.splitlines():
        m = re.match(r"^([a-z][a-z0-9-]*)\s{2,}", line)
        if m:
            cur = [m.group(1), []]
            specs.append(cur)
            continue
        m = re.match(r"^\s+([a-z_]+)=(\S+)\s{2,}", line)
        if m and cur:
            cur[1].append(f"{m.group(1)}={m.group(2)}")
    seeds = []
    for name, tunables in specs:
        seeds.append(name)
        if tunables:
            seeds.append(f"{name}:" + ",".join(tunables))
    return seeds, sorted({t.split("=")[0] for _, ts in specs for t in ts})


def mutate_spec(spec, rng, keys):
    r = rng.random()
    if r < 0.7 and ":" in spec:  # one tunable's value replaced
        name, rest = spec.split(":", 1)
        parts = rest.split(",")
        i = rng.randrange(len(parts))
        key, _, old = parts[i].partition("=")
        unit = re.sub(r"^[-\d.]*", "", old)
        if rng.random() < 0.6:  # the same unit, an extreme number: often valid
            n = rng.choice(["0", "1", "0.5", "1e-9", "1e9", "4294967295", "18446744073709551615",
                            "9223372036854775807", "1000000000", "1e18", "1e19", "1e300"])
            parts[i] = f"{key}={n}{unit}"
        else:
            parts[i] = f"{key}={rng.choice(INTERESTING)}{rng.choice(UNITS)}"
        return f"{name}:" + ",".join(parts)
    if r < 0.8:  # a tunable added (of this scheduler or another)
        sep = "," if ":" in spec else ":"
        return f"{spec}{sep}{rng.choice(keys)}={rng.choice(INTERESTING)}{rng.choice(UNITS)}"
    return mutate_text(spec, rng, keys)


def wall_limit(kind):
    # Every input is refused or simulated within this; an input's own limits (a job's
    # runtime, the virtual-time and size limits of docs/workloads.md) must make it so.
    return 60.0


def run(cmd, cwd, limit):
    def limits():
        resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    t0 = time.monotonic()
    errf = open(os.path.join(cwd, "stderr"), "w+b")
    p = subprocess.Popen(
        cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=errf,
        preexec_fn=limits, start_new_session=True,
    )
    timed_out = False
    # wait4 gives this child's own peak resident set.
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - t0 > limit:
            timed_out = True
            os.killpg(p.pid, signal.SIGKILL)
            pid, status, ru = os.wait4(p.pid, 0)
            break
        time.sleep(0.002)
    p.returncode = 0  # reaped above; keep Popen from waiting again
    wall = time.monotonic() - t0
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    errf.seek(0)
    err = errf.read().decode("utf-8", "replace")
    errf.close()
    return code, err, wall, timed_out, ru.ru_maxrss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--antsched", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    work = os.path.join(a.work, "mutate")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "failures"))

    jobs = [os.path.join(ROOT, "examples/jobs", f) for f in sorted(os.listdir(os.path.join(ROOT, "examples/jobs")))]
    jobs += [os.path.join(ROOT, "bench", f) for f in sorted(os.listdir(os.path.join(ROOT, "bench"))) if f.endswith(".fio")]
    job_texts = [open(j).read() for j in jobs]
    specs, spec_keys = spec_corpus(a.antsched)
    dsdir = os.path.join(ROOT, "data/disksim")
    ds_files = sorted(f for f in os.listdir(dsdir) if f.endswith((".parv", ".diskspecs", ".model", ".seek")))
    drives = sorted({f.rsplit(".", 1)[0] for f in ds_files})
    # A short job for the mutated SPECs and disks: two readers, 16 MB each.
    small_job = os.path.join(work, "small.fio")
    with open(small_job, "w") as f:
        f.write("[global]\nrw=read\nbs=64k\nsize=16m\nioengine=mmap\nthinktime=1ms\n[a]\nfilename=a\n[b]\nfilename=b\n")

    kinds = ["job"] * 4 + ["spec"] * 3 + ["disksim"] * 3
    stats = {k: {"inputs": 0, "ran": 0, "refused": 0, "failed": 0, "max_rss_kb": 0,
                 "max_wall_s": 0.0, "wall_s": 0.0} for k in ("job", "spec", "disksim")}
    failures = []
    case_dir = os.path.join(work, "case")
    for n in range(a.count):
        kind = kinds[n % len(kinds)]
        shutil.rmtree(case_dir, ignore_errors=True)
        os.makedirs(case_dir)
        if kind == "job":
            i = rng.randrange(len(jobs))
            text = mutate_text(job_texts[i], rng, FIO_KEYS)
            path = os.path.join(case_dir, "job.fio")
            with open(path, "w", errors="replace") as f:
                f.write(text)
            cmd = [a.antsched, "sim", path, "--scheduler", rng.choice(["as-aged-sptf", "cfq", "bfq", "aged-sptf"]),
                   "--json", os.path.join(case_dir, "out.json")]
            subject = text
        elif kind == "spec":
            # Mostly a scheduler with all its tunables, one of them extreme: the values a
            # SPEC's checks must bound.
            full = [x for x in specs if ":" in x]
            spec = mutate_spec(rng.choice(full if rng.random() < 0.8 else specs), rng, spec_keys)
            # An argument cannot carry a NUL, nor pass the kernel's 128 KiB per argument.
            spec = spec.replace("\0", "")[:100_000]
            cmd = [a.antsched, "sim", small_job, "--scheduler", spec]
            subject = spec
        else:
            drive = rng.choice(drives)
            for f in ds_files:
                if f.startswith(drive + "."):
                    shutil.copy(os.path.join(dsdir, f), case_dir)
            victim = rng.choice([f for f in ds_files if f.startswith(drive + ".")])
            with open(os.path.join(dsdir, victim)) as f:
                # One edit: a DiskSim file with several is almost always refused at the
                # first, and the model behind it is never built.
                text = mutate_text(f.read(), rng, [], max_edits=1)
            with open(os.path.join(case_dir, victim), "w", errors="replace") as f:
                f.write(text)
            cmd = [a.antsched, "sim", small_job, "--disk", os.path.join(case_dir, drive + ".parv"),
                   "--scheduler", "as-aged-sptf"]
            subject = f"{victim}\n{text}"

        code, err, wall, timed_out, rss_this = run(cmd, case_dir, wall_limit(kind))
        s = stats[kind]
        s["inputs"] += 1
        s["wall_s"] += wall
        s["max_wall_s"] = max(s["max_wall_s"], wall)
        s["max_rss_kb"] = max(s["max_rss_kb"], rss_this)
        problem = None
        if timed_out:
            problem = f"ran past {wall_limit(kind):.0f} s"
        elif code < 0:
            problem = f"killed by signal {-code}"
        elif "panicked" in err or "RUST_BACKTRACE" in err:
            problem = "panic"
        elif rss_this > RSS_LIMIT_KB:
            problem = f"{rss_this // 1024} MB resident"
        elif code not in (0, 1, 2):
            problem = f"exit status {code}"
        elif code != 0 and not err.startswith("error"):
            problem = "failed without an error message"
        elif code == 0 and kind == "job":
            # A job file whose every job states a runtime must not run past the longest of
            # them in virtual time (a job without one may run longer: its size ends it).
            limit_s = stated_runtime_s(subject)
            try:
                runs = json.load(open(os.path.join(case_dir, "out.json")))["runs"]
            except (OSError, ValueError, KeyError):
                runs = []
            if limit_s and runs:
                longest = max(r["duration_s"] for r in runs)
                if longest > limit_s * 1.01 + 1:
                    problem = f"ran {longest:.1f} s of virtual time past runtime={limit_s:g}s"
        if problem:
            s["failed"] += 1
            name = f"{n:05d}-{kind}"
            with open(os.path.join(work, "failures", name), "w", errors="replace") as f:
                f.write(f"{problem}\n{' '.join(cmd)}\n{err[:2000]}\n---\n{subject}")
            failures.append({"case": n, "kind": kind, "problem": problem})
        elif code == 0:
            s["ran"] += 1
        else:
            s["refused"] += 1
        if (n + 1) % 1000 == 0:
            print(f"mutate: {n + 1}/{a.count}", file=sys.stderr)

    total = {
        "inputs": sum(s["inputs"] for s in stats.values()),
        "ran": sum(s["ran"] for s in stats.values()),
        "refused": sum(s["refused"] for s in stats.values()),
        "failed": sum(s["failed"] for s in stats.values()),
        "max_rss_kb": max(s["max_rss_kb"] for s in stats.values()),
        "max_wall_s": max(s["max_wall_s"] for s in stats.values()),
        "wall_s": sum(s["wall_s"] for s in stats.values()),
    }
    result = {"seed": a.seed, "kinds": stats, "total": total, "failures": failures,
              "rss_limit_mb": RSS_LIMIT_KB // 1024, "wall_limit_s": wall_limit("job")}
    out = os.path.join(a.work, "mutate.json")
    with open(out, "w") as f:
        json.dump(result, f, indent=2)
    print(f"{'kind':<8} {'inputs':>7} {'ran':>6} {'refused':>8} {'failed':>7} {'max RSS MB':>11} {'max wall s':>11} {'mean wall ms':>13}")
    for k, s in list(stats.items()) + [("all", total)]:
        mean_ms = 1000 * s["wall_s"] / max(s["inputs"], 1)
        print(f"{k:<8} {s['inputs']:>7} {s['ran']:>6} {s['refused']:>8} {s['failed']:>7} "
              f"{s['max_rss_kb'] / 1024:>11.1f} {s['max_wall_s']:>11.2f} {mean_ms:>13.1f}")
    print(f"figures: {out}; failing inputs: {os.path.join(work, 'failures')}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
