//! Simulator speed: the paper's two sequential mmap readers (64 MB each, 1,024 requests in
//! all) on the 34GXP model, per scheduler. Criterion reports time per run; the simulator's own
//! `requests_per_s` (in `antsched sim --json`) gives the same figure per request.

use antsched_sim::{disk_model, fio, simulate};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

const JOB: &str =
    "[global]\nrw=read\nbs=64k\nsize=64m\nioengine=mmap\nantsched_issue_delay=200us\n\
                   [p]\nfilename=p\n[q]\nfilename=q\nantsched_disk_offset=6g\n";

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

criterion_group!(benches, bench);
criterion_main!(benches);
