//! The rules of `deadline` (Linux 2.6.10 to 2.6.29 `deadline-iosched.c`), one test per rule,
//! driven with explicit times.

mod common;

use antsched_core::{build, BuildEnv, Nanos, Op, Scheduler, MS};
use common::{paper_service, switches, Driver, Reader};

fn deadline() -> Box<dyn Scheduler> {
    build("deadline", &BuildEnv::default()).unwrap()
}

const SERVICE: Nanos = 10 * MS;

#[test]
fn deadline_serves_an_expired_read_before_the_sorted_order() {
    let mut s = deadline();
    let mut d = Driver::new(&mut *s);
    // Context 0 sweeps upward with requests a seek apart (so that every request is a batch
    // of its own and the FIFO is looked at each time), always one ahead of the head.
    let mut sector = 1_000;
    for _ in 0..2 {
        let r = d.request(0, 0, sector, 8);
        sector += 1_000;
        d.submit(r);
    }
    d.dispatch_one(SERVICE);
    // Behind the head: the upward sweep leaves it for later.
    let behind = d.request(1, 1, 50, 8);
    d.submit(behind);
    let served_at = loop {
        d.finish();
        let ahead = d.request(0, 0, sector, 8);
        sector += 1_000;
        d.submit(ahead);
        if d.dispatch_one(SERVICE).unwrap().id == behind.id {
            break d.now;
        }
    };
    // read_expire is 500 ms: served at the first decision after its deadline, not before.
    assert!(
        served_at > 500 * MS && served_at <= 500 * MS + SERVICE,
        "served at {served_at}"
    );
}

#[test]
fn deadline_gives_writes_a_batch_after_writes_starved_read_batches() {
    let mut s = deadline();
    let mut d = Driver::new(&mut *s);
    let w = d.write(9, 500_000, 8, false);
    d.submit(w);
    for i in 0..5 {
        // Reads a seek apart: each is a batch of its own.
        let r = d.request(0, 0, 1_000 + i * 10_000, 8);
        d.submit(r);
    }
    let mut ops = vec![];
    for _ in 0..4 {
        ops.push(d.dispatch_one(SERVICE).unwrap().op);
        d.finish();
    }
    // writes_starved = 2: two read batches may pass waiting writes, then a write batch.
    assert_eq!(ops, vec![Op::Read, Op::Read, Op::Write, Op::Read]);
}

#[test]
fn deadline_runs_a_batch_of_fifo_batch_contiguous_requests() {
    let mut s = deadline();
    let mut d = Driver::new(&mut *s);
    let w = d.write(9, 5_000_000, 8, false);
    d.submit(w);
    for i in 0..40 {
        let r = d.request(0, 0, 1_000 + i * 8, 8);
        d.submit(r);
    }
    let mut write_at = None;
    for n in 0..41 {
        let r = d.dispatch_one(SERVICE).unwrap();
        d.finish();
        if r.op == Op::Write {
            write_at = Some(n);
            break;
        }
    }
    // Two batches of fifo_batch = 16 contiguous reads, then the write.
    assert_eq!(write_at, Some(32));
}

#[test]
fn deadline_ends_a_batch_on_a_request_that_needs_a_seek() {
    let mut s = deadline();
    let mut d = Driver::new(&mut *s);
    let w = d.write(9, 5_000_000, 8, false);
    d.submit(w);
    // Contiguous pairs separated by gaps: each gap ends the batch.
    for i in 0..10u64 {
        let base = 1_000 + i * 1_000;
        for sector in [base, base + 8] {
            let r = d.request(0, 0, sector, 8);
            d.submit(r);
        }
    }
    let mut write_at = None;
    for n in 0..21 {
        let r = d.dispatch_one(SERVICE).unwrap();
        d.finish();
        if r.op == Op::Write {
            write_at = Some(n);
            break;
        }
    }
    // Two read batches of two contiguous requests each, then the write.
    assert_eq!(write_at, Some(4));
}

#[test]
fn deadline_restarts_from_the_oldest_request_when_the_sweep_runs_off_the_top() {
    let mut s = deadline();
    let mut d = Driver::new(&mut *s);
    let top = d.request(0, 0, 900_000, 8);
    d.submit(top);
    d.dispatch_one(SERVICE);
    d.now += MS;
    let older = d.request(1, 1, 500_000, 8);
    d.submit(older);
    d.now += MS;
    let lower = d.request(2, 2, 100, 8);
    d.submit(lower);
    d.finish();
    // Nothing above the head: no wrap to the lowest sector, but the oldest request.
    assert_eq!(d.dispatch_one(SERVICE).unwrap().id, older.id);
}

#[test]
fn deadline_never_idles_so_two_sequential_readers_alternate() {
    let mut s = deadline();
    let mut d = Driver::new(&mut *s);
    let mut readers = [
        Reader::sequential(0, 0, 200 * 1_000),
        Reader::sequential(1, 2_000_000, 200 * 1_000),
    ];
    d.run(&mut readers, 40, &paper_service);
    // Deceptive idleness: each completion finds only the other reader's request.
    assert!(switches(&d.order()) >= 38, "{:?}", d.order());
    assert_eq!(s.anticipation().waits, 0);
    assert_eq!(s.poll_timeout(), None);
}
