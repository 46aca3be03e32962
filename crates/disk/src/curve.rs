//! Positioning-time curves: LBN distance to positioning time.
//!
//! The paper's implementation could not ask the drive where its head was, so it calibrated at
//! installation a curve from the LBN distance between two requests to the time the second one
//! costs (thesis section 3.6: "covers seek time, average rotational latency and track
//! buffering", about 75% accurate). The scheduler's calibrated estimator
//! (`antsched_core::PositioningCurve`) reads such a curve as JSON.
//!
//! * [`CalibrationPlan`] is the measurement: reads at log-spaced LBN distances, in random
//!   order, each a random pause after the previous one (so the platter's phase is random and
//!   the curve carries the average rotational wait). [`sample_model`] runs it on a model in
//!   virtual time; `antsched-io` runs the same plan on a device in real time.
//! * [`fit`] turns (distance, time) samples into a curve: medians in log-spaced distance bins,
//!   made non-decreasing, joined piecewise-linearly. [`fit_within`] instead takes, in each bin,
//!   the time most samples are within 20% of: the criterion the curve is judged by.
//! * [`accuracy_within_20pct`] scores a curve against a model's exact positioning time.

use crate::{DeviceModel, DiskRequest, Nanos};

/// One point of a curve, in the JSON schema `antsched_core::CurvePoint` reads.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CurvePoint {
    /// LBN distance in sectors from the end of one request to the start of the next.
    pub distance: u64,
    /// Positioning time in microseconds.
    pub time_us: f64,
}

/// A fitted curve, in the JSON schema `antsched_core::PositioningCurve` reads: strictly
/// increasing distances, finite non-negative times; linear between points, flat beyond the last.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FittedCurve {
    pub points: Vec<CurvePoint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy_within_20pct: Option<f64>,
    /// How far the calibration can be trusted (repeated passes, their spread, the machine's
    /// noise), when the curve was measured rather than fitted once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Quality>,
}

impl FittedCurve {
    /// Positioning time at `distance` sectors (µs), linear between points, flat outside.
    pub fn time_us_at(&self, distance: u64) -> f64 {
        let pts = &self.points;
        let i = pts.partition_point(|p| p.distance <= distance);
        if i == 0 {
            return pts[0].time_us;
        }
        if i == pts.len() {
            return pts[i - 1].time_us;
        }
        let (a, b) = (pts[i - 1], pts[i]);
        let f = (distance - a.distance) as f64 / (b.distance - a.distance) as f64;
        a.time_us + f * (b.time_us - a.time_us)
    }

    /// The JSON form.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a curve always serializes")
    }
}

/// Why samples cannot be fitted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error("no samples to fit")]
    Empty,
    #[error("sample {index} has time {time_us} µs; times must be finite and >= 0")]
    BadTime { index: usize, time_us: f64 },
}

/// Fits a curve to `(distance in sectors, positioning time in µs)` samples: the median of each
/// log-spaced distance bin (8 bins per factor of ten, plus distance 0 on its own), forced
/// non-decreasing (a longer seek never costs less on average), one point per non-empty bin at
/// the bin's median distance.
pub fn fit(samples: &[(u64, f64)], source: Option<String>) -> Result<FittedCurve, FitError> {
    if samples.is_empty() {
        return Err(FitError::Empty);
    }
    for (i, &(_, t)) in samples.iter().enumerate() {
        if !t.is_finite() || t < 0.0 {
            return Err(FitError::BadTime {
                index: i,
                time_us: t,
            });
        }
    }
    let bin = |d: u64| -> i64 {
        if d == 0 {
            -1
        } else {
            ((d as f64).log10() * 8.0).floor() as i64
        }
    };
    let mut sorted: Vec<(i64, u64, f64)> = samples.iter().map(|&(d, t)| (bin(d), d, t)).collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut points: Vec<CurvePoint> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let b = sorted[i].0;
        let mut j = i;
        while j < sorted.len() && sorted[j].0 == b {
            j += 1;
        }
        let group = &sorted[i..j];
        let mut ds: Vec<u64> = group.iter().map(|g| g.1).collect();
        let mut ts: Vec<f64> = group.iter().map(|g| g.2).collect();
        ds.sort_unstable();
        ts.sort_by(f64::total_cmp);
        let d = ds[ds.len() / 2];
        let t = if ts.len() % 2 == 1 {
            ts[ts.len() / 2]
        } else {
            (ts[ts.len() / 2 - 1] + ts[ts.len() / 2]) / 2.0
        };
        if points.last().is_some_and(|p| p.distance >= d) {
            // Medians of neighbouring bins can coincide at bin edges; keep distances strictly
            // increasing.
            let p = points.last_mut().expect("checked");
            p.time_us = (p.time_us + t) / 2.0;
        } else {
            points.push(CurvePoint {
                distance: d,
                time_us: t,
            });
        }
        i = j;
    }
    // Monotone: running maximum.
    let mut m = 0.0f64;
    for p in &mut points {
        m = m.max(p.time_us);
        p.time_us = m;
    }
    Ok(FittedCurve {
        points,
        source,
        accuracy_within_20pct: None,
        calibration: None,
    })
}

