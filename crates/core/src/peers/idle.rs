//! Counting the peers' idling in the terms of [`AnticipationStats`], so that every scheduler
//! reports the same thing.
//!
//! A *wait* is a period in which the disk is idle (nothing in flight), requests are pending,
//! and the scheduler declines to dispatch them because it is idling for one context: AS's
//! anticipation, CFQ's and BFQ's `slice_idle`. A wait that ends because its timer fired is a
//! timeout; one in which the awaited context issued a request is a hit. Draining (declining
//! to dispatch while the awaited context still has a request in flight, which the kernels do
//! on deep queues) keeps the disk busy and is not a wait.

use crate::request::{ContextId, Nanos};
use crate::scheduler::AnticipationStats;

#[derive(Clone, Copy, Debug)]
struct Episode {
    since: Nanos,
    awaited: Option<ContextId>,
    answered: bool,
}

/// Tracks the current wait and the totals.
#[derive(Clone, Debug, Default)]
pub struct IdleMeter {
    stats: AnticipationStats,
    current: Option<Episode>,
}

impl IdleMeter {
    /// The scheduler declined to dispatch with the disk idle and requests pending, idling for
    /// `awaited`. Starts a wait unless one is running.
    pub fn hold(&mut self, now: Nanos, awaited: Option<ContextId>) {
        match self.current.as_mut() {
            Some(e) => {
                if e.awaited != awaited {
                    e.awaited = awaited;
                    e.answered = false;
                }
            }
            None => {
                self.stats.waits += 1;
                self.current = Some(Episode {
                    since: now,
                    awaited,
                    answered: false,
                });
            }
        }
    }

    /// A request of `ctx` arrived.
    pub fn arrival(&mut self, ctx: ContextId) {
        if let Some(e) = self.current.as_mut() {
            if e.awaited == Some(ctx) {
                e.answered = true;
            }
        }
    }

    /// The wait (if any) ended at `now`, by its timer if `timed_out`.
    pub fn end(&mut self, now: Nanos, timed_out: bool) {
        if let Some(e) = self.current.take() {
            self.stats.waited += now.saturating_sub(e.since);
            if timed_out {
                self.stats.timeouts += 1;
            } else if e.answered {
                self.stats.hits += 1;
            }
        }
    }

    pub fn waiting(&self) -> bool {
        self.current.is_some()
    }

    pub fn stats(&self) -> AnticipationStats {
        self.stats
    }
}
