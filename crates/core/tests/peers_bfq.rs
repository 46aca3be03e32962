//! The rules of `bfq` (Linux 6.x `bfq-iosched.c` and `bfq-wf2q.c`) with `low_latency` 0, one
//! test per rule, driven with explicit times, and the shares of the BFQ report's
//! sequential-reader experiments (whose BFQ had no weight raising). The low-latency rules have
//! their own tests, beside the code (`peers/bfq/tests.rs`).

mod common;

use antsched_core::peers::bfq::{Bfq, BfqConfig, QueueKey};
use antsched_core::{build, BuildEnv, ClassId, ContextId, Nanos, Request, Scheduler, MS, US};
use common::{paper_service, Driver, Reader};

const FAR: u64 = 2_000_000;

fn bfq() -> Bfq {
    Bfq::new(
        "bfq",
        BfqConfig {
            low_latency: false,
            ..BfqConfig::default()
        },
    )
}

/// `bfq_delta`: a service in virtual time.
fn vdelta(sectors: u64, weight: u64) -> u64 {
    (sectors << 22) / weight
}

fn sync(ctx: u32) -> QueueKey {
    QueueKey::Sync(ContextId(ctx))
}

#[test]
fn bfq_idles_for_a_sync_queue_up_to_slice_idle() {
    let mut s = bfq();
    let mut d = Driver::new(&mut s);
    let mine = d.request(0, 0, 0, 128);
    let other = d.request(1, 1, FAR, 128);
    d.submit(mine);
    d.submit(other);
    assert_eq!(d.dispatch_one(3 * MS).unwrap().id, mine.id);
    d.finish();
    assert_eq!(d.s.poll_dispatch(d.now), None);
    assert_eq!(d.s.poll_timeout(), Some(3 * MS + 8 * MS));
    assert_eq!(d.s.poll_dispatch(11 * MS - 1), None);
    assert_eq!(d.s.poll_dispatch(11 * MS).unwrap().id, other.id);
    let a = d.s.anticipation();
    assert_eq!((a.waits, a.timeouts, a.waited), (1, 1, 8 * MS));
}

#[test]
fn bfq_expires_a_queue_whose_next_request_exceeds_its_remaining_budget() {
    let mut s = bfq();
    let mut d = Driver::new(&mut s);
    // 1024-sector requests; a new queue's budget is 2/3 of 16384 = 10922 sectors.
    for i in 0..20 {
        let r = d.request(0, 0, i * 1024, 1024);
        d.submit(r);
    }
    let other = d.request(1, 1, FAR, 8);
    d.submit(other);
    let mut served = 0;
    while d.dispatch_one(MS).unwrap().context == ContextId(0) {
        served += 1;
        d.finish();
    }
    // Ten fit (10240 sectors); the eleventh does not: the budget is exhausted.
    assert_eq!(served, 10);
    // It used its whole budget: it gets four times as much next time, within the largest.
    assert_eq!(d.s.queue_max_budget(sync(0)), Some(16_384));
}

#[test]
fn bfq_charges_a_full_budget_on_timeout() {
    let mut s = bfq();
    let mut d = Driver::new(&mut s);
    // A slow queue: 30 ms per 128-sector request, many queued, so it neither empties nor uses
    // up its budget (10922 sectors) before timeout_sync (125 ms).
    for i in 0..20 {
        let r = d.request(0, 0, i * 128, 128);
        d.submit(r);
    }
    for i in 0..20 {
        let r = d.request(1, 1, FAR + i * 128, 128);
        d.submit(r);
    }
    let start = d.s.service_tree().entity(sync(0)).unwrap().start;
    let mut served = 0u64;
    while d.dispatch_one(30 * MS).unwrap().context == ContextId(0) {
        served += 128;
        d.finish();
    }
    assert!(served < 10_922 / 3 * 2, "served {served}");
    // Charged as if it had been served at the device's rate for the whole timeout: the
    // largest budget, 16384 sectors, not the 640 it got.
    let e = d.s.service_tree().entity(sync(0)).unwrap();
    assert_eq!(e.start - start, vdelta(16_384, 100));
}

