//! Seek time as a function of the distance in cylinders.
//!
//! A seek accelerates the arm, coasts, decelerates and settles: short seeks are dominated by
//! settling and grow like the square root of the distance, long ones grow linearly. Drives are
//! best described by a measured table (DiskSim's `.seek` files, extracted from the real drive),
//! interpolated linearly between points. When only datasheet figures are known (track-to-track,
//! average and full stroke), [`SeekCurve::fit`] builds the classic
//! `t(d) = a + b·sqrt(d-1) + c·(d-1)` curve through them, with the average taken over random
//! pairs of cylinders, as datasheets define it.

/// A seek curve. Times are in milliseconds (DiskSim's unit) and exclude head switch and write
/// settling, which the mechanical model adds.
#[derive(Clone, Debug, PartialEq)]
pub enum SeekCurve {
    /// Measured `(distance, ms)` points, strictly increasing distances starting at 1.
    /// Between points: linear interpolation; past the last: linear extrapolation from the
    /// last two (both as DiskSim's `extracted` seek type does).
    Table(Vec<(u32, f64)>),
    /// `t(d) = a + b·sqrt(d-1) + c·(d-1)` for d >= 1.
    Fitted { a: f64, b: f64, c: f64 },
}

impl SeekCurve {
    /// Seek time in ms for a distance of `d` cylinders (0 for d = 0).
    #[inline]
    pub fn time_ms(&self, d: u32) -> f64 {
        if d == 0 {
            return 0.0;
        }
        match self {
            SeekCurve::Table(pts) => table_ms(pts, d),
            SeekCurve::Fitted { a, b, c } => {
                let x = (d - 1) as f64;
                a + b * x.sqrt() + c * x
            }
        }
    }

    /// Fits `a + b·sqrt(d-1) + c·(d-1)` through a single-cylinder time, a full-stroke time
    /// (at `cyls - 1`) and an average over uniformly random pairs of cylinders.
    pub fn fit(single_ms: f64, avg_ms: f64, full_ms: f64, cyls: u32) -> SeekCurve {
        let n = cyls.max(3) as f64;
        // Distances of random pairs have density 2(n-d)/n^2; the average of a seek curve over
        // them is what datasheets call the average seek. Integrate numerically.
        let steps = 4096usize;
        let (mut es, mut el, mut w) = (0.0, 0.0, 0.0);
        for i in 0..steps {
            let d = 1.0 + (n - 2.0) * (i as f64 + 0.5) / steps as f64;
            let dens = n - d;
            es += dens * (d - 1.0).sqrt();
            el += dens * (d - 1.0);
            w += dens;
        }
        let (es, el) = (es / w, el / w);
        let (fs, fl) = ((n - 2.0).sqrt(), n - 2.0);
        // Solve b·es + c·el = avg - a ; b·fs + c·fl = full - a.
        let (ra, rf) = (avg_ms - single_ms, full_ms - single_ms);
        let det = es * fl - el * fs;
        let b = (ra * fl - el * rf) / det;
        let c = (es * rf - ra * fs) / det;
        SeekCurve::Fitted { a: single_ms, b, c }
    }
}

/// [`SeekCurve::Table`] at `d >= 1`. Apart from [`SeekCurve::time_ms`], so that the fitted
/// curve's few instructions inline into the positioning code that asks for every candidate.
fn table_ms(pts: &[(u32, f64)], d: u32) -> f64 {
    let i = pts.partition_point(|p| p.0 < d);
    if i < pts.len() && pts[i].0 == d {
        return pts[i].1;
    }
    if pts.len() == 1 {
        return pts[0].1;
    }
    // Interpolate between i-1 and i; extrapolate with the last two past the end, and
    // before the first point with the first two.
    let (lo, hi) = if i == 0 {
        (0, 1)
    } else if i >= pts.len() {
        (pts.len() - 2, pts.len() - 1)
    } else {
        (i - 1, i)
    };
    let (d1, t1) = (pts[lo].0 as f64, pts[lo].1);
    let (d2, t2) = (pts[hi].0 as f64, pts[hi].1);
    (t1 + (d as f64 - d1) * (t2 - t1) / (d2 - d1)).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_interpolates_and_extrapolates() {
        let s = SeekCurve::Table(vec![(1, 1.0), (10, 2.0), (20, 4.0)]);
        assert_eq!(s.time_ms(0), 0.0);
        assert_eq!(s.time_ms(10), 2.0);
        assert!((s.time_ms(15) - 3.0).abs() < 1e-12);
        assert!((s.time_ms(30) - 6.0).abs() < 1e-12);
    }

    #[test]
    fn fit_meets_its_three_figures() {
        let cyls = 17_000;
        let s = SeekCurve::fit(2.2, 9.0, 15.5, cyls);
        assert!((s.time_ms(1) - 2.2).abs() < 1e-9);
        assert!((s.time_ms(cyls - 1) - 15.5).abs() < 1e-6);
        // Average over random pairs.
        let mut sum = 0.0;
        let mut n = 0.0;
        let mut x = 12345u64;
        for _ in 0..200_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let a = ((x >> 33) % cyls as u64) as i64;
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let b = ((x >> 33) % cyls as u64) as i64;
            sum += s.time_ms((a - b).unsigned_abs() as u32);
            n += 1.0;
        }
        let avg = sum / n;
        assert!((avg - 9.0).abs() < 0.1, "average {avg}");
    }
}
