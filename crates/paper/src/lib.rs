//! The SOSP 2001 paper's microbenchmarks, reproduced on a disk model: the main job of antsched.
//!
//! Each experiment is a fio job file (so anyone can rerun one with `antsched sim`, or with fio
//! itself on an `antsched mount`), a set of schedulers, and the figures the paper (or the
//! original release's README, which printed exact numbers) published for it. [`plan`] lists the
//! runs, [`run`] simulates them in parallel, and [`evaluate`] sets each published figure
//! beside ours.
//!
//! The experiments, after section 4 of the paper:
//! - 4.1: two processes reading separate 1 GB files, 64 KB at a time: sequential, alternate
//!   blocks, random; with `read` (the file system's prefetch applies) or `mmap` (it does not).
//! - 4.2: sequential mmap readers that think between requests: both (symmetric), one
//!   (asymmetric), both again with the files at distances from back to back to twice the
//!   default (where the gain ends and the dip falls follow the cost of a switch), a uniformly
//!   random think time, the adversary (its rapid requests arriving
//!   together, as the paper's figure has them, and issued one at a time, set beside it), and
//!   the adversary under timer granularities of 50 us to 1 ms.
//! - 4.7: proportional share, 1:2 with two readers and 1:1:3 with three.
//! - 4.8: the access-pattern benchmark on a 15,000 rpm disk.
//!
//! And from the papers on the peers:
//! - the Linux/CAS paper's Tables 1 to 3: a reader against a streaming writer, `find -exec
//!   cat` against a streaming reader (starvation), and one and two `find -exec cat` (the seek
//!   storm);
//! - BFQ's bandwidth shares with weights 1:2 and 1:2:10, and two readers against one.
//!
//! [`compare`] sets every scheduler of the catalog side by side on every microbenchmark
//! (comparison mode).
#![forbid(unsafe_code)]

mod compare;
mod explain;
mod peers;
mod published;
mod workloads;

pub use compare::{
    compare, notes, Cell, Column, Comparison, ComparisonRow, Measure, STARVATION_MS,
};
pub use explain::explain;
pub use explain::{
    first_not_waited, last_waited, least_wait_thresholds, median_think_ms, wait_thresholds,
    WaitThresholds, LINUX_TREE_FILES,
};
pub use peers::disk_mb_s;
pub use published::{
    dip, evaluate, gain_end, Experiment, Row, GAIN_ENDED, OFF_BY, THINK_TOLERANCE_MS,
};
pub use workloads::{
    all_schedulers, modelling_notes, plan, CasScale, PaperOptions, PlannedRun, ANTICIPATORY,
    BASELINE, FILE_SIZE, FILE_SPACING, ISSUE_DELAY_US, MIN_FILE_SPACING, SPACING_SWEEP,
    SPACING_SWEEP_MIB, TREE_DIR_FILES,
};

use rayon::prelude::*;
use serde::Serialize;

use antsched_sim::{disk_model, simulate, SimError};
use antsched_workload::fio;
use antsched_workload::report::RunReport;

/// The swept values (x) of a group's variant among `runs`, increasing, each once.
pub fn sweep_xs(runs: &[PaperRun], group: &str, variant: &str) -> Vec<f64> {
    let mut xs: Vec<f64> = runs
        .iter()
        .filter(|r| r.plan.group == group && r.plan.variant == variant)
        .filter_map(|r| r.plan.x)
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    xs
}

/// The distances (MiB) between the readers' files that the file-spacing sweep ran, increasing.
pub fn swept_spacings(runs: &[PaperRun]) -> Vec<u64> {
    let mut mibs: Vec<u64> = runs
        .iter()
        .filter(|r| r.plan.group == SPACING_SWEEP)
        .filter_map(|r| r.plan.variant.strip_prefix("symmetric/")?.parse().ok())
        .collect();
    mibs.sort_unstable();
    mibs.dedup();
    mibs
}

