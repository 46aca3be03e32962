//! Positioning-time curves: LBN distance to positioning time.
//!
//! The paper's implementation could not ask the drive where its head was, so it calibrated at
//! installation a curve from the LBN distance between two requests to the time the second one
//! costs (thesis section 3.6: "covers seek time, average rotational latency and track
//! buffering", about 75% accurate). The scheduler's calibrated estimator
//! (`antsched_core::PositioningCurve`) reads such a curve as JSON.
//!
//! * [`sample_model`] measures a device model the way the calibration measured a real disk:
//!   pairs of reads at log-spaced distances, the second issued right after the first completes.
//! * [`fit`] turns (distance, time) samples into a curve: medians in log-spaced distance bins
//!   (robust to the rotational scatter of single samples), made non-decreasing, joined
//!   piecewise-linearly.
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
    })
}

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

/// Measures a model as the paper's calibration measured a disk: for log-spaced distances
/// (1 sector to the whole disk, `per_decade` distances per factor of ten), `pairs` pairs of
/// `sectors`-sector reads at random places; the sample is the second read's positioning time.
/// The second read goes out a random 0 to 20 ms after the first completes: a user-level
/// program is not synchronized with the platter, so its curve "accounts for ... average
/// rotational latency" (paper, section 3.6), which is what a scheduler needs to compare
/// requests whose rotational phase it does not know. Returns (distance, µs) samples.
pub fn sample_model(
    model: &dyn DeviceModel,
    sectors: u32,
    per_decade: u32,
    pairs: u32,
    seed: u64,
) -> Vec<(u64, f64)> {
    let cap = model.capacity_sectors();
    let span = cap.saturating_sub(2 * sectors as u64 + 2).max(1);
    let mut rng = SplitMix::new(seed);
    let mut out = Vec::new();
    let mut distances = vec![0u64];
    let mut k = 0u32;
    loop {
        let d = 10f64.powf(k as f64 / per_decade.max(1) as f64).round() as u64;
        if d >= span {
            break;
        }
        if distances.last() != Some(&d) {
            distances.push(d);
        }
        k += 1;
    }
    for &d in &distances {
        for _ in 0..pairs {
            let mut m = model.clone_box();
            let room = span.saturating_sub(d).max(1);
            let first = rng.below(room);
            // Forward and backward seeks both occur; calibrate both, as the disk did.
            let (a, b) = if rng.next_u64() & 1 == 0 {
                (first, first + sectors as u64 + d)
            } else {
                (first + d, first)
            };
            let t0: Nanos = rng.below(100_000_000);
            let c = m.submit(&DiskRequest::read(a, sectors), t0);
            let issue = c.finish + rng.below(20_000_000);
            let p = m.positioning_time(&DiskRequest::read(b, sectors), issue);
            let dist = b.abs_diff(a + sectors as u64);
            out.push((dist, p as f64 / 1000.0));
        }
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
    fn fit_rejects_bad_samples() {
        assert_eq!(fit(&[], None), Err(FitError::Empty));
        assert!(matches!(
            fit(&[(1, f64::NAN)], None),
            Err(FitError::BadTime { .. })
        ));
    }
}
