//! Heuristics for proportional-share policies (section 3.4) and their combination with the
//! seek-reducing rule (section 3.5).

use super::{Evaluation, Heuristic, SptfRule};
use crate::policy::{Policy, VirtualClocks};
use crate::request::{Nanos, MS};

/// Default think-time threshold of the proportional rule: 3 ms, "chosen somewhat arbitrarily"
/// as above most applications' think times without hurting throughput (section 3.4).
pub const DEFAULT_THINK_THRESHOLD: Nanos = 3 * MS;

/// The proportional-share rule of section 3.4. Under deceptive idleness the classes' virtual
/// clocks drift apart: a synchronous issuer has nothing pending at the decision point and its
/// clock lags. Wait for the last context if all three hold:
///
/// - (a) its class has no pending requests (otherwise the policy can serve it without waiting);
/// - (b) its expected (median) think time is under `think_threshold` (a class that genuinely
///   issues few requests lags too, but thinks long, and is not worth waiting for);
/// - (c) its class's clock is below *minclock*, the smallest clock among classes with pending
///   requests (plus the policy's relaxation tau, for relaxed Stride: section 3.5, correction 1).
///
/// The wait runs to the 95th percentile of its think time (the paper's prose; the thesis
/// appendix waits to the median instead, and docs/architecture.md fixes the prose).
#[derive(Clone, Copy, Debug)]
pub struct Proportional {
    pub think_threshold: Nanos,
    pub slack: Nanos,
}

impl Default for Proportional {
    fn default() -> Self {
        Self {
            think_threshold: DEFAULT_THINK_THRESHOLD,
            slack: 0,
        }
    }
}

impl Proportional {
    pub fn wait<P: VirtualClocks>(&self, policy: &P, ev: &Evaluation<'_>) -> Nanos {
        if policy.class_pending(ev.last_class) > 0 {
            return 0; // (a)
        }
        let Some((median, p95)) = ev.stats.think.median_and_p95(ev.cfg) else {
            return 0;
        };
        if median >= self.think_threshold {
            return 0; // (b)
        }
        let (Some(clock), Some(minclock)) = (
            policy.class_clock(ev.last_class),
            policy.min_pending_clock(),
        ) else {
            return 0;
        };
        if clock >= minclock.saturating_add(policy.relaxation()) {
            return 0; // (c)
        }
        p95.saturating_add(self.slack).saturating_sub(ev.elapsed)
    }
}

impl<P: Policy + VirtualClocks> Heuristic<P> for Proportional {
    fn evaluate(&mut self, policy: &P, ev: &Evaluation<'_>) -> Nanos {
        self.wait(policy, ev)
    }
}

/// The combination heuristic of section 3.5, for relaxed Stride: evaluate the SPTF rule and the
/// proportional rule and take the longer wait. Either alone falls short: the SPTF rule never
/// waits for random readers, so proportions break; the proportional rule waits only for the
/// class with the larger share, so half the seek reduction is lost.
///
/// Two corrections: the proportional rule's condition (c) compares against *minclock + tau*
/// (the policy reports its tau as its relaxation), and the SPTF rule does not wait once the
/// last class's clock has run past *minclock + tau*, since relaxed Stride will not serve that
/// class next however close its request is.
#[derive(Clone, Copy, Debug, Default)]
pub struct Combination {
    pub sptf: SptfRule,
    pub proportional: Proportional,
}

impl<P: Policy + VirtualClocks> Heuristic<P> for Combination {
    fn evaluate(&mut self, policy: &P, ev: &Evaluation<'_>) -> Nanos {
        let beyond_window = match (
            policy.class_clock(ev.last_class),
            policy.min_pending_clock(),
        ) {
            (Some(clock), Some(minclock)) => clock > minclock.saturating_add(policy.relaxation()),
            _ => false,
        };
        let seek = if beyond_window { 0 } else { self.sptf.wait(ev) };
        seek.max(self.proportional.wait(policy, ev))
    }
}
