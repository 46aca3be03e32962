//! `cfq`: Completely Fair Queueing with time slices, as in Linux 2.6.29
//! (`block/cfq-iosched.c`), the last CFQ with a single service tree, before it merged
//! cooperating queues (2.6.30), scaled slices for latency (2.6.32) and grew service trees per
//! workload and groups (2.6.33). 2.6.23 to 2.6.28 differ only as noted below.
//!
//! - **Queues.** Every context has a synchronous queue of its own (reads and synchronous
//!   writes). Asynchronous writes of all contexts share one queue: the kernel keeps one per
//!   I/O priority, and every context here has the default best-effort priority 4 (CFQ of this
//!   version has no weights, so [`Scheduler::set_class_weight`] is ignored).
//! - **Round robin by slices.** Busy queues wait on a service tree ordered by a key: the time
//!   they joined plus an offset that grows with the number of busy queues (`cfq_slice_offset`),
//!   plus what they overran or had left of their last slice (`slice_resid`). The first queue
//!   becomes *active* and owns the disk for a slice: `slice_sync` (100 ms) for a synchronous
//!   queue, `slice_async` (40 ms) for the asynchronous one. The slice clock starts when the
//!   slice's first request completes (`slice_new`).
//! - **Within a slice** requests go in the one-way elevator order of AS, backward seeks of up
//!   to `back_seek_max` (16 MiB) costing `back_seek_penalty` (2) times their distance, except
//!   that once per slice the oldest request is served first if it has waited
//!   `fifo_expire_sync` (125 ms) or `fifo_expire_async` (250 ms) (`cfq_check_fifo`).
//! - **Dispatch rounds.** Requests move to the block layer's dispatch list `quantum` (4) at a
//!   time, and only when the list is empty (`elv_next_request` calls the elevator then); the
//!   driver takes them from the list. A queue with `quantum` requests on the list or in the
//!   device yields the round to others. No asynchronous request goes while a synchronous one
//!   is in flight.
//! - **Idling.** When the active synchronous queue empties, CFQ keeps the disk idle for up to
//!   `slice_idle` (8 ms), waiting for the context's next request, unless the context's mean
//!   think time exceeds `slice_idle` (its *idle window* is closed) or it has exited. A
//!   *seeky* context (mean seek distance above 8192 sectors) gets only `CFQ_MIN_TT` (2 ms):
//!   "we don't want to idle for seeks, but we do want to allow fair distribution of slice
//!   time for a process doing back-to-back seeks"; on a queueing device (`hw_tag`) its idle
//!   window closes altogether. CFQ starts out assuming a queueing device and only learns
//!   otherwise under load (more than 5 requests queued or in the driver, over 50
//!   completions: `cfq_update_hw_tag`), so on a lightly loaded disk a seeky context does not
//!   idle at all. (2.6.24 detected queueing the other way round, from more than 4 requests
//!   in the driver.) CFQ never starts idling while requests of any queue are still in the
//!   driver (2.6.28 on; before, each completion re-armed the idle timer).
//! - **Preemption.** A request for another queue ends the active slice early if the active
//!   slice is used up, if it is synchronous and the active queue is not, or if the active
//!   queue is idling and the request lies within the active context's mean seek distance of
//!   the head (`cfq_should_preempt`); the new queue goes to the front.
//!
//! Deviations: the dispatch list is a FIFO (the kernel's `elv_dispatch_sort` keeps it in
//! sector order, which reorders requests only when a round holds several); there are no
//! I/O priorities or classes other than best-effort 4; merging does not apply (see
//! [`crate::peers::deadline`]).

mod idling;
mod service_tree;

use std::collections::{BTreeMap, HashMap, VecDeque};

use crate::request::{ClassId, ContextId, Nanos, Request, RequestId, MS};
use crate::scheduler::{AnticipationStats, Scheduler};

use super::idle::IdleMeter;
use super::iohist::{distance, sample_valid, SeekDistance, ThinkTime};
use super::is_sync;
use super::sorted::{Elevator, SortFifo};

