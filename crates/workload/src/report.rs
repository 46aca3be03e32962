//! What a run reports, in the JSON shape docs/architecture.md fixes (`runs[]` entries): other tools read
//! these keys, so they are never renamed.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// One run: one workload under one scheduler on one device.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunReport {
    pub scheduler: String,
    pub disk: String,
    pub seed: u64,
    /// Length of the measured run, in seconds of (virtual or real) time.
    pub duration_s: f64,
    /// Bytes the applications transferred.
    pub bytes: u64,
    /// Application bytes per second, in MB/s (10^6 bytes).
    pub throughput_mb_s: f64,
    /// Fraction of the run the device spent servicing requests (the paper's "disk
    /// utilization", section 4: deliberate idling lowers it).
    pub utilization: f64,
    pub contexts: Vec<ContextReport>,
    pub anticipation: AnticipationReport,
    /// Present for simulations.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sim: Option<SimSpeed>,
}

/// One issuer (a job clone; a chain of short-lived contexts counts as one), or the
/// write-back daemon.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ContextReport {
    pub name: String,
    pub class: String,
    /// Application bytes (for the write-back daemon: bytes written to the disk).
    pub bytes: u64,
    /// Application I/Os completed.
    pub ios: u64,
    pub throughput_mb_s: f64,
    /// Its fraction of the device's service time: the share proportional-share schedulers
    /// divide (the paper's contracts are in disk utilization, section 4.7).
    pub share: f64,
    /// Its fraction of the bytes transferred.
    pub byte_share: f64,
    /// Latency of its application I/Os, issue to completion.
    pub latency_ms: Latency,
    /// How long its oldest I/O still unfinished when the run ended had waited, ms (0 with
    /// none): a request a scheduler starves never completes, so `latency_ms` cannot show it.
    /// `None` where the driver does not track it (the runtime and the mount).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stalled_ms: Option<f64>,
}

