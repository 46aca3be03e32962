//! First come, first served: Linux's `noop`. The baseline every reordering policy is judged
//! against, and what SPTF degenerates to under deceptive idleness (section 2, example #1).

use std::collections::VecDeque;

use super::Policy;
use crate::estimator::PositionEstimator;
use crate::request::{Nanos, Request, RequestId};

/// Serves requests in arrival order.
#[derive(Debug, Default)]
pub struct Fcfs {
    queue: VecDeque<Request>,
}

impl Fcfs {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Policy for Fcfs {
    fn enqueue(&mut self, req: Request, _now: Nanos) {
        self.queue.push_back(req);
    }

    fn choose(&mut self, _est: &dyn PositionEstimator, _now: Nanos) -> Option<Request> {
        self.queue.front().copied()
    }

    fn dispatch(&mut self, id: RequestId, _now: Nanos) -> Option<Request> {
        let i = self.queue.iter().position(|r| r.id == id)?;
        self.queue.remove(i)
    }

    fn len(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testutil::{head_at, req};

    #[test]
    fn serves_in_arrival_order_whatever_the_distance() {
        let mut p = Fcfs::new();
        p.enqueue(req(1, 1, 9_000_000, 0), 0);
        p.enqueue(req(2, 2, 10, 1), 1);
        let est = head_at(0);
        assert_eq!(p.choose(&est, 2).unwrap().id, RequestId(1));
        p.dispatch(RequestId(1), 2);
        assert_eq!(p.choose(&est, 2).unwrap().id, RequestId(2));
    }
}
