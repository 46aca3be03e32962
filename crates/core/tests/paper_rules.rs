//! One scripted test per rule of the paper (sections 3.2 to 3.5), each driving a scheduler with
//! explicit times. The estimator is the seek-distance one (1 sector reads as 1 ns), so the
//! readers below, 2,000,000 sectors (about 1 GB) apart, see a 2 ms benefit in waiting.

mod common;

use antsched_core::heuristic::{Combination, Evaluation, Heuristic, Proportional, SptfRule};
use antsched_core::policy::{Policy, RelaxedStride, Sptf, Stride};
use antsched_core::{
    build, Anticipatory, BuildEnv, ClassId, ContextId, CoreConfig, Nanos, Scheduler,
    SeekDistanceEstimator, MS, US,
};
use common::{paper_service, switches, Driver, Reader};

const FAR: u64 = 2_000_000;

fn sched(spec: &str) -> Box<dyn Scheduler> {
    build(spec, &BuildEnv::default()).unwrap()
}

fn core<P: Policy + 'static, H: Heuristic<P> + 'static>(policy: P, h: H) -> Anticipatory<P, H> {
    Anticipatory::new(
        "test",
        policy,
        h,
        Box::new(SeekDistanceEstimator::new()),
        CoreConfig::default(),
    )
}

/// Issues, dispatches and completes `n` sequential requests of `ctx` alone, each after `think`,
/// so that the core learns its think time and locality. Leaves the last one completed.
fn train<S: Scheduler + ?Sized>(
    d: &mut Driver<'_, S>,
    ctx: u32,
    class: u32,
    start: u64,
    step: i64,
    n: usize,
    think: Nanos,
) {
    let mut sector = start;
    for _ in 0..n {
        let r = d.request(ctx, class, sector, 128);
        d.s.enqueue(r, d.now);
        let got =
            d.s.poll_dispatch(d.now)
                .expect("a lone request is dispatched");
        assert_eq!(got.id, r.id);
        d.head = got.end();
        d.now += 3 * MS;
        d.s.complete(got.id, d.now);
        d.now += think;
        sector = sector.wrapping_add_signed(step);
    }
    d.now -= think;
}

#[test]
fn sptf_alternates_between_two_sequential_readers() {
    // Deceptive idleness (section 2, example #1): a work-conserving SPTF decides at each
    // completion, before the reader that just finished has issued its next request.
    let mut s = sched("sptf");
    let mut d = Driver::new(&mut *s);
    let mut readers = [
        Reader::sequential(0, 0, 200 * US),
        Reader::sequential(1, FAR, 200 * US),
    ];
    d.run(&mut readers, 40, &paper_service);
    assert_eq!(
        switches(&d.order()),
        39,
        "every dispatch switches: {:?}",
        d.order()
    );
}

#[test]
fn as_sptf_serves_consecutive_requests_from_the_same_context() {
    let mut s = sched("as-sptf");
    let mut d = Driver::new(&mut *s);
    let mut readers = [
        Reader::sequential(0, 0, 200 * US),
        Reader::sequential(1, FAR, 200 * US),
    ];
    d.run(&mut readers, 40, &paper_service);
    // Two switches while the statistics warm up (no history, no waiting), then the reader
    // the head is at keeps it: SPTF has no reason ever to leave.
    assert!(switches(&d.order()) <= 2, "{:?}", d.order());
    let a = s.anticipation();
    assert!(
        a.waits >= 30 && a.hits == a.waits && a.timeouts == 0,
        "{a:?}"
    );
}

