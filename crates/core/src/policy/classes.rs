//! Per-class queues and virtual clocks shared by the proportional-share policies (Stride,
//! relaxed Stride, Lottery).
//!
//! A class's virtual clock advances, when one of its requests completes, by the service time
//! divided by its weight (relative to [`DEFAULT_WEIGHT`]): clocks measure service received per
//! unit of share, and the policy that keeps them in step divides the disk's *time* in
//! proportion to the weights (the paper's contracts are in disk utilization, section 4.7).
//!
//! A class that has no pending and no in-flight requests is not backlogged. If it stays so for
//! longer than `rejoin_after`, it has genuinely left, and on its return its clock is raised to
//! the system's virtual time, so that it cannot bank service while absent. A shorter absence is
//! a think time, not idleness (the thesis's "idle resource principal", section 2.3: a principal
//! is idle only if it had the chance to issue and did not). Its lag must survive: that lag is
//! exactly what the proportional anticipation heuristic reads (section 3.4, condition (c)).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use rustc_hash::FxHashMap;

use crate::request::{ClassId, Nanos, Request, RequestId, DEFAULT_WEIGHT, MS};

/// Default for `rejoin_after`: the think-time cap of the statistics (15 ms). A principal silent
/// for longer than any think time the heuristics can represent has left.
pub const DEFAULT_REJOIN_AFTER: Nanos = 15 * MS;

#[derive(Debug)]
pub(crate) struct ClassQueue {
    pub queue: VecDeque<Request>,
    pub weight: u32,
    pub clock: u64,
    pub in_flight: usize,
    /// When it last stopped being backlogged.
    pub idle_since: Option<Nanos>,
}

impl ClassQueue {
    fn backlogged(&self) -> bool {
        !self.queue.is_empty() || self.in_flight > 0
    }

    /// Its place in the ready index: by clock, ties to the oldest head request, then to the
    /// lower class id. `None` when nothing is queued.
    fn ready_key(&self, id: ClassId) -> Option<(u64, Nanos, ClassId)> {
        self.queue.front().map(|r| (self.clock, r.issued, id))
    }
}

/// Classes in id order, plus an index of those with queued requests ordered by clock, so that
/// the smallest clock is found in O(log n). Iteration order feeds tie-breaks and lottery draws,
/// so nothing here depends on hashing order.
#[derive(Debug)]
pub(crate) struct ClassTable {
    pub classes: BTreeMap<ClassId, ClassQueue>,
    ready: BTreeSet<(u64, Nanos, ClassId)>,
    /// The smallest clock among classes with pending requests at the latest decision; it never
    /// decreases. New and returning classes start from it.
    pub vtime: u64,
    pub pending: usize,
    pub rejoin_after: Nanos,
    /// Looked up on every dispatch: keyed by an id, so the fast hash, not SipHash.
    class_of: FxHashMap<RequestId, ClassId>,
}

impl ClassTable {
    pub fn new(rejoin_after: Nanos) -> Self {
        Self {
            classes: BTreeMap::new(),
            ready: BTreeSet::new(),
            vtime: 0,
            pending: 0,
            rejoin_after,
            class_of: FxHashMap::default(),
        }
    }

    /// Runs `f` on a class (created at the virtual time if new), keeping the index in step.
    fn update<T>(&mut self, class: ClassId, f: impl FnOnce(&mut ClassQueue, u64) -> T) -> T {
        let vtime = self.vtime;
        let c = self.classes.entry(class).or_insert_with(|| ClassQueue {
            queue: VecDeque::new(),
            weight: DEFAULT_WEIGHT,
            clock: vtime,
            in_flight: 0,
            idle_since: None,
        });
        if let Some(k) = c.ready_key(class) {
            self.ready.remove(&k);
        }
        let out = f(c, vtime);
        if let Some(k) = c.ready_key(class) {
            self.ready.insert(k);
        }
        out
    }

    pub fn set_weight(&mut self, class: ClassId, weight: u32) {
        self.update(class, |c, _| c.weight = weight.max(1));
    }

    pub fn enqueue(&mut self, req: Request, now: Nanos) {
        let rejoin_after = self.rejoin_after;
        self.update(req.class, |c, vtime| {
            let left = c
                .idle_since
                .is_some_and(|t| now.saturating_sub(t) >= rejoin_after);
            if !c.backlogged() && left {
                c.clock = c.clock.max(vtime);
            }
            c.queue.push_back(req);
        });
        self.pending += 1;
        self.class_of.insert(req.id, req.class);
    }

    /// Takes request `id` out of its class's queue; the class now has it in flight.
    pub fn remove(&mut self, id: RequestId) -> Option<Request> {
        let class = self.class_of.remove(&id)?;
        let req = self.update(class, |c, _| {
            let i = c.queue.iter().position(|r| r.id == id)?;
            let req = c.queue.remove(i)?;
            c.in_flight += 1;
            Some(req)
        })?;
        self.pending -= 1;
        Some(req)
    }

    /// Charges `service` to the request's class.
    pub fn completed(&mut self, req: &Request, service: Nanos, now: Nanos) {
        self.update(req.class, |c, _| {
            c.in_flight = c.in_flight.saturating_sub(1);
            let charge = u128::from(service) * u128::from(DEFAULT_WEIGHT) / u128::from(c.weight);
            c.clock = c
                .clock
                .saturating_add(u64::try_from(charge).unwrap_or(u64::MAX));
            if !c.backlogged() {
                c.idle_since = Some(now);
            }
        });
    }

    /// Classes with queued requests, in id order.
    pub fn queued(&self) -> impl Iterator<Item = (&ClassId, &ClassQueue)> {
        self.classes.iter().filter(|(_, c)| !c.queue.is_empty())
    }

    /// The class Stride serves next: the smallest clock. Advances the virtual time.
    pub fn first_ready(&mut self) -> Option<ClassId> {
        let &(clock, _, id) = self.ready.first()?;
        self.vtime = self.vtime.max(clock);
        Some(id)
    }

    pub fn peek_min_queued_clock(&self) -> Option<u64> {
        self.ready.first().map(|&(clock, _, _)| clock)
    }

    pub fn clock(&self, class: ClassId) -> Option<u64> {
        self.classes.get(&class).map(|c| c.clock)
    }

    pub fn class_pending(&self, class: ClassId) -> usize {
        self.classes.get(&class).map_or(0, |c| c.queue.len())
    }
}