/// Lays out every distinct job file of `runs` on its disk without simulating it, so that an
/// option that makes the suite's files overlap or overflow the disk is reported before minutes
/// of work, and before any run.
pub fn check(runs: &[PlannedRun]) -> Result<(), SimError> {
    let mut seen = std::collections::HashSet::new();
    for p in runs {
        if !seen.insert((p.job.as_str(), p.disk.as_str())) {
            continue;
        }
        let jobs = fio::parse(&p.job, &format!("{}.fio", p.group))?;
        let disk = disk_model(&p.disk)?;
        antsched_workload::compile(&jobs, disk.capacity_sectors(), 1)?;
    }
    Ok(())
}

/// One planned run and what it gave.
#[derive(Clone, Debug, Serialize)]
pub struct PaperRun {
    #[serde(flatten)]
    pub plan: PlannedRun,
    pub report: RunReport,
}

/// Simulates every planned run, in parallel; `done` is called as each finishes.
pub fn run(
    runs: &[PlannedRun],
    seed: u64,
    done: &(dyn Fn() + Sync),
) -> Result<Vec<PaperRun>, SimError> {
    runs.par_iter()
        .map(|p| {
            let jobs = fio::parse(&p.job, &format!("{}.fio", p.group))?;
            let disk = disk_model(&p.disk)?;
            let report = simulate(&jobs, disk, &p.scheduler, seed)?;
            done();
            Ok(PaperRun {
                plan: p.clone(),
                report,
            })
        })
        .collect()
}

#[cfg(test)]
mod prose {
    //! `grep` of the report's source finds no literal experimental figure in prose (issue
    //! 16): a figure of ours comes from the runs, the paper's from the published table.

    /// The paper module's sources (and the CLI's report writer), without their tests.
    const SOURCES: [(&str, &str); 7] = [
        ("lib.rs", include_str!("lib.rs")),
        ("explain.rs", include_str!("explain.rs")),
        ("compare.rs", include_str!("compare.rs")),
        ("peers.rs", include_str!("peers.rs")),
        ("published.rs", include_str!("published.rs")),
        ("workloads.rs", include_str!("workloads.rs")),
        ("cli/paper.rs", include_str!("../../cli/src/paper.rs")),
    ];

    /// Reviewed figures in string literals, each with why it may stand: the quantity labels
    /// that quote the paper, the workloads' settings, and facts of the paper's setup.
    const ALLOWED: &[(&str, &str)] = &[
        // Quantity labels: the paper's own figures, as it gave them ("+28%").
        ("published.rs", "28%"),
        ("published.rs", "30%"),
        // Titles that name the workload: its files, its timer ticks, its think times.
        ("published.rs", "1 GB"),
        ("published.rs", "1 ms"),
        ("peers.rs", "200 MB"),
        ("compare.rs", "4ms"),
        ("compare.rs", "8ms"),
        ("cli/paper.rs", "8 ms"),
        // The modelling notes: the workload's writes, the paper's memory, and the size of the
        // source tree a book counted (the paper's setup, not a run of ours).
        ("workloads.rs", "1 MB"),
        ("workloads.rs", "1 GB"),
        ("workloads.rs", "144 MB"),
        // LAS's own rule: it stops waiting for new processes past an exit probability of 50%.
        ("workloads.rs", "50%"),
        // The report's thresholds: which differences it explains, who counts as best.
        ("cli/paper.rs", "15%"),
        ("cli/paper.rs", "2%"),
    ];

