//! The Linux 2.6 anticipatory scheduler (Nick Piggin's AS, `block/as-iosched.c`, 2.6.0 to
//! 2.6.32) and the Cooperative AS of the Linux/CAS paper, as one engine with three sets of
//! break-anticipation rules ([`Variant`]):
//!
//! | name | rules |
//! |---|---|
//! | `linux-as` | AS as the Linux/CAS paper measured it (2.6.9; read from 2.6.11): "LAS" |
//! | `linux-as-2.6.32` | AS with Nick Piggin's cooperating-process rules (2.6.16 to 2.6.32) |
//! | `cas` | the paper's Cooperative AS (section 4), its open constants taken from 2.6.32 |
//!
//! Everything but the rules in [`rules`] is the same in 2.6.11 and 2.6.32 and shared here
//! (as 2.6.32 has it where they differ in a detail: when a batch change has drained, the new
//! batch's clock starts at that completion):
//!
//! - **Elevator.** Requests are split into synchronous (reads and synchronous writes) and
//!   asynchronous, each with a list sorted by sector and a FIFO. The next request in a
//!   direction is the cheapest for a one-way elevator that allows backward seeks of up to
//!   `MAXBACK` (1024 * 1024 sectors) at twice their cost (`as_choose_req`).
//! - **Batches.** Reads and writes alternate in batches. A read batch lasts
//!   `read_batch_expire` (500 ms) while writes are waiting; a write batch lasts
//!   `write_batch_expire` (125 ms) or `write_batch_count` requests, a count that
//!   `update_write_batch` tunes from how long the last write batch really took. When the
//!   direction changes, the scheduler waits for the old batch to drain from the device first
//!   (`changed_batch`), and starts the new batch's clock at its first completion
//!   (`new_batch`), so that a deep device queue or write cache does not distort the timing.
//! - **FIFO expiry.** A request older than `read_expire` (125 ms) or `write_expire` (250 ms)
//!   is served before the sorted order, but only the current batch's direction is checked, and
//!   at most once per expiry interval (`as_fifo_expired`), "otherwise a large number of expired
//!   requests would create a hopeless seekstorm".
//! - **Anticipation.** After a synchronous request of context C is dispatched, and in read
//!   batches only, the scheduler may keep the disk idle for C's next request
//!   (`as_can_anticipate`). The states are those of `enum anticipation_status`:
//!
//! ```text
//!   ANTIC_OFF --(can anticipate, C's request still in the device)--> ANTIC_WAIT_REQ
//!   ANTIC_OFF --(can anticipate, C's request completed)-----------> ANTIC_WAIT_NEXT
//!   ANTIC_WAIT_REQ --(C's request completes: timer = completion + antic_expire)--> WAIT_NEXT
//!   WAIT_REQ / WAIT_NEXT --(a request breaks anticipation, or the timer)--> ANTIC_FINISHED
//!   ANTIC_FINISHED --(next dispatch)--> ANTIC_OFF
//! ```
//!
//!   Every arrival during WAIT_REQ or WAIT_NEXT is put to `as_can_break_anticipation`. The
//!   timer runs from the completion of C's request, not from the decision to wait: "we are
//!   timing from when the candidate process wakes up hopefully" (`as_antic_waitreq`).
//! - **Statistics.** Each context (`as_io_context`) keeps a decayed mean think time and seek
//!   distance (7/8 decay in fixed point, [`crate::peers::iohist`]); the scheduler keeps the
//!   same means over contexts' first requests (`new_ttime_mean`, `new_seek_mean`, the prior
//!   for a context that has just started) and `exit_prob`, the decayed probability that a
//!   context waited on dies before issuing again.
//!
//! ## Time
//! Time is exact nanoseconds, with two places where the kernel's jiffies (HZ = 1000, the
//! default of 2.6.9) change a decision and are modelled: the "close request" window grows by
//! whole milliseconds waited (`as_close_req`), and think times are capped at
//! `MAX_THINKTIME - 1` = 19 ms. `antic_expire` defaults to 6 ms: `HZ / 150` truncates to 6
//! jiffies at HZ = 1000 (the nominal 6.7 ms is never reached), sysfs showed 6, and the
//! Linux/CAS paper states "6ms is the default". Timers fire at their exact time; the kernel's
//! fire on the next tick, up to 1 ms later.
//!
//! ## Our model of the block layer
//! - The driver starts a request the moment [`Scheduler::poll_dispatch`] returns it. The
//!   kernel's per-context `nr_dispatched` counts requests moved to the dispatch list but not
//!   yet started (`as_activate_request` decrements it), so it is always 0 at a decision here
//!   and the rule "process has more requests dispatched" never fires.
//! - No merging: our requests arrive already built (see [`crate::peers::deadline`] on
//!   `front_merges`); `as_merge` and friends have nothing to do.
//! - `as_may_queue` (the anticipated context may always allocate a request) has no
//!   counterpart: our driver has no request-slot limit.
//! - The pieces of a split request (`continuation`) are separate requests to Linux, and are
//!   here too.

