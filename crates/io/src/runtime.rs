//! The runtime: one event-loop thread per device, owning the scheduler.
//!
//! ```text
//!  caller threads                      event-loop thread (owns Scheduler, ring, backend)
//!  ──────────────                      ───────────────────────────────────────────────
//!  submit() ──push Msg──▶ queue ──eventfd──▶ drain queue ─▶ sched.enqueue(req, now)
//!                                            sched.poll_dispatch(now) ─▶ SQE (read/write)
//!                                            [emulated: model.submit(req, now) → finish]
//!                                            arm IORING_OP_TIMEOUT (ABS) for the earliest of
//!                                              sched.poll_timeout() and pending finishes
//!                                            io_uring_enter(wait for 1) ◀─ CQEs
//!  Ticket::wait()/.await ◀─fulfil── slot ◀── CQE (and, emulated, the model's finish time)
//!                                            sched.complete(id, now)
//! ```
//!
//! The loop is the scheduler's driver, as the simulator's event loop is (`antsched-sim`'s
//! `engine`): it tells the scheduler what happened (`enqueue`, `complete`, `context_exited`),
//! asks it what to send (`poll_dispatch` until `None`) and when to ask again
//! (`poll_timeout`). Time is the runtime's [`Clock`]: `CLOCK_MONOTONIC` since the start.
//!
//! ## Timers: io_uring timeouts, not timerfd
//!
//! The loop sleeps in one place, `io_uring_enter`, waiting for a completion. Its deadlines (the
//! scheduler's anticipation timeout, an emulated request's finish time) are
//! `IORING_OP_TIMEOUT` requests with `IORING_TIMEOUT_ABS` on `CLOCK_MONOTONIC`: a timeout is one
//! more completion in the same wait, with no extra file descriptor, no extra `read` to drain
//! it, and no conversion between clocks (the scheduler's `now` is the same clock). A timerfd
//! would need a poll or read request in the ring anyway. The timeout is an hrtimer and is not
//! subject to the thread's timer slack; the loop also sets its slack to 1 ns. Even so a sleeping
//! thread wakes tens of microseconds late on a virtual machine, so with [`Options::spin`] the
//! loop arms its timeout that much before the deadline and spins the rest on the completion
//! ring and the submission queue (which also end the spin early), trading a little CPU for
//! punctuality. Every time the loop reaches a deadline it records how late it got there:
//! `timer_overshoot` in [`Stats`].
//!
//! ## Order within a turn
//!
//! Each turn handles completions, then new submissions, then emulated finishes that are due,
//! then asks the scheduler what to dispatch, and only then hands the completed requests'
//! results to their callers. So the scheduler decides before the issuer whose request just
//! completed can answer, as in the simulator (this is the deceptive idleness the paper is
//! about), and the device is not left idle while a woken caller competes with the loop for a
//! core.
//!
//! ## Waking the loop
//!
//! Submissions are pushed on a mutex-protected queue. The loop keeps one `read` of an eventfd
//! in the ring; a submitter writes the eventfd only when the loop has said it is about to
//! sleep (`sleeping`, checked with sequentially consistent ordering on both sides, so either
//! the loop sees the message before sleeping or the submitter sees the flag and wakes it).
//!
//! ## Failures and shutdown
//!
//! Each request carries its own result slot: an error from the device (a negative CQE result,
//! a short transfer, or an injected failure) is delivered to that request's caller only, and
//! the scheduler is told the request completed as for any other. Every request the loop
//! accepted gets exactly one result (the slot refuses a second, and the loop asserts
//! it never tries). [`Runtime::shutdown`] (and dropping the runtime) stops accepting new
//! requests, lets everything accepted drain through the scheduler and the device, and joins
//! the thread.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use antsched_core::{
    AnticipationStats, ClassId, ContextId, Nanos, Op, Request, RequestId, Scheduler, SECTOR_BYTES,
};
use hdrhistogram::Histogram;
use io_uring::{opcode, squeue, types, IoUring};
use rustc_hash::FxHashMap;

use crate::backend::{Backend, Device, Place};
use crate::buf::IoBuf;
use crate::clock::{tighten_timer_slack, Clock};
use crate::error::{IoError, SetupError};
use crate::ticket::{Done, Slot, Ticket};

/// Who issues a request and on whose account: the caller names both. A context is whoever
/// issues a synchronous chain of requests (a process, a thread, a client connection): the
/// anticipation heuristics keep their statistics per context and wait for one. A class is the
/// resource principal proportional-share schedulers divide the disk among.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ctx {
    pub context: ContextId,
    pub class: ClassId,
}

impl Ctx {
    pub fn new(context: u32, class: u32) -> Ctx {
        Ctx {
            context: ContextId(context),
            class: ClassId(class),
        }
    }
}

