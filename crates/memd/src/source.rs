//! Where the daemon's observations come from: the [`ObservationSource`] trait, and
//! [`ProcSource`], which reads the machine domain from `/proc`.
//!
//! The daemon's loop asks its source for an [`Observation`] once a tick and knows nothing of
//! files; a test hands it a source of its own and gets a deterministic daemon.

use std::path::{Path, PathBuf};

use antsched_core::Nanos;
use antsched_mem::estimate::{
    DiskBasis, DiskCost, DiskEstimate, LruSnapshot, RefaultCheck, Turnover, TurnoverConfig,
    TurnoverEstimate,
};
use antsched_mem::kernel::{self, DiskStats, ParseError, Pressure};
use antsched_mem::record::Observation;

/// Why a source could not observe.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error("no disk named {name:?} in /proc/diskstats (there are: {available})")]
    NoDisk { name: String, available: String },
    #[error("{0}")]
    Other(String),
}

/// What the daemon asks once a tick.
pub trait ObservationSource: Send {
    /// The domain now. `now` is the daemon's clock (ns of CLOCK_MONOTONIC), to be copied into
    /// the observation's `time`.
    fn observe(&mut self, now: Nanos) -> Result<Observation, SourceError>;

    /// A line for the log: what the source sees beyond the record (the refault check, PSI,
    /// the disk). Empty by default.
    fn describe(&self) -> String {
        String::new()
    }
}

/// Which device's `/proc/diskstats` line gives the paging cost.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum DiskChoice {
    /// The device of the root file system (where file pages are read back from), else the
    /// device that has completed the most I/O.
    #[default]
    Root,
    /// A device by its name in `/proc/diskstats` (`vda`, `sda`, `nvme0n1`).
    Named(String),
}

/// The machine domain, from `/proc`: free is `MemFree`, the total `MemTotal`; the candidate
/// age is the turnover estimate of the kernel's LRU (file pages, and anonymous ones where
/// there is swap) from `/proc/vmstat`; the paging cost's inputs come from one device's line of
/// `/proc/diskstats`.
pub struct ProcSource {
    proc_dir: PathBuf,
    disk: String,
    turnover: Turnover,
    disk_cost: DiskCost,
    last: Option<(TurnoverEstimate, DiskEstimate, Option<Pressure>)>,
}

fn read(path: &Path) -> Result<String, SourceError> {
    std::fs::read_to_string(path).map_err(|source| SourceError::Read {
        path: path.to_path_buf(),
        source,
    })
}

impl ProcSource {
    /// Reads from `proc_dir` (normally `/proc`). Fails, naming the file, if a file it needs
    /// is missing or does not parse, or the disk is not there.
    pub fn new(proc_dir: impl Into<PathBuf>, disk: DiskChoice) -> Result<Self, SourceError> {
        let proc_dir = proc_dir.into();
        let disks = kernel::parse_diskstats(&read(&proc_dir.join("diskstats"))?)?;
        let disk = match disk {
            DiskChoice::Named(name) => {
                if !disks.iter().any(|d| d.name == name) {
                    return Err(SourceError::NoDisk {
                        name,
                        available: disks
                            .iter()
                            .map(|d| d.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    });
                }
                name
            }
            DiskChoice::Root => root_disk(&disks).ok_or_else(|| {
                SourceError::Other(
                    "/proc/diskstats lists no disk to take the paging cost from".into(),
                )
            })?,
        };
        let mut s = Self {
            proc_dir,
            disk,
            turnover: Turnover::new(TurnoverConfig::default()),
            disk_cost: DiskCost::new(),
            last: None,
        };
        // Every file is read once now, so that a machine that lacks one fails at start.
        s.observe(0)?;
        s.turnover = Turnover::new(TurnoverConfig::default());
        s.disk_cost = DiskCost::new();
        s.last = None;
        Ok(s)
    }

    /// The device the paging cost is read from.
    pub fn disk(&self) -> &str {
        &self.disk
    }
}

/// The root file system's device, by `stat("/")`, else the busiest device that is not a
/// loop, RAM or zram device.
fn root_disk(disks: &[DiskStats]) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    if let Ok(m) = std::fs::metadata("/") {
        let (major, minor) = (rustix::fs::major(m.dev()), rustix::fs::minor(m.dev()));
        if let Some(d) = disks.iter().find(|d| d.major == major && d.minor == minor) {
            return Some(d.name.clone());
        }
    }
    disks
        .iter()
        .filter(|d| {
            !["loop", "ram", "zram"]
                .iter()
                .any(|p| d.name.starts_with(p))
        })
        .max_by_key(|d| d.completed())
        .map(|d| d.name.clone())
}

impl ObservationSource for ProcSource {
    fn observe(&mut self, now: Nanos) -> Result<Observation, SourceError> {
        let meminfo = kernel::parse_meminfo(&read(&self.proc_dir.join("meminfo"))?)?;
        let vmstat = kernel::parse_vmstat(&read(&self.proc_dir.join("vmstat"))?)?;
        let disks = kernel::parse_diskstats(&read(&self.proc_dir.join("diskstats"))?)?;
        // PSI is for the log here; a kernel built without it is not an error.
        let psi = std::fs::read_to_string(self.proc_dir.join("pressure/memory"))
            .ok()
            .map(|t| kernel::parse_pressure(&t))
            .transpose()?;
        let total = meminfo.total_bytes()?;
        let free = meminfo.free_bytes()?.min(total);
        let swap = meminfo.swap_total_bytes() > 0;
        let lru = LruSnapshot::from_vmstat(&vmstat, swap)?;
        let turnover = self.turnover.observe(now, lru);
        let disk =
            disks
                .iter()
                .find(|d| d.name == self.disk)
                .ok_or_else(|| SourceError::NoDisk {
                    name: self.disk.clone(),
                    available: disks
                        .iter()
                        .map(|d| d.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                })?;
        let disk = self.disk_cost.observe(now, disk);
        self.last = Some((turnover, disk, psi));
        Ok(Observation {
            free_bytes: free,
            total_bytes: total,
            candidate_age_s: turnover.candidate_age_s,
            paging: disk.paging,
            estimator: turnover.estimator,
            time: now,
        })
    }

    fn describe(&self) -> String {
        let Some((t, d, psi)) = &self.last else {
            return String::new();
        };
        let check = match t.check {
            RefaultCheck::Consistent { ratio }
            | RefaultCheck::TooOld { ratio }
            | RefaultCheck::TooYoung { ratio } => {
                format!(
                    "{} ({:.3} refaults per reclaimed page)",
                    t.check.name(),
                    ratio
                )
            }
            RefaultCheck::OutsideReclaim { refaults } => {
                format!("outside_reclaim ({refaults} refaults without reclaim)")
            }
            RefaultCheck::Insufficient => "insufficient".into(),
        };
        let basis = match d.basis {
            DiskBasis::Window => "window",
            DiskBasis::SinceBoot => "since boot",
            DiskBasis::None => "no I/O yet",
        };
        let psi = psi.map_or("no PSI".to_string(), |p| {
            format!(
                "PSI some {:.2}% full {:.2}%",
                p.some.avg10,
                p.full.map_or(0.0, |f| f.avg10)
            )
        });
        format!(
            "turnover: LRU {} pages, reclaim {:.1} pages/s, refault check {check}; \
             disk {}: {:.3} ms per I/O ({basis}), queue {:.2}; {psi}",
            t.lru_pages,
            t.reclaim_rate,
            self.disk,
            d.paging.disk_service_s * 1e3,
            d.paging.disk_queue,
        )
    }
}
