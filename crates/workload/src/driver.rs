//! The application I/O of one issuer, turned into disk requests: one driver, sans-IO, that the
//! simulator and the real-time runner both call, as they both call `antsched-core` to schedule.
//!
//! An application `read` or `write` is not a disk request. The page cache stands between:
//! a buffered read is served from what read-ahead brought in, waits for read-ahead pieces
//! already on their way, sends the rest synchronously and queues the next window
//! asynchronously ([`ReadAhead`]); a buffered write only dirties the cache, and blocks only
//! when its writer holds more dirty data than `antsched_dirty_limit` ([`Dirty`]); a direct
//! I/O goes to the disk in pieces of at most `antsched_split` bytes. Which requests exist,
//! what each is for, which a process sleeps on and when it wakes decides what the scheduler
//! sees, and so the paper's results: it is written once, here.
//!
//! The driver keeps no time and performs no I/O. Its caller submits the [`Piece`]s it is
//! handed, tells it of each completion ([`Driver::completed`]), and is told which application
//! I/Os [`Finished`], with the think time after each and whether its process exits. The
//! simulator's engine does that on virtual time, with an event per completion and per
//! wake-up; the runner (`antsched-io`) with a thread per issuer blocking on tickets and
//! sleeping through think times. Each keeps only its own mechanics: an event queue, or threads
//! and real bytes.
//!
//! ## Contexts
//!
//! Each issuer is one process, one scheduling context, except where a job says otherwise:
//! with `antsched_context_per_file` every file is read by a short-lived process of its own
//! (`find -exec cat`), which exits once its file is read and is replaced by a new context;
//! with `antsched_dir_files` the directory blocks between the files are read by the chain's
//! long-lived parent (`find` itself), block by block and without read-ahead, as ext3 reads
//! directories. [`Drivers::new`] numbers the contexts in one way for both callers: per
//! issuer its parent (if any) then its own, then the write-back daemon's, then the
//! successors as they are made.
//!
//! ## Write-back
//!
//! Dirty data is shared between an issuer and the write-back daemon, which in the runner is
//! a thread of its own; so it lives apart, in [`WriteBack`], which the caller hands to
//! [`Driver::start`] for a buffered write and to [`Driver::unblock`] when write-back has
//! made room, and whose [`WriteBack::flush`] says what the daemon writes when it wakes.

use antsched_core::{ContextId, Nanos, Op, RequestId};

use crate::cache::{Dirty, ReadAhead};
use crate::fio::{IoEngine, Job, JobFile};
use crate::issuer::{AppIo, Cursor};
use crate::layout::{DiskLayout, FileId};
use crate::numbered::Numbered;
use crate::Workload;

/// Whether a job's writes are buffered: they dirty the page cache and reach the disk through
/// the write-back daemon (a written `mmap` is always buffered).
pub fn buffered_write(job: &Job) -> bool {
    job.rw.writes() && (!job.direct || job.ioengine == IoEngine::Mmap)
}

/// Where the number of a successor context comes from (see "Contexts" above): the simulator
/// counts in a `u32`, the runner's threads share a counter.
pub trait NextContext {
    fn next_context(&mut self) -> ContextId;
}

impl NextContext for u32 {
    fn next_context(&mut self) -> ContextId {
        *self += 1;
        ContextId(*self - 1)
    }
}

/// An application I/O the driver holds, by the number it was given in [`Started::app`].
pub type AppId = usize;

/// One disk request to submit for an issuer.
///
/// `id` is the driver's own number for it, counted per issuer; the caller gives the request
/// whatever id its scheduler or runtime uses, and hands `id` back to [`Driver::completed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub id: RequestId,
    pub op: Op,
    pub sector: u64,
    pub sectors: u32,
    /// The process sleeps on it (the anticipation heuristics watch these).
    pub sync: bool,
    /// A later piece of one larger request (`antsched_split_flag`).
    pub continuation: bool,
    pub context: ContextId,
    /// Where its bytes lie in the file, for a caller that moves real bytes.
    pub file: FileId,
    pub offset: u64,
    /// The application I/O it is part of, or `None` for read-ahead.
    pub app: Option<AppId>,
}

