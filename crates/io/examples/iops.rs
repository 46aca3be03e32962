//! Random 4 KiB reads through the runtime with `noop` on the `file` backend, at a given queue
//! depth, for comparison with fio's io_uring engine on the same file (see `bench/fio-compare.sh`).
//!
//! ```text
//! cargo run --release -p antsched-io --example iops -- FILE [--qd N] [--seconds S] [--buffered] [--realtime] [--scheduler SPEC]
//! ```
//!
//! Prints one line: `iops=... mean_lat_us=... p50_us=... p99_us=...`.

use std::time::{Duration, Instant};

use antsched_core::{build, BuildEnv, Op};
use antsched_disk::curve::SplitMix;
use antsched_io::{block_on, Backend, Ctx, IoBuf, Options, Runtime};
use futures_util::stream::{FuturesUnordered, StreamExt};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut path = None;
    let mut qd = 1usize;
    let mut seconds = 10.0f64;
    let mut direct = true;
    let mut spec = "noop".to_string();
    let mut realtime = false;
    let mut poll_us = Options::default().poll / 1000;
    let mut wait_spin_us = Options::default().wait_spin / 1000;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--qd" => {
                i += 1;
                qd = args[i].parse().expect("--qd N");
            }
            "--seconds" => {
                i += 1;
                seconds = args[i].parse().expect("--seconds S");
            }
            "--buffered" => direct = false,
            "--realtime" => realtime = true,
            "--wait-spin-us" => {
                i += 1;
                wait_spin_us = args[i].parse().expect("--wait-spin-us N");
            }
            "--poll-us" => {
                i += 1;
                poll_us = args[i].parse().expect("--poll-us N");
            }
            "--scheduler" => {
                i += 1;
                spec = args[i].clone();
            }
            p => path = Some(p.to_string()),
        }
        i += 1;
    }
    let path = path.expect(
        "usage: iops FILE [--qd N] [--seconds S] [--buffered] [--realtime] [--scheduler SPEC]",
    );
    let backend =
        Backend::file(std::path::Path::new(&path), direct).unwrap_or_else(|e| panic!("{e}"));
    let blocks = backend.capacity_sectors() / 8;
    assert!(blocks > 0, "{path} is smaller than 4 KiB");
    let sched = build(&spec, &BuildEnv::default()).unwrap_or_else(|e| panic!("{e}"));
    let opts = Options {
        realtime_priority: realtime.then_some(2),
        poll: poll_us * 1000,
        wait_spin: wait_spin_us * 1000,
        ..Options::default()
    };
    if realtime {
        antsched_io::clock::set_realtime(1).expect("--realtime needs root or CAP_SYS_NICE");
    }
    let rt = Runtime::start(backend, sched, opts).unwrap_or_else(|e| panic!("{e}"));
    let ctx = Ctx::new(0, 0);
    let mut rng = SplitMix::new(42);
    let mut lat = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 10_000_000, 3).unwrap();
    let clock = rt.clock();
    // Like fio's io_uring engine: keep `qd` reads in flight and replace each one as soon as it
    // completes, whichever it is (the async API: each ticket is a future).
    let mut inflight = FuturesUnordered::new();
    let submit = |rng: &mut SplitMix| {
        let sector = rng.below(blocks) * 8;
        let issued = clock.now();
        let t = rt.submit(ctx, Op::Read, sector, IoBuf::zeroed(4096), true, false);
        async move { (issued, t.await) }
    };
    // Warm up for a tenth of the run, then measure.
    let warm = Duration::from_secs_f64(seconds / 10.0);
    let start = Instant::now();
    if qd > 1 {
        for _ in 0..qd {
            inflight.push(submit(&mut rng));
        }
    }
    let mut measuring = false;
    let mut t0 = Instant::now();
    let mut n = 0u64;
    if qd == 1 {
        // The blocking API: one read at a time, each waited for.
        loop {
            let sector = rng.below(blocks) * 8;
            let issued = clock.now();
            let d = rt
                .submit(ctx, Op::Read, sector, IoBuf::zeroed(4096), true, false)
                .wait()
                .unwrap_or_else(|e| panic!("{e}"));
            if !measuring && start.elapsed() >= warm {
                measuring = true;
                t0 = Instant::now();
                n = 0;
                lat.reset();
            }
            n += 1;
            let _ = lat.record((d.completed_at.saturating_sub(issued) / 1000).max(1));
            if measuring && t0.elapsed().as_secs_f64() >= seconds {
                break;
            }
        }
        inflight.clear();
    }
    block_on(async {
        while let Some((issued, r)) = inflight.next().await {
            let d = r.unwrap_or_else(|e| panic!("{e}"));
            if !measuring && start.elapsed() >= warm {
                measuring = true;
                t0 = Instant::now();
                n = 0;
                lat.reset();
            }
            n += 1;
            let _ = lat.record((d.completed_at.saturating_sub(issued) / 1000).max(1));
            if !measuring || t0.elapsed().as_secs_f64() < seconds {
                inflight.push(submit(&mut rng));
            }
        }
    });
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "iops={:.0} mean_lat_us={:.1} p50_us={} p99_us={} qd={qd} direct={direct} scheduler={spec}",
        n as f64 / secs,
        lat.mean(),
        lat.value_at_quantile(0.5),
        lat.value_at_quantile(0.99)
    );
    rt.shutdown();
}
