//! The processes' reference streams: what each kind of process touches next, and what that
//! costs in CPU time. Deterministic for a seed.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Zipf-like ranks in `0..n` with exponent `alpha`, drawn in O(1) by inverting the continuous
/// density x^-alpha on [1, n + 1): rank r comes up about as often as 1 / (r + 1)^alpha. Exact
/// Zipf sampling needs a table or rejection; the model of section 4.5 (F(m) = Omega / m^alpha)
/// is itself continuous.
#[derive(Clone, Debug)]
pub struct Zipf {
    n: f64,
    alpha: f64,
    /// (n + 1)^(1 - alpha) - 1, or ln(n + 1) for alpha = 1.
    span: f64,
}

impl Zipf {
    pub fn new(n: u64, alpha: f64) -> Self {
        let n = n.max(1) as f64;
        let span = if (alpha - 1.0).abs() < 1e-9 {
            (n + 1.0).ln()
        } else {
            (n + 1.0).powf(1.0 - alpha) - 1.0
        };
        Self { n, alpha, span }
    }

    pub fn sample(&self, rng: &mut ChaCha8Rng) -> u64 {
        let u: f64 = rng.random();
        let x = if (self.alpha - 1.0).abs() < 1e-9 {
            (u * self.span).exp()
        } else {
            (1.0 + u * self.span).powf(1.0 / (1.0 - self.alpha))
        };
        ((x - 1.0).floor().clamp(0.0, self.n - 1.0)) as u64
    }
}

/// A seeded generator for process `index` of a run with `seed`.
pub fn rng_for(seed: u64, index: usize) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// A value log-uniform in [lo, hi], from a hash of `key` (so a query's cost and size are
/// properties of the query, the same every time it runs).
pub fn log_uniform(lo: f64, hi: f64, key: u64, salt: u64) -> f64 {
    if hi <= lo || lo <= 0.0 {
        return hi.max(lo);
    }
    let h = splitmix(key ^ salt.wrapping_mul(0xD6E8_FEB8_6659_FD93));
    let u = (h >> 11) as f64 / (1u64 << 53) as f64;
    lo * (hi / lo).powf(u)
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_ranks_fall_off_as_a_power_law() {
        let z = Zipf::new(1_000_000, 0.8);
        let mut rng = rng_for(1, 0);
        let (mut near, mut far) = (0u64, 0u64);
        for _ in 0..2_000_000 {
            let r = z.sample(&mut rng);
            assert!(r < 1_000_000);
            match r {
                10..=19 => near += 1,
                100..=199 => far += 1,
                _ => {}
            }
        }
        // Rank r comes up in proportion to about (r + 1)^-0.8.
        let w = |a: u64, b: u64| (a..=b).map(|r| ((r + 1) as f64).powf(-0.8)).sum::<f64>();
        let expected = w(100, 199) / w(10, 19);
        let measured = far as f64 / near as f64;
        assert!(
            (measured / expected - 1.0).abs() < 0.05,
            "{measured} against {expected}"
        );
    }

    #[test]
    fn log_uniform_stays_in_range_and_is_a_function_of_its_key() {
        for k in 0..1000 {
            let v = log_uniform(0.5, 10.0, k, 3);
            assert!((0.5..=10.0).contains(&v));
            assert_eq!(v, log_uniform(0.5, 10.0, k, 3));
        }
    }
}