/// Like [`fit`], but each bin's point is the estimate that the most of the bin's samples are
/// within `tolerance` (0.2: 20%) of, rather than their median: the curve is judged by how
/// often it is within 20% of the truth, and when the rotational wait spreads one distance's
/// times over a revolution the median is not the value that is most often close (for times
/// spread evenly over `[a, b]` it is `0.8 b` when the spread is wide). The window is never
/// narrower than [`FIT_FLOOR_US`] either way, so that the microseconds of jitter a real-time
/// measurement adds to the very short times of cache hits do not scatter them (a window of
/// 20% of 30 us is narrower than the jitter). Only the calibration's own samples are used.
pub fn fit_within(
    samples: &[(u64, f64)],
    tolerance: f64,
    source: Option<String>,
) -> Result<FittedCurve, FitError> {
    let median = fit(samples, source)?;
    let bin = |d: u64| -> i64 {
        if d == 0 {
            -1
        } else {
            ((d as f64).log10() * 8.0).floor() as i64
        }
    };
    let mut by_bin: std::collections::BTreeMap<i64, Vec<f64>> = Default::default();
    for &(d, t) in samples {
        by_bin.entry(bin(d)).or_default().push(t);
    }
    // Samples t that an estimate e counts as close: |e - t| <= max(tolerance * t, floor).
    let lo_of = |e: f64| (e / (1.0 + tolerance)).min(e - FIT_FLOOR_US);
    let hi_of = |e: f64| {
        if tolerance < 1.0 {
            (e / (1.0 - tolerance)).max(e + FIT_FLOOR_US)
        } else {
            f64::INFINITY
        }
    };
    let mut points = median.points;
    for p in &mut points {
        let Some(ts) = by_bin.get_mut(&bin(p.distance)) else {
            continue;
        };
        ts.sort_by(f64::total_cmp);
        // The best window has a sample on one of its edges: try each sample as either edge
        // (and as the estimate itself).
        let mut best = (0usize, p.time_us);
        let count = |e: f64, ts: &[f64]| {
            let lo = ts.partition_point(|&x| x < lo_of(e) - 1e-9);
            let hi = ts.partition_point(|&x| x <= hi_of(e) + 1e-9);
            hi - lo
        };
        for &t in ts.iter() {
            let candidates = [
                t,
                (t * (1.0 - tolerance)).min(t - FIT_FLOOR_US).max(0.0),
                (t * (1.0 + tolerance)).max(t + FIT_FLOOR_US),
            ];
            for e in candidates {
                let n = count(e, ts);
                if n > best.0 {
                    best = (n, e);
                }
            }
        }
        p.time_us = best.1;
    }
    let mut m = 0.0f64;
    for p in &mut points {
        m = m.max(p.time_us);
        p.time_us = m;
    }
    Ok(FittedCurve {
        points,
        source: median.source,
        accuracy_within_20pct: None,
        calibration: None,
    })
}