mod iocontext;
pub mod rules;

use std::collections::HashMap;

use iocontext::{Globals, IoContext};
pub use rules::Variant;

use crate::request::{ClassId, ContextId, Nanos, Request, RequestId, MS};
use crate::scheduler::{AnticipationStats, Scheduler};

use super::idle::IdleMeter;
use super::iohist::{distance, SeekDistance, ThinkTime, ONE};
use super::is_sync;
use super::sorted::{Elevator, SortFifo};

/// The tunables of the anticipatory schedulers (sysfs names), with the 2.6 defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsConfig {
    pub read_expire: Nanos,
    pub write_expire: Nanos,
    pub read_batch_expire: Nanos,
    pub write_batch_expire: Nanos,
    pub antic_expire: Nanos,
    pub depth: usize,
}

impl Default for AsConfig {
    fn default() -> Self {
        Self {
            read_expire: 125 * MS,
            write_expire: 250 * MS,
            read_batch_expire: 500 * MS,
            write_batch_expire: 125 * MS,
            antic_expire: 6 * MS,
            depth: 1,
        }
    }
}

/// `MAXBACK`: the longest backward seek the elevator makes, in sectors.
pub const MAXBACK: u64 = 1024 * 1024;
/// `BACK_PENALTY`: a backward seek costs this many times its distance.
pub const BACK_PENALTY: u64 = 2;
/// `MAX_THINKTIME` (HZ / 50 = 20 ms); samples are capped one jiffy below it.
pub const MAX_THINKTIME: Nanos = 20 * MS;
/// One jiffy at HZ = 1000.
const JIFFY: Nanos = MS;

const ELEVATOR: Elevator = Elevator {
    back_max: MAXBACK,
    back_penalty: BACK_PENALTY,
};

/// Asynchronous and synchronous directions (`BLK_RW_ASYNC`, `BLK_RW_SYNC`).
const ASYNC: usize = 0;
const SYNC: usize = 1;

fn dir(req: &Request) -> usize {
    if is_sync(req) {
        SYNC
    } else {
        ASYNC
    }
}

/// `enum anticipation_status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnticStatus {
    /// Not anticipating (normal operation).
    Off,
    /// The last read has not yet completed.
    WaitReq,
    /// Anticipating a request after the last read completed; the timer runs.
    WaitNext,
    /// Anticipated, and found a candidate or timed out; the next dispatch goes ahead.
    Finished,
}

/// The anticipatory scheduler (`struct as_data`).
pub struct AnticipatoryScheduler {
    name: String,
    variant: Variant,
    cfg: AsConfig,
    lists: [SortFifo; 2],
    /// Next request in elevator order per direction (`next_rq`).
    next: [Option<RequestId>; 2],
    /// End of the last dispatched request per direction (`last_sector`).
    last_sector: [u64; 2],
    contexts: HashMap<ContextId, IoContext>,
    /// Requests in the device: their context and direction.
    in_flight: HashMap<RequestId, (ContextId, usize)>,
    g: Globals,

