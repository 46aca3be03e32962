//! The rules of `cfq` (Linux 2.6.29 `cfq-iosched.c`), one test per rule, driven with
//! explicit times.

mod common;

use antsched_core::peers::cfq::{Cfq, CfqConfig, QueueKey};
use antsched_core::{ContextId, Nanos, Op, Scheduler, MS, US};
use common::{paper_service, Driver, Reader};

const FAR: u64 = 2_000_000;

fn cfq() -> Cfq {
    Cfq::new("cfq", CfqConfig::default())
}

/// Serves everything queued with `service` per request, letting idle timers run out.
fn settle<S: Scheduler + ?Sized>(d: &mut Driver<'_, S>, service: Nanos) {
    loop {
        if d.busy.is_some() {
            d.finish();
        } else if d.dispatch_one(service).is_none() {
            match d.s.poll_timeout() {
                Some(t) => d.now = t,
                None => return,
            }
        }
    }
}

#[test]
fn cfq_idles_for_a_sync_queue_up_to_slice_idle() {
    let mut s = cfq();
    let mut d = Driver::new(&mut s);
    let mine = d.request(0, 0, 0, 128);
    let other = d.request(1, 1, FAR, 128);
    d.submit(mine);
    d.submit(other);
    assert_eq!(d.dispatch_one(3 * MS).unwrap().id, mine.id);
    d.finish();
    // The active queue is empty: idle for its next request rather than seek away.
    assert_eq!(d.s.poll_dispatch(d.now), None);
    assert_eq!(d.s.poll_timeout(), Some(3 * MS + 8 * MS));
    assert_eq!(d.s.poll_dispatch(10 * MS), None);
    assert_eq!(d.s.poll_dispatch(11 * MS).unwrap().id, other.id);
    let a = d.s.anticipation();
    assert_eq!((a.waits, a.timeouts, a.waited), (1, 1, 8 * MS));
}

#[test]
fn cfq_dispatches_the_awaited_request_at_once() {
    let mut s = cfq();
    let mut d = Driver::new(&mut s);
    let first = d.request(0, 0, 0, 128);
    let other = d.request(1, 1, FAR, 128);
    d.submit(first);
    d.submit(other);
    d.dispatch_one(3 * MS);
    d.finish();
    assert_eq!(d.s.poll_dispatch(d.now), None);
    d.now += 300 * US;
    let next = d.request(0, 0, 128, 128);
    d.submit(next);
    assert_eq!(d.s.poll_timeout(), None, "the idle timer is cancelled");
    assert_eq!(d.s.poll_dispatch(d.now).unwrap().id, next.id);
    assert_eq!(d.s.anticipation().hits, 1);
}

#[test]
fn cfq_disables_idling_for_a_seeky_queue() {
    let mut s = cfq();
    let mut d = Driver::new(&mut s);
    // A context whose requests land a million sectors apart.
    let seeky = d.request(0, 0, 1_000_000, 128);
    let other = d.request(1, 1, FAR, 128);
    d.submit(seeky);
    d.submit(other);
    d.dispatch_one(3 * MS);
    d.finish();
    // CFQ assumes a queueing device (hw_tag) until load proves otherwise, and does not idle
    // for a seeky context on one.
    assert_eq!(d.s.idle_window(ContextId(0)), Some(false));
    assert_eq!(d.s.poll_dispatch(d.now).unwrap().id, other.id);
}

