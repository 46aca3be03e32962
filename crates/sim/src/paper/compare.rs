//! Comparison mode: every scheduler of the catalog (antsched's own and the peers) on every
//! microbenchmark of the suite, each measured by what that microbenchmark is about.
//!
//! A column is one workload and one measure: application throughput for the access patterns
//! and think times, a share ratio against its target for the proportional-share workloads,
//! the timed job's seconds for the first two Linux/CAS tables. Every cell also carries the
//! run's throughput, every context's shares, and the p99 latency of the worst-served context,
//! so one table answers "who is fastest", another "who honours the weights", another "who
//! makes someone wait". A cell's score is what a heat map colours: 1 for the best of its
//! column (for a share ratio: on target), falling towards 0.

use serde::Serialize;

use super::published::Runs;
use super::workloads::all_schedulers;
use super::PaperRun;

/// What the comparison shows and why, for the report (markdown). Written after reading the
/// runs (their shares, latencies and waits in `results.json`); the figures are the default
/// suite's.
pub const NOTES: &str = "\
Reading the comparison (figures from the default suite):

- **Long-lived readers (4.1, 4.2, two readers).** Anticipation is what wins. antsched's \
anticipatory schedulers lead: two sequential mmap readers at 20.9 (as-sptf, as-clook) and 20.5 \
MB/s (as-aged-sptf) against 19.0 for linux-as and cas, 18.8 for BFQ and 18.5 for CFQ, because the \
Linux schedulers switch readers whenever a read expires (125 ms) or a batch or slice ends, and \
pay a seek each time; that is also why their worst p99 is 130 to 150 ms where as-aged-sptf's is \
7 to 12 ms on the 4.1 sequential and alternate-block patterns. On random reads antsched's \
cost-benefit rule still gains about 30% (LAS's mean-seek rule about 26%), while CFQ and BFQ stop \
idling for seeky queues and gain nothing. BFQ also does not idle for the 4.2 readers that think 4 ms or more: its I/O-bound \
test (idle at most 20% of its I/O time) and short-think test (mean at most `slice_idle`/2) both \
fail for them, so in a symmetric scenario it serves them like deadline (4.5 MB/s at 4 ms, where \
CFQ and the anticipatory schedulers give 8.5 to 9). as-aged-sptf's p99 on the random patterns \
and at 8 ms think times is its 1 s age bound.
- **Shares.** as-stride meets disk-time shares exactly (2.00, 3.00) at about half the throughput; \
as-stride-combo keeps full throughput with 1.79 and 2.69. BFQ meets byte shares exactly (2.00, \
10.0) at 19 MB/s, and comes close in disk time (1.83, 3.20): for sequential readers, weights by \
bytes are BFQ's strength. The seek-ordering and Linux schedulers other than BFQ ignore weights \
(2.6.29 CFQ has none); as-sptf and as-clook, which never age requests, starve a reader outright \
(shares of 0).
- **A reader against a write-back flood (CAS Table 1).** The Linux schedulers win: they keep \
synchronous reads apart from asynchronous writes (AS's read batches and write batch limits, CFQ's \
and BFQ's sync queues), 13.6 s (LAS, CAS) to 23.5 s (BFQ), with deadline an order of magnitude \
behind. antsched's policies treat write-back like any request: Aged-SPTF lets the backlog (over a \
second of writes) age past its 1 s bound and then serves it oldest first, so each read waits \
behind it and the reader is not done after 300 s (with `age_bound=10s` it takes 20 s); SPTF, \
C-LOOK, SSTF and LOOK, with or without anticipation, finish the reader in 10 s by writing nothing \
at all (see the write-back column); Stride gives the write-back daemon's class half the disk time, \
which it streams, while the reader spends its half seeking back for each 128 KiB.
- **Cooperating short-lived processes (CAS Tables 2 and 3).** CAS and linux-as-2.6.32 win: they \
keep waiting across a `cat`'s exit for a nearby read from another process. antsched's \
heuristics wait only for the context that issued the last request, and the next file is read by \
a new process: in Table 3 every antsched scheduler seek-storms like deadline (1.7 MB/s against \
CAS's 7.0). In Table 2 as-aged-sptf keeps anticipating the stream and serves each `cat` only when \
its read ages past 1 s (not done after 300 s), and C-LOOK, as-clook and as-sptf never leave the \
stream. Stride and YFQ do well there (15.5 s, between CAS's 8.1 and deadline's 18.8): each `cat` is \
its own class, so its read is served next to the stream's. CFQ (72 s) and BFQ (67 s) make each new process's queue wait for the \
stream's slice or budget; the kernel's BFQ would raise a new queue's weight (`low_latency`, left \
out of ours), and later CFQs (2.6.30 on) switch to a close cooperating queue.
";

/// What a column measures.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Measure {
    /// Application MB/s; higher is better.
    Throughput,
    /// Seconds until the timed job finished (the run's length); lower is better.
    Time,
    /// MB/s of the write-back daemon: how much of a buffered writer's data reached the disk;
    /// higher is better.
    WriteBack,
    /// Share of context `num` over the mean share of contexts `den` (by disk time, or by bytes
    /// with `bytes`), against `target`, the ratio of their weights.
    ShareRatio {
        bytes: bool,
        num: usize,
        den: &'static [usize],
        target: f64,
    },
}

/// One workload and its measure.
#[derive(Clone, Debug, Serialize)]
pub struct Column {
    pub id: &'static str,
    /// Short title for a table header.
    pub title: &'static str,
    pub group: &'static str,
    pub variant: &'static str,
    pub x: Option<f64>,
    pub measure: Measure,
    pub unit: &'static str,
}

/// The columns, in the order the suite's sections come.
pub fn columns() -> Vec<Column> {
    use Measure::*;
    let tp = |id, title, group, variant, x| Column {
        id,
        title,
        group,
        variant,
        x,
        measure: Throughput,
        unit: "MB/s",
    };
    let share = |id, title, group, variant, bytes, num, den, target| Column {
        id,
        title,
        group,
        variant,
        x: None,
        measure: ShareRatio {
            bytes,
            num,
            den,
            target,
        },
        unit: "ratio",
    };
    let time = |id, title, group| Column {
        id,
        title,
        group,
        variant: "",
        x: None,
        measure: Time,
        unit: "s",
    };
    let f4 = "fig4-access-patterns";
    vec![
        tp("seq-read", "4.1 seq/read", f4, "seq/read", None),
        tp("seq-mmap", "4.1 seq/mmap", f4, "seq/mmap", None),
        tp("alter-read", "4.1 alter/read", f4, "alter/read", None),
        tp("alter-mmap", "4.1 alter/mmap", f4, "alter/mmap", None),
        tp("random-read", "4.1 random/read", f4, "random/read", None),
        tp("random-mmap", "4.1 random/mmap", f4, "random/mmap", None),
        tp(
            "think-4ms",
            "4.2.1 think 4ms",
            "fig5-symmetric",
            "",
            Some(4.0),
        ),
        tp(
            "think-8ms",
            "4.2.1 think 8ms",
            "fig5-symmetric",
            "",
            Some(8.0),
        ),
        tp(
            "asym-4ms",
            "4.2.2 one thinks 4ms",
            "fig6-asymmetric",
            "",
            Some(4.0),
        ),
        tp(
            "asym-8ms",
            "4.2.2 one thinks 8ms",
            "fig6-asymmetric",
            "",
            Some(8.0),
        ),
        share(
            "stride-1-2",
            "4.7 1:2 time q/p (2)",
            "fig12-stride-1-2",
            "",
            false,
            1,
            &[0],
            2.0,
        ),
        share(
            "shares-1-1-3",
            "1:1:3 time r/p (3)",
            "sec2-shares-1-1-3",
            "",
            false,
            2,
            &[0, 1],
            3.0,
        ),
        share(
            "bfq-1-2",
            "BFQ 1:2 bytes q/p (2)",
            "bfq-shares",
            "1:2",
            true,
            1,
            &[0],
            2.0,
        ),
        share(
            "bfq-1-2-10",
            "BFQ 1:2:10 bytes r/p (10)",
            "bfq-shares",
            "1:2:10",
            true,
            2,
            &[0],
            10.0,
        ),
        tp(
            "two-readers",
            "2 seq readers",
            "bfq-shares",
            "2-readers",
            None,
        ),
        time("cas-t1", "CAS T1 reader s", "cas-table1"),
        Column {
            id: "cas-t1-writes",
            title: "CAS T1 writes",
            group: "cas-table1",
            variant: "",
            x: None,
            measure: WriteBack,
            unit: "MB/s",
        },
        time("cas-t2", "CAS T2 find s", "cas-table2"),
        tp(
            "cas-t3-1",
            "CAS T3 1 find",
            "cas-table3",
            "1-instance",
            None,
        ),
        tp(
            "cas-t3-2",
            "CAS T3 2 finds",
            "cas-table3",
            "2-instances",
            None,
        ),
    ]
}

/// One scheduler on one workload.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    /// The column's measure.
    pub value: f64,
    /// `value` is a lower bound: the run hit its cap before the timed job finished.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lower_bound: bool,
    /// 1 for the best of the column (a share ratio: on target), towards 0 for the worst.
    pub score: f64,
    pub throughput_mb_s: f64,
    /// p99 latency of the worst-served application context, ms.
    pub p99_ms: f64,
    /// Each context's share of disk time, in job order (the write-back daemon last, if any).
    pub shares: Vec<f64>,
    /// Each context's share of the bytes.
    pub byte_shares: Vec<f64>,
}