/// What an application I/O waits for, of those [`Driver::awaited`] names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// A request in flight (its own piece or a read-ahead piece it needs).
    Request(RequestId),
    /// Write-back, to bring its writer under the dirty limit.
    WriteBack,
}

/// What [`Driver::start`] did with an application I/O.
#[derive(Debug, PartialEq, Eq)]
pub struct Started {
    pub app: AppId,
    /// It dirtied the page cache: the write-back daemon has work.
    pub dirtied: bool,
    /// It needed nothing from the disk and is finished already.
    pub finished: Option<Finished>,
}

/// An application I/O that finished, and what its process does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Finished {
    pub app: AppId,
    pub io: AppIo,
    /// When it was started, as the caller told [`Driver::start`].
    pub issued: Nanos,
    /// The process's pause before its next I/O, per `thinktime`: it issues again
    /// `think + delay` after this completion.
    pub think: Nanos,
    /// `antsched_issue_delay`: how long the process takes to run again after a completion.
    pub delay: Nanos,
    /// The context that exits `delay` after the completion: the short-lived process of
    /// `antsched_context_per_file` that has read its file. Its successor is already the
    /// driver's context.
    pub exits: Option<ContextId>,
}

/// A request in flight, and who waits for it.
#[derive(Debug)]
enum InFlight {
    App(AppId),
    /// Read-ahead; the application I/Os that found it in flight wait on it.
    Prefetch(Vec<AppId>),
}

#[derive(Debug)]
struct App {
    io: AppIo,
    issued: Nanos,
    /// Requests (or write-back progress) it still waits for.
    waiting: u32,
}

/// The application-I/O logic of one issuer: its cursor, its read-ahead, its contexts and its
/// application I/Os in flight.
#[derive(Debug)]
pub struct Driver<'a> {
    job: &'a Job,
    layout: &'a DiskLayout,
    /// Its index among the workload's issuers (its dirty data's in [`WriteBack`]).
    issuer: usize,
    cursor: Cursor,
    ra: ReadAhead,
    context: ContextId,
    /// The long-lived context that reads the directories of a context-per-file chain
    /// (`find` in `find -exec cat`); `None` for other jobs.
    parent: Option<ContextId>,
    apps: Vec<Option<App>>,
    free_apps: Vec<AppId>,
    outstanding: u32,
    /// By request number: the driver numbers its requests in order, and they complete soon.
    in_flight: Numbered<InFlight>,
    next_id: u64,
    /// Buffered writes waiting for dirty space, the latest last.
    blocked: Vec<AppId>,
    runs: Vec<(u64, u32)>,
}

/// The drivers of a workload's issuers, and its write-back, with their contexts numbered.
pub struct Drivers<'a> {
    pub drivers: Vec<Driver<'a>>,
    /// `None` when no issuer writes buffered.
    pub writeback: Option<WriteBack>,
    /// The number of the next context to make (a successor in a context-per-file chain).
    pub next_context: u32,
}

