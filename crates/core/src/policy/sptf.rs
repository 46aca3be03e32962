//! Shortest Positioning Time First, and its aged variant.
//!
//! SPTF asks the positioning-time estimator about every pending request and takes the
//! cheapest: the best throughput a one-request-lookahead scheduler can get, at the price of
//! starvation for far requests. Aged-SPTF bounds that: a request that has waited longer than
//! the age bound overrules the SPTF choice (section 3.3, "Variant: Aged-SPTF"; the paper runs
//! it with a 1 s bound, "within 1% of SPTF").

use std::collections::VecDeque;

use rustc_hash::FxHashMap as HashMap;

use super::sector_index::SectorIndex;
use super::{shortest_positioning, Aging, Policy, FEW};
use crate::estimator::PositionEstimator;
use crate::request::{Nanos, Request, RequestId, SEC};

/// Shortest Positioning Time First.
///
/// Few pending requests (a handful of processes, the common case) are kept in a vector and a
/// decision asks about each of them: the vector costs a push to enqueue and a scan to
/// dispatch, where the indexes below cost two binary searches and a move in the sector index
/// and a hash insertion and removal per request, more than the whole pass over eight requests
/// saves.
///
/// Many pending requests are kept in sector order, so that a decision walks outward from the
/// head, nearest first on either side, and stops once the estimator's lower bound for the
/// distance still ahead ([`PositionEstimator::lower_bound`]) passes the best request found:
/// no request beyond could win, and the choice is the one a pass over every request makes
/// (least positioning time, then oldest, then lowest id). A device model's bound leaves out
/// what its cache holds, which may be far away and cost only a command: the requests in those
/// ranges ([`PositionEstimator::unbounded`]) are asked about before the walk. With an
/// estimator that gives no bound the walk sees every request. Either way the choice is that
/// of a pass over every request, so that the form they are kept in changes no decision.
#[derive(Debug)]
pub struct Sptf {
    pending: Pending,
    /// Keep the requests by age too when there are many ([`AgedSptf`] asks for the oldest at
    /// every decision).
    by_age: bool,
}

#[derive(Debug)]
enum Pending {
    /// By age: (issue time, id), the order requests arrive in, so that an arrival is a
    /// push and the oldest (which Aged-SPTF asks for at every decision) is the first.
    Few(Vec<Request>),
    Many(Indexed),
}

#[derive(Debug, Default)]
struct Indexed {
    /// (sector, id) of every request, in that order. Keys alone: with whole requests beside
    /// them, a B-tree's nodes were five times the size, and moving them within a node was
    /// most of an insertion's and a removal's cost.
    by_sector: SectorIndex<()>,
    /// Every request, by id.
    requests: HashMap<RequestId, Request>,
    /// (issue time, id) of every request when [`Sptf::by_age`], in that order: the first is
    /// the oldest, found without a pass over the requests, which the walk no longer makes.
    /// Requests arrive in the order of their issue times, so an arrival is a push at the
    /// back; a request that leaves from the middle stays until it reaches the front (a
    /// B-tree's insertion and removal among 4,096 requests were a fifth of a decision), and
    /// the front is always one still pending.
    by_age: VecDeque<(Nanos, RequestId)>,
}

impl Indexed {
    /// The requests in sector order, the order a walk over the index would see them in.
    fn in_sector_order(&self) -> impl Iterator<Item = &Request> {
        self.by_sector
            .iter()
            .map(|((_, id), ())| &self.requests[&id])
    }

    fn insert(&mut self, req: Request, by_age: bool) {
        self.by_sector.insert((req.sector, req.id), ());
        self.requests.insert(req.id, req);
        if by_age {
            let key = age(&req);
            if self.by_age.back().is_none_or(|&last| last < key) {
                self.by_age.push_back(key);
            } else {
                let i = self.by_age.partition_point(|&k| k < key);
                self.by_age.insert(i, key);
            }
        }
    }

    fn is_pending(&self, (issued, id): (Nanos, RequestId)) -> bool {
        self.requests.get(&id).is_some_and(|r| r.issued == issued)
    }

