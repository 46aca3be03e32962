//! Base scheduling policies. Each one only orders requests: none of them knows anticipation
//! exists (section 3 of the paper: "the original disk scheduler, which implements the
//! scheduling policy and is unaware of anticipatory scheduling"). The anticipation core
//! ([`crate::Anticipatory`]) wraps any of them.
//!
//! | policy | orders by |
//! |---|---|
//! | [`Fcfs`] (`noop`) | arrival |
//! | [`Sstf`] | seek distance from the head |
//! | [`Clook`] | one-way sweep up the disk, then back to the lowest request |
//! | [`Look`] | sweep up, then down (the elevator) |
//! | [`Sptf`] | estimated positioning time |
//! | [`AgedSptf`] | positioning time, unless a request has waited past the age bound |
//! | [`RwSptf`] | synchronous requests before write-back, each by positioning time less a credit for the wait; write batches on expiry |
//! | [`Stride`] | smallest virtual clock among classes (service time / weight) |
//! | [`Yfq`] | smallest finish tag among classes (sectors / weight) |
//! | [`Lottery`] | a draw weighted by the classes' weights |
//! | [`RelaxedStride`] | SPTF among the classes within `tau` of the smallest virtual clock |
//! | [`Sliced`] | classes in turns of a slice, by virtual clock (disk time or bytes); any policy within a class |

mod aged;
mod classes;
mod fcfs;
mod lottery;
mod rw;
mod scan;
mod sector_index;
mod sliced;
mod sptf;
mod stride;
mod yfq;

pub use classes::DEFAULT_REJOIN_AFTER;
pub use fcfs::Fcfs;
pub use lottery::Lottery;
pub use rw::{RwSptf, DEFAULT_READ_BATCH_EXPIRE, DEFAULT_WRITE_BATCH_EXPIRE, DEFAULT_WRITE_EXPIRE};
pub use scan::{Clook, Look, Sstf};
pub use sliced::{ShareUnit, Sliced, DEFAULT_SLICE};
pub use sptf::{AgedSptf, Sptf, DEFAULT_AGE_BOUND};
pub use stride::{RelaxedStride, Stride, DEFAULT_TAU};
pub use yfq::Yfq;

use crate::estimator::PositionEstimator;
use crate::request::{ClassId, ContextId, Nanos, Request, RequestId};

/// A base policy: holds pending requests and picks the next one.
///
/// The anticipation core may call [`choose`](Self::choose) several times before it
/// [`dispatch`](Self::dispatch)es (each arrival during a wait asks again), so `choose` must not
/// consume anything it cannot give back.
pub trait Policy: Send {
    /// A request arrives.
    fn enqueue(&mut self, req: Request, now: Nanos);

    /// The request this policy would send to the device now, left in place.
    fn choose(&mut self, est: &dyn PositionEstimator, now: Nanos) -> Option<Request>;

    /// Removes and returns request `id`, which [`choose`](Self::choose) returned. Returns `None`
    /// only if the policy does not hold it (a driver bug, never a normal outcome).
    fn dispatch(&mut self, id: RequestId, now: Nanos) -> Option<Request>;

    /// The device finished `req`, which kept it busy for `service`.
    fn completed(&mut self, _req: &Request, _service: Nanos, _now: Nanos) {}

    /// As [`completed`](Self::completed), told also how much of `service` the device spent on
    /// `req` itself (`own`): the rest went first to work it had taken before
    /// ([`PositionEstimator::committed`]: the destage of writes its cache acknowledged). By
    /// default the whole service is charged, the destage going to whoever followed the
    /// writes: a policy that shares the disk among classes, the write-back's among them, is
    /// not told whose the destage is either way, and Stride's share for the write-back class
    /// against a reader (CAS Table 1, weight 1:1) fell from its half of the disk to 17%
    /// charged `own`. `as-rw-sptf`'s floor, which counts only synchronous contexts, charges
    /// `own`.
    fn completed_own(&mut self, req: &Request, service: Nanos, _own: Nanos, now: Nanos) {
        self.completed(req, service, now);
    }

    /// Whether the policy uses [`completed_own`](Self::completed_own)'s `own`: finding it asks
    /// the estimator a question at every dispatch (two of the device model's positioning
    /// walks with the exact one), which policies that charge the whole service are spared.
    fn charges_own_time(&self) -> bool {
        false
    }