impl<'a> Drivers<'a> {
    pub fn new(jobs: &'a JobFile, workload: &'a Workload) -> Self {
        let mut next_context = 0u32;
        let mut drivers = Vec::new();
        for (i, issuer) in workload.issuers.iter().enumerate() {
            let job = &jobs.jobs[issuer.job];
            let parent = job.dir_files.map(|_| next_context.next_context());
            drivers.push(Driver {
                job,
                layout: &workload.layout,
                issuer: i,
                cursor: Cursor::new(job, issuer),
                ra: ReadAhead::default(),
                context: next_context.next_context(),
                parent,
                apps: Vec::new(),
                free_apps: Vec::new(),
                outstanding: 0,
                in_flight: Numbered::default(),
                next_id: 0,
                blocked: Vec::new(),
                runs: Vec::new(),
            });
        }
        // Dirty data is kept per issuer (by its index), a reader's always empty.
        let of_issuer: Vec<&Job> = workload.issuers.iter().map(|i| &jobs.jobs[i.job]).collect();
        let writeback = of_issuer
            .iter()
            .any(|j| buffered_write(j))
            .then(|| WriteBack {
                context: next_context.next_context(),
                interval: of_issuer
                    .iter()
                    .filter(|j| buffered_write(j))
                    .map(|j| j.writeback_interval_ns)
                    .min()
                    .unwrap_or(0)
                    .max(1),
                dirty: of_issuer.iter().map(|_| Dirty::default()).collect(),
                limit: of_issuer.iter().map(|j| j.dirty_limit).collect(),
                split: of_issuer.iter().map(|j| j.split).collect(),
                written: 0,
            });
        Self {
            drivers,
            writeback,
            next_context,
        }
    }
}