/// One scheduler's row.
#[derive(Clone, Debug, Serialize)]
pub struct ComparisonRow {
    pub scheduler: String,
    /// `None` where the suite has no run (a `--quick` plan may lack one).
    pub cells: Vec<Option<Cell>>,
}

/// The whole comparison (`comparison` in `antsched paper --json`).
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub columns: Vec<Column>,
    pub rows: Vec<ComparisonRow>,
    /// Per column, the schedulers within 2% of the best score.
    pub best: Vec<Vec<String>>,
}

fn cell(run: &PaperRun, measure: Measure) -> Cell {
    let r = &run.report;
    let apps = r.contexts.iter().filter(|c| c.name != "writeback");
    let p99_ms = apps.map(|c| c.latency_ms.p99).fold(0.0, f64::max);
    let shares: Vec<f64> = r.contexts.iter().map(|c| c.share).collect();
    let byte_shares: Vec<f64> = r.contexts.iter().map(|c| c.byte_share).collect();
    let (value, lower_bound) = match measure {
        Measure::Throughput => (r.throughput_mb_s, false),
        Measure::WriteBack => (
            r.contexts
                .iter()
                .find(|c| c.name == "writeback")
                .map_or(0.0, |c| c.throughput_mb_s),
            false,
        ),
        Measure::Time => (
            r.duration_s,
            run.plan.cap_s.is_some_and(|c| r.duration_s >= c - 1e-6),
        ),
        Measure::ShareRatio {
            bytes, num, den, ..
        } => {
            let s = if bytes { &byte_shares } else { &shares };
            let d = den.iter().filter_map(|&k| s.get(k)).sum::<f64>() / den.len() as f64;
            (s.get(num).map_or(f64::NAN, |n| n / d), false)
        }
    };
    Cell {
        value,
        lower_bound,
        score: 0.0,
        throughput_mb_s: r.throughput_mb_s,
        p99_ms,
        shares,
        byte_shares,
    }
}

