//! Cost of one dispatch decision with 1, 64 and 4,096 contexts, each with one request pending.
//!
//! Each iteration dispatches one request, completes it, and has its context issue a
//! replacement at a random sector, so the pool stays at n requests (`common/pool.rs`, which
//! `examples/dispatch_steps.rs` runs for counting instructions). SPTF-based policies walk
//! outward from the head until the estimator's lower bound passes the best found.

mod common;

use common::pool::Pool;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

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
                let mut p = Pool::new(spec, n).unwrap();
                b.iter(|| p.step());
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
