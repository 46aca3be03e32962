//! The anticipation core of section 3.2: the policy-independent wrapper that turns any base
//! policy into an anticipatory scheduler.
//!
//! A work-conserving scheduler has two states, IDLE and BUSY. The core adds WAIT: the disk is
//! idle, requests are pending, and a timeout is armed because the heuristic expects the last
//! context to issue a nearby (or overdue) request soon.
//!
//! ```text
//!            arrival / completion, pending, heuristic says 0
//!   IDLE ───────────────────────────────────────────────────▶ BUSY
//!     │  heuristic says w > 0                                  ▲
//!     ▼                                                        │ timeout, or an arrival
//!   WAIT ──────────────────────────────────────────────────────┘ re-evaluated to 0
//!     ▲ │ arrival re-evaluated to w > 0: stay, the ORIGINAL timeout still holds
//!     └─┘
//! ```
//!
//! The rules, each pinned by a test in `tests/paper_rules.rs`:
//! - on every arrival during WAIT the policy chooses again and the heuristic evaluates again;
//! - the timeout is never re-armed, so no sequence of arrivals can make the disk wait longer
//!   than the first evaluation allowed (the paper: "thus preventing unbounded waiting by
//!   repeatedly re-triggering the timeout");
//! - when the last context blocks on a synchronous request, dispatch at once without asking
//!   the heuristic: by assumption #1 no other context will issue the request it depends on;
//! - the device takes up to `depth` requests at once (1 by default: an IDE disk without tagged
//!   queueing, as in the paper).
//!
//! Statistics are updated here, on arrival and completion, for every context, so that any
//! heuristic can read them. The core never reads a clock; time comes in as `now`.

use rustc_hash::FxHashMap as HashMap;

use crate::estimator::{Memo, PositionEstimator};
use crate::heuristic::{Evaluation, Heuristic};
use crate::policy::Policy;
use crate::request::{ClassId, ContextId, Nanos, Request, RequestId};
use crate::scheduler::{AnticipationStats, Scheduler};
use crate::stats::{ContextStats, StatsConfig};

/// Settings of the core itself (the heuristics and policies have their own).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CoreConfig {
    /// Requests the device accepts at once.
    pub depth: usize,
    /// Statistics shape and decay.
    pub stats: StatsConfig,
    /// Granularity of the wait timer; a timeout fires on the first tick at or after its
    /// deadline. 0 models an exact timer (hrtimers); the paper's i8254 ticked every 500 us
    /// (section 3.6), and section 4.2.4 sweeps 50 us to 1 ms.
    pub timer_tick: Nanos,
    /// Follow chains of short-lived contexts (`find -exec cat`, `make`): wait for the context
    /// that goes on from where another left off, priced by what past chains did. Off by
    /// default, so that the paper's schedulers are the paper's; the `chains` tunable.
    pub chains: bool,
}

impl Default for CoreConfig {
    fn default() -> Self {
        Self {
            depth: 1,
            stats: StatsConfig::default(),
            timer_tick: 0,
            chains: false,
        }
    }
}

/// What the core knows of one context.
#[derive(Debug)]
struct Context {
    class: ClassId,
    stats: ContextStats,
    /// Requests queued in the policy: all, synchronous, and those that drive anticipation.
    queued: usize,
    queued_sync: usize,
    queued_driving: usize,
    in_flight: usize,
    in_flight_driving: usize,
    /// Completion time of its latest request that drives anticipation.
    last_completion: Option<Nanos>,
    /// End sector of its latest request that drives anticipation.
    last_end: Option<u64>,
    exited: bool,
}

impl Context {
    fn new(class: ClassId, cfg: &StatsConfig) -> Self {
        Self {
            class,
            stats: ContextStats::new(cfg),
            queued: 0,
            queued_sync: 0,
            queued_driving: 0,
            in_flight: 0,
            in_flight_driving: 0,
            last_completion: None,
            last_end: None,
            exited: false,
        }
    }

    fn idle(&self) -> bool {
        self.queued == 0 && self.in_flight == 0
    }
}

