//! Positioning-time estimators: what SPTF and the anticipation heuristics use to guess how long
//! the head needs to reach a request.
//!
//! Three kinds stand behind the one trait [`PositionEstimator`]:
//! - **exact**: asks a device model (supplied by the driver, which owns one; see
//!   `antsched-disk`), so the estimate is the model's own positioning time, rotation included;
//! - **calibrated curve** ([`CurveEstimator`]): LBN distance to time, a piecewise-linear curve
//!   fitted from measurements as the paper's user-level calibration did (section 3.6, "about 75%
//!   accurate", which the heuristics tolerate);
//! - **seek distance only** ([`SeekDistanceEstimator`]): the distance in sectors read as
//!   nanoseconds, a linear stand-in for a seek curve, like Linux AS's sector arithmetic.

use std::cell::Cell;
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::request::{Nanos, Request, RequestId};

/// Estimates positioning times for scheduling decisions.
///
/// The estimator follows the head on its own: the scheduler reports every dispatch through
/// [`dispatched`](Self::dispatched), and the estimator keeps whatever state it needs (the last
/// sector for a distance model, a replica of the device for the exact one).
pub trait PositionEstimator: Send {
    /// Short name for reports (`exact`, `curve`, `seek`).
    fn name(&self) -> &str;

    /// Where the head is: the sector just past the last dispatched request (0 before any).
    fn head(&self) -> u64;

    /// Positioning time of `req` if the device started it at `now`.
    fn positioning_time(&self, req: &Request, now: Nanos) -> Nanos;

    /// The scheduler sent `req` to the device at `now`.
    fn dispatched(&mut self, req: &Request, now: Nanos);

    /// A lower bound on the positioning time at `now` of every request whose first sector
    /// lies `distance` sectors or more from the head and outside the
    /// [`unbounded`](Self::unbounded) ranges, non-decreasing in `distance`. SPTF asks about
    /// the requests in those ranges, then looks outward from the head and stops once the
    /// bound passes the best request found, so a decision among thousands of pending requests
    /// looks at a few. 0 by default (no bound: SPTF looks at every request).
    fn lower_bound(&self, _distance: u64, _now: Nanos) -> Nanos {
        0
    }

    /// Calls `visit(start, end)` for each sector range `[start, end)` whose requests
    /// [`lower_bound`](Self::lower_bound) does not cover at `now`: a drive's cache may hold
    /// a request far from the head and serve it for the price of a command. None by default.
    fn unbounded(&self, _now: Nanos, _visit: &mut dyn FnMut(u64, u64)) {}

    /// How long `req`, started at `now`, would first wait for work the device took before it
    /// and has not finished (a write its write-back cache acknowledged and has yet to
    /// destage): time the device spends on other requests, though it shows in this one's
    /// service. 0 by default: an estimator that does not see inside the device cannot tell.
    fn committed(&self, _req: &Request, _now: Nanos) -> Nanos {
        0
    }

    /// Whether an answer costs enough to be worth remembering for the rest of a decision
    /// ([`Memo`]): a device model's walk through its cache and mechanism, yes; a distance or
    /// a curve lookup, no (looking it up in the memo costs more than asking again).
    fn costly(&self) -> bool {
        false
    }
}

/// Remembers the estimates made at one instant with the head where it is.
///
/// At one decision the core asks about the same request several times: the policy compares
/// every pending request, the heuristic prices the candidate, and the dispatch records what it
/// cost. The answer only changes when time moves or the head does, so the memo is emptied on
/// either. With an exact estimator (a device model's answer), this halves the simulator's work.
pub struct Memo {
    inner: Box<dyn PositionEstimator>,
    /// `inner.costly()`: a cheap estimator is asked every time.
    costly: bool,
    /// The instant the answers were given at.
    at: Cell<Nanos>,
    /// The answers given at it, the first `len`. Only the first few requests asked about are
    /// kept: the repeats are about the candidate, and a pool of thousands is scanned once.
    /// In cells rather than a vector behind a `RefCell`: every question of every decision
    /// comes here first, and most are answered here.
    answers: [Cell<(RequestId, Nanos)>; MEMO_SIZE],
    len: Cell<usize>,
}

/// Answers kept per instant.
const MEMO_SIZE: usize = 8;

impl Memo {
    pub fn new(inner: Box<dyn PositionEstimator>) -> Self {
        Self {
            costly: inner.costly(),
            inner,
            at: Cell::new(0),
            answers: std::array::from_fn(|_| Cell::new((RequestId(0), 0))),
            len: Cell::new(0),
        }
    }
}

impl PositionEstimator for Memo {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn head(&self) -> u64 {
        self.inner.head()
    }

