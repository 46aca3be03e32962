//! The pool of pending requests that the dispatch-decision bench and the `dispatch_steps`
//! example drive: one request pending per context, each decision followed by the chosen
//! request's completion and its context's next request at a random sector.

use antsched_core::{
    build, BuildEnv, ClassId, ContextId, Nanos, Op, Request, RequestId, Scheduler, MS,
};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub struct Pool {
    s: Box<dyn Scheduler>,
    rng: ChaCha8Rng,
    now: Nanos,
    next: u64,
}

impl Pool {
    /// A pool of `n` contexts under scheduler `spec`; an unknown spec is refused.
    pub fn new(spec: &str, n: u32) -> Result<Self, String> {
        let mut p = Pool {
            s: build(spec, &BuildEnv::default()).map_err(|e| e.to_string())?,
            rng: ChaCha8Rng::seed_from_u64(1),
            now: 0,
            next: 0,
        };
        for ctx in 0..n {
            p.issue(ctx);
        }
        Ok(p)
    }

    fn issue(&mut self, ctx: u32) {
        self.next += 1;
        let r = Request {
            id: RequestId(self.next),
            context: ContextId(ctx),
            class: ClassId(ctx),
            op: Op::Read,
            sector: self.rng.random_range(0..60_000_000),
            sectors: 128,
            sync: true,
            issued: self.now,
            continuation: false,
        };
        self.s.enqueue(r, self.now);
    }

    /// One decision (after waiting out a timeout if the scheduler chose to wait).
    pub fn step(&mut self) {
        self.now += MS;
        let r = match self.s.poll_dispatch(self.now) {
            Some(r) => r,
            None => {
                self.now = self.s.poll_timeout().expect("waiting implies a timeout");
                self.s
                    .poll_dispatch(self.now)
                    .expect("a timeout dispatches")
            }
        };
        self.now += MS;
        self.s.complete(r.id, self.now);
        self.issue(r.context.0);
    }
}