    current_batch_expires: Nanos,
    last_check_fifo: [Nanos; 2],
    /// Waiting for the old batch to drain before the new one starts.
    changed_batch: bool,
    /// Waiting for the first completion of a new read batch to start its clock.
    new_batch: bool,
    batch_data_dir: usize,
    write_batch_count: i64,
    current_write_count: i64,
    write_batch_idled: bool,

    status: AnticStatus,
    /// When the anticipated context's last request completed.
    antic_start: Nanos,
    /// When the anticipation timer fires (`antic_timer`), armed on entering WAIT_NEXT.
    /// Later completions of the same context move `antic_start` but not the timer.
    antic_timer: Option<Nanos>,
    /// The context whose synchronous request was dispatched last (`ad->io_context`).
    io_context: Option<ContextId>,
    /// Its last dispatched request has completed.
    ioc_finished: bool,
    meter: IdleMeter,
}

impl AnticipatoryScheduler {
    pub fn new(name: impl Into<String>, variant: Variant, cfg: AsConfig) -> Self {
        // `write_batch_count` starts at write_batch_expire / 10 in jiffies, at least 2.
        let write_batch_count = ((cfg.write_batch_expire / JIFFY) as i64 / 10).max(2);
        Self {
            name: name.into(),
            variant,
            cfg,
            lists: [SortFifo::new(), SortFifo::new()],
            next: [None, None],
            last_sector: [0, 0],
            contexts: HashMap::new(),
            in_flight: HashMap::new(),
            g: Globals::default(),
            current_batch_expires: cfg.read_batch_expire,
            last_check_fifo: [0, 0],
            changed_batch: false,
            new_batch: false,
            // `as_data` is zeroed: the first batch direction is BLK_RW_ASYNC (0).
            batch_data_dir: ASYNC,
            write_batch_count,
            current_write_count: 0,
            write_batch_idled: false,
            status: AnticStatus::Off,
            antic_start: 0,
            antic_timer: None,
            io_context: None,
            ioc_finished: false,
            meter: IdleMeter::default(),
        }
    }

    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The anticipation state.
    pub fn status(&self) -> AnticStatus {
        self.status
    }

    /// The context anticipated on, if any.
    pub fn anticipated(&self) -> Option<ContextId> {
        self.io_context
    }

    /// `exit_prob`, in 1/256.
    pub fn exit_probability(&self) -> u64 {
        self.g.exit_prob
    }

    /// CAS's cooperative exit probability, in 1/256.
    pub fn cooperative_exit_probability(&self) -> u64 {
        self.g.coop_exit_prob
    }

    /// 2.6.32's `exit_no_coop`, in 1/256.
    pub fn exit_no_coop(&self) -> u64 {
        self.g.exit_no_coop
    }

    /// A context's mean think time and its decayed sample count, if it has one.
    pub fn think_time(&self, ctx: ContextId) -> Option<(Nanos, u64)> {
        let c = self.contexts.get(&ctx)?;
        Some((c.ttime.mean, c.ttime.samples))
    }

    /// A context's mean seek distance (sectors) and its decayed sample count.
    pub fn seek_distance(&self, ctx: ContextId) -> Option<(u64, u64)> {
        let c = self.contexts.get(&ctx)?;
        Some((c.seek.mean, c.seek.samples))
    }

    /// The current write batch size.
    pub fn write_batch_count(&self) -> i64 {
        self.write_batch_count
    }

    fn fifo_expire(&self, d: usize) -> Nanos {
        if d == SYNC {
            self.cfg.read_expire
        } else {
            self.cfg.write_expire
        }
    }

    fn batch_expire(&self, d: usize) -> Nanos {
        if d == SYNC {
            self.cfg.read_batch_expire
        } else {
            self.cfg.write_batch_expire
        }
    }

