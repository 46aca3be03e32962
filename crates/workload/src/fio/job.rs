//! The resolved job model: what each job does once `[global]` values are applied and defaults
//! filled in, as typed fields, and where each explicitly given option came from.

use std::collections::BTreeMap;
use std::path::Path;

use super::error::{ErrorKind, FioError};
use super::options::{self, Value};
use super::value::RwSpec;

/// A parsed job file: its jobs in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct JobFile {
    /// Where the text came from (a path, or the `origin` given to [`parse`](super::parse)).
    /// Errors built with [`JobFile::error_at`] name it.
    pub origin: String,
    /// One entry per job section, in file order. `[global]` sections are not jobs.
    pub jobs: Vec<Job>,
}

impl JobFile {
    /// A job file with no jobs: what a driver that replays a trace runs beside it. A `const`
    /// so that it can be a `static` (the struct is `non_exhaustive` outside this crate).
    pub const fn empty() -> JobFile {
        JobFile {
            origin: String::new(),
            jobs: Vec::new(),
        }
    }

    /// Reads and parses the job file at `path` within the default [`Limits`]. Errors name the
    /// path as given.
    pub fn load(path: impl AsRef<Path>) -> Result<JobFile, FioError> {
        Self::load_with(path, &Limits::default())
    }

    /// Like [`load`](Self::load), within `limits` (what `--limit KEY=VALUE` set).
    pub fn load_with(path: impl AsRef<Path>, limits: &Limits) -> Result<JobFile, FioError> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let text = antsched_disk::read_text(path).map_err(|err| {
            FioError::new(
                &origin,
                0,
                ErrorKind::Io {
                    message: err.to_string(),
                },
            )
        })?;
        super::parse_with(&text, &origin, limits)
    }

    /// An error about `job` found after parsing (by the simulator, say: "size is larger than
    /// the device"), reported at the line `option` was set on, or at the job's header if the
    /// option took its default. `message` should say what would be valid.
    pub fn error_at(&self, job: &Job, option: &str, message: impl Into<String>) -> FioError {
        let canonical = options::find(option).map_or(option, |spec| spec.name);
        FioError::new(
            &self.origin,
            job.line_or_header(option),
            ErrorKind::Semantic {
                job: job.section.clone(),
                option: Some(canonical.to_owned()),
                message: message.into(),
            },
        )
    }
}

