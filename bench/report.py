"""Shared by the bench/ scripts' reports (their Python, which imports this with bench/ on
sys.path from $BENCH_DIR): medians, gains of a rate, and the think time of the processes in a
trace the mount recorded (`antsched mount --record FILE --record-format blkparse`)."""

import statistics


def think_us(path):
    """Median time from a completion to the same process's next request, in us, in a trace
    the mount recorded (blkparse: a request's Q line names its context, its C line does not,
    so completions are matched to requests by sector and length)."""
    pending, done, gaps = {}, {}, []
    for line in open(path):
        f = line.split()
        if len(f) < 10 or f[5] not in ("Q", "C"):
            continue
        t, key = float(f[3]), (f[7], f[9])
        if f[5] == "Q":
            ctx = f[10] if len(f) > 10 else ""
            if ctx in done:
                gaps.append((t - done.pop(ctx)) * 1e6)
            pending[key] = ctx
        elif key in pending:
            done[pending.pop(key)] = t
    return statistics.median(gaps) if gaps else None


def med(xs):
    """The median, or None for no values."""
    return statistics.median(xs) if xs else None


def gain(base, new):
    """The gain of rate `new` over `base`, in percent (None where either is missing or 0)."""
    return (new / base - 1) * 100 if base and new else None


def pct(g):
    """A gain as the tables print it."""
    return "-" if g is None else f"{g:+.0f}%"
