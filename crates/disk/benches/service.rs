//! Cost of one service-time computation. The simulator must run millions of requests a second,
//! so a `submit` (cache lookup, lazy read-ahead, positioning, media and bus transfer) and a
//! `positioning_time` query must each cost well under a microsecond.

use antsched_disk::presets::hdd_preset;
use antsched_disk::{DeviceModel, DiskRequest};
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

fn lcg(x: &mut u64) -> u64 {
    *x = x
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *x >> 16
}

fn bench(c: &mut Criterion) {
    let mut d = hdd_preset("deskstar-34gxp").unwrap();
    let cap = d.capacity_sectors() - 256;
    let mut x = 1u64;
    let mut t = 0u64;
    c.bench_function("hdd submit random 8-sector read", |b| {
        b.iter(|| {
            let lbn = lcg(&mut x) % cap;
            let r = d.submit(black_box(&DiskRequest::read(lbn, 8)), t);
            t = r.finish + 1_000_000;
            r
        })
    });
    let mut seq = 0u64;
    c.bench_function("hdd submit sequential 64 KB read", |b| {
        b.iter(|| {
            seq = (seq + 128) % cap;
            let r = d.submit(black_box(&DiskRequest::read(seq, 128)), t);
            t = r.finish + 300_000;
            r
        })
    });
    c.bench_function("hdd submit random 8-sector write", |b| {
        b.iter(|| {
            let lbn = lcg(&mut x) % cap;
            let r = d.submit(black_box(&DiskRequest::write(lbn, 8)), t);
            t = r.finish + 1_000_000;
            r
        })
    });
    c.bench_function("hdd positioning_time", |b| {
        b.iter(|| {
            let lbn = lcg(&mut x) % cap;
            d.positioning_time(black_box(&DiskRequest::read(lbn, 8)), t)
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
