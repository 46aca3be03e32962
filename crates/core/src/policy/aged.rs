//! Gradual aging: SPTF where a request's positioning time is reduced by `rate` times how long
//! it has waited (Jacobson and Wilkes's aged SPTF, which the SOSP paper's Aged-SPTF names; the
//! paper ran it as a hard bound, [`super::AgedSptf`]). The queue of `as-rw-sptf`'s base policy
//! ([`super::RwSptf`]).
//!
//! The order is that of `positioning + rate * issued` (with a grace, of `issued` or
//! `now - grace`, whichever is earlier), the credit `rate * (now - issued)` shifted by
//! `rate * now`, the same for every request. It is a sum of a term that grows with
//! the distance from the head and one fixed when the request arrived, so a decision need not
//! ask about every pending request. The requests are kept in *age classes*, each the requests
//! issued in one window of [`CLASS_CREDIT_NS`] / `rate` nanoseconds, in sector order. Every
//! request of a class arrived no earlier than the class's window opened, so once the
//! estimator's lower bound at the distance a walk outward from the head has reached, plus
//! `rate` times that opening, passes the best key found, nothing further in that class can
//! win; and once the opening alone does, no younger class can. The classes are visited oldest
//! first, so the choice is usually made in the first few: with 4,096 requests pending a
//! decision looks at a handful of classes and a few requests in each.
//!
//! With a grace (credit only for the wait beyond it, as `as-rw-sptf`'s synchronous requests
//! have), every request still within its grace has the same age term, so their classes
//! cannot cut each other's walks short: a decision among young requests walks each of their
//! classes (a second's worth, 25 at `as-rw-sptf`'s rate), each from a binary search for the
//! head. One walk over every request in sector order would look at fewer, and it did, but
//! that index cost a tree insertion and removal for every request: with 4,096 contexts, where
//! most requests are served past their grace, it was most of a decision's cache misses, and
//! without it the `dispatch_decision` bench's decision went from 1.8 to 1.3 times
//! `as-aged-sptf`'s; with 64, where all are young, from 1.6 to 1.7 times.
//!
//! A request that starts where another pending one ends (a *follower*: the second of a
//! stream's read-ahead requests issued together, the next block of a write-back run) is not
//! chosen before that one. With rotation priced, SPTF alone often serves the higher of two
//! adjacent requests first, when the head comes up just past the lower one's start: the
//! lower one is then a rotation behind, and another context's request is nearer. Served
//! lower first, the pair costs at most what the higher one alone would have (the higher then
//! follows with no positioning at all), so the rule never costs the pair a rotation, and it
//! leaves no request behind to age. Left behind, such requests started most switches between
//! sixteen sequential readers (`examples/jobs/sixteen-readers.fio`): each waited out its
//! grace a rotation away, and its credit took the disk from the stream being read for a
//! single request. Skipping followers only removes candidates, so the bounds of the walks
//! below still hold, and a queue's lowest request is never a follower, so a choice is always
//! made.
//!
//! Few pending requests (a handful of processes, the common case: up to [`FEW`]) are kept in
//! a vector instead, and a decision is a pass over them, as [`super::Sptf`] keeps its few: the
//! classes and their indexes cost more tree and hash operations per request than a pass over
//! eight requests saves. Either form chooses what a pass chooses.
//!
//! The windows are a matter of speed only: any width gives the choice a pass over every
//! request would make (least key, then oldest, then lowest id; a property test holds it).
//! Narrow windows make a class's bound nearly its requests' keys, but a decision then walks
//! more classes; wide ones hold more requests in each class that the bound cannot tell apart.
//! One worth [`CLASS_CREDIT_NS`] of credit, about a third of a random request's positioning
//! time, cost the fewest instructions per decision with 4,096 contexts of the widths tried (1,
//! 2, 4 and 8 ms; 4 ms took an eighth off 1 ms's). With an estimator that gives no bound,
//! or one whose bound leaves out what a drive's cache holds (a device model's), every request
//! is asked about.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap as HashMap;

use super::sector_index::SectorIndex;
use super::FEW;
use crate::estimator::PositionEstimator;
use crate::request::{Nanos, Request, RequestId, MS};

/// The credit one age class spans: its window is this divided by the aging rate (40 ms at
/// `as-rw-sptf`'s rate for synchronous requests, 2 s for asynchronous writes).
pub const CLASS_CREDIT_NS: f64 = 4.0 * MS as f64;