/// One job section, resolved.
///
/// Sizes are bytes (`u64`), times nanoseconds (`u64`, fields named `*_ns`). A job stands for
/// `numjobs` identical contexts; the simulator makes the clones.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Job {
    /// The name in the section header, `[this]`.
    pub section: String,
    /// fio's `name=` if given, else the section name.
    pub name: String,
    /// Line of the section header.
    pub line: u32,
    /// `description=`.
    pub description: Option<String>,

    /// `rw=` / `readwrite=` (default `read`).
    pub rw: RwPattern,
    /// The `:N` of a sequential `rw` (`rw=read:64k`): bytes skipped after each I/O, so
    /// `rw=read:64k` with `bs=64k` reads every other 64 KiB block (the paper's alternate-block
    /// pattern). 0 when not given, and always 0 for random patterns.
    pub rw_skip: u64,
    /// The `:N` of a random `rw` (`rw=randread:8`): I/Os per random offset, the ones after the
    /// first following sequentially (fio's default `rw_sequencer=sequential`). 1 when not
    /// given, and always 1 for sequential patterns.
    pub rw_ios_per_offset: u64,
    /// Block size, bytes per I/O: positive and a multiple of 512 (default 4 KiB).
    pub bs: u64,
    /// `size=`: the region of each file (or of the device, from `offset`) the job works in,
    /// and the bytes it transfers unless `io_size`, `number_ios` or `runtime` say otherwise.
    /// fio divides it among `nrfiles` files unless `filesize` is given. `None` when not given
    /// (or given as 0, which fio reads as "the whole file or device"): the region is the
    /// device from `offset` to its end for a device, and for regular files it follows from
    /// `filesize`, or is left to the simulator when the job is bounded by `runtime` alone.
    pub size: Option<u64>,
    /// `offset=`: where in the file (or device) I/O starts, a multiple of 512 (default 0).
    pub offset: u64,
    /// `filename=`: what the job reads and writes.
    pub filename: FileTarget,
    /// `nrfiles=`: files per clone (default 1). Only with a generated file name: fio ignores
    /// `nrfiles` when `filename` is given, so antsched refuses the combination.
    pub nrfiles: u32,
    /// `filesize=`: size of each file; overrides `size / nrfiles` (and `size` then only sets
    /// how much I/O to do).
    pub filesize: Option<u64>,
    /// `file_service_type=`: which file the next I/O goes to (default `roundrobin`).
    pub file_service: FileServiceType,
    /// The `:N` of `file_service_type`: I/Os before switching files (default 1).
    pub file_service_ios: u64,
    /// `numjobs=`: identical contexts this job stands for (default 1). With a `filename`
    /// they share the file; without one each clone has its own files (fio's rule).
    pub numjobs: u32,

    /// `ioengine=` (default `psync`).
    pub ioengine: IoEngine,
    /// `iodepth=`: requests kept in flight (default 1; above 1 only with an asynchronous
    /// engine).
    pub iodepth: u32,
    /// `direct=1`: no page cache, hence no read-ahead and no write-back (default 0).
    pub direct: bool,
    /// `rwmixread=`: percentage of reads in a mixed pattern, 0 to 100 (default 50).
    pub rwmixread: u8,

    /// `thinktime=`: pause after an I/O completes before the next is issued (default 0).
    pub thinktime_ns: u64,
    /// `thinktime_blocks=`: I/Os between pauses (default 1: a pause after every I/O).
    pub thinktime_blocks: u64,
    /// `antsched_thinktime_dist=`: how each pause is drawn (default `constant`).
    pub thinktime_dist: ThinkTimeDist,
    /// `antsched_adversary=N`: the paper's adversary (section 4.2.4) with its rapid requests
    /// issued one at a time: N requests with no think time, then one pause of `thinktime`,
    /// repeated. Equivalent to fio's `thinktime_blocks=N+1`; see [`Job::ios_per_pause`]. The
    /// paper's Figure 7 has the N+1 requests arrive together instead (unflagged pieces of one
    /// read, [`Job::split_flag`]).
    pub adversary: Option<u64>,
    /// `runtime=`: stop after this long; `None` if not given or 0 (fio: no limit).
    pub runtime_ns: Option<u64>,
    /// `time_based`: keep looping over the region until `runtime` is up.
    pub time_based: bool,
    /// `exitall`: when this job finishes, every other job stops too.
    pub exitall: bool,
    /// `io_size=` / `io_limit=`: bytes to transfer, independent of the region (`None` if not
    /// given or 0).
    pub io_size: Option<u64>,
    /// `number_ios=`: stop after this many I/Os (`None` if not given or 0).
    pub number_ios: Option<u64>,
    /// `randseed=`: seed of the job's random offsets; `None`: derived from the run's seed.
    pub randseed: Option<u64>,
    /// `cgroup=`: the class (resource principal) the job's contexts belong to. `None`: each
    /// context is its own class.
    pub cgroup: Option<String>,
    /// `cgroup_weight=`: the class's weight, 100 to 1000 (fio's range). `None`: the default
    /// weight (the core's `DEFAULT_WEIGHT`, 100).
    pub cgroup_weight: Option<u32>,

    /// `antsched_disk_offset=`: where this job's file starts on the simulated disk. `None`:
    /// files are laid out one after another in order of first appearance.
    pub disk_offset: Option<u64>,
    /// `antsched_extent=` and `antsched_extent_gap=`: the file lies on disk in extents
    /// separated by gaps. `None`: contiguous.
    pub extents: Option<Extents>,
    /// `antsched_issue_delay=`: CPU time between a completion and the next request reaching
    /// the disk (the system call or page fault). Default 0.
    pub issue_delay_ns: u64,
    /// `antsched_split=`: requests larger than this are split into pieces the scheduler
    /// treats as one request. Default 128 KiB.
    pub split: u64,
    /// `antsched_split_flag=`: whether the file system flags the pieces of a split request
    /// so that the scheduler treats them as one (default 1, the paper's fix, section 4.2.4).
    /// With 0 each piece reaches the scheduler as a request of its own, all of them at once,
    /// as FreeBSD's 128 KB pieces of a 1 MB read did before that fix: the pattern of the
    /// paper's adversary, "several requests rapidly, followed by a long wait".
    pub split_flag: bool,
    /// `antsched_readahead=`: maximum read-ahead window where read-ahead applies
    /// ([`Job::readahead_applies`]); 0 turns it off. Default 128 KiB.
    pub readahead: u64,
    /// `antsched_context_per_file=1`: each file is read by a new, short-lived context.
    pub context_per_file: bool,
    /// `antsched_dir_files=N`: with a context per file, the files form directories of N,
    /// and before each directory's files the job's long-lived parent context (`find`) reads
    /// the directory: one [`DIR_BLOCK`] read laid out just before them. `None`: no
    /// directories.
    pub dir_files: Option<u64>,
    /// `antsched_dirty_limit=`: dirty data a buffered writer may hold before it blocks.
    /// Default 64 MiB.
    pub dirty_limit: u64,
    /// `antsched_writeback_interval=`: how often write-back flushes dirty data. Default
    /// 100 ms.
    pub writeback_interval_ns: u64,

    /// Canonical option name to the line it was (last) set on, for every option given
    /// explicitly in this job's section or a `[global]` above it.
    lines: BTreeMap<&'static str, u32>,
}

