//! `antsched run --trace`: a block trace replayed in real time on an emulated disk.
//!
//! The simulator replays a trace on virtual time (`antsched sim --trace`); this is the same
//! replay with real threads and real waits, so that what the scheduler does with a recorded
//! workload can be seen on the real clock, beside the simulation of it. Both follow one rule
//! for when a record is issued ([`antsched_workload::trace::timing`]: open or closed loop,
//! requests a process had in flight together kept together) and make one context per process
//! of the trace (a pid, or the stream the format implies), named alike.
//!
//! The main thread reads the trace as it is replayed and hands each record to its process's
//! thread through a bounded channel (a trace of any length in bounded memory). Each process's
//! thread sleeps until its next record is due (`clock_nanosleep` to shortly before, then a
//! spin, as the job runner's issuers think), submits it and, in closed loop, blocks on its
//! previous request's ticket when the rule waits for that completion. The emulated disk stores
//! nothing ([`Store::discard`]): a trace says where and how much, not what; its timing is the
//! model's, as in the simulator.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::sync::Mutex;

use antsched_core::{ContextId, Nanos, Op};
use antsched_disk::DeviceModel;
use antsched_sim::SimError;
use antsched_workload::report::{ContextReport, LatencyRecorder};
use antsched_workload::trace::timing::{Previous, ReplayOptions};
use antsched_workload::trace::{Format, Record, TraceError};
use hdrhistogram::Histogram;
use rustc_hash::FxHashMap;

use crate::backend::Store;
use crate::buf::IoBuf;
use crate::clock::{set_realtime, tighten_timer_slack, Clock};
use crate::error::IoError;
use crate::job::{
    fraction, start_emulated, Percentiles, RealRun, RunError, RunOptions, Verification, Window,
};
use crate::runtime::{Ctx, Runtime};
use crate::ticket::Ticket;

/// Records a process's channel holds ahead of its thread. A bounded channel's slots are
/// allocated up front, and a `perf` trace of `find -exec cat` has a process per file.
const AHEAD: usize = 256;

/// Requests a process's thread lets pile up in flight before it first looks for completed ones.
const REAP_FIRST: usize = 64;

/// A process's thread needs little stack: it sleeps, submits and waits.
const STACK: usize = 256 * 1024;

/// How a trace is replayed in real time.
#[derive(Clone, Debug, Default)]
pub struct TraceRunOptions {
    pub replay: ReplayOptions,
    /// Stop issuing this long after the start (the run is then measured up to it).
    pub runtime: Option<Nanos>,
    /// What a job's run takes too: the scheduler's seed, how each process's thread waits for
    /// its next record (`think_spin`), the event loop's spin and the real-time class
    /// (`warm_files` has nothing to warm: the emulated disk stores nothing).
    pub run: RunOptions,
}

/// What one process's thread did.
struct Played {
    bytes: u64,
    ios: u64,
    latency: LatencyRecorder,
    last_completion: Nanos,
    io_errors: u64,
}

/// A request in flight: its ticket, when it was issued, and its bytes.
type InFlight = (Ticket, Nanos, u64);

/// A record handed to its process's thread.
struct Job {
    record: Record,
    /// Where it lies on the emulated disk ([`ReplayOptions::place`]).
    sector: u64,
    sectors: u64,
}

