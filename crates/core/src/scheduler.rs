//! The sans-IO interface every scheduler implements and every driver (the simulator, the
//! real-time runtime) calls.

use crate::request::{ClassId, ContextId, Nanos, Request, RequestId};

/// A disk scheduler as a deterministic state machine.
///
/// The driver tells it what happened ([`enqueue`](Self::enqueue), [`complete`](Self::complete),
/// [`context_exited`](Self::context_exited)) and then asks what to do: it calls
/// [`poll_dispatch`](Self::poll_dispatch) until that returns `None`, sends each request it got to
/// the device, and arms a timer for [`poll_timeout`](Self::poll_timeout). When the timer fires it
/// calls `poll_dispatch` again. Time is always an argument: the scheduler never reads a clock,
/// so the same calls give the same decisions in a unit test, in the simulator and in the
/// runtime. This is the shape of `quinn-proto`, and of Linux's `elevator_mq_ops` (insert,
/// dispatch, has_work, completed) with the timer made explicit.
///
/// Contract with the driver:
/// - request ids are unique among the requests the scheduler holds;
/// - `complete` is called once for each request `poll_dispatch` returned, never for another;
/// - `now` never decreases from one call to the next.
pub trait Scheduler: Send {
    /// The name it was built under (for example `as-aged-sptf`).
    fn name(&self) -> &str;

    /// A request arrives.
    fn enqueue(&mut self, req: Request, now: Nanos);

    /// The device finished request `id`.
    fn complete(&mut self, id: RequestId, now: Nanos);

    /// The next request to send to the device now, if any. Call until it returns `None`.
    fn poll_dispatch(&mut self, now: Nanos) -> Option<Request>;

    /// When to call [`poll_dispatch`](Self::poll_dispatch) again if nothing else happens first.
    /// `None` means only an arrival or a completion can change anything.
    fn poll_timeout(&self) -> Option<Nanos>;

    /// The issuer `ctx` went away (its process exited, its connection closed). Schedulers that
    /// wait for a context (Linux AS, CAS) must stop waiting for it.
    fn context_exited(&mut self, ctx: ContextId, now: Nanos);

    /// Give `class` a weight for proportional sharing. Each class starts at
    /// [`DEFAULT_WEIGHT`](crate::DEFAULT_WEIGHT). Schedulers that do not share by class ignore it.
    fn set_class_weight(&mut self, class: ClassId, weight: u32);

    /// Requests held, not yet dispatched.
    fn pending(&self) -> usize;

    /// Requests dispatched and not yet completed.
    fn in_flight(&self) -> usize;

    /// What the scheduler's idling did so far.
    fn anticipation(&self) -> AnticipationStats;
}

/// Counts of the decisions to keep the disk idle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AnticipationStats {
    /// Times the scheduler kept the disk idle with requests pending.
    pub waits: u64,
    /// Waits that ended because the awaited context issued its next request.
    pub hits: u64,
    /// Waits that ran to their timeout.
    pub timeouts: u64,
    /// Total time spent waiting.
    pub waited: Nanos,
}