/// Where a chain of short-lived contexts may go on: a request completed for a context that does
/// not follow itself (one new to the core, one that forks the next member and waits for it,
/// one that exited since), and the core looks for the context that continues from there.
///
/// `find -exec cat`, `make`, a shell pipeline: each process issues a request or two and exits,
/// and the next one, forked after it, reads where it left off. Each is dead or new at the
/// decision anticipation is for, so per-context statistics never say "wait", and a
/// work-conserving choice seeks away between every two members: the Linux/CAS paper's
/// section 3 (its Table 2: `find -exec cat` against a stream, 18.7 times slower under Linux's
/// AS than under its Cooperative AS, which anticipates for "cooperating" processes). CAS
/// learns which processes cooperate; the core learns the chain as if it were one context: its
/// think time is from a member's last completion to the next member's first request, and its
/// seek distance from where the one ended to where the next began. Any heuristic then prices
/// a wait for the chain with the rule it uses for a context, so every base policy can follow
/// a chain.
#[derive(Clone, Copy, Debug)]
struct ChainTail {
    /// The member, its class, where its last request ended and when it completed.
    context: ContextId,
    class: ClassId,
    end: u64,
    done: Nanos,
}

/// The WAIT state.
#[derive(Clone, Copy, Debug)]
struct Wait {
    /// When the timeout fires. Never moved later.
    until: Nanos,
    since: Nanos,
    /// The context waited for.
    context: ContextId,
    /// It issued a request that drives anticipation during the wait.
    answered: bool,
    /// The wait is for the next member of `context`'s chain, not for `context` itself.
    chain: bool,
}

/// What [`Anticipatory::evaluate`] decided: how long to wait before dispatching the candidate
/// (0: now), and whether the wait is for a chain's next member.
#[derive(Clone, Copy, Debug)]
struct Verdict {
    wait: Nanos,
    chain: bool,
}

impl Verdict {
    const GO: Verdict = Verdict {
        wait: 0,
        chain: false,
    };
}

/// A base policy `P` wrapped by the anticipation core, with heuristic `H` deciding when to wait.
///
/// `Anticipatory<P, NeverWait>` is the work-conserving `P`: the same code path, statistics and
/// all, with a heuristic that always says 0.
pub struct Anticipatory<P, H> {
    name: String,
    policy: P,
    heuristic: H,
    est: Memo,
    cfg: CoreConfig,
    contexts: HashMap<ContextId, Context>,
    /// Requests on the device, when each was dispatched, and when it could start its own
    /// work: later by what the estimator said the device still had to finish before it
    /// ([`PositionEstimator::committed`]). A vector: the device holds `depth` of them at
    /// most, usually one.
    in_flight: Vec<(Request, Nanos, Nanos)>,
    /// The context whose request (one that drives anticipation) completed last: the paper's LP.
    last: Option<ContextId>,
    /// When the device last finished a request, to measure service with depth > 1.
    device_free_at: Nanos,
    wait: Option<Wait>,
    counters: AnticipationStats,
    /// With `chains`: the last member of a chain, until its successor arrives or the think
    /// cap passes.
    chain: Option<ChainTail>,
    /// With `chains`: what the chains seen so far did, as one context's statistics.
    chain_stats: ContextStats,
    /// A successor whose first request is yet to be dispatched, and where its chain's member
    /// left the head: that dispatch measures what waiting for the chain saves.
    chain_probe: Option<(ContextId, u64)>,
}

impl<P: Policy, H: Heuristic<P>> Anticipatory<P, H> {
    pub fn new(
        name: impl Into<String>,
        policy: P,
        heuristic: H,
        est: Box<dyn PositionEstimator>,
        cfg: CoreConfig,
    ) -> Self {
        Self {
            name: name.into(),
            policy,
            heuristic,
            est: Memo::new(est),
            cfg,
            contexts: HashMap::default(),
            in_flight: Vec::new(),
            last: None,
            device_free_at: 0,
            wait: None,
            counters: AnticipationStats::default(),
            chain: None,
            chain_stats: ContextStats::new(&cfg.stats),
            chain_probe: None,
        }
    }

    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// What the core has learned about `ctx`, if it knows it.
    pub fn context_stats(&self, ctx: ContextId) -> Option<&ContextStats> {
        self.contexts.get(&ctx).map(|c| &c.stats)
    }