#[test]
fn a_far_candidate_is_not_waited_for_when_the_median_think_time_exceeds_the_benefit() {
    for (think, waits) in [(10 * MS, false), (200 * US, true)] {
        let mut s = sched("as-sptf");
        let mut d = Driver::new(&mut *s);
        train(&mut d, 0, 0, 0, 128, 10, think);
        // Context 0's last request is in flight; context 1 queues a request 2 ms away.
        let r = d.request(0, 0, 1280, 128);
        d.s.enqueue(r, d.now);
        assert_eq!(d.s.poll_dispatch(d.now).unwrap().id, r.id);
        let far = d.request(1, 1, FAR, 128);
        d.s.enqueue(far, d.now);
        d.now += 3 * MS;
        d.s.complete(r.id, d.now);
        let got = d.s.poll_dispatch(d.now);
        if waits {
            // cost = 250 us (median of 200 us think times) < benefit = 2 ms: wait until the
            // 95th percentile, 475 us.
            assert_eq!(got, None);
            assert_eq!(d.s.poll_timeout(), Some(d.now + 475 * US));
        } else {
            // cost = 10.25 ms (median) > benefit = 2 ms: dispatch the far request at once.
            assert_eq!(got.unwrap().id, far.id);
        }
    }
}

/// A heuristic that asks for a longer wait each time it is asked.
struct Greedy(Nanos);

impl<P> Heuristic<P> for Greedy {
    fn evaluate(&mut self, _p: &P, _ev: &Evaluation<'_>) -> Nanos {
        self.0 += MS;
        self.0
    }
}

#[test]
fn waiting_never_outlasts_the_first_timeout() {
    let mut s = core(Sptf::new(), Greedy(4 * MS));
    let mut d = Driver::new(&mut s);
    train(&mut d, 0, 0, 0, 128, 3, 200 * US);
    let first = d.request(1, 1, FAR, 128);
    d.s.enqueue(first, d.now);
    assert_eq!(d.s.poll_dispatch(d.now), None);
    let deadline = d.s.poll_timeout().unwrap();
    assert_eq!(deadline, d.now + 5 * MS);
    // Arrivals from other contexts during the wait: each is re-evaluated, and the heuristic
    // asks for more every time, but the original timeout stands.
    for i in 0..4 {
        d.now += MS;
        let r = d.request(2 + i, 2 + i, FAR + 1000 * u64::from(i), 128);
        d.s.enqueue(r, d.now);
        assert_eq!(d.s.poll_dispatch(d.now), None);
        assert_eq!(d.s.poll_timeout(), Some(deadline));
    }
    d.now = deadline;
    assert!(d.s.poll_dispatch(d.now).is_some(), "the timeout dispatches");
    let a = d.s.anticipation();
    assert_eq!((a.waits, a.hits, a.timeouts, a.waited), (1, 0, 1, 5 * MS));
}

#[test]
fn a_reevaluation_past_the_95th_percentile_dispatches_before_a_coarse_timer_fires() {
    // Section 3.3: the wait is computed exactly even with a coarse timer, "so that a request
    // arriving after the 95%ile thinktime will force an immediate dispatch".
    let mut s = sched("as-sptf:timer_tick=1ms");
    let mut d = Driver::new(&mut *s);
    train(&mut d, 0, 0, 0, 128, 10, 200 * US);
    let far = d.request(1, 1, FAR, 128);
    d.s.enqueue(far, d.now);
    assert_eq!(d.s.poll_dispatch(d.now), None);
    // The 475 us wait fires on the first 1 ms tick at or after it.
    let t = d.s.poll_timeout().unwrap();
    assert!(t >= d.now + 475 * US && t % MS == 0 && t < d.now + 475 * US + MS);
    d.now += 500 * US;
    let other = d.request(2, 2, FAR + 5000, 128);
    d.s.enqueue(other, d.now);
    assert!(d.s.poll_dispatch(d.now).is_some());
}

