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
