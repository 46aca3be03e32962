//! The low-latency rules of `bfq` ([`super::low_latency`]), driven by a small closed-loop
//! simulation: readers issue one request at a time, the device serves one at a time.

use super::*;
use crate::request::{Op, US};

/// A reader that issues its next request when the previous one completes (after `think`).
struct Reader {
    ctx: u32,
    class: u32,
    next: u64,
    sectors: u32,
    /// When its next request arrives; `None` while one is outstanding.
    issue_at: Option<Nanos>,
    think: Nanos,
}

impl Reader {
    fn new(ctx: u32, start: u64, first: Nanos) -> Self {
        Self {
            ctx,
            class: ctx,
            next: start,
            sectors: 128,
            issue_at: Some(first),
            think: 0,
        }
    }
}

struct Sim {
    s: Bfq,
    readers: Vec<Reader>,
    now: Nanos,
    next_id: u64,
    head: u64,
    busy: Option<(Request, Nanos)>,
    /// Requests served, per context.
    served: HashMap<u32, u64>,
}

impl Sim {
    fn new(cfg: BfqConfig, readers: Vec<Reader>) -> Self {
        Self {
            s: Bfq::new("bfq", cfg),
            readers,
            now: 0,
            next_id: 0,
            head: 0,
            busy: None,
            served: HashMap::new(),
        }
    }

    /// 1 ms for a request where the head is, 8 ms with a seek.
    fn service(&self, rq: &Request) -> Nanos {
        if rq.sector == self.head {
            MS
        } else {
            8 * MS
        }
    }

    fn start(&mut self) {
        if self.busy.is_none() {
            if let Some(rq) = self.s.poll_dispatch(self.now) {
                let end = self.now + self.service(&rq);
                self.busy = Some((rq, end));
            }
        }
    }

    /// Runs until `until`, calling `check` after each arrival.
    fn run(&mut self, until: Nanos, mut check: impl FnMut(&Bfq, ContextId)) {
        while self.now < until {
            // Arrivals due now.
            for i in 0..self.readers.len() {
                let r = &mut self.readers[i];
                if r.issue_at.is_some_and(|t| t <= self.now) {
                    r.issue_at = None;
                    let rq = Request {
                        id: RequestId(self.next_id),
                        context: ContextId(r.ctx),
                        class: ClassId(r.class),
                        op: Op::Read,
                        sector: r.next,
                        sectors: r.sectors,
                        sync: true,
                        issued: self.now,
                        continuation: false,
                    };
                    self.next_id += 1;
                    r.next += u64::from(r.sectors);
                    self.s.enqueue(rq, self.now);
                    assert_eq!(self.s.wr_busy_queues(), self.s.recount_wr_busy());
                    check(&self.s, rq.context);
                }
            }
            self.start();
            // The next event: a completion, the scheduler's timer, or an arrival.
            let mut next = until;
            if let Some((_, end)) = self.busy {
                next = next.min(end);
            }
            if let Some(t) = self.s.poll_timeout() {
                next = next.min(t);
            }
            for r in &self.readers {
                if let Some(t) = r.issue_at {
                    next = next.min(t);
                }
            }
            self.now = next.max(self.now + US);
            if let Some((rq, end)) = self.busy {
                if end <= self.now {
                    self.busy = None;
                    self.head = rq.end();
                    self.s.complete(rq.id, end);
                    assert_eq!(self.s.wr_busy_queues(), self.s.recount_wr_busy());
                    *self.served.entry(rq.context.0).or_default() += 1;
                    if let Some(r) = self.readers.iter_mut().find(|r| r.ctx == rq.context.0) {
                        r.issue_at = Some(end + r.think);
                    }
                    // The device takes the next request at once, before the process that
                    // was waiting for this one issues its next (as blk-mq does at completion).
                    self.start();
                }
            }
        }
    }
}

fn ll(on: bool) -> BfqConfig {
    BfqConfig {
        low_latency: on,
        ..BfqConfig::default()
    }
}

fn sync(ctx: u32) -> QueueKey {
    QueueKey::Sync(ContextId(ctx))
}