/// How a runtime runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Entries of the submission ring (a power of two); more requests than this may be in
    /// flight, they are submitted in batches.
    pub ring_entries: u32,
    /// Spin instead of sleeping when the next deadline is closer than this (0: always sleep).
    /// The loop then sleeps until `spin` before each deadline and spins the rest.
    pub spin: Nanos,
    /// [`Ticket::wait`] spins up to this long before it sleeps on the result, when the
    /// device's recent latency (a decayed average, dispatch to completion) is at most half of
    /// it: a completion that arrives within the spin costs no futex sleep and wake-up (tens
    /// of microseconds on a virtual machine), and on a slow device (a disk, an emulated one)
    /// nobody spins for nothing. Spinning burns the waiter's core meanwhile. 0: never spin.
    pub wait_spin: Nanos,
    /// After a turn that delivered results, poll the submission queue and the completion ring
    /// up to this long before sleeping, when the callers' recent answers (a decayed average,
    /// from a delivered result to the next submission) came within half of it: a caller that
    /// answers a completion with its next request within the window is served without an
    /// eventfd wake-up (two thread switches saved per request at high rates, at the cost of a
    /// busy core while requests flow). Callers that think between requests, or that sleep until
    /// their result and take longer than half the window to wake, are not polled for. 0: never.
    pub poll: Nanos,
    /// Run the event loop in the `SCHED_FIFO` real-time class at this priority, if allowed
    /// (see [`set_realtime`](crate::clock::set_realtime)); [`Stats::realtime`] says whether it
    /// was.
    pub realtime_priority: Option<i32>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            ring_entries: 256,
            spin: 0,
            wait_spin: 200_000,
            poll: 50_000,
            realtime_priority: None,
        }
    }
}

/// What the runtime did so far.
#[derive(Clone, Debug)]
pub struct Stats {
    /// The device's name.
    pub device: String,
    /// The scheduler's name.
    pub scheduler: String,
    /// Requests completed successfully, and with an error.
    pub completed: u64,
    pub failed: u64,
    /// Bytes transferred by successful requests.
    pub bytes: u64,
    /// Time the device spent serving requests (the union of service intervals).
    pub busy: Nanos,
    /// The same, per context.
    pub busy_by_context: Vec<(ContextId, Nanos)>,
    pub anticipation: AnticipationStats,
    /// How late the loop woke for each deadline it slept (or spun) toward, in nanoseconds.
    pub timer_overshoot: Histogram<u64>,
    /// Emulated requests whose real I/O finished after the model's finish time (so they
    /// completed late by that much; counted, and their lateness kept apart from the timer's).
    pub late_completions: u64,
    pub lateness: Histogram<u64>,
    /// When this snapshot was taken, on the runtime's clock.
    pub now: Nanos,
    /// Whether the event loop runs in the real-time class (asked for and granted).
    pub realtime: bool,
}

impl Stats {
    /// A percentile of the timer overshoot in microseconds (0 with no samples).
    pub fn overshoot_us(&self, q: f64) -> f64 {
        if self.timer_overshoot.is_empty() {
            0.0
        } else {
            self.timer_overshoot.value_at_quantile(q) as f64 / 1e3
        }
    }
}

fn ns_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds")
}

struct NewIo {
    ctx: Ctx,
    op: Op,
    sector: u64,
    sectors: u32,
    sync: bool,
    continuation: bool,
    buf: IoBuf,
    slot: Arc<Slot>,
    /// When the caller submitted it (the runtime's clock): how quickly callers answer.
    pushed: Nanos,
}

enum Msg {
    Io(NewIo),
    Exited(ContextId),
    Weight(ClassId, u32),
    Stats(mpsc::Sender<Stats>),
    Shutdown,
    Abandon,
}

struct Shared {
    queue: Mutex<Vec<Msg>>,
    /// The loop's statistics as it ended, set under `queue`'s lock when the loop goes:
    /// [`Runtime::stats`] returns them from then on instead of queuing a question that no
    /// loop would answer.
    last_stats: OnceLock<Stats>,
    wake: OwnedFd,
    sleeping: AtomicBool,
    closed: AtomicBool,
    clock: Clock,
    capacity_sectors: u64,
    wait_spin: Nanos,
    /// Recent device latency (dispatch to completion), a decayed average in ns, kept by the
    /// loop: a waiter spins only when its result is likely to come within its spin.
    recent_latency: std::sync::atomic::AtomicU64,
    /// Requests accepted ([`Shared::push_io`]), and those the loop has taken in from the
    /// queue and handed to the scheduler: for [`Runtime::wait_taken`].
    accepted: std::sync::atomic::AtomicU64,
    taken: std::sync::atomic::AtomicU64,
}

/// Takes `m`'s lock, whether or not a thread panicked holding it: the queue of messages it
/// guards stays consistent across a panic.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn push(&self, m: Msg) {
        lock(&self.queue).push(m);
        self.wake_loop();
    }

    /// Queues a new request unless shutdown has begun (false then). The flag
    /// is read under the queue's lock, and [`Shared::close`] sets it and queues
    /// [`Msg::Shutdown`] under the same lock: so every request accepted is queued before
    /// `Shutdown`, and the loop, which takes the whole queue at each look, has it in hand
    /// before it can see `Shutdown` and exit. Read outside the lock, a request that passed the
    /// check could be queued after the loop's last look and never be answered.
    fn push_io(&self, io: NewIo) -> bool {
        {
            let mut q = lock(&self.queue);
            if self.closed.load(Ordering::SeqCst) {
                return false;
            }
            q.push(Msg::Io(io));
            self.accepted.fetch_add(1, Ordering::SeqCst);
        }
        self.wake_loop();
        true
    }

    /// Begins the shutdown: refuses new requests from now on and queues `Shutdown` (or
    /// `Abandon`) behind the ones accepted ([`Shared::push_io`]); once only.
    fn close(&self, how: Msg) {
        {
            let mut q = lock(&self.queue);
            if self.closed.swap(true, Ordering::SeqCst) {
                return;
            }
            q.push(how);
        }
        self.wake_loop();
    }

    fn wake_loop(&self) {
        if self.sleeping.load(Ordering::SeqCst) {
            let one: u64 = 1;
            // SAFETY: writes 8 bytes from a live u64 to our own eventfd. A failure (the
            // counter is saturated) still leaves the loop with a wake-up pending.
            unsafe {
                libc::write(
                    self.wake.as_raw_fd(),
                    &one as *const u64 as *const libc::c_void,
                    8,
                )
            };
        }
    }
}

