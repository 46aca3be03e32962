//! The request containers every Linux elevator of the 2.6 era is built from: a list sorted by
//! start sector (the kernel's red-black `sort_list`) and a FIFO in arrival order with a
//! deadline per request (`fifo_list`), plus the one-way elevator with bounded back seeks that
//! AS, CFQ and BFQ share (`as_choose_req`, `cfq_choose_req`, `bfq_choose_req`).
//!
//! Deadline and AS keep one [`SortFifo`] per direction; CFQ and BFQ keep one per queue.

use std::collections::{BTreeMap, HashMap};

use crate::request::{Nanos, Request, RequestId};

/// Position of a request in the sorted list: its start sector, then its arrival order.
///
/// The kernel's rbtree cannot hold two requests with the same start sector: `elv_rb_add`
/// returns the one already there (an "alias") and the elevators move that alias straight to
/// the dispatch list. We keep both, the older first. Our requests come from a driver that has
/// already merged what it could, so an alias means two contexts reading the same block; the
/// older is then dispatched first when the elevator reaches that sector instead of at once.
type Key = (u64, u64);

/// Requests sorted by sector, and the same requests in arrival order with a FIFO deadline.
#[derive(Debug, Default)]
pub struct SortFifo {
    sorted: BTreeMap<Key, Request>,
    /// Arrival sequence -> (request, FIFO time). `list_add_tail` order.
    fifo: BTreeMap<u64, (RequestId, Nanos)>,
    keys: HashMap<RequestId, Key>,
    seq: u64,
}

impl SortFifo {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `req` to both lists; `fifo_time` is when it expires (`rq_set_fifo_time`).
    pub fn insert(&mut self, req: Request, fifo_time: Nanos) {
        self.seq += 1;
        let key = (req.sector, self.seq);
        self.keys.insert(req.id, key);
        self.fifo.insert(self.seq, (req.id, fifo_time));
        self.sorted.insert(key, req);
    }

    /// Takes `id` off both lists.
    pub fn remove(&mut self, id: RequestId) -> Option<Request> {
        let key = self.keys.remove(&id)?;
        self.fifo.remove(&key.1);
        self.sorted.remove(&key)
    }

    pub fn get(&self, id: RequestId) -> Option<&Request> {
        self.keys.get(&id).and_then(|k| self.sorted.get(k))
    }

    pub fn contains(&self, id: RequestId) -> bool {
        self.keys.contains_key(&id)
    }

    /// The oldest request and its FIFO time (`rq_entry_fifo(fifo_list.next)`).
    pub fn fifo_first(&self) -> Option<(&Request, Nanos)> {
        let (_, &(id, t)) = self.fifo.iter().next()?;
        self.get(id).map(|r| (r, t))
    }

    /// The request with the lowest sector (`rb_first`).
    pub fn first(&self) -> Option<&Request> {
        self.sorted.values().next()
    }

    /// The request after `id` in sector order (`rb_next`).
    pub fn latter(&self, id: RequestId) -> Option<&Request> {
        let key = *self.keys.get(&id)?;
        self.sorted
            .range((std::ops::Bound::Excluded(key), std::ops::Bound::Unbounded))
            .next()
            .map(|(_, r)| r)
    }

    /// The request before `id` in sector order (`rb_prev`).
    pub fn former(&self, id: RequestId) -> Option<&Request> {
        let key = *self.keys.get(&id)?;
        self.sorted.range(..key).next_back().map(|(_, r)| r)
    }

    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Request> {
        self.sorted.values()
    }
}

/// The one-way elevator with short backward seeks of AS, CFQ and BFQ.
///
/// "Strict one way elevator _except_ in the case where we allow short backward seeks which are
/// biased as twice the cost of a similar forward seek" (`as_choose_req`). A request behind the
/// head by at most `back_max` sectors costs `back_penalty` times its distance; one further
/// behind "wraps": it is only taken when nothing is ahead, lowest sector first, so the sweep
/// starts over from the bottom as C-LOOK would.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elevator {
    /// Longest backward seek, in sectors (AS: `MAXBACK` = 1024 * 1024; CFQ and BFQ:
    /// `back_seek_max` KiB, that is twice as many sectors).
    pub back_max: u64,
    /// Cost factor of a backward seek (`BACK_PENALTY`, `back_seek_penalty`).
    pub back_penalty: u64,
}

