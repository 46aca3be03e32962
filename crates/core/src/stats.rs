//! Per-context statistics the anticipation heuristics learn from (section 3.3 of the paper,
//! appendix II of the thesis).
//!
//! Two kinds of estimate are kept for each context:
//! - a decayed **think-time histogram**, read at its median (the expected think time, the
//!   "cost" side of the SPTF heuristic) and its 95th percentile (how long to wait);
//! - decayed **averages** of the positioning time its requests cost when served, of the seek
//!   distance between its consecutive requests, and of the fraction of forward seeks (used by
//!   C-LOOK).
//!
//! Both forget fast on purpose: assumption #2 of the paper (section 3.1) is only that a
//! context's locality and think time change *slowly*, so the estimates must track them.

use crate::request::{Nanos, US};

/// Shape of the think-time histogram and decay of the averages. The defaults are the paper's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StatsConfig {
    /// Width of one histogram bucket (500 us).
    pub bucket: Nanos,
    /// Number of buckets (30); think times are capped at `bucket * buckets` (15 ms).
    pub buckets: usize,
    /// Every bucket is multiplied by this on each new sample (0.9).
    pub think_decay: f64,
    /// `x = decay * x + (1 - decay) * sample` for the averages (0.74: forgets 95% in 10 samples).
    pub average_decay: f64,
}

impl Default for StatsConfig {
    fn default() -> Self {
        Self {
            bucket: 500 * US,
            buckets: 30,
            think_decay: 0.9,
            average_decay: 0.74,
        }
    }
}

impl StatsConfig {
    /// The longest think time the histogram distinguishes (15 ms by default). Longer think
    /// times are recorded as this: the heuristics only care that they are long.
    pub fn think_cap(&self) -> Nanos {
        self.bucket.saturating_mul(self.buckets as Nanos)
    }
}

/// A decayed frequency table of think times.
///
/// Decaying every bucket on every sample costs a pass over the table per request. Instead the
/// table keeps `raw` counts and one `weight`: a bucket's decayed count is `raw * weight`. A
/// sample multiplies `weight` by the decay and adds `1 / weight` to its bucket, which is the
/// same arithmetic without the pass. Quantiles only need ratios, so they read `raw` directly.
#[derive(Clone, Debug)]
pub struct ThinkTimeHistogram {
    raw: Vec<f64>,
    total: f64,
    weight: f64,
    samples: u64,
}

impl ThinkTimeHistogram {
    pub fn new(cfg: &StatsConfig) -> Self {
        Self {
            raw: vec![0.0; cfg.buckets],
            total: 0.0,
            weight: 1.0,
            samples: 0,
        }
    }

    /// Records one think time: decay every bucket, then count the sample.
    pub fn record(&mut self, think: Nanos, cfg: &StatsConfig) {
        self.weight *= cfg.think_decay;
        if self.weight < 1e-150 || !self.weight.is_normal() {
            // Fold the weight into the counts before it underflows (every few thousand
            // samples with the default decay), and drop what has decayed to nothing.
            let w = self.weight;
            for c in &mut self.raw {
                *c *= w;
            }
            self.total = self.raw.iter().sum();
            self.weight = 1.0;
        }
        let i = ((think / cfg.bucket) as usize).min(cfg.buckets - 1);
        let add = 1.0 / self.weight;
        self.raw[i] += add;
        self.total += add;
        self.samples += 1;
    }

    /// Samples recorded so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// No think time to go on: none recorded, or all decayed to nothing. The quantiles are
    /// then `None`.
    pub fn is_empty(&self) -> bool {
        self.samples == 0 || self.total <= 0.0
    }

    /// The think time below which a fraction `q` of the decayed mass lies, interpolated
    /// linearly inside the bucket where it falls. `None` before the first sample.
    pub fn quantile(&self, q: f64, cfg: &StatsConfig) -> Option<Nanos> {
        if self.is_empty() {
            return None;
        }
        let target = q.clamp(0.0, 1.0) * self.total;
        let mut below = 0.0;
        for (i, &c) in self.raw.iter().enumerate() {
            if c > 0.0 && below + c >= target {
                let within = ((target - below) / c).clamp(0.0, 1.0);
                let t = (i as f64 + within) * cfg.bucket as f64;
                return Some(t.round() as Nanos);
            }
            below += c;
        }
        Some(cfg.think_cap())
    }

    /// The expected think time: the median (section 3.3).
    pub fn median(&self, cfg: &StatsConfig) -> Option<Nanos> {
        self.quantile(0.5, cfg)
    }