/// How much a measured curve can be trusted: the calibration is repeated in independent passes
/// (each its own plan: other places, order and pauses), each pass fitted on its own, and the
/// curve kept is, at every distance, the median of the passes' times. One pass disturbed by
/// the machine (a compile that ran during it) cannot move a median of three; the passes'
/// disagreement and how late the measuring thread woke say whether the rest can be trusted.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Quality {
    /// Independent passes measured (the median is over these).
    pub passes: u32,
    /// Per point, `(largest - smallest) / median` of the passes' times: the median over the
    /// curve's points, and the largest.
    pub spread_median: f64,
    pub spread_max: f64,
    /// The fraction of the curve's points at which every pass is within 20% of the median
    /// curve (1 with one pass, where nothing can disagree).
    pub confidence: f64,
    /// How late the measuring thread woke for its reads (from the pauses between them), in
    /// microseconds: median and 99th percentile. A quiet machine wakes it within microseconds.
    pub wake_late_p50_us: f64,
    pub wake_late_p99_us: f64,
    /// The fraction of reads whose first measurement was disturbed ([`disturbed`]): issued
    /// or completed more than [`LATE_WAKE_US`] late.
    pub late_fraction: f64,
    /// Measurements made again because the one before was disturbed.
    pub remeasured: u64,
    /// The fraction of the samples kept that were disturbed even so (every attempt was).
    pub disturbed_fraction: f64,
    /// Each pass's accuracy, where a model could score it (an emulated disk).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_accuracy: Vec<f64>,
    /// What made the result doubtful, for a person (empty when nothing did).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A read issued later than this after its pause, or completed later than this after the
/// device finished it (where the runtime can tell: an emulated disk), is disturbed: the
/// machine kept the measuring thread or the event loop timing the read from running.
pub const LATE_WAKE_US: f64 = 200.0;

/// Whether a measurement is disturbed: the measuring thread woke `woke_us` late for it, and
/// the runtime completed it `late_us` after the device finished it.
pub fn disturbed(woke_us: f64, late_us: f64) -> bool {
    woke_us > LATE_WAKE_US || late_us > LATE_WAKE_US
}

/// Above this fraction of disturbed samples kept the machine is called too noisy.
pub const MAX_DISTURBED_FRACTION: f64 = 0.05;

/// Below this [`Quality::confidence`] the passes are called too far apart.
pub const MIN_CONFIDENCE: f64 = 0.9;

/// The curve that is, at each distance any pass has a point at, the median of the passes'
/// times there (each pass read between its points as [`FittedCurve::time_us_at`] does), and
/// the quality figures that depend only on the passes: `passes`, the spreads and
/// `confidence` (the rest of [`Quality`] is the caller's to fill). The median of
/// non-decreasing curves is non-decreasing, so the result is a valid curve.
pub fn median_curve(passes: &[FittedCurve]) -> Result<(FittedCurve, Quality), FitError> {
    let mut distances: Vec<u64> = passes
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.distance))
        .collect();
    if distances.is_empty() {
        return Err(FitError::Empty);
    }
    distances.sort_unstable();
    distances.dedup();
    let mut points = Vec::with_capacity(distances.len());
    let mut spreads = Vec::with_capacity(distances.len());
    let mut agree = 0usize;
    let mut ts = Vec::with_capacity(passes.len());
    for &d in &distances {
        ts.clear();
        ts.extend(
            passes
                .iter()
                .filter(|c| !c.points.is_empty())
                .map(|c| c.time_us_at(d)),
        );
        let m = median(&mut ts);
        if !m.is_finite() || m < 0.0 {
            return Err(FitError::BadTime {
                index: points.len(),
                time_us: m,
            });
        }
        let (lo, hi) = (ts[0], ts[ts.len() - 1]);
        spreads.push(if m > 0.0 { (hi - lo) / m } else { 0.0 });
        // Within 20% as the curve is judged, with the fit's floor for the shortest times.
        let close = |t: f64| (t - m).abs() <= (0.2 * m).max(FIT_FLOOR_US);
        if ts.iter().all(|&t| close(t)) {
            agree += 1;
        }
        points.push(CurvePoint {
            distance: d,
            time_us: m,
        });
    }
    let n = points.len() as f64;
    let q = Quality {
        passes: passes.len() as u32,
        spread_median: median(&mut spreads.clone()),
        spread_max: spreads.iter().copied().fold(0.0, f64::max),
        confidence: agree as f64 / n,
        ..Quality::default()
    };
    Ok((
        FittedCurve {
            points,
            source: passes.iter().find_map(|c| c.source.clone()),
            accuracy_within_20pct: None,
            calibration: None,
        },
        q,
    ))
}