    /// Number of requests held.
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A time at which [`choose`](Self::choose) may answer differently with nothing else
    /// happening (a request reaching its age bound). The core wakes up for it while waiting.
    fn next_change(&self) -> Option<Nanos> {
        None
    }

    /// Weight for proportional sharing; policies that do not share by class ignore it.
    fn set_class_weight(&mut self, _class: ClassId, _weight: u32) {}
}

/// What Aged-SPTF exposes to its anticipation heuristic.
pub trait Aging {
    /// Whether the last [`Policy::choose`] was decided by aging: it picked a request past its
    /// age bound, which stays the choice whatever else arrives.
    fn aging_overrode(&self) -> bool;

    /// What a gradual aging credited the last choice for its wait, ns of positioning time: a
    /// request that arrives now must beat the candidate's positioning time less this. 0 for
    /// a policy whose aging is a bound.
    fn aging_credit(&self) -> Nanos {
        0
    }

    /// Whether `ctx` (of `class`) had so little of the disk lately that the policy will serve
    /// its next request sooner than its place would: a floor under its share. false for a
    /// policy with no such floor.
    fn starved(&self, _ctx: ContextId, _class: ClassId) -> bool {
        false
    }
}

/// What proportional-share policies expose to their anticipation heuristic (section 3.4):
/// virtual clocks that measure the service each class received relative to its weight.
pub trait VirtualClocks {
    /// The class's virtual clock, if the policy knows the class.
    fn class_clock(&self, class: ClassId) -> Option<u64>;
    /// The smallest virtual clock among classes with pending requests (the paper's *minclock*).
    fn min_pending_clock(&self) -> Option<u64>;
    /// Requests the class has pending.
    fn class_pending(&self, class: ClassId) -> usize;
    /// How far above *minclock* a class may run and still be served (tau for relaxed Stride,
    /// 0 for the strict policies).
    fn relaxation(&self) -> u64 {
        0
    }
}

/// Up to this many pending requests a policy keeps in a vector and decides by a pass over
/// them (SPTF, the scan policies, `as-rw-sptf`'s queues): for a handful of processes a push and
/// a pass cost less than the tree and hash operations of the indexes. Past it the requests
/// move to the indexes, and back once half as many are left, so that a pool that hovers at
/// the limit does not move at every request.
pub(crate) const FEW: usize = 32;

/// Index of the request with the smallest estimated positioning time, ties to the oldest.
/// This is the whole of SPTF; it is linear in the number of requests, which the benchmark
/// `dispatch_decision` checks stays the cost of a decision.
pub(crate) fn shortest_positioning<'a>(
    reqs: impl Iterator<Item = &'a Request>,
    est: &dyn PositionEstimator,
    now: Nanos,
) -> Option<Request> {
    let mut best: Option<(Nanos, Nanos, RequestId, &Request)> = None;
    for r in reqs {
        let key = (est.positioning_time(r, now), r.issued, r.id);
        if best.is_none_or(|(t, i, id, _)| key < (t, i, id)) {
            best = Some((key.0, key.1, key.2, r));
        }
    }
    best.map(|(_, _, _, r)| *r)
}

#[cfg(test)]
pub(crate) mod testutil {
    use crate::estimator::{
        CurveEstimator, CurvePoint, PositionEstimator, PositioningCurve, SeekDistanceEstimator,
    };
    use crate::request::{ClassId, ContextId, Nanos, Op, Request, RequestId};

    pub fn req(id: u64, ctx: u32, sector: u64, issued: Nanos) -> Request {
        Request {
            id: RequestId(id),
            context: ContextId(ctx),
            class: ClassId(ctx),
            op: Op::Read,
            sector,
            sectors: 128,
            sync: true,
            issued,
            continuation: false,
        }
    }

    /// The estimators the property tests of the walks try, by `kind`: the seek estimator, a
    /// curve that is not monotone, one that gives no bound, and one whose bound leaves out
    /// what a cache holds, each with the head at `head`.
    pub fn estimator_at(kind: u8, head: u64) -> Box<dyn PositionEstimator> {
        match kind {
            0 => Box::new(head_at(head)),
            1 => Box::new(bumpy_curve_at(head)),
            2 => Box::new(Unbounded::at(head)),
            _ => Box::new(Cached::at(head)),
        }
    }

