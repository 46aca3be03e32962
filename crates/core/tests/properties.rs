//! Property tests over random arrival, completion, exit, class-weight and timing sequences,
//! for every scheduler in the catalog (new schedulers are covered by being registered):
//!
//! - every request is dispatched exactly once, and completes once;
//! - never more requests in flight than the device depth;
//! - WAIT only with requests pending, and never a stall: with room on the device and requests
//!   pending, the scheduler either dispatches or names a time to be called again (the Linux
//!   peers may instead wait for one of their requests in the device to complete, as the
//!   kernels do: see [`drains`]);
//! - waiting is bounded: a wait never lasts longer than the scheduler's longest idling window;
//! - Aged-SPTF bounds latency: an overdue request goes within one service time unless an older
//!   overdue request goes first.

mod common;

use std::collections::HashSet;

use antsched_core::{
    build, catalog, BuildEnv, ClassId, ContextId, Nanos, Op, Request, RequestId, Scheduler, MS, US,
};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Step {
    Arrive {
        ctx: u32,
        sector: u64,
        sectors: u32,
        write: bool,
        sync: bool,
        continuation: bool,
    },
    /// Completes the request in flight at this index (modulo the number in flight).
    Complete(usize),
    Advance(Nanos),
    Exit(u32),
    /// Gives a class a new weight.
    Weight(u32, u32),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0u32..6, 0u64..4_000_000, 1u32..512, any::<bool>(), any::<bool>(), prop::bool::weighted(0.1))
            .prop_map(|(ctx, sector, sectors, write, sync, continuation)| Step::Arrive {
                ctx, sector, sectors, write, sync: sync || !write, continuation
            }),
        3 => (0usize..8).prop_map(Step::Complete),
        3 => (0u64..20_000).prop_map(|us| Step::Advance(us * US)),
        1 => (0u32..6).prop_map(Step::Exit),
        1 => (0u32..3, 1u32..1_000).prop_map(|(class, w)| Step::Weight(class, w)),
    ]
}

/// The longest a scheduler may keep the disk idle with requests pending, from the first
/// decision to wait, with the default tunables:
/// - antsched's heuristics wait at most the think-time cap (15 ms) plus the timer tick;
/// - `deadline` is work-conserving and never waits;
/// - the anticipatory schedulers wait at most `antic_expire` (6 ms), timed from the completion
///   of the anticipated request (`as_antic_waitnext`), which is before any wait can start;
/// - CFQ and BFQ idle at most `slice_idle` (8 ms) from the completion that emptied the queue
///   in service (`cfq_arm_slice_timer`, `bfq_arm_slice_timer`; seeky queues get 2 ms).
fn idle_bound(name: &str) -> Nanos {
    match name {
        "deadline" => 0,
        "linux-as" | "linux-as-2.6.32" | "cas" => 6 * MS,
        "cfq" => 8 * MS,
        // A weight-raised queue is idled for at least 20 ms (`bfq_arm_slice_timer`).
        "bfq" => 20 * MS,
        _ => 15 * MS + MS,
    }
}

/// Schedulers that, like Linux's, may hold requests back while one of theirs is still in the
/// device (a *drain*), with no timer: AS waits for the anticipated request to complete before
/// timing its anticipation (ANTIC_WAIT_REQ) and for the old batch to leave the device before a
/// new one starts; CFQ and BFQ wait for the active queue's requests in flight before idling
/// for it or giving the disk to another queue; BFQ with `strict_guarantees` dispatches only to
/// an empty device. Only possible with `depth` above 1. The completion that ends a drain is the
/// driver's to deliver, so it is not a stall; antsched's own schedulers never drain.
fn drains(name: &str) -> bool {
    matches!(name, "linux-as" | "linux-as-2.6.32" | "cas" | "cfq" | "bfq")
}

struct Harness {
    s: Box<dyn Scheduler>,
    name: String,
    depth: usize,
    now: Nanos,
    next_id: u64,
    enqueued: HashSet<RequestId>,
    dispatched: HashSet<RequestId>,
    in_flight: Vec<RequestId>,
    completed: usize,
    waiting_since: Option<Nanos>,
    exited: HashSet<u32>,
}

