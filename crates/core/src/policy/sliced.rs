//! Shares by slices: classes take turns at the disk, each turn a slice of disk time, in the
//! order of virtual clocks charged with disk time or with bytes; within a class, any base
//! policy orders its requests. The shares lesson of issue 18.
//!
//! Stride (section 3.4) keeps the paper's contract by choosing the class behind on every
//! request: exact shares, but a seek between every two requests of two sequential readers,
//! which anticipation can only partly recover (`as-stride` gives two readers of 1:2 about half
//! the disk's sequential rate). Relaxed Stride with SPTF inside a window (`as-stride-combo`)
//! recovers the rate and gives up some of the contract. CFQ and BFQ serve one queue at a time
//! for a slice (a budget), idling for it when it has nothing pending, and choose the next by
//! virtual time: a switch costs one seek per slice, not per request, and the clocks keep the
//! shares. So here: the class in service keeps the disk while it has a request pending and
//! its slice (125 ms of disk time, BFQ's `timeout_sync`) is not used up; when it has nothing
//! pending the anticipation core decides whether to wait for it, as for any context (the
//! candidate then comes from the next class, which waiting would delay); then the class with
//! the smallest clock is served. A class's clock advances by what it was served, in disk time
//! (the paper's contract) or in bytes (BFQ's), divided by its weight. A class that was idle
//! comes back at the smallest clock of those backlogged, so that it cannot bank service while
//! away.
//!
//! Only classes given a weight ([`Policy::set_class_weight`]: a job's `cgroup_weight`, a
//! runtime's weight message) have turns of their own. Every other class shares one queue, the
//! pool, which takes its turns with the default weight, as the processes of a cgroup without
//! a weight share it. Turns cost a seek each, and give equal-weight processes equal time,
//! which the paper's schedulers never promised: two sequential readers lose a tenth of their
//! rate to such turns, and a reader that thinks holds the disk for a turn it uses slowly.
//! So without a contract asked for, the pool is one queue, one slice that never ends, and the
//! base policy alone decides, with its aging as the bound on any wait.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap as HashMap;

use serde::{Deserialize, Serialize};

use super::{Aging, Policy};
use crate::estimator::PositionEstimator;
use crate::request::{ClassId, ContextId, Nanos, Request, RequestId, DEFAULT_WEIGHT, MS};

/// How long the class in service keeps the disk: BFQ's `timeout_sync`, the longest a BFQ
/// queue holds it. Turns cost a seek each; CFQ's 100 ms (`slice_sync`) cost two readers of
/// 1:2 a tenth more of their rate than BFQ's turns do, and longer turns make a class of small
/// weight wait longer for its next one.
pub const DEFAULT_SLICE: Nanos = 125 * MS;

/// The queue of every class without a weight of its own.
const POOL: ClassId = ClassId(u32::MAX);

/// What the classes' clocks count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShareUnit {
    /// Nothing: every request in the pool, weights or not, the base policy alone deciding.
    None,
    /// Disk time (the paper's contracts, section 4.7).
    Time,
    /// Bytes transferred (BFQ's).
    Bytes,
}

struct Slot<P> {
    policy: P,
    weight: u32,
    clock: u64,
}

/// Slices of disk time per class, by virtual clock, around base policy `P`.
pub struct Sliced<P> {
    make: Box<dyn Fn() -> P + Send>,
    unit: ShareUnit,
    slice: Nanos,
    /// The queue of every class without a weight: usually the only one, so it is kept
    /// apart from the map, and a decision without contracts costs what the base policy's
    /// costs.
    pool: Slot<P>,
    /// The queues of the classes given a weight.
    classes: BTreeMap<ClassId, Slot<P>>,
    /// The classes given a weight: each has a queue of its own.
    weighted: BTreeSet<ClassId>,
    /// The queues with requests pending, by (clock, id): the next turn's is the first.
    /// Kept only once some class has a weight: until then the pool is the only queue, and a
    /// decision costs what the base policy's costs.
    ready: BTreeSet<(u64, ClassId)>,
    /// The queue of each pending request of a class with a weight; a request not here is in
    /// the pool.
    class_of: HashMap<RequestId, ClassId>,
    /// The class in service and the disk time its slice has used.
    serving: Option<ClassId>,
    used: Nanos,
    /// The smallest clock among backlogged classes when the last turn began.
    vtime: u64,
    /// The class of the last choice, and whether the slice's end made it.
    chosen: Option<ClassId>,
    switched: bool,
}

