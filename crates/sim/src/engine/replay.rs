//! Trace replay: an issuer kind the engine drives, one context per process of the trace.
//!
//! The trace is read as it is replayed. Records are taken from it into per-process queues
//! until [`ReplayOptions::window`] of them wait there in all; a process issues the record at
//! the front of its queue when it is due, and each record issued makes room to read another.
//! Memory is bounded by the window (and the number of processes), not by the trace's length.
//! A process whose next request lies beyond the window waits until the others drain it: they
//! can, since every buffered record belongs to a process that will issue it.
//!
//! When a record is due is [`antsched_workload::trace::timing`]'s rule, which the real-time
//! runtime's replay follows too.
//!
//! Times are made relative to the trace's first record. A process's context exits when the
//! trace has ended and its last request has completed.

use std::collections::VecDeque;

use antsched_core::{ClassId, ContextId, Nanos, Op, RequestId};
use antsched_workload::report::{ContextReport, LatencyRecorder};
use antsched_workload::trace::timing::Previous;
use antsched_workload::trace::{Format, Record, TraceError};
use rustc_hash::FxHashMap;

use super::{Event, Purpose, Simulation};
use crate::SimError;

pub use antsched_workload::trace::timing::{Loop, ReplayOptions};

/// A trace's records as the replay reads them.
pub type Records<'a> = Box<dyn Iterator<Item = Result<Record, TraceError>> + 'a>;

/// What the replay remembers of a process's previous request.
#[derive(Clone, Copy, Debug)]
struct Last {
    id: RequestId,
    timing: Previous,
}

pub(super) struct Proc {
    name: String,
    ctx: ContextId,
    class: ClassId,
    queue: VecDeque<Record>,
    outstanding: u32,
    last: Option<Last>,
    /// An `Event::Replay` for it is in the queue.
    scheduled: bool,
    exited: bool,
    pub(super) busy: Nanos,
    bytes: u64,
    ios: u64,
    latency: LatencyRecorder,
}

impl Proc {
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// A trace to replay: build with [`Replay::new`], run with [`Simulation::replay`].
pub struct Replay<'a> {
    records: Records<'a>,
    file: String,
    format: Format,
    opts: ReplayOptions,
    pub(super) procs: Vec<Proc>,
    by_stream: FxHashMap<u64, usize>,
    buffered: usize,
    t0: Option<Nanos>,
    eof: bool,
    pub(super) error: Option<SimError>,
    /// Processes that got a record into an empty queue and must be looked at.
    woken: Vec<usize>,
    fraction: Option<Box<dyn Fn() -> f64 + 'a>>,
    /// The trace's records replayed and their bytes.
    pub(super) issued: u64,
    pub(super) issued_bytes: u64,
}

impl<'a> Replay<'a> {
    /// `records` of the trace `file` (named in errors), in `format`.
    pub fn new(records: Records<'a>, file: &str, format: Format, opts: ReplayOptions) -> Self {
        Self {
            records,
            file: file.to_string(),
            format,
            opts,
            procs: Vec::new(),
            by_stream: FxHashMap::default(),
            buffered: 0,
            t0: None,
            eof: false,
            error: None,
            woken: Vec::new(),
            fraction: None,
            issued: 0,
            issued_bytes: 0,
        }
    }

    /// Tells the progress bar how far through the trace the reader is, 0 to 1 (for example
    /// the share of the file's bytes read).
    pub fn fraction(mut self, f: impl Fn() -> f64 + 'a) -> Self {
        self.fraction = Some(Box::new(f));
        self
    }

    pub(super) fn share(&self) -> f64 {
        self.fraction.as_ref().map_or(0.0, |f| f())
    }

    /// Whether every record has been replayed and completed.
    pub(super) fn finished(&self) -> bool {
        self.eof && self.buffered == 0 && self.procs.iter().all(|p| p.outstanding == 0)
    }

    /// When process `p` may issue the record at the front of its queue: `None` while it
    /// waits for its predecessor's completion.
    fn due(&self, p: usize) -> Option<Nanos> {
        let proc = &self.procs[p];
        let r = proc.queue.front()?;
        let t0 = self.t0.unwrap_or(r.time);
        self.opts.due(t0, proc.last.as_ref().map(|l| &l.timing), r)
    }

