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

use crate::published::Runs;
use crate::workloads::{all_schedulers, COMPARE_THINK_MS};
use crate::PaperRun;

/// The peers: Linux's and BFQ's schedulers. Every other scheduler of the catalog is
/// antsched's own.
const PEERS: [&str; 6] = [
    "deadline",
    "linux-as",
    "linux-as-2.6.32",
    "cas",
    "cfq",
    "bfq",
];

/// The figures the notes quote, looked up in the comparison.
struct Look<'a>(&'a Comparison);

impl Look<'_> {
    fn cell(&self, column: &str, scheduler: &str) -> Option<&Cell> {
        let k = self.0.columns.iter().position(|c| c.id == column)?;
        let row = self.0.rows.iter().find(|r| r.scheduler == scheduler)?;
        row.cells.get(k)?.as_ref()
    }

    /// A cell's value as the tables print it (`≥` for a capped run), or `?` without a run.
    fn v(&self, column: &str, scheduler: &str) -> String {
        self.cell(column, scheduler)
            .map_or("?".into(), |x| show(x.value, x.lower_bound))
    }

    fn value(&self, column: &str, scheduler: &str) -> Option<f64> {
        self.cell(column, scheduler).map(|x| x.value)
    }

    fn p99(&self, column: &str, scheduler: &str) -> Option<f64> {
        self.cell(column, scheduler).map(|x| x.p99_ms)
    }

    /// `lo to hi` of `f` over `schedulers` and `columns` (`?` if none has a run).
    fn range(&self, columns: &[&str], schedulers: &[&str], f: impl Fn(&Cell) -> f64) -> String {
        let cells: Vec<&Cell> = columns
            .iter()
            .flat_map(|c| schedulers.iter().filter_map(move |s| self.cell(c, s)))
            .collect();
        let vs: Vec<f64> = cells
            .iter()
            .map(|x| f(x))
            .filter(|v| v.is_finite())
            .collect();
        // A capped run's time is a lower bound, and so is the top of a range that holds it.
        let capped = cells.iter().any(|x| x.lower_bound);
        let lo = vs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = vs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if vs.is_empty() {
            "?".into()
        } else if show(lo, false) == show(hi, false) {
            show(lo, capped)
        } else {
            format!("{} to {}", show(lo, false), show(hi, capped))
        }
    }

    /// `num`'s value over `den`'s on one column, as a percentage change.
    fn gain(&self, column: &str, num: &str, den: &str) -> String {
        match (self.value(column, num), self.value(column, den)) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:+.0}%", (a / b - 1.0) * 100.0),
            _ => "?".into(),
        }
    }

    /// A share column's target, the ratio of its weights.
    fn target(&self, column: &str) -> String {
        match self
            .0
            .columns
            .iter()
            .find(|c| c.id == column)
            .map(|c| c.measure)
        {
            Some(Measure::ShareRatio { target, .. }) => show(target, false),
            _ => "?".into(),
        }
    }

    /// Disk-time share ratio of a byte-share column's run (BFQ's weights, in disk time).
    fn time_ratio(&self, column: &str, scheduler: &str) -> String {
        let Some(c) = self.0.columns.iter().find(|c| c.id == column) else {
            return "?".into();
        };
        let (Measure::ShareRatio { num, den, .. }, Some(x)) =
            (c.measure, self.cell(column, scheduler))
        else {
            return "?".into();
        };
        let d = den.iter().filter_map(|&k| x.shares.get(k)).sum::<f64>() / den.len() as f64;
        x.shares.get(num).map_or("?".into(), |n| show(n / d, false))
    }
}

