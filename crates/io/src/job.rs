//! `antsched run`: a fio job file in real time on an emulated disk.
//!
//! The workload is `antsched-workload`'s, as the simulator's is: [`antsched_workload::compile`]
//! places the job file's files on the disk and makes one issuer per job clone with its class
//! and seed, and each issuer's [`Driver`] turns its application I/O into requests (read-ahead
//! and the reads that wait on it, directory blocks read by the parent context, dirty data and
//! the write-back daemon's [`WriteBack`], a context per file that exits) exactly as the
//! simulator's engine has it turned. What differs from the simulator is only who keeps time:
//! here each issuer is a real thread that submits the driver's requests to a [`Runtime`]
//! with real bytes and blocks on their tickets, and thinks by sleeping (`clock_nanosleep` to
//! shortly before the end, then spinning: think times of a few hundred microseconds decide
//! whether anticipation pays, and a plain sleep overshoots by tens).
//!
//! The files live in a directory as ordinary files, created with deterministic content
//! ([`content`]) and reused when they already hold it; the emulated disk's [`Store`] maps each
//! file's sectors (where the layout put them on the modelled disk) to the file. Every byte
//! read is checked against the content it should have; writes write that same content, so
//! the files stay checkable.
//!
//! Like the simulator's engine, a completion is handled by the scheduler before the issuer
//! that waited for it can issue again (the loop completes, then the thread wakes): the
//! deceptive idleness the paper is about happens here for real.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Condvar, Mutex};

use antsched_core::{ClassId, ContextId, Nanos, Op, RequestId};
use antsched_disk::DeviceModel;
use antsched_workload::driver::{
    AppId, Driver, Drivers, Finished, NextContext, Piece, Wait, WriteBack,
};
use antsched_workload::fio::{FileTarget, JobFile};
use antsched_workload::issuer::AppIo;
use antsched_workload::layout::FileLayout;
use antsched_workload::report::{ContextReport, Latency, LatencyRecorder, RunReport};
use antsched_workload::Workload;
use hdrhistogram::Histogram;
use serde::Serialize;

use crate::backend::{Backend, Extent, Store};
use crate::buf::IoBuf;
use crate::clock::tighten_timer_slack;
use crate::content;
use crate::error::{IoError, SetupError};
use crate::runtime::{Ctx, Options, Runtime, Stats};
use crate::ticket::Ticket;

/// How a real-time run runs.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Seed of every random choice, as in `antsched sim --seed`.
    pub seed: u64,
    /// Think by sleeping until this long before the end of the think time, then spin.
    pub think_spin: Nanos,
    /// The event loop spins instead of sleeping for deadlines closer than this.
    pub loop_spin: Nanos,
    /// Run the event loop and the issuers in the real-time class (`SCHED_FIFO`), if allowed:
    /// on a machine busy with other work, ordinary threads wake milliseconds late.
    pub realtime: bool,
    /// Ask the kernel to read the job's files into its page cache before the run, as far as
    /// memory allows (the page cache, never locked): a backing read that goes to the real disk can be slower
    /// than the emulated one. Nothing is locked; resident memory does not grow with the files.
    pub warm_files: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            seed: 1,
            think_spin: 300_000,
            loop_spin: 200_000,
            realtime: true,
            warm_files: true,
        }
    }
}

/// Percentiles in microseconds.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct Percentiles {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub samples: u64,
}

impl Percentiles {
    pub(crate) fn of_ns(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        Self {
            p50: h.value_at_quantile(0.5) as f64 / 1e3,
            p99: h.value_at_quantile(0.99) as f64 / 1e3,
            max: h.max() as f64 / 1e3,
            samples: h.len(),
        }
    }
}

/// What the check of the data read back found.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Verification {
    /// Requests whose data was compared with the file's content.
    pub reads_checked: u64,
    pub bytes_checked: u64,
    /// Reads whose checksum differed from the expected content's.
    pub mismatches: u64,
    /// Where the first mismatch was, if any (`file@offset`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_mismatch: Option<String>,
    /// XOR of the checksums of every piece read: the same data read gives the same value.
    pub checksum: String,
    /// Requests that failed with an I/O error (none expected).
    pub io_errors: u64,
}

/// One real-time run: the simulator's report, plus what only real time has.
#[derive(Clone, Debug, Serialize)]
pub struct RealRun {
    #[serde(flatten)]
    pub report: RunReport,
    /// How late the event loop woke for its deadlines (anticipation timeouts, emulated
    /// completions), in microseconds.
    pub timer_overshoot_us: Percentiles,
    /// How late issuers woke from their think times, in microseconds.
    pub think_overshoot_us: Percentiles,
    /// How long synchronous issuers took to issue their next request once it was due (the
    /// previous one completed and the think time passed), in microseconds. The simulator's
    /// issuers take no time; a long response here lets the other issuers' requests be served
    /// in between, and the run then departs from the simulation.
    pub response_us: Percentiles,
    /// Emulated completions that came late because the real I/O was slower than the model.
    pub late_completions: u64,
    pub verify: Verification,
}