    /// Reads records until the window is full or the trace ends.
    fn pump(&mut self, next_context: &mut u32) {
        let mut ended = false;
        while !self.eof && self.buffered < self.opts.window.max(1) {
            let r = match self.records.next() {
                None => {
                    self.eof = true;
                    ended = true;
                    break;
                }
                Some(Err(e)) => {
                    self.eof = true;
                    self.error.get_or_insert(e.into());
                    break;
                }
                Some(Ok(r)) => r,
            };
            self.t0.get_or_insert(r.time);
            let key = r.stream();
            let p = match self.by_stream.get(&key) {
                Some(&p) => p,
                None => {
                    let p = self.procs.len();
                    let name = self.format.stream_name(&r);
                    self.procs.push(Proc {
                        name,
                        ctx: ContextId(*next_context),
                        class: ClassId(p as u32),
                        queue: VecDeque::new(),
                        outstanding: 0,
                        last: None,
                        scheduled: false,
                        exited: false,
                        busy: 0,
                        bytes: 0,
                        ios: 0,
                        latency: LatencyRecorder::new(),
                    });
                    *next_context += 1;
                    self.by_stream.insert(key, p);
                    p
                }
            };
            if self.procs[p].queue.is_empty() {
                self.woken.push(p);
            }
            self.procs[p].queue.push_back(r);
            self.buffered += 1;
        }
        if ended {
            // Processes with nothing left now exit; they are looked at once more.
            self.woken.extend(0..self.procs.len());
        }
    }
}

impl<'a> Simulation<'a> {
    /// Starts the replay: reads the first window of records and schedules what is due.
    pub(super) fn replay_start(&mut self) {
        let Some(rp) = self.replay.as_mut() else {
            return;
        };
        rp.pump(&mut self.next_context);
        self.replay_wake();
    }

    /// Has every process a read woke look at its records, each in an event of its own and in
    /// the order the trace woke them: a job's issuers that start at one instant issue one per
    /// event, the first one's request dispatched before the next arrives, and so do the
    /// processes of a trace whose first records share a time. (Looked at at once, in any
    /// order, they were all queued before the first decision, and SPTF, choosing among them,
    /// started two streams in another order than the job: with Aged-SPTF the phase between
    /// them, and the throughput, then differ.)
    fn replay_wake(&mut self) {
        let Some(rp) = self.replay.as_mut() else {
            return;
        };
        // Taken and given back, so that its allocation serves every wake.
        let mut woken = std::mem::take(&mut rp.woken);
        for &p in &woken {
            self.replay_look_at(p, self.now);
        }
        woken.clear();
        if let Some(rp) = self.replay.as_mut() {
            rp.woken = woken;
        }
    }

    /// Schedules process `p`'s look at its records at `t`, unless one is already scheduled.
    fn replay_look_at(&mut self, p: usize, t: Nanos) {
        let Some(rp) = self.replay.as_mut() else {
            return;
        };
        let proc = &mut rp.procs[p];
        if !proc.scheduled {
            proc.scheduled = true;
            self.at(t, Event::Replay(p));
        }
    }

    /// `Event::Replay(p)`: process `p`'s front record may be due.
    pub(super) fn replay_event(&mut self, p: usize) {
        if let Some(rp) = self.replay.as_mut() {
            rp.procs[p].scheduled = false;
        }
        self.replay_advance(p);
        self.replay_wake();
    }

    /// Issues what process `p` has due now, and schedules its next look.
    fn replay_advance(&mut self, p: usize) {
        loop {
            let Some(rp) = self.replay.as_mut() else {
                return;
            };
            if rp.error.is_some() {
                return;
            }
            let due = rp.due(p);
            let proc = &mut rp.procs[p];
            match due {
                Some(t) if t <= self.now => {}
                Some(t) => {
                    self.replay_look_at(p, t);
                    return;
                }
                None => {
                    if proc.queue.is_empty()
                        && rp.eof
                        && proc.outstanding == 0
                        && !proc.exited
                        && proc.last.is_some()
                    {
                        proc.exited = true;
                        let ctx = proc.ctx;
                        self.sched.context_exited(ctx, self.now);
                    }
                    return;
                }
            }
            let r = proc.queue.pop_front().expect("a due record");
            rp.buffered -= 1;
            self.replay_issue(p, r);
            if let Some(rp) = self.replay.as_mut() {
                rp.pump(&mut self.next_context);
            }
        }
    }