    /// Crowded: a few hundred sectors around the head, so that equal distances (the same
    /// sector twice, or one each side) come up and age must break the tie.
    pub fn crowd(crowded: bool, head: u64, sector: u64) -> u64 {
        if crowded {
            head.saturating_sub(150) + sector % 300
        } else {
            sector
        }
    }

    /// The property tests' pending requests: one per context, ids from 1, at `(sector,
    /// issued)`, sectors crowded about `head` if `crowded`.
    pub fn pending(reqs: &[(u64, Nanos)], crowded: bool, head: u64) -> Vec<Request> {
        reqs.iter()
            .enumerate()
            .map(|(i, &(sector, issued))| {
                req(i as u64 + 1, i as u32, crowd(crowded, head, sector), issued)
            })
            .collect()
    }

    pub fn head_at(sector: u64) -> SeekDistanceEstimator {
        use crate::estimator::PositionEstimator;
        let mut e = SeekDistanceEstimator::new();
        if sector > 0 {
            let mut r = req(u64::MAX, 0, sector, 0);
            r.sectors = 0;
            e.dispatched(&r, 0);
        }
        e
    }

    /// A curve that falls somewhere (a calibration can), so that the bound must look past
    /// the distance it is asked about.
    pub fn bumpy_curve_at(head: u64) -> CurveEstimator {
        let points = [
            (0, 100.0),
            (1_000, 4_000.0),
            (5_000, 2_500.0),
            (200_000, 9_000.0),
        ]
        .iter()
        .map(|&(distance, time_us)| CurvePoint { distance, time_us })
        .collect();
        let mut e = CurveEstimator::new(PositioningCurve {
            points,
            source: None,
            accuracy_within_20pct: None,
            calibration: None,
        });
        let mut r = req(u64::MAX, 0, head, 0);
        r.sectors = 0;
        e.dispatched(&r, 0);
        e
    }

    /// The seek estimator with a cache, as a device model's exact estimator: a request
    /// starting in the first 3,000 sectors of every 100,000 costs next to nothing wherever
    /// the head is, and the bound leaves those ranges out.
    pub struct Cached {
        seek: SeekDistanceEstimator,
    }

    impl Cached {
        pub fn at(head: u64) -> Self {
            Self {
                seek: head_at(head),
            }
        }

        fn ranges(&self) -> impl Iterator<Item = (u64, u64)> {
            (0..40u64).map(|k| (k * 100_000, k * 100_000 + 3_000))
        }
    }

    impl PositionEstimator for Cached {
        fn name(&self) -> &str {
            "cached"
        }
        fn head(&self) -> u64 {
            self.seek.head()
        }
        fn positioning_time(&self, req: &Request, now: Nanos) -> Nanos {
            let hit = self
                .ranges()
                .any(|(start, end)| (start..end).contains(&req.sector));
            if hit {
                // Hits differ by where they lie, so that they do not tie.
                req.sector % 7
            } else {
                self.seek.positioning_time(req, now)
            }
        }
        fn dispatched(&mut self, req: &Request, now: Nanos) {
            self.seek.dispatched(req, now)
        }
        fn lower_bound(&self, distance: u64, now: Nanos) -> Nanos {
            self.seek.lower_bound(distance, now)
        }
        fn unbounded(&self, _now: Nanos, visit: &mut dyn FnMut(u64, u64)) {
            for (start, end) in self.ranges() {
                visit(start, end);
            }
        }
    }

    /// The seek estimator without its bound, as an estimator may have none;
    /// it counts the positioning questions it is asked, each a walk through the model there.
    pub struct Unbounded {
        seek: SeekDistanceEstimator,
        pub asked: std::cell::Cell<usize>,
    }

    impl Unbounded {
        pub fn at(head: u64) -> Self {
            Self {
                seek: head_at(head),
                asked: Default::default(),
            }
        }
    }

    impl PositionEstimator for Unbounded {
        fn name(&self) -> &str {
            "unbounded"
        }
        fn head(&self) -> u64 {
            self.seek.head()
        }
        fn positioning_time(&self, req: &Request, now: Nanos) -> Nanos {
            self.asked.set(self.asked.get() + 1);
            self.seek.positioning_time(req, now)
        }
        fn dispatched(&mut self, req: &Request, now: Nanos) {
            self.seek.dispatched(req, now)
        }
    }
}