/// Asks the kernel to read the job's files into its page cache before a run, up to half the
/// memory available (to the machine, and to this process's cgroup if it has a limit).
///
/// The emulated disk completes a request when the model says, but only once its bytes have
/// really moved; a backing read that misses the page cache can take longer than the model's
/// whole service time, and the request then completes late (counted in `late_completions`).
/// Warming the files makes backing reads memory copies where memory allows, without holding
/// the pages: nothing is mapped or locked, so the cache stays the kernel's to reclaim, the
/// process's resident memory is what is in flight (each request's buffer, the issuers'
/// scratch), and files larger than memory (two 2 GB files in a 3 GB cgroup) run, their
/// cold reads reported as late completions instead of the process being killed. Returns the
/// bytes advised.
fn warm(files: &[File], sizes: &[u64]) -> u64 {
    use std::os::fd::AsRawFd;
    let mut budget = available_memory().map_or(0, |m| m / 2);
    let mut advised = 0;
    for (f, &size) in files.iter().zip(sizes) {
        let len = size.min(budget);
        if len == 0 {
            continue;
        }
        let Ok(len_off) = libc::off_t::try_from(len) else {
            continue;
        };
        // SAFETY: an advice on an open descriptor; it reads nothing into our memory.
        if unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, len_off, libc::POSIX_FADV_WILLNEED) } == 0
        {
            budget -= len;
            advised += len;
        }
    }
    advised
}

/// The memory this process could still use, in bytes: the machine's `MemAvailable`, and at
/// most what its cgroup's limit leaves (cgroup v2 `memory.max` or v1
/// `memory.limit_in_bytes`, less current use). `None` if `/proc/meminfo` cannot be read.
fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let mut avail = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())?
        .saturating_mul(1024);
    if let Some(left) = cgroup_memory_left() {
        avail = avail.min(left);
    }
    Some(avail)
}

/// What the cgroup's memory limit leaves this process, if it has one.
fn cgroup_memory_left() -> Option<u64> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let read = |p: &str| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (max, current) = if id == "0" && controllers.is_empty() {
            let dir = format!("/sys/fs/cgroup{path}");
            (
                read(&format!("{dir}/memory.max")),
                read(&format!("{dir}/memory.current")),
            )
        } else if controllers.split(',').any(|c| c == "memory") {
            let dir = format!("/sys/fs/cgroup/memory{path}");
            (
                read(&format!("{dir}/memory.limit_in_bytes")),
                read(&format!("{dir}/memory.usage_in_bytes")),
            )
        } else {
            continue;
        };
        // "max" (v2) does not parse, and v1 reports no limit as a number near 2^63.
        if let Some(max) = max.filter(|&m| m < 1 << 60) {
            return Some(max.saturating_sub(current.unwrap_or(0)));
        }
    }
    None
}

/// Why a run could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error(transparent)]
    Sim(#[from] antsched_sim::SimError),
    #[error(transparent)]
    Fio(#[from] antsched_workload::fio::FioError),
    #[error("{path}: {message}")]
    File { path: String, message: String },
}

/// Caps every job's `runtime` at `cap` (gives one to jobs without): a shortened run of the
/// same workload, for real time. Apply it to the job file both `antsched sim` and
/// `antsched run` get, so that they compare the same thing.
pub fn cap_runtime(jobs: &mut JobFile, cap: Nanos) {
    for j in &mut jobs.jobs {
        j.runtime_ns = Some(j.runtime_ns.map_or(cap, |r| r.min(cap)));
    }
}

/// The files of a workload, created in a directory, and the emulated disk's view of them.
pub struct Prepared {
    pub workload: Workload,
    pub paths: Vec<PathBuf>,
    seeds: Vec<u64>,
    extents: Vec<Extent>,
    /// Files created (or rewritten) because they were missing or held other content.
    pub created: Vec<PathBuf>,
}

fn file_name_in(dir: &Path, name: &str) -> PathBuf {
    // A job's filename is a name in DIR; path separators would escape it.
    dir.join(name.replace('/', "_"))
}

/// Whether `f` (of `size` bytes) holds the content seeded `seed`: its first and last sectors
/// and 62 in between are checked.
fn holds_content(f: &mut File, size: u64, seed: u64) -> bool {
    let sectors = size / 512;
    let mut got = vec![0u8; 512];
    let mut want = vec![0u8; 512];
    for k in 0..64u64 {
        let s = if sectors <= 1 {
            0
        } else {
            k * (sectors - 1) / 63
        };
        if f.seek(SeekFrom::Start(s * 512)).is_err() || f.read_exact(&mut got).is_err() {
            return false;
        }
        content::fill(seed, s * 512, &mut want);
        if got != want {
            return false;
        }
    }
    true
}

fn write_content(f: &mut File, size: u64, seed: u64) -> std::io::Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    let mut at = 0;
    while at < size {
        let n = (size - at).min(buf.len() as u64) as usize;
        content::fill(seed, at, &mut buf[..n]);
        f.write_all(&buf[..n])?;
        at += n as u64;
    }
    f.flush()
}

