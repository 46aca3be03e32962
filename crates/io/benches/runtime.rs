//! What the runtime costs per request.
//!
//! - `null/*`: a read through the whole runtime (submit, wake the loop, scheduler, io_uring
//!   NOP, completion, wake the caller) with no device behind it: the runtime's own latency per
//!   request, under `noop` and under `as-aged-sptf` (whose difference is the scheduler's
//!   decision cost).
//! - `file/*`: 4 KiB random reads with `noop` on the `file` backend, O_DIRECT, at queue depth
//!   1 (one blocking read at a time) and 32 (32 futures in flight, the time is per read). The
//!   file is `ANTSCHED_BENCH_FILE`, or `target/antsched-bench.img` (256 MiB of random data,
//!   made on first use). `bench/fio-compare.sh` sets these figures beside fio's.
//!
//! ```text
//! cargo bench -p antsched-io
//! ```

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use antsched_core::{build, BuildEnv, Op};
use antsched_disk::curve::SplitMix;
use antsched_io::{block_on, Backend, Ctx, IoBuf, Options, Runtime};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use futures_util::stream::{FuturesUnordered, StreamExt};

fn runtime(backend: Backend, spec: &str) -> Runtime {
    let sched = build(spec, &BuildEnv::default()).expect("a valid SPEC");
    Runtime::start(backend, sched, Options::default()).expect("io_uring is available")
}

fn null(c: &mut Criterion) {
    if antsched_io::io_uring_available().is_err() {
        eprintln!("skipping the runtime benchmarks: io_uring is not available");
        return;
    }
    let mut g = c.benchmark_group("null");
    g.throughput(Throughput::Elements(1));
    for spec in ["noop", "as-aged-sptf"] {
        let rt = runtime(Backend::null(1 << 30), spec);
        let ctx = Ctx::new(0, 0);
        let mut rng = SplitMix::new(1);
        g.bench_function(format!("read_4k_qd1/{spec}"), |b| {
            b.iter(|| rt.read(ctx, rng.below(1 << 20) * 4096, 4096).unwrap())
        });
        rt.shutdown();
    }
    g.finish();
}

fn bench_file() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("ANTSCHED_BENCH_FILE") {
        return Some(PathBuf::from(p));
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target");
    let p = dir.join("antsched-bench.img");
    if !p.exists() {
        let tmp = dir.join("antsched-bench.img.tmp");
        let mut f = std::fs::File::create(&tmp).ok()?;
        let mut rng = SplitMix::new(7);
        let mut buf = vec![0u8; 1 << 20];
        for _ in 0..256 {
            for w in buf.chunks_exact_mut(8) {
                w.copy_from_slice(&rng.next_u64().to_le_bytes());
            }
            f.write_all(&buf).ok()?;
        }
        f.sync_all().ok()?;
        std::fs::rename(&tmp, &p).ok()?;
    }
    Some(p)
}

fn file(c: &mut Criterion) {
    if antsched_io::io_uring_available().is_err() {
        return;
    }
    let Some(path) = bench_file() else {
        eprintln!("skipping file benchmarks: cannot make a bench file");
        return;
    };
    let backend = match Backend::file(&path, true) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("skipping file benchmarks: {e}");
            return;
        }
    };
    let blocks = backend.capacity_sectors() / 8;
    let mut g = c.benchmark_group("file");
    g.throughput(Throughput::Elements(1));
    g.measurement_time(Duration::from_secs(5));
    let rt = runtime(backend, "noop:depth=32");
    let ctx = Ctx::new(0, 0);
    let mut rng = SplitMix::new(1);
    g.bench_function("randread_4k_qd1/noop", |b| {
        b.iter(|| rt.read(ctx, rng.below(blocks) * 4096, 4096).unwrap())
    });
    g.bench_function("randread_4k_qd32/noop", |b| {
        // Time per read with 32 in flight, each replaced as soon as it completes.
        b.iter_custom(|iters| {
            let mut rng = SplitMix::new(iters);
            let submit = |rng: &mut SplitMix| {
                rt.submit(
                    ctx,
                    Op::Read,
                    rng.below(blocks) * 8,
                    IoBuf::zeroed(4096),
                    true,
                    false,
                )
            };
            let t0 = Instant::now();
            let mut inflight: FuturesUnordered<_> =
                (0..iters.min(32)).map(|_| submit(&mut rng)).collect();
            let mut issued = iters.min(32);
            block_on(async {
                while let Some(r) = inflight.next().await {
                    r.unwrap();
                    if issued < iters {
                        inflight.push(submit(&mut rng));
                        issued += 1;
                    }
                }
            });
            t0.elapsed()
        })
    });
    g.finish();
    rt.shutdown();
}

criterion_group!(benches, null, file);
criterion_main!(benches);