impl<P: Policy> Sliced<P> {
    pub fn new(make: impl Fn() -> P + Send + 'static, unit: ShareUnit, slice: Nanos) -> Self {
        Self {
            pool: Slot {
                policy: make(),
                weight: DEFAULT_WEIGHT,
                clock: 0,
            },
            make: Box::new(make),
            unit,
            slice,
            classes: BTreeMap::new(),
            weighted: BTreeSet::new(),
            ready: BTreeSet::new(),
            class_of: HashMap::default(),
            serving: None,
            used: 0,
            vtime: 0,
            chosen: None,
            switched: false,
        }
    }

    /// The queue a request of `class` goes to: its class's if it has a weight (never with
    /// [`ShareUnit::None`], whose weights are not taken), else the pool.
    fn key(&self, class: ClassId) -> ClassId {
        if self.weighted.contains(&class) {
            class
        } else {
            POOL
        }
    }

    /// Runs `f` on the queue of `class` (made at the virtual time if new), keeping the index
    /// of ready classes in step; `f` also gets the virtual time.
    fn with_slot<T>(&mut self, class: ClassId, f: impl FnOnce(&mut Slot<P>, u64) -> T) -> T {
        let class = self.key(class);
        let (make, vtime) = (&self.make, self.vtime);
        let slot = if class == POOL {
            &mut self.pool
        } else {
            self.classes.entry(class).or_insert_with(|| Slot {
                policy: make(),
                weight: DEFAULT_WEIGHT,
                clock: vtime,
            })
        };
        let indexed = !self.weighted.is_empty();
        if indexed && !slot.policy.is_empty() {
            self.ready.remove(&(slot.clock, class));
        }
        let out = f(slot, vtime);
        if indexed && !slot.policy.is_empty() {
            self.ready.insert((slot.clock, class));
        }
        out
    }

    /// The queue of `class` (the pool's for [`POOL`]), if it has one.
    fn slot(&self, class: ClassId) -> Option<&Slot<P>> {
        if class == POOL {
            Some(&self.pool)
        } else {
            self.classes.get(&class)
        }
    }

    /// The class served next when the one in service gives up the disk: the smallest clock
    /// among those with requests pending, ties to the lower class id.
    fn next_class(&self) -> Option<ClassId> {
        if self.weighted.is_empty() {
            (!self.pool.policy.is_empty()).then_some(POOL)
        } else {
            self.ready.first().map(|&(_, id)| id)
        }
    }
}

impl<P: Policy> Sliced<P> {
    /// Whether the pool is the only queue (no class has a weight): then the base policy alone
    /// decides, and there are no turns, clocks or slices to keep. The pool's clock stays at 0
    /// until a weight is given, so that the classes given one then start level with it
    /// instead of behind all it was served before.
    fn pool_only(&self) -> bool {
        self.weighted.is_empty()
    }
}

impl<P: Policy> Policy for Sliced<P> {
    fn enqueue(&mut self, req: Request, now: Nanos) {
        if self.pool_only() {
            return self.pool.policy.enqueue(req, now);
        }
        let class = self.key(req.class);
        let serving = self.serving == Some(class);
        self.with_slot(class, |slot, vtime| {
            if slot.policy.is_empty() && !serving {
                // Back from idleness: no banked service.
                slot.clock = slot.clock.max(vtime);
            }
            slot.policy.enqueue(req, now);
        });
        if class != POOL {
            self.class_of.insert(req.id, class);
        }
    }

    fn choose(&mut self, est: &dyn PositionEstimator, now: Nanos) -> Option<Request> {
        if self.pool_only() {
            self.chosen = Some(POOL);
            return self.pool.policy.choose(est, now);
        }
        let keeps = self
            .serving
            .filter(|&c| self.slot(c).is_some_and(|s| !s.policy.is_empty()));
        let (class, switched) = match keeps {
            Some(c) if self.used < self.slice => (c, false),
            Some(_) => (self.next_class()?, true),
            None => (self.next_class()?, false),
        };
        self.chosen = Some(class);
        self.switched = switched && Some(class) != self.serving;
        if class == POOL {
            self.pool.policy.choose(est, now)
        } else {
            self.classes.get_mut(&class)?.policy.choose(est, now)
        }
    }