/// A figure as the report's tables print it.
fn show(v: f64, lower_bound: bool) -> String {
    let s = if !v.is_finite() {
        "-".to_string()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    if lower_bound {
        format!("≥{s}")
    } else {
        s
    }
}

/// The default of a scheduler's tunable, as the catalog gives it (e.g. `1s`).
fn default_of(scheduler: &str, tunable: &str) -> String {
    antsched_core::catalog()
        .iter()
        .find(|s| s.name == scheduler)
        .and_then(|s| s.tunables.iter().find(|t| t.name == tunable))
        .map_or("?".into(), |t| t.default.to_string())
}

/// What the comparison shows and why, for the report (markdown). The mechanisms were worked
/// out by reading runs (their shares, latencies and waits in `results.json`); every figure is
/// this comparison's own, so the notes describe the runs they sit beside.
pub fn notes(c: &Comparison) -> String {
    let l = Look(c);
    let antsched: Vec<&str> = c
        .rows
        .iter()
        .map(|r| r.scheduler.as_str())
        .filter(|s| !PEERS.contains(s))
        .collect();
    let seq_alter = ["seq-read", "seq-mmap", "alter-read", "alter-mmap"];
    let linux = [
        "deadline",
        "linux-as",
        "linux-as-2.6.32",
        "cas",
        "cfq",
        "bfq",
    ];
    let anticipatory = ["as-sptf", "as-aged-sptf", "as-clook"];
    // A reader starved: under 1% of the disk time in the 1:2 workload.
    let least = |x: &Cell| x.shares.iter().copied().fold(f64::INFINITY, f64::min);
    let starved: Vec<&str> = c
        .rows
        .iter()
        .filter(|r| {
            l.cell("stride-1-2", &r.scheduler)
                .is_some_and(|x| least(x) < 0.01)
        })
        .map(|r| r.scheduler.as_str())
        .collect();
    let starved = if starved.is_empty() {
        "no scheduler starves a reader in the 1:2 workload".to_string()
    } else {
        format!(
            "{} starve a reader in the 1:2 workload (a share of the disk time of {})",
            starved.join(", "),
            l.range(&["stride-1-2"], &starved, least)
        )
    };
    let elevators = ["sptf", "clook", "sstf", "look", "as-sptf", "as-clook"];
    let stride_wb = l
        .cell("cas-t1", "stride")
        .and_then(|x| x.shares.last().copied())
        .map_or("?".into(), |s| format!("{:.0}%", s * 100.0));
    format!(
        "Reading the comparison (every figure is this run's, from the tables above):

- **Long-lived readers (4.1, 4.2, two readers).** Two sequential mmap readers get {as_sptf} \
(as-sptf), {as_clook} (as-clook) and {as_aged} MB/s (as-aged-sptf) against {las} for linux-as, {cas} \
for cas, {bfq} for BFQ and {cfq} for CFQ. The Linux schedulers switch readers whenever a read expires \
or a batch or slice ends, and pay a seek each time; BFQ, with its default `low_latency`, raises the \
weights of the two new readers, so that idling for either no longer counts as boosting throughput, and \
once its stable-merging delay (`bfq_late_stable_merging`) has passed merges their queues into one that it serves in elevator order without \
idling, as Linux's BFQ does on the same disk (`bench/kernel-peers.sh`). That is also why their worst p99 on the 4.1 \
sequential and alternate-block patterns is {linux_p99} ms where as-aged-sptf's is {aged_p99} ms. On \
random reads (4.1 random/read) as-aged-sptf's cost-benefit rule changes aged-sptf's throughput by \
{g_aged}, LAS's mean-seek rule deadline's by {g_las}, while CFQ and BFQ, which stop idling for seeky \
queues, change it by {g_cfq} and {g_bfq}. BFQ also does not idle for the 4.2 readers that think: its \
I/O-bound test (idle for at most a fraction of its I/O time) and short-think test (mean at most \
`slice_idle`/2) fail for them, so in the symmetric scenario it serves them like deadline ({bfq4} \
against deadline's {dl4} MB/s at {t4} ms, where CFQ gives {cfq4} and the anticipatory schedulers \
{as4}). as-aged-sptf's p99 is {aged_rand} ms on the random patterns and {aged8} ms at {t8} ms think \
times, against its age bound (`age_bound={age}`).
- **Shares.** as-stride gives disk-time share ratios of {st12} and {st113} (targets {tg12} and \
{tg113}) at {st_tp} MB/s; as-stride-combo {co12} and {co113} at {co_tp} MB/s. BFQ gives byte share \
ratios of {b12} and {b1210} (targets {tgb12} and {tgb1210}) at {b_tp} MB/s, and {bt12} and {bt1210} in disk time: for \
sequential readers, weights by bytes are BFQ's strength. The seek-ordering and Linux schedulers other \
than BFQ ignore weights (2.6.29 CFQ has none); {starved}.
- **A reader against a write-back flood (CAS Table 1).** The Linux schedulers keep synchronous reads \
apart from asynchronous writes (AS's read batches and write batch limits, CFQ's and BFQ's sync \
queues): the reader takes {t1_las} s under LAS, {t1_cas} s under CAS, {t1_cfq} s under CFQ and \
{t1_bfq} s under BFQ, and {t1_dl} s under deadline. antsched's policies treat write-back like any \
request: Aged-SPTF lets the backlog age past its bound and then serves it oldest first, so each read \
waits behind it and the reader takes {t1_aged} s (`≥` where the run was stopped at its cap); SPTF, \
C-LOOK, SSTF and LOOK, with or without anticipation, finish the reader in {t1_elev} s while writing \
back {wb_elev} MB/s (the write-back column); Stride gives the write-back daemon's class {stride_wb} of \
the disk time, which it streams, while the reader seeks back for each of its reads.
- **Cooperating short-lived processes (CAS Tables 2 and 3).** CAS and linux-as-2.6.32 keep waiting \
across a `cat`'s exit for a nearby read from another process; antsched's heuristics wait only for the \
context that issued the last request, and the next file is read by a new process. In Table 3 two finds \
get {t3_ant} MB/s under antsched's schedulers and {t3_dl} under deadline, against CAS's {t3_cas}. In \
Table 2 the find takes {t2_aged} s under as-aged-sptf, which keeps anticipating the stream and serves \
each `cat` only when its read ages past its bound, and {t2_never} s under C-LOOK, as-clook and \
as-sptf, which do not leave the stream; Stride and YFQ, where each `cat` is its own class and its read \
is served next to the stream's, take {t2_stride} and {t2_yfq} s, against CAS's {t2_cas} and \
deadline's {t2_dl}. CFQ ({t2_cfq} s) makes each new process's queue wait for the stream's slice \
(later CFQs, 2.6.30 on, switch to a close cooperating queue); BFQ ({t2_bfq} s), with its default \
`low_latency`, stably merges the find's queue, made with the stream's, into the stream's once its stable-merging delay has passed, \
and the find's reads then wait behind the stream in that queue's elevator order.
",
        as_sptf = l.v("seq-mmap", "as-sptf"),
        as_clook = l.v("seq-mmap", "as-clook"),
        as_aged = l.v("seq-mmap", "as-aged-sptf"),
        las = l.v("seq-mmap", "linux-as"),
        cas = l.v("seq-mmap", "cas"),
        bfq = l.v("seq-mmap", "bfq"),
        cfq = l.v("seq-mmap", "cfq"),
        linux_p99 = l.range(&seq_alter, &linux[1..], |x| x.p99_ms),
        aged_p99 = l.range(&seq_alter, &["as-aged-sptf"], |x| x.p99_ms),
        g_aged = l.gain("random-read", "as-aged-sptf", "aged-sptf"),
        g_las = l.gain("random-read", "linux-as", "deadline"),
        g_cfq = l.gain("random-read", "cfq", "deadline"),
        g_bfq = l.gain("random-read", "bfq", "deadline"),
        t4 = COMPARE_THINK_MS[0],
        t8 = COMPARE_THINK_MS[1],
        bfq4 = l.v("think-4ms", "bfq"),
        dl4 = l.v("think-4ms", "deadline"),
        cfq4 = l.v("think-4ms", "cfq"),
        as4 = l.range(&["think-4ms"], &anticipatory, |x| x.value),
        aged_rand = l.range(&["random-read", "random-mmap"], &["as-aged-sptf"], |x| x.p99_ms),
        aged8 = l.p99("think-8ms", "as-aged-sptf").map_or("?".into(), |v| show(v, false)),
        age = default_of("aged-sptf", "age_bound"),
        tg12 = l.target("stride-1-2"),
        tg113 = l.target("shares-1-1-3"),
        tgb12 = l.target("bfq-1-2"),
        tgb1210 = l.target("bfq-1-2-10"),
        st12 = l.v("stride-1-2", "as-stride"),
        st113 = l.v("shares-1-1-3", "as-stride"),
        st_tp = l.range(&["stride-1-2"], &["as-stride"], |x| x.throughput_mb_s),
        co12 = l.v("stride-1-2", "as-stride-combo"),
        co113 = l.v("shares-1-1-3", "as-stride-combo"),
        co_tp = l.range(&["stride-1-2"], &["as-stride-combo"], |x| x.throughput_mb_s),
        b12 = l.v("bfq-1-2", "bfq"),
        b1210 = l.v("bfq-1-2-10", "bfq"),
        b_tp = l.range(&["bfq-1-2"], &["bfq"], |x| x.throughput_mb_s),
        bt12 = l.time_ratio("bfq-1-2", "bfq"),
        bt1210 = l.time_ratio("bfq-1-2-10", "bfq"),
        t1_las = l.v("cas-t1", "linux-as"),
        t1_cas = l.v("cas-t1", "cas"),
        t1_cfq = l.v("cas-t1", "cfq"),
        t1_bfq = l.v("cas-t1", "bfq"),
        t1_dl = l.v("cas-t1", "deadline"),
        t1_aged = l.v("cas-t1", "aged-sptf"),
        t1_elev = l.range(&["cas-t1"], &elevators, |x| x.value),
        wb_elev = l.range(&["cas-t1-writes"], &elevators, |x| x.value),
        t3_ant = l.range(&["cas-t3-2"], &antsched, |x| x.value),
        t3_dl = l.v("cas-t3-2", "deadline"),
        t3_cas = l.v("cas-t3-2", "cas"),
        t2_aged = l.v("cas-t2", "as-aged-sptf"),
        t2_never = l.range(&["cas-t2"], &["clook", "as-clook", "as-sptf"], |x| x.value),
        t2_stride = l.v("cas-t2", "stride"),
        t2_yfq = l.v("cas-t2", "yfq"),
        t2_cas = l.v("cas-t2", "cas"),
        t2_dl = l.v("cas-t2", "deadline"),
        t2_cfq = l.v("cas-t2", "cfq"),
        t2_bfq = l.v("cas-t2", "bfq"),
    )
}

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
    /// The longest any application I/O of any context waited, finished or not at the end of
    /// the run, ms. The write-back daemon is not an application: its writes wait in the queue
    /// because the flush hands over all dirty data at once (a kernel's would block on the full
    /// request queue instead), and a writer starved of write-back shows as its own writes
    /// blocked on dirty memory.
    pub worst_wait_ms: f64,
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

/// The best score of column `k` over `rows` (0 without a run).
fn top_score(rows: &[ComparisonRow], k: usize) -> f64 {
    rows.iter()
        .filter_map(|row| row.cells[k].as_ref())
        .map(|x| x.score)
        .fold(0.0, f64::max)
}

impl Cell {
    /// Some context waited more than [`STARVATION_MS`]: the run starved it, whatever its
    /// value, and it is not a column's best.
    pub fn starves(&self) -> bool {
        self.worst_wait_ms > STARVATION_MS
    }
}

impl Comparison {
    /// The best score of column `k`: 1 where a run that starves no one is best; a share
    /// column's best may fall short of its target, 1.
    pub fn best_score(&self, k: usize) -> f64 {
        top_score(&self.rows, k)
    }
}

/// A run in which some request waited longer than this starved its context (issue 18's
/// bound: "every context's worst request latency under 2 s"). Such a run can post the best
/// figure of a column by serving only the others (`as-sptf` with one of two readers
/// thinking reads the other's file at the disk's full rate and never the thinker's), so the
/// column's best is taken over the runs that starve no one.
pub const STARVATION_MS: f64 = 2_000.0;

fn cell(run: &PaperRun, measure: Measure) -> Cell {
    let r = &run.report;
    let apps = r.contexts.iter().filter(|c| c.name != "writeback");
    let p99_ms = apps.clone().map(|c| c.latency_ms.p99).fold(0.0, f64::max);
    let worst_wait_ms = apps.map(|c| c.worst_wait_ms()).fold(0.0, f64::max);
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
        worst_wait_ms,
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
        // The best is the best of the runs that starve no context; only where every run
        // starves one is it the best of all.
        let fair = rows
            .iter()
            .filter_map(|row| row.cells[k].as_ref())
            .any(|x| !x.starves());
        let counted = |x: &Cell| !(fair && x.starves());
        let values: Vec<f64> = rows
            .iter()
            .filter_map(|row| row.cells[k].as_ref())
            .filter(|x| counted(x))
            .map(|x| x.value)
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        let hi = values.iter().copied().fold(0.0, f64::max);
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        for row in &mut rows {
            if let Some(x) = row.cells[k].as_mut() {
                x.score = match c.measure {
                    _ if !(x.value.is_finite() && x.value > 0.0 && counted(x)) => 0.0,
                    Measure::Throughput | Measure::WriteBack => x.value / hi,
                    Measure::Time => lo / x.value,
                    Measure::ShareRatio { target, .. } => (x.value / target).min(target / x.value),
                };
            }
        }
        let top = top_score(&rows, k);
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
