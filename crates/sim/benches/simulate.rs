//! Simulator speed, per scheduler. Criterion reports time per run and, with the run's disk
//! requests as its elements, requests per second: the figure the simulator reports itself as
//! `requests_per_s` in `antsched sim --json`.
//!
//! - `simulate_two_readers`: the paper's two sequential mmap readers (64 MB each, 1,024
//!   requests in all) on the 34GXP model.
//! - `simulate_eight_random_readers`: `examples/jobs/eight-random-readers.fio` (64 KB random
//!   reads, each of eight processes in its own 1 GB file, 524,323 disk requests), where every
//!   SPTF decision weighs seven or eight pending requests: the README's Speed figure.
//! - `simulate_many_random_readers`: `examples/jobs/many-random-readers.fio` (256 random
//!   readers, 65,536 disk requests, up to 256 pending), where SPTF with the exact estimator
//!   walks outward from the head until the device's positioning floor passes the best.

use antsched_sim::{disk_model, simulate};
use antsched_workload::fio;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

const JOB: &str =
    "[global]\nrw=read\nbs=64k\nsize=64m\nioengine=mmap\nantsched_issue_delay=200us\n\
                   [p]\nfilename=p\n[q]\nfilename=q\nantsched_disk_offset=6g\n";

const EIGHT_RANDOM_READERS: &str = include_str!("../../../examples/jobs/eight-random-readers.fio");
const MANY_RANDOM_READERS: &str = include_str!("../../../examples/jobs/many-random-readers.fio");

fn bench(c: &mut Criterion) {
    let jobs = fio::parse(JOB, "bench.fio").unwrap();
    let disk = disk_model("deskstar-34gxp").unwrap();
    let mut g = c.benchmark_group("simulate_two_readers");
    g.throughput(Throughput::Elements(2 * 1024));
    for spec in [
        "aged-sptf",
        "as-aged-sptf",
        "as-aged-sptf:estimator=calibrated",
        "as-stride-combo",
    ] {
        g.bench_with_input(BenchmarkId::from_parameter(spec), &spec, |b, spec| {
            b.iter(|| simulate(&jobs, disk.clone_box(), spec, 1).unwrap())
        });
    }
    g.finish();
}

fn eight_random_readers(c: &mut Criterion) {
    random_readers(
        c,
        "simulate_eight_random_readers",
        EIGHT_RANDOM_READERS,
        &["as-aged-sptf:estimator=exact", "aged-sptf", "clook"],
    );
}

fn many_random_readers(c: &mut Criterion) {
    random_readers(
        c,
        "simulate_many_random_readers",
        MANY_RANDOM_READERS,
        &["sptf", "as-aged-sptf", "clook"],
    );
}

/// One group: the job `text` under each of `specs`, in disk requests a second.
fn random_readers(c: &mut Criterion, group: &str, text: &str, specs: &[&str]) {
    let jobs = fio::parse(text, "bench.fio").unwrap();
    let disk = disk_model("deskstar-34gxp").unwrap();
    let mut g = c.benchmark_group(group);
    // A run takes a good part of a second: ten of them are enough for a stable mean.
    g.sample_size(10);
    for &spec in specs {
        let requests = simulate(&jobs, disk.clone_box(), spec, 1)
            .unwrap()
            .sim
            .map_or(0, |s| s.requests);
        g.throughput(Throughput::Elements(requests));
        g.bench_with_input(BenchmarkId::from_parameter(spec), &spec, |b, spec| {
            b.iter(|| simulate(&jobs, disk.clone_box(), spec, 1).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench, eight_random_readers, many_random_readers);
criterion_main!(benches);