/// The tunables of `cfq` (sysfs names) with the 2.6.29 defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CfqConfig {
    pub quantum: u32,
    pub fifo_expire_sync: Nanos,
    pub fifo_expire_async: Nanos,
    /// KiB.
    pub back_seek_max: u64,
    pub back_seek_penalty: u64,
    pub slice_sync: Nanos,
    pub slice_async: Nanos,
    pub slice_async_rq: u32,
    pub slice_idle: Nanos,
    pub depth: usize,
}

impl Default for CfqConfig {
    fn default() -> Self {
        Self {
            quantum: 4,
            fifo_expire_sync: 125 * MS,
            fifo_expire_async: 250 * MS,
            back_seek_max: 16 * 1024,
            back_seek_penalty: 2,
            slice_sync: 100 * MS,
            slice_async: 40 * MS,
            slice_async_rq: 2,
            slice_idle: 8 * MS,
            depth: 1,
        }
    }
}

/// `CFQ_MIN_TT`: 2 jiffies, "below this threshold, we consider thinktime immediate", and the
/// idle window a seeky queue gets.
pub const CFQ_MIN_TT: Nanos = 2 * MS;
/// `CIC_SEEKY`: a context whose mean seek distance exceeds this (sectors) is seeky.
pub const SEEKY_THRESHOLD: u64 = 8 * 1024;
/// `CFQ_SLICE_SCALE`.
const SLICE_SCALE: Nanos = 5;
/// `CFQ_HW_QUEUE_MIN`.
const HW_QUEUE_MIN: usize = 5;
/// The I/O priority of every queue (best effort, the middle of 0..7).
const IOPRIO: i64 = 4;

/// Which queue a request goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum QueueKey {
    /// A context's synchronous queue.
    Sync(ContextId),
    /// The asynchronous queue shared by every context.
    Async,
}

impl QueueKey {
    fn owner(self) -> Option<ContextId> {
        match self {
            QueueKey::Sync(c) => Some(c),
            QueueKey::Async => None,
        }
    }
}

/// `struct cfq_queue`.
#[derive(Debug)]
struct CfqQueue {
    sync: bool,
    list: SortFifo,
    /// If the FIFO has not expired, the next request to serve.
    next_rq: Option<RequestId>,
    /// Requests on the dispatch list or in the device.
    dispatched: usize,
    /// End of the slice; `None` until its first request completes.
    slice_end: Option<Nanos>,
    /// What was left (positive) or overrun (negative) of the last slice.
    slice_resid: i64,
    /// Position on the service tree, if busy.
    tree_key: Option<(i64, u64)>,
    /// On the busy round-robin list (`on_rr`): it has requests queued.
    on_rr: bool,
    /// Idling for a request (`wait_request`).
    wait_request: bool,
    /// Must dispatch, even if expired (`must_dispatch`).
    must_dispatch: bool,
    /// The FIFO was checked in this slice (`fifo_expire`).
    fifo_checked: bool,
    /// Idling is allowed for this queue (`idle_window`).
    idle_window: bool,
    /// No request of this slice has completed yet (`slice_new`).
    slice_new: bool,
}

impl CfqQueue {
    fn new(sync: bool) -> Self {
        Self {
            sync,
            list: SortFifo::new(),
            next_rq: None,
            dispatched: 0,
            slice_end: None,
            slice_resid: 0,
            tree_key: None,
            on_rr: false,
            wait_request: false,
            must_dispatch: false,
            fifo_checked: false,
            idle_window: sync,
            slice_new: false,
        }
    }
}

/// `struct cfq_io_context`: what CFQ knows of one context.
#[derive(Debug)]
struct IoContext {
    ttime: ThinkTime,
    seek: SeekDistance,
    last_end_request: Nanos,
    last_request_pos: u64,
    /// The task has exited (`!cic->ioc->task`).
    exited: bool,
    /// It has used the shared asynchronous queue (`cic->cfqq[ASYNC]` is set).
    used_async: bool,
}

impl IoContext {
    fn seeky(&self) -> bool {
        self.seek.mean > SEEKY_THRESHOLD
    }
}