impl Elevator {
    /// Which of `r1` and `r2` to serve next with the head at `last`, ignoring time
    /// (`as_choose_req`, `cfq_choose_req`, `bfq_choose_req`). CFQ and BFQ also prefer a
    /// synchronous request to an asynchronous one; the lists AS compares hold one kind only,
    /// so the rule is the same for all three.
    pub fn choose<'a>(
        &self,
        last: u64,
        r1: Option<&'a Request>,
        r2: Option<&'a Request>,
    ) -> Option<&'a Request> {
        let (r1, r2) = match (r1, r2) {
            (None, r) | (r, None) => return r,
            (Some(a), Some(b)) if a.id == b.id => return Some(b),
            (Some(a), Some(b)) => (a, b),
        };
        match (super::is_sync(r1), super::is_sync(r2)) {
            (true, false) => return Some(r1),
            (false, true) => return Some(r2),
            _ => {}
        }
        let cost = |s: u64| -> Option<u64> {
            if s >= last {
                Some(s - last)
            } else if s.saturating_add(self.back_max) >= last {
                Some((last - s).saturating_mul(self.back_penalty))
            } else {
                None // behind the head beyond back_max: wraps
            }
        };
        let (s1, s2) = (r1.sector, r2.sector);
        Some(match (cost(s1), cost(s2)) {
            (Some(_), None) => r1,
            (None, Some(_)) => r2,
            // Both behind the head: start with the one further behind, so that only one
            // backward seek is needed.
            (None, None) => {
                if s1 <= s2 {
                    r1
                } else {
                    r2
                }
            }
            (Some(d1), Some(d2)) => {
                if d1 < d2 || (d1 == d2 && s1 >= s2) {
                    r1
                } else {
                    r2
                }
            }
        })
    }

    /// The request to serve after `id` (still in `q`), with the head at `last`: the better of
    /// its neighbours, the next one wrapping around to the lowest (`as_find_next_rq`,
    /// `cfq_find_next_rq`).
    pub fn find_next(&self, q: &SortFifo, id: RequestId, last: u64) -> Option<RequestId> {
        let next = q
            .latter(id)
            .or_else(|| q.first().filter(|first| first.id != id));
        let prev = q.former(id);
        self.choose(last, next, prev).map(|r| r.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{ClassId, ContextId, Op};

    fn req(id: u64, sector: u64) -> Request {
        Request {
            id: RequestId(id),
            context: ContextId(0),
            class: ClassId(0),
            op: Op::Read,
            sector,
            sectors: 8,
            sync: true,
            issued: 0,
            continuation: false,
        }
    }

    const AS: Elevator = Elevator {
        back_max: 1024 * 1024,
        back_penalty: 2,
    };

    #[test]
    fn a_short_back_seek_costs_twice_its_distance() {
        let (fwd, back) = (req(1, 1_000 + 300), req(2, 1_000 - 100));
        // 300 forward against 2 * 100 backward: the backward one is cheaper.
        assert_eq!(
            AS.choose(1_000, Some(&fwd), Some(&back)).unwrap().id,
            back.id
        );
        let back = req(2, 1_000 - 200);
        // 300 against 400: forward wins.
        assert_eq!(
            AS.choose(1_000, Some(&fwd), Some(&back)).unwrap().id,
            fwd.id
        );
    }

    #[test]
    fn a_request_beyond_back_max_waits_for_the_wrap() {
        let far_back = req(1, 0);
        let far_fwd = req(2, 100_000_000);
        let last = 2 * 1024 * 1024;
        assert_eq!(
            AS.choose(last, Some(&far_back), Some(&far_fwd)).unwrap().id,
            far_fwd.id
        );
        // Both wrapped: the lowest sector first.
        let also_back = req(3, 10);
        assert_eq!(
            AS.choose(last, Some(&also_back), Some(&far_back))
                .unwrap()
                .id,
            far_back.id
        );
    }

    #[test]
    fn sync_beats_async() {
        let sync = req(1, 900_000);
        let mut write = req(2, 1_001);
        write.op = Op::Write;
        write.sync = false;
        assert_eq!(
            AS.choose(1_000, Some(&write), Some(&sync)).unwrap().id,
            sync.id
        );
    }

    #[test]
    fn fifo_and_sort_orders_are_kept_apart() {
        let mut q = SortFifo::new();
        q.insert(req(1, 500), 10);
        q.insert(req(2, 100), 20);
        q.insert(req(3, 300), 30);
        q.insert(req(4, 300), 40);
        assert_eq!(q.first().unwrap().id, RequestId(2));
        assert_eq!(q.fifo_first().unwrap().0.id, RequestId(1));
        assert_eq!(q.latter(RequestId(3)).unwrap().id, RequestId(4));
        assert_eq!(q.former(RequestId(3)).unwrap().id, RequestId(2));
        assert_eq!(q.remove(RequestId(1)).unwrap().sector, 500);
        assert_eq!(q.fifo_first().unwrap().1, 20);
        assert_eq!(q.len(), 3);
        // After 4 (sector 300) comes nothing: wrap to the lowest, or go back to 3.
        assert_eq!(AS.find_next(&q, RequestId(4), 308), Some(RequestId(3)));
    }
}