impl<'a> Driver<'a> {
    pub fn job(&self) -> &'a Job {
        self.job
    }

    /// The context its requests go out in (but for directory reads, see [`Self::parent`]).
    pub fn context(&self) -> ContextId {
        self.context
    }

    pub fn parent(&self) -> Option<ContextId> {
        self.parent
    }

    /// How many application I/Os it keeps in flight: one for a synchronous engine, else
    /// `iodepth`.
    pub fn depth(&self) -> u32 {
        if self.job.ioengine.is_synchronous() {
            1
        } else {
            self.job.iodepth.max(1)
        }
    }

    /// Application I/Os started and not finished.
    pub fn outstanding(&self) -> u32 {
        self.outstanding
    }

    /// The share of its work issued, for progress (see [`Cursor::fraction`]).
    pub fn fraction(&self) -> Option<f64> {
        self.cursor.fraction()
    }

    /// The next application I/O, or `None` when the issuer has done all it will.
    pub fn next_io(&mut self) -> Option<AppIo> {
        self.cursor.next(self.job)
    }

    /// When the oldest unfinished application I/O was started.
    pub fn oldest(&self) -> Option<Nanos> {
        self.apps.iter().flatten().map(|a| a.issued).min()
    }

    /// The unfinished application I/O started first (of those started at one instant, the
    /// lowest number).
    pub fn oldest_app(&self) -> Option<AppId> {
        self.apps
            .iter()
            .enumerate()
            .filter_map(|(k, a)| a.as_ref().map(|a| (a.issued, k)))
            .min()
            .map(|(_, k)| k)
    }

    /// Something application I/O `app` still waits for, if it is unfinished: a caller that
    /// blocks waits for it, reports it and asks again.
    pub fn awaited(&self, app: AppId) -> Option<Wait> {
        self.apps.get(app)?.as_ref()?;
        if self.blocked.contains(&app) {
            return Some(Wait::WriteBack);
        }
        // Its own pieces before the read-ahead it found in flight, and the oldest first.
        let mut own = None;
        let mut prefetch = None;
        for (id, f) in self.in_flight.iter() {
            match f {
                InFlight::App(a) if *a == app => own = Some(own.map_or(id, |o| id.min(o))),
                InFlight::Prefetch(w) if w.contains(&app) => {
                    prefetch = Some(prefetch.map_or(id, |o| id.min(o)))
                }
                _ => {}
            }
        }
        own.or(prefetch).map(Wait::Request)
    }

    /// The application I/O request `id` is a piece of, if it is one (not read-ahead).
    pub fn app_of(&self, id: RequestId) -> Option<AppId> {
        match self.in_flight.get(id) {
            Some(InFlight::App(app)) => Some(*app),
            _ => None,
        }
    }

    fn alloc_app(&mut self, a: App) -> AppId {
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

    /// Appends to `out` one request per run in `self.runs` (file `file` from `offset`);
    /// returns how many.
    #[allow(clippy::too_many_arguments)]
    fn pieces(
        &mut self,
        op: Op,
        sync: bool,
        context: ContextId,
        file: FileId,
        mut offset: u64,
        app: Option<AppId>,
        out: &mut Vec<Piece>,
    ) -> u32 {
        let flagged = self.job.split_flag;
        for (k, &(sector, sectors)) in self.runs.iter().enumerate() {
            self.next_id += 1;
            let id = RequestId(self.next_id);
            self.in_flight.insert(
                id,
                match app {
                    Some(a) => InFlight::App(a),
                    None => InFlight::Prefetch(Vec::new()),
                },
            );
            out.push(Piece {
                id,
                op,
                sector,
                sectors,
                sync,
                continuation: flagged && k > 0,
                context,
                file,
                offset,
                app,
            });
            offset += u64::from(sectors) * 512;
        }
        let n = self.runs.len() as u32;
        self.runs.clear();
        n
    }

    /// Starts application I/O `io`, at `issued` by the caller's clock: appends the requests
    /// to submit to `out`, in the order to submit them. `writeback` is needed for a buffered
    /// write; `next_context` numbers a successor context, should the I/O finish at once and
    /// its process exit.
    pub fn start(
        &mut self,
        io: AppIo,
        issued: Nanos,
        writeback: Option<&mut WriteBack>,
        next_context: &mut dyn NextContext,
        out: &mut Vec<Piece>,
    ) -> Started {
        let job = self.job;
        let region = *self.cursor.region(io.region);
        let layout: &'a DiskLayout = self.layout;
        let file = layout.file(region.file);
        let context = match self.parent {
            Some(parent) if region.directory => parent,
            _ => self.context,
        };
        let app = self.alloc_app(App {
            io,
            issued,
            waiting: 0,
        });
        self.outstanding += 1;
        let sync = job.ioengine.is_synchronous();
        let end = io.offset + io.len;
        let mut waiting = 0;
        let mut dirtied = false;
        match io.op {
            // A directory block is read on its own, without read-ahead (ext3 reads a
            // directory block by block), by the parent context.
            Op::Read if job.readahead_applies() && !region.directory => {
                let plan = self.ra.plan(
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
                    file.runs(s, e - s, job.split, &mut self.runs);
                    waiting += self.pieces(Op::Read, sync, context, region.file, s, Some(app), out);
                }
                // The read-ahead pieces it reaches into are on their way: it sleeps on them
                // rather than asking again.
                for id in plan.wait_for {
                    if let Some(InFlight::Prefetch(waiters)) = self.in_flight.get_mut(id) {
                        waiters.push(app);
                        waiting += 1;
                    }
                }
                if let Some((s, e)) = plan.prefetch {
                    // One read-ahead request per `split` piece, each remembered with its
                    // file range: a later read waits only for the pieces it needs.
                    let mut at = s;
                    while at < e {
                        let piece_end = (at + job.split).min(e);
                        file.runs(at, piece_end - at, job.split, &mut self.runs);
                        let first = out.len();
                        self.pieces(Op::Read, false, context, region.file, at, None, out);
                        for p in &out[first..] {
                            self.ra.prefetching(at, piece_end, p.id);
                        }
                        at = piece_end;
                    }
                }
            }
            Op::Write if buffered_write(job) => {
                let wb = writeback.expect("a buffered writer has write-back");
                file.runs(io.offset, io.len, u64::MAX, &mut self.runs);
                for &(s, n) in &self.runs {
                    wb.dirty[self.issuer].add(s, u64::from(n));
                }
                self.runs.clear();
                dirtied = true;
                // balance_dirty_pages: over its limit, the writer sleeps until write-back
                // brings it under.
                if wb.over(self.issuer) {
                    self.blocked.push(app);
                    waiting += 1;
                }
            }
            op => {
                file.runs(io.offset, io.len, job.split, &mut self.runs);
                waiting += self.pieces(op, sync, context, region.file, io.offset, Some(app), out);
            }
        }
        let finished = if waiting == 0 {
            self.finish(app, next_context)
        } else {
            if let Some(a) = self.apps[app].as_mut() {
                a.waiting = waiting;
            }
            None
        };
        Started {
            app,
            dirtied,
            finished,
        }
    }

    /// Request `id` (the driver's number, from [`Piece::id`]) completed; the application I/Os
    /// that it finished are appended to `out`, in the order they finished.
    pub fn completed(
        &mut self,
        id: RequestId,
        next_context: &mut dyn NextContext,
        out: &mut Vec<Finished>,
    ) {
        match self.in_flight.remove(id) {
            Some(InFlight::App(app)) => self.arrived(app, next_context, out),
            Some(InFlight::Prefetch(waiters)) => {
                self.ra.arrived(id);
                for w in waiters {
                    self.arrived(w, next_context, out);
                }
            }
            None => {}
        }
    }

    /// Write-back made room: the buffered writes it brings under the dirty limit finish, the
    /// latest blocked first, appended to `out`.
    pub fn unblock(
        &mut self,
        writeback: &WriteBack,
        next_context: &mut dyn NextContext,
        out: &mut Vec<Finished>,
    ) {
        let mut wake = Vec::new();
        while !writeback.over(self.issuer) {
            match self.blocked.pop() {
                Some(app) => wake.push(app),
                None => break,
            }
        }
        for app in wake {
            self.arrived(app, next_context, out);
        }
    }

    /// One of the things application I/O `app` waits for arrived.
    fn arrived(&mut self, app: AppId, next_context: &mut dyn NextContext, out: &mut Vec<Finished>) {
        let Some(a) = self.apps[app].as_mut() else {
            return;
        };
        a.waiting -= 1;
        if a.waiting == 0 {
            out.extend(self.finish(app, next_context));
        }
    }

    fn finish(&mut self, app: AppId, next_context: &mut dyn NextContext) -> Option<Finished> {
        let a = self.apps[app].take()?;
        self.free_apps.push(app);
        self.outstanding -= 1;
        let job = self.job;
        let think = self.cursor.think_after_completion(job);
        let mut exits = None;
        let directory = self.cursor.region(self.cursor.current_file()).directory;
        if job.context_per_file && self.outstanding == 0 && self.cursor.file_passed() && !directory
        {
            // This process has read its file and exits; the next file is read by a new one.
            // It exits as a process does: once it has run again (woken by the completion, it
            // returns from its last read and its next one finds the end of the file), so
            // `antsched_issue_delay` after the completion, never inside it. The scheduler
            // decides after the completion *before* the process exits, as the kernel's does:
            // the completion interrupt runs the queue while the process is still asleep.
            // Exiting inside the completion would show the scheduler a dead process at the
            // very decision anticipation is for, and no scheduler could ever wait for a
            // cooperating successor (the Linux/CAS paper's section 4).
            exits = Some(self.context);
            self.context = next_context.next_context();
            self.ra = ReadAhead::default();
        }
        Some(Finished {
            app,
            io: a.io,
            issued: a.issued,
            think,
            delay: job.issue_delay_ns,
            exits,
        })
    }
}

