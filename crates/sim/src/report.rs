//! What a run reports, in the JSON shape DESIGN.md fixes (`runs[]` entries): other tools read
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

/// A histogram of latencies in microseconds, 1 us to 1000 s, 3 significant digits.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 1_000_000_000, 3).expect("valid histogram bounds")
}
