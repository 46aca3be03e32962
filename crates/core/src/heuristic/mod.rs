//! Anticipation heuristics: given the candidate the policy chose and what is known of the last
//! context, decide whether to keep the disk idle and for how long (sections 3.3 to 3.5).
//!
//! A heuristic returns a wait in nanoseconds; 0 means dispatch the candidate now. It may read
//! the policy's state (through the small traits in [`crate::policy`]), which is why
//! [`Heuristic`] is generic over the policy: the paper's framework gives "access to the internal
//! state of the scheduler" to the heuristic and to nothing else.
//!
//! The core ([`crate::Anticipatory`]) only asks when waiting could make sense: there is a last
//! context, it did not issue the candidate, it has nothing queued or in flight, and it has
//! not exited. The heuristics need not check those again.

mod proportional;
mod seek;

pub use proportional::{Combination, Proportional, DEFAULT_THINK_THRESHOLD};
pub use seek::{AgedSptfRule, ClookRule, SptfRule, DEFAULT_BACKWARD_THRESHOLD};

use crate::request::{ClassId, ContextId, Nanos, Request};
use crate::stats::{ContextStats, StatsConfig};

/// What a heuristic sees at a decision point.
#[derive(Debug)]
pub struct Evaluation<'a> {
    /// The policy's choice.
    pub candidate: &'a Request,
    /// The estimator's positioning time for the candidate, from where the head is now.
    pub candidate_positioning: Nanos,
    /// Where the head is (the end of the last dispatched request).
    pub head: u64,
    /// The context whose request completed last (the paper's LP), and its class.
    pub last: ContextId,
    pub last_class: ClassId,
    pub stats: &'a ContextStats,
    pub cfg: &'a StatsConfig,
    /// Time since the last context's previous request completed.
    pub elapsed: Nanos,
    pub now: Nanos,
}

/// Decides how long to wait for the last context.
pub trait Heuristic<P>: Send {
    /// Whether the heuristic can ever wait. One that cannot ([`NeverWait`]) makes the core a
    /// work-conserving scheduler, which needs none of the statistics the others weigh: the
    /// core then neither prices the candidate nor measures each dispatch's positioning (with
    /// the exact estimator, a walk of the device model per request that nothing reads), and
    /// keeps no think times, seeks or chains.
    const WAITS: bool = true;

    fn evaluate(&mut self, policy: &P, ev: &Evaluation<'_>) -> Nanos;
}

/// The heuristic of a work-conserving scheduler: never waits. `Anticipatory<P, NeverWait>` is
/// policy `P` unchanged.
#[derive(Clone, Copy, Debug, Default)]
pub struct NeverWait;

impl<P> Heuristic<P> for NeverWait {
    const WAITS: bool = false;

    fn evaluate(&mut self, _policy: &P, _ev: &Evaluation<'_>) -> Nanos {
        0
    }
}
