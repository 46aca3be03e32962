//! # antsched-core
//!
//! The deterministic heart of antsched: disk scheduling as a state machine with no I/O, no
//! clock and no threads, in the manner of `quinn-proto`. Drivers (the simulator in
//! `antsched-sim`, the real-time runtime in `antsched-io`) pass time in and poll decisions
//! out, so every decision can be replayed in a unit test.
//!
//! ## The pieces
//!
//! - [`Request`], [`ContextId`] (who issues a synchronous chain: a process, a connection) and
//!   [`ClassId`] (a resource principal with a weight).
//! - [`Scheduler`]: the interface every driver calls (`enqueue`, `complete`, `poll_dispatch`,
//!   `poll_timeout`, `context_exited`).
//! - [`policy`]: base policies that only order requests and know nothing of anticipation:
//!   FCFS, SSTF, C-LOOK, LOOK, SPTF, Aged-SPTF, Stride, YFQ, Lottery, relaxed Stride.
//! - [`Anticipatory`]: the anticipation core of Iyer and Druschel (SOSP 2001, section 3.2)
//!   wrapped around any policy, with IDLE, BUSY and WAIT states.
//! - [`heuristic`]: when and how long to wait: the SPTF cost-benefit rule, its Aged-SPTF and
//!   C-LOOK variants, the proportional-share rule and the combination (sections 3.3 to 3.5).
//! - [`stats`]: per-context think-time histograms and decayed locality averages.
//! - [`estimator`]: positioning-time estimators (exact from a device model, a calibrated
//!   curve, seek distance).
//! - [`peers`]: the schedulers antsched is judged against, re-implemented from the Linux
//!   kernels: `deadline`, the 2.6 anticipatory scheduler (`linux-as`, `linux-as-2.6.32`), the
//!   Cooperative AS of the Linux/CAS paper (`cas`), time-sliced `cfq` and `bfq`.
//! - [`registry`]: every scheduler by name, its tunables and defaults, built from a SPEC such
//!   as `as-stride:tau=500ms` or `bfq:slice_idle=4ms`.
//!
//! ## Deceptive idleness in one paragraph
//!
//! A process that reads synchronously has nothing queued at the instant its request
//! completes: it still has to compute before it issues the next one. A work-conserving
//! scheduler decides at that instant, sees only other processes' requests, and seeks away;
//! the process's next request, right next to where the head was, arrives a few hundred
//! microseconds too late. Two such readers of sequential files then alternate and seek on
//! every request. The anticipation core waits, when a heuristic says it pays, for the process
//! whose request just finished.
#![forbid(unsafe_code)]

pub mod anticipation;
pub mod estimator;
pub mod heuristic;
pub mod peers;
pub mod policy;
pub mod registry;
pub mod request;
pub mod scheduler;
pub mod spec;
pub mod stats;

pub use anticipation::{Anticipatory, CoreConfig};
pub use estimator::{CurveEstimator, PositionEstimator, PositioningCurve, SeekDistanceEstimator};
pub use registry::{build, catalog, BuildEnv, SchedulerInfo, TunableInfo, DEFAULT_SCHEDULER};
pub use request::{
    ClassId, ContextId, Nanos, Op, Request, RequestId, DEFAULT_WEIGHT, MS, SEC, SECTOR_BYTES, US,
};
pub use scheduler::{AnticipationStats, Scheduler};
pub use spec::{Spec, SpecError};