#[test]
fn the_last_context_blocking_on_a_synchronous_request_dispatches_at_once() {
    let mut s = sched("as-sptf");
    let mut d = Driver::new(&mut *s);
    train(&mut d, 0, 0, 0, 128, 10, 200 * US);
    let far = d.request(1, 1, FAR, 128);
    d.s.enqueue(far, d.now);
    assert_eq!(d.s.poll_dispatch(d.now), None);
    // Context 0 jumps even further away than context 1's request: SPTF now prefers context
    // 1's request, and the core dispatches it without waiting any longer, since context 0 is
    // blocked and by assumption #1 nobody else will issue what it waits for.
    d.now += 100 * US;
    let jump = d.request(0, 0, 3 * FAR, 128);
    d.s.enqueue(jump, d.now);
    assert_eq!(d.s.poll_dispatch(d.now).unwrap().id, far.id);
    assert_eq!(d.s.anticipation().hits, 1);
}

#[test]
fn aged_sptf_override_dispatches_without_waiting() {
    for (spec, waits) in [("as-sptf", true), ("as-aged-sptf:age_bound=100ms", false)] {
        let mut s = sched(spec);
        let mut d = Driver::new(&mut *s);
        train(&mut d, 0, 0, 0, 128, 5, 200 * US);
        // Context 1's request was issued at time 0; it is overdue from 100 ms on.
        let old = antsched_core::Request {
            issued: 0,
            ..d.request(1, 1, FAR, 128)
        };
        d.s.enqueue(old, d.now);
        // Context 0 keeps the disk, its requests arriving before 100 ms, until one of them
        // completes at or after 100 ms (at 102.2 ms).
        let mut sector = 5 * 128;
        while d.now < 100 * MS {
            d.now += 200 * US;
            let r = d.request(0, 0, sector, 128);
            sector += 128;
            d.s.enqueue(r, d.now);
            let got = d.s.poll_dispatch(d.now).unwrap();
            assert_eq!(
                got.id, r.id,
                "{spec}: context 0 is served while nothing is overdue"
            );
            d.now += 3 * MS;
            d.s.complete(got.id, d.now);
        }
        let got = d.s.poll_dispatch(d.now);
        if waits {
            assert_eq!(got, None, "{spec}: plain SPTF waits for context 0");
        } else {
            // Aged-SPTF chose the overdue request, which SPTF would not have: no waiting.
            assert_eq!(got.map(|r| r.id), Some(old.id), "{spec}");
        }
    }
}

#[test]
fn aged_sptf_ends_a_wait_when_a_request_reaches_its_age_bound() {
    let mut s = sched("as-aged-sptf:age_bound=100ms");
    let mut d = Driver::new(&mut *s);
    train(&mut d, 0, 0, 0, 128, 40, 200 * US);
    // A request that turns 100 ms old 300 us from now, inside the 475 us wait.
    let far = antsched_core::Request {
        issued: d.now + 300 * US - 100 * MS,
        ..d.request(1, 1, FAR, 128)
    };
    d.s.enqueue(far, d.now);
    assert_eq!(d.s.poll_dispatch(d.now), None);
    // The core wakes up when the request turns 100 ms old, before the wait is over.
    let t = d.s.poll_timeout().unwrap();
    assert_eq!(t, d.now + 300 * US);
    d.now = t;
    assert_eq!(d.s.poll_dispatch(d.now).unwrap().id, far.id);
}

#[test]
fn clook_does_not_wait_for_a_backward_reader_when_the_candidate_is_ahead() {
    for (step, waits) in [(-256, false), (128, true)] {
        let mut s = sched("as-clook");
        let mut d = Driver::new(&mut *s);
        // Context 0 reads backward (or forward) from the middle of the disk.
        train(&mut d, 0, 0, FAR, step, 12, 200 * US);
        let ahead = d.request(1, 1, 3 * FAR, 128);
        d.s.enqueue(ahead, d.now);
        let got = d.s.poll_dispatch(d.now);
        assert_eq!(got.is_none(), waits, "step {step}");
    }
}

