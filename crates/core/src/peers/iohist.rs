//! Per-context think-time and seek-distance means in the kernel's fixed point, shared by AS,
//! CFQ and BFQ (`as_update_thinktime`, `as_update_seekdist`, `cfq_update_io_thinktime`,
//! `cfq_update_io_seektime`, `bfq_update_io_thinktime`).
//!
//! Each sample enters with weight 1/8 and the past decays by 7/8. `samples` is the decayed
//! count in fixed point (1.0 = 256): it climbs 32, 60, 84, ... towards 256, so "has at
//! least N samples" reads as a threshold on it (CFQ and BFQ trust a mean once `samples > 80`,
//! after four requests: [`sample_valid`]). Integer division truncates as in the kernel.
//! Think times are kept in nanoseconds where the kernel kept jiffies: at HZ = 1000 one jiffy
//! is a millisecond, and the comparisons the schedulers make (mean think time against
//! `antic_expire` or `slice_idle`) are then the same up to the kernel's truncation to whole
//! milliseconds.

use crate::request::Nanos;

/// Fixed-point one.
pub const ONE: u64 = 256;

/// Seven eighths of `x` plus one eighth of `sample` (both in fixed point).
fn decay(x: u64, sample: u64) -> u64 {
    (7 * x + sample) / 8
}

/// Whether a decayed sample count is worth trusting (`sample_valid`: more than 80, that is
/// more than three samples).
pub fn sample_valid(samples: u64) -> bool {
    samples > 80
}

/// A decayed mean think time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThinkTime {
    pub samples: u64,
    total: u64,
    /// Mean think time.
    pub mean: Nanos,
}

impl ThinkTime {
    pub fn record(&mut self, think: Nanos) {
        self.samples = decay(self.samples, ONE);
        self.total = decay(self.total, ONE.saturating_mul(think));
        self.mean = (self.total + ONE / 2) / self.samples;
    }
}

/// A decayed mean seek distance in sectors, with the kernel's clamp of outliers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeekDistance {
    pub samples: u64,
    total: u64,
    /// Mean seek distance in sectors.
    pub mean: u64,
}

impl SeekDistance {
    /// Records the distance from the end of the context's previous request to the start of
    /// this one. "Don't allow the seek distance to get too large from the odd fragment,
    /// pagein, etc": a sample is clamped to four times the mean plus 1 GiB (2M sectors) for
    /// the first three samples, plus 64 MiB after that.
    pub fn record(&mut self, distance: u64) {
        let slack = if self.samples <= 60 {
            2 * 1024 * 1024
        } else {
            2 * 1024 * 64
        };
        let distance = distance.min(self.mean.saturating_mul(4).saturating_add(slack));
        self.samples = decay(self.samples, ONE);
        self.total = decay(self.total, ONE.saturating_mul(distance));
        self.mean = (self.total + self.samples / 2) / self.samples;
    }
}

/// The distance between two sector positions.
pub fn distance(a: u64, b: u64) -> u64 {
    a.abs_diff(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::MS;

    #[test]
    fn samples_climb_as_in_the_kernel() {
        let mut t = ThinkTime::default();
        let mut seen = vec![];
        for _ in 0..4 {
            t.record(MS);
            seen.push(t.samples);
        }
        assert_eq!(seen, vec![32, 60, 84, 105]);
        assert!(!sample_valid(60) && sample_valid(84));
        // The truncated sample count biases the mean up a little, as in the kernel.
        assert_eq!(t.mean, 1_008_929);
    }

    #[test]
    fn a_seek_outlier_is_clamped() {
        let mut s = SeekDistance::default();
        for _ in 0..10 {
            s.record(8);
        }
        let before = s.mean;
        s.record(1 << 40);
        // Clamped to 4 * 8 + 128 Ki sectors before it is averaged in.
        let clamp = 4 * before + 2 * 1024 * 64;
        assert!(s.mean > before && s.mean < clamp / 4, "{}", s.mean);
    }
}