    /// `as_antic_expired`: anticipated for `antic_expire` already.
    fn antic_expired(&self, now: Nanos) -> bool {
        now.saturating_sub(self.antic_start) >= self.cfg.antic_expire
    }

    /// Runs the anticipation timer if it is due. The kernel's timer fires on its own; ours is
    /// run at the start of every entry point (at its own time), which is the same as long as
    /// the driver calls us at [`Scheduler::poll_timeout`], and costs nothing when no request is
    /// pending (then nobody is kept waiting, and nothing is reported).
    fn run_timer(&mut self, now: Nanos) {
        if let Some(at) = self.antic_timer.filter(|&t| t <= now) {
            self.antic_timer = None;
            if self.status == AnticStatus::WaitNext {
                self.antic_timeout(at);
            }
        }
    }

    /// `as_antic_timeout`.
    fn antic_timeout(&mut self, at: Nanos) {
        self.status = AnticStatus::Finished;
        self.meter.end(at, true);
        let Some(aic) = self.io_context.and_then(|c| self.contexts.get(&c)) else {
            return;
        };
        let (no_samples, running) = (aic.ttime.samples == 0, aic.running);
        if no_samples {
            // The process anticipated on has exited or timed out.
            self.g.exit_prob = (7 * self.g.exit_prob + ONE) / 8;
        }
        if !running {
            self.exited_without_cooperation();
        }
    }

    /// `as_antic_waitnext`: start the timer from the completion of the anticipated request.
    fn antic_waitnext(&mut self) {
        self.antic_timer = Some(self.antic_start.saturating_add(self.cfg.antic_expire));
        self.status = AnticStatus::WaitNext;
    }

    /// `as_antic_waitreq`: start anticipating; the timer starts once the anticipated
    /// request has completed.
    fn antic_waitreq(&mut self) {
        if self.status == AnticStatus::Off {
            if self.io_context.is_none() || self.ioc_finished {
                self.antic_waitnext();
            } else {
                self.status = AnticStatus::WaitReq;
            }
        }
    }

    /// `as_antic_stop`.
    fn antic_stop(&mut self) {
        if matches!(self.status, AnticStatus::WaitReq | AnticStatus::WaitNext) {
            self.antic_timer = None;
            self.status = AnticStatus::Finished;
        }
    }

    /// `as_can_anticipate`: keep waiting (or start) rather than dispatch `rq`?
    fn can_anticipate(&mut self, rq: Option<RequestId>, now: Nanos) -> bool {
        if self.io_context.is_none() {
            // The last request dispatched was a write.
            return false;
        }
        if self.status == AnticStatus::Finished {
            // Do not restart right after finishing: run the next request.
            return false;
        }
        let rq = rq.and_then(|id| self.lists[SYNC].get(id).copied());
        !self.can_break(rq.as_ref(), now)
    }

    /// `as_fifo_expired`, rate limited to one check per expiry interval.
    fn fifo_expired(&mut self, d: usize, now: Nanos) -> bool {
        if now.saturating_sub(self.last_check_fifo[d]) < self.fifo_expire(d) {
            return false;
        }
        self.last_check_fifo[d] = now;
        self.lists[d].fifo_first().is_some_and(|(_, t)| now > t)
    }

    /// `as_batch_expired`.
    fn batch_expired(&self, now: Nanos) -> bool {
        if self.changed_batch || self.new_batch {
            return false;
        }
        if self.batch_data_dir == SYNC {
            return now > self.current_batch_expires;
        }
        now > self.current_batch_expires || self.current_write_count == 0
    }