#[test]
fn cfq_idles_only_cfq_min_tt_for_a_seeky_queue_once_the_device_is_known_not_to_queue() {
    let mut s = cfq();
    let mut d = Driver::new(&mut s);
    // Load: three contexts with 40 requests queued each, served one at a time, teach CFQ
    // over 50 completions with more than 5 requests queued that the device does not queue.
    // (A queue alone moves all its requests to the dispatch list, so it takes two.)
    for ctx in [7, 8, 9] {
        for i in 0..40 {
            let r = d.request(ctx, ctx, u64::from(ctx) * FAR + i * 8, 8);
            d.submit(r);
        }
    }
    settle(&mut d, MS);
    assert!(!d.s.hw_tag());
    // (Past the last queue's idle window.)
    d.now += 20 * MS;
    // A reader jumping 100,000 sectors each time, with enough samples to be trusted.
    let mut sector = 0;
    for _ in 0..5 {
        sector += 100_000;
        d.now += 200 * US;
        let r = d.request(0, 0, sector, 8);
        d.submit(r);
        assert_eq!(d.dispatch_one(MS).unwrap().id, r.id);
        d.finish();
    }
    let (think, seek) = d.s.context_means(ContextId(0)).unwrap();
    assert!(seek > 8192, "mean seek {seek}");
    assert_eq!(d.s.idle_window(ContextId(0)), Some(true), "think {think}");
    sector += 100_000;
    let last = d.request(0, 0, sector, 8);
    let other = d.request(1, 1, FAR, 8);
    d.submit(last);
    d.submit(other);
    assert_eq!(d.dispatch_one(MS).unwrap().id, last.id);
    d.finish();
    // "Allow a little bit of time for him to submit a new rq": 2 ms, not slice_idle.
    let t = d.now;
    assert_eq!(d.s.poll_dispatch(t), None);
    assert_eq!(d.s.poll_timeout(), Some(t + 2 * MS));
}

#[test]
fn cfq_closes_the_idle_window_of_a_context_that_thinks_longer_than_slice_idle() {
    let mut s = cfq();
    let mut d = Driver::new(&mut s);
    let mut sector = 0;
    for _ in 0..5 {
        let r = d.request(0, 0, sector, 128);
        sector += 128;
        d.submit(r);
        d.dispatch_one(3 * MS);
        d.finish();
        d.now += 12 * MS;
    }
    d.now -= 12 * MS;
    let (think, _) = d.s.context_means(ContextId(0)).unwrap();
    assert!(think > 8 * MS, "mean think {think}");
    assert_eq!(d.s.idle_window(ContextId(0)), Some(false));
    let last = d.request(0, 0, sector, 128);
    let other = d.request(1, 1, FAR, 128);
    d.submit(last);
    d.submit(other);
    assert_eq!(d.dispatch_one(3 * MS).unwrap().id, last.id);
    d.finish();
    assert_eq!(d.s.poll_dispatch(d.now).unwrap().id, other.id);
}

#[test]
fn cfq_gives_each_sync_queue_a_slice_of_slice_sync_in_turn() {
    let mut s = cfq();
    let mut d = Driver::new(&mut s);
    let mut readers = [
        Reader::sequential(0, 0, 200 * US),
        Reader::sequential(1, FAR, 200 * US),
    ];
    // Context 1 reads alone first, long enough for its mean seek distance (the 2,000,000
    // sectors of its first request from sector 0) to decay below the seeky threshold.
    readers[0].issue_at = None;
    d.run(&mut readers, 60, &paper_service);
    let (_, seek) = d.s.context_means(ContextId(1)).unwrap();
    assert!(seek < 8 * 1024, "mean seek {seek}");
    let start = d.dispatched.len();
    readers[0].issue_at = Some(d.now);
    d.run(&mut readers, start + 150, &paper_service);
    // Runs of consecutive dispatches of one context, after the one in progress.
    let mut runs = vec![];
    let mut current = (d.dispatched[start].1.context, d.dispatched[start].0);
    for &(t, r) in &d.dispatched[start..] {
        if r.context != current.0 {
            runs.push((current.0, t - current.1));
            current = (r.context, t);
        }
    }
    assert!(runs.len() >= 3, "{runs:?}");
    // Each slice lasts slice_sync = 100 ms from its first completion (9 ms in: a seek), and
    // ends at the first completion past that; the contexts alternate.
    for &(ctx, len) in &runs[1..3] {
        assert!((109 * MS..116 * MS).contains(&len), "{ctx}: {len}");
    }
    assert_ne!(runs[1].0, runs[2].0);
}

