//! Heuristics for seek-reducing policies (section 3.3): SPTF's cost-benefit rule, and its
//! variants for Aged-SPTF and C-LOOK.

use super::{Evaluation, Heuristic};
use crate::policy::{Aging, Policy};
use crate::request::{ContextId, Nanos};

/// The cost-benefit rule of section 3.3.
///
/// ```text
/// benefit = positioning(candidate) - LP.expected_positioning
/// cost    = max(0, LP.median_think - elapsed)
/// wait    = max(0, LP.p95_think + slack - elapsed)   if benefit > cost, else 0
/// ```
///
/// The benefit is what serving the last context's next request instead of the candidate would
/// save in positioning; the cost is the disk time likely lost before that request arrives. The
/// wait runs to the 95th percentile, "within which there is a 95% probability that a request
/// will arrive". `elapsed` is subtracted from both so that a re-evaluation later in the wait
/// answers correctly: past the median the cost is zero, and past the 95th percentile the wait
/// is zero and the candidate goes at once, even if a coarse timer has not fired yet.
///
/// `slack` extends the wait past the 95th percentile; the thesis's implementation waited up to
/// 1 ms more (section 10.2.3); the paper's rule, our default, has none.
///
/// A context with no history (no think-time sample, no positioning sample) is not waited for:
/// the rule is adaptive and has nothing to adapt from yet.
#[derive(Clone, Copy, Debug, Default)]
pub struct SptfRule {
    pub slack: Nanos,
}

impl SptfRule {
    pub fn wait(&self, ev: &Evaluation<'_>) -> Nanos {
        let (Some((median, p95)), Some(expected)) = (
            ev.stats.think.median_and_p95(ev.cfg),
            ev.stats.positioning.get(),
        ) else {
            return 0;
        };
        let benefit = ev.candidate_positioning as f64 - expected;
        let cost = median.saturating_sub(ev.elapsed) as f64;
        if benefit > cost {
            p95.saturating_add(self.slack).saturating_sub(ev.elapsed)
        } else {
            0
        }
    }
}

impl<P: Policy> Heuristic<P> for SptfRule {
    fn evaluate(&mut self, _policy: &P, ev: &Evaluation<'_>) -> Nanos {
        self.wait(ev)
    }
}

/// Aged-SPTF (section 3.3, "Variant: Aged-SPTF"): the SPTF rule, except never wait when aging
/// made the choice (and, for a gradual aging, the candidate priced at its positioning time less
/// its credit). Waiting then is always wasted: even if the last context's request arrives,
/// the policy still picks the overdue one, and one think time is lost for nothing.
///
/// The paper words the condition as "Aged-SPTF selects a request that is different from the
/// request that SPTF would correspondingly choose". We test whether the candidate is overdue
/// instead: when the overdue request is also SPTF's pick of the current pool (it may be the only
/// request), a wait is just as wasted, since the awaited request would lose to it anyway.
///
/// A context the policy holds starved ([`Aging::starved`]: `as-rw-sptf`'s floor under its
/// share) is weighed with one more term in the benefit: the candidate's positioning again.
/// Its next request is served soon whatever happens here (the floor ages it after a shortened
/// grace), and not waited for, it is served alone, from wherever the head then is, and the
/// head comes back: the trip between the candidate's place and the starved context's, paid
/// again for one request. Waited for, it costs its think time and the positioning from where
/// its last request left the head. The SPTF rule alone never waits for such a context (a
/// random reader, its positioning measured from the streams it is served between, looks as
/// far as the candidate): beside two streams, a 4 KB reader and a buffered writer, a random
/// reader thinking 7 ms had each of its requests served alone, 400 to 700 ms after it was
/// issued, for 0.016 MB/s, where CFQ, which idles for a queue in its turn, gives it 0.047
/// (issue 18's `mixed-think`); with the term, 0.028. The term counts once a visit: the
/// request after the one waited for would be served by the floor no sooner than that one
/// was, so no trip is saved by waiting for it. Counted at every request while the context
/// stayed starved, it took 6% of `examples/jobs/mix-of-think-times.fio`'s throughput (11%
/// with the calibrated estimator, below 95% of `linux-as`); once a visit, 4% (5%). Waiting
/// for a starved context whatever the benefit (CFQ's way) took a seventh.
#[derive(Clone, Copy, Debug, Default)]
pub struct AgedSptfRule {
    pub sptf: SptfRule,
    /// The starved context last waited for on the trip's account, and when the request of
    /// its that the wait followed completed.
    trip_paid: Option<(ContextId, Nanos)>,
}