    fn dispatch(&mut self, id: RequestId, now: Nanos) -> Option<Request> {
        if self.pool_only() {
            let req = self.pool.policy.dispatch(id, now)?;
            self.serving = Some(POOL);
            return Some(req);
        }
        let class = if self.class_of.is_empty() {
            POOL
        } else {
            self.class_of.get(&id).copied().unwrap_or(POOL)
        };
        let req = self.with_slot(class, |slot, _| slot.policy.dispatch(id, now))?;
        if class != POOL {
            self.class_of.remove(&id);
        }
        if self.serving != Some(class) {
            self.serving = Some(class);
            self.used = 0;
            self.vtime = self.vtime.max(self.slot(class).map_or(0, |s| s.clock));
        }
        Some(req)
    }

    fn completed(&mut self, req: &Request, service: Nanos, now: Nanos) {
        self.completed_own(req, service, service, now);
    }

    /// Every queue is made alike: the pool's answers for all.
    fn charges_own_time(&self) -> bool {
        self.pool.policy.charges_own_time()
    }

    /// The slices are charged the whole service; the queue is told both.
    fn completed_own(&mut self, req: &Request, service: Nanos, own: Nanos, now: Nanos) {
        if self.pool_only() {
            return self.pool.policy.completed_own(req, service, own, now);
        }
        let unit = self.unit;
        let class = self.key(req.class);
        if self.serving == Some(class) {
            self.used = self.used.saturating_add(service);
        }
        let charge = match unit {
            ShareUnit::Time | ShareUnit::None => service,
            ShareUnit::Bytes => req.bytes(),
        };
        self.with_slot(class, |slot, _| {
            let weighted = if slot.weight == DEFAULT_WEIGHT {
                charge // the pool's, every decision: spared a 128-bit division
            } else {
                let w = u128::from(charge) * u128::from(DEFAULT_WEIGHT) / u128::from(slot.weight);
                u64::try_from(w).unwrap_or(u64::MAX)
            };
            slot.clock = slot.clock.saturating_add(weighted);
            slot.policy.completed_own(req, service, own, now);
        });
    }

    fn len(&self) -> usize {
        self.pool.policy.len() + self.class_of.len()
    }

    fn next_change(&self) -> Option<Nanos> {
        std::iter::once(&self.pool)
            .chain(self.classes.values())
            .filter_map(|s| s.policy.next_change())
            .min()
    }

    fn set_class_weight(&mut self, class: ClassId, weight: u32) {
        if self.unit != ShareUnit::None && class != POOL {
            // Requests it already has in the pool stay there.
            if self.weighted.is_empty() {
                // The pool stops being the only queue: index it.
                if !self.pool.policy.is_empty() {
                    self.ready.insert((self.pool.clock, POOL));
                }
            }
            self.weighted.insert(class);
            self.with_slot(class, |slot, _| slot.weight = weight.max(1));
        }
    }
}

impl<P: Policy + Aging> Sliced<P> {
    /// The class of the last choice, if it is the class in service (or about to be, the
    /// first time): aging within it decides as it would alone. A candidate of another class
    /// waits for its turn by the clocks, not by its age, so its age says nothing about
    /// whether to wait for the class in service.
    fn chosen_in_service(&self) -> Option<&Slot<P>> {
        let c = self.chosen?;
        if self.serving.is_some_and(|s| s != c) {
            return None;
        }
        self.slot(c)
    }
}

impl<P: Policy + Aging> Aging for Sliced<P> {
    /// The end of a slice decides as aging does: a request of the class that used it up would
    /// not be chosen, so waiting for one is wasted.
    fn aging_overrode(&self) -> bool {
        self.switched
            || self
                .chosen_in_service()
                .is_some_and(|s| s.policy.aging_overrode())
    }

    fn aging_credit(&self) -> Nanos {
        self.chosen_in_service()
            .map_or(0, |s| s.policy.aging_credit())
    }