    /// String literals of `src` (escapes kept as written), with their line, skipping comments
    /// and everything from the first `#[cfg(test)]` on.
    fn literals(src: &str) -> Vec<(usize, String)> {
        let src = src.split("#[cfg(test)]").next().unwrap_or(src);
        let b = src.as_bytes();
        let (mut out, mut i, mut line) = (Vec::new(), 0, 1);
        while i < b.len() {
            match b[i] {
                b'\n' => line += 1,
                b'/' if b.get(i + 1) == Some(&b'/') => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                // A char literal ('"', '\'') or a lifetime: skip the quote and what it holds.
                b'\'' => {
                    if b.get(i + 1) == Some(&b'\\') {
                        i += 4;
                        continue;
                    }
                    if b.get(i + 2) == Some(&b'\'') {
                        i += 3;
                        continue;
                    }
                }
                b'"' => {
                    let (start, at) = (i + 1, line);
                    i += 1;
                    while i < b.len() && b[i] != b'"' {
                        if b[i] == b'\\' {
                            i += 1;
                        }
                        if b.get(i) == Some(&b'\n') {
                            line += 1;
                        }
                        i += 1;
                    }
                    out.push((
                        at,
                        String::from_utf8_lossy(&b[start..i.min(b.len())]).into(),
                    ));
                }
                _ => {}
            }
            i += 1;
        }
        out
    }

    /// Figures with a unit of measurement in `lit` outside the paper's quoted words (`\"...\"`):
    /// a number not part of a name or a setting (`=1ms`), then `MB/s`, `MB`, `GB`, `ms`, `s`
    /// or `%`.
    fn figures(lit: &str) -> Vec<String> {
        // Drop quotations of the paper: `\"four times\"`.
        let mut text = String::new();
        for (k, part) in lit.split("\\\"").enumerate() {
            if k % 2 == 0 {
                text += part;
                text.push(' ');
            }
        }
        let c: Vec<char> = text.chars().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < c.len() {
            let starts = c[i].is_ascii_digit()
                && (i == 0 || !(c[i - 1].is_alphanumeric() || "=._-{:/".contains(c[i - 1])));
            if !starts {
                i += 1;
                continue;
            }
            let mut j = i;
            while j < c.len() && (c[j].is_ascii_digit() || ".,".contains(c[j])) {
                j += 1;
            }
            let mut k = j;
            if c.get(k) == Some(&' ') {
                k += 1;
            }
            let rest: String = c[k..c.len().min(k + 4)].iter().collect();
            let unit = ["MB/s", "MB", "GB", "ms", "%", "s"].into_iter().find(|u| {
                rest.starts_with(u)
                    && !rest[u.len()..]
                        .chars()
                        .next()
                        .is_some_and(|n| n.is_alphanumeric())
            });
            if let Some(u) = unit {
                let n: String = c[i..j].iter().collect();
                let n = n.trim_end_matches([',', '.']);
                out.push(if k > j {
                    format!("{n} {u}")
                } else {
                    format!("{n}{u}")
                });
            }
            i = j.max(i + 1);
        }
        out
    }

    #[test]
    fn no_literal_figure_in_the_reports_prose() {
        let mut found = Vec::new();
        let mut used = std::collections::HashSet::new();
        for (file, src) in SOURCES {
            for (line, lit) in literals(src) {
                for f in figures(&lit) {
                    match ALLOWED.iter().position(|(a, x)| *a == file && *x == f) {
                        Some(k) => {
                            used.insert(k);
                        }
                        None => found.push(format!("{file}:{line}: {f}")),
                    }
                }
            }
        }
        // An entry nothing needs any more goes, so that the list stays the reviewed one.
        for (k, entry) in ALLOWED.iter().enumerate() {
            if !used.contains(&k) {
                found.push(format!("allowed but not found: {entry:?}"));
            }
        }
        assert!(
            found.is_empty(),
            "figures written into the report's prose (compute them from the runs, take the \
             paper's from the published table, or drop the sentence):\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn the_scan_finds_a_planted_figure() {
        let src = "let s = \"about 10.4 MB/s here, 6 GB apart, 78% of it\"; // 5 ms\n\
                   let q = \"gain (\\\"about 5%\\\")\"; let j = \"thinktime=1ms\";";
        let lits = literals(src);
        let all: Vec<String> = lits.iter().flat_map(|(_, l)| figures(l)).collect();
        assert_eq!(all, ["10.4 MB/s", "6 GB", "78%"]);
    }
}