/// Replays `records` (read from `file`, in `format`) under scheduler `spec` on an emulated
/// disk of `model`, in real time.
pub fn replay(
    records: impl Iterator<Item = Result<Record, TraceError>>,
    file: &str,
    format: Format,
    model: Box<dyn DeviceModel>,
    spec: &str,
    opts: &TraceRunOptions,
) -> Result<RealRun, RunError> {
    let (rt, disk) = start_emulated(
        model,
        Store::discard(),
        spec,
        opts.run.seed,
        opts.run.loop_spin,
        opts.run.realtime,
    )?;
    let capacity = rt.capacity_sectors();
    let clock = rt.clock();
    let start = clock.now();
    let stop = opts.runtime.map(|r| start + r);
    let over = AtomicBool::new(false);
    // How late the processes issued their records (after their due times), in ns: one
    // histogram for all (a histogram of this range is a few hundred kilobytes, and a trace
    // may have thousands of processes).
    let late =
        Mutex::new(Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds"));
    let mut names: Vec<String> = Vec::new();
    let mut error: Option<RunError> = None;
    let played: Vec<Played> = std::thread::scope(|s| {
        let mut procs: Vec<SyncSender<Job>> = Vec::new();
        let mut handles = Vec::new();
        let mut by_stream: FxHashMap<u64, usize> = FxHashMap::default();
        let mut t0 = None;
        // At the time limit, what the scheduler still holds is abandoned: an open loop on a
        // disk slower than the trace holds a backlog that would take minutes to serve. Told
        // by the channel's end that every process finished before.
        let (finished, until_stop) = std::sync::mpsc::channel::<()>();
        if let Some(stop) = stop {
            let rt = &rt;
            s.spawn(move || {
                let left = std::time::Duration::from_nanos(stop.saturating_sub(clock.now()));
                if let Err(RecvTimeoutError::Timeout) = until_stop.recv_timeout(left) {
                    rt.abandon();
                }
            });
        }
        for r in records {
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    error = Some(SimError::from(e).into());
                    break;
                }
            };
            if over.load(Ordering::Relaxed) || stop.is_some_and(|s| clock.now() >= s) {
                break;
            }
            let (sector, sectors) = match opts.replay.place(&r, capacity, file) {
                Ok(place) => place,
                Err(e) => {
                    error = Some(SimError::from(e).into());
                    break;
                }
            };
            let t0 = *t0.get_or_insert(r.time);
            let p = *by_stream.entry(r.stream()).or_insert_with(|| {
                let p = procs.len();
                let (tx, rx) = sync_channel(AHEAD);
                procs.push(tx);
                names.push(format.stream_name(&r));
                let ctx = Ctx::new(p as u32 + 1, p as u32);
                let (rt, over, late) = (&rt, &over, &late);
                let thread = std::thread::Builder::new()
                    .name(format!("antsched-replay-{p}"))
                    .stack_size(STACK)
                    .spawn_scoped(s, move || {
                        play(rt, ctx, rx, t0, start, stop, over, late, opts)
                    });
                handles.push(thread);
                p
            });
            // A thread that stopped (the runtime cap) no longer receives; the others go on.
            let _ = procs[p].send(Job {
                record: r,
                sector,
                sectors,
            });
        }
        if error.is_some() {
            over.store(true, Ordering::Relaxed);
        }
        drop(procs);
        let mut played = Vec::new();
        for h in handles {
            match h {
                Ok(h) => played.push(h.join().expect("a replaying thread panicked")),
                Err(e) => {
                    // Too many processes for the machine's threads: the others ran, the
                    // run is refused.
                    error.get_or_insert(
                        crate::error::SetupError::Other(format!(
                            "cannot start a thread for each of the trace's processes: {e}"
                        ))
                        .into(),
                    );
                }
            }
        }
        drop(finished);
        played
    });
    let stats = rt.shutdown();
    if let Some(e) = error {
        return Err(e);
    }
    let last = played
        .iter()
        .map(|p| p.last_completion)
        .max()
        .unwrap_or(start);
    let window = Window::new(start, stop, last, &stats);
    let total_bytes: u64 = played.iter().map(|p| p.bytes).sum();
    let contexts = played
        .iter()
        .zip(&names)
        .enumerate()
        .map(|(p, (pl, name))| ContextReport {
            name: name.clone(),
            class: name.clone(),
            bytes: pl.bytes,
            ios: pl.ios,
            throughput_mb_s: window.mb_s(pl.bytes),
            share: window.share(&[ContextId(p as u32 + 1)]),
            byte_share: fraction(pl.bytes, total_bytes),
            latency_ms: pl.latency.summary(),
            stalled_ms: None,
        })
        .collect();
    let late = late.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(RealRun {
        report: window.report(disk, opts.run.seed, total_bytes, contexts),
        timer_overshoot_us: Percentiles::of_ns(&stats.timer_overshoot),
        think_overshoot_us: Percentiles::of_ns(&late),
        response_us: Percentiles::default(),
        late_completions: stats.late_completions,
        verify: Verification {
            io_errors: played.iter().map(|p| p.io_errors).sum(),
            ..Verification::default()
        },
    })
}