/// The order of gradual aging: positioning time plus `rate` times the issue time, or times
/// `cutoff` (`now - grace`) for a request issued after it; that is positioning time less
/// `rate` times the wait beyond the grace, shifted by `rate * cutoff` for every request. A
/// cutoff of 0 is SPTF's order.
pub(crate) fn aged_key(
    est: &dyn PositionEstimator,
    r: &Request,
    now: Nanos,
    rate: f64,
    cutoff: Nanos,
) -> f64 {
    est.positioning_time(r, now) as f64 + rate * r.issued.min(cutoff) as f64
}

/// Pending requests in age classes, each in sector order; see the module documentation.
#[derive(Debug)]
pub(crate) struct AgedQueue {
    /// Positioning time credited per nanosecond of waiting beyond `grace`.
    rate: f64,
    /// How long a request waits before its wait earns credit.
    grace: Nanos,
    /// The width of a class's window, ns (`u64::MAX` without aging: one class).
    window: u64,
    /// Every pending request as held (its issue time moved back by a shorter grace,
    /// [`AgedQueue::enqueue_with_grace`]) and its own issue time. The indexes below hold
    /// only its (sector, id) and held issue time: a request is copied once.
    held: HashMap<RequestId, (Request, Nanos)>,
    /// Class (held issue time / `window`) to its requests' (sector, id) and held issue times.
    classes: BTreeMap<u64, Members>,
    /// (issue time, id) of every request, where asked for ([`AgedQueue::tracking_oldest`]):
    /// the oldest without a pass over its class.
    by_age: Option<BTreeSet<(Nanos, RequestId)>>,
    /// How many pending requests end at each sector: a request starting at one is a follower,
    /// not chosen before the request it follows. A request of no sectors (which nothing here
    /// makes, but a queue must not trust it) is counted for no follower: it ends where it
    /// starts, and two at one sector would each wait for the other.
    ends: HashMap<u64, u32>,
    /// While there are few: every pending request as held (its issue time moved back by a
    /// shorter grace) and its own issue time; the indexes above are then empty.
    few: Option<Vec<Held>>,
}

/// One age class's requests by (sector, id), each with its held issue time (a bound on its
/// key that needs no look-up). A class holds what arrived in one window: with many contexts a
/// handful (one block of the index, a sorted vector), in a write-back flood thousands.
type Members = SectorIndex<Nanos>;

/// A request kept in the vector: as held (its issue time moved back by a shorter grace), its
/// own issue time, and how many requests in the vector it follows (kept up as requests come
/// and go, so that a decision does not look for them among all the others).
#[derive(Clone, Copy, Debug)]
struct Held {
    req: Request,
    own: Nanos,
    follows: u32,
}

/// Whether `b` follows `a`: it starts where `a` ends. A request of no sectors precedes none.
fn precedes(a: &Request, b: &Request) -> bool {
    a.sectors > 0 && a.end() == b.sector
}

impl AgedQueue {
    /// A queue aging at `rate` (ns of positioning time credited per ns waited beyond
    /// `grace`).
    pub(crate) fn new(rate: f64, grace: Nanos) -> Self {
        let window = if rate > 0.0 {
            (CLASS_CREDIT_NS / rate).clamp(1.0, u64::MAX as f64) as u64
        } else {
            u64::MAX
        };
        Self {
            rate,
            grace,
            window,
            held: HashMap::default(),
            classes: BTreeMap::new(),
            by_age: None,
            ends: HashMap::default(),
            few: Some(Vec::new()),
        }
    }

    /// The same queue, also keeping its requests by age for [`AgedQueue::oldest`] (an index
    /// per request, kept only where the oldest is asked for: the write-back's expiry).
    pub(crate) fn tracking_oldest(mut self) -> Self {
        self.by_age = Some(BTreeSet::new());
        self
    }

    fn class_of(&self, issued: Nanos) -> u64 {
        issued / self.window
    }

    pub(crate) fn enqueue(&mut self, req: Request, now: Nanos) {
        self.enqueue_with_grace(req, self.grace, now);
    }

    /// Enqueues `req` with its own `grace`, shorter than the queue's: it is held as if issued
    /// the difference earlier, so that its wait earns credit after `grace`. It leaves with its
    /// own issue time.
    pub(crate) fn enqueue_with_grace(&mut self, req: Request, grace: Nanos, _now: Nanos) {
        let own = req.issued;
        let mut held = req;
        if grace < self.grace {
            held.issued = own.saturating_sub(self.grace - grace);
        }
        match &mut self.few {
            Some(v) if v.len() < FEW => {
                let mut follows = 0;
                for o in v.iter_mut() {
                    follows += u32::from(precedes(&o.req, &held));
                    o.follows += u32::from(precedes(&held, &o.req));
                }
                v.push(Held {
                    req: held,
                    own,
                    follows,
                });
            }
            Some(_) => {
                let v = self.few.take().unwrap_or_default();
                for h in v {
                    self.index(h.req, h.own);
                }
                self.index(held, own);
            }
            None => self.index(held, own),
        }
    }