#[test]
fn a_new_queue_is_weight_raised_until_it_has_had_the_service_of_a_start_up() {
    let mut sim = Sim::new(ll(true), vec![Reader::new(0, 0, 0)]);
    sim.run(MS, |_, _| {});
    assert_eq!(sim.s.wr_coeff(sync(0)), Some(low_latency::WR_COEFF));
    let e = sim.s.service_tree().entity(sync(0)).unwrap();
    assert_eq!(e.weight, u64::from(DEFAULT_WEIGHT) * low_latency::WR_COEFF);
    // 128 sectors a millisecond: 120000 sectors in under a second, long before the raising's
    // duration (3 s at least).
    assert!(sim.s.wr_duration() >= 3_000 * MS);
    sim.run(600 * MS, |_, _| {});
    assert_eq!(sim.s.wr_coeff(sync(0)), Some(low_latency::WR_COEFF));
    sim.run(1_500 * MS, |_, _| {});
    assert_eq!(sim.s.wr_coeff(sync(0)), Some(1));
    let e = sim.s.service_tree().entity(sync(0)).unwrap();
    assert_eq!(e.weight, u64::from(DEFAULT_WEIGHT));
    let served = sim.served[&0] * 128;
    assert!(served > low_latency::MAX_SERVICE_FROM_WR, "{served}");

    // Without low_latency it is never raised.
    let mut sim = Sim::new(ll(false), vec![Reader::new(0, 0, 0)]);
    sim.run(MS, |_, _| {});
    assert_eq!(sim.s.wr_coeff(sync(0)), Some(1));
}

#[test]
fn the_raising_of_a_slow_queue_ends_with_its_duration() {
    // 4 sectors a millisecond: 120000 sectors would take 30 s, longer than the raising.
    let mut r = Reader::new(0, 0, 0);
    r.sectors = 4;
    let mut sim = Sim::new(ll(true), vec![r]);
    sim.run(2_900 * MS, |_, _| {});
    assert_eq!(sim.s.wr_coeff(sync(0)), Some(low_latency::WR_COEFF));
    let duration = sim.s.wr_duration();
    assert!((3_000 * MS..=25_000 * MS).contains(&duration));
    sim.run(25_000 * MS + 10 * MS, |_, _| {});
    assert_eq!(sim.s.wr_coeff(sync(0)), Some(1));
    assert!(sim.served[&0] * 4 < low_latency::MAX_SERVICE_FROM_WR);
}

#[test]
fn a_queue_idle_for_long_is_raised_again() {
    let mut r = Reader::new(0, 0, 0);
    r.sectors = 1024;
    let mut sim = Sim::new(ll(true), vec![r]);
    // 1024 sectors a millisecond: the raising ends by service in about 120 ms.
    sim.run(500 * MS, |_, _| {});
    assert_eq!(sim.s.wr_coeff(sync(0)), Some(1));
    // It stops for 3 s (more than bfq_wr_min_idle_time), then reads again.
    sim.readers[0].issue_at = None;
    sim.run(600 * MS, |_, _| {});
    sim.readers[0].issue_at = Some(3_700 * MS);
    sim.run(3_700 * MS + US, |_, _| {});
    assert_eq!(sim.s.wr_coeff(sync(0)), Some(low_latency::WR_COEFF));
}

/// `n` sequential readers far apart, the k-th starting at `k * gap`; `check` sees each arrival.
fn burst(n: u32, gap: Nanos, until: Nanos, check: impl FnMut(&Bfq, ContextId)) -> Sim {
    let readers = (0..n)
        .map(|k| Reader::new(k, u64::from(k) * 4_000_000, u64::from(k) * gap))
        .collect();
    let mut sim = Sim::new(ll(true), readers);
    sim.run(until, check);
    sim
}