#[test]
fn bfq_backshifts_a_reactivated_queue() {
    let mut s = bfq();
    let mut d = Driver::new(&mut s);
    let first = d.request(0, 0, 0, 128);
    d.submit(first);
    for i in 0..50 {
        let r = d.request(1, 1, FAR + i * 128, 128);
        d.submit(r);
    }
    assert_eq!(d.dispatch_one(3 * MS).unwrap().id, first.id);
    d.finish();
    // Queue 0 is empty; BFQ idles for it, then gives up (too idle) at 11 ms.
    assert_eq!(d.s.poll_dispatch(d.now), None);
    d.now = d.s.poll_timeout().unwrap();
    assert_eq!(d.dispatch_one(3 * MS).unwrap().context, ContextId(1));
    let finish = d.s.service_tree().entity(sync(0)).unwrap().finish;
    assert_eq!(finish, vdelta(128, 100), "stamped with what it received");
    // Queue 1 is served meanwhile: the virtual time passes queue 0's finish time.
    d.finish();
    for _ in 0..2 {
        d.dispatch_one(3 * MS);
        d.finish();
    }
    let vtime = d.s.service_tree().vtime;
    assert!(vtime > finish);
    // Queue 0 comes back within 3 idle windows of its last completion: it was idle because
    // of us, not by itself. It starts from its old finish time, not from vtime.
    let again = d.request(0, 0, 128, 128);
    d.submit(again);
    let e = d.s.service_tree().entity(sync(0)).unwrap();
    assert_eq!(e.start, finish);
    assert!(e.start < vtime);
}

#[test]
fn bfq_does_not_backshift_a_queue_that_returns_late() {
    let mut s = bfq();
    let mut d = Driver::new(&mut s);
    let first = d.request(0, 0, 0, 128);
    d.submit(first);
    for i in 0..50 {
        let r = d.request(1, 1, FAR + i * 128, 128);
        d.submit(r);
    }
    d.dispatch_one(3 * MS);
    d.finish();
    assert_eq!(d.s.poll_dispatch(d.now), None);
    d.now = d.s.poll_timeout().unwrap();
    for _ in 0..10 {
        d.dispatch_one(3 * MS);
        d.finish();
    }
    // More than 3 * slice_idle after its last completion: a plain WF2Q+ activation.
    let again = d.request(0, 0, 128, 128);
    d.submit(again);
    let vtime = d.s.service_tree().vtime;
    assert_eq!(d.s.service_tree().entity(sync(0)).unwrap().start, vtime);
}

#[test]
fn bfq_shrinks_the_budget_of_a_queue_that_stays_idle_too_long() {
    let mut s = bfq();
    let mut d = Driver::new(&mut s);
    let r = d.request(0, 0, 0, 128);
    d.submit(r);
    d.dispatch_one(3 * MS);
    d.finish();
    // The only busy queue: BFQ idles for it to keep its guarantee, in vain.
    assert!(d.s.idle_timer().is_some());
    d.now += 20 * MS;
    let late = d.request(0, 0, 128, 128);
    d.submit(late);
    // Four minimum budgets (16384 / 32 each) less than its 10922.
    assert_eq!(d.s.queue_max_budget(sync(0)), Some(10_922 - 4 * 512));
}

#[test]
fn bfq_strict_guarantees_dispatches_one_request_at_a_time() {
    let mut s = build("bfq:strict_guarantees=1,depth=2", &BuildEnv::default()).unwrap();
    let mut d = Driver::new(&mut *s);
    for i in 0..2 {
        let r = d.request(i, i, u64::from(i) * FAR, 8);
        d.submit(r);
    }
    assert!(d.s.poll_dispatch(0).is_some());
    assert_eq!(d.s.poll_dispatch(0), None, "the device holds one already");
    assert_eq!(d.s.poll_timeout(), None);
}