/// The CFQ scheduler (`struct cfq_data`).
pub struct Cfq {
    name: String,
    cfg: CfqConfig,
    elevator: Elevator,
    queues: HashMap<QueueKey, CfqQueue>,
    /// Busy queues in service order (`service_tree`).
    tree: BTreeMap<(i64, u64), QueueKey>,
    tree_seq: u64,
    busy_queues: usize,
    contexts: HashMap<ContextId, IoContext>,
    active: Option<QueueKey>,
    /// The context of the active slice's first request (`active_cic`).
    active_cic: Option<ContextId>,
    /// The block layer's dispatch list.
    dispatch_list: VecDeque<(QueueKey, Request)>,
    in_flight: HashMap<RequestId, QueueKey>,
    /// Synchronous-queue requests on the dispatch list or in the device.
    sync_flight: usize,
    /// The device queues internally (`hw_tag`); assumed until load shows otherwise.
    hw_tag: bool,
    /// Largest number of requests in the driver this sampling period.
    rq_in_driver_peak: usize,
    hw_tag_samples: u32,
    /// End of the last request started (`last_position`).
    last_position: u64,
    queued: usize,
    idle_timer: Option<Nanos>,
    meter: IdleMeter,
}

impl Cfq {
    pub fn new(name: impl Into<String>, cfg: CfqConfig) -> Self {
        Self {
            name: name.into(),
            elevator: Elevator {
                // By definition, 1 KiB is 2 sectors.
                back_max: cfg.back_seek_max.saturating_mul(2),
                back_penalty: cfg.back_seek_penalty,
            },
            cfg,
            queues: HashMap::new(),
            tree: BTreeMap::new(),
            tree_seq: 0,
            busy_queues: 0,
            contexts: HashMap::new(),
            active: None,
            active_cic: None,
            dispatch_list: VecDeque::new(),
            in_flight: HashMap::new(),
            sync_flight: 0,
            hw_tag: true,
            rq_in_driver_peak: 0,
            hw_tag_samples: 0,
            last_position: 0,
            queued: 0,
            idle_timer: None,
            meter: IdleMeter::default(),
        }
    }

    /// The active queue.
    pub fn active_queue(&self) -> Option<QueueKey> {
        self.active
    }

    /// Whether `ctx`'s queue may idle (its idle window is open).
    pub fn idle_window(&self, ctx: ContextId) -> Option<bool> {
        self.queues.get(&QueueKey::Sync(ctx)).map(|q| q.idle_window)
    }

    /// Whether CFQ takes the device to queue requests internally (`hw_tag`).
    pub fn hw_tag(&self) -> bool {
        self.hw_tag
    }

    /// The pending idle timer.
    pub fn idle_timer(&self) -> Option<Nanos> {
        self.idle_timer
    }

    /// A context's mean think time and mean seek distance.
    pub fn context_means(&self, ctx: ContextId) -> Option<(Nanos, u64)> {
        self.contexts.get(&ctx).map(|c| (c.ttime.mean, c.seek.mean))
    }

    /// `cfq_check_fifo`: once per slice, the oldest request if it has expired.
    fn check_fifo(&mut self, key: QueueKey, now: Nanos) -> Option<RequestId> {
        let q = self.queues.get_mut(&key)?;
        if q.fifo_checked {
            return None;
        }
        q.fifo_checked = true;
        let (rq, deadline) = q.list.fifo_first()?;
        (now >= deadline).then_some(rq.id)
    }

    /// `cfq_remove_request` and `cfq_dispatch_insert`: move `id` to the dispatch list.
    fn dispatch_insert(&mut self, key: QueueKey, id: RequestId) {
        let last = self.last_position;
        let elevator = self.elevator;
        let Some(q) = self.queues.get_mut(&key) else {
            return;
        };
        if q.next_rq == Some(id) {
            q.next_rq = elevator.find_next(&q.list, id, last);
        }
        let Some(rq) = q.list.remove(id) else {
            return;
        };
        q.dispatched += 1;
        let (sync, empty) = (q.sync, q.list.is_empty());
        self.queued -= 1;
        if sync {
            self.sync_flight += 1;
        }
        if self.active_cic.is_none() {
            self.active_cic = Some(rq.context);
        }
        self.dispatch_list.push_back((key, rq));
        if empty {
            self.del_rr(key);
        }
    }

