//! Seek-ordered policies that only look at sector numbers: SSTF, C-LOOK and LOOK.
//!
//! All three keep requests sorted by sector, so a decision costs O(log n).

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::{Policy, FEW};
use crate::estimator::PositionEstimator;
use crate::request::{Nanos, Request, RequestId};

/// Requests sorted by (sector, id), shared by the three policies.
///
/// Few requests (a handful of processes, the common case) are kept in a sorted vector: a
/// binary search finds a place, and moving the few requests above it costs less than the
/// tree insert and hash insert (and at dispatch, the hash and tree removals) of the indexed
/// form, which many requests need to keep a decision at O(log n).
#[derive(Debug)]
enum Sorted {
    Few(Vec<Request>),
    Many {
        by_sector: BTreeMap<(u64, RequestId), Request>,
        /// Looked up on every dispatch: keyed by an id, so the fast hash, not SipHash.
        sector_of: FxHashMap<RequestId, u64>,
    },
}

impl Default for Sorted {
    fn default() -> Self {
        Sorted::Few(Vec::new())
    }
}

fn key(r: &Request) -> (u64, RequestId) {
    (r.sector, r.id)
}

impl Sorted {
    fn insert(&mut self, req: Request) {
        match self {
            Sorted::Few(v) if v.len() < FEW => {
                let i = v.partition_point(|r| key(r) < key(&req));
                v.insert(i, req);
            }
            Sorted::Few(v) => {
                let mut by_sector: BTreeMap<_, _> = v.drain(..).map(|r| (key(&r), r)).collect();
                by_sector.insert(key(&req), req);
                let sector_of = by_sector.values().map(|r| (r.id, r.sector)).collect();
                *self = Sorted::Many {
                    by_sector,
                    sector_of,
                };
            }
            Sorted::Many {
                by_sector,
                sector_of,
            } => {
                sector_of.insert(req.id, req.sector);
                by_sector.insert(key(&req), req);
            }
        }
    }

    fn remove(&mut self, id: RequestId) -> Option<Request> {
        match self {
            Sorted::Few(v) => {
                let i = v.iter().position(|r| r.id == id)?;
                Some(v.remove(i))
            }
            Sorted::Many {
                by_sector,
                sector_of,
            } => {
                let sector = sector_of.remove(&id)?;
                let req = by_sector.remove(&(sector, id));
                if sector_of.len() <= FEW / 2 {
                    *self = Sorted::Few(std::mem::take(by_sector).into_values().collect());
                }
                req
            }
        }
    }

    /// First request at or above `sector`.
    fn at_or_above(&self, sector: u64) -> Option<Request> {
        match self {
            Sorted::Few(v) => v.get(v.partition_point(|r| r.sector < sector)).copied(),
            Sorted::Many { by_sector, .. } => by_sector
                .range((sector, RequestId(0))..)
                .next()
                .map(|(_, r)| *r),
        }
    }

    /// Last request strictly below `sector`.
    fn below(&self, sector: u64) -> Option<Request> {
        match self {
            Sorted::Few(v) => {
                let i = v.partition_point(|r| r.sector < sector);
                i.checked_sub(1).map(|i| v[i])
            }
            Sorted::Many { by_sector, .. } => by_sector
                .range(..(sector, RequestId(0)))
                .next_back()
                .map(|(_, r)| *r),
        }
    }

    /// Last request at or below `sector` (the highest id of those at it).
    fn at_or_below(&self, sector: u64) -> Option<Request> {
        match self {
            Sorted::Few(v) => {
                let i = v.partition_point(|r| r.sector <= sector);
                i.checked_sub(1).map(|i| v[i])
            }
            Sorted::Many { by_sector, .. } => by_sector
                .range(..=(sector, RequestId(u64::MAX)))
                .next_back()
                .map(|(_, r)| *r),
        }
    }

    fn lowest(&self) -> Option<Request> {
        match self {
            Sorted::Few(v) => v.first().copied(),
            Sorted::Many { by_sector, .. } => by_sector.values().next().copied(),
        }
    }

    fn len(&self) -> usize {
        match self {
            Sorted::Few(v) => v.len(),
            Sorted::Many { sector_of, .. } => sector_of.len(),
        }
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
                self.q.at_or_below(head)
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

    /// The sorted vector and the indexes answer alike: a pool that grows past what the
    /// vector holds and shrinks back (sectors repeat, so ties on the sector are exercised)
    /// gives every query the answer a pass over a plain list gives.
    #[test]
    fn few_and_many_answer_alike() {
        let mut q = Sorted::default();
        let mut all: Vec<Request> = Vec::new();
        let mut next = 0u64;
        // Up to 45 requests, down to 5, up again past the limit, and empty.
        for target in [45usize, 5, 40, 0] {
            while all.len() != target {
                if all.len() < target {
                    next += 1;
                    let r = req(next, 0, (next * 7_919) % 600, 0);
                    q.insert(r);
                    all.push(r);
                } else {
                    let id = all[(next as usize * 13) % all.len()].id;
                    next += 1;
                    assert_eq!(q.remove(id).map(|r| r.id), Some(id));
                    all.retain(|r| r.id != id);
                }
                for sector in [0, 150, 299, 300, 601] {
                    let up = all
                        .iter()
                        .filter(|r| r.sector >= sector)
                        .min_by_key(|r| key(r));
                    let down = all
                        .iter()
                        .filter(|r| r.sector < sector)
                        .max_by_key(|r| key(r));
                    let at = all
                        .iter()
                        .filter(|r| r.sector <= sector)
                        .max_by_key(|r| key(r));
                    assert_eq!(q.at_or_above(sector).map(|r| r.id), up.map(|r| r.id));
                    assert_eq!(q.below(sector).map(|r| r.id), down.map(|r| r.id));
                    assert_eq!(q.at_or_below(sector).map(|r| r.id), at.map(|r| r.id));
                }
                let lowest = all.iter().min_by_key(|r| key(r)).map(|r| r.id);
                assert_eq!(q.lowest().map(|r| r.id), lowest);
                assert_eq!(q.len(), all.len());
            }
        }
    }
}
