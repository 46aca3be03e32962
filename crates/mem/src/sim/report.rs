//! What a memory run reports (JSON keys from docs/architecture.md: `runs[]` with `policy`, `processes[]`
//! (`name`, `nice`, `resident_mb`, `hit_rate`, `runtime_s`), `severity[]`, `pages_read_back`).

use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct MemReport {
    pub policy: String,
    pub scheduler: String,
    pub disk: String,
    /// Virtual time at the end of the run, s.
    pub duration_s: f64,
    pub processes: Vec<ProcReport>,
    /// The time series, one sample per `machine.sample_s`.
    pub severity: Vec<Sample>,
    /// Pages read back from the swap area.
    pub pages_read_back: u64,
    /// Data-file pages read (first reads and re-reads after they were dropped).
    pub data_reads: u64,
    pub page_outs: u64,
    pub notifications: u64,
    pub max_disk_queue: usize,
    pub sim: SimStats,
}

#[derive(Clone, Debug, Serialize)]
pub struct ProcReport {
    pub name: String,
    pub nice: f64,
    pub weight: f64,
    /// Mean resident memory while it ran (its footprint), MiB.
    pub resident_mb: f64,
    pub peak_mb: f64,
    pub hit_rate: Option<f64>,
    /// None: it did not finish within `max_time_s`, was killed, or (a hog) runs until the
    /// others are done.
    pub runtime_s: Option<f64>,
    pub finished: bool,
    /// Killed when the swap area was full.
    pub killed: bool,
    /// Faults that read a page (from the swap area or the data file).
    pub faults: u64,
    /// Of those, pages read back from the swap area.
    pub pages_read_back: u64,
    pub notifications: u64,
    /// Time from a notification to the process's handler, ms.
    pub reaction_ms_mean: f64,
    pub reaction_ms_max: f64,
    /// Every notification handled, for a reaction time over part of the run (before and
    /// after a hog started). Left out of the JSON: there can be thousands.
    #[serde(skip)]
    pub reactions: Vec<Reaction>,
    pub released_mb: f64,
    pub collections: u64,
}

/// One notification handled.
#[derive(Clone, Copy, Debug)]
pub struct Reaction {
    /// When it was sent, s.
    pub time_s: f64,
    /// Sent to handler, ms.
    pub ms: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    pub time_s: f64,
    pub severity_s: f64,
    pub candidate_age_s: f64,
    pub free_mb: f64,
    pub disk_queue: usize,
    /// Per process, in scenario order.
    pub resident_mb: Vec<f64>,
    /// Per process: the elastic part (cache, heap extent, pool held).
    pub cache_mb: Vec<f64>,
    /// Per process, so far: a cache's lookups and hits (0 for other kinds), so that a hit
    /// rate can be taken over any part of the run (the steady state of section 4.5).
    pub lookups: Vec<u64>,
    pub hits: Vec<u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct SimStats {
    pub page_refs: u64,
    pub wall_s: f64,
    pub page_refs_per_s: f64,
}