    /// Whether the core is in the WAIT state.
    pub fn is_waiting(&self) -> bool {
        self.wait.is_some()
    }

    /// The context that issued `req` (created on its first request).
    fn context(&mut self, req: &Request) -> &mut Context {
        let cfg = self.cfg.stats;
        let c = self
            .contexts
            .entry(req.context)
            .or_insert_with(|| Context::new(req.class, &cfg));
        // A context may move to another class (a process joining a cgroup).
        c.class = req.class;
        c
    }

    /// Records what a new request says about its context: its think time, and where it lies
    /// relative to the context's previous request (seek distance and direction). Returns the
    /// chain member whose successor it is, if it continues a chain.
    fn learn(&mut self, req: &Request, now: Nanos) -> Option<ContextId> {
        let cfg = self.cfg.stats;
        let continued = self.continue_chain(req, now);
        let c = self.context(req);
        let from = c.last_end.replace(req.end());
        // A request issued while the context still has one queued or in flight is
        // asynchronous in effect (section 3.3): its think time is zero.
        let think = if c.queued_driving > 0 || c.in_flight_driving > 0 {
            Some(0)
        } else {
            c.last_completion
                .map(|done| now.saturating_sub(done).min(cfg.think_cap()))
        };
        if let Some(t) = think {
            c.stats.think.record(t, &cfg);
        }
        if let Some(from) = from {
            c.stats.record_seek(from, req.sector, &cfg);
        }
        continued
    }

    /// A chain's successor is the first request, after a member exited, from a context that
    /// was not already waiting on the disk: a new process, or one that was thinking (`find`
    /// itself, between two `cat`s). A context with a request queued or in flight did not
    /// follow the exit; it was there before. What the successor shows (how long after the
    /// member's last completion, how far from where it ended) is the chain's statistics.
    fn continue_chain(&mut self, req: &Request, now: Nanos) -> Option<ContextId> {
        let tail = self.chain?;
        if req.context == tail.context {
            // It continued itself: no chain this time.
            self.chain = None;
            return None;
        }
        if let Some(c) = self.contexts.get(&req.context) {
            if c.queued_driving > 0 || c.in_flight_driving > 0 {
                return None;
            }
        }
        self.chain = None;
        let cfg = self.cfg.stats;
        let think = now.saturating_sub(tail.done).min(cfg.think_cap());
        self.chain_stats.think.record(think, &cfg);
        self.chain_stats.record_seek(tail.end, req.sector, &cfg);
        self.chain_probe = Some((req.context, tail.end));
        Some(tail.context)
    }

    /// Whether `c`'s own statistics say nothing yet: a context new to the core, as every
    /// member of a chain is when its first request completes.
    fn without_history(&self, c: &Context) -> bool {
        c.stats.think.is_empty()
    }

    /// How long to wait for a chain's next member, judged by the chain's statistics with the
    /// heuristic's own rule: `last` is the member the core decides about (alive with no history
    /// of its own, or exited), which ended at `end` at `done`.
    fn evaluate_chain(
        &mut self,
        cand: &Request,
        last: ContextId,
        class: ClassId,
        end: u64,
        done: Nanos,
        now: Nanos,
    ) -> Verdict {
        // The chain is judged from where its member left the head; once the head has moved
        // away, its successor is as far as anyone else.
        if self.est.head() != end {
            return Verdict::GO;
        }
        let ev = Evaluation {
            candidate: cand,
            candidate_positioning: self.est.positioning_time(cand, now),
            head: self.est.head(),
            last,
            last_class: class,
            stats: &self.chain_stats,
            cfg: &self.cfg.stats,
            elapsed: now.saturating_sub(done),
            now,
        };
        Verdict {
            wait: self.heuristic.evaluate(&self.policy, &ev),
            chain: true,
        }
    }