    /// Puts a held request in the classes and indexes.
    fn index(&mut self, held: Request, own: Nanos) {
        self.held.insert(held.id, (held, own));
        let class = self.class_of(held.issued);
        self.classes
            .entry(class)
            .or_default()
            .insert((held.sector, held.id), held.issued);
        if held.sectors > 0 {
            *self.ends.entry(held.end()).or_default() += 1;
        }
        if let Some(a) = &mut self.by_age {
            a.insert((held.issued, held.id));
        }
    }

    pub(crate) fn remove(&mut self, id: RequestId) -> Option<Request> {
        if let Some(v) = &mut self.few {
            let i = v.iter().position(|h| h.req.id == id)?;
            let Held { mut req, own, .. } = v.swap_remove(i);
            for o in v.iter_mut() {
                o.follows -= u32::from(precedes(&req, &o.req));
            }
            req.issued = own;
            return Some(req);
        }
        let req = self.remove_held(id)?;
        if self.held.len() <= FEW / 2 {
            // Few again: back to the vector.
            let mut v = Vec::with_capacity(FEW);
            for (_, (held, own)) in self.held.drain() {
                let follows = self.ends.get(&held.sector).copied().unwrap_or(0);
                v.push(Held {
                    req: held,
                    own,
                    follows,
                });
            }
            self.classes.clear();
            self.ends.clear();
            if let Some(a) = &mut self.by_age {
                a.clear();
            }
            self.few = Some(v);
        }
        Some(req)
    }

    /// Takes request `id` out of the classes and indexes: it with its own issue time.
    fn remove_held(&mut self, id: RequestId) -> Option<Request> {
        let (req, own) = self.held.remove(&id)?;
        let (class, sector) = (self.class_of(req.issued), req.sector);
        let members = self
            .classes
            .get_mut(&class)
            .expect("a held request's class");
        members.remove(&(sector, id));
        if members.is_empty() {
            self.classes.remove(&class);
        }
        if let Some(a) = &mut self.by_age {
            a.remove(&(req.issued, req.id));
        }
        if let Some(n) = self.ends.get_mut(&req.end()).filter(|_| req.sectors > 0) {
            *n -= 1;
            if *n == 0 {
                self.ends.remove(&req.end());
            }
        }
        Some(Request { issued: own, ..req })
    }

    /// Issue time of the oldest request (`None` unless [`AgedQueue::tracking_oldest`]).
    pub(crate) fn oldest(&self) -> Option<Nanos> {
        let tracked = self.by_age.as_ref()?;
        match &self.few {
            Some(v) => v.iter().map(|h| h.req.issued).min(),
            None => tracked.first().map(|&(issued, _)| issued),
        }
    }

    /// The oldest request itself.
    pub(crate) fn oldest_request(&self) -> Option<Request> {
        let tracked = self.by_age.as_ref()?;
        if let Some(v) = &self.few {
            return v.iter().map(|h| h.req).min_by_key(|r| (r.issued, r.id));
        }
        let &(_, id) = tracked.first()?;
        self.held.get(&id).map(|&(r, _)| r)
    }

    pub(crate) fn len(&self) -> usize {
        match &self.few {
            Some(v) => v.len(),
            None => self.held.len(),
        }
    }

    /// The request of least `positioning + rate * issued` (then oldest, then lowest id) among
    /// those that follow no pending request, and its credit for its wait, ns.
    #[inline]
    pub(crate) fn choose(
        &self,
        est: &dyn PositionEstimator,
        now: Nanos,
    ) -> Option<(Request, Nanos)> {
        // Requests issued before this have waited past the grace and earn credit.
        self.choose_from(est, now, now.saturating_sub(self.grace))
    }

    /// The request [`AgedQueue::choose`] would choose if no wait earned credit: SPTF's choice
    /// among the requests that follow no pending one (`as-rw-sptf`'s turns).
    #[inline]
    pub(crate) fn choose_unaged(&self, est: &dyn PositionEstimator, now: Nanos) -> Option<Request> {
        self.choose_from(est, now, 0).map(|(r, _)| r)
    }