#[test]
fn queues_of_a_large_burst_are_not_raised() {
    // Nine queues 10 ms apart: the eighth makes the burst large.
    let mut raised_at_first_arrival = HashMap::new();
    let sim = burst(9, 10 * MS, 500 * MS, |s, ctx| {
        let key = s.queue_of(ctx);
        raised_at_first_arrival
            .entry(ctx.0)
            .or_insert(s.wr_coeff(key) == Some(low_latency::WR_COEFF));
    });
    for k in 0..9 {
        assert!(sim.s.in_large_burst(sim.s.queue_of(ContextId(k))), "{k}");
    }
    // The first seven were raised when created, before the burst was known to be large; the
    // eighth and ninth never.
    for k in 0..7 {
        assert!(raised_at_first_arrival[&k], "{k}");
    }
    assert!(!raised_at_first_arrival[&7] && !raised_at_first_arrival[&8]);
    // And the raising of the first seven ended: none is raised now.
    for k in 0..9 {
        assert_eq!(sim.s.wr_coeff(sim.s.queue_of(ContextId(k))), Some(1), "{k}");
    }

    // Seven queues are not a large burst: all raised (some as soft real-time: a queue
    // preempted with a request in flight keeps the soft_rt_next_start of its creation, as in
    // the kernel, and looks soft real-time when it next becomes busy).
    let sim = burst(7, 10 * MS, 500 * MS, |_, _| {});
    for k in 0..7 {
        let key = sim.s.queue_of(ContextId(k));
        assert!(!sim.s.in_large_burst(key), "{k}");
        assert!(sim.s.wr_coeff(key) > Some(1), "{k}");
    }

    // Nine queues 200 ms apart (more than bfq_burst_interval) are no burst.
    let sim = burst(9, 200 * MS, 1_700 * MS, |_, _| {});
    for k in 0..9 {
        assert!(!sim.s.in_large_burst(sim.s.queue_of(ContextId(k))), "{k}");
    }
}

/// Two sequential readers in the two halves of the disk, the second created `gap` after the
/// first, run until `until`.
fn two_readers(cfg: BfqConfig, gap: Nanos, until: Nanos) -> Sim {
    let mut sim = Sim::new(
        cfg,
        vec![Reader::new(0, 0, 0), Reader::new(1, 2_000_000, gap)],
    );
    sim.run(until, |_, _| {});
    sim
}

#[test]
fn queues_created_within_the_burst_interval_are_stably_merged_with_low_latency() {
    // Before bfq_late_stable_merging, the queues are apart.
    let sim = two_readers(ll(true), 50 * MS, 550 * MS);
    assert_eq!(sim.s.merges(), 0);
    assert_eq!(sim.s.queue_of(ContextId(1)), sync(1));

    // After it, the second queue's next request merges it with the first: raised queues are
    // busy, so idling for the sequential reader does not boost throughput "without issues".
    let mut sim = two_readers(ll(true), 50 * MS, 1_000 * MS);
    assert_eq!(sim.s.merges(), 1);
    assert_eq!(sim.s.queue_of(ContextId(1)), sync(0));
    assert_eq!(sim.s.queue_of(ContextId(0)), sync(0));
    assert!(sim
        .s
        .queues
        .get(&sync(1))
        .is_none_or(|q| q.members.is_empty()));
    // One queue serves both processes' requests, alternating between the halves of the disk
    // without idling: each gets about one request per 16 ms (two seeks).
    let before = sim.served.clone();
    sim.run(2_000 * MS, |_, _| {});
    for c in 0..2 {
        let got = sim.served[&c] - before[&c];
        assert!(
            (50..=80).contains(&got),
            "context {c}: {got} requests in 1 s"
        );
    }

    // Without low_latency, idling for a sequential reader boosts throughput: no merge, and
    // each reader gets long sequential runs.
    let sim = two_readers(ll(false), 50 * MS, 2_000 * MS);
    assert_eq!(sim.s.merges(), 0);
    assert_eq!(sim.s.queue_of(ContextId(1)), sync(1));
    assert!(sim.served[&0] + sim.served[&1] > 1_000);

    // Queues created further apart than bfq_burst_interval are not merged.
    let sim = two_readers(ll(true), 300 * MS, 2_000 * MS);
    assert_eq!(sim.s.merges(), 0);
}

#[test]
fn readers_in_weighted_classes_are_not_merged_and_keep_their_group_weight() {
    // Classes with a weight stand for cgroups: different groups, no stable merge, and the
    // raising of a queue does not raise its group's weight.
    let mut sim = Sim::new(
        ll(true),
        vec![Reader::new(0, 0, 0), Reader::new(1, 2_000_000, 50 * MS)],
    );
    sim.s.set_class_weight(ClassId(0), 100);
    sim.s.set_class_weight(ClassId(1), 200);
    sim.run(MS, |_, _| {});
    assert_eq!(sim.s.wr_coeff(sync(0)), Some(low_latency::WR_COEFF));
    assert_eq!(sim.s.service_tree().entity(sync(0)).unwrap().weight, 100);
    sim.run(1_000 * MS, |_, _| {});
    assert_eq!(sim.s.merges(), 0);
}