impl AgedSptfRule {
    pub fn new(sptf: SptfRule) -> Self {
        Self {
            sptf,
            trip_paid: None,
        }
    }
}

impl<P: Policy + Aging> Heuristic<P> for AgedSptfRule {
    fn evaluate(&mut self, policy: &P, ev: &Evaluation<'_>) -> Nanos {
        if policy.aging_overrode() {
            return 0;
        }
        // Gradual aging: the awaited request, new when it comes, competes with the
        // candidate's positioning less its credit, so that is what waiting would save.
        let saved = ev
            .candidate_positioning
            .saturating_sub(policy.aging_credit());
        // A starved context: the trip back that serving it later, alone, would cost. Once a
        // visit: the request that came of the wait was its next one, and the one after it
        // would be served by the floor no sooner than the first was.
        let done = ev.now.saturating_sub(ev.elapsed);
        let repeat = self
            .trip_paid
            .is_some_and(|(c, at)| c == ev.last && at != done);
        let saved = if !repeat && policy.starved(ev.last, ev.last_class) {
            self.trip_paid = Some((ev.last, done));
            saved.saturating_add(ev.candidate_positioning)
        } else {
            if self.trip_paid.is_some_and(|(c, _)| c != ev.last) {
                self.trip_paid = None;
            }
            saved
        };
        self.sptf.wait(&Evaluation {
            candidate_positioning: saved,
            ..*ev
        })
    }
}

/// Default for the C-LOOK rule: do not wait if the next request is backward with probability
/// above 0.8 (the paper's prose; the thesis appendix uses 0.3/0.7 instead, see
/// `../shared/notes/thesis-summary.md` 3.9, and docs/architecture.md fixes the prose).
pub const DEFAULT_BACKWARD_THRESHOLD: f64 = 0.8;

/// C-LOOK (section 3.3, "Variant: CSCAN"): the SPTF rule, plus two clauses from the sweep's
/// direction (Appendix I, "additional check for the C-LOOK heuristic only"). C-LOOK only sweeps
/// forward:
///
/// - if the candidate lies ahead and the last context's next request will most likely lie
///   behind, C-LOOK would not serve it next even if it came, so waiting cannot pay: dispatch;
/// - if the candidate lies behind (the sweep is about to wrap around) and the last context's
///   next request will most likely lie ahead, C-LOOK would serve that request first the
///   moment it came, and the wrap costs the longest seek there is: wait to the 95th
///   percentile whatever the SPTF rule's cost-benefit says, which prices the candidate by
///   positioning time, not by the order C-LOOK will serve in.
///
/// Both use one threshold on the probability (the prose's 0.8; the appendix's 0.3/0.7).
#[derive(Clone, Copy, Debug)]
pub struct ClookRule {
    pub sptf: SptfRule,
    pub backward_threshold: f64,
}

impl Default for ClookRule {
    fn default() -> Self {
        Self {
            sptf: SptfRule::default(),
            backward_threshold: DEFAULT_BACKWARD_THRESHOLD,
        }
    }
}

impl<P: Policy> Heuristic<P> for ClookRule {
    fn evaluate(&mut self, _policy: &P, ev: &Evaluation<'_>) -> Nanos {
        let candidate_forward = ev.candidate.sector >= ev.head;
        let Some(forward) = ev.stats.forward.get() else {
            return self.sptf.wait(ev);
        };
        if candidate_forward && 1.0 - forward > self.backward_threshold {
            0
        } else if !candidate_forward && forward > self.backward_threshold {
            match ev.stats.think.median_and_p95(ev.cfg) {
                Some((_, p95)) => p95
                    .saturating_add(self.sptf.slack)
                    .saturating_sub(ev.elapsed),
                None => 0,
            }
        } else {
            self.sptf.wait(ev)
        }
    }
}