    /// After a removal: the front of `by_age` is a pending request again, and the ones gone
    /// do not pile up behind it.
    fn tidy_by_age(&mut self) {
        while let Some(&front) = self.by_age.front() {
            if self.is_pending(front) {
                break;
            }
            self.by_age.pop_front();
        }
        if self.by_age.len() > 2 * self.requests.len() + 64 {
            let mut by_age = std::mem::take(&mut self.by_age);
            by_age.retain(|&k| self.is_pending(k));
            self.by_age = by_age;
        }
    }
}

/// The order of [`Pending::Few`] and of [`Indexed::by_age`].
fn age(r: &Request) -> (Nanos, RequestId) {
    (r.issued, r.id)
}

impl Default for Sptf {
    fn default() -> Self {
        Self {
            pending: Pending::Few(Vec::new()),
            by_age: false,
        }
    }
}

impl Sptf {
    pub fn new() -> Self {
        Self::default()
    }

    fn remove(&mut self, id: RequestId) -> Option<Request> {
        match &mut self.pending {
            Pending::Few(v) => {
                let i = v.iter().position(|r| r.id == id)?;
                Some(v.remove(i))
            }
            Pending::Many(m) => {
                let req = m.requests.remove(&id)?;
                m.by_sector.remove(&(req.sector, id));
                if self.by_age {
                    m.tidy_by_age();
                }
                if m.requests.len() <= FEW / 2 {
                    let mut few: Vec<Request> =
                        std::mem::take(&mut m.requests).into_values().collect();
                    few.sort_unstable_by_key(age);
                    self.pending = Pending::Few(few);
                }
                Some(req)
            }
        }
    }

    fn get(&self, id: RequestId) -> Option<&Request> {
        match &self.pending {
            Pending::Few(v) => v.iter().find(|r| r.id == id),
            Pending::Many(m) => m.requests.get(&id),
        }
    }

    /// (issue time, id) of the oldest pending request: the least, ties to the lowest id.
    fn oldest(&self) -> Option<(Nanos, RequestId)> {
        match &self.pending {
            Pending::Few(v) => v.first().map(age),
            Pending::Many(m) if self.by_age => m.by_age.front().copied(),
            Pending::Many(m) => m.requests.values().map(age).min(),
        }
    }
}

impl Policy for Sptf {
    fn enqueue(&mut self, req: Request, _now: Nanos) {
        match &mut self.pending {
            Pending::Few(v) if v.len() < FEW => {
                if v.last().is_none_or(|last| age(last) < age(&req)) {
                    v.push(req);
                } else {
                    let i = v.partition_point(|r| age(r) < age(&req));
                    v.insert(i, req);
                }
            }
            Pending::Few(v) => {
                let mut m = Indexed::default();
                for r in v.drain(..) {
                    m.insert(r, self.by_age);
                }
                m.insert(req, self.by_age);
                self.pending = Pending::Many(m);
            }
            Pending::Many(m) => m.insert(req, self.by_age),
        }
    }

    fn choose(&mut self, est: &dyn PositionEstimator, now: Nanos) -> Option<Request> {
        let m = match &self.pending {
            Pending::Few(v) => return shortest_positioning(v.iter(), est, now),
            Pending::Many(m) => m,
        };
        // The bound never falls with distance: an estimator whose bound is 0 even at the far
        // end of the disk (a device model's) gives none. Then every request is asked about,
        // and in any order the choice is the same one (least time, then oldest, then lowest
        // id): the walk outward from the head would only cost two range searches and a bound
        // asked for at every step.
        if est.lower_bound(u64::MAX, now) == 0 {
            return shortest_positioning(m.in_sector_order(), est, now);
        }
        // The least (positioning time, issue time, id) found.
        let mut best: Option<(Nanos, Nanos, RequestId)> = None;
        let consider = |id: RequestId, best: &mut Option<(Nanos, Nanos, RequestId)>| {
            let r = &m.requests[&id];
            let key = (est.positioning_time(r, now), r.issued, r.id);
            if best.is_none_or(|b| key < b) {
                *best = Some(key);
            }
        };
        // The requests the bound does not cover (a drive's cache may hold them) first; one
        // asked about twice is the same candidate.
        est.unbounded(now, &mut |start, end| {
            for ((_, id), ()) in m.by_sector.range(start, end) {
                consider(id, &mut best);
            }
        });
        for (nearest, (_, id), ()) in m.by_sector.outward(est.head()) {
            // Every request still ahead is at least this far: none beats a best that costs
            // less than the bound (an equal cost could still win on age).
            if best.is_some_and(|(t, ..)| est.lower_bound(nearest, now) > t) {
                break;
            }
            consider(id, &mut best);
        }
        best.map(|(.., id)| m.requests[&id])
    }