/// Default `bs`: fio's 4 KiB.
pub const DEFAULT_BS: u64 = 4096;
/// Default `antsched_split`: FreeBSD's 128 KiB `MAXPHYS`-sized pieces (paper, section 4.2.4).
pub const DEFAULT_SPLIT: u64 = 128 * 1024;
/// Default `antsched_readahead`: Linux's default `read_ahead_kb` of 128.
pub const DEFAULT_READAHEAD: u64 = 128 * 1024;
/// What `find` reads of one directory (`antsched_dir_files`): one 4 KiB file-system block,
/// ext3's block size, which holds the names of a directory of a few dozen files.
pub const DIR_BLOCK: u64 = 4096;
/// Default `antsched_dirty_limit`: 64 MiB, one to two seconds of a 2000s-era disk's
/// sequential bandwidth, so a streaming writer blocks (and pressures the scheduler with
/// write-back) within the first seconds of a run, as `dd` does once it passes Linux's dirty
/// threshold, rather than filling memory for the whole of a short simulated run.
pub const DEFAULT_DIRTY_LIMIT: u64 = 64 * 1024 * 1024;
/// Default `antsched_writeback_interval`: 100 ms. A streaming writer keeps Linux above its
/// background threshold, where write-back runs continuously rather than at its 5 s periodic
/// wake-up; flushing every 100 ms gives that steady stream of asynchronous writes with few
/// events, far below the length of any experiment.
pub const DEFAULT_WRITEBACK_INTERVAL_NS: u64 = 100_000_000;

impl Job {
    /// The line `option` (canonical name or alias, e.g. `readwrite`) was set on, in this job's
    /// section or in a `[global]` above it; `None` if it took its default.
    pub fn line_of(&self, option: &str) -> Option<u32> {
        let canonical = options::find(option).map_or(option, |spec| spec.name);
        self.lines.get(canonical).copied()
    }

    /// [`line_of`](Self::line_of), or the section header's line if the option took its
    /// default: the best line to report a problem with `option` at.
    pub fn line_or_header(&self, option: &str) -> u32 {
        self.line_of(option).unwrap_or(self.line)
    }

    /// Whether the job addresses the disk directly (`filename=/dev/...`).
    pub fn is_device(&self) -> bool {
        matches!(self.filename, FileTarget::Device(_))
    }

    /// Size of each file: `filesize`, else `size / nrfiles`. `None` for a device, or when no
    /// size was given.
    pub fn file_size(&self) -> Option<u64> {
        if self.is_device() {
            return None;
        }
        self.filesize
            .or(self.size.map(|size| size / u64::from(self.nrfiles)))
    }

    /// Bytes the job transfers per clone before it ends on its own (ignoring `number_ios` and
    /// `runtime`): `io_size`, else `size`, else `filesize * nrfiles`. `None` when the job is
    /// bounded only by `number_ios`, `runtime`, or the end of the device.
    pub fn io_bytes(&self) -> Option<u64> {
        self.io_size.or(self.size).or_else(|| {
            self.filesize
                .map(|each| each.saturating_mul(u64::from(self.nrfiles)))
        })
    }

    /// Whether the page cache's sequential read-ahead applies: buffered (`direct=0`) reads
    /// through a read/write-style synchronous engine. `mmap` faults get none (the paper's
    /// FreeBSD did no prefetch for page faults, section 4.1), nor do the asynchronous engines.
    pub fn readahead_applies(&self) -> bool {
        !self.direct && self.readahead > 0 && self.ioengine.is_read_write_call()
    }

    /// I/Os issued between two pauses: `antsched_adversary + 1` for the adversary, else
    /// `thinktime_blocks`.
    pub fn ios_per_pause(&self) -> u64 {
        match self.adversary {
            Some(rapid) => rapid.saturating_add(1),
            None => self.thinktime_blocks,
        }
    }
}

/// `rw=`: the I/O pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RwPattern {
    /// `read`: sequential reads.
    Read,
    /// `write`: sequential writes.
    Write,
    /// `randread`: random reads.
    RandRead,
    /// `randwrite`: random writes.
    RandWrite,
    /// `rw` or `readwrite`: sequential mixed reads and writes (`rwmixread` percent reads).
    ReadWrite,
    /// `randrw`: random mixed reads and writes.
    RandReadWrite,
}

impl RwPattern {
    /// Random offsets rather than sequential ones.
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwPattern::RandRead | RwPattern::RandWrite | RwPattern::RandReadWrite
        )
    }

    /// Issues reads.
    pub fn reads(self) -> bool {
        !matches!(self, RwPattern::Write | RwPattern::RandWrite)
    }

    /// Issues writes.
    pub fn writes(self) -> bool {
        !matches!(self, RwPattern::Read | RwPattern::RandRead)
    }

    /// fio's name for it.
    pub fn name(self) -> &'static str {
        match self {
            RwPattern::Read => "read",
            RwPattern::Write => "write",
            RwPattern::RandRead => "randread",
            RwPattern::RandWrite => "randwrite",
            RwPattern::ReadWrite => "rw",
            RwPattern::RandReadWrite => "randrw",
        }
    }
}