/// Appendix I's second C-LOOK clause: a candidate just behind the head (the sweep would wrap
/// around to it) is waited on when the last context reads forward, because C-LOOK serves that
/// context's next request first the moment it comes. The SPTF rule alone would not wait: the
/// candidate is as close as the reader's own next request.
#[test]
fn clook_waits_for_a_forward_reader_when_the_candidate_is_behind() {
    for (spec, waits) in [("as-clook", true), ("as-sptf", false)] {
        let mut s = sched(spec);
        let mut d = Driver::new(&mut *s);
        train(&mut d, 0, 0, FAR, 128, 12, 200 * US);
        let behind = d.request(1, 1, d.head - 192, 64);
        d.s.enqueue(behind, d.now);
        let got = d.s.poll_dispatch(d.now);
        assert_eq!(got.is_none(), waits, "{spec}");
    }
}

/// Appendix I: the framework asks the heuristic about a read candidate only
/// (`duration = next.is_read_request ? sched_evaluate(last, next) : 0`), its writes being
/// write-back: an asynchronous write goes at once, where a read in its place is waited on.
/// A synchronous write (a process blocked on it) is weighed as a read is.
#[test]
fn an_asynchronous_write_candidate_is_dispatched_at_once() {
    for spec in ["as-sptf", "as-aged-sptf", "as-clook", "as-rw-sptf"] {
        for (op, sync, waits) in [
            (antsched_core::Op::Read, true, true),
            (antsched_core::Op::Write, false, false),
            (antsched_core::Op::Write, true, true),
        ] {
            let mut s = sched(spec);
            let mut d = Driver::new(&mut *s);
            train(&mut d, 0, 0, FAR, 128, 12, 200 * US);
            let other = antsched_core::Request {
                op,
                sync,
                ..d.request(1, 1, 3 * FAR, 128)
            };
            d.s.enqueue(other, d.now);
            let got = d.s.poll_dispatch(d.now);
            assert_eq!(got.is_none(), waits, "{spec} {op:?} sync={sync}");
        }
    }
}

/// Puts a proportional policy in the state of section 3.4: class 0 has received 30 ms of
/// service and has a request pending; class 1 has received `class1_service` and context 1
/// (class 1) has just completed its request, leaving nothing pending unless `class1_pending`.
/// Returns the policy's candidate.
fn proportional_state<P: Policy>(
    p: &mut P,
    class1_service: Nanos,
    class1_pending: bool,
) -> antsched_core::Request {
    let est = SeekDistanceEstimator::new();
    let mut d_ids = 0;
    let mut req = |ctx: u32, class: u32, sector: u64, now: Nanos| {
        d_ids += 1;
        antsched_core::Request {
            id: antsched_core::RequestId(d_ids),
            context: ContextId(ctx),
            class: ClassId(class),
            op: antsched_core::Op::Read,
            sector,
            sectors: 128,
            sync: true,
            issued: now,
            continuation: false,
        }
    };
    let a = req(0, 0, 0, 0);
    p.enqueue(a, 0);
    let b = req(1, 1, FAR, 0);
    p.enqueue(b, 0);
    assert_eq!(p.choose(&est, 0).unwrap().id, a.id);
    p.dispatch(a.id, 0);
    p.completed(&a, 30 * MS, 30 * MS);
    assert_eq!(p.choose(&est, 30 * MS).unwrap().id, b.id);
    p.dispatch(b.id, 30 * MS);
    let pending0 = req(0, 0, 128, 31 * MS);
    p.enqueue(pending0, 31 * MS);
    p.completed(&b, class1_service, 30 * MS + class1_service);
    if class1_pending {
        p.enqueue(req(2, 1, 5 * FAR, 40 * MS), 40 * MS);
    }
    p.choose(&est, 40 * MS).unwrap()
}

/// Statistics of a sequential context thinking `think` between requests.
fn trained(think: Nanos) -> antsched_core::stats::ContextStats {
    let cfg = antsched_core::stats::StatsConfig::default();
    let mut st = antsched_core::stats::ContextStats::new(&cfg);
    for i in 0..10 {
        st.think.record(think, &cfg);
        st.positioning.record(0.0, cfg.average_decay);
        st.record_seek(FAR + i * 128, FAR + i * 128, &cfg);
    }
    st
}