#[test]
fn cfq_preempts_an_idling_queue_for_a_request_within_the_active_context_s_mean_seek() {
    let mut s = cfq();
    let mut d = Driver::new(&mut s);
    // Context 0 reads every 1,000 sectors: its mean seek distance is about 1,000.
    let mut sector = 0;
    for _ in 0..5 {
        let r = d.request(0, 0, sector, 8);
        d.submit(r);
        d.dispatch_one(3 * MS);
        d.finish();
        sector += 1_000;
        d.now += 200 * US;
    }
    d.now -= 200 * US;
    assert_eq!(d.s.poll_dispatch(d.now), None, "idling for context 0");
    assert_eq!(d.s.active_queue(), Some(QueueKey::Sync(ContextId(0))));
    // Another context asks for a block 500 sectors from the head: as good as what context 0
    // would ask for.
    d.now += MS;
    let close = d.request(1, 1, sector - 1_000 + 8 + 500, 8);
    d.submit(close);
    assert_eq!(d.s.active_queue(), None, "the active slice ended");
    assert_eq!(d.s.poll_dispatch(d.now).unwrap().id, close.id);
}

#[test]
fn cfq_commits_a_dispatch_round_before_a_preempting_request() {
    let mut s = cfq();
    let mut d = Driver::new(&mut s);
    for i in 0..10 {
        let w = d.write(9, FAR + i * 8, 8, false);
        d.submit(w);
    }
    // The asynchronous queue, alone, moves its requests to the dispatch list in rounds of
    // quantum (4) until it has none left.
    assert_eq!(d.dispatch_one(MS).unwrap().op, Op::Write);
    assert_eq!(d.s.pending(), 9);
    let read = d.request(0, 0, 0, 8);
    d.submit(read);
    // The read preempts the asynchronous queue, but what is on the dispatch list goes first.
    let mut order = vec![];
    d.finish();
    while let Some(r) = d.dispatch_one(MS) {
        order.push(r.op);
        d.finish();
    }
    let expected: Vec<Op> = std::iter::repeat_n(Op::Write, 9)
        .chain(std::iter::once(Op::Read))
        .collect();
    assert_eq!(order, expected);
}

#[test]
fn cfq_serves_an_expired_request_first_once_per_slice() {
    let mut s = Cfq::new(
        "cfq",
        CfqConfig {
            fifo_expire_sync: 50 * MS,
            ..CfqConfig::default()
        },
    );
    let mut d = Driver::new(&mut s);
    // Two contexts stream upward with five requests always queued, so that both stay busy
    // and take slices in turn.
    let mut next = [1_000_000u64, 3_000_000];
    for ctx in [0, 1] {
        for _ in 0..5 {
            let r = d.request(ctx, ctx, next[ctx as usize], 8);
            next[ctx as usize] += 8;
            d.submit(r);
        }
    }
    d.dispatch_one(MS);
    // One request of context 0 lies far behind the head, beyond back_seek_max: only the FIFO
    // can bring it forward.
    let behind = d.request(0, 0, 0, 8);
    d.submit(behind);
    let served_at = loop {
        let done = d.finish().unwrap();
        let ctx = done.context.0;
        let more = d.request(ctx, ctx, next[ctx as usize], 8);
        next[ctx as usize] += 8;
        d.submit(more);
        if d.dispatch_one(MS).unwrap().id == behind.id {
            break d.now;
        }
    };
    // It expires at 50 ms, inside context 0's first slice (1 ms to 101 ms), but the FIFO is
    // looked at only in the first dispatch round of a slice: context 0's next one, after
    // context 1's slice, near 202 ms.
    assert!(
        served_at > 200 * MS && served_at < 210 * MS,
        "served at {served_at}"
    );
}

#[test]
fn cfq_ends_the_slice_of_a_process_that_exits() {
    let mut s = cfq();
    let mut d = Driver::new(&mut s);
    let mine = d.request(0, 0, 0, 128);
    let other = d.request(1, 1, FAR, 128);
    d.submit(mine);
    d.submit(other);
    d.dispatch_one(3 * MS);
    d.finish();
    assert_eq!(d.s.poll_dispatch(d.now), None, "idling for context 0");
    d.now += MS;
    // `cfq_exit_cfqq`: the queue of an exiting process stops being served at once.
    d.s.context_exited(ContextId(0), d.now);
    assert_eq!(d.s.active_queue(), None);
    assert_eq!(d.s.poll_dispatch(d.now).unwrap().id, other.id);
}