impl ContextReport {
    /// The longest any of its I/Os waited: completed ones' worst latency, or the age of one
    /// still unfinished at the end.
    pub fn worst_wait_ms(&self) -> f64 {
        self.latency_ms.max.max(self.stalled_ms.unwrap_or(0.0))
    }
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Latency {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl Latency {
    /// From a histogram of microseconds.
    pub fn from_us(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        Self {
            p50: h.value_at_quantile(0.5) as f64 / 1e3,
            p99: h.value_at_quantile(0.99) as f64 / 1e3,
            max: h.max() as f64 / 1e3,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct AnticipationReport {
    pub waits: u64,
    pub hits: u64,
    pub timeouts: u64,
    /// Total time the scheduler kept the disk idle on purpose, in ms.
    pub waited_ms: f64,
}

impl From<antsched_core::AnticipationStats> for AnticipationReport {
    fn from(a: antsched_core::AnticipationStats) -> Self {
        Self {
            waits: a.waits,
            hits: a.hits,
            timeouts: a.timeouts,
            waited_ms: a.waited as f64 / 1e6,
        }
    }
}

/// How fast the simulator ran, and what the device was asked for.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct SimSpeed {
    /// Disk requests simulated.
    pub requests: u64,
    /// Bytes the disk requests asked for, and bytes the device completed. Equal when a run
    /// ends with nothing in flight.
    pub bytes_requested: u64,
    pub bytes_served: u64,
    pub wall_s: f64,
    pub requests_per_s: f64,
}

/// The longest latency recorded, in microseconds (1000 s); longer ones count as this.
pub const LATENCY_MAX_US: u64 = 1_000_000_000;

/// Latencies below this many samples are kept as they are; past it, in a histogram.
const EXACT_SAMPLES: usize = 512;

/// One context's latencies, in microseconds, with memory in proportion to what it did.
///
/// A histogram of 1 us to 1000 s at 3 significant digits holds 170 KB of counters, and the
/// simulator keeps one per context: a job of 65,536 contexts took 11 GB before it ran
/// (issue 17). Most contexts of such jobs do a handful of I/Os. So the first 512
/// (`EXACT_SAMPLES`) latencies are kept as samples (their percentiles are then exact), and
/// only a context that does more gets a histogram, grown to the largest latency it records.
#[derive(Clone, Debug, Default)]
pub struct LatencyRecorder {
    samples: Vec<u32>,
    histogram: Option<Histogram<u64>>,
}

impl LatencyRecorder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one latency, clamped to 1 us ..= [`LATENCY_MAX_US`].
    pub fn record(&mut self, us: u64) {
        let us = us.clamp(1, LATENCY_MAX_US);
        if let Some(h) = &mut self.histogram {
            // Growing to LATENCY_MAX_US always succeeds; nothing else can fail for us >= 1.
            let _ = h.record(us);
        } else if self.samples.len() < EXACT_SAMPLES {
            // LATENCY_MAX_US fits in u32.
            self.samples.push(us as u32);
        } else {
            let mut h = Histogram::new(3).expect("valid histogram precision");
            for &s in self.samples.iter().chain(std::iter::once(&(us as u32))) {
                let _ = h.record(u64::from(s));
            }
            self.samples = Vec::new();
            self.histogram = Some(h);
        }
    }

    /// How many latencies were recorded.
    pub fn len(&self) -> u64 {
        self.histogram
            .as_ref()
            .map_or(self.samples.len() as u64, |h| h.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The p50, p99 and maximum in milliseconds.
    pub fn summary(&self) -> Latency {
        if let Some(h) = &self.histogram {
            return Latency::from_us(h);
        }
        if self.samples.is_empty() {
            return Latency::default();
        }
        let mut v = self.samples.clone();
        v.sort_unstable();
        // The nearest rank: the smallest sample with at least q of them at or below it, as
        // the histogram's value_at_quantile answers.
        let at = |q: f64| {
            let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
            f64::from(v[rank - 1]) / 1e3
        };
        Latency {
            p50: at(0.5),
            p99: at(0.99),
            max: f64::from(v[v.len() - 1]) / 1e3,
        }
    }
}

#[cfg(test)]
mod latency_tests {
    use super::*;

    #[test]
    fn few_latencies_give_exact_nearest_rank_percentiles() {
        let mut r = LatencyRecorder::new();
        assert_eq!(r.summary(), Latency::default());
        for us in [4000, 1000, 3000, 2000] {
            r.record(us);
        }
        let l = r.summary();
        assert_eq!((l.p50, l.p99, l.max), (2.0, 4.0, 4.0));
        assert_eq!(r.len(), 4);
    }

    #[test]
    fn many_latencies_move_to_a_histogram_that_agrees_with_the_samples() {
        let mut r = LatencyRecorder::new();
        let mut h = Histogram::<u64>::new(3).unwrap();
        for i in 1..=EXACT_SAMPLES as u64 {
            r.record(i * 100);
            h.record(i * 100).unwrap();
        }
        assert!(
            r.histogram.is_none(),
            "still exact at {EXACT_SAMPLES} samples"
        );
        // Exact and histogram answers agree to three significant digits.
        let (a, b) = (r.summary(), Latency::from_us(&h));
        for (x, y) in [(a.p50, b.p50), (a.p99, b.p99), (a.max, b.max)] {
            assert!((x - y).abs() <= x * 1e-3, "{x} vs {y}");
        }
        r.record(77);
        h.record(77).unwrap();
        assert!(r.histogram.is_some() && r.samples.is_empty());
        assert_eq!(r.len(), EXACT_SAMPLES as u64 + 1);
        assert_eq!(r.summary(), Latency::from_us(&h), "every sample moved over");
    }

    #[test]
    fn latencies_are_clamped_to_the_recorded_range() {
        let mut r = LatencyRecorder::new();
        r.record(0);
        r.record(u64::MAX);
        let l = r.summary();
        assert_eq!(l.p50, 0.001);
        assert_eq!(l.max, LATENCY_MAX_US as f64 / 1e3);
    }
}