impl Harness {
    fn new(name: &str, depth: usize) -> Self {
        let s = build(
            &if name.contains(':') {
                format!("{name},depth={depth}")
            } else {
                format!("{name}:depth={depth}")
            },
            &BuildEnv {
                seed: 7,
                ..BuildEnv::default()
            },
        )
        .unwrap();
        Self {
            s,
            name: name.to_string(),
            depth,
            now: 0,
            next_id: 0,
            enqueued: HashSet::new(),
            dispatched: HashSet::new(),
            in_flight: Vec::new(),
            completed: 0,
            waiting_since: None,
            exited: HashSet::new(),
        }
    }

    /// Polls until the scheduler stops dispatching, then checks the invariants.
    fn poll(&mut self) -> Result<(), TestCaseError> {
        while let Some(r) = self.s.poll_dispatch(self.now) {
            prop_assert!(
                self.enqueued.contains(&r.id),
                "{}: dispatched unknown {}",
                self.name,
                r.id
            );
            prop_assert!(
                self.dispatched.insert(r.id),
                "{}: {} dispatched twice",
                self.name,
                r.id
            );
            self.in_flight.push(r.id);
            prop_assert!(
                self.in_flight.len() <= self.depth,
                "{}: depth exceeded",
                self.name
            );
            self.waiting_since = None;
        }
        let pending = self.enqueued.len() - self.dispatched.len();
        prop_assert_eq!(self.s.pending(), pending, "{}: pending count", &self.name);
        prop_assert_eq!(
            self.s.in_flight(),
            self.in_flight.len(),
            "{}: in-flight count",
            &self.name
        );
        let timeout = self.s.poll_timeout();
        if let Some(t) = timeout {
            prop_assert!(pending > 0, "{}: a timeout with nothing pending", self.name);
            prop_assert!(
                t > self.now,
                "{}: timeout {} not after now {}",
                self.name,
                t,
                self.now
            );
        }
        if self.in_flight.len() < self.depth
            && pending > 0
            && timeout.is_none()
            && !self.in_flight.is_empty()
            && drains(&self.name)
        {
            // A drain: the wait ends with a completion, and a timed wait after it is measured
            // from its own start.
            self.waiting_since = None;
        } else if self.in_flight.len() < self.depth && pending > 0 {
            // Room on the device, requests pending, nothing dispatched: this is WAIT, and it
            // must end by itself.
            prop_assert!(
                timeout.is_some(),
                "{}: stalled with {} pending",
                self.name,
                pending
            );
            let since = *self.waiting_since.get_or_insert(self.now);
            let t = timeout.unwrap_or(0);
            prop_assert!(
                t - since <= idle_bound(&self.name),
                "{}: waiting from {} to {}",
                self.name,
                since,
                t
            );
        }
        Ok(())
    }

    /// Moves time to `target`, firing every timeout on the way at its own time.
    fn advance_to(&mut self, target: Nanos) -> Result<(), TestCaseError> {
        while let Some(t) = self.s.poll_timeout() {
            if t > target {
                break;
            }
            self.now = t;
            self.poll()?;
        }
        self.now = self.now.max(target);
        self.poll()
    }

    fn apply(&mut self, step: &Step) -> Result<(), TestCaseError> {
        match *step {
            Step::Arrive {
                ctx,
                sector,
                sectors,
                write,
                sync,
                continuation,
            } => {
                if self.exited.contains(&ctx) {
                    return Ok(());
                }
                self.next_id += 1;
                let r = Request {
                    id: RequestId(self.next_id),
                    context: ContextId(ctx),
                    class: ClassId(ctx % 3),
                    op: if write { Op::Write } else { Op::Read },
                    sector,
                    sectors,
                    sync,
                    issued: self.now,
                    continuation,
                };
                self.enqueued.insert(r.id);
                self.s.enqueue(r, self.now);
            }
            Step::Complete(i) => {
                if !self.in_flight.is_empty() {
                    let id = self.in_flight.remove(i % self.in_flight.len());
                    self.s.complete(id, self.now);
                    self.completed += 1;
                }
            }
            Step::Advance(dt) => return self.advance_to(self.now + dt),
            Step::Exit(ctx) => {
                self.exited.insert(ctx);
                self.s.context_exited(ContextId(ctx), self.now);
            }
            Step::Weight(class, weight) => self.s.set_class_weight(ClassId(class), weight),
        }
        self.poll()
    }