    /// The chain awaited did not go on: forget its tail, and tell its statistics that no
    /// member came within the think cap.
    fn break_chain(&mut self) {
        self.chain = None;
        let cap = self.cfg.stats.think_cap();
        self.chain_stats.think.record(cap, &self.cfg.stats);
    }

    /// How long to wait before dispatching `cand`, and for whom.
    fn evaluate(&mut self, cand: &Request, now: Nanos) -> Verdict {
        // An asynchronous write candidate goes at once: the thesis's framework asks the
        // heuristic only about a read ("duration = next.is_read_request ?
        // sched_evaluate(last, next) : 0", Appendix I), whose writes were all write-back.
        // Holding the disk idle for a reader while write-back waits trades nothing anyone
        // waits for, but it would trade the write-back's progress for a seek it can absorb
        // later. A synchronous write (`direct=1`, `O_SYNC`) has a process blocked on it as a
        // read does, and is weighed as one: dispatched at once, it would win every decision
        // against a reader that had just been served (the reader is never waited for) while
        // the reader's requests lose to the writer's waited-for ones, and a reader against a
        // synchronous sequential writer got one request per aging period.
        if !H::WAITS || !cand.drives_anticipation() {
            return Verdict::GO;
        }
        let Some(last) = self.last else {
            // The last context exited: wait for whoever continues its chain, if chains are
            // followed and one is still expected (within the think cap of its member's last
            // completion; past it the chain broke, and the chain's statistics are told so).
            let Some(t) = self.chain else {
                return Verdict::GO;
            };
            if now.saturating_sub(t.done) >= self.cfg.stats.think_cap() {
                self.break_chain();
                return Verdict::GO;
            }
            return self.evaluate_chain(cand, t.context, t.class, t.end, t.done, now);
        };
        if cand.context == last {
            return Verdict::GO;
        }
        let Some(c) = self.contexts.get(&last) else {
            return Verdict::GO;
        };
        // The short-circuit of section 3.2: the last context blocked on a synchronous
        // request; nobody else will issue what it waits for. A context with anything in
        // flight is waiting for the device, not thinking, and one that exited issues nothing.
        if c.exited || c.queued_sync > 0 || c.queued_driving > 0 || c.in_flight_driving > 0 {
            return Verdict::GO;
        }
        let Some(done) = c.last_completion else {
            return Verdict::GO;
        };
        let chain = self.chain.filter(|t| self.cfg.chains && t.context == last);
        if let Some(t) = chain {
            if self.without_history(c) {
                // A context with no history of its own is presumed to be a chain's member: it
                // will issue again, or exit and be followed, as the chains seen so far were.
                return self.evaluate_chain(cand, last, t.class, t.end, t.done, now);
            }
        }
        let ev = Evaluation {
            candidate: cand,
            candidate_positioning: self.est.positioning_time(cand, now),
            head: self.est.head(),
            last,
            last_class: c.class,
            stats: &c.stats,
            cfg: &self.cfg.stats,
            elapsed: now.saturating_sub(done),
            now,
        };
        let wait = self.heuristic.evaluate(&self.policy, &ev);
        match chain {
            // Not worth waiting for by its own statistics, but a chain may go on from it: a
            // context that forks the next member and waits for it (`find`, `make`).
            Some(t) if wait == 0 => self.evaluate_chain(cand, last, t.class, t.end, t.done, now),
            _ => Verdict { wait, chain: false },
        }
    }

    /// Whether `c` is one whose next request usually follows soon from itself, not from
    /// another process: its median think time is under half the think cap. Such a context's
    /// completion starts no chain: what follows it is its own next request, and a stranger's
    /// arrival after it (a new process elsewhere on the disk) says nothing of a chain.
    fn follows_itself(&self, c: &Context) -> bool {
        let cfg = &self.cfg.stats;
        c.stats.think.median_is_below(cfg.think_cap() / 2, cfg)
    }

    fn round_to_tick(&self, t: Nanos) -> Nanos {
        match self.cfg.timer_tick {
            0 => t,
            tick => t.div_ceil(tick).saturating_mul(tick),
        }
    }

