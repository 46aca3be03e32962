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
//!   (asymmetric), a uniformly random think time, the adversary, and the adversary under timer
//!   granularities of 50 us to 1 ms.
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

mod compare;
mod explain;
mod peers;
mod published;
mod workloads;

pub use compare::{compare, notes, Cell, Column, Comparison, ComparisonRow, Measure};
pub use explain::explain;
pub use explain::LINUX_TREE_FILES;
pub use peers::disk_mb_s;
pub use published::{evaluate, Experiment, Row};
pub use workloads::{
    all_schedulers, modelling_notes, plan, CasScale, PaperOptions, PlannedRun, ANTICIPATORY,
    BASELINE, FILE_SPACING, MIN_FILE_SPACING, TREE_DIR_FILES,
};

use rayon::prelude::*;
use serde::Serialize;

use crate::fio;
use crate::report::RunReport;
use crate::{disk_model, simulate, SimError};

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
        crate::workload::compile(&jobs, disk.capacity_sectors(), 1)?;
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