    /// Sends record `r` of process `p` to the scheduler.
    fn replay_issue(&mut self, p: usize, r: Record) {
        let Some(rp) = self.replay.as_mut() else {
            return;
        };
        let (sector, sectors) = match rp.opts.place(&r, self.device.capacity_sectors(), &rp.file) {
            Ok(place) => place,
            Err(e) => {
                rp.error = Some(e.into());
                return;
            }
        };
        rp.issued += 1;
        rp.issued_bytes += r.bytes;
        let proc = &mut rp.procs[p];
        proc.outstanding += 1;
        let (ctx, class) = (proc.ctx, proc.class);
        self.next_request += 1;
        let id = RequestId(self.next_request);
        proc.last = Some(Last {
            id,
            timing: Previous {
                trace_issue: r.time,
                trace_done: r.completed,
                issued: self.now,
                done: None,
            },
        });
        self.requests.insert(
            id,
            (
                Purpose::Trace {
                    proc: p,
                    issued: self.now,
                    bytes: r.bytes,
                },
                None,
            ),
        );
        self.bytes_requested += sectors * 512;
        self.sched.enqueue(
            antsched_core::Request {
                id,
                context: ctx,
                class,
                op: r.op,
                sector,
                sectors: sectors as u32,
                sync: r.sync || r.op == Op::Read,
                issued: self.now,
                continuation: false,
            },
            self.now,
        );
    }

    /// A replayed request completed.
    pub(super) fn replay_complete(&mut self, id: RequestId, p: usize, issued: Nanos, bytes: u64) {
        let now = self.now;
        let Some(rp) = self.replay.as_mut() else {
            return;
        };
        let proc = &mut rp.procs[p];
        proc.outstanding -= 1;
        proc.bytes += bytes;
        proc.ios += 1;
        proc.latency.record(((now - issued) / 1_000).max(1));
        if let Some(l) = proc.last.as_mut().filter(|l| l.id == id) {
            l.timing.done = Some(now);
        }
        self.last_completion = self.last_completion.max(now);
        // A next record due at once is issued in an event of its own, after the scheduler has
        // decided on this completion: with a think time of 0 (a trace whose issue times equal
        // the completions before them) it would otherwise be queued before the decision, and
        // the replay would never show the deceptive idleness that the same workload run as a
        // job shows (the engine's rule, at the top of engine.rs). A later one is scheduled
        // for its time, as before.
        if rp.due(p).is_some_and(|t| t <= now) {
            self.replay_look_at(p, now);
        } else {
            self.replay_advance(p);
            self.replay_wake();
        }
    }

    /// The replay's contexts for the report, with `mb_s` and `share` of the run.
    pub(super) fn replay_contexts(
        &self,
        mb_s: &dyn Fn(u64) -> f64,
        share: &dyn Fn(Nanos) -> f64,
        end: Nanos,
    ) -> Vec<ContextReport> {
        let Some(rp) = self.replay.as_ref() else {
            return Vec::new();
        };
        let mut stalled = vec![0; rp.procs.len()];
        for (p, _) in self.requests.values() {
            if let Purpose::Trace { proc, issued, .. } = p {
                stalled[*proc] = stalled[*proc].max(end.saturating_sub(*issued));
            }
        }
        let total: u64 = rp.procs.iter().map(|p| p.bytes).sum();
        rp.procs
            .iter()
            .zip(stalled)
            .map(|(p, stalled)| ContextReport {
                name: p.name.clone(),
                class: p.name.clone(),
                bytes: p.bytes,
                ios: p.ios,
                throughput_mb_s: mb_s(p.bytes),
                share: share(p.busy),
                byte_share: if total == 0 {
                    0.0
                } else {
                    p.bytes as f64 / total as f64
                },
                latency_ms: p.latency.summary(),
                stalled_ms: Some(stalled as f64 / 1e6),
            })
            .collect()
    }
}
