//! Seek-ordered policies that only look at sector numbers: SSTF, C-LOOK and LOOK.
//!
//! All three keep requests sorted by sector, so a decision costs O(log n).

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::Policy;
use crate::estimator::PositionEstimator;
use crate::request::{Nanos, Request, RequestId};

/// Requests sorted by (sector, id), shared by the three policies.
#[derive(Debug, Default)]
struct Sorted {
    by_sector: BTreeMap<(u64, RequestId), Request>,
    /// Looked up on every dispatch: keyed by an id, so the fast hash, not SipHash.
    sector_of: FxHashMap<RequestId, u64>,
}

impl Sorted {
    fn insert(&mut self, req: Request) {
        self.sector_of.insert(req.id, req.sector);
        self.by_sector.insert((req.sector, req.id), req);
    }

    fn remove(&mut self, id: RequestId) -> Option<Request> {
        let sector = self.sector_of.remove(&id)?;
        self.by_sector.remove(&(sector, id))
    }

    /// First request at or above `sector`.
    fn at_or_above(&self, sector: u64) -> Option<Request> {
        self.by_sector
            .range((sector, RequestId(0))..)
            .next()
            .map(|(_, r)| *r)
    }

    /// Last request strictly below `sector`.
    fn below(&self, sector: u64) -> Option<Request> {
        self.by_sector
            .range(..(sector, RequestId(0)))
            .next_back()
            .map(|(_, r)| *r)
    }

    fn lowest(&self) -> Option<Request> {
        self.by_sector.values().next().copied()
    }

    fn len(&self) -> usize {
        self.by_sector.len()
    }
}

/// Shortest Seek Time First: the request nearest the head in sectors, either direction.
#[derive(Debug, Default)]
pub struct Sstf {
    q: Sorted,
}

impl Sstf {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Policy for Sstf {
    fn enqueue(&mut self, req: Request, _now: Nanos) {
        self.q.insert(req);
    }

    fn choose(&mut self, est: &dyn PositionEstimator, _now: Nanos) -> Option<Request> {
        let head = est.head();
        match (self.q.at_or_above(head), self.q.below(head)) {
            (Some(up), Some(down)) => {
                // Ties go forward, the direction the platter's read-ahead favours.
                if up.sector - head <= head - down.sector {
                    Some(up)
                } else {
                    Some(down)
                }
            }
            (up, down) => up.or(down),
        }
    }

    fn dispatch(&mut self, id: RequestId, _now: Nanos) -> Option<Request> {
        self.q.remove(id)
    }

    fn len(&self) -> usize {
        self.q.len()
    }
}

/// C-LOOK (cyclic SCAN): sweeps toward higher sectors serving everything in its path, then
/// jumps back to the lowest pending request. One direction only, so every request is reached
/// within one sweep, and sequential readers moving up the disk are served in their order.
#[derive(Debug, Default)]
pub struct Clook {
    q: Sorted,
}

impl Clook {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Policy for Clook {
    fn enqueue(&mut self, req: Request, _now: Nanos) {
        self.q.insert(req);
    }

    fn choose(&mut self, est: &dyn PositionEstimator, _now: Nanos) -> Option<Request> {
        self.q.at_or_above(est.head()).or_else(|| self.q.lowest())
    }

    fn dispatch(&mut self, id: RequestId, _now: Nanos) -> Option<Request> {
        self.q.remove(id)
    }

    fn len(&self) -> usize {
        self.q.len()
    }
}

/// LOOK (the elevator): sweeps up, serving everything in its path, and turns around when
/// nothing lies further in the current direction.
#[derive(Debug)]
pub struct Look {
    q: Sorted,
    up: bool,
}

impl Default for Look {
    fn default() -> Self {
        Self {
            q: Sorted::default(),
            up: true,
        }
    }
}

impl Look {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Policy for Look {
    fn enqueue(&mut self, req: Request, _now: Nanos) {
        self.q.insert(req);
    }

    fn choose(&mut self, est: &dyn PositionEstimator, _now: Nanos) -> Option<Request> {
        let head = est.head();
        let ahead = |up: bool| {
            if up {
                self.q.at_or_above(head)
            } else {
                // Going down, a request exactly at the head is still "in the path".
                self.q
                    .by_sector
                    .range(..=(head, RequestId(u64::MAX)))
                    .next_back()
                    .map(|(_, r)| *r)
            }
        };
        if let Some(r) = ahead(self.up) {
            return Some(r);
        }
        // Nothing further this way: reverse. Keeping the new direction is what makes this an
        // elevator rather than SSTF; `choose` may run again before the dispatch and must
        // answer the same, which it does because the reversal is remembered.
        self.up = !self.up;
        ahead(self.up)
    }

    fn dispatch(&mut self, id: RequestId, _now: Nanos) -> Option<Request> {
        self.q.remove(id)
    }

    fn len(&self) -> usize {
        self.q.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testutil::{head_at, req};

    fn ids(p: &mut dyn Policy, mut head: u64, n: usize) -> Vec<u64> {
        let mut out = Vec::new();
        for _ in 0..n {
            let est = head_at(head);
            let r = p.choose(&est, 0).unwrap();
            p.dispatch(r.id, 0).unwrap();
            head = r.end();
            out.push(r.id.0);
        }
        out
    }

    fn fill(p: &mut dyn Policy) {
        // Sectors: 1:2500, 2:5000, 3:200, 4:3000, 5:9000
        for (id, s) in [(1, 2500), (2, 5000), (3, 200), (4, 3000), (5, 9000)] {
            p.enqueue(req(id, id as u32, s, 0), 0);
        }
    }

    #[test]
    fn sstf_takes_the_nearest_either_way() {
        let mut p = Sstf::new();
        fill(&mut p);
        // From 2900: 3000 (100 away); from 3128: 2500 (628) beats 5000 (1872); from 2628:
        // 5000 (2372) beats 200 (2428); from 5128: 9000; then 200.
        assert_eq!(ids(&mut p, 2900, 5), vec![4, 1, 2, 5, 3]);
    }

    #[test]
    fn clook_sweeps_up_then_wraps_to_the_lowest() {
        let mut p = Clook::new();
        fill(&mut p);
        assert_eq!(ids(&mut p, 2900, 5), vec![4, 2, 5, 3, 1]);
    }

    #[test]
    fn look_sweeps_up_then_turns_around() {
        let mut p = Look::new();
        fill(&mut p);
        assert_eq!(ids(&mut p, 2900, 5), vec![4, 2, 5, 1, 3]);
    }
}
