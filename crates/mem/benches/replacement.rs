//! Cost of the replacement model's hot paths. The memory simulator drives it at about ten
//! million page references a second, so `reference` must cost well under 100 ns; a scan must
//! cost in proportion to the pages it looks at (here bin 0's 5 s scan over 65,536 pages).

use antsched_core::SEC;
use antsched_mem::{MemNice, PageId, Replacement, ReplacementConfig};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use std::hint::black_box;

const PAGES: u32 = 65_536;

fn lcg(x: &mut u64) -> u64 {
    *x = x
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *x >> 16
}

/// 65,536 pages over 8 processes of assorted nice values, a quarter of them clean.
fn populated() -> (Replacement, Vec<PageId>) {
    let mut r = Replacement::new(ReplacementConfig::default());
    for p in 0..8u32 {
        r.set_nice(p, MemNice::new(p as i64 * 2 - 6).unwrap());
    }
    let pages = (0..PAGES).map(|i| r.alloc(i % 8, i % 4 != 0, 0)).collect();
    (r, pages)
}

fn bench(c: &mut Criterion) {
    let (mut r, pages) = populated();
    let mut x = 1u64;
    c.bench_function("reference random page of 65,536", |b| {
        b.iter(|| {
            let i = (lcg(&mut x) % PAGES as u64) as usize;
            r.reference(black_box(pages[i]), black_box(i as u32 % 8));
        })
    });

    // A page shared by 8 processes, referenced by each in turn: the worst case of the
    // mapping walk (the most recent referencer is found first).
    let mut s = Replacement::new(ReplacementConfig::default());
    let page = s.alloc(0, true, 0);
    for p in 1..8 {
        s.map_shared(page, p, 0);
    }
    let mut turn = 0u32;
    c.bench_function("reference page shared by 8, rotating", |b| {
        b.iter(|| {
            turn = (turn + 1) % 8;
            s.reference(black_box(page), black_box(turn));
        })
    });

    // Bin 0's 5 s scan with every page unreferenced: all 65,536 move to bin 1.
    let (mut aged, _) = populated();
    aged.tick(5 * SEC); // bits read and cleared; all still in bin 0
    c.bench_function("5 s scan of 65,536 pages, none referenced", |b| {
        b.iter_batched_ref(
            || aged.clone(),
            |r| r.tick(black_box(10 * SEC)),
            BatchSize::LargeInput,
        )
    });

    // The same with every other page referenced: half stay, re-entering bin 0.
    let mut half = aged.clone();
    for (i, &p) in pages.iter().enumerate().step_by(2) {
        half.reference(p, i as u32 % 8);
    }
    c.bench_function("5 s scan of 65,536 pages, half referenced", |b| {
        b.iter_batched_ref(
            || half.clone(),
            |r| r.tick(black_box(10 * SEC)),
            BatchSize::LargeInput,
        )
    });

    // Eviction: the candidate lookup over the chains plus the unlink.
    c.bench_function("evict from 65,536 pages", |b| {
        b.iter_batched_ref(
            || aged.clone(),
            |r| {
                for _ in 0..1024 {
                    black_box(r.evict(10 * SEC));
                }
            },
            BatchSize::LargeInput,
        )
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
