//! The discrete-event loop: issuers think and issue, the scheduler decides, the device serves.
//!
//! Time is virtual nanoseconds. Events at one instant run in the order they were scheduled,
//! and the scheduler is asked what to dispatch after every event. A completion is handled, and
//! the scheduler decides, *before* the issuer that waited for it issues its next request, even
//! with zero think time: that ordering is deceptive idleness (section 2 of the paper), and the
//! reason anticipation exists. A short-lived context (`antsched_context_per_file`) likewise
//! exits in an event of its own after its last completion, never inside it: the scheduler
//! decides while the process is still alive, as the kernel's does, which is what lets the
//! Linux/CAS paper's Cooperative AS wait for its successor.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use antsched_core::{ClassId, ContextId, Nanos, Op, Request, RequestId, Scheduler};
use antsched_disk::Completion;
use antsched_workload::cache::{Dirty, ReadAhead};
use antsched_workload::fio::{IoEngine, Job, JobFile};
use antsched_workload::issuer::{AppIo, Cursor};
use antsched_workload::report::{
    AnticipationReport, ContextReport, Latency, LatencyRecorder, RunReport, SimSpeed,
};
use antsched_workload::Workload;
use rustc_hash::FxHashMap;

use crate::device::SharedDevice;
use crate::SimError;

mod replay;
pub use replay::{Loop, Records, Replay, ReplayOptions};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// An issuer may issue its next I/O.
    Issue(usize),
    /// The device finished a request of this many bytes.
    Complete(RequestId, u64),
    /// The write-back daemon wakes up.
    Flush,
    /// A short-lived context (`antsched_context_per_file`) exits.
    Exit(ContextId),
    /// A trace process's next record may be due.
    Replay(usize),
}

/// Why a disk request exists.
#[derive(Debug)]
enum Purpose {
    /// Part of an application I/O (index into the app-I/O slab).
    App(usize),
    /// Read-ahead for an issuer; application I/Os that found it in flight wait on it.
    Prefetch { issuer: usize, waiters: Vec<usize> },
    /// Write-back of an issuer's dirty data.
    Writeback {
        issuer: usize,
        bytes: u64,
        issued: Nanos,
    },
    /// A request of a replayed trace, of process `proc`.
    Trace {
        proc: usize,
        issued: Nanos,
        bytes: u64,
    },
}

#[derive(Debug)]
struct AppState {
    issuer: usize,
    bytes: u64,
    issued: Nanos,
    /// Disk requests (or write-back progress) it still waits for.
    waiting: u32,
}

/// An issuer as it runs.
struct Run {
    ctx: ContextId,
    /// The long-lived context that reads the directories of a context-per-file chain
    /// (`find` in `find -exec cat`); `None` for other jobs.
    parent: Option<ContextId>,
    class: ClassId,
    cursor: Cursor,
    ra: ReadAhead,
    dirty: Dirty,
    outstanding: u32,
    depth: u32,
    /// It will issue nothing more.
    done: bool,
    finished: bool,
    deadline: Option<Nanos>,
    /// Buffered writes waiting for dirty space.
    blocked: Vec<usize>,
    bytes: u64,
    ios: u64,
    busy: Nanos,
    latency: LatencyRecorder,
}

/// Sees every request sent to the device and when it was served.
type Observer<'a> = Box<dyn FnMut(&Request, &Completion) + 'a>;