    /// Whether the median is below `limit` (`self.median(cfg).is_some_and(|m| m < limit)`),
    /// without the interpolation's division and rounding unless `limit` falls inside the
    /// median's bucket: the anticipation core asks at every completion with chains on.
    pub fn median_is_below(&self, limit: Nanos, cfg: &StatsConfig) -> bool {
        if self.is_empty() {
            return false;
        }
        let target = 0.5 * self.total;
        let mut below = 0.0;
        for (i, &c) in self.raw.iter().enumerate() {
            if c > 0.0 && below + c >= target {
                // The median, rounded, lies within this bucket's bounds.
                let low = (i as Nanos).saturating_mul(cfg.bucket);
                let high = low.saturating_add(cfg.bucket);
                if high < limit {
                    return true;
                }
                if low >= limit {
                    return false;
                }
                return self.median(cfg).is_some_and(|m| m < limit);
            }
            below += c;
        }
        cfg.think_cap() < limit
    }

    /// The think time within which a request arrives with 95% probability: how long to wait.
    pub fn p95(&self, cfg: &StatsConfig) -> Option<Nanos> {
        self.quantile(0.95, cfg)
    }

    /// The median and the 95th percentile together, in one pass over the buckets (the SPTF
    /// and proportional rules need both at every evaluation).
    pub fn median_and_p95(&self, cfg: &StatsConfig) -> Option<(Nanos, Nanos)> {
        if self.is_empty() {
            return None;
        }
        let targets = [0.5 * self.total, 0.95 * self.total];
        let mut out = [cfg.think_cap(); 2];
        let mut k = 0;
        let mut below = 0.0;
        for (i, &c) in self.raw.iter().enumerate() {
            while k < 2 && c > 0.0 && below + c >= targets[k] {
                let within = ((targets[k] - below) / c).clamp(0.0, 1.0);
                out[k] = ((i as f64 + within) * cfg.bucket as f64).round() as Nanos;
                k += 1;
            }
            if k == 2 {
                break;
            }
            below += c;
        }
        Some((out[0], out[1]))
    }
}

/// `x = d * x + (1 - d) * sample`, started at the first sample (or at a prior).
#[derive(Clone, Copy, Debug, Default)]
pub struct DecayedAverage {
    value: Option<f64>,
}

impl DecayedAverage {
    /// An average that starts at `prior` rather than at its first sample.
    pub fn starting_at(prior: f64) -> Self {
        Self { value: Some(prior) }
    }

    pub fn record(&mut self, sample: f64, decay: f64) {
        self.value = Some(match self.value {
            None => sample,
            Some(x) => decay * x + (1.0 - decay) * sample,
        });
    }

    pub fn get(&self) -> Option<f64> {
        self.value
    }
}

/// Everything the heuristics know about one context's behaviour.
#[derive(Clone, Debug)]
pub struct ContextStats {
    pub think: ThinkTimeHistogram,
    /// Expected positioning time of the context's requests as they were served, in ns.
    pub positioning: DecayedAverage,
    /// Expected seek distance between the context's consecutive requests, in sectors.
    pub seek_distance: DecayedAverage,
    /// Probability that the context's next request lies at or beyond its previous one.
    pub forward: DecayedAverage,
}

impl ContextStats {
    pub fn new(cfg: &StatsConfig) -> Self {
        Self {
            think: ThinkTimeHistogram::new(cfg),
            // Locality starts at zero, as the zero-initialized per-process state of the
            // thesis's implementation did (appendix II): a new context is presumed to read
            // where it last read until its requests show otherwise. Starting from the first
            // sample instead would condemn a context whose first request happened to follow a
            // switch (an aging override, say) to look seek-bound, never be waited for, and so
            // never show its locality.
            positioning: DecayedAverage::starting_at(0.0),
            seek_distance: DecayedAverage::starting_at(0.0),
            forward: DecayedAverage::default(),
        }
    }

    /// Records a new request's placement relative to the context's previous one.
    pub fn record_seek(&mut self, from_end: u64, to: u64, cfg: &StatsConfig) {
        let d = cfg.average_decay;
        self.seek_distance.record(from_end.abs_diff(to) as f64, d);
        self.forward
            .record(if to >= from_end { 1.0 } else { 0.0 }, d);
    }
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::request::MS;

