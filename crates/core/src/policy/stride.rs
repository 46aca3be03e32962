//! Stride scheduling adapted to the disk (section 2.2.3 of the thesis), and its relaxed form
//! with seek reduction inside a window of virtual time (section 3.5 of the paper, after [29]).

use super::classes::{ClassTable, DEFAULT_REJOIN_AFTER};
use super::{shortest_positioning, Policy, VirtualClocks};
use crate::estimator::PositionEstimator;
use crate::request::{ClassId, Nanos, Request, RequestId, SEC};

/// Serves the class with the smallest virtual clock, its requests in arrival order.
#[derive(Debug)]
pub struct Stride {
    t: ClassTable,
}

impl Default for Stride {
    fn default() -> Self {
        Self::new(DEFAULT_REJOIN_AFTER)
    }
}

impl Stride {
    pub fn new(rejoin_after: Nanos) -> Self {
        Self {
            t: ClassTable::new(rejoin_after),
        }
    }
}

impl Policy for Stride {
    fn enqueue(&mut self, req: Request, now: Nanos) {
        self.t.enqueue(req, now);
    }

    fn choose(&mut self, _est: &dyn PositionEstimator, _now: Nanos) -> Option<Request> {
        // Ties go to the class whose head request is oldest, then to the lower class id.
        let class = self.t.first_ready()?;
        self.t.classes[&class].queue.front().copied()
    }

    fn dispatch(&mut self, id: RequestId, _now: Nanos) -> Option<Request> {
        self.t.remove(id)
    }

    fn completed(&mut self, req: &Request, service: Nanos, now: Nanos) {
        self.t.completed(req, service, now);
    }

    fn len(&self) -> usize {
        self.t.pending
    }

    fn set_class_weight(&mut self, class: ClassId, weight: u32) {
        self.t.set_weight(class, weight);
    }
}

impl VirtualClocks for Stride {
    fn class_clock(&self, class: ClassId) -> Option<u64> {
        self.t.clock(class)
    }
    fn min_pending_clock(&self) -> Option<u64> {
        self.t.peek_min_queued_clock()
    }
    fn class_pending(&self, class: ClassId) -> usize {
        self.t.class_pending(class)
    }
}

/// Default relaxation window of relaxed Stride: 1 s, the paper's tau (section 4.7).
pub const DEFAULT_TAU: Nanos = SEC;

/// Stride relaxed by `tau`: among the classes whose clock is within `tau` of the smallest,
/// serve the request with the shortest positioning time. Proportions hold on a time scale of
/// `tau` instead of one request, and that slack is room for seek reduction.
#[derive(Debug)]
pub struct RelaxedStride {
    t: ClassTable,
    tau: u64,
}

impl RelaxedStride {
    pub fn new(tau: Nanos, rejoin_after: Nanos) -> Self {
        Self {
            t: ClassTable::new(rejoin_after),
            tau,
        }
    }
}

impl Policy for RelaxedStride {
    fn enqueue(&mut self, req: Request, now: Nanos) {
        self.t.enqueue(req, now);
    }

    fn choose(&mut self, est: &dyn PositionEstimator, now: Nanos) -> Option<Request> {
        let first = self.t.first_ready()?;
        let limit = self.t.classes[&first].clock.saturating_add(self.tau);
        // One pass in class order: SPTF looks at every eligible request anyway, and a walk of
        // the map is cheaper than a lookup per entry of the clock index.
        let eligible = self
            .t
            .queued()
            .filter(|(_, c)| c.clock <= limit)
            .flat_map(|(_, c)| c.queue.iter());
        shortest_positioning(eligible, est, now)
    }

    fn dispatch(&mut self, id: RequestId, _now: Nanos) -> Option<Request> {
        self.t.remove(id)
    }

    fn completed(&mut self, req: &Request, service: Nanos, now: Nanos) {
        self.t.completed(req, service, now);
    }

    fn len(&self) -> usize {
        self.t.pending
    }

    fn set_class_weight(&mut self, class: ClassId, weight: u32) {
        self.t.set_weight(class, weight);
    }
}