/// One simulation run. Build with [`Simulation::new`], run with [`Simulation::run`].
pub struct Simulation<'a> {
    jobs: &'a JobFile,
    workload: &'a Workload,
    sched: Box<dyn Scheduler>,
    device: SharedDevice,
    now: Nanos,
    queue: BinaryHeap<Reverse<(Nanos, u64, Event)>>,
    seq: u64,
    /// The scheduler's timeout. Kept out of the queue: it moves or vanishes at most decisions
    /// (a wait is usually answered before it runs out), and a heap entry per wait would be
    /// pushed only to be skipped later.
    armed: Option<Nanos>,
    runs: Vec<Run>,
    /// Issuers that have not finished.
    live: usize,
    requests: FxHashMap<RequestId, (Purpose, Option<usize>)>,
    apps: Vec<Option<AppState>>,
    free_apps: Vec<usize>,
    next_request: u64,
    next_context: u32,
    writeback: Option<(ContextId, ClassId)>,
    flush_pending: bool,
    flush_interval: Nanos,
    stop: Option<Nanos>,
    /// When the last issuer finished (or an `exitall` job did), if that ended the run.
    ended: Option<Nanos>,
    pieces: Vec<(u64, u32)>,
    // Measurements.
    busy: Nanos,
    busy_until: Nanos,
    writeback_busy: Nanos,
    writeback_bytes: u64,
    disk_requests: u64,
    bytes_requested: u64,
    bytes_served: u64,
    last_completion: Nanos,
    observer: Option<Observer<'a>>,
    progress: Option<Box<dyn FnMut(f64) + 'a>>,
    events: u64,
    /// The trace being replayed, for [`Simulation::replay`].
    replay: Option<Replay<'a>>,
}

/// The job file and workload of a replay, which has neither.
static NO_JOBS: JobFile = JobFile::empty();
static NO_WORKLOAD: Workload = Workload {
    layout: antsched_workload::layout::DiskLayout { files: Vec::new() },
    issuers: Vec::new(),
    classes: Vec::new(),
};

fn buffered_write(job: &Job) -> bool {
    job.rw.writes() && (!job.direct || job.ioengine == IoEngine::Mmap)
}

impl<'a> Simulation<'a> {
    pub fn new(
        jobs: &'a JobFile,
        workload: &'a Workload,
        sched: Box<dyn Scheduler>,
        device: SharedDevice,
    ) -> Result<Self, SimError> {
        let mut sched = sched;
        for c in &workload.classes {
            if let Some(w) = c.weight {
                sched.set_class_weight(c.id, w);
            }
        }
        let mut next_context = 0;
        let mut runs = Vec::new();
        for issuer in &workload.issuers {
            let job = &jobs.jobs[issuer.job];
            let parent = job.dir_files.map(|_| {
                next_context += 1;
                ContextId(next_context - 1)
            });
            runs.push(Run {
                ctx: ContextId(next_context),
                parent,
                class: issuer.class,
                cursor: Cursor::new(job, issuer),
                ra: ReadAhead::default(),
                dirty: Dirty::default(),
                outstanding: 0,
                depth: if job.ioengine.is_synchronous() {
                    1
                } else {
                    job.iodepth.max(1)
                },
                done: false,
                finished: false,
                deadline: job.runtime_ns,
                blocked: Vec::new(),
                bytes: 0,
                ios: 0,
                busy: 0,
                latency: LatencyRecorder::new(),
            });
            next_context += 1;
        }
        let live = runs.len();
        let writers: Vec<&Job> = workload
            .issuers
            .iter()
            .map(|i| &jobs.jobs[i.job])
            .filter(|j| buffered_write(j))
            .collect();
        let writeback = (!writers.is_empty()).then(|| {
            let ctx = ContextId(next_context);
            next_context += 1;
            (ctx, ClassId(workload.classes.len() as u32))
        });
        let flush_interval = writers
            .iter()
            .map(|j| j.writeback_interval_ns)
            .min()
            .unwrap_or(0)
            .max(1);
        // The run ends at the latest runtime if every issuer has one.
        let stop = runs
            .iter()
            .map(|r| r.deadline)
            .collect::<Option<Vec<_>>>()
            .and_then(|d| d.into_iter().max());
        Ok(Self {
            jobs,
            workload,
            sched,
            device,
            now: 0,
            queue: BinaryHeap::new(),
            seq: 0,
            armed: None,
            runs,
            live,
            requests: FxHashMap::default(),
            apps: Vec::new(),
            free_apps: Vec::new(),
            next_request: 0,
            next_context,
            writeback,
            flush_pending: false,
            flush_interval,
            stop,
            ended: None,
            pieces: Vec::new(),
            busy: 0,
            busy_until: 0,
            writeback_busy: 0,
            writeback_bytes: 0,
            disk_requests: 0,
            bytes_requested: 0,
            bytes_served: 0,
            last_completion: 0,
            observer: None,
            progress: None,
            events: 0,
            replay: None,
        })
    }