/// `ioengine=`: how the job issues I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IoEngine {
    /// `pread`/`pwrite`: synchronous. fio's default.
    Psync,
    /// `lseek` then `read`/`write`: synchronous.
    Sync,
    /// `preadv`/`pwritev`: synchronous.
    Pvsync,
    /// `preadv2`/`pwritev2`: synchronous.
    Pvsync2,
    /// The file is memory-mapped and copied: synchronous page faults, no read-ahead.
    Mmap,
    /// Linux native AIO: asynchronous, `iodepth` requests in flight. (On Linux it is only
    /// truly asynchronous with `direct=1`; buffered libaio blocks in submission.)
    Libaio,
    /// io_uring: asynchronous, `iodepth` requests in flight, direct or buffered.
    IoUring,
}

impl IoEngine {
    /// The issuer waits for each request before issuing the next, so `iodepth` is 1.
    pub fn is_synchronous(self) -> bool {
        !matches!(self, IoEngine::Libaio | IoEngine::IoUring)
    }

    /// A read/write-style system call (the engines the page cache's read-ahead serves).
    pub fn is_read_write_call(self) -> bool {
        matches!(
            self,
            IoEngine::Psync | IoEngine::Sync | IoEngine::Pvsync | IoEngine::Pvsync2
        )
    }

    /// fio's name for it.
    pub fn name(self) -> &'static str {
        match self {
            IoEngine::Psync => "psync",
            IoEngine::Sync => "sync",
            IoEngine::Pvsync => "pvsync",
            IoEngine::Pvsync2 => "pvsync2",
            IoEngine::Mmap => "mmap",
            IoEngine::Libaio => "libaio",
            IoEngine::IoUring => "io_uring",
        }
    }
}

/// `file_service_type=`: which of a job's files the next I/O goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileServiceType {
    /// Round robin over the files (fio's default).
    RoundRobin,
    /// Finish one file before moving to the next.
    Sequential,
    /// A file chosen at random.
    Random,
}

/// `antsched_thinktime_dist=`: how each think time is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThinkTimeDist {
    /// Always `thinktime` (fio's behaviour).
    Constant,
    /// Uniform on `[0, thinktime]` (the paper, section 4.2.3).
    Uniform,
}

/// `filename=`: what a job's I/O goes to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FileTarget {
    /// No `filename`: fio names a file per clone and per file number
    /// (`jobname.clone.file`); each is laid out on the disk separately.
    Generated,
    /// A regular file. Jobs and clones naming the same path share one file on the disk.
    File(String),
    /// A path under `/dev/`: the job addresses the simulated disk directly, at `offset`.
    Device(String),
}

/// `antsched_extent` / `antsched_extent_gap`: a file stored as extents of `extent` bytes with
/// `gap` bytes between them, as FFS spreads a large file across cylinder groups (the paper,
/// section 4.1: prefetch backs off at such a boundary).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Extents {
    /// Bytes per extent (positive, a multiple of 512).
    pub extent: u64,
    /// Bytes between extents (a multiple of 512).
    pub gap: u64,
}

/// A value as parsed, with the line it came from.
#[derive(Clone, Debug)]
pub(crate) struct Setting {
    pub value: Value,
    pub line: u32,
}

/// Canonical option name to its setting; what `[global]` accumulates and a job starts from.
pub(crate) type Settings = BTreeMap<&'static str, Setting>;

/// Typed reads of a job's settings. A value of the wrong variant cannot happen (the table
/// fixes the variant per option), and reads as "not set" rather than panicking.
struct View<'a>(&'a Settings);

impl View<'_> {
    fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name).map(|setting| &setting.value)
    }
    fn bytes(&self, name: &str) -> Option<u64> {
        match self.get(name) {
            Some(Value::Bytes(v)) => Some(*v),
            _ => None,
        }
    }
    fn nanos(&self, name: &str) -> Option<u64> {
        match self.get(name) {
            Some(Value::Nanos(v)) => Some(*v),
            _ => None,
        }
    }
    fn count(&self, name: &str) -> Option<u64> {
        match self.get(name) {
            Some(Value::Count(v)) => Some(*v),
            _ => None,
        }
    }
    fn boolean(&self, name: &str) -> Option<bool> {
        match self.get(name) {
            Some(Value::Bool(v)) => Some(*v),
            _ => None,
        }
    }
    fn text(&self, name: &str) -> Option<String> {
        match self.get(name) {
            Some(Value::Text(v)) => Some(v.clone()),
            _ => None,
        }
    }
}