    /// As the queue of `class` tells it.
    fn starved(&self, ctx: ContextId, class: ClassId) -> bool {
        self.slot(self.key(class))
            .is_some_and(|s| s.policy.starved(ctx, class))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testutil::{head_at, req};
    use crate::policy::Sptf;

    /// Two classes always backlogged, each request 1 ms: served in slices, in proportion to
    /// the weights.
    #[test]
    fn slices_divide_disk_time_by_weight() {
        let mut p = Sliced::new(Sptf::new, ShareUnit::Time, 10 * MS);
        p.set_class_weight(ClassId(0), 100);
        p.set_class_weight(ClassId(1), 200);
        let (mut next, mut now) = (0u64, 0);
        for c in 0..2u32 {
            p.enqueue(req(next, c, u64::from(c) * 1_000_000, now), now);
            next += 1;
        }
        let est = head_at(0);
        let mut served = [0u32; 2];
        let mut switches = 0;
        let mut last = None;
        for _ in 0..3000 {
            let r = p.choose(&est, now).unwrap();
            p.dispatch(r.id, now).unwrap();
            now += MS;
            p.completed(&r, MS, now);
            served[r.class.0 as usize] += 1;
            if last.is_some_and(|l| l != r.class) {
                switches += 1;
            }
            last = Some(r.class);
            p.enqueue(req(next, r.class.0, r.sector + 128, now), now);
            next += 1;
        }
        assert!(
            (served[1] as f64 / served[0] as f64 - 2.0).abs() < 0.05,
            "{served:?}"
        );
        // A switch per slice, not per request.
        assert!(switches < 3000 / 10 + 2, "{switches} switches");
    }

    /// By bytes: a class of small requests gets the same bytes as one of large requests.
    #[test]
    fn slices_by_bytes_divide_bytes() {
        let mut p = Sliced::new(Sptf::new, ShareUnit::Bytes, 10 * MS);
        p.set_class_weight(ClassId(0), DEFAULT_WEIGHT);
        p.set_class_weight(ClassId(1), DEFAULT_WEIGHT);
        let (mut next, mut now) = (0u64, 0);
        let make = |class: u32, next: u64, now: Nanos| {
            let mut r = req(next, class, u64::from(class) * 1_000_000, now);
            r.sectors = if class == 0 { 8 } else { 128 };
            r
        };
        for c in 0..2u32 {
            p.enqueue(make(c, next, now), now);
            next += 1;
        }
        let est = head_at(0);
        let mut bytes = [0u64; 2];
        for _ in 0..5000 {
            let r = p.choose(&est, now).unwrap();
            p.dispatch(r.id, now).unwrap();
            now += MS;
            p.completed(&r, MS, now);
            bytes[r.class.0 as usize] += r.bytes();
            p.enqueue(make(r.class.0, next, now), now);
            next += 1;
        }
        assert!(
            (bytes[1] as f64 / bytes[0] as f64 - 1.0).abs() < 0.05,
            "{bytes:?}"
        );
    }

    /// Classes given no weight share the pool: no turns, the base policy alone decides (SPTF
    /// stays with the stream under the head), where the same classes with weights take turns.
    #[test]
    fn classes_without_a_weight_share_one_queue() {
        let served = |weights: bool| {
            let mut p = Sliced::new(Sptf::new, ShareUnit::Time, 10 * MS);
            if weights {
                p.set_class_weight(ClassId(0), DEFAULT_WEIGHT);
                p.set_class_weight(ClassId(1), DEFAULT_WEIGHT);
            }
            let (mut next, mut now) = (0u64, 0);
            for c in 0..2u32 {
                p.enqueue(req(next, c, u64::from(c) * 1_000_000, now), now);
                next += 1;
            }
            let mut served = [0u32; 2];
            let mut head = 0;
            for _ in 0..1000 {
                let r = p.choose(&head_at(head), now).unwrap();
                p.dispatch(r.id, now).unwrap();
                now += MS;
                p.completed(&r, MS, now);
                head = r.sector + 128;
                served[r.class.0 as usize] += 1;
                p.enqueue(req(next, r.class.0, head, now), now);
                next += 1;
            }
            served
        };
        assert_eq!(served(false), [1000, 0]);
        let [a, b] = served(true);
        assert!(a.abs_diff(b) <= 10, "{a} {b}");
    }

    /// A weight given while the pool holds requests: the pool joins the turns with what it
    /// holds, and every request is still served, once.
    #[test]
    fn a_weight_given_late_leaves_the_pools_requests_served() {
        let mut p = Sliced::new(Sptf::new, ShareUnit::Time, 10 * MS);
        for id in 0..4u64 {
            p.enqueue(req(id, (id % 2) as u32, id * 1_000, 0), 0);
        }
        p.set_class_weight(ClassId(1), 2 * DEFAULT_WEIGHT);
        p.enqueue(req(4, 1, 5_000, 0), 0);
        assert_eq!(p.len(), 5);
        let mut served = Vec::new();
        let mut now = 0;
        while let Some(r) = p.choose(&head_at(0), now) {
            p.dispatch(r.id, now).unwrap();
            now += MS;
            p.completed(&r, MS, now);
            served.push(r.id.0);
        }
        served.sort_unstable();
        assert_eq!(served, [0, 1, 2, 3, 4]);
        assert_eq!(p.len(), 0);
    }
}