/// A decayed average in ns that forgets `1/n` of itself per sample, `u64::MAX` until the first
/// sample: what the adaptive spins (the waiter's, the loop's poll) decide on.
fn decayed(old: Nanos, sample: Nanos, n: u64) -> Nanos {
    if old == u64::MAX {
        sample
    } else {
        (old.saturating_mul(n - 1).saturating_add(sample)) / n
    }
}

/// A running runtime: submit from any thread (it is `Sync`), wait or await the results.
pub struct Runtime {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<Stats>>,
}

impl Runtime {
    /// Starts the event loop for `backend` under `scheduler`. Fails if io_uring is not
    /// available.
    pub fn start(
        backend: Backend,
        scheduler: Box<dyn Scheduler>,
        opts: Options,
    ) -> Result<Runtime, SetupError> {
        // SAFETY: eventfd returns a new descriptor we own, or -1.
        let efd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
        if efd < 0 {
            return Err(SetupError::Other(format!(
                "eventfd: {}",
                std::io::Error::last_os_error()
            )));
        }
        // SAFETY: efd is a fresh descriptor nobody else owns.
        let wake = unsafe { OwnedFd::from_raw_fd(efd) };
        let shared = Arc::new(Shared {
            queue: Mutex::new(Vec::new()),
            last_stats: OnceLock::new(),
            wake,
            sleeping: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            clock: Clock::new(),
            capacity_sectors: backend.capacity_sectors,
            wait_spin: opts.wait_spin,
            recent_latency: std::sync::atomic::AtomicU64::new(u64::MAX),
            accepted: std::sync::atomic::AtomicU64::new(0),
            taken: std::sync::atomic::AtomicU64::new(0),
        });
        let device = backend.name().to_string();
        let sched_name = scheduler.name().to_string();
        let ring_entries = opts.ring_entries.max(8);
        let realtime = opts.realtime_priority;
        let mut lp = Loop {
            ring: None,
            shared: shared.clone(),
            sched: scheduler,
            device: backend.device,
            fail_every: backend.fail_every,
            entries: FxHashMap::default(),
            next_id: 0,
            due: BinaryHeap::new(),
            armed: None,
            timer_seq: 0,
            timespecs: Vec::new(),
            closing: false,
            abandoned: false,
            dispatched: 0,
            // Leaked on purpose: the kernel may write to it until the ring is torn down,
            // which happens after the loop returns. Eight bytes per runtime.
            wake_buf: Box::leak(Box::new(0u64)) as *mut u64,
            stats: Stats {
                device,
                scheduler: sched_name,
                completed: 0,
                failed: 0,
                bytes: 0,
                busy: 0,
                busy_by_context: Vec::new(),
                anticipation: AnticipationStats::default(),
                timer_overshoot: ns_histogram(),
                late_completions: 0,
                lateness: ns_histogram(),
                now: 0,
                realtime: false,
            },
            busy_until: 0,
            busy_by_context: FxHashMap::default(),
            spin: opts.spin,
            poll: opts.poll,
            delivered_at: None,
            recent_answer: u64::MAX,
            fixed: false,
            fds: Vec::new(),
            results: Vec::new(),
        };
        // The ring is made on the loop's thread: with SINGLE_ISSUER only the thread that
        // created it may submit to it.
        let (ready_tx, ready_rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name(format!("antsched-io {}", lp.stats.device))
            .spawn(move || {
                if let Some(p) = realtime {
                    lp.stats.realtime = crate::clock::set_realtime(p).is_ok();
                }
                let ring = IoUring::builder()
                    .setup_single_issuer()
                    .build(ring_entries)
                    .or_else(|_| IoUring::new(ring_entries));
                match ring {
                    Ok(r) => {
                        // Registered files spare the kernel a file-table lookup per request.
                        let fds = match &lp.device {
                            Device::File { store } | Device::Emulated { store, .. } => store.fds(),
                            Device::Null => Vec::new(),
                        };
                        lp.fixed = !fds.is_empty() && r.submitter().register_files(&fds).is_ok();
                        lp.fds = fds;
                        lp.ring = Some(r);
                        let _ = ready_tx.send(Ok(()));
                        lp.run()
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        lp.snapshot()
                    }
                }
            })
            .map_err(|e| SetupError::Other(format!("cannot start the event loop thread: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                let _ = thread.join();
                return Err(SetupError::NoIoUring(e));
            }
            Err(_) => {
                return Err(SetupError::Other(
                    "the event loop thread died at start".into(),
                ))
            }
        }
        Ok(Runtime {
            shared,
            thread: Some(thread),
        })
    }

    /// The runtime's clock: `now()` is what the scheduler and the emulated disk see.
    pub fn clock(&self) -> Clock {
        self.shared.clock
    }

    /// Capacity of the device in 512-byte sectors.
    pub fn capacity_sectors(&self) -> u64 {
        self.shared.capacity_sectors
    }

    /// Submits one request of `buf.len()` bytes at `sector`: a read fills `buf`, a write
    /// writes it. `sync` says the issuer waits for it (anticipation is driven by synchronous
    /// requests); `continuation` marks a later piece of one larger request. The length must
    /// be a positive multiple of 512.
    pub fn submit(
        &self,
        ctx: Ctx,
        op: Op,
        sector: u64,
        buf: IoBuf,
        sync: bool,
        continuation: bool,
    ) -> Ticket {
        let len = buf.len() as u64;
        if len == 0 || len % SECTOR_BYTES != 0 || len / SECTOR_BYTES > u64::from(u32::MAX) {
            return Ticket::ready(Err(IoError::Invalid(format!(
                "length {len} is not a positive multiple of {SECTOR_BYTES} bytes"
            ))));
        }
        let sectors = len / SECTOR_BYTES;
        if sector
            .checked_add(sectors)
            .is_none_or(|end| end > self.shared.capacity_sectors)
        {
            return Ticket::ready(Err(IoError::Invalid(format!(
                "sectors {sector}..{} are beyond the device's {} sectors",
                sector.saturating_add(sectors),
                self.shared.capacity_sectors
            ))));
        }
        // Spin only where the device answers within the spin (an SSD, a page-cache hit): on a
        // disk, whose requests take milliseconds, the waiter goes straight to sleep.
        let recent = self.shared.recent_latency.load(Ordering::Relaxed);
        let spin = if recent.saturating_mul(2) <= self.shared.wait_spin {
            self.shared.wait_spin
        } else {
            0
        };
        let slot = Slot::new(spin);
        let io = NewIo {
            ctx,
            op,
            sector,
            sectors: sectors as u32,
            sync,
            continuation,
            buf,
            slot: slot.clone(),
            pushed: self.shared.clock.now(),
        };
        if self.shared.push_io(io) {
            Ticket(slot)
        } else {
            Ticket::ready(Err(IoError::ShuttingDown))
        }
    }

    fn byte_offset(offset: u64) -> Result<u64, IoError> {
        if offset % SECTOR_BYTES == 0 {
            Ok(offset / SECTOR_BYTES)
        } else {
            Err(IoError::Invalid(format!(
                "offset {offset} is not a multiple of {SECTOR_BYTES} bytes"
            )))
        }
    }

    /// Reads `len` bytes at byte `offset` (both multiples of 512) for `ctx`, synchronously
    /// (the issuer waits: anticipation applies). The future resolves to the data.
    pub fn read_async(&self, ctx: Ctx, offset: u64, len: usize) -> Ticket {
        match Self::byte_offset(offset) {
            Ok(s) => self.submit(ctx, Op::Read, s, IoBuf::zeroed(len), true, false),
            Err(e) => Ticket::ready(Err(e)),
        }
    }

    /// Writes `data` at byte `offset` for `ctx` (a synchronous write: the issuer waits).
    pub fn write_async(&self, ctx: Ctx, offset: u64, data: &[u8]) -> Ticket {
        match Self::byte_offset(offset) {
            Ok(s) => self.submit(ctx, Op::Write, s, IoBuf::copy_from(data), true, false),
            Err(e) => Ticket::ready(Err(e)),
        }
    }

    /// Blocking [`read_async`](Self::read_async).
    pub fn read(&self, ctx: Ctx, offset: u64, len: usize) -> Result<IoBuf, IoError> {
        self.read_async(ctx, offset, len).wait().map(|d| d.buf)
    }

    /// Blocking [`write_async`](Self::write_async).
    pub fn write(&self, ctx: Ctx, offset: u64, data: &[u8]) -> Result<(), IoError> {
        self.write_async(ctx, offset, data).wait().map(|_| ())
    }

    /// The context went away (its connection closed): schedulers stop waiting for it.
    pub fn context_exited(&self, context: ContextId) {
        self.shared.push(Msg::Exited(context));
    }

    /// Gives `class` a weight for proportional sharing.
    pub fn set_class_weight(&self, class: ClassId, weight: u32) {
        self.shared.push(Msg::Weight(class, weight));
    }

    /// Waits until the event loop has taken in every request accepted before the call, from
    /// any thread: the scheduler has them, and the loop has decided on them (it dispatches
    /// what it takes in before it looks at the queue again) before it sees anything submitted
    /// after. A job's issuers start one by one with it, as the simulator's do: the first
    /// request reaches the idle device before the second issuer's arrives.
    pub fn wait_taken(&self) {
        let target = self.shared.accepted.load(Ordering::SeqCst);
        // A loop that has gone (its statistics left) takes nothing more.
        while self.shared.taken.load(Ordering::SeqCst) < target
            && self.shared.last_stats.get().is_none()
        {
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
    }

    /// The device's recent latency (dispatch to completion, a decayed average), once a request
    /// has completed.
    pub fn recent_latency(&self) -> Option<Nanos> {
        match self.shared.recent_latency.load(Ordering::Relaxed) {
            u64::MAX => None,
            l => Some(l),
        }
    }

    /// A snapshot of the statistics.
    ///
    /// Once the loop has ended (after [`close`](Self::close) from another thread), the final
    /// statistics. The question is queued under the queue's lock, which the ending loop takes
    /// to leave its final statistics and answer what is queued: so either the loop answers, or
    /// the final statistics are there.
    pub fn stats(&self) -> Stats {
        let (tx, rx) = mpsc::channel();
        {
            let mut q = lock(&self.shared.queue);
            if let Some(s) = self.shared.last_stats.get() {
                return s.clone();
            }
            q.push(Msg::Stats(tx));
        }
        self.shared.wake_loop();
        rx.recv()
            .expect("the event loop answers, or leaves its final statistics, before it goes")
    }

    /// Stops accepting requests, drains everything accepted, joins the loop and returns the
    /// final statistics.
    pub fn shutdown(mut self) -> Stats {
        self.stop().expect("the loop returns its statistics")
    }

    /// Begins the shutdown from any thread, without waiting: from now on submissions are
    /// refused with [`IoError::ShuttingDown`], and everything accepted before still completes.
    /// [`shutdown`](Self::shutdown) (or dropping the runtime) then waits for the drain.
    pub fn close(&self) {
        self.shared.close(Msg::Shutdown);
    }

    /// Ends the run from any thread, without waiting, and without serving what is left:
    /// submissions are refused from now on, every request the scheduler still holds fails at
    /// once with [`IoError::Abandoned`], and only the requests already on the device complete.
    /// For a run with a time limit whose callers do not wait for their requests (an open-loop
    /// trace on a disk slower than the trace): [`close`](Self::close) would serve the whole
    /// backlog first, minutes past the limit. Does nothing once the shutdown has begun.
    pub fn abandon(&self) {
        self.shared.close(Msg::Abandon);
    }

    fn stop(&mut self) -> Option<Stats> {
        let t = self.thread.take()?;
        self.close();
        match t.join() {
            Ok(s) => Some(s),
            Err(p) => std::panic::resume_unwind(p),
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.stop();
        }
    }
}

const KIND_SHIFT: u32 = 56;
const WAKE: u64 = 1;
const TIMER: u64 = 2;
const IO: u64 = 3;
const CANCEL: u64 = 4;

fn tag(kind: u64, value: u64) -> u64 {
    (kind << KIND_SHIFT) | value
}

struct Entry {
    req: Request,
    slot: Arc<Slot>,
    /// Taken when the request completes.
    buf: Option<IoBuf>,
    /// Dispatched at (runtime clock); `None` while the scheduler holds it.
    started: Option<Nanos>,
    /// The kernel's result, once its CQE arrived.
    res: Option<i32>,
    /// Emulated: when the model says it finishes.
    due: Option<Nanos>,
    fail: bool,
    /// Its result is on its way (in `Loop::results`).
    answered: bool,
}

impl Drop for Entry {
    /// Only reached without a result if the event loop itself failed (a panic): the caller
    /// gets an error instead of waiting forever. A buffer the kernel may still be using is
    /// leaked rather than freed under it.
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        if self.started.is_some() && self.res.is_none() {
            if let Some(b) = self.buf.take() {
                std::mem::forget(b);
            }
        }
        self.slot.fulfil(Err(IoError::LoopFailed));
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        // Normally empty by now. After a panic: deliver the results already known, refuse new
        // requests and fail the queued ones.
        for (_, slot, r) in self.results.drain(..) {
            slot.fulfil(r);
        }
        // Under the queue's lock, as `Shared::push_io` reads the flag and `Runtime::stats` the
        // final statistics: nothing is queued after.
        let last = self.snapshot();
        let msgs = {
            let mut q = lock(&self.shared.queue);
            self.shared.closed.store(true, Ordering::SeqCst);
            let _ = self.shared.last_stats.set(last.clone());
            std::mem::take(&mut *q)
        };
        for m in msgs {
            match m {
                Msg::Io(io) => {
                    io.slot.fulfil(Err(IoError::LoopFailed));
                }
                Msg::Stats(tx) => {
                    let _ = tx.send(last.clone());
                }
                Msg::Exited(_) | Msg::Weight(..) | Msg::Shutdown | Msg::Abandon => {}
            }
        }
    }
}

struct Loop {
    /// Made on the loop's own thread (see `Runtime::start`).
    ring: Option<IoUring>,
    shared: Arc<Shared>,
    sched: Box<dyn Scheduler>,
    device: Device,
    fail_every: Option<u64>,
    entries: FxHashMap<u64, Entry>,
    next_id: u64,
    /// Emulated requests whose real I/O is done, waiting for the model's finish time.
    due: BinaryHeap<Reverse<(Nanos, u64)>>,
    /// The armed timeout: (deadline, sequence number).
    armed: Option<(Nanos, u64)>,
    timer_seq: u64,
    /// Timespecs of timeouts pushed but not yet submitted (the kernel copies them at
    /// submission).
    /// Boxed: the pointer in the SQE must not move when the vector grows.
    #[allow(clippy::vec_box)]
    timespecs: Vec<Box<types::Timespec>>,
    closing: bool,
    /// [`Runtime::abandon`]: nothing more goes to the device.
    abandoned: bool,
    dispatched: u64,
    wake_buf: *mut u64,
    stats: Stats,
    busy_until: Nanos,
    busy_by_context: FxHashMap<ContextId, Nanos>,
    spin: Nanos,
    poll: Nanos,
    /// When the last results were delivered, until the next submission arrives.
    delivered_at: Option<Nanos>,
    /// How quickly callers answer a delivered result with a new request: a decayed average
    /// in ns (`u64::MAX` until known). The loop polls only when it is within half of `poll`.
    recent_answer: Nanos,
    /// The store's files are registered with the ring (`fds[i]` is fixed file `i`).
    fixed: bool,
    fds: Vec<std::os::fd::RawFd>,
    /// Results of requests completed in this turn, delivered once the scheduler has decided.
    results: Vec<(u64, Arc<Slot>, Result<Done, IoError>)>,
}

// SAFETY: `wake_buf` points to a leaked allocation only the loop (and the kernel) touch; the
// loop moves to its thread once and stays there.
unsafe impl Send for Loop {}

impl Loop {
    fn ring(&mut self) -> &mut IoUring {
        self.ring
            .as_mut()
            .expect("the ring exists while the loop runs")
    }

    fn now(&self) -> Nanos {
        self.shared.clock.now()
    }

    fn push_sqe(&mut self, e: squeue::Entry) {
        loop {
            // SAFETY: every SQE we build points at memory that stays valid until its CQE:
            // request buffers live in `entries` until completion, timespecs are copied by the
            // kernel during the submit that follows (we keep them until then), and the wake
            // buffer is leaked.
            let pushed = unsafe { self.ring().submission().push(&e).is_ok() };
            if pushed {
                return;
            }
            // The submission ring is full: hand what it holds to the kernel and retry.
            self.submit_now();
        }
    }

    fn submit_now(&mut self) {
        match self.ring().submit() {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                // Completion ring full: the caller drains completions next.
            }
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            Err(e) => panic!("io_uring submit failed: {e}"),
        }
        self.timespecs.clear();
    }

    fn arm_wake(&mut self) {
        let e = opcode::Read::new(
            types::Fd(self.shared.wake.as_raw_fd()),
            self.wake_buf as *mut u8,
            8,
        )
        .build()
        .user_data(tag(WAKE, 0));
        self.push_sqe(e);
    }

    fn run(mut self) -> Stats {
        tighten_timer_slack();
        self.arm_wake();
        let mut waiting_for: Option<Nanos> = None;
        loop {
            let now = self.now();
            if let Some(d) = waiting_for.take() {
                if now >= d {
                    let _ = self.stats.timer_overshoot.record((now - d).max(1));
                }
            }
            self.reap(now);
            self.drain_queue(now);
            self.finish_due(now);
            self.drive();
            let delivered = !self.results.is_empty();
            self.flush_results();
            if self.closing && self.entries.is_empty() {
                break;
            }
            // When to look again, if nothing arrives.
            let timeout = if self.abandoned {
                None
            } else {
                self.sched.poll_timeout()
            };
            let next = match (timeout, self.due.peek()) {
                (Some(a), Some(Reverse((b, _)))) => Some(a.min(*b)),
                (a, b) => a.or(b.map(|Reverse((t, _))| *t)),
            };
            let now = self.now();
            let mut wake_early = false;
            if let Some(d) = next {
                if d <= now {
                    waiting_for = Some(d);
                    continue;
                }
                if d - now <= self.spin {
                    waiting_for = Some(d);
                    self.submit_now();
                    self.spin_until(d);
                    continue;
                }
                // Sleep until `spin` before the deadline; the next turn spins the rest.
                self.arm_timer(d - self.spin);
                wake_early = self.spin > 0;
            }
            if (delivered || self.entries.len() > self.due.len())
                && self.poll > 0
                && self.recent_answer.saturating_mul(2) <= self.poll
            {
                self.submit_now();
                let until =
                    (now + self.poll).min(next.map_or(u64::MAX, |d| d.saturating_sub(self.spin)));
                self.spin_until(until);
                if self.has_work() {
                    continue;
                }
            }
            self.sleep();
            waiting_for = if wake_early { None } else { next };
        }
        self.submit_now();
        self.snapshot()
    }

    fn has_work(&mut self) -> bool {
        !self.ring().completion().is_empty()
            || !self
                .shared
                .queue
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_empty()
    }

    /// Spins until `deadline`, a completion, or a message.
    fn spin_until(&mut self, deadline: Nanos) {
        while self.now() < deadline {
            if !self.ring().completion().is_empty() {
                return;
            }
            if !self
                .shared
                .queue
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_empty()
            {
                return;
            }
            std::hint::spin_loop();
        }
    }

    fn sleep(&mut self) {
        self.shared.sleeping.store(true, Ordering::SeqCst);
        let queued = !self
            .shared
            .queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty();
        if !queued && self.ring().completion().is_empty() {
            match self.ring().submit_and_wait(1) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::ETIME)
                    ) => {}
                Err(e) => panic!("io_uring wait failed: {e}"),
            }
            self.timespecs.clear();
        } else {
            self.submit_now();
        }
        self.shared.sleeping.store(false, Ordering::SeqCst);
    }

    fn arm_timer(&mut self, deadline: Nanos) {
        if let Some((armed, seq)) = self.armed {
            if armed <= deadline {
                // It fires no later than needed; the loop then re-arms for `deadline`.
                return;
            }
            let e = opcode::TimeoutRemove::new(tag(TIMER, seq))
                .build()
                .user_data(tag(CANCEL, 0));
            self.push_sqe(e);
        }
        self.timer_seq += 1;
        let t = self.shared.clock.to_monotonic(deadline);
        let ts = Box::new(
            types::Timespec::new()
                .sec(t / 1_000_000_000)
                .nsec((t % 1_000_000_000) as u32),
        );
        let e = opcode::Timeout::new(&*ts as *const types::Timespec)
            .flags(types::TimeoutFlags::ABS)
            .build()
            .user_data(tag(TIMER, self.timer_seq));
        // Pushed first, kept after: if the ring is full, `push_sqe` submits (and forgets the
        // timespecs already submitted) before this entry goes in; this one must outlive the
        // submit that carries it, so it joins the list only once its entry is in the ring.
        self.push_sqe(e);
        self.timespecs.push(ts);
        self.armed = Some((deadline, self.timer_seq));
    }

    /// Handles every completion the ring holds.
    fn reap(&mut self, now: Nanos) {
        let cqes: Vec<(u64, i32)> = self
            .ring()
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect();
        for (ud, res) in cqes {
            let (kind, value) = (ud >> KIND_SHIFT, ud & ((1 << KIND_SHIFT) - 1));
            match kind {
                WAKE => self.arm_wake(),
                TIMER if self.armed.is_some_and(|(_, s)| s == value) => self.armed = None,
                IO => self.io_done(value, res, now),
                _ => {}
            }
        }
    }

    fn drain_queue(&mut self, now: Nanos) {
        let msgs = std::mem::take(&mut *lock(&self.shared.queue));
        for m in msgs {
            match m {
                Msg::Io(io) => {
                    if let Some(t) = self.delivered_at.take() {
                        let gap = io.pushed.saturating_sub(t);
                        self.recent_answer = decayed(self.recent_answer, gap, 4);
                    }
                    if let Device::Emulated { origin, .. } = &self.device {
                        origin.start(now);
                    }
                    self.next_id += 1;
                    let id = self.next_id;
                    let req = Request {
                        id: RequestId(id),
                        context: io.ctx.context,
                        class: io.ctx.class,
                        op: io.op,
                        sector: io.sector,
                        sectors: io.sectors,
                        sync: io.sync,
                        issued: now,
                        continuation: io.continuation,
                    };
                    self.entries.insert(
                        id,
                        Entry {
                            req,
                            slot: io.slot,
                            buf: Some(io.buf),
                            started: None,
                            res: None,
                            due: None,
                            fail: false,
                            answered: false,
                        },
                    );
                    self.sched.enqueue(req, now);
                    self.shared.taken.fetch_add(1, Ordering::SeqCst);
                }
                Msg::Exited(c) => self.sched.context_exited(c, now),
                Msg::Weight(c, w) => self.sched.set_class_weight(c, w),
                Msg::Stats(tx) => {
                    let _ = tx.send(self.snapshot());
                }
                Msg::Shutdown => self.closing = true,
                Msg::Abandon => self.abandon(),
            }
        }
    }

    /// Fails every request the scheduler still holds, and from now on sends nothing more to
    /// the device ([`Runtime::abandon`]). The scheduler keeps them: it is dropped with the
    /// loop, once the requests on the device have completed.
    fn abandon(&mut self) {
        self.closing = true;
        self.abandoned = true;
        let held: Vec<u64> = self
            .entries
            .iter()
            .filter(|(_, e)| e.started.is_none())
            .map(|(&id, _)| id)
            .collect();
        for id in held {
            let mut e = self.entries.remove(&id).expect("listed above");
            e.answered = true;
            self.results
                .push((id, e.slot.clone(), Err(IoError::Abandoned)));
        }
    }

    fn snapshot(&mut self) -> Stats {
        let mut s = self.stats.clone();
        s.anticipation = self.sched.anticipation();
        s.busy_by_context = self.busy_by_context.iter().map(|(c, b)| (*c, *b)).collect();
        s.busy_by_context.sort();
        s.now = self.now();
        s
    }

    fn account_busy(&mut self, ctx: ContextId, start: Nanos, finish: Nanos) {
        if finish > self.busy_until {
            self.stats.busy += finish - start.max(self.busy_until);
            self.busy_until = finish;
        }
        *self.busy_by_context.entry(ctx).or_default() += finish.saturating_sub(start);
    }

    /// Sends what the scheduler wants dispatched to the device.
    fn drive(&mut self) {
        if self.abandoned {
            return;
        }
        loop {
            let now = self.now();
            let Some(r) = self.sched.poll_dispatch(now) else {
                break;
            };
            self.dispatch(r, now);
        }
    }

    fn dispatch(&mut self, r: Request, now: Nanos) {
        self.dispatched += 1;
        let fail = self.fail_every.is_some_and(|n| self.dispatched % n == 0);
        let id = r.id.0;
        let due = match &self.device {
            Device::Emulated { model, .. } => {
                let c = model.submit(&r, now);
                Some((c.start, c.finish))
            }
            _ => None,
        };
        if let Some((start, finish)) = due {
            self.account_busy(r.context, start, finish);
        }
        let Some(entry) = self.entries.get_mut(&id) else {
            debug_assert!(
                false,
                "the scheduler dispatched {id}, which it was never given"
            );
            return;
        };
        entry.started = Some(now);
        entry.fail = fail;
        entry.due = due.map(|d| d.1);
        let buf = entry
            .buf
            .as_mut()
            .expect("a pending request has its buffer");
        let len = buf.len() as u32;
        let ptr = buf.as_mut_ptr();
        let store = match &self.device {
            Device::File { store } | Device::Emulated { store, .. } => Some(store),
            Device::Null => None,
        };
        let sqe = match store {
            None => opcode::Nop::new().build(),
            Some(store) => match store.place(r.sector, u64::from(r.sectors)) {
                Some(Place::Discarded) => {
                    // Nothing to move: the request's I/O is done at once (a read's buffer is
                    // already zeros); the model's finish time still decides its completion.
                    entry.res = Some(len as i32);
                    opcode::Nop::new().build()
                }
                Some(Place::At(i, off)) => {
                    macro_rules! rw {
                        ($fd:expr) => {
                            match r.op {
                                Op::Read => opcode::Read::new($fd, ptr, len).offset(off).build(),
                                Op::Write => opcode::Write::new($fd, ptr, len).offset(off).build(),
                            }
                        };
                    }
                    if self.fixed {
                        rw!(types::Fixed(i as u32))
                    } else {
                        rw!(types::Fd(self.fds[i]))
                    }
                }
                None => {
                    // The store keeps no bytes there: fail this request alone (the
                    // scheduler still hears it complete).
                    entry.res = Some(-libc::ENXIO);
                    opcode::Nop::new().build()
                }
            },
        };
        self.push_sqe(sqe.user_data(tag(IO, id)));
    }

    fn io_done(&mut self, id: u64, res: i32, now: Nanos) {
        let Some(e) = self.entries.get_mut(&id) else {
            debug_assert!(false, "a completion for {id}, which is not in flight");
            return;
        };
        if e.res.is_none() {
            e.res = Some(if matches!(self.device, Device::Null) {
                e.buf.as_ref().map_or(0, |b| b.len()) as i32
            } else {
                res
            });
        }
        match e.due {
            Some(due) if due > now => self.due.push(Reverse((due, id))),
            Some(due) => {
                if now > due + 1_000 {
                    // The real I/O took longer than the model: this completion is late.
                    self.stats.late_completions += 1;
                    let _ = self.stats.lateness.record(now - due);
                }
                self.finish(id, now)
            }
            None => self.finish(id, now),
        }
    }

    fn finish_due(&mut self, now: Nanos) {
        while let Some(&Reverse((due, id))) = self.due.peek() {
            if due > now {
                break;
            }
            self.due.pop();
            self.finish(id, now);
        }
    }

    fn finish(&mut self, id: u64, now: Nanos) {
        let Some(mut e) = self.entries.remove(&id) else {
            return;
        };
        if let Some(started) = e.started {
            let lat = now.saturating_sub(started);
            let old = self.shared.recent_latency.load(Ordering::Relaxed);
            let new = decayed(old, lat, 8);
            self.shared.recent_latency.store(new, Ordering::Relaxed);
        }
        let buf = e.buf.take().expect("a request in flight has its buffer");
        e.answered = true;
        self.sched.complete(e.req.id, now);
        if !matches!(self.device, Device::Emulated { .. }) {
            self.account_busy(e.req.context, e.started.unwrap_or(now), now);
        }
        let len = buf.len() as u64;
        let offset = e.req.sector * SECTOR_BYTES;
        let res = e.res.unwrap_or(-libc::EIO);
        let result = if e.fail {
            Err(IoError::Os {
                op: e.req.op,
                offset,
                len,
                errno: libc::EIO,
            })
        } else if res < 0 {
            Err(IoError::Os {
                op: e.req.op,
                offset,
                len,
                errno: -res,
            })
        } else if res as u64 != len {
            Err(IoError::Short {
                op: e.req.op,
                offset,
                len,
                got: res as u64,
            })
        } else {
            Ok(Done {
                buf,
                dispatched_at: e.started.unwrap_or(now),
                completed_at: now,
                late: e.due.map_or(0, |due| now.saturating_sub(due)),
            })
        };
        match &result {
            Ok(_) => {
                self.stats.completed += 1;
                self.stats.bytes += len;
            }
            Err(_) => self.stats.failed += 1,
        }
        // Delivered after the scheduler has dispatched what comes next (see `flush_results`).
        self.results.push((id, e.slot.clone(), result));
    }

    /// Hands the completed requests' results to their callers. Called after `drive`, so the
    /// scheduler has already decided what the device does next when the issuers wake: the
    /// same order as in the simulator, and the device is not kept idle while a woken issuer
    /// competes with the loop for a core.
    fn flush_results(&mut self) {
        if !self.results.is_empty() {
            self.delivered_at = Some(self.now());
        }
        for (id, slot, result) in self.results.drain(..) {
            let first = slot.fulfil(result);
            debug_assert!(first, "request {id} completed twice");
        }
    }
}