/// Saturating `u64` to `u32` (the table bounds every count this is used on).
fn to_u32(value: u64) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// Builds the [`Job`] for section `section` (header at `line`) from its settings: defaults,
/// then the checks that need more than one option.
pub(crate) fn resolve(
    section: &str,
    line: u32,
    settings: &Settings,
    origin: &str,
    limits: &Limits,
) -> Result<Job, FioError> {
    let view = View(settings);
    let lines: BTreeMap<&'static str, u32> = settings
        .iter()
        .map(|(name, setting)| (*name, setting.line))
        .collect();
    let conflict = |option: &'static str, reason: String| {
        let at = settings.get(option).map_or(line, |setting| setting.line);
        conflict_error(origin, section, at, option, reason)
    };

    let rw = match view.get("rw") {
        Some(Value::Rw(spec)) => *spec,
        _ => RwSpec {
            pattern: RwPattern::Read,
            skip: 0,
            ios_per_offset: 1,
        },
    };
    let (file_service, file_service_ios) = match view.get("file_service_type") {
        Some(Value::FileService(kind, ios)) => (*kind, *ios),
        _ => (FileServiceType::RoundRobin, 1),
    };
    let extents =
        match (
            view.bytes("antsched_extent"),
            view.bytes("antsched_extent_gap"),
        ) {
            (Some(extent), Some(gap)) => Some(Extents { extent, gap }),
            (None, None) => None,
            (Some(_), None) => {
                return Err(conflict(
                    "antsched_extent",
                    "needs `antsched_extent_gap=` (the distance between extents on the disk, \
                 e.g. `antsched_extent_gap=1m`)"
                        .into(),
                ))
            }
            (None, Some(_)) => return Err(conflict(
                "antsched_extent_gap",
                "needs `antsched_extent=` (the size of each extent, e.g. `antsched_extent=32m`)"
                    .into(),
            )),
        };

    let job = Job {
        section: section.to_owned(),
        name: view.text("name").unwrap_or_else(|| section.to_owned()),
        line,
        description: view.text("description"),
        rw: rw.pattern,
        rw_skip: rw.skip,
        rw_ios_per_offset: rw.ios_per_offset,
        bs: view.bytes("bs").unwrap_or(DEFAULT_BS),
        size: view.bytes("size").filter(|&size| size > 0),
        offset: view.bytes("offset").unwrap_or(0),
        filename: match view.get("filename") {
            Some(Value::Target(target)) => target.clone(),
            _ => FileTarget::Generated,
        },
        nrfiles: to_u32(view.count("nrfiles").unwrap_or(1)),
        filesize: view.bytes("filesize"),
        file_service,
        file_service_ios,
        numjobs: to_u32(view.count("numjobs").unwrap_or(1)),
        ioengine: match view.get("ioengine") {
            Some(Value::Engine(engine)) => *engine,
            _ => IoEngine::Psync,
        },
        iodepth: to_u32(view.count("iodepth").unwrap_or(1)),
        direct: view.boolean("direct").unwrap_or(false),
        rwmixread: u8::try_from(view.count("rwmixread").unwrap_or(50)).unwrap_or(100),
        thinktime_ns: view.nanos("thinktime").unwrap_or(0),
        thinktime_blocks: view.count("thinktime_blocks").unwrap_or(1),
        thinktime_dist: match view.get("antsched_thinktime_dist") {
            Some(Value::ThinkDist(dist)) => *dist,
            _ => ThinkTimeDist::Constant,
        },
        adversary: view.count("antsched_adversary"),
        runtime_ns: view.nanos("runtime").filter(|&ns| ns > 0),
        time_based: view.boolean("time_based").unwrap_or(false),
        exitall: view.boolean("exitall").unwrap_or(false),
        io_size: view.bytes("io_size").filter(|&bytes| bytes > 0),
        number_ios: view.count("number_ios").filter(|&n| n > 0),
        randseed: view.count("randseed"),
        cgroup: view.text("cgroup"),
        cgroup_weight: view.count("cgroup_weight").map(to_u32),
        disk_offset: view.bytes("antsched_disk_offset"),
        extents,
        issue_delay_ns: view.nanos("antsched_issue_delay").unwrap_or(0),
        split: view.bytes("antsched_split").unwrap_or(DEFAULT_SPLIT),
        split_flag: view.boolean("antsched_split_flag").unwrap_or(true),
        readahead: view
            .bytes("antsched_readahead")
            .unwrap_or(DEFAULT_READAHEAD),
        context_per_file: view.boolean("antsched_context_per_file").unwrap_or(false),
        dir_files: view.count("antsched_dir_files"),
        dirty_limit: view
            .bytes("antsched_dirty_limit")
            .unwrap_or(DEFAULT_DIRTY_LIMIT),
        writeback_interval_ns: view
            .nanos("antsched_writeback_interval")
            .unwrap_or(DEFAULT_WRITEBACK_INTERVAL_NS),
        lines,
    };
    check(&job, origin, limits)?;
    Ok(job)
}

fn conflict_error(origin: &str, job: &str, line: u32, option: &str, reason: String) -> FioError {
    FioError::new(
        origin,
        line,
        ErrorKind::Conflict {
            job: job.to_owned(),
            option: option.to_owned(),
            reason,
        },
    )
}