    fn end_wait(&mut self, now: Nanos, timed_out: bool) {
        if let Some(w) = self.wait.take() {
            self.counters.waited += now.saturating_sub(w.since);
            if timed_out {
                self.counters.timeouts += 1;
                if w.chain && !w.answered {
                    // No member came within the chain's 95th-percentile think time. A context
                    // that keeps us waiting in vain shows it in its own think times when its
                    // next request comes; a chain that did not go on has no next request to
                    // show it, and its statistics would keep promising a member forever (two
                    // readers thinking 10 ms each were waited for, in vain, at every switch
                    // between them). So the chain broke, as at the think cap.
                    self.break_chain();
                }
            } else if w.answered {
                self.counters.hits += 1;
            }
        }
    }

    fn dispatch(&mut self, id: RequestId, now: Nanos) -> Option<Request> {
        let req = self.policy.dispatch(id, now)?;
        if H::WAITS && req.drives_anticipation() && !req.continuation {
            // Section 3.3: "a weighted average over time of the positioning time for requests
            // from that process, as measured". The estimate from where the head actually is
            // (exact for the exact estimator) is that measurement. A context whose requests
            // keep paying seeks looks seek-bound and is not worth waiting for, which is what
            // makes the heuristic give up on the slow reader of section 4.2.2.
            let p = self.est.positioning_time(&req, now) as f64;
            let decay = self.cfg.stats.average_decay;
            self.context(&req).stats.positioning.record(p, decay);
            // A chain's positioning, measured the same way, but only where the head was still
            // where the chain's member left it: otherwise the figure is about the request
            // served in between, not about the chain. Like a context's, it starts at zero, so
            // that a chain is waited for once and shows what that saves.
            if let Some((successor, end)) = self.chain_probe {
                if successor == req.context {
                    self.chain_probe = None;
                    if self.est.head() == end {
                        self.chain_stats.positioning.record(p, decay);
                    }
                }
            }
        }
        // What the device still has to finish before it (a destage) is not this request's
        // work, though its service includes it: the policy is told both
        // (`Policy::completed_own`).
        let start = if self.policy.charges_own_time() {
            now.saturating_add(self.est.committed(&req, now))
        } else {
            now
        };
        self.est.dispatched(&req, now);
        let c = self.context(&req);
        c.queued -= 1;
        c.in_flight += 1;
        if req.sync {
            c.queued_sync -= 1;
        }
        if req.drives_anticipation() {
            c.queued_driving -= 1;
            c.in_flight_driving += 1;
        }
        self.in_flight.push((req, now, start));
        Some(req)
    }
}

impl<P: Policy, H: Heuristic<P>> Scheduler for Anticipatory<P, H> {
    fn name(&self) -> &str {
        &self.name
    }

    fn enqueue(&mut self, req: Request, now: Nanos) {
        // What a request says of its context and chain is for the heuristic alone.
        let continued = if H::WAITS && req.drives_anticipation() && !req.continuation {
            self.learn(&req, now)
        } else {
            None
        };
        let c = self.context(&req);
        if req.drives_anticipation() && req.continuation {
            c.last_end = Some(req.end());
        }
        c.queued += 1;
        if req.sync {
            c.queued_sync += 1;
        }
        if req.drives_anticipation() {
            c.queued_driving += 1;
        }
        let mut chain_did_not_go_on = false;
        if let Some(w) = self.wait.as_mut() {
            if (w.context == req.context && req.drives_anticipation())
                || continued == Some(w.context)
            {
                w.answered = true;
                // A wait for a chain answered by the context itself, not by a successor:
                // its own statistics had said it was not worth waiting for, and no member
                // came. The chain did not go on, as when such a wait times out. Left
                // unsaid, a chain whose statistics came from a few successors early in a
                // run kept promising one: a random reader thinking 10 ms (past half the
                // think cap, so each of its completions may end a chain's member) was
                // waited for at its completions, though its own statistics said no.
                chain_did_not_go_on = w.chain && continued.is_none();
            }
        }
        if chain_did_not_go_on {
            self.break_chain();
        }
        self.policy.enqueue(req, now);
    }