    /// `cfq_prio_to_maxrq`: requests an asynchronous queue may dispatch in one round before
    /// it expires (when others wait).
    fn prio_to_maxrq(&self) -> usize {
        let base = self.cfg.slice_async_rq as usize;
        2 * (base + base * (8 - 1 - IOPRIO as usize))
    }

    /// `__cfq_dispatch_requests`: up to `max` requests of `key` to the dispatch list.
    fn dispatch_from(&mut self, key: QueueKey, max: usize, now: Nanos) {
        let mut dispatched = 0;
        loop {
            let id = match self.check_fifo(key, now) {
                Some(id) => Some(id),
                None => self.queues.get(&key).and_then(|q| q.next_rq),
            };
            let Some(id) = id else {
                break;
            };
            self.dispatch_insert(key, id);
            dispatched += 1;
            let empty = self.queues.get(&key).is_none_or(|q| q.list.is_empty());
            if empty || dispatched >= max {
                break;
            }
        }
        // Expire an asynchronous queue at once if it has used up its round.
        let sync = self.queues.get(&key).is_some_and(|q| q.sync);
        if self.busy_queues > 1 && !sync && dispatched >= self.prio_to_maxrq() {
            if let Some(q) = self.queues.get_mut(&key) {
                q.slice_end = Some(now + MS);
            }
            self.slice_expired(false, now);
        }
    }

    /// `cfq_dispatch_requests`: fill the dispatch list for one round.
    fn dispatch_requests(&mut self, now: Nanos) {
        if self.busy_queues == 0 {
            return;
        }
        while let Some(key) = self.select_queue(now) {
            let max = self.cfg.quantum as usize;
            let Some(q) = self.queues.get_mut(&key) else {
                break;
            };
            if q.dispatched >= max && self.busy_queues > 1 {
                break;
            }
            if self.sync_flight > 0 && !q.sync {
                break;
            }
            q.must_dispatch = false;
            q.wait_request = false;
            self.idle_timer = None;
            self.dispatch_from(key, max, now);
        }
    }

    /// Forgets a queue nobody will use again (the kernel frees it by reference count).
    fn prune_queue(&mut self, key: QueueKey) {
        let QueueKey::Sync(ctx) = key else {
            return;
        };
        let gone = self.contexts.get(&ctx).is_none_or(|c| c.exited);
        let idle = self
            .queues
            .get(&key)
            .is_some_and(|q| !q.on_rr && q.dispatched == 0 && q.list.is_empty());
        if gone && idle && self.active != Some(key) {
            self.queues.remove(&key);
            self.prune_context(ctx);
        }
    }

    /// Forgets an exited context once no queue or slice refers to it.
    fn prune_context(&mut self, ctx: ContextId) {
        let exited = self.contexts.get(&ctx).is_some_and(|c| c.exited);
        if exited && !self.queues.contains_key(&QueueKey::Sync(ctx)) && self.active_cic != Some(ctx)
        {
            self.contexts.remove(&ctx);
        }
    }
}

impl Scheduler for Cfq {
    fn name(&self) -> &str {
        &self.name
    }

