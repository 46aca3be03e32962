//! Where the daemon's observations come from: the [`ObservationSource`] trait, and
//! [`ProcSource`], which reads the machine domain from `/proc`.
//!
//! The daemon's loop asks its source for an [`Observation`] once a tick and knows nothing of
//! files; a test hands it a source of its own and gets a deterministic daemon.

use std::path::{Path, PathBuf};

use antsched_core::Nanos;

use crate::daemon::Governor;
use antsched_mem::estimate::{
    DiskBasis, DiskCost, DiskEstimate, LruSnapshot, MemcgV1Lru, RefaultCheck, Turnover,
    TurnoverConfig, TurnoverEstimate,
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

    /// The domain's PSI file (`/proc/pressure/memory`, a cgroup2 group's `memory.pressure`),
    /// where the daemon registers a trigger that wakes it on a stall. None by default.
    fn pressure_file(&self) -> Option<PathBuf> {
        None
    }

    /// The domain's PSI as read at the last observation, for the thrashing tier. None by
    /// default (no PSI: the tier comes from S alone).
    fn pressure(&self) -> Option<Pressure> {
        None
    }

    /// The daemon took `bytes` from the domain itself (memory nice enforcement lowered its
    /// limit), reclaim the kernel's counters may not show. Ignored by default.
    fn note_reclaimed(&mut self, _bytes: u64) {}
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
    files: OpenFiles,
    /// The kernel's MGLRU generations, where it has them: then the candidate age is theirs.
    mglru: Option<Mglru>,
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

/// The kernel files a source reads every tick, each opened once and then read again from
/// offset 0 (`pread`): the kernel makes a seq_file's text afresh when it is read from the
/// start. Opening, sizing and closing each file anew costs three system calls more per file
/// and tick, which with 20 governed groups was most of the daemon's CPU at the 1 s tick
/// (the `tick_cpu` benchmark). A file that fails to read is closed and opened again next
/// time (a group removed and made again under the same name is read anew).
#[derive(Default)]
struct OpenFiles(Vec<(PathBuf, std::fs::File)>);

impl OpenFiles {
    fn read(&mut self, path: &Path) -> Result<String, SourceError> {
        use std::os::unix::fs::FileExt;
        let err = |source| SourceError::Read {
            path: path.to_path_buf(),
            source,
        };
        let i = match self.0.iter().position(|(p, _)| p == path) {
            Some(i) => i,
            None => {
                let f = std::fs::File::open(path).map_err(err)?;
                self.0.push((path.to_path_buf(), f));
                self.0.len() - 1
            }
        };
        // Larger than any of the files read (memory.stat and vmstat are a few KiB), so that
        // one read takes all and a second finds the end.
        let mut chunk = [0u8; 16 << 10];
        let mut text = Vec::new();
        let result = loop {
            match self.0[i].1.read_at(&mut chunk, text.len() as u64) {
                Ok(0) => break Ok(()),
                Ok(n) => text.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        if let Err(e) = result {
            self.0.remove(i);
            return Err(err(e));
        }
        String::from_utf8(text).map_err(|_| {
            err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "not UTF-8 text",
            ))
        })
    }
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
        // MGLRU is the real kernel's: only a source on the real /proc looks for it.
        let mglru = (proc_dir == Path::new("/proc"))
            .then(Mglru::file_on_this_machine)
            .flatten()
            .map(|file| Mglru::new(file, "/".into()));
        let mut s = Self {
            proc_dir,
            files: OpenFiles::default(),
            mglru,
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

impl ProcSource {
    /// Takes the candidate age from the MGLRU generations in `file` (the format of
    /// `/sys/kernel/debug/lru_gen`), the whole machine's, instead of the turnover estimate.
    pub fn with_mglru(mut self, file: impl Into<PathBuf>) -> Self {
        self.mglru = Some(Mglru::new(file.into(), "/".into()));
        self
    }

    /// How the candidate age is obtained: MGLRU's generations where the kernel has them,
    /// else the turnover estimate.
    pub fn estimator(&self) -> antsched_mem::record::Estimator {
        if self.mglru.is_some() {
            antsched_mem::record::Estimator::Mglru
        } else {
            antsched_mem::record::Estimator::Turnover
        }
    }
}

impl ObservationSource for ProcSource {
    fn observe(&mut self, now: Nanos) -> Result<Observation, SourceError> {
        let meminfo = kernel::parse_meminfo(&self.files.read(&self.proc_dir.join("meminfo"))?)?;
        let vmstat = kernel::parse_vmstat(&self.files.read(&self.proc_dir.join("vmstat"))?)?;
        let disks = kernel::parse_diskstats(&self.files.read(&self.proc_dir.join("diskstats"))?)?;
        // PSI is for the log here; a kernel built without it is not an error.
        let psi = self
            .files
            .read(&self.proc_dir.join("pressure/memory"))
            .ok()
            .map(|t| kernel::parse_pressure(&t))
            .transpose()?;
        let total = meminfo.total_bytes()?;
        let free = meminfo.free_bytes()?.min(total);
        let swap = meminfo.swap_total_bytes() > 0;
        let lru = LruSnapshot::from_vmstat(&vmstat, swap)?;
        let turnover = self.turnover.observe(now, lru);
        let disk = self.disk_cost.observe(now, find_disk(&disks, &self.disk)?);
        self.last = Some((turnover, disk, psi));
        let mut obs = observation(free, total, &turnover, &disk, now);
        if let Some(m) = &mut self.mglru {
            m.apply(&mut obs, swap)?;
        }
        Ok(obs)
    }

    fn describe(&self) -> String {
        let Some((t, d, psi)) = &self.last else {
            return String::new();
        };
        describe(t, d, *psi, &self.disk)
    }

    fn pressure_file(&self) -> Option<PathBuf> {
        let p = self.proc_dir.join("pressure/memory");
        p.exists().then_some(p)
    }

    fn pressure(&self) -> Option<Pressure> {
        self.last.as_ref().and_then(|l| l.2)
    }
}

/// The log line of a turnover estimate, a disk estimate and PSI.
/// The device paging goes to, among the diskstats lines, or an error listing those there are.
fn find_disk<'a>(disks: &'a [DiskStats], name: &str) -> Result<&'a DiskStats, SourceError> {
    disks
        .iter()
        .find(|d| d.name == name)
        .ok_or_else(|| SourceError::NoDisk {
            name: name.to_string(),
            available: disks
                .iter()
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// What a domain's tick saw, for the core.
fn observation(
    free: u64,
    total: u64,
    turnover: &TurnoverEstimate,
    disk: &DiskEstimate,
    now: Nanos,
) -> Observation {
    Observation {
        free_bytes: free,
        total_bytes: total,
        candidate_age_s: turnover.candidate_age_s,
        paging: disk.paging,
        estimator: turnover.estimator,
        time: now,
    }
}

fn describe(t: &TurnoverEstimate, d: &DiskEstimate, psi: Option<Pressure>, disk: &str) -> String {
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
        disk,
        d.paging.disk_service_s * 1e3,
        d.paging.disk_queue,
    )
}

/// The candidate age from the kernel's multi-gen LRU ([`antsched_mem::mglru`]), for kernels
/// that have it enabled: the age of the oldest generation with pages reclaim can take, which
/// the kernel measures, in place of the turnover estimate (which stays in the log). The record
/// says which (`estimator`): never a mix.
struct Mglru {
    file: PathBuf,
    /// The domain's memcg path (`/` for the machine).
    memcg: String,
}

impl Mglru {
    fn new(file: PathBuf, memcg: String) -> Self {
        Self { file, memcg }
    }

    /// `/sys/kernel/debug/lru_gen` where MGLRU is enabled (`/sys/kernel/mm/lru_gen/enabled`
    /// holds a non-zero mask) and the file can be read (debugfs mounted, root); else None.
    fn file_on_this_machine() -> Option<PathBuf> {
        let enabled = std::fs::read_to_string("/sys/kernel/mm/lru_gen/enabled").ok()?;
        let mask = u64::from_str_radix(enabled.trim().trim_start_matches("0x"), 16).ok()?;
        let file = PathBuf::from("/sys/kernel/debug/lru_gen");
        (mask != 0 && std::fs::File::open(&file).is_ok()).then_some(file)
    }

    fn apply(&mut self, obs: &mut Observation, swap: bool) -> Result<(), SourceError> {
        let gens = antsched_mem::mglru::parse_lru_gen(&read(&self.file)?)?;
        obs.candidate_age_s =
            antsched_mem::mglru::candidate_age_s(&gens, &self.memcg, swap).unwrap_or(f64::INFINITY);
        obs.estimator = antsched_mem::record::Estimator::Mglru;
        Ok(())
    }
}

/// Where cgroup v1's memory controller is mounted on systems that mount it in the usual place.
pub const MEMCG_V1_ROOT: &str = "/sys/fs/cgroup/memory";

/// One memory cgroup as a domain, v1 or v2 (told apart by its files).
///
/// **v1**: free is `memory.limit_in_bytes` minus `memory.usage_in_bytes` (page cache charged
/// to the group counts as used, as the limit sees it), and the candidate age is the turnover
/// estimate of the group's own LRU and reclaim ([`MemcgV1Lru`]: `pgpgout` in the intervals in
/// which `memory.failcnt` rose, since v1 does not count a group's reclaim).
///
/// **v2**: free is `memory.max` minus `memory.current`, and the candidate age the turnover
/// estimate of the group's LRU over its own `pgsteal` ([`LruSnapshot::from_memcg_v2_stat`]);
/// its PSI is its own `memory.pressure`.
///
/// Both: tau is 10% of the limit (`SeverityConfig::tau_fraction`); a group without a limit
/// (v1 prints one near `i64::MAX`, v2 `max`) is bounded by the machine's `MemTotal`; the
/// paging cost comes from the same `/proc/diskstats` device as the machine's. Nothing in the
/// group is written here.
pub struct CgroupSource {
    dir: PathBuf,
    proc_dir: PathBuf,
    files: OpenFiles,
    disk: String,
    pressure_file: Option<PathBuf>,
    version: Version,
    /// The kernel's MGLRU generations, where it has them: then the candidate age is theirs.
    mglru: Option<Mglru>,
    lru: MemcgV1Lru,
    turnover: Turnover,
    disk_cost: DiskCost,
    last: Option<(TurnoverEstimate, DiskEstimate, Option<Pressure>)>,
}

/// Which memory controller a group belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

impl Version {
    /// The version of the memory group at `dir`, from its files; None if it is neither.
    pub fn of(dir: &Path) -> Option<Self> {
        let has = |files: &[&str]| files.iter().all(|f| dir.join(f).is_file());
        if has(&[
            "memory.limit_in_bytes",
            "memory.usage_in_bytes",
            "memory.stat",
            "memory.failcnt",
        ]) {
            Some(Version::V1)
        } else if has(&["memory.max", "memory.current", "memory.stat"]) {
            Some(Version::V2)
        } else {
            None
        }
    }
}

impl CgroupSource {
    /// The group at `dir` on this machine: `/proc` for the machine's figures; for PSI a v2
    /// group's own `memory.pressure`, a v1 group's cgroup2 twin's, where it has one.
    pub fn on_this_machine(dir: &Path, disk: &str) -> Result<Self, SourceError> {
        let pressure = match Version::of(dir) {
            Some(Version::V2) => Some(dir.join("memory.pressure")).filter(|p| p.is_file()),
            _ => crate::cgroup::pressure_twin(dir),
        };
        let mut s = Self::new(dir, "/proc", disk, pressure)?;
        if let (Some(file), Some(memcg)) = (Mglru::file_on_this_machine(), s.memcg_path()) {
            s.mglru = Some(Mglru::new(file, memcg));
        }
        Ok(s)
    }

    /// Takes the candidate age from the MGLRU generations in `file` (the format of
    /// `/sys/kernel/debug/lru_gen`) of the memcg at `memcg` and its subtree, instead of the
    /// turnover estimate.
    pub fn with_mglru(mut self, file: impl Into<PathBuf>, memcg: impl Into<String>) -> Self {
        self.mglru = Some(Mglru::new(file.into(), memcg.into()));
        self
    }

    /// The group's path as the kernel names its memcg (`/antsched/run-42`): its directory
    /// below the hierarchy's mount.
    fn memcg_path(&self) -> Option<String> {
        let root = match self.version {
            Version::V1 => Path::new(MEMCG_V1_ROOT),
            Version::V2 => Path::new("/sys/fs/cgroup"),
        };
        let rel = self.dir.strip_prefix(root).ok()?;
        Some(format!("/{}", rel.display()))
    }

    /// A [`Governor`] that builds [`on_this_machine`](Self::on_this_machine) sources, paging
    /// cost from `disk`, for the groups clients ask the daemon to govern.
    pub fn governor(disk: String) -> Governor {
        Box::new(move |path: &Path| Ok(Box::new(Self::on_this_machine(path, &disk)?) as _))
    }

    /// The group at `dir` (a directory of the v1 memory hierarchy), with `/proc` at
    /// `proc_dir` for `MemTotal`, swap and the disk named `disk` in `/proc/diskstats`.
    /// `pressure_file` is the group's cgroup2 `memory.pressure`, where it has one. Fails,
    /// naming the path, if `dir` is not a v1 memory cgroup or a file does not parse.
    pub fn new(
        dir: impl Into<PathBuf>,
        proc_dir: impl Into<PathBuf>,
        disk: &str,
        pressure_file: Option<PathBuf>,
    ) -> Result<Self, SourceError> {
        let dir = dir.into();
        let dir = dir.canonicalize().map_err(|source| SourceError::Read {
            path: dir.clone(),
            source,
        })?;
        let Some(version) = Version::of(&dir) else {
            return Err(SourceError::Other(format!(
                "{} is not a memory cgroup: it has neither v1's memory.limit_in_bytes, \
                 memory.usage_in_bytes, memory.failcnt and memory.stat nor v2's memory.max, \
                 memory.current and memory.stat",
                dir.display()
            )));
        };
        let mut s = Self {
            dir,
            proc_dir: proc_dir.into(),
            files: OpenFiles::default(),
            disk: disk.to_string(),
            pressure_file,
            version,
            mglru: None,
            lru: MemcgV1Lru::new(),
            turnover: Turnover::new(TurnoverConfig::default()),
            disk_cost: DiskCost::new(),
            last: None,
        };
        s.observe(0)?;
        s.lru = MemcgV1Lru::new();
        s.turnover = Turnover::new(TurnoverConfig::default());
        s.disk_cost = DiskCost::new();
        s.last = None;
        Ok(s)
    }

    /// Whether the group is a v1 or a v2 one.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The group's directory, canonical: the domain's name.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn number(&mut self, file: &str) -> Result<u64, SourceError> {
        let path = self.dir.join(file);
        let text = self.files.read(&path)?;
        text.trim().parse().map_err(|_| {
            SourceError::Other(format!(
                "{}: expected a whole number, got {:?}",
                path.display(),
                text.trim()
            ))
        })
    }
}

impl ObservationSource for CgroupSource {
    fn observe(&mut self, now: Nanos) -> Result<Observation, SourceError> {
        let meminfo = kernel::parse_meminfo(&self.files.read(&self.proc_dir.join("meminfo"))?)?;
        let swap = meminfo.swap_total_bytes() > 0;
        let (limit, usage, lru) = match self.version {
            Version::V1 => {
                let limit = self.number("memory.limit_in_bytes")?;
                let usage = self.number("memory.usage_in_bytes")?;
                let failcnt = self.number("memory.failcnt")?;
                // A v1 group whose memory.swappiness is 0 has none of its anonymous memory
                // swapped by its own reclaim, whatever swap the machine has: its anonymous
                // pages are not reclaimable, and counting them would make its candidate age
                // that of the whole group (a group without the file is taken as swapping).
                let swap = swap && self.number("memory.swappiness").map_or(true, |v| v != 0);
                let stat =
                    kernel::parse_memcg_v1_stat(&self.files.read(&self.dir.join("memory.stat"))?)?;
                (limit, usage, self.lru.observe(&stat, failcnt, swap)?)
            }
            Version::V2 => {
                let path = self.dir.join("memory.max");
                let limit = kernel::parse_memory_max(&self.files.read(&path)?)
                    .map_err(|e| SourceError::Other(format!("{}: {e}", path.display())))?
                    .unwrap_or(u64::MAX);
                let usage = self.number("memory.current")?;
                let stat =
                    kernel::parse_memcg_v2_stat(&self.files.read(&self.dir.join("memory.stat"))?)?;
                (limit, usage, LruSnapshot::from_memcg_v2_stat(&stat, swap)?)
            }
        };
        let psi = match &self.pressure_file {
            Some(p) => Some(kernel::parse_pressure(&self.files.read(p)?)?),
            None => None,
        };
        let total = limit.min(meminfo.total_bytes()?);
        let free = total.saturating_sub(usage);
        let turnover = self.turnover.observe(now, lru);
        let disks = kernel::parse_diskstats(&self.files.read(&self.proc_dir.join("diskstats"))?)?;
        let disk = self.disk_cost.observe(now, find_disk(&disks, &self.disk)?);
        self.last = Some((turnover, disk, psi));
        let mut obs = observation(free, total, &turnover, &disk, now);
        if let Some(m) = &mut self.mglru {
            m.apply(&mut obs, swap)?;
        }
        Ok(obs)
    }

    fn describe(&self) -> String {
        let Some((t, d, psi)) = &self.last else {
            return String::new();
        };
        describe(t, d, *psi, &self.disk)
    }

    fn pressure_file(&self) -> Option<PathBuf> {
        self.pressure_file.clone()
    }

    fn pressure(&self) -> Option<Pressure> {
        self.last.as_ref().and_then(|l| l.2)
    }

    /// A v1 limit write reclaims without moving `failcnt`: counted into the turnover here
    /// (`MemcgV1Lru::add_reclaimed`).
    fn note_reclaimed(&mut self, bytes: u64) {
        self.lru.add_reclaimed(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../mem/fixtures");

    /// A fake `/proc` (this machine's captured files) and a fake v2 group beside it.
    fn v2_group(tag: &str, max: &str, current: u64) -> (PathBuf, PathBuf) {
        let root = std::env::temp_dir().join(format!("antsched-v2-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let (proc_dir, group) = (root.join("proc"), root.join("group"));
        std::fs::create_dir_all(&proc_dir).unwrap();
        std::fs::create_dir_all(&group).unwrap();
        let fixture = |name: &str| std::fs::read(format!("{FIXTURES}/{name}")).unwrap();
        std::fs::write(proc_dir.join("meminfo"), fixture("linux-6.18/meminfo")).unwrap();
        std::fs::write(
            proc_dir.join("diskstats"),
            fixture("linux-6.18/diskstats.0"),
        )
        .unwrap();
        std::fs::write(proc_dir.join("vmstat"), fixture("linux-6.18/vmstat.0")).unwrap();
        std::fs::write(group.join("memory.max"), format!("{max}\n")).unwrap();
        std::fs::write(group.join("memory.current"), format!("{current}\n")).unwrap();
        std::fs::write(group.join("memory.stat"), fixture("memcg-v2-memory.stat")).unwrap();
        std::fs::write(
            group.join("memory.pressure"),
            fixture("linux-6.18/pressure-memory"),
        )
        .unwrap();
        (proc_dir, group)
    }

    /// A cgroup v2 group is a domain as a v1 one is: free is `memory.max` minus
    /// `memory.current`, the total its limit (the machine's `MemTotal` for `max`), its PSI
    /// its own `memory.pressure`, and its candidate age the turnover of its LRU over its
    /// own `pgsteal`.
    #[test]
    fn a_v2_group_is_a_domain_free_is_max_minus_current() {
        let mib = 1u64 << 20;
        let (proc_dir, group) = v2_group("limit", &(256 * mib).to_string(), 240 * mib);
        let first = proc_dir.parent().unwrap().to_path_buf();
        let mut s = CgroupSource::new(
            &group,
            &proc_dir,
            "loop0",
            Some(group.join("memory.pressure")),
        )
        .unwrap();
        assert_eq!(s.version(), Version::V2);
        let o = s.observe(1_000_000_000).unwrap();
        assert_eq!((o.free_bytes, o.total_bytes), (16 * mib, 256 * mib));
        assert!(s.pressure().is_some());
        // Reclaim moves: 4,096 more pages stolen in 10 s over an LRU of 37,888 pages.
        let stat = std::fs::read_to_string(group.join("memory.stat"))
            .unwrap()
            .replace("pgsteal 48765", "pgsteal 52861");
        std::fs::write(group.join("memory.stat"), stat).unwrap();
        let o = s.observe(11_000_000_000).unwrap();
        assert!(
            o.candidate_age_s.is_finite() && o.candidate_age_s > 0.0,
            "{o:?}"
        );
        // No limit: bounded by the machine.
        let (proc_dir, group) = v2_group("max", "max", 240 * mib);
        let mut s = CgroupSource::new(&group, &proc_dir, "loop0", None).unwrap();
        let meminfo =
            kernel::parse_meminfo(&std::fs::read_to_string(proc_dir.join("meminfo")).unwrap())
                .unwrap();
        let o = s.observe(1).unwrap();
        assert_eq!(o.total_bytes, meminfo.total_bytes().unwrap());
        // A bad memory.max is an error naming the file.
        std::fs::write(group.join("memory.max"), "lots\n").unwrap();
        let e = s.observe(2).unwrap_err().to_string();
        assert!(e.contains("memory.max"), "{e}");
        // A directory that is neither v1 nor v2 is refused, naming both sets of files.
        let e = CgroupSource::new(&proc_dir, &proc_dir, "loop0", None)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("memory.max") && e.contains("memory.limit_in_bytes"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(proc_dir.parent().unwrap());
        let _ = std::fs::remove_dir_all(first);
    }

    /// A v1 group counts its anonymous pages in its LRU only where the machine has swap and
    /// the group's `memory.swappiness` is not 0 (with 0 its reclaim never swaps them).
    #[test]
    fn a_v1_group_with_swappiness_0_counts_no_anonymous_pages() {
        let mib = 1u64 << 20;
        let (proc_dir, group) = v2_group("v1swap", "max", 0);
        for f in ["memory.max", "memory.current", "memory.stat"] {
            std::fs::remove_file(group.join(f)).unwrap();
        }
        let meminfo = std::fs::read_to_string(proc_dir.join("meminfo"))
            .unwrap()
            .lines()
            .map(|l| {
                if l.starts_with("SwapTotal:") {
                    "SwapTotal:        524284 kB".to_string()
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(proc_dir.join("meminfo"), meminfo + "\n").unwrap();
        let stat =
            std::fs::read_to_string(format!("{FIXTURES}/linux-6.18/memcg-v1-memory.stat")).unwrap();
        let anon_pages = ["total_inactive_anon ", "total_active_anon "]
            .iter()
            .map(|k| {
                stat.lines()
                    .find_map(|l| l.strip_prefix(k))
                    .unwrap()
                    .trim()
                    .parse::<u64>()
                    .unwrap()
                    / 4096
            })
            .sum::<u64>();
        assert!(anon_pages > 0, "the fixture has anonymous pages");
        std::fs::write(group.join("memory.stat"), &stat).unwrap();
        std::fs::write(
            group.join("memory.limit_in_bytes"),
            format!("{}\n", 256 * mib),
        )
        .unwrap();
        std::fs::write(
            group.join("memory.usage_in_bytes"),
            format!("{}\n", 200 * mib),
        )
        .unwrap();
        std::fs::write(group.join("memory.failcnt"), "0\n").unwrap();
        let lru_pages = |swappiness: &str| {
            std::fs::write(group.join("memory.swappiness"), swappiness).unwrap();
            let mut s = CgroupSource::new(&group, &proc_dir, "loop0", None).unwrap();
            assert_eq!(s.version(), Version::V1);
            s.observe(1).unwrap();
            let text = s.describe();
            text.split("LRU ")
                .nth(1)
                .and_then(|t| t.split(' ').next())
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("no LRU in {text:?}"))
        };
        let (swapping, not) = (lru_pages("60\n"), lru_pages("0\n"));
        assert_eq!(swapping, not + anon_pages, "{swapping} {not}");
        let _ = std::fs::remove_dir_all(proc_dir.parent().unwrap());
    }

    /// Where the kernel has MGLRU, a domain's candidate age is the age of its oldest
    /// generation with file pages, and the record says `mglru`: no mix with the turnover
    /// estimate. A group sees its own subtree; the machine every memcg.
    #[test]
    fn with_mglru_the_candidate_age_is_the_oldest_generations() {
        let mib = 1u64 << 20;
        let (proc_dir, group) = v2_group("mglru", &(256 * mib).to_string(), 240 * mib);
        let lru_gen = format!("{FIXTURES}/lru_gen");
        let mut s = CgroupSource::new(&group, &proc_dir, "loop0", None)
            .unwrap()
            .with_mglru(&lru_gen, "/antsched/run-42");
        let o = s.observe(1).unwrap();
        assert_eq!(o.candidate_age_s, 31.5);
        assert_eq!(o.estimator, antsched_mem::record::Estimator::Mglru);
        let mut m = ProcSource::new(&proc_dir, DiskChoice::Named("loop0".into()))
            .unwrap()
            .with_mglru(&lru_gen);
        assert_eq!(m.estimator(), antsched_mem::record::Estimator::Mglru);
        let o = m.observe(1).unwrap();
        assert_eq!(o.candidate_age_s, 212.0);
        // A group with no evictable generation: infinitely old, S_max.
        let mut s = CgroupSource::new(&group, &proc_dir, "loop0", None)
            .unwrap()
            .with_mglru(&lru_gen, "/none");
        assert!(s.observe(2).unwrap().candidate_age_s.is_infinite());
        let _ = std::fs::remove_dir_all(proc_dir.parent().unwrap());
    }
}