    fn positioning_time(&self, req: &Request, now: Nanos) -> Nanos {
        if !self.costly {
            return self.inner.positioning_time(req, now);
        }
        if self.at.get() != now {
            self.at.set(now);
            self.len.set(0);
        }
        let len = self.len.get();
        for a in &self.answers[..len] {
            let (id, t) = a.get();
            if id == req.id {
                return t;
            }
        }
        let t = self.inner.positioning_time(req, now);
        if len < MEMO_SIZE {
            self.answers[len].set((req.id, t));
            self.len.set(len + 1);
        }
        t
    }

    fn dispatched(&mut self, req: &Request, now: Nanos) {
        self.len.set(0);
        self.inner.dispatched(req, now);
    }

    fn lower_bound(&self, distance: u64, now: Nanos) -> Nanos {
        self.inner.lower_bound(distance, now)
    }

    fn unbounded(&self, now: Nanos, visit: &mut dyn FnMut(u64, u64)) {
        self.inner.unbounded(now, visit)
    }

    fn committed(&self, req: &Request, now: Nanos) -> Nanos {
        self.inner.committed(req, now)
    }

    fn costly(&self) -> bool {
        self.costly
    }
}

/// Absolute distance between a head position and a request's first sector.
pub fn distance(from: u64, to: &Request) -> u64 {
    from.abs_diff(to.sector)
}

/// The distance in sectors, read as nanoseconds (1 GiB of distance reads as about 2.1 ms).
#[derive(Clone, Debug, Default)]
pub struct SeekDistanceEstimator {
    head: u64,
}

impl SeekDistanceEstimator {
    pub fn new() -> Self {
        Self::default()
    }
}

impl PositionEstimator for SeekDistanceEstimator {
    fn name(&self) -> &str {
        "seek"
    }

    fn head(&self) -> u64 {
        self.head
    }

    fn positioning_time(&self, req: &Request, _now: Nanos) -> Nanos {
        distance(self.head, req)
    }

    fn dispatched(&mut self, req: &Request, _now: Nanos) {
        self.head = req.end();
    }

    /// The estimate is the distance itself.
    fn lower_bound(&self, distance: u64, _now: Nanos) -> Nanos {
        distance
    }
}

/// One point of a positioning-time curve.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurvePoint {
    /// LBN distance in sectors between the end of one request and the start of the next.
    pub distance: u64,
    /// Positioning time at that distance, in microseconds.
    pub time_us: f64,
}

/// A positioning-time curve: LBN distance to time, linear between points, flat beyond the last.
///
/// The JSON form, written by `antsched calibrate` and read by `estimator=CURVE.json`:
///
/// ```json
/// { "points": [ { "distance": 0, "time_us": 150.0 }, { "distance": 1000, "time_us": 4100.0 } ],
///   "source": "calibrated on deskstar-34gxp", "accuracy_within_20pct": 0.81 }
/// ```
///
/// `points` must be non-empty, with strictly increasing distances and finite, non-negative
/// times. `source`, `accuracy_within_20pct` and `calibration` (how the measurement went:
/// passes, spread, confidence, warnings; see `antsched calibrate`) are optional and only
/// informative.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PositioningCurve {
    pub points: Vec<CurvePoint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy_within_20pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<serde_json::Value>,
}

/// A curve file or text that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CurveError {
    #[error("cannot read positioning curve {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("positioning curve {origin}: invalid JSON at line {line}, column {column}: {message}")]
    Json {
        origin: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("positioning curve {origin}: {problem}")]
    Invalid { origin: String, problem: String },
}

impl PositioningCurve {
    /// Parses and validates the JSON form; `origin` names the source in errors.
    pub fn from_json(text: &str, origin: &str) -> Result<Self, CurveError> {
        let curve: Self = serde_json::from_str(text).map_err(|e| CurveError::Json {
            origin: origin.to_string(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        curve.validate().map_err(|problem| CurveError::Invalid {
            origin: origin.to_string(),
            problem,
        })?;
        Ok(curve)
    }

    /// Reads and validates a curve file.
    pub fn load(path: &Path) -> Result<Self, CurveError> {
        // At most 64 MiB (a calibrated curve is a few KB): `estimator=/dev/zero` must not
        // read until memory runs out.
        const MAX_BYTES: u64 = 64 << 20;
        let io = |source| CurveError::Io {
            path: path.display().to_string(),
            source,
        };
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut std::io::Read::take(std::fs::File::open(path).map_err(io)?, MAX_BYTES + 1),
            &mut text,
        )
        .map_err(io)?;
        if text.len() as u64 > MAX_BYTES {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "larger than 64 MiB; not a positioning curve",
            )));
        }
        Self::from_json(&text, &path.display().to_string())
    }

    /// Checks the invariants the interpolation relies on.
    pub fn validate(&self) -> Result<(), String> {
        if self.points.is_empty() {
            return Err(
                "\"points\" is empty; give at least one {\"distance\", \"time_us\"}".into(),
            );
        }
        for (i, p) in self.points.iter().enumerate() {
            if !p.time_us.is_finite() || p.time_us < 0.0 {
                return Err(format!(
                    "points[{i}].time_us is {}; it must be a finite number >= 0",
                    p.time_us
                ));
            }
            if i > 0 && p.distance <= self.points[i - 1].distance {
                return Err(format!(
                    "points[{i}].distance {} does not exceed points[{}].distance {}; distances must increase strictly",
                    p.distance,
                    i - 1,
                    self.points[i - 1].distance
                ));
            }
        }
        Ok(())
    }

    /// Positioning time at `distance` sectors.
    pub fn time_at(&self, distance: u64) -> Nanos {
        let pts = &self.points;
        let i = pts.partition_point(|p| p.distance <= distance);
        let us = if i == 0 {
            pts[0].time_us
        } else if i == pts.len() {
            pts[i - 1].time_us
        } else {
            let (a, b) = (pts[i - 1], pts[i]);
            let f = (distance - a.distance) as f64 / (b.distance - a.distance) as f64;
            a.time_us + f * (b.time_us - a.time_us)
        };
        (us * 1_000.0).round() as Nanos
    }
}