/// The median of `xs` (sorted in place; the mean of the middle two for an even count; NaN
/// when empty).
pub fn median(xs: &mut [f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// The warnings a calibration of quality `q` deserves: the machine too noisy (more than
/// [`MAX_DISTURBED_FRACTION`] of the samples kept were disturbed, every attempt at them), the passes too far apart (confidence under
/// [`MIN_CONFIDENCE`]), or the passes' accuracies more than 0.05 apart, or a single pass,
/// which measures no spread at all.
pub fn warnings(q: &Quality) -> Vec<String> {
    let mut w = Vec::new();
    if q.disturbed_fraction > MAX_DISTURBED_FRACTION {
        w.push(format!(
            "the machine was too noisy: {:.0}% of the samples kept were disturbed (issued or \
             completed more than {LATE_WAKE_US:.0} us late) in every attempt, after {} \
             measurements made again; other work kept the measuring threads from running, \
             which lengthens the times measured (99th percentile of the lateness at issue: \
             {:.0} us). Rerun on a quieter machine or as root (real-time priority)",
            q.disturbed_fraction * 100.0,
            q.remeasured,
            q.wake_late_p99_us
        ));
    }
    if q.passes > 1 && q.confidence < MIN_CONFIDENCE {
        w.push(format!(
            "the {} passes disagree: at {:.0}% of the distances some pass is more than 20% from \
             their median (largest spread {:.0}%); the curve is uncertain. Rerun with more --repeats \
             or on a quieter machine",
            q.passes,
            (1.0 - q.confidence) * 100.0,
            q.spread_max * 100.0
        ));
    }
    if let (Some(lo), Some(hi)) = (
        q.pass_accuracy.iter().copied().reduce(f64::min),
        q.pass_accuracy.iter().copied().reduce(f64::max),
    ) {
        if hi - lo > 0.05 {
            w.push(format!(
                "the passes' accuracies range from {lo:.3} to {hi:.3}, more than 0.05 apart: one or \
                 more was disturbed"
            ));
        }
    }
    if q.passes == 1 {
        w.push(
            "one pass only (--repeats 1): no spread was measured, and one disturbance can move the curve"
                .into(),
        );
    }
    w
}

/// The narrowest window [`fit_within`] counts samples in, either side of an estimate, in µs.
pub const FIT_FLOOR_US: f64 = 50.0;

/// Small deterministic generator (the crate has no randomness dependency; results must be
/// reproducible from a seed).
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// The reads of a calibration: where each goes and its LBN distance from the end of the one
/// before. Made once, used both on a model ([`sample_model`]) and on a real or emulated device
/// in real time (`antsched-io`'s calibration), so that the two measure the same thing.
///
/// Distances are log-spaced (`per_decade` per factor of ten, from 1 sector to the whole disk,
/// plus 0), each measured `pairs` times; the samples are shuffled, so the head roams the whole
/// disk rather than creeping, and each read starts from where the previous one ended: every
/// read after the first is the second read of a pair whose first is its predecessor. The
/// direction (forward or backward) is random where both fit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CalibrationPlan {
    /// Size of every read, in sectors.
    pub sectors: u32,
    /// The first read (it only positions the head).
    pub first: u64,
    /// Each later read: (first sector, distance from the end of the previous read, pause in
    /// nanoseconds between the previous read's completion and this one's issue).
    pub reads: Vec<(u64, u64, Nanos)>,
}

/// The longest pause a calibration leaves between two reads: 12 ms, more than a revolution of
/// any disk from 5,400 rpm (11.1 ms) up, so the platter's phase when a read arrives is spread
/// over the whole revolution and each distance's samples carry the average rotational wait,
/// as the paper says its curve did ("seek time, average rotational latency and track
/// buffers"). Issuing each read the instant the previous completes would instead tie the
/// phase to the distance, which a scheduler's requests (arriving whenever their issuers get
/// to them) do not have.
pub const MAX_CALIBRATION_PAUSE: Nanos = 12_000_000;

impl CalibrationPlan {
    /// A plan for a device of `capacity` sectors; pauses are uniform in
    /// `[0, max_pause)` (0: none).
    pub fn new(
        capacity: u64,
        sectors: u32,
        per_decade: u32,
        pairs: u32,
        max_pause: Nanos,
        seed: u64,
    ) -> Self {
        let n = u64::from(sectors);
        let span = capacity.saturating_sub(n + 1).max(1);
        let mut rng = SplitMix::new(seed);
        let mut distances = vec![0u64];
        let mut k = 0u32;
        loop {
            let d = 10f64.powf(k as f64 / per_decade.max(1) as f64).round() as u64;
            if d >= span.saturating_sub(n) {
                break;
            }
            if distances.last() != Some(&d) {
                distances.push(d);
            }
            k += 1;
        }
        let mut all: Vec<u64> = distances
            .iter()
            .flat_map(|&d| std::iter::repeat_n(d, pairs as usize))
            .collect();
        // Fisher-Yates with the plan's own generator: deterministic for a seed.
        for i in (1..all.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            all.swap(i, j);
        }
        let first = rng.below(span);
        let mut end = first + n;
        let mut reads = Vec::with_capacity(all.len());
        for d in all {
            // The distance runs from the head (the end of the previous read) to the first
            // sector of the next, as the estimators measure it.
            let fwd = end + d <= span;
            let back = end >= d;
            let to = match (fwd, back) {
                (true, true) => {
                    if rng.next_u64() & 1 == 0 {
                        end + d
                    } else {
                        end - d
                    }
                }
                (true, false) => end + d,
                (false, true) => end - d,
                (false, false) => continue,
            };
            if to + n > capacity {
                continue;
            }
            let pause = if max_pause == 0 {
                0
            } else {
                rng.below(max_pause)
            };
            reads.push((to, d, pause));
            end = to + n;
        }
        CalibrationPlan {
            sectors,
            first,
            reads,
        }
    }
}

/// Measures a model as the paper's calibration measured a disk: runs a [`CalibrationPlan`]
/// (`sectors`-sector reads at log-spaced distances, `pairs` of each, `per_decade` distances
/// per factor of ten, each issued a random pause of up to `max_pause` after the previous one
/// completed) on a copy of the model in virtual time. The sample is the read's positioning
/// time (the model's exact split of its service time, so no transfer needs subtracting).
/// Returns (distance, µs) samples.
pub fn sample_model(
    model: &dyn DeviceModel,
    sectors: u32,
    per_decade: u32,
    pairs: u32,
    max_pause: Nanos,
    seed: u64,
) -> Vec<(u64, f64)> {
    let plan = CalibrationPlan::new(
        model.capacity_sectors(),
        sectors,
        per_decade,
        pairs,
        max_pause,
        seed,
    );
    let mut m = model.clone_box();
    let mut t: Nanos = SplitMix::new(seed ^ 0x5eed).below(100_000_000);
    t = m.submit(&DiskRequest::read(plan.first, sectors), t).finish;
    let mut out = Vec::with_capacity(plan.reads.len());
    for &(lbn, d, pause) in &plan.reads {
        let c = m.submit(&DiskRequest::read(lbn, sectors), t + pause);
        out.push((d, c.service.positioning() as f64 / 1000.0));
        t = c.finish;
    }
    out
}

/// Fraction of `n` random requests whose curve estimate is within 20% of the model's exact
/// positioning time. Each trial puts the model in a random state (a read somewhere), then
/// compares, for a random next request, `curve(distance)` with `positioning_time`.
pub fn accuracy_within_20pct(
    curve: &FittedCurve,
    model: &dyn DeviceModel,
    n: u32,
    seed: u64,
) -> f64 {
    let cap = model.capacity_sectors();
    let mut rng = SplitMix::new(seed);
    let mut m = model.clone_box();
    let mut t: Nanos = 0;
    let mut ok = 0u32;
    let sectors = 8u32;
    for _ in 0..n {
        let a = rng.below(cap - sectors as u64);
        let c = m.submit(&DiskRequest::read(a, sectors), t);
        t = c.finish;
        // Mostly nearby requests (what a scheduler compares), some far.
        let b = if rng.next_u64() & 1 == 0 {
            let off = 10f64.powf(rng.below(6000) as f64 / 1000.0) as u64;
            (a + off).min(cap - sectors as u64)
        } else {
            rng.below(cap - sectors as u64)
        };
        let exact = m.positioning_time(&DiskRequest::read(b, sectors), t) as f64 / 1000.0;
        let dist = b.abs_diff(a + sectors as u64);
        let est = curve.time_us_at(dist);
        if (est - exact).abs() <= 0.2 * exact {
            ok += 1;
        }
        t += rng.below(20_000_000);
    }
    ok as f64 / n.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_is_monotone_with_strictly_increasing_distances() {
        let mut s = Vec::new();
        let mut r = SplitMix::new(1);
        for k in 0..4000 {
            let d = 10f64.powf((k % 70) as f64 / 10.0) as u64;
            let t = 1000.0 + 300.0 * (d as f64).sqrt().min(80.0) + r.below(8000) as f64;
            s.push((d, t));
        }
        let c = fit(&s, Some("test".into())).unwrap();
        assert!(c.points.windows(2).all(|w| w[0].distance < w[1].distance));
        assert!(c.points.windows(2).all(|w| w[0].time_us <= w[1].time_us));
        let json = c.to_json();
        assert!(json.contains("\"points\"") && json.contains("\"time_us\""));
    }

    #[test]
    fn a_plan_measures_each_distance_from_the_end_of_the_previous_read() {
        let cap = 70_000_000;
        let p = CalibrationPlan::new(cap, 8, 10, 3, MAX_CALIBRATION_PAUSE, 5);
        assert_eq!(
            p,
            CalibrationPlan::new(cap, 8, 10, 3, MAX_CALIBRATION_PAUSE, 5)
        );
        let mut end = p.first + 8;
        for &(lbn, d, pause) in &p.reads {
            assert_eq!(lbn.abs_diff(end), d);
            assert!(lbn + 8 <= cap && pause < MAX_CALIBRATION_PAUSE);
            end = lbn + 8;
        }
        // Every distance from 0 to tens of millions of sectors, about three times each.
        assert!(p.reads.iter().any(|r| r.1 == 0) && p.reads.iter().any(|r| r.1 > 10_000_000));
        assert!(p.reads.len() > 3 * 70);
        assert!(CalibrationPlan::new(cap, 8, 10, 3, 0, 5)
            .reads
            .iter()
            .all(|r| r.2 == 0));
    }

    #[test]
    fn fit_within_picks_the_value_most_samples_are_close_to() {
        // Times spread evenly over [2, 10] ms at one distance: the median (6 ms) is within
        // 20% of the samples in [5, 7.5] ms, 31% of them; 8 ms is within 20% of [6.67, 10],
        // 42% of them.
        let s: Vec<(u64, f64)> = (0..=800)
            .map(|i| (1000, 2000.0 + 10.0 * i as f64))
            .collect();
        let median = fit(&s, None).unwrap().time_us_at(1000);
        let best = fit_within(&s, 0.2, None).unwrap().time_us_at(1000);
        assert!((median - 6000.0).abs() < 20.0, "{median}");
        assert!((best - 8000.0).abs() < 100.0, "{best}");
    }

    #[test]
    fn fit_rejects_bad_samples() {
        assert_eq!(fit(&[], None), Err(FitError::Empty));
        assert!(matches!(
            fit(&[(1, f64::NAN)], None),
            Err(FitError::BadTime { .. })
        ));
    }

    fn curve(points: &[(u64, f64)]) -> FittedCurve {
        FittedCurve {
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
    fn the_median_curve_ignores_one_disturbed_pass_and_reports_it() {
        let good = [(0, 100.0), (1000, 4000.0), (1_000_000, 9000.0)];
        let a = curve(&good);
        let b = curve(&[(0, 110.0), (1000, 4100.0), (1_000_000, 9100.0)]);
        // A pass measured while the machine was busy: every time far too long.
        let disturbed = curve(&[(0, 900.0), (1000, 9000.0), (1_000_000, 15000.0)]);
        let (m, q) = median_curve(&[a.clone(), disturbed.clone(), b]).unwrap();
        let times: Vec<f64> = m.points.iter().map(|p| p.time_us).collect();
        assert_eq!(
            times,
            vec![110.0, 4100.0, 9100.0],
            "the median, not the mean"
        );
        assert_eq!(q.passes, 3);
        assert_eq!(q.confidence, 0.0, "at every distance one pass is far off");
        assert!(
            (q.spread_max - (900.0 - 100.0) / 110.0).abs() < 1e-9,
            "{q:?}"
        );
        // Three agreeing passes: full confidence, small spread, no warning.
        let (m, q) = median_curve(&[a.clone(), a.clone(), curve(&good)]).unwrap();
        assert_eq!(m.points, a.points);
        assert_eq!((q.confidence, q.spread_max), (1.0, 0.0));
        assert!(warnings(&q).is_empty(), "{:?}", warnings(&q));
        // Passes with points at different distances are read between their points.
        let (m, _) =
            median_curve(&[curve(&[(0, 100.0), (100, 200.0)]), curve(&[(50, 150.0)])]).unwrap();
        let d: Vec<u64> = m.points.iter().map(|p| p.distance).collect();
        assert_eq!(d, vec![0, 50, 100]);
        assert_eq!(median_curve(&[]), Err(FitError::Empty));
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }

    #[test]
    fn a_noisy_machine_or_disagreeing_passes_are_warned_about() {
        assert!(!disturbed(150.0, 0.0) && !disturbed(0.0, 200.0));
        assert!(disturbed(201.0, 0.0) && disturbed(0.0, 5000.0));
        let quiet = Quality {
            passes: 3,
            confidence: 1.0,
            late_fraction: 0.001,
            wake_late_p99_us: 30.0,
            pass_accuracy: vec![0.56, 0.57, 0.58],
            ..Quality::default()
        };
        assert!(warnings(&quiet).is_empty(), "{:?}", warnings(&quiet));
        // Many first measurements disturbed, but measured again until they were not: the
        // result holds and there is nothing to warn about.
        let recovered = Quality {
            late_fraction: 0.3,
            remeasured: 900,
            disturbed_fraction: 0.01,
            wake_late_p99_us: 4000.0,
            ..quiet.clone()
        };
        assert!(
            warnings(&recovered).is_empty(),
            "{:?}",
            warnings(&recovered)
        );
        let noisy = Quality {
            disturbed_fraction: 0.2,
            ..recovered
        };
        let w = warnings(&noisy);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("too noisy") && w[0].contains("20%") && w[0].contains("900"),
            "{w:?}"
        );
        let apart = Quality {
            confidence: 0.5,
            ..quiet.clone()
        };
        assert!(
            warnings(&apart)[0].contains("disagree"),
            "{:?}",
            warnings(&apart)
        );
        let accuracies = Quality {
            pass_accuracy: vec![0.57, 0.34, 0.56],
            ..quiet.clone()
        };
        assert!(
            warnings(&accuracies)[0].contains("0.340 to 0.570"),
            "{:?}",
            warnings(&accuracies)
        );
        let single = Quality {
            passes: 1,
            confidence: 1.0,
            ..Quality::default()
        };
        assert!(
            warnings(&single)[0].contains("one pass"),
            "{:?}",
            warnings(&single)
        );
        // At the thresholds themselves: no warning.
        let edge = Quality {
            disturbed_fraction: MAX_DISTURBED_FRACTION,
            confidence: MIN_CONFIDENCE,
            pass_accuracy: vec![0.50, 0.54],
            ..quiet
        };
        assert!(warnings(&edge).is_empty(), "{:?}", warnings(&edge));
    }
}
