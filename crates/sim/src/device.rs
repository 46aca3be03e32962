//! The device a simulation drives, shared with the scheduler's exact estimator.
//!
//! SPTF and the anticipation heuristics ask "how long would positioning for this request take
//! from where the head is now?". The honest answer comes from the device model itself, in its
//! current state (head, rotational phase at `now`, on-board cache). The simulator owns the
//! device; [`ExactEstimator`] holds a second handle to the same model and only reads it. One
//! model, one state: the estimate cannot drift from what the device then does.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use antsched_core::estimator::CurvePoint;
use antsched_core::{Nanos, Op, PositionEstimator, PositioningCurve, Request};
use antsched_disk::{Completion, DeviceModel, DiskOp, DiskRequest, PositioningFloor};

/// A device model shared between the simulator (which submits) and the exact estimator
/// (which reads). A mutex keeps the scheduler `Send`; in the simulator it is never contended.
#[derive(Clone)]
pub struct SharedDevice {
    model: Arc<Mutex<Box<dyn DeviceModel>>>,
    /// Requests submitted so far: the model's state changes with each and only then, so an
    /// answer the estimator remembers holds until this moves.
    submits: Arc<AtomicU64>,
}

impl SharedDevice {
    pub fn new(model: Box<dyn DeviceModel>) -> Self {
        Self {
            model: Arc::new(Mutex::new(model)),
            submits: Arc::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Box<dyn DeviceModel>> {
        // A poisoned lock only means another user panicked mid-call; the model's state is
        // still a valid model state (every method is a pure computation or a whole update).
        self.model.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn submit(&self, req: &Request, now: Nanos) -> Completion {
        self.submits.fetch_add(1, Ordering::Relaxed);
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

    /// What a scheduler is built with on this device: `estimator=exact` reads this model,
    /// `estimator=calibrated` uses the curve calibration fits to it.
    pub fn build_env(&self, seed: u64) -> antsched_core::BuildEnv {
        let (exact, calibrated) = (self.clone(), self.clone());
        antsched_core::BuildEnv {
            seed,
            exact: Some(Arc::new(move || {
                Box::new(exact.estimator()) as Box<dyn PositionEstimator>
            })),
            calibrated: Some(Arc::new(move || {
                let curve = (*calibrated.calibrated_curve()).clone();
                Box::new(antsched_core::CurveEstimator::new(curve)) as Box<dyn PositionEstimator>
            })),
            real_clock: false,
        }
    }

    /// An exact estimator reading this device.
    pub fn estimator(&self) -> ExactEstimator {
        ExactEstimator {
            device: self.clone(),
            head: 0,
            floor: RefCell::new(None),
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
    /// The device's bound ([`DeviceModel::media_positioning_floor`]) at a [`FloorKey`]:
    /// asked once per decision, not at every step of SPTF's walk.
    floor: RefCell<Option<(FloorKey, Option<PositioningFloor>)>>,
}

/// What the device's floor depends on: the requests submitted (the device's state), the
/// instant and the head.
type FloorKey = (u64, Nanos, u64);

impl ExactEstimator {
    /// Runs `f` on the device's bound at `now`, asking the device once per state and instant.
    /// `f` sees the floor through a shared borrow: a walk visiting the cached ranges may ask
    /// for the bound again from inside.
    fn with_floor<T>(&self, now: Nanos, f: impl FnOnce(Option<&PositioningFloor>) -> T) -> T {
        let key = (self.device.submits.load(Ordering::Relaxed), now, self.head);
        let stale = self
            .floor
            .borrow()
            .as_ref()
            .is_none_or(|(at, _)| *at != key);
        if stale {
            let asked = self.device.lock().media_positioning_floor(self.head, now);
            *self.floor.borrow_mut() = Some((key, asked));
        }
        let floor = self.floor.borrow();
        f(floor.as_ref().and_then(|(_, b)| b.as_ref()))
    }
}

impl PositionEstimator for ExactEstimator {
    fn name(&self) -> &str {
        "exact"
    }

    fn head(&self) -> u64 {
        self.head
    }

    /// The device's price of the media work (`media_positioning_time`): a write its
    /// write-back cache takes is weighed by the destage it defers, not by its report.
    fn positioning_time(&self, req: &Request, now: Nanos) -> Nanos {
        self.device
            .lock()
            .media_positioning_time(&disk_request(req), now)
    }

    fn dispatched(&mut self, req: &Request, _now: Nanos) {
        // The simulator submits the request to the shared model itself.
        self.head = req.end();
    }

    /// The device's floor: the least overhead and seek a request this far from the head can
    /// take, outside what the drive's cache holds.
    fn lower_bound(&self, distance: u64, now: Nanos) -> Nanos {
        self.with_floor(now, |f| f.map_or(0, |f| f.at(distance)))
    }

    fn unbounded(&self, now: Nanos, visit: &mut dyn FnMut(u64, u64)) {
        self.with_floor(now, |f| {
            for &(start, end) in f.map_or(&[][..], |f| &f.cached[..]) {
                visit(start, end);
            }
        })
    }

    /// What the host would see of the positioning beyond the media work's own: the wait for
    /// the destage (or the read-ahead's last sector) the mechanism has already taken.
    fn committed(&self, req: &Request, now: Nanos) -> Nanos {
        let d = self.device.lock();
        let r = disk_request(req);
        d.positioning_time(&r, now)
            .saturating_sub(d.media_positioning_time(&r, now))
    }

    fn costly(&self) -> bool {
        true
    }
}

/// How every calibration is run, here and by `antsched calibrate` (whose defaults these are):
/// the read size, the distances per factor of ten, the reads per distance, and the seed of
/// the plan ([`antsched_disk::curve::CalibrationPlan`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CalibrationSettings {
    /// 8 sectors (4 KiB): the shortest read a file system issues, so that the transfer a
    /// real-time measurement must subtract from each read's latency is small.
    pub sectors: u32,
    pub per_decade: u32,
    pub pairs: u32,
    /// Pauses between reads are uniform up to this
    /// ([`antsched_disk::curve::MAX_CALIBRATION_PAUSE`]).
    pub max_pause: Nanos,
    pub seed: u64,
}

/// The settings of `estimator=calibrated` and the defaults of `antsched calibrate`.
pub const CALIBRATION: CalibrationSettings = CalibrationSettings {
    sectors: 8,
    per_decade: 10,
    pairs: 40,
    max_pause: antsched_disk::curve::MAX_CALIBRATION_PAUSE,
    seed: 1,
};

/// Fits the paper's positioning-time curve to a device model (section 3.6): reads at
/// log-spaced LBN distances, each issued a random pause after the previous one completes
/// ([`CALIBRATION`]), per distance bin the time most samples are within 20% of
/// ([`antsched_disk::curve::fit_within`]), joined piecewise-linearly: the same
/// measurement `antsched calibrate --emulate` makes in real time. Deterministic, and memoized
/// by model name and capacity, since a suite builds many schedulers on the same model.
pub fn calibrate(model: &dyn DeviceModel) -> Arc<PositioningCurve> {
    type Memo = Mutex<HashMap<(String, u64), Arc<PositioningCurve>>>;
    static CURVES: OnceLock<Memo> = OnceLock::new();
    let key = (model.name().to_string(), model.capacity_sectors());
    let memo = CURVES.get_or_init(Default::default);
    if let Some(c) = memo.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return c.clone();
    }
    let c = CALIBRATION;
    let samples = antsched_disk::curve::sample_model(
        model,
        c.sectors,
        c.per_decade,
        c.pairs,
        c.max_pause,
        c.seed,
    );
    let points = match antsched_disk::curve::fit_within(&samples, 0.2, None) {
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
        calibration: None,
    });
    memo.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, curve.clone());
    curve
}

/// The accuracy test set: the positioning times a scheduler actually compares. Each of the
/// paper's two-reader workloads of section 4.1 (sequential mmap readers, alternate blocks,
/// random blocks; 64 KB requests into two 1 GB files) runs for 10 s of simulated time under
/// `aged-sptf` and `as-aged-sptf` (the schedulers the paper compares) with the exact
/// estimator, and every `positioning_time` question the scheduler asks (SPTF's choice, the
/// heuristic's benefit) is recorded with the model's exact answer: (LBN distance from the head,
/// exact µs). Nothing is filtered out.
pub fn decision_samples(model: &dyn DeviceModel) -> Result<Vec<(u64, f64)>, crate::SimError> {
    const JOBS: [&str; 3] = [
        "[global]\nrw=read\nbs=64k\nsize=1g\nioengine=mmap\nruntime=10s\n[reader1]\nfilename=reader1.dat\n[reader2]\nfilename=reader2.dat\n",
        "[global]\nrw=read:64k\nbs=64k\nsize=1g\nioengine=psync\ndirect=0\nruntime=10s\n[reader1]\nfilename=reader1.dat\n[reader2]\nfilename=reader2.dat\n",
        "[global]\nrw=randread\nbs=64k\nsize=1g\nioengine=psync\ndirect=0\nruntime=10s\n[reader1]\nfilename=reader1.dat\n[reader2]\nfilename=reader2.dat\n",
    ];
    struct Probe {
        exact: ExactEstimator,
        log: Arc<Mutex<Vec<(u64, f64)>>>,
    }
    impl PositionEstimator for Probe {
        fn name(&self) -> &str {
            "exact"
        }
        fn head(&self) -> u64 {
            self.exact.head()
        }
        fn positioning_time(&self, req: &Request, now: Nanos) -> Nanos {
            let t = self.exact.positioning_time(req, now);
            self.log
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((self.exact.head().abs_diff(req.sector), t as f64 / 1e3));
            t
        }
        fn dispatched(&mut self, req: &Request, now: Nanos) {
            self.exact.dispatched(req, now)
        }
        fn costly(&self) -> bool {
            true
        }
    }
    let log = Arc::new(Mutex::new(Vec::new()));
    for (k, text) in JOBS.iter().enumerate() {
        let jobs = antsched_workload::fio::parse(text, &format!("accuracy-test-{k}.fio"))?;
        for spec in ["aged-sptf", "as-aged-sptf"] {
            let device = SharedDevice::new(model.clone_box());
            let workload = antsched_workload::compile(&jobs, device.capacity_sectors(), 1)?;
            let (d, l) = (device.clone(), log.clone());
            let env = antsched_core::BuildEnv {
                seed: 1,
                exact: Some(Arc::new(move || {
                    Box::new(Probe {
                        exact: d.estimator(),
                        log: l.clone(),
                    }) as Box<dyn PositionEstimator>
                })),
                calibrated: None,
                real_clock: false,
            };
            let sched = antsched_core::build(spec, &env)?;
            crate::engine::Simulation::new(&jobs, &workload, sched, device)?.run()?;
        }
    }
    let v = std::mem::take(&mut *log.lock().unwrap_or_else(|e| e.into_inner()));
    Ok(v)
}

/// Fraction of `samples` (distance, exact µs) whose estimate by `curve` is within 20% of the
/// exact time.
pub fn accuracy_on(samples: &[(u64, f64)], curve: &PositioningCurve) -> f64 {
    let ok = samples
        .iter()
        .filter(|&&(d, exact)| {
            let est = curve.time_at(d) as f64 / 1e3;
            (est - exact).abs() <= 0.2 * exact
        })
        .count();
    ok as f64 / samples.len().max(1) as f64
}

/// The best accuracy any LBN-distance curve with the calibration's bins (8 per factor of ten)
/// could reach on `samples`: in each bin, the single estimate that the most samples are
/// within 20% of, found on the samples themselves. A ceiling, not a curve to use: where the
/// rotational wait makes the exact time at one distance spread over a whole revolution, no
/// function of distance alone is within 20% of most of them.
pub fn best_possible_accuracy(samples: &[(u64, f64)]) -> f64 {
    let bin = |d: u64| -> i64 {
        if d == 0 {
            -1
        } else {
            ((d as f64).log10() * 8.0).floor() as i64
        }
    };
    let mut by_bin: HashMap<i64, Vec<f64>> = HashMap::new();
    for &(d, t) in samples {
        by_bin.entry(bin(d)).or_default().push(t);
    }
    let mut hits = 0usize;
    for ts in by_bin.values_mut() {
        ts.sort_by(f64::total_cmp);
        // An estimate e covers the exact times t with |e - t| <= 0.2 t, i.e. t in
        // [e / 1.2, e / 0.8]; the best e puts the window's edge on a sample: try each.
        let mut best = 0;
        for &t in ts.iter() {
            for e in [t * 0.8, t * 1.2] {
                let lo = ts.partition_point(|&x| x < e / 1.2 - 1e-9);
                let hi = ts.partition_point(|&x| x <= e / 0.8 + 1e-9);
                best = best.max(hi - lo);
            }
        }
        hits += best;
    }
    hits as f64 / samples.len().max(1) as f64
}