/// One process of the trace: issues its records as they fall due, on the replay's clock
/// (`start` on the runtime's is its zero, `t0` the trace's first record).
#[allow(clippy::too_many_arguments)]
fn play(
    rt: &Runtime,
    ctx: Ctx,
    rx: Receiver<Job>,
    t0: Nanos,
    start: Nanos,
    stop: Option<Nanos>,
    over: &AtomicBool,
    late: &Mutex<Histogram<u64>>,
    opts: &TraceRunOptions,
) -> Played {
    tighten_timer_slack();
    if opts.run.realtime {
        // Refusal (no privilege) only costs punctuality; the run reports how late it was.
        let _ = set_realtime(1);
    }
    let clock: Clock = rt.clock();
    let mut res = Played {
        bytes: 0,
        ios: 0,
        latency: LatencyRecorder::new(),
        last_completion: 0,
        io_errors: 0,
    };
    // The previous request (its ticket until the rule needed its completion) and the others
    // in flight: (ticket, issue time, bytes).
    let mut prev: Option<(Previous, Option<InFlight>)> = None;
    let mut in_flight: Vec<InFlight> = Vec::new();
    let mut reap_at = REAP_FIRST;
    let finish = |res: &mut Played, (t, issued, bytes): InFlight| -> Nanos {
        match t.wait() {
            Ok(done) => {
                if stop.is_none_or(|s| done.completed_at <= s) {
                    res.bytes += bytes;
                    res.ios += 1;
                    res.latency
                        .record((done.completed_at.saturating_sub(issued) / 1_000).max(1));
                    res.last_completion = res.last_completion.max(done.completed_at);
                }
                done.completed_at
            }
            // The time limit came before the request reached the device: the scheduler
            // still held it, or the thread, woken late, submitted it after the limit.
            Err(IoError::Abandoned | IoError::ShuttingDown) => clock.now(),
            Err(_) => {
                res.io_errors += 1;
                clock.now()
            }
        }
    };
    for Job {
        record: r,
        sector,
        sectors,
    } in rx.iter()
    {
        if over.load(Ordering::Relaxed) {
            break;
        }
        let due = loop {
            if let Some(t) = opts.replay.due(t0, prev.as_ref().map(|(p, _)| p), &r) {
                break t;
            }
            // The rule waits for the previous request's completion.
            let (p, ticket) = prev
                .as_mut()
                .expect("the rule waits only for a previous request");
            let done = ticket.take().map_or(clock.now(), |t| finish(&mut res, t));
            p.done = Some(done.saturating_sub(start));
        };
        let deadline = start + due;
        if stop.is_some_and(|s| deadline >= s) {
            break;
        }
        clock.sleep_until(deadline, opts.run.think_spin);
        let now = clock.now();
        let _ = late
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .record(now.saturating_sub(deadline).max(1));
        let ticket = rt.submit(
            ctx,
            r.op,
            sector,
            IoBuf::zeroed(sectors as usize * 512),
            r.sync || r.op == Op::Read,
            false,
        );
        if let Some((_, Some(t))) = prev.take() {
            in_flight.push(t);
        }
        prev = Some((
            Previous {
                trace_issue: r.time,
                trace_done: r.completed,
                issued: now - start,
                done: None,
            },
            Some((ticket, now, r.bytes)),
        ));
        // Reap what completed, so that an open loop does not hold every buffer it read: a
        // pass each time the list has doubled since the last, constant work per record where
        // a pass per record would be quadratic in an overloaded disk's backlog.
        if in_flight.len() >= reap_at {
            let mut i = 0;
            while i < in_flight.len() {
                if in_flight[i].0.is_done() {
                    let t = in_flight.swap_remove(i);
                    finish(&mut res, t);
                } else {
                    i += 1;
                }
            }
            reap_at = (2 * in_flight.len()).max(REAP_FIRST);
        }
    }
    // Drain the channel so that the reader never blocks on a thread that stopped early.
    for _ in rx.iter() {}
    if let Some((_, Some(t))) = prev.take() {
        in_flight.push(t);
    }
    for t in in_flight {
        finish(&mut res, t);
    }
    rt.context_exited(ctx.context);
    res
}
