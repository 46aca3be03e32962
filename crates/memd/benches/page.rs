//! The cost of reading the severity page, the client's hot path: a program may read S on
//! every allocation decision, so a read must be a few loads and no system call (issue 14:
//! under 100 ns). Measured three ways: the page reader alone; the same while a writer
//! publishes every 100 µs (10,000 times the daemon's 1 s tick, so that reads meet the latch
//! moving and retry); and `Client::current` on a page a running daemon sent over its socket.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use antsched_core::Nanos;
use antsched_mem::cost::PagingCost;
use antsched_mem::record::{Estimator, Observation, SeverityRecord, RECORD_VERSION};
use antsched_mem::Tier;
use antsched_memd::page::{PageReader, PageWriter};
use antsched_memd::{Config, Daemon, ObservationSource, SourceError};
use criterion::{criterion_group, criterion_main, Criterion};

fn record(time: u64) -> SeverityRecord {
    SeverityRecord {
        version: RECORD_VERSION,
        severity_s: 443.4,
        candidate_age_s: 80.3,
        free_bytes: 11 << 20,
        tau_bytes: 25 << 20,
        paging_cost: 4.5e-5,
        disk_service_ms: 0.06,
        disk_queue: 0.1,
        tier: Tier::Ramp,
        estimator: Estimator::Turnover,
        time,
    }
}

/// A domain under steady pressure, for the daemon.
struct Steady;

impl ObservationSource for Steady {
    fn observe(&mut self, now: Nanos) -> Result<Observation, SourceError> {
        Ok(Observation {
            free_bytes: 3 << 20,
            total_bytes: 256 << 20,
            candidate_age_s: 60.0,
            paging: PagingCost {
                disk_service_s: 0.001,
                disk_queue: 1.0,
            },
            estimator: Estimator::Turnover,
            time: now,
        })
    }
}

fn bench(c: &mut Criterion) {
    let writer = PageWriter::new().expect("a memfd");
    writer.publish(&record(1));
    let reader = PageReader::new(writer.fd()).expect("a severity page");
    c.bench_function("page read (PageReader::read)", |b| {
        b.iter(|| black_box(reader.read()))
    });

    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut t = 2;
            while !stop.load(Ordering::Relaxed) {
                writer.publish(&record(t));
                t += 1;
                std::thread::sleep(Duration::from_micros(100));
            }
        });
        c.bench_function("page read, a record published every 100 us", |b| {
            b.iter(|| black_box(reader.read()))
        });
        stop.store(true, Ordering::Relaxed);
    });

    let dir = std::env::temp_dir().join(format!("antsched-memd-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let config = Config {
        log: false,
        ..Config::new(dir.join("memd.sock"))
    };
    let mut daemon = Daemon::bind(config, Box::new(Steady)).expect("the daemon binds");
    let stopper = daemon.stopper();
    let running = std::thread::spawn(move || daemon.run());
    let client = antsched_memd::connect(dir.join("memd.sock")).expect("connects");
    c.bench_function("Client::current (a daemon's page)", |b| {
        b.iter(|| black_box(client.current()))
    });
    drop(client);
    stopper.stop();
    let _ = running.join();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