fn evaluate<P, H: Heuristic<P>>(
    h: &mut H,
    p: &P,
    cand: &antsched_core::Request,
    stats: &antsched_core::stats::ContextStats,
) -> Nanos {
    let cfg = antsched_core::stats::StatsConfig::default();
    let ev = Evaluation {
        candidate: cand,
        candidate_positioning: FAR,
        head: FAR + 128,
        last: ContextId(1),
        last_class: ClassId(1),
        stats,
        cfg: &cfg,
        elapsed: 50 * US,
        now: 40 * MS,
    };
    h.evaluate(p, &ev)
}

#[test]
fn proportional_rule_waits_only_when_its_three_conditions_hold() {
    let mut h = Proportional::default();
    let quick = trained(200 * US);
    // All three hold: class 1 has nothing pending (a), context 1 thinks 200 us < 3 ms (b), and
    // class 1's clock (15 ms) is below minclock (class 0's, 30 ms) (c). Wait to the 95th
    // percentile (475 us) less the 50 us elapsed.
    let mut p = Stride::default();
    let cand = proportional_state(&mut p, 15 * MS, false);
    assert_eq!(evaluate(&mut h, &p, &cand, &quick), 425 * US);
    // (a) fails: class 1 has a request pending from another of its contexts.
    let mut p = Stride::default();
    let cand = proportional_state(&mut p, 15 * MS, true);
    assert_eq!(evaluate(&mut h, &p, &cand, &quick), 0);
    // (b) fails: context 1 thinks 5 ms.
    let mut p = Stride::default();
    let cand = proportional_state(&mut p, 15 * MS, false);
    assert_eq!(evaluate(&mut h, &p, &cand, &trained(5 * MS)), 0);
    // (c) fails: class 1 has run ahead of class 0 (45 ms against 30 ms).
    let mut p = Stride::default();
    let cand = proportional_state(&mut p, 45 * MS, false);
    assert_eq!(evaluate(&mut h, &p, &cand, &quick), 0);
}

#[test]
fn combination_waits_within_minclock_plus_tau() {
    // Correction 1: class 1 is 15 ms past minclock, within tau = 20 ms. The combination
    // waits for it (here for both reasons); the strict proportional rule would not.
    let quick = trained(200 * US);
    let mut p = RelaxedStride::new(20 * MS, 15 * MS);
    let cand = proportional_state(&mut p, 45 * MS, false);
    assert_eq!(
        evaluate(&mut Combination::default(), &p, &cand, &quick),
        425 * US
    );
    let mut strict = Stride::default();
    let cand = proportional_state(&mut strict, 45 * MS, false);
    assert_eq!(
        evaluate(&mut Proportional::default(), &strict, &cand, &quick),
        0
    );
    // A random reader (expected positioning as far as the candidate) gives the SPTF rule no
    // reason to wait; the proportional half alone still does, thanks to the +tau.
    let mut random = trained(200 * US);
    let cfg = antsched_core::stats::StatsConfig::default();
    for _ in 0..20 {
        random
            .positioning
            .record(2.0 * FAR as f64, cfg.average_decay);
        random.record_seek(0, 2 * FAR, &cfg);
    }
    assert_eq!(evaluate(&mut SptfRule::default(), &p, &cand, &random), 0);
    assert_eq!(
        evaluate(&mut Combination::default(), &p, &cand, &random),
        425 * US
    );
}

#[test]
fn combination_stops_the_seek_wait_beyond_minclock_plus_tau() {
    // Correction 2: with tau = 10 ms, class 1 (15 ms past minclock) is beyond the window.
    // Context 1 is sequential, so the SPTF rule alone would wait for it; the combination does
    // not, since relaxed Stride will serve class 0 next whatever context 1 issues.
    let quick = trained(200 * US);
    let mut p = RelaxedStride::new(10 * MS, 15 * MS);
    let cand = proportional_state(&mut p, 45 * MS, false);
    assert_eq!(
        evaluate(&mut SptfRule::default(), &p, &cand, &quick),
        425 * US
    );
    assert_eq!(evaluate(&mut Combination::default(), &p, &cand, &quick), 0);
}