/// Every scheduler of the catalog on every column, from the suite's runs.
pub fn compare(runs: &[PaperRun]) -> Comparison {
    let r = Runs(runs);
    let columns = columns();
    let mut rows: Vec<ComparisonRow> = all_schedulers()
        .into_iter()
        .map(|s| ComparisonRow {
            scheduler: s.to_string(),
            cells: columns
                .iter()
                .map(|c| {
                    r.0.iter()
                        .find(|x| {
                            x.plan.group == c.group
                                && x.plan.variant == c.variant
                                && x.plan.x == c.x
                                && x.plan.label == s
                        })
                        .map(|run| cell(run, c.measure))
                })
                .collect(),
        })
        .collect();
    let mut best = Vec::new();
    for (k, c) in columns.iter().enumerate() {
        let values: Vec<f64> = rows
            .iter()
            .filter_map(|row| row.cells[k].as_ref())
            .map(|x| x.value)
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        let hi = values.iter().copied().fold(0.0, f64::max);
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        for row in &mut rows {
            if let Some(x) = row.cells[k].as_mut() {
                x.score = match c.measure {
                    _ if !(x.value.is_finite() && x.value > 0.0) => 0.0,
                    Measure::Throughput | Measure::WriteBack => x.value / hi,
                    Measure::Time => lo / x.value,
                    Measure::ShareRatio { target, .. } => (x.value / target).min(target / x.value),
                };
            }
        }
        let top = rows
            .iter()
            .filter_map(|row| row.cells[k].as_ref())
            .map(|x| x.score)
            .fold(0.0, f64::max);
        best.push(
            rows.iter()
                .filter(|row| {
                    row.cells[k]
                        .as_ref()
                        .is_some_and(|x| top > 0.0 && x.score >= 0.98 * top)
                })
                .map(|row| row.scheduler.clone())
                .collect(),
        );
    }
    Comparison {
        columns,
        rows,
        best,
    }
}