    /// A simulation that replays a trace instead of running jobs: the same engine, scheduler
    /// and report, with one context per process of the trace.
    pub fn replay(
        replay: Replay<'a>,
        sched: Box<dyn Scheduler>,
        device: SharedDevice,
    ) -> Result<Self, SimError> {
        let mut sim = Self::new(&NO_JOBS, &NO_WORKLOAD, sched, device)?;
        sim.replay = Some(replay);
        sim.live = 1;
        Ok(sim)
    }

    /// Calls `f` now and then (every 16,384 events) with the share of the run done, 0 to 1:
    /// the slowest issuer's share of its work, or of its runtime when that is further along.
    /// For progress bars; the run's result does not depend on it.
    pub fn progress(mut self, f: impl FnMut(f64) + 'a) -> Self {
        self.progress = Some(Box::new(f));
        self
    }

    /// The share of the run done (see [`progress`](Self::progress)).
    fn done_share(&self) -> f64 {
        self.runs
            .iter()
            .filter(|r| !r.done)
            .map(|r| {
                let by_time = r.deadline.map(|d| self.now as f64 / d.max(1) as f64);
                [by_time, r.cursor.fraction()]
                    .into_iter()
                    .flatten()
                    .reduce(f64::max)
                    .unwrap_or(0.0)
                    .min(1.0)
            })
            .chain(self.replay.as_ref().map(|r| r.share()))
            .reduce(f64::min)
            .unwrap_or(1.0)
    }

    /// Calls `f` with every request sent to the device and when the device served it (for
    /// tests and per-request output).
    pub fn observe(mut self, f: impl FnMut(&Request, &Completion) + 'a) -> Self {
        self.observer = Some(Box::new(f));
        self
    }