/// Places the job file's files on `model` (as the simulator does) and makes sure each exists
/// in `dir` with its content.
pub fn prepare(
    jobs: &JobFile,
    model: &dyn DeviceModel,
    dir: &Path,
    seed: u64,
) -> Result<Prepared, RunError> {
    for job in &jobs.jobs {
        if let FileTarget::Device(path) = &job.filename {
            return Err(jobs
                .error_at(
                    job,
                    "filename",
                    format!("{path} addresses the whole emulated disk, which antsched run keeps as files in the directory: give the job a file name instead"),
                )
                .into());
        }
    }
    let workload = antsched_workload::compile(jobs, model.capacity_sectors(), seed)?;
    std::fs::create_dir_all(dir).map_err(|e| RunError::File {
        path: dir.display().to_string(),
        message: format!("cannot create the directory: {e}"),
    })?;
    let mut paths = Vec::new();
    let mut seeds = Vec::new();
    let mut extents = Vec::new();
    let mut created = Vec::new();
    for (i, f) in workload.layout.files.iter().enumerate() {
        let path = file_name_in(dir, &f.name);
        let seed = content::seed_of(&f.name);
        let err = |e: std::io::Error| RunError::File {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        let (mut file, len) = match File::open(&path) {
            Ok(f) => {
                let len = f.metadata().map_err(err)?.len();
                (Some(f), len)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, 0),
            Err(e) => return Err(err(e)),
        };
        let whole = match file.as_mut() {
            Some(file) => len == f.size && holds_content(file, f.size, seed),
            None => false,
        };
        if !whole {
            // Written under a temporary name and renamed: an interrupted run leaves no file
            // that looks whole but is not.
            drop(file);
            let tmp = path.with_extension("antsched-tmp");
            // Synced before the run: gigabytes of dirty pages being written back would compete
            // with the run for the cores and the page cache.
            let result = File::create(&tmp).and_then(|mut t| {
                write_content(&mut t, f.size, seed)?;
                t.sync_all()?;
                std::fs::rename(&tmp, &path)
            });
            if let Err(e) = result {
                let _ = std::fs::remove_file(&tmp);
                return Err(err(e));
            }
            created.push(path.clone());
        }
        let mut runs = Vec::new();
        f.runs(0, f.size, u64::MAX, &mut runs);
        let mut offset = 0;
        for (sector, sectors) in runs {
            extents.push(Extent {
                sector,
                sectors: u64::from(sectors),
                file: i,
                offset,
            });
            offset += u64::from(sectors) * 512;
        }
        paths.push(path);
        seeds.push(seed);
    }
    Ok(Prepared {
        workload,
        paths,
        seeds,
        extents,
        created,
    })
}

/// The file offset of device sector `sector` in `f` (the inverse of `sector_of`).
fn file_offset_of(f: &FileLayout, sector: u64) -> u64 {
    let rel = (sector - f.start) * 512;
    match f.extents {
        None => rel,
        Some(e) => rel / (e.extent + e.gap) * e.extent + rel % (e.extent + e.gap),
    }
}

struct Shared<'a> {
    rt: &'a Runtime,
    prep: &'a Prepared,
    opts: &'a RunOptions,
    /// Issuers that are not `time_based` without a runtime and have not finished.
    live: AtomicU32,
    /// Set when `live` reaches 0: endless issuers stop.
    over: AtomicBool,
    /// The number of the next context made (numbered as the simulator numbers them).
    next_context: AtomicU32,
    writeback: Option<Writeback>,
    /// Issuers that have submitted their first request (or ended without one); they begin
    /// in order (see [`Issuer::wait_turn`]).
    first_sent: AtomicU32,
}

/// The write-back daemon's context, the dirty data it shares with the writers, and the
/// condition blocked writers sleep on.
struct Writeback {
    ctx: Ctx,
    state: Mutex<WbState>,
    cv: Condvar,
}

struct WbState {
    wb: WriteBack,
    /// Every issuer has finished: the daemon writes what is left and stops.
    done: bool,
}

