//! Cost of one dispatch decision with 1, 64 and 4,096 contexts, each with one request pending.
//!
//! Each iteration dispatches one request, completes it, and has its context issue a
//! replacement at a random sector, so the pool stays at n requests. SPTF-based policies look
//! at every pending request (O(n)); C-LOOK and FCFS do not.

use antsched_core::{
    build, BuildEnv, ClassId, ContextId, Nanos, Op, Request, RequestId, Scheduler, MS,
};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

struct Pool {
    s: Box<dyn Scheduler>,
    rng: ChaCha8Rng,
    now: Nanos,
    next: u64,
}

impl Pool {
    fn new(spec: &str, n: u32) -> Self {
        let mut p = Pool {
            s: build(spec, &BuildEnv::default()).unwrap(),
            rng: ChaCha8Rng::seed_from_u64(1),
            now: 0,
            next: 0,
        };
        for ctx in 0..n {
            p.issue(ctx);
        }
        p
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
    fn step(&mut self) {
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

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("dispatch_decision");
    for spec in [
        "noop",
        "clook",
        "sptf",
        "as-aged-sptf",
        "as-rw-sptf",
        "as-stride",
        "as-stride-combo",
        "deadline",
        "linux-as",
        "cas",
        "cfq",
        "bfq",
        "bfq:low_latency=0",
    ] {
        for n in [1u32, 64, 4096] {
            g.throughput(Throughput::Elements(1));
            g.bench_with_input(BenchmarkId::new(spec, n), &n, |b, &n| {
                let mut p = Pool::new(spec, n);
                b.iter(|| p.step());
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