    /// Completes everything and lets every timeout fire until nothing is left.
    fn drain(&mut self) -> Result<(), TestCaseError> {
        for _ in 0..100_000 {
            if let Some(id) = self.in_flight.first().copied() {
                self.now += 100 * US;
                self.in_flight.remove(0);
                self.s.complete(id, self.now);
                self.completed += 1;
                self.poll()?;
            } else if let Some(t) = self.s.poll_timeout() {
                self.advance_to(t)?;
            } else {
                break;
            }
        }
        prop_assert_eq!(
            self.dispatched.len(),
            self.enqueued.len(),
            "{}: not all dispatched",
            &self.name
        );
        prop_assert_eq!(
            self.completed,
            self.enqueued.len(),
            "{}: not all completed",
            &self.name
        );
        prop_assert_eq!(self.s.pending() + self.s.in_flight(), 0);
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_scheduler_keeps_the_driver_contract(steps in prop::collection::vec(step(), 1..300), depth in 1usize..4) {
        // Every scheduler at its defaults, and the tunables that change a policy's path
        // (YFQ's batches) or the core's (following chains).
        let names = catalog()
            .into_iter()
            .map(|i| i.name.to_string())
            .chain(
                ["yfq:batch=4", "as-yfq:batch=4", "as-aged-sptf:chains=1", "as-clook:chains=1", "as-stride:chains=1"]
                    .map(String::from),
            );
        for name in names {
            let mut h = Harness::new(&name, depth);
            for s in &steps {
                h.apply(s)?;
            }
            h.drain()?;
        }
    }
}

/// A closed-loop run: a hog (context 0) reading sequentially with short think times, and a
/// victim (context 1) whose requests land far away. SPTF alone would starve the victim. Returns
/// (issue, dispatch) of every victim request.
fn hog_and_victim(spec: &str, service: Nanos, think: Nanos, far: &[u64]) -> Vec<(Nanos, Nanos)> {
    let mut s = build(spec, &BuildEnv::default()).unwrap();
    let mut id = 0u64;
    let mut hog_sector = 0u64;
    // When each context issues next; None while its request is outstanding.
    let mut at: [Option<Nanos>; 2] = [Some(0), Some(0)];
    let mut victim = far.iter().copied();
    let mut busy: Option<(Request, Nanos)> = None;
    let mut out = Vec::new();
    for _ in 0..1_000_000 {
        if out.len() == far.len() {
            return out;
        }
        let now = [at[0], at[1], busy.map(|b| b.1), s.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
            .expect("the hog always has something going on");
        if let Some((r, done)) = busy {
            if done == now {
                busy = None;
                s.complete(r.id, now);
                at[r.context.0 as usize] = Some(now + think);
            }
        }
        for (ctx, at) in at.iter_mut().enumerate() {
            if *at != Some(now) {
                continue;
            }
            *at = None;
            let sector = if ctx == 0 {
                hog_sector += 128;
                hog_sector
            } else if let Some(s) = victim.next() {
                s
            } else {
                continue;
            };
            id += 1;
            s.enqueue(
                Request {
                    id: RequestId(id),
                    context: ContextId(ctx as u32),
                    class: ClassId(ctx as u32),
                    op: Op::Read,
                    sector,
                    sectors: 128,
                    sync: true,
                    issued: now,
                    continuation: false,
                },
                now,
            );
        }
        if busy.is_none() {
            if let Some(r) = s.poll_dispatch(now) {
                if r.context == ContextId(1) {
                    out.push((r.issued, now));
                }
                busy = Some((r, now + service));
            }
        }
    }
    panic!("{spec}: the victim was not served in a million steps");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn aged_sptf_serves_an_overdue_request_within_one_service(
        service_us in 500u64..12_000,
        think_us in 0u64..2_000,
        bound_ms in 5u64..200,
        far in prop::collection::vec(50_000_000u64..90_000_000, 1..6),
    ) {
        for name in ["aged-sptf", "as-aged-sptf"] {
            let spec = format!("{name}:age_bound={bound_ms}ms");
            let service = service_us * US;
            for (issue, dispatch) in hog_and_victim(&spec, service, think_us * US, &far) {
                prop_assert!(
                    dispatch - issue <= bound_ms * MS + service,
                    "{}: waited {} ns with bound {} ms and service {} ns",
                    spec, dispatch - issue, bound_ms, service
                );
            }
        }
    }
}