/// One asynchronous write of the write-back daemon, of issuer `issuer`'s dirty data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flush {
    pub issuer: usize,
    pub sector: u64,
    pub sectors: u32,
}

impl Flush {
    pub fn bytes(&self) -> u64 {
        u64::from(self.sectors) * 512
    }
}

/// The dirty data of every issuer, and the write-back daemon that writes it out.
///
/// The daemon wakes every `antsched_writeback_interval` (the shortest among the writers)
/// and writes all dirty data out, in disk order, as asynchronous writes of at most
/// `antsched_split` bytes in its own context: it is nobody's process, and anticipation never
/// waits for it.
#[derive(Debug)]
pub struct WriteBack {
    context: ContextId,
    interval: Nanos,
    dirty: Vec<Dirty>,
    limit: Vec<u64>,
    split: Vec<u64>,
    written: u64,
}

impl WriteBack {
    pub fn context(&self) -> ContextId {
        self.context
    }

    /// How often the daemon wakes.
    pub fn interval(&self) -> Nanos {
        self.interval
    }

    /// Whether issuer `i` holds more dirty and in-flight data than its limit.
    pub fn over(&self, i: usize) -> bool {
        self.dirty[i].held() > self.limit[i]
    }

    /// Whether any issuer has dirty data not yet sent.
    pub fn dirty(&self) -> bool {
        self.dirty.iter().any(|d| d.bytes > 0)
    }