#[test]
fn bfq_sizes_max_budget_from_the_peak_rate() {
    let mut s = bfq();
    let mut d = Driver::new(&mut s);
    assert_eq!(d.s.device_max_budget(), 16_384);
    // One sequential reader at 128 sectors per 2 ms: 0.064 sectors per microsecond.
    let mut readers = [Reader::sequential(0, 0, 0)];
    d.run(&mut readers, 5_000, &|_: &Request, _| 2 * MS);
    // The largest budget becomes what the device moves in timeout_sync: 8000 sectors.
    let b = d.s.device_max_budget();
    assert!((7_600..=8_400).contains(&b), "max budget {b}");
}

/// Runs sequential readers (think 100 us, 64 KiB requests) in far-apart regions with the
/// given class weights for `n` requests; returns each reader's bytes.
fn readers_with_weights(spec: &str, weights: &[u32], n: usize) -> Vec<u64> {
    let mut s = build(spec, &BuildEnv::default()).unwrap();
    for (i, &w) in weights.iter().enumerate() {
        s.set_class_weight(ClassId(i as u32), w);
    }
    let mut d = Driver::new(&mut *s);
    let mut readers: Vec<Reader> = (0..weights.len() as u32)
        .map(|i| Reader::sequential(i, u64::from(i) * 20 * FAR, 100 * US))
        .collect();
    d.run(&mut readers, n, &paper_service);
    let bytes = d.bytes_by_context();
    (0..weights.len() as u32)
        .map(|i| bytes.get(&i).copied().unwrap_or(0))
        .collect()
}

fn assert_shares(bytes: &[u64], weights: &[u32], tolerance: f64) {
    let total: u64 = bytes.iter().sum();
    let wsum: u32 = weights.iter().sum();
    for (b, w) in bytes.iter().zip(weights) {
        let share = *b as f64 / total as f64;
        let target = f64::from(*w) / f64::from(wsum);
        assert!(
            (share / target - 1.0).abs() <= tolerance,
            "shares {bytes:?} for weights {weights:?}"
        );
    }
}

#[test]
fn bfq_serves_weights_in_proportion() {
    // The BFQ report's bandwidth-distribution runs: sequential readers with weights 1:2 and
    // 1:2:10 get byte shares within 10 % of their weights.
    for weights in [vec![100, 200], vec![100, 200, 1_000]] {
        let bytes = readers_with_weights("bfq:low_latency=0", &weights, 6_000);
        eprintln!("weights {weights:?}: bytes {bytes:?}");
        assert_shares(&bytes, &weights, 0.10);
    }
}

#[test]
fn bfq_keeps_two_sequential_readers_near_the_bandwidth_of_one() {
    let n = 4_000;
    let time = |spec: &str, readers: usize| -> Nanos {
        let mut s = build(spec, &BuildEnv::default()).unwrap();
        let mut d = Driver::new(&mut *s);
        let mut rs: Vec<Reader> = (0..readers as u32)
            .map(|i| Reader::sequential(i, u64::from(i) * 20 * FAR, 100 * US))
            .collect();
        d.run(&mut rs, n, &paper_service);
        d.now
    };
    let one = time("bfq:low_latency=0", 1);
    let two = time("bfq:low_latency=0", 2);
    eprintln!("one reader {one}, two readers {two}");
    // The same bytes take at most 1/0.85 as long with two readers sharing the disk.
    assert!(
        one as f64 / two as f64 >= 0.85,
        "one reader {one}, two readers {two}"
    );
}

#[test]
fn bfq_does_not_idle_for_an_exited_process() {
    let mut s = bfq();
    let mut d = Driver::new(&mut s);
    let mine = d.request(0, 0, 0, 128);
    let other = d.request(1, 1, FAR, 128);
    d.submit(mine);
    d.submit(other);
    d.dispatch_one(3 * MS);
    d.s.context_exited(ContextId(0), d.now);
    d.finish();
    assert_eq!(d.s.poll_dispatch(d.now).unwrap().id, other.id);
}
