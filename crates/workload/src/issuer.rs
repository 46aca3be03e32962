//! What one job clone does next: which file, which offset, read or write, and how long it
//! thinks before the next I/O. Pure bookkeeping on the job's options; the driver does the
//! timing.

use antsched_core::{Nanos, Op};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::fio::{FileServiceType, Job, ThinkTimeDist};
use crate::{Issuer, Region};

/// One application I/O: `len` bytes at `offset` of region `region`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppIo {
    pub region: usize,
    pub offset: u64,
    pub len: u64,
    pub op: Op,
}

/// The position and budget of one issuer.
#[derive(Debug)]
pub struct Cursor {
    regions: Vec<Region>,
    /// Next offset within each region for sequential access (relative to its start).
    pos: Vec<u64>,
    /// Whether each region's single pass is over.
    passed: Vec<bool>,
    file: usize,
    ios_on_file: u64,
    /// Remaining sequential I/Os of a random run (`rw=randread:N`).
    run_left: u64,
    issued_bytes: u64,
    issued_ios: u64,
    completed_ios: u64,
    rng: ChaCha8Rng,
    /// Sequential patterns start over at the region's end (else the job ends there).
    wraps: bool,
    budget_bytes: Option<u64>,
    budget_ios: Option<u64>,
}

impl Cursor {
    pub fn new(job: &Job, issuer: &Issuer) -> Self {
        // fio: `number_ios` "does not extend the amount of I/O that will be done, it will only
        // stop fio if this condition is met before other end-of-job criteria". So only a time
        // or an `io_size` budget wraps a sequential pass; `number_ios` only cuts it short.
        let wraps = job.time_based || job.io_size.is_some();
        let budget_bytes = if job.time_based {
            job.io_size
        } else if job.rw.is_random() {
            // A random job does `size` bytes (or `io_size`) in all.
            job.io_size
                .or(Some(issuer.regions.iter().map(|r| r.len).sum()))
        } else {
            job.io_size
        };
        Self {
            pos: vec![0; issuer.regions.len()],
            passed: vec![false; issuer.regions.len()],
            regions: issuer.regions.clone(),
            file: 0,
            ios_on_file: 0,
            run_left: 0,
            issued_bytes: 0,
            issued_ios: 0,
            completed_ios: 0,
            rng: ChaCha8Rng::seed_from_u64(issuer.seed),
            wraps,
            budget_bytes,
            budget_ios: job.number_ios,
        }
    }

    pub fn region(&self, i: usize) -> &Region {
        &self.regions[i]
    }

    /// The region a context-per-file chain is on.
    pub fn current_file(&self) -> usize {
        self.file
    }

    /// How much of its work the issuer has issued, 0 to 1, for progress: its byte or I/O
    /// budget, or else its single pass over its regions. None for a pass that wraps with no
    /// budget (a time-based job: its time is the measure).
    pub fn fraction(&self) -> Option<f64> {
        let of = |done: u64, all: u64| (done as f64 / all.max(1) as f64).min(1.0);
        let by_budget = [
            self.budget_bytes.map(|b| of(self.issued_bytes, b)),
            self.budget_ios.map(|n| of(self.issued_ios, n)),
        ]
        .into_iter()
        .flatten()
        .reduce(f64::max);
        if by_budget.is_some() || self.wraps {
            return by_budget;
        }
        let all: u64 = self.regions.iter().map(|r| r.len).sum();
        Some(of(self.pos.iter().sum(), all))
    }

    fn budget_left(&self) -> bool {
        self.budget_bytes.is_none_or(|b| self.issued_bytes < b)
            && self.budget_ios.is_none_or(|n| self.issued_ios < n)
    }

    /// Picks the file for the next I/O per `file_service_type`; `None` when every file's
    /// single pass is over.
    fn pick_file(&mut self, job: &Job) -> Option<usize> {
        let n = self.regions.len();
        let open = |c: &Self, f: usize| c.wraps || !c.passed[f];
        match job.file_service {
            FileServiceType::Sequential => (self.file..n).find(|&f| open(self, f)),
            FileServiceType::RoundRobin => {
                if self.ios_on_file >= job.file_service_ios.max(1) || !open(self, self.file) {
                    self.ios_on_file = 0;
                    let from = self.file;
                    self.file = (1..=n).map(|k| (from + k) % n).find(|&f| open(self, f))?;
                }
                Some(self.file)
            }
            FileServiceType::Random => {
                if self.ios_on_file >= job.file_service_ios.max(1) || !open(self, self.file) {
                    self.ios_on_file = 0;
                    let open_files: Vec<usize> = (0..n).filter(|&f| open(self, f)).collect();
                    if open_files.is_empty() {
                        return None;
                    }
                    self.file = open_files[self.rng.random_range(0..open_files.len())];
                }
                Some(self.file)
            }
        }
    }

    /// The next I/O, or `None` when the issuer has done all it will.
    pub fn next(&mut self, job: &Job) -> Option<AppIo> {
        if !self.budget_left() {
            return None;
        }
        let f = self.pick_file(job)?;
        self.file = f;
        let region = self.regions[f];
        let bs = job.bs.min(region.len);
        let offset = if job.rw.is_random() && self.run_left == 0 {
            let blocks = (region.len / bs).max(1);
            self.run_left = job.rw_ios_per_offset.saturating_sub(1);
            self.pos[f] = self.rng.random_range(0..blocks) * bs;
            self.pos[f]
        } else {
            self.run_left = self.run_left.saturating_sub(1);
            if self.pos[f] + bs > region.len {
                self.pos[f] = 0;
            }
            self.pos[f]
        };
        self.pos[f] = offset + bs + job.rw_skip;
        if !job.rw.is_random() && self.pos[f] + bs > region.len {
            // This I/O ends the pass over the file.
            self.passed[f] = true;
            if self.wraps {
                self.pos[f] = 0;
            }
        }
        let op = if !job.rw.writes() {
            Op::Read
        } else if !job.rw.reads() || self.rng.random_range(0..100u8) >= job.rwmixread {
            Op::Write
        } else {
            Op::Read
        };
        self.ios_on_file += 1;
        self.issued_ios += 1;
        self.issued_bytes += bs;
        Some(AppIo {
            region: f,
            offset: region.start + offset,
            len: bs,
            op,
        })
    }

    /// Whether the current file's pass is over (for a context per file).
    pub fn file_passed(&self) -> bool {
        self.passed.get(self.file).copied().unwrap_or(true)
    }

    /// The pause after an I/O completes, per `thinktime`, `thinktime_blocks` (or the
    /// adversary's rhythm) and the distribution.
    pub fn think_after_completion(&mut self, job: &Job) -> Nanos {
        self.completed_ios += 1;
        if job.thinktime_ns == 0 || self.completed_ios % job.ios_per_pause().max(1) != 0 {
            return 0;
        }
        match job.thinktime_dist {
            ThinkTimeDist::Constant => job.thinktime_ns,
            ThinkTimeDist::Uniform => self.rng.random_range(0..=job.thinktime_ns),
        }
    }
}