    /// `cfq_insert_request` and `cfq_rq_enqueued`.
    fn enqueue(&mut self, req: Request, now: Nanos) {
        self.run_timer(now);
        let ctx = req.context;
        let key = if is_sync(&req) {
            QueueKey::Sync(ctx)
        } else {
            QueueKey::Async
        };
        self.contexts.entry(ctx).or_insert_with(|| IoContext {
            ttime: ThinkTime::default(),
            seek: SeekDistance::default(),
            last_end_request: now,
            last_request_pos: 0,
            exited: false,
            used_async: false,
        });
        self.queues
            .entry(key)
            .or_insert_with(|| CfqQueue::new(key != QueueKey::Async));
        let expire = if key == QueueKey::Async {
            self.cfg.fifo_expire_async
        } else {
            self.cfg.fifo_expire_sync
        };
        let last = self.last_position;
        let elevator = self.elevator;
        let Some(q) = self.queues.get_mut(&key) else {
            return;
        };
        q.list.insert(req, now.saturating_add(expire));
        let cached = q.next_rq.and_then(|id| q.list.get(id));
        q.next_rq = elevator.choose(last, cached, Some(&req)).map(|r| r.id);
        let newly_busy = !q.on_rr;
        self.queued += 1;
        if newly_busy {
            if let Some(q) = self.queues.get_mut(&key) {
                q.on_rr = true;
            }
            self.busy_queues += 1;
            self.resort_rr_list(key, now);
        }

        // What the request says about its context.
        let slice_idle = self.cfg.slice_idle;
        if let Some(cic) = self.contexts.get_mut(&ctx) {
            let elapsed = now.saturating_sub(cic.last_end_request);
            cic.ttime.record(elapsed.min(2 * slice_idle));
            cic.seek.record(distance(cic.last_request_pos, req.sector));
        }
        self.update_idle_window(key, ctx);
        if let Some(cic) = self.contexts.get_mut(&ctx) {
            cic.last_request_pos = req.end();
        }
        if let Some(cic) = self.contexts.get_mut(&ctx) {
            cic.used_async |= key == QueueKey::Async;
        }
        self.meter.arrival(ctx);

        if self.active == Some(key) {
            // Waiting for a request of this queue: let it rip at once.
            if let Some(q) = self.queues.get_mut(&key) {
                if q.wait_request {
                    q.must_dispatch = true;
                    self.idle_timer = None;
                }
            }
        } else if self.should_preempt(key, &req, now) {
            self.preempt_queue(key, now);
            if let Some(q) = self.queues.get_mut(&key) {
                q.must_dispatch = true;
            }
        }
    }

    /// `cfq_completed_request`.
    fn complete(&mut self, id: RequestId, now: Nanos) {
        self.run_timer(now);
        self.update_hw_tag();
        let Some(key) = self.in_flight.remove(&id) else {
            debug_assert!(false, "completion of {id}, which is not in flight");
            return;
        };
        let sync_rq = matches!(key, QueueKey::Sync(_));
        let Some(q) = self.queues.get_mut(&key) else {
            return;
        };
        q.dispatched -= 1;
        if q.sync {
            self.sync_flight -= 1;
        }
        if let Some(cic) = key.owner().and_then(|c| self.contexts.get_mut(&c)) {
            cic.last_end_request = now;
        }
        if self.active == Some(key) {
            let slice = if q.sync {
                self.cfg.slice_sync
            } else {
                self.cfg.slice_async
            };
            if q.slice_new {
                q.slice_end = Some(now + slice);
                q.slice_new = false;
            }
            let empty = q.list.is_empty();
            if self.slice_used(key, now) {
                self.slice_expired(true, now);
            } else if sync_rq && empty {
                self.arm_slice_timer(now);
            }
        }
        self.prune_queue(key);
    }

    fn poll_dispatch(&mut self, now: Nanos) -> Option<Request> {
        self.run_timer(now);
        if self.in_flight.len() >= self.cfg.depth {
            return None;
        }
        if self.dispatch_list.is_empty() {
            self.dispatch_requests(now);
        }
        let Some((key, rq)) = self.dispatch_list.pop_front() else {
            if self.idle_timer.is_some() && self.in_flight.is_empty() && self.pending() > 0 {
                self.meter.hold(now, self.active.and_then(QueueKey::owner));
            }
            return None;
        };
        // `cfq_activate_request`: the driver starts it.
        self.in_flight.insert(rq.id, key);
        self.last_position = rq.end();
        self.meter.end(now, false);
        Some(rq)
    }

    fn poll_timeout(&self) -> Option<Nanos> {
        self.idle_timer.filter(|_| self.pending() > 0)
    }

    /// `cfq_exit_io_context`: the queues the process used stop being served at once
    /// (`cfq_exit_cfqq`), the shared asynchronous one included if it was active.
    fn context_exited(&mut self, ctx: ContextId, now: Nanos) {
        self.run_timer(now);
        let Some(c) = self.contexts.get_mut(&ctx) else {
            return;
        };
        c.exited = true;
        let mut keys = vec![QueueKey::Sync(ctx)];
        if c.used_async {
            keys.push(QueueKey::Async);
        }
        for key in keys {
            if self.active == Some(key) {
                self.slice_expired(false, now);
            }
        }
        self.prune_queue(QueueKey::Sync(ctx));
        self.prune_context(ctx);
    }

