//! Whole runs of the memory simulator, with page references as the throughput unit, so that
//! criterion reports page references per second: a page-reference stream (Zipf over 150 MB on
//! a 256 MB machine: references, scans and the pager), and a query cache whose every step is
//! one query (lookups, the release rounds, the event queue; a page or two per query).

use antsched_mem::sim::{parse_scenario, simulate};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const STREAM: &str = r#"
[machine]
memory_mb = 256
reserved_mb = 56
max_time_s = 100000

[[process]]
name = "stream"
kind = "zipf"
pages_mb = 150
alpha = 0.8
refs = 5000000
ref_us = 1
"#;

const QUERIES: &str = r#"
[machine]
memory_mb = 256
reserved_mb = 56
max_time_s = 100000

[[process]]
name = "db"
kind = "cache"
queries = 200000
distinct = 400000
alpha = 0.8
cost_ms = [5, 5]
hit_ms = 0.5
think_ms = 1
"#;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("memory simulator");
    g.sample_size(10);
    for (name, text) in [("page stream", STREAM), ("query cache", QUERIES)] {
        let scenario = parse_scenario(text, name).expect("a valid scenario");
        let refs = simulate(&scenario, 1).expect("runs").sim.page_refs;
        g.throughput(Throughput::Elements(refs));
        g.bench_function(name, |b| b.iter(|| simulate(&scenario, 1).expect("runs")));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