    fn dispatch(&mut self, id: RequestId, _now: Nanos) -> Option<Request> {
        self.remove(id)
    }

    fn len(&self) -> usize {
        match &self.pending {
            Pending::Few(v) => v.len(),
            Pending::Many(m) => m.requests.len(),
        }
    }
}

/// Default age bound of Aged-SPTF: the paper's 1 s per-request latency bound (section 4).
pub const DEFAULT_AGE_BOUND: Nanos = SEC;

/// SPTF whose oldest request wins once it has waited `age_bound`.
#[derive(Debug)]
pub struct AgedSptf {
    /// The pending requests, kept by age too when there are many.
    sptf: Sptf,
    age_bound: Nanos,
    overrode: bool,
}

impl AgedSptf {
    pub fn new(age_bound: Nanos) -> Self {
        Self {
            sptf: Sptf {
                by_age: true,
                ..Sptf::new()
            },
            age_bound,
            overrode: false,
        }
    }

    fn oldest(&self) -> Option<(Nanos, RequestId)> {
        self.sptf.oldest()
    }

    pub fn age_bound(&self) -> Nanos {
        self.age_bound
    }
}

impl Policy for AgedSptf {
    fn enqueue(&mut self, req: Request, now: Nanos) {
        self.sptf.enqueue(req, now);
    }

    fn choose(&mut self, est: &dyn PositionEstimator, now: Nanos) -> Option<Request> {
        let (issued, oldest) = self.oldest()?;
        // The override is a hard bound rather than a gradual priority boost: it is what the
        // paper configured ("bounded per-request latency of 1 second"), and it makes the
        // latency guarantee a property one can test.
        self.overrode = now.saturating_sub(issued) >= self.age_bound;
        if self.overrode {
            self.sptf.get(oldest).copied()
        } else {
            self.sptf.choose(est, now)
        }
    }

    fn dispatch(&mut self, id: RequestId, now: Nanos) -> Option<Request> {
        self.sptf.dispatch(id, now)
    }

    fn len(&self) -> usize {
        self.sptf.len()
    }

    fn next_change(&self) -> Option<Nanos> {
        self.oldest()
            .map(|(issued, _)| issued.saturating_add(self.age_bound))
    }
}