    /// The choice in the order of [`aged_key`] with `cutoff`.
    fn choose_from<'a>(
        &'a self,
        est: &dyn PositionEstimator,
        now: Nanos,
        cutoff: Nanos,
    ) -> Option<(Request, Nanos)> {
        if let Some(v) = &self.few {
            return self.choose_among_few(v, est, now, cutoff);
        }
        let head = est.head();
        // An estimator whose bound leaves out what a drive's cache holds (a device model's)
        // is used without it: every class would have to be searched for the cache's ranges
        // first, and with hundreds of classes of a request or two each (512 readers) that
        // cost five times the questions the bound saved.
        let mut cached = false;
        est.unbounded(now, &mut |_, _| cached = true);
        let bound = |distance: u64| {
            if cached {
                0.0
            } else {
                est.lower_bound(distance, now) as f64
            }
        };
        let nearest_bound = bound(0);
        type Best<'a> = Option<((f64, Nanos, RequestId), &'a (Request, Nanos))>;
        let mut best: Best = None;
        let consider = |sector: u64, id: RequestId, best: &mut Best<'a>| {
            // A follower first: its key is a positioning question, a walk through the device
            // model with the exact estimator, and in a write-back run most requests follow
            // another (asked after the key, they took three times the instructions of a
            // run of `examples/jobs/mixed-think.fio`).
            if self.ends.contains_key(&sector) {
                return;
            }
            let held = &self.held[&id];
            let r = &held.0;
            let key = (aged_key(est, r, now, self.rate, cutoff), r.issued, r.id);
            if best.is_none_or(|(k, _)| key < k) {
                *best = Some((key, held));
            }
        };
        // A class's walk outward from the head: what is left of the class lies at least as
        // far as the request reached and arrived no earlier than `opened` says, so once the
        // estimator's bound there plus that passes the best found, nothing further in it can
        // win (an equal bound could still win on age). A request's own age term is a bound on
        // its key that needs no look-up.
        let walk_class = |members: &'a Members, opened: f64, best: &mut Best<'a>| {
            for (nearest, (sector, id), issued) in members.outward(head) {
                let far = bound(nearest);
                if best.is_some_and(|((k, ..), _)| far + opened > k) {
                    break;
                }
                let aged = self.rate * issued.min(cutoff) as f64;
                if best.is_none_or(|((k, ..), _)| far + aged <= k) {
                    consider(sector, id, best);
                }
            }
        };
        for (&class, members) in &self.classes {
            let start = class.saturating_mul(self.window);
            // Every request of this class and the younger ones arrived at or after this (and
            // the grace makes every request count as arriving no earlier than the cutoff).
            let opened = self.rate * start.min(cutoff) as f64;
            if best.is_some_and(|((k, ..), _)| nearest_bound + opened > k) {
                break;
            }
            walk_class(members, opened, &mut best);
        }
        let (_, (r, own)) = best?;
        Some(self.chosen(r, *own, cutoff))
    }

    /// [`AgedQueue::choose`] while there are few: a pass over them all.
    fn choose_among_few(
        &self,
        v: &[Held],
        est: &dyn PositionEstimator,
        now: Nanos,
        cutoff: Nanos,
    ) -> Option<(Request, Nanos)> {
        let mut best: Option<((f64, Nanos, RequestId), &Held)> = None;
        for held in v {
            let r = &held.req;
            if held.follows > 0 {
                continue;
            }
            let key = (aged_key(est, r, now, self.rate, cutoff), r.issued, r.id);
            if best.is_none_or(|(k, _)| key < k) {
                best = Some((key, held));
            }
        }
        let (_, held) = best?;
        Some(self.chosen(&held.req, held.own, cutoff))
    }

    /// The choice of the held request `r`, issued at `own`: it with its own issue time, and
    /// its credit for its wait past `cutoff`.
    fn chosen(&self, r: &Request, own: Nanos, cutoff: Nanos) -> (Request, Nanos) {
        let credit = self.rate * cutoff.saturating_sub(r.issued) as f64;
        let mut r = *r;
        r.issued = own;
        (r, credit as Nanos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testutil::{estimator_at, pending};
    use proptest::prelude::*;

    /// Requests of no sectors at one sector (each ends where the other starts) are chosen,
    /// in the vector's form and the classes', and so is the one they sit in front of.
    #[test]
    fn requests_of_no_sectors_do_not_wait_for_each_other() {
        for extra in [0u64, 40] {
            let mut q = AgedQueue::new(1e-4, 0).tracking_oldest();
            let mut left = 0;
            for (id, sector, sectors) in [(1, 500, 0), (2, 500, 0), (3, 500, 8)] {
                let mut r = crate::policy::testutil::req(id, id as u32, sector, 0);
                r.sectors = sectors;
                q.enqueue(r, 0);
                left += 1;
            }
            for i in 0..extra {
                q.enqueue(
                    crate::policy::testutil::req(10 + i, 9, 10_000 + i * 1_000, 0),
                    0,
                );
                left += 1;
            }
            let est = estimator_at(0, 500);
            while let Some((r, _)) = q.choose(est.as_ref(), MS) {
                q.remove(r.id).unwrap();
                left -= 1;
            }
            assert_eq!((left, q.len()), (0, 0), "with {extra} more");
        }
    }

    /// With an estimator that gives no bound (as the exact one is used here, a walk through
    /// the device model per question) every request is asked about, but a follower is not: it cannot be
    /// chosen. A write-back run is mostly followers.
    #[test]
    fn followers_are_not_asked_about() {
        use crate::policy::testutil::Unbounded;
        // Ten runs of ten adjacent requests: 100 pending, 10 that follow no other.
        let mut q = AgedQueue::new(2e-3, 0);
        for run in 0..10u64 {
            for i in 0..10u64 {
                let id = run * 10 + i + 1;
                let r = crate::policy::testutil::req(id, run as u32, run * 1_000_000 + i * 128, 0);
                q.enqueue(r, 0);
            }
        }
        let est = Unbounded::at(0);
        let (r, _) = q.choose(&est, MS).unwrap();
        assert_eq!(r.id, RequestId(1));
        assert_eq!(est.asked.get(), 10, "questions asked");
    }

    proptest! {
        /// The walk over the age classes chooses what a pass over every request that follows
        /// no other chooses (least positioning time plus rate times issue time, then oldest,
        /// then lowest id), with the seek estimator, a curve that is not monotone, an
        /// estimator that gives no bound and one whose bound leaves out ranges a cache holds,
        /// at rates that make one class or hundreds, with and without followers; requests
        /// leave as they are chosen, so classes empty and go.
        #[test]
        fn the_class_walk_chooses_what_a_full_pass_chooses(
            reqs in proptest::collection::vec((0u64..3_000_000, 0u64..1_000_000_000), 1..150),
            crowded in any::<bool>(),
            followers in any::<bool>(),
            head in 0u64..3_000_000,
            rate in prop_oneof![Just(0.0), 0.0f64..0.1, 1e-4f64..1e-3],
            grace in prop_oneof![Just(0u64), 0u64..1_000_000_000],
            estimator in 0u8..4,
            picks in 1usize..20,
        ) {
            let now = 1_000_000_000;
            let mut q = AgedQueue::new(rate, grace).tracking_oldest();
            let mut all = pending(&reqs, crowded, head);
            if followers {
                // Every other request starts where the one before it ends, as a stream's
                // read-ahead requests do.
                for i in (1..all.len()).step_by(2) {
                    all[i].sector = all[i - 1].end();
                }
            }
            for r in &all {
                q.enqueue(*r, 0);
            }
            let mut head = head;
            for _ in 0..picks.min(all.len()) {
                let est = estimator_at(estimator, head);
                let (walk, credit) = q.choose(est.as_ref(), now).unwrap();
                let pass = |cutoff: Nanos| {
                    all.iter()
                        .filter(|r| !all.iter().any(|o| o.sectors > 0 && o.end() == r.sector))
                        .min_by(|a, b| {
                            let ka = (aged_key(est.as_ref(), a, now, rate, cutoff), a.issued, a.id);
                            let kb = (aged_key(est.as_ref(), b, now, rate, cutoff), b.issued, b.id);
                            ka.partial_cmp(&kb).unwrap()
                        })
                        .unwrap()
                        .id
                };
                prop_assert_eq!(walk.id, pass(now.saturating_sub(grace)));
                // Without aging, SPTF's choice (the followers still waiting).
                let unaged = q.choose_unaged(est.as_ref(), now).unwrap();
                prop_assert_eq!(unaged.id, pass(0));
                let waited = (now - grace).saturating_sub(walk.issued);
                prop_assert_eq!(credit, (rate * waited as f64) as Nanos);
                let oldest = all.iter().min_by_key(|r| (r.issued, r.id)).unwrap();
                prop_assert_eq!(q.oldest(), Some(oldest.issued));
                prop_assert_eq!(q.oldest_request().map(|r| r.id), Some(oldest.id));
                q.remove(walk.id).unwrap();
                all.retain(|r| r.id != walk.id);
                head = walk.end();
            }
            prop_assert_eq!(q.len(), all.len());
            prop_assert!(q.remove(RequestId(u64::MAX)).is_none());
        }
    }
}
