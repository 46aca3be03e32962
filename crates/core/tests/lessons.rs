//! The lessons the seeds drew about anticipation, one scripted test each (issue 18), driving a
//! scheduler with explicit times. The estimator is the seek-distance one (1 sector reads as
//! 1 ns); the device serves a request in 3 ms, plus 6 ms when the head has to move.

use antsched_core::{build, BuildEnv, ContextId, Nanos, Op, Request, MS, US};

mod common;
use common::paper_service;

/// Where the stream reads: about 1 GB from the chain's files.
const FAR: u64 = 2_000_000;

/// What a run of a chain against a stream showed.
struct ChainRun {
    /// When the chain's last member's request completed.
    chain_done: Nanos,
    /// Stream requests served while the chain ran, and the longest any of them waited.
    stream_served: usize,
    stream_worst_wait: Nanos,
}

/// `find -exec cat` against `cat big-file` (the Linux/CAS paper's Table 2), scripted: `members`
/// short-lived processes, each reading one 64 KB block just after the previous one's and
/// exiting 200 us after its completion; the next is forked and issues its read 1 ms after the
/// completion. Beside them a stream reads sequentially far away, issuing its next read the
/// moment the previous completes.
fn chain_against_stream(spec: &str, members: u64) -> ChainRun {
    let mut s = build(spec, &BuildEnv::default()).unwrap();
    let mut now: Nanos = 0;
    let mut head = 0;
    let mut next_id = 0;
    let mut busy: Option<(Request, Nanos)> = None;
    let mut member = 0;
    let mut member_issue = Some(0);
    let mut exit: Option<(ContextId, Nanos)> = None;
    let mut stream_next = FAR;
    let mut stream_issue = Some(0);
    let mut run = ChainRun {
        chain_done: 0,
        stream_served: 0,
        stream_worst_wait: 0,
    };
    let mut request = |ctx: u32, sector: u64, now: Nanos| {
        next_id += 1;
        common::request(next_id, ctx, ctx.min(1), Op::Read, sector, now)
    };
    for _ in 0..1_000_000 {
        // Completion, then exit, then arrivals, at the instant each is due.
        if let Some((r, _)) = busy.filter(|&(_, done)| done <= now) {
            busy = None;
            s.complete(r.id, now);
            if r.context.0 == 0 {
                stream_issue = Some(now);
                if member < members {
                    run.stream_served += 1;
                    run.stream_worst_wait = run.stream_worst_wait.max(now - r.issued);
                }
            } else {
                exit = Some((r.context, now + 200 * US));
                member += 1;
                if member == members {
                    run.chain_done = now;
                    return run;
                }
                member_issue = Some(now + MS);
            }
        }
        if let Some((ctx, _)) = exit.filter(|&(_, t)| t <= now) {
            exit = None;
            s.context_exited(ctx, now);
        }
        if member_issue.is_some_and(|t| t <= now) {
            member_issue = None;
            let r = request(10 + member as u32, member * 128, now);
            s.enqueue(r, now);
        }
        if stream_issue.is_some_and(|t| t <= now) {
            stream_issue = None;
            let r = request(0, stream_next, now);
            stream_next += 128;
            s.enqueue(r, now);
        }
        if busy.is_none() {
            if let Some(r) = s.poll_dispatch(now) {
                let service = paper_service(&r, head);
                head = r.end();
                busy = Some((r, now + service));
            }
        }
        now = [
            busy.map(|(_, t)| t),
            exit.map(|(_, t)| t),
            member_issue,
            stream_issue,
            s.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .filter(|&t| t > now)
        .min()
        .expect("something is always due: the stream never stops");
    }
    panic!("{spec}: the chain did not finish");
}

/// Cooperative anticipation (the Linux/CAS paper, section 4): with `chains=1` the core learns
/// that an exited process's successor reads where it left off about a millisecond later, and
/// waits for it instead of seeking to the stream; the chain then runs at the disk's pace,
/// where without it each member waits for Aged-SPTF's age bound to pull the head back. The
/// stream is not starved: its requests still go within the age bound.
#[test]
fn cooperative_anticipation_follows_a_chain_of_short_lived_processes() {
    let members = 40;
    let bound = 50 * MS;
    let without = chain_against_stream("as-aged-sptf:estimator=seek,age_bound=50ms", members);
    let with = chain_against_stream(
        "as-aged-sptf:estimator=seek,age_bound=50ms,chains=1",
        members,
    );
    assert!(
        with.chain_done * 3 < without.chain_done,
        "the chain took {} ms with chains=1 against {} ms without",
        with.chain_done / MS,
        without.chain_done / MS
    );
    assert!(with.stream_served > 0, "the stream was starved");
    assert!(
        with.stream_worst_wait <= bound + 20 * MS,
        "a stream request waited {} ms",
        with.stream_worst_wait / MS
    );
}

/// What the chain taught is about chains: a stream alone, or two sequential readers, are
/// served exactly as without `chains` (the paper's experiments are unchanged by it).
#[test]
fn chains_leave_long_lived_readers_alone() {
    use common::{Driver, Reader};
    for base in ["as-aged-sptf", "as-sptf", "as-clook", "as-stride"] {
        let mut orders = Vec::new();
        for spec in [
            format!("{base}:estimator=seek"),
            format!("{base}:estimator=seek,chains=1"),
        ] {
            let mut s = build(&spec, &BuildEnv::default()).unwrap();
            let mut d = Driver::new(&mut *s);
            let mut readers = [
                Reader::sequential(0, 0, 200 * US),
                Reader::sequential(1, FAR, 200 * US),
            ];
            d.run(&mut readers, 60, &paper_service);
            orders.push(d.order());
        }
        assert_eq!(orders[0], orders[1], "{base}");
    }
}

/// What a synchronous reader and a write-back flood each got in a run.
#[derive(Debug)]
struct FloodRun {
    reads: usize,
    read_worst_wait: Nanos,
    writes: usize,
    write_worst_wait: Nanos,
}

/// `cat` against `dd` (the Linux/CAS paper's Table 1), scripted: a reader far away issues
/// its next 64 KB read the moment the previous completes; the write-back keeps 64 asynchronous
/// writes queued near the head, each replaced by a new one (further on) when it completes.
fn reader_against_flood(spec: &str, until: Nanos) -> FloodRun {
    let mut s = build(spec, &BuildEnv::default()).unwrap();
    let (mut now, mut head, mut next_id) = (0, 0, 0);
    let mut busy: Option<(Request, Nanos)> = None;
    let mut request = |ctx: u32, op: Op, sector: u64, now: Nanos| {
        next_id += 1;
        common::request(next_id, ctx, 0, op, sector, now)
    };
    let mut write_at = 0;
    for _ in 0..64 {
        s.enqueue(request(1, Op::Write, write_at, 0), 0);
        write_at += 128;
    }
    let mut read_at = FAR;
    s.enqueue(request(2, Op::Read, read_at, 0), 0);
    let mut run = FloodRun {
        reads: 0,
        read_worst_wait: 0,
        writes: 0,
        write_worst_wait: 0,
    };
    while now < until {
        if let Some((r, _)) = busy.filter(|&(_, done)| done <= now) {
            busy = None;
            s.complete(r.id, now);
            if r.op == Op::Read {
                run.reads += 1;
                read_at += 128;
                s.enqueue(request(2, Op::Read, read_at, now), now);
            } else {
                run.writes += 1;
                s.enqueue(request(1, Op::Write, write_at, now), now);
                write_at += 128;
            }
        }
        if busy.is_none() {
            if let Some(r) = s.poll_dispatch(now) {
                let waited = now - r.issued;
                if r.op == Op::Read {
                    run.read_worst_wait = run.read_worst_wait.max(waited);
                } else {
                    run.write_worst_wait = run.write_worst_wait.max(waited);
                }
                let service = paper_service(&r, head);
                head = r.end();
                busy = Some((r, now + service));
            }
        }
        now = [busy.map(|(_, t)| t), s.poll_timeout()]
            .into_iter()
            .flatten()
            .filter(|&t| t > now)
            .min()
            .expect("the flood never runs dry");
    }
    run
}

/// Aging that raises a request's priority gradually with its wait (the SOSP paper's
/// "often gradually"): Aged-SPTF's threshold, past which it serves oldest first, puts the
/// reader behind every write queued before its request, so that each of its requests waits
/// about the bound; `as-rw-sptf` serves the reader's requests as they come, and its worst wait
/// is a write batch, not the age bound.
#[test]
fn gradual_aging_keeps_a_reader_going_where_a_threshold_serves_oldest_first() {
    let until = 20 * antsched_core::SEC;
    let threshold = reader_against_flood("as-aged-sptf:estimator=seek", until);
    let gradual = reader_against_flood("as-rw-sptf:estimator=seek", until);
    assert!(
        2 * gradual.reads > 3 * threshold.reads,
        "reads: as-rw-sptf {gradual:?}, as-aged-sptf {threshold:?}"
    );
    assert!(
        gradual.read_worst_wait < threshold.read_worst_wait / 4,
        "worst read wait: as-rw-sptf {gradual:?}, as-aged-sptf {threshold:?}"
    );
}

/// Writes are never waited for, and a write-back flood is neither starving the reader nor
/// starved by it: the writes' turn comes once a write has waited `write_expire` and lasts a
/// batch, so every write goes within `write_expire` plus the batches before it.
#[test]
fn a_write_back_flood_neither_starves_a_reader_nor_is_starved() {
    let until = 20 * antsched_core::SEC;
    let run = reader_against_flood("as-rw-sptf:estimator=seek", until);
    // The reader has the disk but for the write batches: at least 3/4 of what it gets alone
    // (3 ms a request back to back, 4 ms after a seek).
    assert!(run.reads as u64 > until / (4 * MS) * 3 / 4, "{run:?}");
    // The writes go in batches: several hundred, none waiting past the expiry, one read
    // batch and one write batch after it (the queue holds 64, served nearest first).
    assert!(run.writes > 300, "{run:?}");
    assert!(run.write_worst_wait < 3 * antsched_core::SEC, "{run:?}");
}

/// Shares by disk time (the paper's contract) or by bytes (BFQ's), in turns of a slice:
/// two sequential readers weighted 1:2 get 1:2 of the disk's time with `share=time` (and of
/// the bytes with `share=bytes`), at most a seek per turn lost, where Stride's switch on every
/// request seeks between every two.
#[test]
fn shares_by_disk_time_or_bytes_keep_the_readers_sequential() {
    use common::{switches, Driver, Reader};
    let run = |spec: &str| {
        let mut s = build(spec, &BuildEnv::default()).unwrap();
        s.set_class_weight(antsched_core::ClassId(0), 100);
        s.set_class_weight(antsched_core::ClassId(1), 200);
        let mut d = Driver::new(&mut *s);
        let mut readers = [
            Reader::sequential(0, 0, 100 * US),
            Reader::sequential(1, FAR, 100 * US),
        ];
        d.run(&mut readers, 3000, &paper_service);
        let order = d.order();
        let served = |c: u32| order.iter().filter(|&&x| x == c).count() as f64;
        (served(1) / served(0), switches(&order))
    };
    for share in ["time", "bytes"] {
        let (ratio, switched) = run(&format!("as-rw-sptf:estimator=seek,share={share}"));
        assert!((ratio - 2.0).abs() < 0.1, "share={share}: {ratio:.3}");
        // A turn is 100 ms, about 33 requests of 3 ms: a switch per turn.
        assert!(switched < 3000 / 20, "share={share}: {switched} switches");
    }
}

/// A chain's promise is checked against what answers it: a reader thinking 10 ms (past half
/// the think cap, so each of its completions may end a chain's member) whose requests jump
/// back and forth across the disk is not worth waiting for by its own statistics, and a chain
/// seen once (a successor 1 ms after its member, where the member left off) must not make the
/// core wait for it at every completion. A chain wait that the reader itself answers is a
/// chain that did not go on, as a timeout is: the waits stop after the first few.
#[test]
fn a_chain_wait_answered_by_its_own_member_is_a_chain_that_did_not_go_on() {
    use common::Driver;
    let service = 5 * MS;
    let mut s = build("as-sptf:estimator=seek,chains=1", &BuildEnv::default()).unwrap();
    let mut d = Driver::new(&mut *s);
    // The chain seen once: a short-lived process reads and exits, and another reads on from
    // where it left off 1 ms later.
    let first = d.request(10, 10, 0, 128);
    d.submit(first);
    d.dispatch_one(service).unwrap();
    d.finish().unwrap();
    let done = d.now;
    d.now += 200 * US;
    d.s.context_exited(ContextId(10), d.now);
    d.now = done + MS;
    let successor = d.request(11, 11, 128, 128);
    d.submit(successor);
    assert_eq!(d.dispatch_one(service).unwrap().context, ContextId(11));
    d.finish().unwrap();
    d.now += 200 * US;
    d.s.context_exited(ContextId(11), d.now);
    // The thinker alternates between 1,000,000 and 21,000,000 (20 ms apart with this
    // estimator); a stream reads halfway between, 10 ms from either, one read after each of
    // the thinker's completions.
    let mut stream_at = 11_000_000;
    let mut stream_queued = false;
    let mut waited = Vec::new();
    for round in 0..20u64 {
        let r = d.request(1, 1, 1_000_000 + (round % 2) * 20_000_000, 16);
        d.submit(r);
        loop {
            // A wait may hold the queued requests back until its timeout.
            let r = loop {
                if let Some(r) = d.dispatch_one(service) {
                    break r;
                }
                d.now = d.s.poll_timeout().expect("a wait holds the queue back");
            };
            if r.context == ContextId(1) {
                // The stream's next read arrives while the thinker's is served, so that it
                // is queued when the thinker's completes.
                if !stream_queued {
                    let next = d.request(0, 0, stream_at, 128);
                    stream_at += 128;
                    d.submit(next);
                    stream_queued = true;
                }
                d.finish().unwrap();
                break;
            }
            d.finish().unwrap();
            stream_queued = false;
        }
        // The thinker's completion: does the core wait, rather than serve the stream?
        let completed = d.now;
        let before = d.s.anticipation().waits;
        match d.s.poll_dispatch(d.now) {
            Some(r) => {
                assert_eq!(r.context, ContextId(0));
                d.busy = Some((r, d.now + service));
                d.head = r.end();
                d.finish().unwrap();
                stream_queued = false;
                waited.push(false);
            }
            None => waited.push(d.s.anticipation().waits > before),
        }
        d.now = completed + 10 * MS;
    }
    let waits = waited.iter().filter(|&&w| w).count();
    assert!(
        waits <= 3,
        "waited for the thinker at {waits} of its 20 completions: {waited:?}"
    );
}

/// A starved context is waited for when the trip back counts (`AgedSptfRule`): beside six
/// streams, a reader that thinks 7 ms between requests 250 MB apart, beyond them all. The SPTF
/// rule alone never waits for it (its positioning, measured from the streams it is served
/// between, is as far as the candidate's), so each of its requests waits out the floor's
/// shortened grace and then its aging, and is served alone: 20 requests in the first 4,000.
/// Waited for once a visit while it is starved, it gets 120.
#[test]
fn a_starved_context_is_waited_for_when_the_trip_back_counts() {
    use common::{Driver, Reader};
    let mut s = build("as-rw-sptf:estimator=seek", &BuildEnv::default()).unwrap();
    let mut d = Driver::new(&mut *s);
    let mut readers: Vec<Reader> = (0..6)
        .map(|i| Reader::sequential(i + 1, u64::from(i) * 10_000_000, 0))
        .collect();
    readers.push(Reader {
        step: 500_000,
        ..Reader::sequential(9, 60_000_000, 7 * MS)
    });
    d.run(&mut readers, 4_000, &paper_service);
    let starved = d.order().iter().filter(|&&c| c == 9).count();
    assert!(
        starved >= 60,
        "{starved} of 4,000 requests in {} ms",
        d.now / MS
    );
}