#[test]
fn continuation_pieces_count_as_one_request_for_the_statistics() {
    let mut s = core(Sptf::new(), SptfRule::default());
    let mut d = Driver::new(&mut s);
    // Five logical 1 MB reads, each split into eight 128 KB pieces issued back to back, with
    // 5 ms of think time between logical reads.
    let mut sector = 0;
    for _ in 0..5 {
        let mut ids = Vec::new();
        for piece in 0..8 {
            let mut r = d.request(0, 0, sector, 256);
            r.continuation = piece > 0;
            sector += 256;
            d.s.enqueue(r, d.now);
            ids.push(r.id);
        }
        for _ in 0..8 {
            let r = d.s.poll_dispatch(d.now).unwrap();
            d.now += MS;
            d.s.complete(r.id, d.now);
        }
        d.now += 5 * MS;
    }
    drop(d);
    let stats = s.context_stats(ContextId(0)).unwrap();
    // Four think-time samples (one per logical read after the first), all 5 ms: the pieces'
    // zero think times would otherwise drag the median to zero (the adversary pattern of
    // section 4.2.4).
    assert_eq!(stats.think.samples(), 4);
    let cfg = antsched_core::stats::StatsConfig::default();
    assert!(stats.think.median(&cfg).unwrap() >= 5 * MS);
}

#[test]
fn think_time_is_zero_when_the_context_already_has_a_read_queued() {
    let mut s = core(Sptf::new(), SptfRule::default());
    let mut d = Driver::new(&mut s);
    train(&mut d, 0, 0, 0, 128, 3, 10 * MS);
    // Two requests at once, 12 ms after the last completion: the first thought 12 ms, the
    // second is asynchronous in effect.
    d.now += 12 * MS;
    for i in 0..2 {
        let r = d.request(0, 0, 10_000 + i * 128, 128);
        d.s.enqueue(r, d.now);
    }
    drop(d);
    let stats = s.context_stats(ContextId(0)).unwrap();
    let cfg = antsched_core::stats::StatsConfig::default();
    assert_eq!(stats.think.samples(), 4);
    assert!(
        stats.think.quantile(0.01, &cfg).unwrap() < 500 * US,
        "a zero sample exists"
    );
}

#[test]
fn a_context_that_exits_is_not_waited_for() {
    let mut s = sched("as-sptf");
    let mut d = Driver::new(&mut *s);
    train(&mut d, 0, 0, 0, 128, 10, 200 * US);
    let far = d.request(1, 1, FAR, 128);
    d.s.enqueue(far, d.now);
    assert_eq!(d.s.poll_dispatch(d.now), None);
    d.now += 50 * US;
    d.s.context_exited(ContextId(0), d.now);
    assert_eq!(d.s.poll_dispatch(d.now).unwrap().id, far.id);
}

#[test]
fn asynchronous_writes_are_never_waited_for() {
    let mut s = sched("as-sptf");
    let mut d = Driver::new(&mut *s);
    // Context 0 only writes asynchronously: it is never "the last context" to wait for.
    for i in 0..10 {
        let mut w = d.request(0, 0, i * 128, 128);
        w.op = antsched_core::Op::Write;
        w.sync = false;
        d.s.enqueue(w, d.now);
        let got = d.s.poll_dispatch(d.now).unwrap();
        d.now += 3 * MS;
        d.s.complete(got.id, d.now);
    }
    let far = d.request(1, 1, FAR, 128);
    d.s.enqueue(far, d.now);
    assert_eq!(d.s.poll_dispatch(d.now).unwrap().id, far.id);
}