/// The rules that involve more than one option of one job. Each error is reported at the line
/// of the option that has to change (or the job header when it is the job as a whole).
fn check(job: &Job, origin: &str, limits: &Limits) -> Result<(), FioError> {
    let conflict = |option: &str, reason: String| {
        conflict_error(
            origin,
            &job.section,
            job.line_or_header(option),
            option,
            reason,
        )
    };
    if job.iodepth > 1 && job.ioengine.is_synchronous() {
        return Err(conflict(
            "iodepth",
            format!(
                "is {} but ioengine={} is synchronous: it waits for each request before issuing \
                 the next, so at most one is ever in flight (fio silently runs it at depth 1). \
                 Use `ioengine=libaio` or `ioengine=io_uring` for a queue, `numjobs=` for \
                 several synchronous issuers, or `iodepth=1`",
                job.iodepth,
                job.ioengine.name()
            ),
        ));
    }
    if job.time_based && job.runtime_ns.is_none() {
        return Err(conflict(
            "time_based",
            "needs `runtime=` (how long to run, e.g. `runtime=30` for 30 s)".into(),
        ));
    }
    if job.line_of("nrfiles").is_some() && job.nrfiles > 1 && job.filename != FileTarget::Generated
    {
        return Err(conflict(
            "nrfiles",
            "cannot be used with `filename=` (fio ignores `nrfiles` when a file is named); \
             leave `filename` out so the files are generated, or use one job per file"
                .into(),
        ));
    }
    if let FileTarget::Device(path) = &job.filename {
        let placement = ["filesize", "antsched_disk_offset", "antsched_extent"];
        if let Some(option) = placement
            .into_iter()
            .find(|option| job.line_of(option).is_some())
        {
            return Err(conflict(
                option,
                format!(
                    "describes a file's size or place on the disk, but filename={path} is the \
                     disk itself; use `offset=` and `size=` to choose the region"
                ),
            ));
        }
    }
    if job.cgroup_weight.is_some() && job.cgroup.is_none() {
        return Err(conflict(
            "cgroup_weight",
            "is the weight of the job's cgroup, but the job has no `cgroup=`; add one (for \
             example `cgroup=fast`)"
                .into(),
        ));
    }
    if job.context_per_file && job.file_service != FileServiceType::Sequential {
        return Err(conflict(
            "antsched_context_per_file",
            "reads each file to its end in a new context (`find -exec cat`), which needs \
             `file_service_type=sequential` (finish one file before the next); add it"
                .into(),
        ));
    }
    if job.dir_files.is_some() && !job.context_per_file {
        return Err(conflict(
            "antsched_dir_files",
            "groups the files that `find -exec cat` reads into directories, which needs \
             `antsched_context_per_file=1` (a new context per file); add it"
                .into(),
        ));
    }
    if job.dir_files.is_some() && job.filename != FileTarget::Generated {
        return Err(conflict(
            "antsched_dir_files",
            "lays out directories between the job's generated files; leave `filename` out \
             and give `nrfiles` and `filesize`"
                .into(),
        ));
    }
    if job.adversary.is_some() {
        if job.line_of("thinktime_blocks").is_some() {
            return Err(conflict(
                "antsched_adversary",
                "sets the I/Os between pauses itself (N rapid ones, then one after the pause); \
                 remove `thinktime_blocks` (`antsched_adversary=N` is `thinktime_blocks=N+1`)"
                    .into(),
            ));
        }
        if job.thinktime_dist != ThinkTimeDist::Constant {
            return Err(conflict(
                "antsched_adversary",
                "pauses for exactly `thinktime`; remove `antsched_thinktime_dist=uniform`".into(),
            ));
        }
    }
    let has_size = job.size.is_some()
        || job.filesize.is_some()
        || (job.is_device() && (job.io_size.is_some() || job.number_ios.is_some()))
        || (job.time_based && job.runtime_ns.is_some());
    if !has_size {
        return Err(FioError::new(
            origin,
            job.line,
            ErrorKind::MissingSize {
                job: job.section.clone(),
            },
        ));
    }
    if job.offset.checked_add(job.size.unwrap_or(0)).is_none() {
        return Err(conflict(
            "offset",
            "plus `size` is beyond 2^64 bytes".into(),
        ));
    }
    // As fio ("blocksize too large for data set"): a file smaller than one block cannot be
    // read. Checked here, before a layout of `nrfiles` such files is ever allocated.
    if let Some(file_size) = job.file_size() {
        if file_size < job.bs {
            let option = if job.filesize.is_some() {
                "filesize"
            } else {
                "nrfiles"
            };
            return Err(conflict(
                option,
                format!(
                    "leaves each of the {} files {file_size} bytes, less than one block \
                     (bs={}); give fewer files, a larger size, or a smaller bs",
                    job.nrfiles, job.bs
                ),
            ));
        }
    }
    // Each piece is a request the scheduler holds and SPTF scans at every decision; a 1 GiB
    // read cut into 512-byte pieces made two million of them per read.
    let pieces = job.bs.div_ceil(job.split.max(1));
    if pieces > limits.pieces {
        return Err(conflict(
            "antsched_split",
            format!(
                "cuts each {}-byte request into {pieces} pieces, each a request the scheduler \
                 holds and scans at every decision; at most {} are allowed: make antsched_split \
                 at least {}, or raise the limit with `--limit pieces={pieces}`",
                job.bs,
                limits.pieces,
                job.bs.div_ceil(limits.pieces.max(1)).next_multiple_of(512)
            ),
        ));
    }
    // A run's cost grows with the I/Os it does: a time-based run with its runtime (how many
    // fit depends on the disk: a fast one serves a hundred thousand a second), any other with
    // its bytes over its block size. Both are bounded before the run, so that no valid job
    // file runs for hours without having asked for it.
    if let (true, Some(runtime)) = (job.time_based, job.runtime_ns) {
        if runtime > limits.runtime_ns {
            return Err(conflict(
                "runtime",
                format!(
                    "runs for {} s of the disk's time; a time-based run may last at most {} s (on \
                     a fast disk, about a hundred thousand I/Os a second to simulate): give a \
                     shorter runtime, or raise the limit with `--limit runtime={}s`",
                    runtime / 1_000_000_000,
                    limits.runtime_ns / 1_000_000_000,
                    runtime.div_ceil(1_000_000_000)
                ),
            ));
        }
    } else {
        let bytes = job.io_size.or(job.size).or(job
            .file_size()
            .map(|f| f.saturating_mul(u64::from(job.nrfiles))));
        if let Some(bytes) = bytes {
            let per_clone = bytes
                .div_ceil(job.bs.max(1))
                .min(job.number_ios.unwrap_or(u64::MAX));
            let ios = per_clone.saturating_mul(u64::from(job.numjobs));
            if ios > limits.ios {
                let option = if job.io_size.is_some() {
                    "io_size"
                } else if job.size.is_some() {
                    "size"
                } else {
                    "filesize"
                };
                return Err(conflict(
                    option,
                    format!(
                        "asks for {ios} I/Os ({bytes} bytes in {}-byte blocks, times numjobs={}); \
                         a job may do at most {} (a hundred million take a minute or two to \
                         simulate): give less, a larger bs, or raise the limit with \
                         `--limit ios={ios}`",
                        job.bs, job.numjobs, limits.ios
                    ),
                ));
            }
        }
    }
    // Write-back every nanosecond schedules a flush per nanosecond of a run that lasts
    // seconds: no run ends. Linux's own period (dirty_writeback_centisecs) has a unit of 10 ms.
    if job.writeback_interval_ns < limits.writeback_interval_ns {
        return Err(conflict(
            "antsched_writeback_interval",
            format!(
                "is {} ns, a flush of the dirty data every {} ns of the run; write-back runs at \
                 most every {} ns: give {} ns or more, or lower the limit with \
                 `--limit writeback_interval={}ns`",
                job.writeback_interval_ns,
                job.writeback_interval_ns,
                limits.writeback_interval_ns,
                limits.writeback_interval_ns,
                job.writeback_interval_ns
            ),
        ));
    }
    Ok(())
}

