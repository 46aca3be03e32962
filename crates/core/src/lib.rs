//! Deterministic scheduling logic for antsched. No I/O, no clock, no threads.
#![forbid(unsafe_code)]

pub mod estimator;
pub mod request;
pub mod scheduler;

pub use estimator::{CurveEstimator, PositionEstimator, PositioningCurve, SeekDistanceEstimator};
pub use request::{ClassId, ContextId, Nanos, Op, Request, RequestId, DEFAULT_WEIGHT, MS, SEC, US};
pub use scheduler::{AnticipationStats, Scheduler};