    #[test]
    fn histogram_has_thirty_buckets_of_500us_capped_at_15ms() {
        let cfg = StatsConfig::default();
        assert_eq!(cfg.think_cap(), 15 * MS);
        let mut h = ThinkTimeHistogram::new(&cfg);
        h.record(100 * MS, &cfg);
        // A think time beyond the cap lands in the last bucket.
        assert!(h.median(&cfg).unwrap() >= 14_500 * US);
        assert!(h.p95(&cfg).unwrap() <= 15 * MS);
    }

    #[test]
    fn histogram_decays_old_samples_by_0_9_per_request() {
        let cfg = StatsConfig::default();
        let mut h = ThinkTimeHistogram::new(&cfg);
        for _ in 0..50 {
            h.record(10 * MS, &cfg);
        }
        for _ in 0..10 {
            h.record(200 * US, &cfg);
        }
        // After ten new samples the old mass is 0.9^10 = 35% of its value, the new mass is
        // 1 - 0.9^10 = 65% of a full column: the median has moved to the new think time.
        assert!(h.median(&cfg).unwrap() < 500 * US);
        // But the 95th percentile still sees the old behaviour.
        assert!(h.p95(&cfg).unwrap() >= 10 * MS);
    }

    #[test]
    fn median_and_p95_in_one_pass_agree_with_each_quantile() {
        let cfg = StatsConfig::default();
        let mut h = ThinkTimeHistogram::new(&cfg);
        assert_eq!(h.median_and_p95(&cfg), None);
        for t in [100, 900, 2_300, 14_000, 40_000, 600, 7_000] {
            h.record(t * US, &cfg);
            assert_eq!(
                h.median_and_p95(&cfg),
                Some((h.median(&cfg).unwrap(), h.p95(&cfg).unwrap()))
            );
        }
    }

    #[test]
    fn median_is_below_agrees_with_the_median() {
        let cfg = StatsConfig::default();
        let mut h = ThinkTimeHistogram::new(&cfg);
        let limits = [
            0,
            1,
            250 * US,
            499_999,
            500 * US,
            1250 * US,
            7_500 * US,
            20 * MS,
        ];
        for limit in limits {
            assert!(!h.median_is_below(limit, &cfg), "empty, {limit}");
        }
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..2_000 {
            h.record(rng.random_range(0..16 * MS), &cfg);
            let median = h.median(&cfg).unwrap();
            for limit in limits
                .into_iter()
                .chain([median, median + 1, median.saturating_sub(1)])
            {
                assert_eq!(
                    h.median_is_below(limit, &cfg),
                    median < limit,
                    "median {median}, limit {limit}"
                );
            }
        }
    }

    #[test]
    fn median_and_p95_interpolate_within_a_bucket() {
        let cfg = StatsConfig::default();
        let mut h = ThinkTimeHistogram::new(&cfg);
        h.record(1200 * US, &cfg); // bucket [1000, 1500)
        assert_eq!(h.median(&cfg), Some(1250 * US));
        assert_eq!(h.p95(&cfg), Some(1475 * US));
    }

    #[test]
    fn lazy_decay_matches_decaying_every_bucket() {
        // The reference: multiply every bucket by 0.9 on each sample, as the paper says.
        let cfg = StatsConfig::default();
        let mut h = ThinkTimeHistogram::new(&cfg);
        let mut eager = [0.0f64; 30];
        let mut x: u64 = 12345;
        for n in 0..10_000u64 {
            // Think times drift over the run, so old samples matter and the weight folds
            // several times (every few thousand samples).
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let think = (x >> 33) % (2 * MS + n * 1_000);
            h.record(think, &cfg);
            for c in &mut eager {
                *c *= 0.9;
            }
            eager[((think / cfg.bucket) as usize).min(29)] += 1.0;
            if n % 97 == 0 {
                let total: f64 = eager.iter().sum();
                for q in [0.5, 0.95] {
                    let mut below = 0.0;
                    let mut want = 0.0;
                    for (i, &c) in eager.iter().enumerate() {
                        if c > 0.0 && below + c >= q * total {
                            want = (i as f64 + ((q * total - below) / c).clamp(0.0, 1.0)) * 500e3;
                            break;
                        }
                        below += c;
                    }
                    let got = h.quantile(q, &cfg).unwrap() as f64;
                    assert!(
                        (got - want).abs() <= 1.0,
                        "sample {n}, q {q}: {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn decayed_average_forgets_95_percent_in_ten_samples() {
        let mut a = DecayedAverage::default();
        a.record(100.0, 0.74);
        for _ in 0..10 {
            a.record(0.0, 0.74);
        }
        let left = a.get().unwrap();
        assert!(left < 5.0 && left > 4.0, "{left}");
    }
}
