//! The device a simulation drives, shared with the scheduler's exact estimator.
//!
//! SPTF and the anticipation heuristics ask "how long would positioning for this request take
//! from where the head is now?". The honest answer comes from the device model itself, in its
//! current state (head, rotational phase at `now`, on-board cache). The simulator owns the
//! device; [`ExactEstimator`] holds a second handle to the same model and only reads it. One
//! model, one state: the estimate cannot drift from what the device then does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use antsched_core::estimator::CurvePoint;
use antsched_core::{Nanos, Op, PositionEstimator, PositioningCurve, Request};
use antsched_disk::{Completion, DeviceModel, DiskOp, DiskRequest};

/// A device model shared between the simulator (which submits) and the exact estimator
/// (which reads). A mutex keeps the scheduler `Send`; in the simulator it is never contended.
#[derive(Clone)]
pub struct SharedDevice(Arc<Mutex<Box<dyn DeviceModel>>>);

impl SharedDevice {
    pub fn new(model: Box<dyn DeviceModel>) -> Self {
        Self(Arc::new(Mutex::new(model)))
    }

    fn lock(&self) -> MutexGuard<'_, Box<dyn DeviceModel>> {
        // A poisoned lock only means another user panicked mid-call; the model's state is
        // still a valid model state (every method is a pure computation or a whole update).
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn submit(&self, req: &Request, now: Nanos) -> Completion {
        self.lock().submit(&disk_request(req), now)
    }

    pub fn name(&self) -> String {
        self.lock().name().to_string()
    }

    pub fn capacity_sectors(&self) -> u64 {
        self.lock().capacity_sectors()
    }

    /// The LBN-distance curve the paper's calibration would measure on this device (see
    /// [`calibrate`]).
    pub fn calibrated_curve(&self) -> Arc<PositioningCurve> {
        calibrate(&**self.lock())
    }

    /// An exact estimator reading this device.
    pub fn estimator(&self) -> ExactEstimator {
        ExactEstimator {
            device: self.clone(),
            head: 0,
        }
    }
}

/// The request in the device's terms.
pub fn disk_request(req: &Request) -> DiskRequest {
    DiskRequest {
        op: match req.op {
            Op::Read => DiskOp::Read,
            Op::Write => DiskOp::Write,
        },
        lbn: req.sector,
        sectors: req.sectors,
    }
}

/// The "exact" positioning-time estimator: the device model's own answer.
pub struct ExactEstimator {
    device: SharedDevice,
    head: u64,
}

impl PositionEstimator for ExactEstimator {
    fn name(&self) -> &str {
        "exact"
    }

    fn head(&self) -> u64 {
        self.head
    }

    fn positioning_time(&self, req: &Request, now: Nanos) -> Nanos {
        self.device.lock().positioning_time(&disk_request(req), now)
    }

    fn dispatched(&mut self, req: &Request, _now: Nanos) {
        // The simulator submits the request to the shared model itself.
        self.head = req.end();
    }
}

/// Fits the paper's positioning-time curve to a device model (section 3.6): pairs of 64 KB
/// reads at log-spaced LBN distances, the second issued as the first completes, the median
/// time per distance bin joined piecewise-linearly. Deterministic, and memoized by model name
/// and capacity, since a suite builds many schedulers on the same model.
pub fn calibrate(model: &dyn DeviceModel) -> Arc<PositioningCurve> {
    type Memo = Mutex<HashMap<(String, u64), Arc<PositioningCurve>>>;
    static CURVES: OnceLock<Memo> = OnceLock::new();
    let key = (model.name().to_string(), model.capacity_sectors());
    let memo = CURVES.get_or_init(Default::default);
    if let Some(c) = memo.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return c.clone();
    }
    let samples = antsched_disk::curve::sample_model(model, 128, 10, 40, 1);
    let points = match antsched_disk::curve::fit(&samples, None) {
        Ok(c) => c
            .points
            .iter()
            .map(|p| CurvePoint {
                distance: p.distance,
                time_us: p.time_us,
            })
            .collect(),
        // A model too small to sample: one point, the mean of whatever was measured.
        Err(_) => vec![CurvePoint {
            distance: 0,
            time_us: samples.iter().map(|s| s.1).sum::<f64>() / samples.len().max(1) as f64,
        }],
    };
    let curve = Arc::new(PositioningCurve {
        points,
        source: Some(format!("calibrated on {}", key.0)),
        accuracy_within_20pct: None,
    });
    memo.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, curve.clone());
    curve
}