impl Aging for AgedSptf {
    fn aging_overrode(&self) -> bool {
        self.overrode
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testutil::{estimator_at, head_at, pending, req};
    use proptest::prelude::*;

    proptest! {
        /// The walk outward from the head with the estimator's lower bound chooses what a
        /// pass over every pending request chooses (least time, then oldest, then lowest
        /// id), with the seek estimator, with a curve that is not monotone, with an
        /// estimator that gives no bound (whose choice is a pass in sector order) and with
        /// one whose bound leaves out ranges a cache holds; sectors repeat, so ties are
        /// exercised; requests leave as they are chosen.
        #[test]
        fn the_bounded_walk_chooses_what_a_full_pass_chooses(
            reqs in proptest::collection::vec((0u64..300_000, 0u64..50), 1..200),
            crowded in any::<bool>(),
            head in 0u64..300_000,
            estimator in 0u8..4,
            picks in 1usize..20,
        ) {
            let mut p = Sptf::new();
            let mut all = pending(&reqs, crowded, head);
            for r in &all {
                p.enqueue(*r, 0);
            }
            let mut head = head;
            for _ in 0..picks.min(all.len()) {
                let est = estimator_at(estimator, head);
                let walk = p.choose(est.as_ref(), 100).unwrap();
                let pass = shortest_positioning(all.iter(), est.as_ref(), 100).unwrap();
                prop_assert_eq!(walk.id, pass.id);
                p.dispatch(walk.id, 100).unwrap();
                all.retain(|r| r.id != walk.id);
                head = walk.end();
            }
            prop_assert_eq!(p.len(), all.len());
        }
    }

    /// A pool that grows past what the vector holds and shrinks back: every choice is a full
    /// pass's, and the oldest request is found in either form.
    #[test]
    fn the_pool_chooses_alike_in_either_form() {
        let mut p = AgedSptf::new(SEC);
        let mut all: Vec<Request> = (0..FEW as u64 + 8)
            .map(|i| req(i + 1, i as u32, (i * 7_919) % 5_000, (i * 31) % 17))
            .collect();
        for r in &all {
            p.enqueue(*r, 0);
        }
        let mut head = 2_500;
        while !all.is_empty() {
            let oldest = all.iter().map(|r| (r.issued, r.id)).min();
            assert_eq!(p.oldest(), oldest);
            let est = head_at(head);
            let chosen = p.choose(&est, 100).unwrap();
            let pass = shortest_positioning(all.iter(), &est, 100).unwrap();
            assert_eq!(chosen.id, pass.id);
            p.dispatch(chosen.id, 100).unwrap();
            all.retain(|r| r.id != chosen.id);
            head = chosen.end();
        }
        assert!(p.is_empty());
    }

    /// Requests leaving from behind the oldest stay in the age order only until the front
    /// passes them or they outnumber the pending ones: the oldest is still found, and the
    /// order stays within twice the pending requests (and 64).
    #[test]
    fn requests_gone_from_the_age_order_do_not_pile_up() {
        let mut p = AgedSptf::new(SEC);
        for i in 0..300u64 {
            p.enqueue(req(i + 1, i as u32, i * 1_000, i), i);
        }
        // Everyone but the oldest leaves, newest first.
        for i in (1..300u64).rev() {
            p.sptf.dispatch(RequestId(i + 1), 300).unwrap();
            assert_eq!(p.oldest(), Some((0, RequestId(1))));
            if let Pending::Many(m) = &p.sptf.pending {
                assert!(m.by_age.len() <= 2 * m.requests.len() + 64);
            }
        }
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn sptf_takes_the_cheapest_positioning() {
        let mut p = Sptf::new();
        p.enqueue(req(1, 1, 100_000, 0), 0);
        p.enqueue(req(2, 2, 1_000, 0), 0);
        p.enqueue(req(3, 3, 60_000, 0), 0);
        assert_eq!(p.choose(&head_at(50_000), 0).unwrap().id, RequestId(3));
        assert_eq!(p.choose(&head_at(0), 0).unwrap().id, RequestId(2));
    }

    #[test]
    fn aged_sptf_lets_an_overdue_request_overrule_sptf() {
        let mut p = AgedSptf::new(SEC);
        p.enqueue(req(1, 1, 9_000_000, 0), 0);
        p.enqueue(req(2, 2, 10, SEC / 2), SEC / 2);
        let est = head_at(0);
        assert_eq!(p.choose(&est, SEC - 1).unwrap().id, RequestId(2));
        assert!(!p.aging_overrode());
        assert_eq!(p.next_change(), Some(SEC));
        assert_eq!(p.choose(&est, SEC).unwrap().id, RequestId(1));
        assert!(p.aging_overrode());
    }

    #[test]
    fn an_overdue_request_decides_even_when_sptf_would_pick_it_too() {
        // Whatever arrives, the overdue request goes next: aging, not SPTF, made this choice.
        let mut p = AgedSptf::new(SEC);
        p.enqueue(req(1, 1, 10, 0), 0);
        p.enqueue(req(2, 2, 9_000_000, SEC / 2), SEC / 2);
        assert_eq!(p.choose(&head_at(0), SEC).unwrap().id, RequestId(1));
        assert!(p.aging_overrode());
    }
}