/// What one issuer did.
struct IssuerResult {
    bytes: u64,
    ios: u64,
    latency: LatencyRecorder,
    contexts: Vec<ContextId>,
    verify: Verification,
    checksum: u64,
    think_overshoot: Histogram<u64>,
    /// From when a synchronous issuer's next request was due (its previous one completed,
    /// plus its think time) to when it issued it.
    response: Histogram<u64>,
    last_completion: Nanos,
}

/// The runner's [`NextContext`]: the counter its threads share, and the contexts an issuer
/// has had (for its share of the disk's time).
struct Successors<'c> {
    next: &'c AtomicU32,
    made: Vec<ContextId>,
}

impl NextContext for Successors<'_> {
    fn next_context(&mut self) -> ContextId {
        let c = ContextId(self.next.fetch_add(1, Ordering::SeqCst));
        self.made.push(c);
        c
    }
}

/// A request in flight: its driver's number, its file and file offset, and its ticket.
type InFlight = (RequestId, usize, u64, Op, Ticket);

/// One issuer's thread: its [`Driver`] says what to submit and what to wait for; the thread
/// submits, blocks on tickets and sleeps through think times.
struct Issuer<'s, 'a> {
    sh: &'s Shared<'a>,
    i: usize,
    driver: Driver<'a>,
    class: ClassId,
    successors: Successors<'s>,
    stop: Option<Nanos>,
    res: IssuerResult,
    scratch: Vec<u8>,
    pieces: Vec<Piece>,
    tickets: Vec<InFlight>,
    /// When each application I/O's own requests completed, by [`AppId`], as far as seen.
    seen: Vec<Nanos>,
    /// Application I/Os finished and not yet counted, with when.
    finished: Vec<(Finished, Nanos)>,
    /// Whether it has begun ([`Issuer::begin`], counted in `Shared::first_sent`).
    begun: bool,
}

impl<'s, 'a> Issuer<'s, 'a> {
    fn check(
        &mut self,
        file: usize,
        offset: u64,
        r: Result<crate::ticket::Done, IoError>,
    ) -> Nanos {
        match r {
            Ok(d) => {
                let seed = self.sh.prep.seeds[file];
                self.res.verify.reads_checked += 1;
                self.res.verify.bytes_checked += d.buf.len() as u64;
                match content::verify(seed, offset, &d.buf, &mut self.scratch) {
                    Ok(sum) => self.res.checksum ^= sum,
                    Err(at) => {
                        self.res.verify.mismatches += 1;
                        if self.res.verify.first_mismatch.is_none() {
                            self.res.verify.first_mismatch =
                                Some(format!("{}@{at}", self.sh.prep.paths[file].display()));
                        }
                    }
                }
                d.completed_at
            }
            Err(_) => {
                self.res.verify.io_errors += 1;
                self.sh.rt.clock().now()
            }
        }
    }

    fn write_done(&mut self, r: Result<crate::ticket::Done, IoError>) -> Nanos {
        match r {
            Ok(d) => d.completed_at,
            Err(_) => {
                self.res.verify.io_errors += 1;
                self.sh.rt.clock().now()
            }
        }
    }

    /// Waits for in-flight request `k` (checking a read's bytes) and tells the driver.
    fn reap(&mut self, k: usize) {
        let (id, file, off, op, t) = self.tickets.swap_remove(k);
        let r = t.wait();
        let at = if op == Op::Read {
            self.check(file, off, r)
        } else {
            self.write_done(r)
        };
        if let Some(app) = self.driver.app_of(id) {
            self.seen[app] = self.seen[app].max(at);
        }
        let mut done = Vec::new();
        self.driver.completed(id, &mut self.successors, &mut done);
        let seen = &self.seen;
        self.finished
            .extend(done.into_iter().map(|f| (f, seen[f.app].max(at))));
    }

    /// Handles the requests that have completed (read-ahead that arrived while the issuer
    /// thought), without blocking: the driver then knows they are in.
    fn reap_done(&mut self) {
        let mut k = 0;
        while k < self.tickets.len() {
            if self.tickets[k].4.is_done() {
                self.reap(k);
            } else {
                k += 1;
            }
        }
    }

    /// Blocks for one of the things application I/O `app` waits for, as its driver names it.
    fn wait_for(&mut self, app: AppId) {
        match self.driver.awaited(app) {
            Some(Wait::Request(id)) => {
                let k = self
                    .tickets
                    .iter()
                    .position(|t| t.0 == id)
                    .expect("what the driver waits for was submitted");
                self.reap(k);
            }
            Some(Wait::WriteBack) => {
                let wb = self
                    .sh
                    .writeback
                    .as_ref()
                    .expect("buffered writers have write-back");
                let mut st = wb.state.lock().unwrap_or_else(|e| e.into_inner());
                while st.wb.over(self.i) {
                    st = wb.cv.wait(st).unwrap_or_else(|e| e.into_inner());
                }
                let mut done = Vec::new();
                self.driver.unblock(&st.wb, &mut self.successors, &mut done);
                drop(st);
                let now = self.sh.rt.clock().now();
                self.finished.extend(done.into_iter().map(|f| (f, now)));
            }
            None => {}
        }
    }