impl fmt::Display for PositioningCurve {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "curve of {} points", self.points.len())
    }
}

/// The calibrated estimator: a [`PositioningCurve`] applied to the distance from the head.
#[derive(Clone, Debug)]
pub struct CurveEstimator {
    curve: PositioningCurve,
    head: u64,
    /// `suffix_min[i]`: the least time of points `i..`, ns (a calibrated curve need not
    /// rise everywhere), for [`PositionEstimator::lower_bound`].
    suffix_min: Vec<Nanos>,
}

impl CurveEstimator {
    pub fn new(curve: PositioningCurve) -> Self {
        let mut suffix_min: Vec<Nanos> = curve
            .points
            .iter()
            .map(|p| (p.time_us * 1_000.0).round() as Nanos)
            .collect();
        for i in (0..suffix_min.len().saturating_sub(1)).rev() {
            suffix_min[i] = suffix_min[i].min(suffix_min[i + 1]);
        }
        Self {
            curve,
            head: 0,
            suffix_min,
        }
    }

    pub fn curve(&self) -> &PositioningCurve {
        &self.curve
    }
}

impl PositionEstimator for CurveEstimator {
    fn name(&self) -> &str {
        "curve"
    }

    fn head(&self) -> u64 {
        self.head
    }

    fn positioning_time(&self, req: &Request, _now: Nanos) -> Nanos {
        self.curve.time_at(distance(self.head, req))
    }

    fn dispatched(&mut self, req: &Request, _now: Nanos) {
        self.head = req.end();
    }

    /// The least the curve takes from `distance` on: linear between points and flat past
    /// the last, its minimum there is at `distance` itself or at a later point.
    fn lower_bound(&self, distance: u64, _now: Nanos) -> Nanos {
        let next = self
            .curve
            .points
            .partition_point(|p| p.distance <= distance);
        let later = self.suffix_min.get(next).copied().unwrap_or(Nanos::MAX);
        self.curve.time_at(distance).min(later)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(points: &[(u64, f64)]) -> PositioningCurve {
        PositioningCurve {
            points: points
                .iter()
                .map(|&(distance, time_us)| CurvePoint { distance, time_us })
                .collect(),
            source: None,
            accuracy_within_20pct: None,
            calibration: None,
        }
    }

    #[test]
    fn curve_interpolates_linearly_and_is_flat_outside() {
        let c = curve(&[(100, 1000.0), (1100, 2000.0)]);
        assert_eq!(c.time_at(0), 1_000_000);
        assert_eq!(c.time_at(100), 1_000_000);
        assert_eq!(c.time_at(600), 1_500_000);
        assert_eq!(c.time_at(1100), 2_000_000);
        assert_eq!(c.time_at(u64::MAX), 2_000_000);
    }

    #[test]
    fn curve_json_errors_name_the_problem() {
        let err = PositioningCurve::from_json(r#"{"points": []}"#, "x.json").unwrap_err();
        assert!(err.to_string().contains("x.json") && err.to_string().contains("empty"));
        let err = PositioningCurve::from_json(
            r#"{"points": [{"distance": 5, "time_us": 1.0}, {"distance": 5, "time_us": 2.0}]}"#,
            "y.json",
        )
        .unwrap_err();
        assert!(err.to_string().contains("points[1].distance"), "{err}");
        let err =
            PositioningCurve::from_json(r#"{"points": [{"distance": 5, "time_us": -1}]}"#, "z")
                .unwrap_err();
        assert!(err.to_string().contains("points[0].time_us"), "{err}");
        let err = PositioningCurve::from_json("{\n  \"pts\": []}", "w.json").unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
    }

    #[test]
    fn curve_json_round_trips() {
        let c = curve(&[(0, 120.5), (64, 900.0)]);
        let text = serde_json::to_string(&c).unwrap();
        assert_eq!(PositioningCurve::from_json(&text, "t").unwrap(), c);
    }
}