    fn set_class_weight(&mut self, _class: ClassId, _weight: u32) {}

    fn pending(&self) -> usize {
        self.queued + self.dispatch_list.len()
    }

    fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    fn anticipation(&self) -> AnticipationStats {
        self.meter.stats()
    }
}

mod tunables {
    use crate::peers::{integer, DURATION, INT_MAX, POSITIVE};
    use crate::registry::TunableInfo;

    pub const QUANTUM: TunableInfo = TunableInfo {
        name: "quantum",
        default: "4",
        help: "requests a queue moves to the dispatch list in one round",
        kind: integer(1, INT_MAX),
    };
    pub const FIFO_EXPIRE_SYNC: TunableInfo = TunableInfo {
        name: "fifo_expire_sync",
        default: "125ms",
        help: "a synchronous request older than this goes first (checked once per slice)",
        kind: POSITIVE,
    };
    pub const FIFO_EXPIRE_ASYNC: TunableInfo = TunableInfo {
        name: "fifo_expire_async",
        default: "250ms",
        help: "an asynchronous request older than this goes first (checked once per slice)",
        kind: POSITIVE,
    };
    pub const BACK_SEEK_MAX: TunableInfo = TunableInfo {
        name: "back_seek_max",
        default: "16384",
        help: "longest backward seek the elevator makes, in KiB",
        kind: integer(0, INT_MAX),
    };
    pub const BACK_SEEK_PENALTY: TunableInfo = TunableInfo {
        name: "back_seek_penalty",
        default: "2",
        help: "a backward seek costs this many times its distance",
        kind: integer(1, INT_MAX),
    };
    pub const SLICE_SYNC: TunableInfo = TunableInfo {
        name: "slice_sync",
        default: "100ms",
        help: "time slice of a synchronous queue",
        kind: POSITIVE,
    };
    pub const SLICE_ASYNC: TunableInfo = TunableInfo {
        name: "slice_async",
        default: "40ms",
        help: "time slice of the asynchronous queue",
        kind: POSITIVE,
    };
    pub const SLICE_ASYNC_RQ: TunableInfo = TunableInfo {
        name: "slice_async_rq",
        default: "2",
        help: "scales the requests the asynchronous queue may dispatch per round",
        kind: integer(1, INT_MAX),
    };
    pub const SLICE_IDLE: TunableInfo = TunableInfo {
        name: "slice_idle",
        default: "8ms",
        help: "how long to idle for the next request of an emptied synchronous queue; 0 disables idling",
        kind: DURATION,
    };
}

fn build(name: &str, t: &crate::registry::Tunables) -> Box<dyn Scheduler> {
    Box::new(Cfq::new(
        name,
        CfqConfig {
            quantum: t.integer("quantum") as u32,
            fifo_expire_sync: t.duration("fifo_expire_sync"),
            fifo_expire_async: t.duration("fifo_expire_async"),
            back_seek_max: t.integer("back_seek_max"),
            back_seek_penalty: t.integer("back_seek_penalty"),
            slice_sync: t.duration("slice_sync"),
            slice_async: t.duration("slice_async"),
            slice_async_rq: t.integer("slice_async_rq") as u32,
            slice_idle: t.duration("slice_idle"),
            depth: t.integer("depth") as usize,
        },
    ))
}

/// The catalog entry.
pub const PEER: super::Peer = super::Peer {
    name: "cfq",
    summary:
        "Linux CFQ with time slices (2.6.29): per-process queues round robin, slice_idle idling",
    tunables: &[
        &tunables::QUANTUM,
        &tunables::FIFO_EXPIRE_SYNC,
        &tunables::FIFO_EXPIRE_ASYNC,
        &tunables::BACK_SEEK_MAX,
        &tunables::BACK_SEEK_PENALTY,
        &tunables::SLICE_SYNC,
        &tunables::SLICE_ASYNC,
        &tunables::SLICE_ASYNC_RQ,
        &tunables::SLICE_IDLE,
    ],
    build,
};
