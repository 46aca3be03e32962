//! The processes' reference streams: what each kind of process touches next, and what that
//! costs in CPU time. Deterministic for a seed.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// How a cache's asks are spread over its distinct results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Popularity {
    /// Zipf's law as traces show it: rank r comes up about as often as (r + 1)^-alpha. A
    /// cache holding the M most popular results then has a hit rate below the power law
    /// M^(1 - alpha) by a constant (the head of the distribution: the sum over ranks is the
    /// integral less about -zeta(alpha)), which matters for a small cache.
    #[default]
    Zipf,
    /// Section 4.5.1's model itself: the M most popular of n results carry exactly
    /// (M / n)^(1 - alpha) of the asks, so such a cache's hit rate is H(M) = Omega M^(1 - alpha)
    /// / (1 - alpha) with nothing left out. The same tail as `Zipf`, a heavier head; only for
    /// alpha below 1, where the density x^-alpha is integrable at 0.
    PowerLaw,
}

/// Ranks in `0..n` with exponent `alpha`, drawn in O(1) by inverting the continuous density
/// x^-alpha on [origin, n + origin): with origin 1 rank r comes up about as often as
/// 1 / (r + 1)^alpha ([`Popularity::Zipf`]; exact Zipf sampling needs a table or rejection),
/// with origin 0 the ranks below M carry (M / n)^(1 - alpha) ([`Popularity::PowerLaw`]).
#[derive(Clone, Debug)]
pub struct Zipf {
    n: f64,
    alpha: f64,
    origin: f64,
    /// (n + origin)^(1 - alpha) - origin^(1 - alpha), or ln(n + 1) for alpha = 1.
    span: f64,
}

impl Zipf {
    /// Zipf's law over `n` ranks ([`Popularity::Zipf`]).
    pub fn new(n: u64, alpha: f64) -> Self {
        Self::with(n, alpha, Popularity::Zipf)
    }

    /// `popularity` over `n` ranks. A power law needs alpha below 1 (the scenario checks it);
    /// at 1 or above it falls back to Zipf's law.
    pub fn with(n: u64, alpha: f64, popularity: Popularity) -> Self {
        let n = n.max(1) as f64;
        let origin = match popularity {
            Popularity::PowerLaw if alpha < 1.0 => 0.0,
            _ => 1.0,
        };
        let span = if (alpha - 1.0).abs() < 1e-9 {
            (n + 1.0).ln()
        } else {
            (n + origin).powf(1.0 - alpha) - origin.powf(1.0 - alpha)
        };
        Self {
            n,
            alpha,
            origin,
            span,
        }
    }

    pub fn sample(&self, rng: &mut ChaCha8Rng) -> u64 {
        let u: f64 = rng.random();
        let x = if (self.alpha - 1.0).abs() < 1e-9 {
            (u * self.span).exp()
        } else {
            (self.origin.powf(1.0 - self.alpha) + u * self.span).powf(1.0 / (1.0 - self.alpha))
        };
        ((x - self.origin).floor().clamp(0.0, self.n - 1.0)) as u64
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

    /// Section 4.5.1: under the model's law the M most popular of n ranks carry
    /// (M / n)^(1 - alpha) of the asks, where Zipf's law gives them less for small M.
    #[test]
    fn section_4_5_1_the_power_law_gives_the_model_s_hit_rate() {
        let n = 1_000_000;
        let mut rng = rng_for(3, 0);
        for alpha in [0.7, 0.8] {
            let power = Zipf::with(n, alpha, Popularity::PowerLaw);
            let zipf = Zipf::new(n, alpha);
            let draws = 1_000_000;
            let below = |z: &Zipf, rng: &mut ChaCha8Rng, m: u64| {
                (0..draws).filter(|_| z.sample(rng) < m).count() as f64 / draws as f64
            };
            for m in [600, 20_000] {
                let model = (m as f64 / n as f64).powf(1.0 - alpha);
                let p = below(&power, &mut rng, m);
                assert!(
                    (p / model - 1.0).abs() < 0.02,
                    "alpha {alpha}, M {m}: {p} against {model}"
                );
                // Zipf's law falls short by the head, which matters for a small M.
                if m == 600 {
                    assert!(below(&zipf, &mut rng, m) < 0.9 * model);
                }
            }
        }
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