impl VirtualClocks for RelaxedStride {
    fn class_clock(&self, class: ClassId) -> Option<u64> {
        self.t.clock(class)
    }
    fn min_pending_clock(&self) -> Option<u64> {
        self.t.peek_min_queued_clock()
    }
    fn class_pending(&self, class: ClassId) -> usize {
        self.t.class_pending(class)
    }
    fn relaxation(&self) -> u64 {
        self.tau
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testutil::{head_at, req};
    use crate::request::{ClassId, MS};

    /// Serves `n` requests with every class always backlogged, each taking 1 ms.
    fn shares(p: &mut dyn Policy, weights: &[u32], n: usize) -> Vec<usize> {
        for (i, &w) in weights.iter().enumerate() {
            p.set_class_weight(ClassId(i as u32), w);
        }
        let mut next = 0u64;
        let mut now = 0;
        let mut served = vec![0; weights.len()];
        for c in 0..weights.len() {
            for _ in 0..2 {
                p.enqueue(req(next, c as u32, next * 1000, now), now);
                next += 1;
            }
        }
        let est = head_at(0);
        for _ in 0..n {
            let r = p.choose(&est, now).unwrap();
            p.dispatch(r.id, now).unwrap();
            now += MS;
            p.completed(&r, MS, now);
            served[r.class.0 as usize] += 1;
            p.enqueue(req(next, r.class.0, next * 1000, now), now);
            next += 1;
        }
        served
    }

    #[test]
    fn stride_divides_service_by_weight_when_backlogged() {
        let s = shares(&mut Stride::default(), &[100, 200], 300);
        assert_eq!(s, vec![100, 200]);
        let s = shares(&mut Stride::default(), &[100, 100, 300], 500);
        assert_eq!(s, vec![100, 100, 300]);
    }

    /// Class 0 is served once at time 0, then stays away while class 1 is served `n` times
    /// back to back (1 ms each); returns class 0's clock before and after it comes back.
    fn clock_across_absence(n: u64) -> (u64, u64, u64) {
        let mut p = Stride::new(15 * MS);
        let est = head_at(0);
        p.enqueue(req(0, 0, 0, 0), 0);
        p.enqueue(req(1, 1, 0, 0), 0);
        let r = p.choose(&est, 0).unwrap();
        assert_eq!(r.class, ClassId(0));
        p.dispatch(r.id, 0);
        p.completed(&r, MS, MS);
        let mut now = MS;
        for i in 0..n {
            let r = p.choose(&est, now).unwrap();
            p.dispatch(r.id, now);
            p.enqueue(req(2 + i, 1, 0, now), now);
            now += MS;
            p.completed(&r, MS, now);
        }
        let before = p.class_clock(ClassId(0)).unwrap();
        p.enqueue(req(1000, 0, 0, now), now);
        (before, p.class_clock(ClassId(0)).unwrap(), p.t.vtime)
    }

    #[test]
    fn a_short_absence_keeps_the_lag() {
        // Away 5 ms, under rejoin_after: the lag behind class 1 survives.
        let (before, after, vtime) = clock_across_absence(5);
        assert_eq!(before, MS);
        assert_eq!(after, before);
        assert!(vtime > after);
    }

    #[test]
    fn a_long_absence_forfeits_the_lag() {
        // Away 30 ms: class 0 comes back at the virtual time.
        let (before, after, vtime) = clock_across_absence(30);
        assert_eq!(before, MS);
        assert_eq!(after, vtime);
        assert!(after > 20 * MS);
    }

    #[test]
    fn relaxed_stride_takes_the_nearest_request_within_tau() {
        let mut p = RelaxedStride::new(SEC, DEFAULT_REJOIN_AFTER);
        p.enqueue(req(1, 0, 1_000_000, 0), 0);
        p.enqueue(req(2, 1, 10, 0), 0);
        // Both clocks are 0: the nearer request wins regardless of class.
        assert_eq!(p.choose(&head_at(0), 0).unwrap().id, RequestId(2));
        assert_eq!(p.choose(&head_at(1_000_000), 0).unwrap().id, RequestId(1));
        // Class 1 runs more than tau ahead: only class 0 is eligible.
        let r = p.choose(&head_at(0), 0).unwrap();
        p.dispatch(r.id, 0);
        p.completed(&r, 2 * SEC, 2 * SEC);
        p.enqueue(req(3, 1, 20, 2 * SEC), 2 * SEC);
        assert_eq!(p.choose(&head_at(0), 2 * SEC).unwrap().id, RequestId(1));
    }
}
