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
use antsched_workload::driver::{
    buffered_write, Driver, Drivers, Finished, Flush, Piece, WriteBack,
};
use antsched_workload::fio::{Job, JobFile};
use antsched_workload::issuer::AppIo;
use antsched_workload::numbered::Numbered;
use antsched_workload::report::{ContextReport, Latency, LatencyRecorder, RunReport, SimSpeed};
use antsched_workload::Workload;

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
    /// An issuer's request (an application I/O's piece or read-ahead): `id` is its driver's
    /// number for it.
    Issuer { issuer: usize, id: RequestId },
    /// Write-back of an issuer's dirty data.
    Writeback { flush: Flush, issued: Nanos },
    /// A request of a replayed trace, of process `proc`.
    Trace {
        proc: usize,
        issued: Nanos,
        bytes: u64,
    },
}

/// An issuer as it runs: its driver (what it asks of the disk) and the engine's view of it.
struct Run<'a> {
    driver: Driver<'a>,
    class: ClassId,
    /// It will issue nothing more.
    done: bool,
    finished: bool,
    deadline: Option<Nanos>,
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
    runs: Vec<Run<'a>>,
    /// Issuers that have not finished.
    live: usize,
    /// What each request sent is for and whose it is, by number: numbered in order, and most
    /// complete soon.
    requests: Numbered<(Purpose, Option<usize>)>,
    next_request: u64,
    next_context: u32,
    writeback: Option<WriteBack>,
    /// The write-back daemon's class: one of its own, after the workload's.
    writeback_class: ClassId,
    flush_pending: bool,
    flush_interval: Nanos,
    stop: Option<Nanos>,
    /// When the last issuer finished (or an `exitall` job did), if that ended the run.
    ended: Option<Nanos>,
    // Scratch for the drivers' answers.
    pieces: Vec<Piece>,
    finished: Vec<Finished>,
    flushes: Vec<Flush>,
    // Measurements.
    busy: Nanos,
    busy_until: Nanos,
    writeback_busy: Nanos,
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
        let Drivers {
            drivers,
            writeback,
            next_context,
        } = Drivers::new(jobs, workload);
        let runs: Vec<Run<'a>> = drivers
            .into_iter()
            .zip(&workload.issuers)
            .map(|(driver, issuer)| Run {
                driver,
                class: issuer.class,
                done: false,
                finished: false,
                deadline: jobs.jobs[issuer.job].runtime_ns,
                bytes: 0,
                ios: 0,
                busy: 0,
                latency: LatencyRecorder::new(),
            })
            .collect();
        let live = runs.len();
        let flush_interval = writeback.as_ref().map_or(1, WriteBack::interval);
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
            requests: Numbered::default(),
            next_request: 0,
            next_context,
            writeback,
            writeback_class: ClassId(workload.classes.len() as u32),
            flush_pending: false,
            flush_interval,
            stop,
            ended: None,
            pieces: Vec::new(),
            finished: Vec::new(),
            flushes: Vec::new(),
            busy: 0,
            busy_until: 0,
            writeback_busy: 0,
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
                [by_time, r.driver.fraction()]
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
        match self.requests.get(r.id) {
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

    /// Sends a request to the scheduler, remembering what it is for and whose it is.
    #[allow(clippy::too_many_arguments)]
    fn send(
        &mut self,
        context: ContextId,
        class: ClassId,
        op: Op,
        (sector, sectors): (u64, u32),
        sync: bool,
        continuation: bool,
        purpose: Purpose,
        owner: Option<usize>,
    ) {
        self.next_request += 1;
        let id = RequestId(self.next_request);
        self.requests.insert(id, (purpose, owner));
        self.bytes_requested += u64::from(sectors) * 512;
        self.sched.enqueue(
            Request {
                id,
                context,
                class,
                op,
                sector,
                sectors,
                sync,
                issued: self.now,
                continuation,
            },
            self.now,
        );
    }

    fn issue(&mut self, i: usize) {
        if self.runs[i].deadline.is_some_and(|d| self.now >= d) {
            self.runs[i].done = true;
        }
        while !self.runs[i].done && self.runs[i].driver.outstanding() < self.runs[i].driver.depth()
        {
            match self.runs[i].driver.next_io() {
                Some(io) => self.start(i, io),
                None => self.runs[i].done = true,
            }
            if self.runs[i].driver.job().ioengine.is_synchronous() {
                break;
            }
        }
        self.check_finished(i);
    }

    /// Starts application I/O `io` of issuer `i`: its driver says what to send.
    fn start(&mut self, i: usize, io: AppIo) {
        let mut pieces = std::mem::take(&mut self.pieces);
        let run = &mut self.runs[i];
        let started = run.driver.start(
            io,
            self.now,
            self.writeback.as_mut(),
            &mut self.next_context,
            &mut pieces,
        );
        let class = run.class;
        for p in pieces.drain(..) {
            let purpose = Purpose::Issuer {
                issuer: i,
                id: p.id,
            };
            let at = (p.sector, p.sectors);
            self.send(
                p.context,
                class,
                p.op,
                at,
                p.sync,
                p.continuation,
                purpose,
                Some(i),
            );
        }
        self.pieces = pieces;
        if started.dirtied && !self.flush_pending {
            self.flush_pending = true;
            let t = self.now.saturating_add(self.flush_interval);
            self.at(t, Event::Flush);
        }
        if let Some(f) = started.finished {
            self.finish_app(i, f);
        }
    }

    /// The engine's part of a finished application I/O: counted, and the issuer's next I/O
    /// (and its old context's exit) put on the clock.
    fn finish_app(&mut self, i: usize, f: Finished) {
        let counted = self.stop.is_none_or(|s| self.now <= s);
        let r = &mut self.runs[i];
        if counted {
            r.bytes += f.io.len;
            r.ios += 1;
            self.last_completion = self.last_completion.max(self.now);
            let us = ((self.now - f.issued) / 1_000).max(1);
            r.latency.record(us);
        }
        // The process runs again `delay` after the completion, and only then can it exit: an
        // event of its own, after the scheduler has decided on the completion.
        if let Some(ctx) = f.exits {
            self.at(self.now.saturating_add(f.delay), Event::Exit(ctx));
        }
        let t = self.now.saturating_add(f.think).saturating_add(f.delay);
        self.at(t, Event::Issue(i));
    }

    fn check_finished(&mut self, i: usize) {
        let r = &mut self.runs[i];
        if r.done && r.driver.outstanding() == 0 && !r.finished {
            r.finished = true;
            self.sched.context_exited(r.driver.context(), self.now);
            if let Some(parent) = r.driver.parent() {
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
        let Some((purpose, _)) = self.requests.remove(id) else {
            return;
        };
        let mut done = std::mem::take(&mut self.finished);
        let issuer = match purpose {
            Purpose::Issuer { issuer, id } => {
                let driver = &mut self.runs[issuer].driver;
                driver.completed(id, &mut self.next_context, &mut done);
                issuer
            }
            Purpose::Writeback { flush, .. } => {
                if let Some(wb) = self.writeback.as_mut() {
                    wb.completed(&flush);
                    let driver = &mut self.runs[flush.issuer].driver;
                    driver.unblock(wb, &mut self.next_context, &mut done);
                }
                flush.issuer
            }
            Purpose::Trace {
                proc,
                issued,
                bytes,
            } => {
                self.finished = done;
                return self.replay_complete(id, proc, issued, bytes);
            }
        };
        for f in done.drain(..) {
            self.finish_app(issuer, f);
        }
        self.finished = done;
    }

    /// The write-back daemon wakes: it sends what [`WriteBack::flush`] says, as
    /// asynchronous writes in its own context and class.
    fn flush(&mut self) {
        self.flush_pending = false;
        let Some(wb) = self.writeback.as_mut() else {
            return;
        };
        let ctx = wb.context();
        let mut flushes = std::mem::take(&mut self.flushes);
        wb.flush(&mut flushes);
        for flush in flushes.drain(..) {
            let purpose = Purpose::Writeback {
                flush,
                issued: self.now,
            };
            let at = (flush.sector, flush.sectors);
            let class = self.writeback_class;
            self.send(ctx, class, Op::Write, at, false, false, purpose, None);
        }
        self.flushes = flushes;
        let writers_left = self
            .runs
            .iter()
            .any(|r| !r.finished && buffered_write(r.driver.job()));
        if writers_left {
            self.flush_pending = true;
            let t = self.now.saturating_add(self.flush_interval);
            self.at(t, Event::Flush);
        }
    }

    /// At `end`, how long each issuer's oldest unfinished application I/O has waited, and the
    /// write-back daemon's oldest unfinished write.
    fn stalled(&self, end: Nanos) -> (Vec<Nanos>, Nanos) {
        let per_issuer = self
            .runs
            .iter()
            .map(|r| r.driver.oldest().map_or(0, |t| end.saturating_sub(t)))
            .collect();
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
        if let Some(wb) = &self.writeback {
            contexts.push(ContextReport {
                name: "writeback".into(),
                class: "writeback".into(),
                bytes: wb.written(),
                ios: 0,
                throughput_mb_s: mb_s(wb.written()),
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
            anticipation: a.into(),
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