    /// Waits, before an issuer's first application I/O, until every issuer before it has
    /// submitted its first (or ended).
    ///
    /// The simulator starts its issuers at time 0 in order: the first request reaches the
    /// idle device at once and the others queue behind it. Real threads start whenever the
    /// operating system runs them, and one that ran late would let another reader be served
    /// first, or a request ahead for the whole run: for two alternating sequential readers, a
    /// different rotational phase at every switch between their files, up to 40% faster or
    /// slower than simulated. The wait has no time bound: a bound is what a loaded machine
    /// exceeds (a thread scheduled 25 ms late turned the order round and the run 41% faster
    /// than simulated), and none is needed, since every issuer begins ([`Issuer::begin`])
    /// without waiting on those after it.
    fn wait_turn(&self) {
        if self.begun {
            return;
        }
        while (self.sh.first_sent.load(Ordering::SeqCst) as usize) < self.i {
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
    }

    /// Lets the next issuer begin: this one has submitted all that its first application I/O
    /// submits at once (a read, its read-ahead, the first `iodepth` I/Os), or needed no
    /// request, or ended.
    fn begin(&mut self) {
        if !self.begun {
            self.begun = true;
            // Submitted is not enough: the next issuer's first request could reach the loop in
            // the same look as this one's, and the scheduler would choose between them where
            // the simulator dispatched this one alone (one real run in twelve settled in the
            // other order's phase that way).
            self.sh.rt.wait_taken();
            self.sh.first_sent.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Starts application I/O `io`: submits what the driver says, with real bytes.
    fn start(&mut self, io: AppIo, issued: Nanos) {
        self.wait_turn();
        self.reap_done();
        let sh = self.sh;
        let mut guard = match (&sh.writeback, io.op) {
            (Some(wb), Op::Write) => Some(wb.state.lock().unwrap_or_else(|e| e.into_inner())),
            _ => None,
        };
        let started = self.driver.start(
            io,
            issued,
            guard.as_mut().map(|st| &mut st.wb),
            &mut self.successors,
            &mut self.pieces,
        );
        drop(guard);
        if self.seen.len() <= started.app {
            self.seen.resize(started.app + 1, 0);
        }
        self.seen[started.app] = issued;
        for p in self.pieces.drain(..) {
            let mut buf = IoBuf::zeroed(p.sectors as usize * 512);
            if p.op == Op::Write {
                content::fill(sh.prep.seeds[p.file.0], p.offset, &mut buf);
            }
            let ctx = Ctx {
                context: p.context,
                class: self.class,
            };
            let t = sh
                .rt
                .submit(ctx, p.op, p.sector, buf, p.sync, p.continuation);
            self.tickets.push((p.id, p.file.0, p.offset, p.op, t));
        }
        if let Some(f) = started.finished {
            self.finished.push((f, sh.rt.clock().now()));
        }
    }

    fn record(&mut self, issued: Nanos, completed: Nanos, bytes: u64) {
        if self.stop.is_none_or(|s| completed <= s) {
            self.res.bytes += bytes;
            self.res.ios += 1;
            self.res.last_completion = self.res.last_completion.max(completed);
            let us = (completed.saturating_sub(issued) / 1_000).max(1);
            self.res.latency.record(us);
        }
    }

    /// After an application I/O finished at `from`: the exit of its process, if it was the
    /// last of a context per file (`delay` after the completion, as in the simulator), and
    /// the think time; returns when the next request is due.
    fn think(&mut self, from: Nanos, f: &Finished) -> Nanos {
        let clock = self.sh.rt.clock();
        if let Some(ctx) = f.exits {
            clock.sleep_until(from + f.delay, self.sh.opts.think_spin);
            self.sh.rt.context_exited(ctx);
        }
        let pause = f.think + f.delay;
        if pause == 0 {
            return from;
        }
        let deadline = from + pause;
        clock.sleep_until(deadline, self.sh.opts.think_spin);
        let late = clock.now().saturating_sub(deadline);
        let _ = self.res.think_overshoot.record(late.max(1));
        deadline
    }

    /// Keeps `depth` application I/Os in flight (one for a synchronous engine), each started
    /// when the one before it in its slot finished and its process thought.
    fn run(mut self, endless: bool) -> IssuerResult {
        tighten_timer_slack();
        if self.sh.opts.realtime {
            // Refusal (no privilege) only costs punctuality; the run reports the overshoot.
            let _ = crate::clock::set_realtime(1);
        }
        let clock = self.sh.rt.clock();
        let depth = self.driver.depth();
        let mut exhausted = false;
        let mut due = None;
        loop {
            while !exhausted && self.driver.outstanding() < depth && !self.over(endless) {
                let Some(io) = self.driver.next_io() else {
                    exhausted = true;
                    break;
                };
                let issued = clock.now();
                if let (1, Some(due)) = (depth, due) {
                    // The simulator's issuer answers at once; this one needs a wake-up.
                    let _ = self.res.response.record(issued.saturating_sub(due).max(1));
                }
                self.start(io, issued);
                if depth == 1 {
                    break;
                }
            }
            self.begin();
            if self.finished.is_empty() {
                match self.driver.oldest_app() {
                    Some(app) => self.wait_for(app),
                    None => break,
                }
            }
            for (f, at) in std::mem::take(&mut self.finished) {
                self.record(f.issued, at, f.io.len);
                due = Some(self.think(at, &f));
            }
        }
        // Read-ahead still in flight is waited for (and checked), not abandoned.
        while !self.tickets.is_empty() {
            self.reap(self.tickets.len() - 1);
        }
        self.sh.rt.context_exited(self.driver.context());
        if let Some(parent) = self.driver.parent() {
            self.sh.rt.context_exited(parent);
        }
        self.begin();
        self.res.contexts = self.successors.made;
        self.res
    }

    fn over(&self, endless: bool) -> bool {
        let now = self.sh.rt.clock().now();
        self.stop.is_some_and(|s| now >= s) || (endless && self.sh.over.load(Ordering::SeqCst))
    }
}

/// The write-back daemon: every `interval`, writes out what [`WriteBack::flush`] says, as
/// asynchronous writes with the files' content, and wakes writers that were over their
/// dirty limit.
fn writeback_daemon(sh: &Shared<'_>, interval: Nanos) {
    tighten_timer_slack();
    let Some(wb) = sh.writeback.as_ref() else {
        return;
    };
    let clock = sh.rt.clock();
    let layout = &sh.prep.workload.layout;
    let mut next = clock.now() + interval;
    let mut flushes = Vec::new();
    loop {
        clock.sleep_until(next, 0);
        next += interval;
        let done = {
            let mut st = wb.state.lock().unwrap_or_else(|e| e.into_inner());
            st.wb.flush(&mut flushes);
            st.done
        };
        let mut tickets = Vec::new();
        for f in flushes.drain(..) {
            let mut buf = IoBuf::zeroed(f.bytes() as usize);
            if let Some((fi, file)) = layout
                .files
                .iter()
                .enumerate()
                .find(|(_, l)| l.start <= f.sector && f.sector < l.start + l.span_sectors())
            {
                content::fill(sh.prep.seeds[fi], file_offset_of(file, f.sector), &mut buf);
            }
            let t = sh.rt.submit(wb.ctx, Op::Write, f.sector, buf, false, false);
            tickets.push((f, t));
        }
        for (f, t) in tickets {
            let _ = t.wait();
            let mut st = wb.state.lock().unwrap_or_else(|e| e.into_inner());
            st.wb.completed(&f);
            wb.cv.notify_all();
        }
        if done {
            let st = wb.state.lock().unwrap_or_else(|e| e.into_inner());
            if !st.wb.dirty() {
                break;
            }
        }
    }
}

/// Runs the prepared workload under the scheduler `spec` on the emulated disk `model`, in
/// real time.
pub fn run(
    jobs: &JobFile,
    prep: &Prepared,
    model: Box<dyn DeviceModel>,
    spec: &str,
    opts: &RunOptions,
) -> Result<RealRun, RunError> {
    let files = prep
        .paths
        .iter()
        .map(|p| {
            File::options()
                .read(true)
                .write(true)
                .open(p)
                .map_err(|e| RunError::File {
                    path: p.display().to_string(),
                    message: e.to_string(),
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if opts.warm_files {
        let sizes: Vec<u64> = prep.workload.layout.files.iter().map(|f| f.size).collect();
        warm(&files, &sizes);
    }
    let store = Store::extents(files, prep.extents.clone())?;
    let (rt, disk) = start_emulated(model, store, spec, opts.seed, opts.loop_spin, opts.realtime)?;
    let w = &prep.workload;
    for c in &w.classes {
        if let Some(w) = c.weight {
            rt.set_class_weight(c.id, w);
        }
    }
    let Drivers {
        drivers,
        writeback,
        next_context,
    } = Drivers::new(jobs, w);
    let flush_interval = writeback.as_ref().map_or(1, WriteBack::interval);
    let writeback = writeback.map(|wb| Writeback {
        ctx: Ctx {
            context: wb.context(),
            class: ClassId(w.classes.len() as u32),
        },
        state: Mutex::new(WbState { wb, done: false }),
        cv: Condvar::new(),
    });
    let endless: Vec<bool> = w
        .issuers
        .iter()
        .map(|i| {
            let j = &jobs.jobs[i.job];
            j.time_based && j.runtime_ns.is_none()
        })
        .collect();
    let live = endless.iter().filter(|e| !**e).count() as u32;
    if live == 0 && !endless.is_empty() {
        let job = &jobs.jobs[w.issuers[0].job];
        return Err(jobs
            .error_at(job, "time_based", "every job is time_based without a runtime, so the run would never end: add runtime= (or --runtime)")
            .into());
    }
    let start = rt.clock().now();
    let deadlines: Vec<Option<Nanos>> = w
        .issuers
        .iter()
        .map(|i| jobs.jobs[i.job].runtime_ns.map(|r| start + r))
        .collect();
    let stop = deadlines
        .iter()
        .copied()
        .collect::<Option<Vec<_>>>()
        .and_then(|d| d.into_iter().max());
    let sh = Shared {
        rt: &rt,
        prep,
        opts,
        live: AtomicU32::new(live),
        over: AtomicBool::new(false),
        next_context: AtomicU32::new(next_context),
        writeback,
        first_sent: AtomicU32::new(0),
    };
    let results: Vec<IssuerResult> = std::thread::scope(|s| {
        let wb = sh
            .writeback
            .is_some()
            .then(|| s.spawn(|| writeback_daemon(&sh, flush_interval)));
        let handles: Vec<_> = drivers
            .into_iter()
            .zip(&w.issuers)
            .enumerate()
            .map(|(i, (driver, iss))| {
                let successors = Successors {
                    next: &sh.next_context,
                    made: std::iter::once(driver.context())
                        .chain(driver.parent())
                        .collect(),
                };
                let issuer = Issuer {
                    sh: &sh,
                    i,
                    driver,
                    class: iss.class,
                    successors,
                    stop: deadlines[i],
                    res: IssuerResult {
                        bytes: 0,
                        ios: 0,
                        latency: LatencyRecorder::new(),
                        contexts: Vec::new(),
                        verify: Verification::default(),
                        checksum: 0,
                        think_overshoot: Histogram::new_with_bounds(1, 60_000_000_000, 3)
                            .expect("valid bounds"),
                        response: Histogram::new_with_bounds(1, 60_000_000_000, 3)
                            .expect("valid bounds"),
                        last_completion: 0,
                    },
                    scratch: Vec::new(),
                    pieces: Vec::new(),
                    tickets: Vec::new(),
                    seen: Vec::new(),
                    finished: Vec::new(),
                    begun: false,
                };
                let e = endless[i];
                let sh = &sh;
                s.spawn(move || {
                    let r = issuer.run(e);
                    if !e && sh.live.fetch_sub(1, Ordering::SeqCst) == 1 {
                        sh.over.store(true, Ordering::SeqCst);
                    }
                    r
                })
            })
            .collect();
        let results: Vec<IssuerResult> = handles
            .into_iter()
            .map(|h| h.join().expect("an issuer thread panicked"))
            .collect();
        if let Some(wbh) = wb {
            if let Some(w) = &sh.writeback {
                w.state.lock().unwrap_or_else(|e| e.into_inner()).done = true;
                w.cv.notify_all();
            }
            wbh.join().expect("the write-back thread panicked");
        }
        results
    });
    let writeback_bytes = sh.writeback.as_ref().map(|w| {
        let st = w.state.lock().unwrap_or_else(|e| e.into_inner());
        (w.ctx.context, st.wb.written())
    });
    let stats = rt.shutdown();
    Ok(report(
        w,
        &disk,
        opts.seed,
        start,
        stop,
        &results,
        writeback_bytes,
        &stats,
    ))
}

/// Starts the runtime of an emulated disk as `antsched run` does: `model` times the requests
/// over `store`, scheduler `spec` is built with the model's exact estimator and `seed`, and the
/// event loop spins for deadlines closer than `loop_spin` and, with `realtime`, runs in
/// `SCHED_FIFO` above the threads that issue, so that a completion is handled before its
/// issuer runs again. Returns the runtime and the disk's name.
pub(crate) fn start_emulated(
    model: Box<dyn DeviceModel>,
    store: Store,
    spec: &str,
    seed: u64,
    loop_spin: Nanos,
    realtime: bool,
) -> Result<(Runtime, String), RunError> {
    let backend = Backend::emulated(model, store);
    let env = backend.build_env(seed);
    let sched = antsched_core::build(spec, &env).map_err(SetupError::from)?;
    let disk = backend.name().to_string();
    let rt = Runtime::start(
        backend,
        sched,
        Options {
            spin: loop_spin,
            realtime_priority: realtime.then_some(2),
            ..Options::default()
        },
    )?;
    Ok((rt, disk))
}

/// A real run's measured window, from `start` to `stop` (or to the last completion, when the
/// run ended before its limit), and the device's busy time in it: what the report of a job and
/// of a trace replay are made from.
pub(crate) struct Window<'a> {
    start: Nanos,
    end: Nanos,
    stats: &'a Stats,
    total_busy: Nanos,
}

impl<'a> Window<'a> {
    pub(crate) fn new(start: Nanos, stop: Option<Nanos>, last: Nanos, stats: &'a Stats) -> Self {
        Window {
            start,
            end: stop.unwrap_or(last).max(start + 1),
            stats,
            total_busy: stats.busy_by_context.iter().map(|(_, b)| *b).sum(),
        }
    }

    /// The window's length in seconds.
    fn secs(&self) -> f64 {
        (self.end - self.start) as f64 / 1e9
    }

    /// `bytes` over the window, in MB/s.
    pub(crate) fn mb_s(&self, bytes: u64) -> f64 {
        bytes as f64 / 1e6 / self.secs()
    }

    /// The share of the device's busy time that `contexts` took.
    pub(crate) fn share(&self, contexts: &[ContextId]) -> f64 {
        let busy: Nanos = self
            .stats
            .busy_by_context
            .iter()
            .filter(|(c, _)| contexts.contains(c))
            .map(|(_, b)| *b)
            .sum();
        fraction(busy, self.total_busy)
    }

    /// The run's report: `bytes` moved by its `contexts` under the device's scheduler.
    pub(crate) fn report(
        &self,
        disk: String,
        seed: u64,
        bytes: u64,
        contexts: Vec<ContextReport>,
    ) -> RunReport {
        let span = self.end - self.start;
        RunReport {
            scheduler: self.stats.scheduler.clone(),
            disk,
            seed,
            duration_s: self.secs(),
            bytes,
            throughput_mb_s: self.mb_s(bytes),
            // The device's busy time within the measured window.
            utilization: self.stats.busy.min(span) as f64 / span as f64,
            contexts,
            anticipation: self.stats.anticipation.into(),
            sim: None,
        }
    }
}

/// `x` as a fraction of `of` (0 when `of` is).
pub(crate) fn fraction(x: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        x as f64 / of as f64
    }
}

#[allow(clippy::too_many_arguments)]
fn report(
    w: &Workload,
    disk: &str,
    seed: u64,
    start: Nanos,
    stop: Option<Nanos>,
    results: &[IssuerResult],
    writeback_bytes: Option<(ContextId, u64)>,
    stats: &Stats,
) -> RealRun {
    let last = results
        .iter()
        .map(|r| r.last_completion)
        .max()
        .unwrap_or(start);
    let window = Window::new(start, stop, last, stats);
    let total_bytes: u64 = results.iter().map(|r| r.bytes).sum();
    let mut contexts: Vec<ContextReport> = results
        .iter()
        .zip(&w.issuers)
        .map(|(r, iss)| ContextReport {
            name: iss.name.clone(),
            class: w.classes[iss.class.0 as usize].name.clone(),
            bytes: r.bytes,
            ios: r.ios,
            throughput_mb_s: window.mb_s(r.bytes),
            share: window.share(&r.contexts),
            byte_share: fraction(r.bytes, total_bytes),
            latency_ms: r.latency.summary(),
            stalled_ms: None,
        })
        .collect();
    if let Some((wb_ctx, b)) = writeback_bytes {
        contexts.push(ContextReport {
            name: "writeback".into(),
            class: "writeback".into(),
            bytes: b,
            ios: 0,
            throughput_mb_s: window.mb_s(b),
            share: window.share(&[wb_ctx]),
            byte_share: 0.0,
            latency_ms: Latency::default(),
            stalled_ms: None,
        });
    }
    let mut verify = Verification::default();
    let mut checksum = 0u64;
    let mut think = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds");
    let mut response = think.clone();
    for r in results {
        verify.reads_checked += r.verify.reads_checked;
        verify.bytes_checked += r.verify.bytes_checked;
        verify.mismatches += r.verify.mismatches;
        verify.io_errors += r.verify.io_errors;
        if verify.first_mismatch.is_none() {
            verify.first_mismatch = r.verify.first_mismatch.clone();
        }
        checksum ^= r.checksum;
        let _ = think.add(&r.think_overshoot);
        let _ = response.add(&r.response);
    }
    verify.checksum = format!("{checksum:016x}");
    RealRun {
        report: window.report(disk.to_string(), seed, total_bytes, contexts),
        timer_overshoot_us: Percentiles::of_ns(&stats.timer_overshoot),
        think_overshoot_us: Percentiles::of_ns(&think),
        response_us: Percentiles::of_ns(&response),
        late_completions: stats.late_completions,
        verify,
    }
}