    fn job(&self, issuer: usize) -> &'a Job {
        &self.jobs.jobs[self.workload.issuers[issuer].job]
    }

    fn at(&mut self, t: Nanos, e: Event) {
        self.seq += 1;
        self.queue.push(Reverse((t, self.seq, e)));
    }

    /// Runs to the end and reports.
    pub fn run(mut self) -> Result<RunReport, SimError> {
        let wall = Instant::now();
        for i in 0..self.runs.len() {
            self.at(0, Event::Issue(i));
        }
        self.replay_start();
        self.drive();
        while self.live > 0 {
            if let Some(e) = self.replay.as_mut().and_then(|r| r.error.take()) {
                return Err(e);
            }
            if self.replay.as_ref().is_some_and(|r| r.finished()) {
                // The replay is the run's one issuer; it is done when its trace is.
                self.ended = Some(self.now);
                self.live -= 1;
                break;
            }
            let next = self.queue.peek().map(|Reverse((t, _, _))| *t);
            // The timer goes before an event of the same instant: the scheduler set it at an
            // earlier decision, so it is the older of the two.
            let (t, e) = match (next, self.armed) {
                (_, Some(a)) if next.is_none_or(|t| a <= t) => {
                    self.armed = None;
                    (a, None)
                }
                _ => match self.queue.pop() {
                    Some(Reverse((t, _, e))) => (t, Some(e)),
                    None => break,
                },
            };
            if self.stop.is_some_and(|s| t > s) {
                break;
            }
            // Times are added saturating: a think time or delay that would carry the clock past
            // 2^64 ns lands exactly there, and the run ends with an error instead of wrapping
            // to an early time and reporting a result no job file asked for.
            if t == Nanos::MAX {
                return Err(SimError::TimeOverflow);
            }
            debug_assert!(t >= self.now, "time moves forward");
            self.now = t;
            self.events += 1;
            if self.events % 16_384 == 0 && self.progress.is_some() {
                let share = self.done_share();
                if let Some(f) = self.progress.as_mut() {
                    f(share);
                }
            }
            match e {
                Some(Event::Issue(i)) => self.issue(i),
                Some(Event::Complete(id, bytes)) => self.complete(id, bytes),
                Some(Event::Flush) => self.flush(),
                Some(Event::Exit(ctx)) => self.sched.context_exited(ctx, self.now),
                Some(Event::Replay(p)) => self.replay_event(p),
                None => {} // the timeout: asking the scheduler again is all it takes
            }
            self.drive();
        }
        if let Some(e) = self.replay.as_mut().and_then(|r| r.error.take()) {
            return Err(e);
        }
        Ok(self.report(wall.elapsed().as_secs_f64()))
    }

    /// Asks the scheduler for dispatches and arms its timer.
    fn drive(&mut self) {
        while let Some(r) = self.sched.poll_dispatch(self.now) {
            self.dispatch(r);
        }
        self.armed = self.sched.poll_timeout().map(|t| t.max(self.now));
    }

    fn dispatch(&mut self, r: Request) {
        let c = self.device.submit(&r, self.now);
        if let Some(f) = self.observer.as_mut() {
            f(&r, &c);
        }
        self.disk_requests += 1;
        let service = c.finish - c.start;
        if c.finish > self.busy_until {
            self.busy += c.finish - c.start.max(self.busy_until);
            self.busy_until = c.finish;
        }
        match self.requests.get(&r.id) {
            Some((_, Some(i))) => self.runs[*i].busy += service,
            Some((Purpose::Trace { proc, .. }, None)) => {
                if let Some(rp) = self.replay.as_mut() {
                    rp.procs[*proc].busy += service;
                }
            }
            _ => self.writeback_busy += service,
        }
        self.at(c.finish, Event::Complete(r.id, r.bytes()));
    }

    /// Sends one run of pieces to the scheduler; returns how many requests it made. With
    /// `flagged` every piece after the first is marked a continuation, so that the scheduler
    /// treats the run as one request (`antsched_split_flag`).
    #[allow(clippy::too_many_arguments)]
    fn send(
        &mut self,
        ctx: ContextId,
        class: ClassId,
        op: Op,
        sync: bool,
        owner: Option<usize>,
        flagged: bool,
        purpose: impl Fn(&mut Self, RequestId) -> Purpose,
    ) -> u32 {
        let pieces = std::mem::take(&mut self.pieces);
        for (k, &(sector, sectors)) in pieces.iter().enumerate() {
            self.next_request += 1;
            let id = RequestId(self.next_request);
            let p = purpose(self, id);
            self.requests.insert(id, (p, owner));
            self.bytes_requested += u64::from(sectors) * 512;
            self.sched.enqueue(
                Request {
                    id,
                    context: ctx,
                    class,
                    op,
                    sector,
                    sectors,
                    sync,
                    issued: self.now,
                    continuation: flagged && k > 0,
                },
                self.now,
            );
        }
        let n = pieces.len() as u32;
        self.pieces = pieces;
        self.pieces.clear();
        n
    }

    fn issue(&mut self, i: usize) {
        let job = self.job(i);
        if self.runs[i].deadline.is_some_and(|d| self.now >= d) {
            self.runs[i].done = true;
        }
        while !self.runs[i].done && self.runs[i].outstanding < self.runs[i].depth {
            match self.runs[i].cursor.next(job) {
                Some(io) => self.start(i, io),
                None => self.runs[i].done = true,
            }
            if job.ioengine.is_synchronous() {
                break;
            }
        }
        self.check_finished(i);
    }

    fn alloc_app(&mut self, a: AppState) -> usize {
        match self.free_apps.pop() {
            Some(k) => {
                self.apps[k] = Some(a);
                k
            }
            None => {
                self.apps.push(Some(a));
                self.apps.len() - 1
            }
        }
    }

    /// Starts application I/O `io` of issuer `i`.
    fn start(&mut self, i: usize, io: AppIo) {
        let job = self.job(i);
        let region = *self.runs[i].cursor.region(io.region);
        let workload: &'a Workload = self.workload;
        let file = workload.layout.file(region.file);
        let ctx = match self.runs[i].parent {
            Some(parent) if region.directory => parent,
            _ => self.runs[i].ctx,
        };
        let class = self.runs[i].class;
        let app = self.alloc_app(AppState {
            issuer: i,
            bytes: io.len,
            issued: self.now,
            waiting: 0,
        });
        self.runs[i].outstanding += 1;
        let sync = job.ioengine.is_synchronous();
        let end = io.offset + io.len;
        let mut waiting = 0;
        match io.op {
            // A directory block is read on its own, without read-ahead (ext3 reads a
            // directory block by block), by the parent context.
            Op::Read if job.readahead_applies() && !region.directory => {
                let plan = self.runs[i].ra.plan(
                    io.region,
                    io.offset,
                    io.len,
                    file.sector_of(io.offset),
                    file.sector_of(end - 1) + 1,
                    file.run_end(end - 1),
                    region.start + region.len,
                    job.readahead,
                );
                if let Some((s, e)) = plan.missing {
                    file.runs(s, e - s, job.split, &mut self.pieces);
                    let flagged = job.split_flag;
                    waiting += self.send(ctx, class, Op::Read, sync, Some(i), flagged, |_, _| {
                        Purpose::App(app)
                    });
                }
                for id in plan.wait_for {
                    if let Some((Purpose::Prefetch { waiters, .. }, _)) = self.requests.get_mut(&id)
                    {
                        waiters.push(app);
                        waiting += 1;
                    }
                }
                if let Some((s, e)) = plan.prefetch {
                    // One prefetch request per piece, each remembered with its file range.
                    let mut at = s;
                    while at < e {
                        let piece_end = (at + job.split).min(e);
                        file.runs(at, piece_end - at, job.split, &mut self.pieces);
                        let (ps, pe) = (at, piece_end);
                        self.send(
                            ctx,
                            class,
                            Op::Read,
                            false,
                            Some(i),
                            job.split_flag,
                            |sim, id| {
                                sim.runs[i].ra.prefetching(ps, pe, id);
                                Purpose::Prefetch {
                                    issuer: i,
                                    waiters: Vec::new(),
                                }
                            },
                        );
                        at = piece_end;
                    }
                }
            }
            Op::Write if buffered_write(job) => {
                file.runs(io.offset, io.len, u64::MAX, &mut self.pieces);
                for k in 0..self.pieces.len() {
                    let (s, n) = self.pieces[k];
                    self.runs[i].dirty.add(s, u64::from(n));
                }
                self.pieces.clear();
                if !self.flush_pending {
                    self.flush_pending = true;
                    let t = self.now.saturating_add(self.flush_interval);
                    self.at(t, Event::Flush);
                }
                if self.runs[i].dirty.held() > job.dirty_limit {
                    self.runs[i].blocked.push(app);
                    waiting += 1;
                }
            }
            op => {
                file.runs(io.offset, io.len, job.split, &mut self.pieces);
                let flagged = job.split_flag;
                waiting += self.send(ctx, class, op, sync, Some(i), flagged, |_, _| {
                    Purpose::App(app)
                });
            }
        }
        if waiting == 0 {
            self.finish_app(app);
        } else if let Some(a) = self.apps[app].as_mut() {
            a.waiting = waiting;
        }
    }

    /// One of the things application I/O `app` waits for arrived.
    fn arrived(&mut self, app: usize) {
        let Some(a) = self.apps[app].as_mut() else {
            return;
        };
        a.waiting -= 1;
        if a.waiting == 0 {
            self.finish_app(app);
        }
    }

    fn finish_app(&mut self, app: usize) {
        let Some(a) = self.apps[app].take() else {
            return;
        };
        self.free_apps.push(app);
        let i = a.issuer;
        let job = self.job(i);
        let counted = self.stop.is_none_or(|s| self.now <= s);
        let r = &mut self.runs[i];
        r.outstanding -= 1;
        if counted {
            r.bytes += a.bytes;
            r.ios += 1;
            self.last_completion = self.last_completion.max(self.now);
            let us = ((self.now - a.issued) / 1_000).max(1);
            r.latency.record(us);
        }
        let think = r.cursor.think_after_completion(job);
        let mut exits = None;
        let directory = r.cursor.region(r.cursor.current_file()).directory;
        if job.context_per_file && r.outstanding == 0 && r.cursor.file_passed() && !directory {
            // This process has read its file and exits; the next file is read by a new one.
            // It exits as a process does: once it has run again (woken by the completion, it
            // returns from its last read and its next one finds the end of the file), so
            // `antsched_issue_delay` after the completion, and always as an event of its own.
            // The scheduler decides after the completion *before* the process exits, as the
            // kernel's does: the completion interrupt runs the queue while the process is
            // still asleep. Exiting here, inside the completion, would show the scheduler a
            // dead process at the very decision anticipation is for, and no scheduler could
            // ever wait for a cooperating successor (the Linux/CAS paper's section 4).
            exits = Some(r.ctx);
            r.ctx = ContextId(self.next_context);
            r.ra = ReadAhead::default();
            self.next_context += 1;
        }
        if let Some(ctx) = exits {
            self.at(
                self.now.saturating_add(job.issue_delay_ns),
                Event::Exit(ctx),
            );
        }
        let t = self
            .now
            .saturating_add(think)
            .saturating_add(job.issue_delay_ns);
        self.at(t, Event::Issue(i));
    }

    fn check_finished(&mut self, i: usize) {
        let r = &mut self.runs[i];
        if r.done && r.outstanding == 0 && !r.finished {
            r.finished = true;
            self.sched.context_exited(r.ctx, self.now);
            if let Some(parent) = r.parent {
                self.sched.context_exited(parent, self.now);
            }
            self.live -= 1;
            if self.job(i).exitall {
                // fio's `exitall`: this job's end is the run's end.
                self.live = 0;
                self.last_completion = self.now;
            }
            if self.live == 0 {
                self.ended = Some(self.now);
            }
        }
    }

    fn complete(&mut self, id: RequestId, bytes: u64) {
        self.sched.complete(id, self.now);
        self.bytes_served += bytes;
        let Some((purpose, _)) = self.requests.remove(&id) else {
            return;
        };
        match purpose {
            Purpose::App(app) => self.arrived(app),
            Purpose::Prefetch { issuer, waiters } => {
                self.runs[issuer].ra.arrived(id);
                for w in waiters {
                    self.arrived(w);
                }
            }
            Purpose::Trace {
                proc,
                issued,
                bytes,
            } => self.replay_complete(id, proc, issued, bytes),
            Purpose::Writeback { issuer, bytes, .. } => {
                self.writeback_bytes += bytes;
                let limit = self.job(issuer).dirty_limit;
                let r = &mut self.runs[issuer];
                r.dirty.in_flight -= bytes;
                let mut wake = Vec::new();
                while r.dirty.held() <= limit {
                    match r.blocked.pop() {
                        Some(app) => wake.push(app),
                        None => break,
                    }
                }
                for app in wake {
                    self.arrived(app);
                }
            }
        }
    }

    /// The write-back daemon: writes out all dirty data, in disk order, as asynchronous writes.
    fn flush(&mut self) {
        self.flush_pending = false;
        let Some((ctx, class)) = self.writeback else {
            return;
        };
        for i in 0..self.runs.len() {
            if self.runs[i].dirty.bytes == 0 {
                continue;
            }
            let split = self.job(i).split;
            for (sector, sectors) in self.runs[i].dirty.take() {
                let mut at = 0;
                while at < sectors {
                    let n = (sectors - at).min(split / 512).max(1);
                    self.pieces.push((sector + at, n as u32));
                    let bytes = n * 512;
                    let issued = self.now;
                    self.send(ctx, class, Op::Write, false, None, true, |_, _| {
                        Purpose::Writeback {
                            issuer: i,
                            bytes,
                            issued,
                        }
                    });
                    at += n;
                }
            }
        }
        let writers_left = self
            .runs
            .iter()
            .enumerate()
            .any(|(i, r)| !r.finished && buffered_write(self.job(i)));
        if writers_left {
            self.flush_pending = true;
            let t = self.now.saturating_add(self.flush_interval);
            self.at(t, Event::Flush);
        }
    }

    /// At `end`, how long each issuer's oldest unfinished application I/O has waited, and the
    /// write-back daemon's oldest unfinished write.
    fn stalled(&self, end: Nanos) -> (Vec<Nanos>, Nanos) {
        let mut per_issuer = vec![0; self.runs.len()];
        for a in self.apps.iter().flatten() {
            let s = &mut per_issuer[a.issuer];
            *s = (*s).max(end.saturating_sub(a.issued));
        }
        let writeback = self
            .requests
            .values()
            .filter_map(|(p, _)| match p {
                Purpose::Writeback { issued, .. } => Some(end.saturating_sub(*issued)),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        (per_issuer, writeback)
    }

    fn report(self, wall_s: f64) -> RunReport {
        // The run ends at the runtime, or earlier when every issuer (or an `exitall` one) has
        // finished before it.
        let end = match self.stop {
            Some(s) if self.ended.is_none_or(|e| e >= s) => s,
            _ => self.last_completion,
        }
        .max(1);
        let secs = end as f64 / 1e9;
        let replayed = self.replay.as_ref().map_or(&[][..], |r| &r.procs[..]);
        let total_bytes: u64 = self.runs.iter().map(|r| r.bytes).sum::<u64>()
            + replayed.iter().map(|p| p.bytes()).sum::<u64>();
        let total_busy: Nanos = self.runs.iter().map(|r| r.busy).sum::<Nanos>()
            + self.writeback_busy
            + replayed.iter().map(|p| p.busy).sum::<Nanos>();
        let share = |b: Nanos| {
            if total_busy == 0 {
                0.0
            } else {
                b as f64 / total_busy as f64
            }
        };
        let mb_s = |bytes: u64| bytes as f64 / 1e6 / secs;
        let (stalled, writeback_stalled) = self.stalled(end);
        let ms = |n: Nanos| Some(n as f64 / 1e6);
        let mut contexts: Vec<ContextReport> = self
            .runs
            .iter()
            .zip(&self.workload.issuers)
            .enumerate()
            .map(|(i, (r, iss))| ContextReport {
                name: iss.name.clone(),
                class: self.workload.classes[iss.class.0 as usize].name.clone(),
                bytes: r.bytes,
                ios: r.ios,
                throughput_mb_s: mb_s(r.bytes),
                share: share(r.busy),
                byte_share: if total_bytes == 0 {
                    0.0
                } else {
                    r.bytes as f64 / total_bytes as f64
                },
                latency_ms: r.latency.summary(),
                stalled_ms: ms(stalled[i]),
            })
            .collect();
        contexts.extend(self.replay_contexts(&mb_s, &share, end));
        if self.writeback.is_some() {
            contexts.push(ContextReport {
                name: "writeback".into(),
                class: "writeback".into(),
                bytes: self.writeback_bytes,
                ios: 0,
                throughput_mb_s: mb_s(self.writeback_bytes),
                share: share(self.writeback_busy),
                byte_share: 0.0,
                latency_ms: Latency::default(),
                stalled_ms: ms(writeback_stalled),
            });
        }
        let a = self.sched.anticipation();
        let busy = self.busy.min(end);
        RunReport {
            scheduler: self.sched.name().to_string(),
            disk: self.device.name(),
            seed: 0,
            duration_s: secs,
            bytes: total_bytes,
            throughput_mb_s: mb_s(total_bytes),
            utilization: busy as f64 / end as f64,
            contexts,
            anticipation: AnticipationReport {
                waits: a.waits,
                hits: a.hits,
                timeouts: a.timeouts,
                waited_ms: a.waited as f64 / 1e6,
            },
            sim: Some(SimSpeed {
                requests: self.disk_requests,
                bytes_requested: self.bytes_requested,
                bytes_served: self.bytes_served,
                wall_s,
                requests_per_s: if wall_s > 0.0 {
                    self.disk_requests as f64 / wall_s
                } else {
                    0.0
                },
            }),
        }
    }
}