    /// `update_write_batch`: adjust the write batch size towards `write_batch_expire`, from
    /// how long the last write batch really ran.
    fn update_write_batch(&mut self, now: Nanos) {
        let batch = i128::from(self.cfg.write_batch_expire);
        let write_time = (i128::from(now) - i128::from(self.current_batch_expires) + batch).max(0);
        if write_time > batch && !self.write_batch_idled {
            if write_time > batch * 3 {
                self.write_batch_count /= 2;
            } else {
                self.write_batch_count -= 1;
            }
        } else if write_time < batch && self.current_write_count == 0 {
            if batch > write_time * 3 {
                self.write_batch_count = self.write_batch_count.saturating_mul(2);
            } else {
                self.write_batch_count += 1;
            }
        }
        self.write_batch_count = self.write_batch_count.max(1);
    }

    /// `as_dispatch_request`: the request to send now, or `None` to wait.
    fn dispatch_request(&mut self, now: Nanos) -> Option<Request> {
        let reads = !self.lists[SYNC].is_empty();
        let writes = !self.lists[ASYNC].is_empty();

        // Signal that the write batch was uncontended, so it cannot be timed.
        if self.batch_data_dir == ASYNC && !reads && (self.current_write_count == 0 || !writes) {
            self.write_batch_idled = true;
        }
        if !(reads || writes)
            || matches!(self.status, AnticStatus::WaitReq | AnticStatus::WaitNext)
            || self.changed_batch
        {
            return None;
        }

        let (d, mut id, fifo_checked) = 'pick: {
            if !(reads && writes && self.batch_expired(now)) {
                // The batch is still running, or one direction is empty.
                let d = self.batch_data_dir;
                let rq = self.next[d];
                if d == SYNC && self.cfg.antic_expire > 0 {
                    if self.fifo_expired(SYNC, now) {
                        let head = self.lists[SYNC].fifo_first()?.0.id;
                        break 'pick (SYNC, head, true);
                    }
                    if self.can_anticipate(rq, now) {
                        self.antic_waitreq();
                        return None;
                    }
                }
                if let Some(id) = rq {
                    if reads && !writes {
                        self.current_batch_expires = now + self.cfg.read_batch_expire;
                    }
                    break 'pick (d, id, false);
                }
            }
            // Not running a batch: choose the direction.
            if reads && !(writes && self.batch_data_dir == SYNC) {
                if self.batch_data_dir == ASYNC {
                    self.changed_batch = true;
                }
                self.batch_data_dir = SYNC;
                self.last_check_fifo[SYNC] = now;
                break 'pick (SYNC, self.lists[SYNC].fifo_first()?.0.id, false);
            }
            // The last batch was reads, or there are none: a write batch.
            if self.batch_data_dir == SYNC {
                self.changed_batch = true;
                // new_batch might be set when the queue ran out of reads.
                self.new_batch = false;
            }
            self.batch_data_dir = ASYNC;
            self.current_write_count = self.write_batch_count;
            self.write_batch_idled = false;
            self.last_check_fifo[ASYNC] = now;
            (ASYNC, self.lists[ASYNC].fifo_first()?.0.id, false)
        };

        // If a request has expired, serve it.
        if !fifo_checked && self.fifo_expired(d, now) {
            id = self.lists[d].fifo_first()?.0.id;
        }
        if self.changed_batch {
            if !self.in_flight.is_empty() {
                return None; // let the old batch drain first
            }
            if self.batch_data_dir == ASYNC {
                self.current_batch_expires = now + self.cfg.write_batch_expire;
            } else {
                self.new_batch = true;
            }
            self.changed_batch = false;
        }
        self.move_to_dispatch(d, id)
    }

    /// `as_move_to_dispatch`.
    fn move_to_dispatch(&mut self, d: usize, id: RequestId) -> Option<Request> {
        let req = *self.lists[d].get(id)?;
        self.antic_stop();
        self.status = AnticStatus::Off;
        self.last_sector[d] = req.end();
        let previous = self.io_context;
        if d == SYNC {
            // In case we have to anticipate after this.
            self.io_context = Some(req.context);
        } else {
            self.io_context = None;
            if self.current_write_count != 0 {
                self.current_write_count -= 1;
            }
        }
        self.ioc_finished = false;
        self.next[d] = ELEVATOR.find_next(&self.lists[d], id, self.last_sector[d]);
        self.lists[d].remove(id);
        if let Some(c) = self.contexts.get_mut(&req.context) {
            c.nr_queued = c.nr_queued.saturating_sub(1);
            c.in_device += 1;
        }
        self.in_flight.insert(id, (req.context, d));
        if let Some(p) = previous {
            self.prune(p);
        }
        Some(req)
    }
}