    fn complete(&mut self, id: RequestId, now: Nanos) {
        let Some(i) = self.in_flight.iter().position(|(r, _, _)| r.id == id) else {
            debug_assert!(false, "completion of {id}, which is not in flight");
            return;
        };
        let (req, dispatched, start) = self.in_flight.swap_remove(i);
        let service = now.saturating_sub(dispatched.max(self.device_free_at));
        let own = now.saturating_sub(start.max(self.device_free_at));
        self.device_free_at = now;
        self.policy.completed_own(&req, service, own, now);
        let c = self.context(&req);
        c.in_flight -= 1;
        if req.drives_anticipation() {
            c.in_flight_driving -= 1;
            c.last_completion = Some(now);
        }
        if c.exited && c.idle() {
            self.contexts.remove(&req.context);
        } else if req.drives_anticipation() {
            self.last = Some(req.context);
            if H::WAITS && self.cfg.chains {
                let c = &self.contexts[&req.context];
                if !self.follows_itself(c) {
                    self.chain = Some(ChainTail {
                        context: req.context,
                        class: c.class,
                        end: c.last_end.unwrap_or(req.end()),
                        done: now,
                    });
                }
            }
        }
    }

    fn poll_dispatch(&mut self, now: Nanos) -> Option<Request> {
        if self.in_flight.len() >= self.cfg.depth {
            return None;
        }
        let Some(cand) = self.policy.choose(&self.est, now) else {
            self.end_wait(now, false);
            return None;
        };
        if let Some(w) = self.wait {
            if now >= w.until {
                self.end_wait(now, true);
                return self.dispatch(cand.id, now);
            }
        }
        let verdict = self.evaluate(&cand, now);
        if verdict.wait == 0 {
            self.end_wait(now, false);
            return self.dispatch(cand.id, now);
        }
        let until = self.round_to_tick(now.saturating_add(verdict.wait));
        let Some(last) = self.last.or(self.chain.map(|t| t.context)) else {
            // Unreachable: `evaluate` answers 0 without a last context or a chain.
            return self.dispatch(cand.id, now);
        };
        match self.wait.as_mut() {
            // Never re-armed: a later evaluation can only bring the timeout closer.
            Some(w) => {
                w.until = w.until.min(until);
                if w.context != last || w.chain != verdict.chain {
                    w.context = last;
                    w.chain = verdict.chain;
                    w.answered = false;
                }
            }
            None => {
                self.counters.waits += 1;
                self.wait = Some(Wait {
                    until,
                    since: now,
                    context: last,
                    answered: false,
                    chain: verdict.chain,
                });
            }
        }
        None
    }

    fn poll_timeout(&self) -> Option<Nanos> {
        if self.in_flight.len() >= self.cfg.depth {
            return None;
        }
        let w = self.wait?;
        // The policy may change its mind by itself (a request reaching its age bound);
        // re-evaluate then, since the heuristic may no longer want to wait.
        Some(match self.policy.next_change() {
            Some(t) => w.until.min(t),
            None => w.until,
        })
    }

    fn context_exited(&mut self, ctx: ContextId, _now: Nanos) {
        if let Some(c) = self.contexts.get_mut(&ctx) {
            // A context that followed itself ends its own line when it exits: whoever comes
            // next may continue it (a compiler after the one before it).
            if self.cfg.chains && self.last == Some(ctx) && self.chain.is_none() {
                if let (Some(end), Some(done)) = (c.last_end, c.last_completion) {
                    self.chain = Some(ChainTail {
                        context: ctx,
                        class: c.class,
                        end,
                        done,
                    });
                }
            }
            c.exited = true;
            if c.idle() {
                self.contexts.remove(&ctx);
            }
        }
        if self.last == Some(ctx) {
            self.last = None;
        }
    }

    fn set_class_weight(&mut self, class: ClassId, weight: u32) {
        self.policy.set_class_weight(class, weight);
    }

    fn pending(&self) -> usize {
        self.policy.len()
    }

    fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    fn anticipation(&self) -> AnticipationStats {
        self.counters
    }
}