    /// Bytes written back so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// The daemon wakes: appends every dirty run to `out`, issuer by issuer and in disk
    /// order, cut into writes of at most the issuer's `split`.
    pub fn flush(&mut self, out: &mut Vec<Flush>) {
        for (i, d) in self.dirty.iter_mut().enumerate() {
            if d.bytes == 0 {
                continue;
            }
            let split = self.split[i];
            for (sector, sectors) in d.take() {
                let mut at = 0;
                while at < sectors {
                    let n = (sectors - at).min(split / 512).max(1);
                    out.push(Flush {
                        issuer: i,
                        sector: sector + at,
                        sectors: n as u32,
                    });
                    at += n;
                }
            }
        }
    }

    /// A write of the daemon's completed; the writer's blocked writes may now go on
    /// ([`Driver::unblock`]).
    pub fn completed(&mut self, f: &Flush) {
        self.dirty[f.issuer].in_flight -= f.bytes();
        self.written += f.bytes();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio;

    const K: u64 = 1024;

    fn workload(text: &str) -> (JobFile, Workload) {
        let jobs = fio::parse(text, "t.fio").unwrap();
        let w = crate::compile(&jobs, 1 << 30, 1).unwrap();
        (jobs, w)
    }

    #[test]
    fn a_sequential_read_prefetches_and_the_next_waits_on_it() {
        let (jobs, w) = workload("[r]\nrw=read\nbs=64k\nsize=1m\nantsched_readahead=128k\n");
        let mut d = Drivers::new(&jobs, &w);
        let d = &mut d.drivers[0];
        let mut next = 100u32;
        let (mut out, mut done) = (Vec::new(), Vec::new());
        // The first read is no pattern yet: the read alone, synchronous.
        let io = d.next_io().unwrap();
        let s = d.start(io, 0, None, &mut next, &mut out);
        assert_eq!(out.len(), 1);
        assert!(out[0].sync && out[0].app == Some(s.app));
        d.completed(out[0].id, &mut next, &mut done);
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].io, io);
        // The second is sequential: it is read, and a window is requested ahead of it.
        out.clear();
        done.clear();
        let io = d.next_io().unwrap();
        let s = d.start(io, 1, None, &mut next, &mut out);
        let (app, ahead): (Vec<&Piece>, Vec<&Piece>) = out.iter().partition(|p| p.app.is_some());
        assert_eq!(app.len(), 1);
        assert!(!ahead.is_empty() && ahead.iter().all(|p| !p.sync && p.app.is_none()));
        assert_eq!(ahead[0].offset, 128 * K);
        let ahead: Vec<RequestId> = ahead.iter().map(|p| p.id).collect();
        d.completed(app[0].id, &mut next, &mut done);
        assert_eq!(done[0].app, s.app);
        // The third reads into that window while it is in flight: nothing new to read, it
        // waits on the read-ahead, and the next window is requested at once.
        out.clear();
        done.clear();
        let io = d.next_io().unwrap();
        let s = d.start(io, 2, None, &mut next, &mut out);
        assert!(s.finished.is_none());
        assert!(
            out.iter().all(|p| p.app.is_none()),
            "only read-ahead is sent"
        );
        assert_eq!(d.awaited(s.app), Some(Wait::Request(ahead[0])));
        for id in ahead {
            d.completed(id, &mut next, &mut done);
        }
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].app, s.app);
        assert_eq!(d.awaited(s.app), None);
    }

    #[test]
    fn a_buffered_write_over_the_dirty_limit_blocks_until_write_back() {
        let (jobs, w) = workload(
            "[w]\nrw=write\nbs=64k\nsize=1m\nantsched_dirty_limit=100k\nantsched_split=64k\n",
        );
        let mut all = Drivers::new(&jobs, &w);
        let mut wb = all
            .writeback
            .take()
            .expect("a buffered writer has write-back");
        assert_eq!(wb.context(), ContextId(1));
        let d = &mut all.drivers[0];
        let mut next = 100u32;
        let (mut out, mut done, mut flush) = (Vec::new(), Vec::new(), Vec::new());
        // Under the limit the write only dirties the cache and returns at once.
        let io = d.next_io().unwrap();
        let s = d.start(io, 0, Some(&mut wb), &mut next, &mut out);
        assert!(s.dirtied && s.finished.is_some() && out.is_empty());
        // Over it, the writer sleeps.
        let io = d.next_io().unwrap();
        let s = d.start(io, 1, Some(&mut wb), &mut next, &mut out);
        assert!(s.finished.is_none() && out.is_empty());
        assert_eq!(d.awaited(s.app), Some(Wait::WriteBack));
        // The daemon writes both in disk order; the first write brings it back under.
        wb.flush(&mut flush);
        assert_eq!(flush.len(), 2);
        assert!(flush[0].sector < flush[1].sector);
        assert!(!wb.dirty());
        d.unblock(&wb, &mut next, &mut done);
        assert!(done.is_empty(), "still over while the writes are in flight");
        wb.completed(&flush[0]);
        d.unblock(&wb, &mut next, &mut done);
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].app, s.app);
        assert_eq!(wb.written(), 64 * K);
    }

    #[test]
    fn a_context_per_file_exits_after_its_file_and_a_new_one_reads_the_next() {
        let (jobs, w) = workload(
            "[cat]\nrw=read\nbs=4k\nnrfiles=2\nfilesize=8k\nfile_service_type=sequential\n\
             antsched_context_per_file=1\nthinktime=1ms\nantsched_issue_delay=50us\n",
        );
        let mut all = Drivers::new(&jobs, &w);
        let d = &mut all.drivers[0];
        let first = d.context();
        let mut next = 100u32;
        let (mut out, mut done) = (Vec::new(), Vec::new());
        let mut read = |d: &mut Driver<'_>| {
            out.clear();
            done.clear();
            let io = d.next_io().unwrap();
            d.start(io, 0, None, &mut next, &mut out);
            for p in out.clone() {
                assert_eq!(p.context, d.context());
                d.completed(p.id, &mut next, &mut done);
            }
            done.pop().unwrap()
        };
        let f = read(d);
        assert_eq!((f.think, f.delay, f.exits), (1_000_000, 50_000, None));
        // The second block ends the first file: its process exits, a new one takes over,
        // and the new one's first read is no continuation of the old one's pattern.
        let f = read(d);
        assert_eq!(f.exits, Some(first));
        assert_eq!(d.context(), ContextId(100));
        let f = read(d);
        assert_eq!(f.exits, None);
    }

    #[test]
    fn a_direct_io_is_split_and_flagged() {
        let (jobs, w) = workload(
            "[d]\nrw=read\nbs=256k\nsize=1m\ndirect=1\nantsched_split=64k\nantsched_split_flag=1\n",
        );
        let mut all = Drivers::new(&jobs, &w);
        let d = &mut all.drivers[0];
        let mut next = 100u32;
        let mut out = Vec::new();
        let io = d.next_io().unwrap();
        d.start(io, 0, None, &mut next, &mut out);
        let flags: Vec<bool> = out.iter().map(|p| p.continuation).collect();
        assert_eq!(flags, [false, true, true, true]);
        assert_eq!(out[3].offset, 192 * K);
    }
}