impl Scheduler for AnticipatoryScheduler {
    fn name(&self) -> &str {
        &self.name
    }

    /// `as_add_request` and `as_update_rq`.
    fn enqueue(&mut self, req: Request, now: Nanos) {
        self.run_timer(now);
        let d = dir(&req);
        self.contexts
            .entry(req.context)
            .or_insert_with(IoContext::new);
        self.update_iohist(req.context, &req, now);
        if let Some(c) = self.contexts.get_mut(&req.context) {
            c.nr_queued += 1;
        }
        self.lists[d].insert(req, now.saturating_add(self.fifo_expire(d)));
        self.meter.arrival(req.context);

        let cached = self.next[d].and_then(|id| self.lists[d].get(id));
        self.next[d] = ELEVATOR
            .choose(self.last_sector[d], Some(&req), cached)
            .map(|r| r.id);
        // Have we been anticipating this request, or does it come from the process we
        // are anticipating for?
        if matches!(self.status, AnticStatus::WaitReq | AnticStatus::WaitNext)
            && self.can_break(Some(&req), now)
        {
            self.antic_stop();
        }
    }

    /// `as_completed_request`.
    fn complete(&mut self, id: RequestId, now: Nanos) {
        self.run_timer(now);
        let Some((ctx, d)) = self.in_flight.remove(&id) else {
            debug_assert!(false, "completion of {id}, which is not in flight");
            return;
        };
        if self.changed_batch && self.in_flight.is_empty() {
            // The old batch has drained: the new one's clock starts now.
            self.current_batch_expires = now + self.batch_expire(self.batch_data_dir);
            self.changed_batch = false;
            if self.batch_data_dir == SYNC {
                self.new_batch = true;
            }
        }
        // Start counting the batch from when a request of that direction is actually
        // serviced (helps devices with big queues and write-back caches).
        if self.new_batch && self.batch_data_dir == d {
            self.update_write_batch(now);
            self.current_batch_expires = now + self.cfg.read_batch_expire;
            self.new_batch = false;
        }
        if self.io_context == Some(ctx) {
            self.antic_start = now;
            self.ioc_finished = true;
            if self.status == AnticStatus::WaitReq {
                // We were waiting on this request; now anticipate the next one.
                self.antic_waitnext();
            }
        }
        if let Some(c) = self.contexts.get_mut(&ctx) {
            c.in_device = c.in_device.saturating_sub(1);
            if d == SYNC {
                c.iorunning = true;
                c.last_end_request = now;
            }
        }
        self.prune(ctx);
    }

    fn poll_dispatch(&mut self, now: Nanos) -> Option<Request> {
        self.run_timer(now);
        if self.in_flight.len() >= self.cfg.depth {
            return None;
        }
        match self.dispatch_request(now) {
            Some(r) => {
                self.meter.end(now, false);
                Some(r)
            }
            None => {
                let idling = matches!(self.status, AnticStatus::WaitReq | AnticStatus::WaitNext);
                if idling && self.in_flight.is_empty() && self.pending() > 0 {
                    self.meter.hold(now, self.io_context);
                }
                None
            }
        }
    }

    fn poll_timeout(&self) -> Option<Nanos> {
        self.antic_timer
            .filter(|_| self.status == AnticStatus::WaitNext && self.pending() > 0)
    }