/// The most pieces `antsched_split` may cut one request into (by default; see [`Limits`]).
pub const MAX_PIECES: u64 = 4096;

/// The longest `runtime` of a time-based job (by default; see [`Limits`]): 1 h. On a fast
/// disk that is some 360 million I/Os to simulate, a few minutes.
pub const MAX_RUNTIME_NS: u64 = 3_600_000_000_000;

/// The most I/Os one job that is not time-based may ask for (by default; see [`Limits`]):
/// 100 million, about a minute or two to simulate.
pub const MAX_IOS: u64 = 100_000_000;

/// The shortest `antsched_writeback_interval` (by default; see [`Limits`]): 1 ms.
pub const MIN_WRITEBACK_INTERVAL_NS: u64 = 1_000_000;

/// The most files one job file may lay out (`nrfiles` times `numjobs`, over every job), by
/// default (see [`Limits`]). A million files take about 330 MB to lay out and simulate; past
/// that a job file could ask for gigabytes before its first request.
pub const MAX_FILES: u64 = 1_000_000;

/// About what one laid-out file costs to lay out and simulate, in bytes (a million take about
/// 330 MB).
const BYTES_PER_FILE: u64 = 330;

/// What one job file may cost, checked when it is parsed, before anything is allocated or run.
/// Each limit that a job passes is an error at the line of the option that has to change,
/// naming the cost and the `--limit KEY=VALUE` that would allow it; the command-line tools
/// (`antsched sim`, `antsched run`) take `--limit` to raise them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `files`: the most files laid out over the whole job file (`nrfiles` times `numjobs`).
    pub files: u64,
    /// `pieces`: the most pieces one request may be cut into (`bs` / `antsched_split`).
    pub pieces: u64,
    /// `writeback_interval`: the shortest `antsched_writeback_interval`, in nanoseconds.
    pub writeback_interval_ns: u64,
    /// `runtime`: the longest `runtime` of a time-based job, in nanoseconds.
    pub runtime_ns: u64,
    /// `ios`: the most I/Os one job (all its clones) may ask for, when it is not time-based.
    pub ios: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            files: MAX_FILES,
            pieces: MAX_PIECES,
            writeback_interval_ns: MIN_WRITEBACK_INTERVAL_NS,
            runtime_ns: MAX_RUNTIME_NS,
            ios: MAX_IOS,
        }
    }
}

impl Limits {
    /// The keys [`set`](Self::set) takes, with their defaults, for messages.
    pub const KEYS: &'static str =
        "files=N (default 1000000), pieces=N (default 4096), writeback_interval=DURATION (default 1ms), \
         runtime=DURATION (default 3600s), ios=N (default 100000000)";

    /// Sets one limit from `KEY=VALUE` (`files=2000000`, `pieces=8192`,
    /// `writeback_interval=100us`). The error says what is valid.
    pub fn set(&mut self, spec: &str) -> Result<(), String> {
        let Some((key, value)) = spec.split_once('=') else {
            return Err(format!("expected KEY=VALUE, one of {}", Self::KEYS));
        };
        let count = |v: &str| -> Result<u64, String> {
            match v.trim().parse::<u64>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(format!(
                    "`{key}` takes a whole number above 0, as in {key}=2000000; got `{v}`"
                )),
            }
        };
        match key.trim() {
            "files" => self.files = count(value)?,
            "ios" => self.ios = count(value)?,
            "runtime" => {
                let ns = antsched_core::spec::parse_duration(value)
                    .map_err(|e| format!("`runtime`: {e}"))?;
                if ns == 0 {
                    return Err("`runtime` must be above 0, as in runtime=7200s".into());
                }
                self.runtime_ns = ns;
            }
            "pieces" => self.pieces = count(value)?,
            "writeback_interval" => {
                let ns = antsched_core::spec::parse_duration(value)
                    .map_err(|e| format!("`writeback_interval`: {e}"))?;
                if ns == 0 {
                    return Err(
                        "`writeback_interval` must be above 0, as in writeback_interval=100us"
                            .into(),
                    );
                }
                self.writeback_interval_ns = ns;
            }
            other => {
                return Err(format!(
                    "unknown limit `{other}`; the limits are {}",
                    Self::KEYS
                ))
            }
        }
        Ok(())
    }
}

/// Rules across jobs: one weight per cgroup, one placement per file.
pub(crate) fn check_across(jobs: &[Job], origin: &str, limits: &Limits) -> Result<(), FioError> {
    let mut weights: BTreeMap<&str, (&Job, u32)> = BTreeMap::new();
    let mut placements: BTreeMap<&str, &Job> = BTreeMap::new();
    let mut files = 0u64;
    for job in jobs {
        files = files.saturating_add(u64::from(job.nrfiles) * u64::from(job.numjobs));
        if files > limits.files {
            let total = jobs.iter().fold(0u64, |n, j| {
                n.saturating_add(u64::from(j.nrfiles) * u64::from(j.numjobs))
            });
            return Err(FioError::new(
                origin,
                job.line_or_header("nrfiles"),
                ErrorKind::Conflict {
                    job: job.section.clone(),
                    option: "nrfiles".into(),
                    reason: format!(
                        "brings the job file to more than {} files (nrfiles times numjobs, over \
                         every job: {total} in all, about {} MB to lay out and simulate); give \
                         fewer, or raise the limit with `--limit files={total}`",
                        limits.files,
                        total.saturating_mul(BYTES_PER_FILE).div_ceil(1_000_000)
                    ),
                },
            ));
        }
        if let (Some(cgroup), Some(weight)) = (&job.cgroup, job.cgroup_weight) {
            match weights.get(cgroup.as_str()) {
                Some(&(first, first_weight)) if first_weight != weight => {
                    return Err(FioError::new(
                        origin,
                        job.line_or_header("cgroup_weight"),
                        ErrorKind::Conflict {
                            job: job.section.clone(),
                            option: "cgroup_weight".into(),
                            reason: format!(
                                "gives cgroup `{cgroup}` weight {weight}, but job `{}` gave it \
                                 {first_weight} at line {}; a cgroup has one weight",
                                first.section,
                                first.line_or_header("cgroup_weight")
                            ),
                        },
                    ))
                }
                Some(_) => {}
                None => {
                    weights.insert(cgroup, (job, weight));
                }
            }
        }
        if let FileTarget::File(path) = &job.filename {
            match placements.get(path.as_str()) {
                Some(first)
                    if first.disk_offset != job.disk_offset || first.extents != job.extents =>
                {
                    let option = if first.disk_offset != job.disk_offset {
                        "antsched_disk_offset"
                    } else {
                        "antsched_extent"
                    };
                    return Err(FioError::new(
                        origin,
                        job.line_or_header(option),
                        ErrorKind::Conflict {
                            job: job.section.clone(),
                            option: option.into(),
                            reason: format!(
                                "places file `{path}` differently from job `{}` (line {}); jobs \
                                 sharing a file must agree on `antsched_disk_offset`, \
                                 `antsched_extent` and `antsched_extent_gap`",
                                first.section, first.line
                            ),
                        },
                    ));
                }
                Some(_) => {}
                None => {
                    placements.insert(path, job);
                }
            }
        }
    }
    Ok(())
}