    /// The process exited (`exit_as_io_context` clears `AS_TASK_RUNNING`). Nothing else
    /// happens now: as in the kernel, the next arrival or the timer notices.
    fn context_exited(&mut self, ctx: ContextId, now: Nanos) {
        self.run_timer(now);
        if let Some(c) = self.contexts.get_mut(&ctx) {
            c.running = false;
        }
        self.prune(ctx);
    }

    fn set_class_weight(&mut self, _class: ClassId, _weight: u32) {}

    fn pending(&self) -> usize {
        self.lists[SYNC].len() + self.lists[ASYNC].len()
    }

    fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    fn anticipation(&self) -> AnticipationStats {
        self.meter.stats()
    }
}

mod tunables {
    use crate::peers::DURATION;
    use crate::registry::TunableInfo;

    pub const READ_EXPIRE: TunableInfo = TunableInfo {
        name: "read_expire",
        default: "125ms",
        help: "a read older than this is served first (checked once per interval, in read batches)",
        kind: DURATION,
    };
    pub const WRITE_EXPIRE: TunableInfo = TunableInfo {
        name: "write_expire",
        default: "250ms",
        help:
            "a write older than this is served first (checked once per interval, in write batches)",
        kind: DURATION,
    };
    pub const READ_BATCH_EXPIRE: TunableInfo = TunableInfo {
        name: "read_batch_expire",
        default: "500ms",
        help: "how long a read batch may run while writes wait",
        kind: DURATION,
    };
    pub const WRITE_BATCH_EXPIRE: TunableInfo = TunableInfo {
        name: "write_batch_expire",
        default: "125ms",
        help: "target length of a write batch; the batch size is tuned towards it",
        kind: DURATION,
    };
    pub const ANTIC_EXPIRE: TunableInfo = TunableInfo {
        name: "antic_expire",
        default: "6ms",
        help: "longest wait for the anticipated process, from its last completion (HZ/150 at HZ=1000); 0 disables anticipation",
        kind: DURATION,
    };

    pub const ALL: &[&TunableInfo] = &[
        &READ_EXPIRE,
        &WRITE_EXPIRE,
        &READ_BATCH_EXPIRE,
        &WRITE_BATCH_EXPIRE,
        &ANTIC_EXPIRE,
    ];
}

fn config(t: &crate::registry::Tunables) -> AsConfig {
    AsConfig {
        read_expire: t.duration("read_expire"),
        write_expire: t.duration("write_expire"),
        read_batch_expire: t.duration("read_batch_expire"),
        write_batch_expire: t.duration("write_batch_expire"),
        antic_expire: t.duration("antic_expire"),
        depth: t.integer("depth") as usize,
    }
}

/// `linux-as`: the Linux/CAS paper's LAS.
pub const LINUX_AS: super::Peer = super::Peer {
    name: "linux-as",
    summary: "Linux 2.6.9 anticipatory scheduler (the Linux/CAS paper's LAS): deadline batches + per-process anticipation",
    tunables: tunables::ALL,
    build: |name, t| Box::new(AnticipatoryScheduler::new(name, Variant::Las, config(t))),
};

/// `linux-as-2.6.32`: the last anticipatory scheduler, with cooperating-process rules.
pub const LINUX_AS_2_6_32: super::Peer = super::Peer {
    name: "linux-as-2.6.32",
    summary: "Linux 2.6.32 anticipatory scheduler: 2.6.9 plus close requests from cooperating processes (exit_no_coop)",
    tunables: tunables::ALL,
    build: |name, t| Box::new(AnticipatoryScheduler::new(name, Variant::Mainline, config(t))),
};

/// `cas`: Cooperative AS.
pub const CAS: super::Peer = super::Peer {
    name: "cas",
    summary: "Cooperative AS (Linux/CAS paper): anticipation for groups of cooperating processes, system and cooperative exit probabilities",
    tunables: tunables::ALL,
    build: |name, t| Box::new(AnticipatoryScheduler::new(name, Variant::Cooperative, config(t))),
};
