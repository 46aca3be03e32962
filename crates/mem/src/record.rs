//! The severity record: what every channel carries (the shared page, the wake-up, SIGMEM's
//! payload, `antsched mem status`, the simulator's time series). Its keys are fixed by
//! docs/architecture.md and never renamed.

use antsched_core::Nanos;
use serde::{Deserialize, Serialize};

use crate::cost::PagingCost;
use crate::nice::MemNice;
use crate::severity::{SeverityConfig, Tier};

/// The record's layout version; bumped when a key changes meaning.
pub const RECORD_VERSION: u32 = 1;

/// How the candidate age was obtained (the daemon reports it, never mixing them silently).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Estimator {
    /// From the age bins of the replacement model (the simulator; memory antsched manages).
    Exact,
    /// LRU size over the rate the kernel reclaims pages.
    Turnover,
    /// MGLRU generation ages.
    Mglru,
    /// A DAMON monitor of antsched's own.
    Damon,
}

/// One observation of a domain, as a subscriber sees it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeverityRecord {
    pub version: u32,
    /// S as this subscriber sees it (divided by its weight).
    pub severity_s: f64,
    /// S_paging, unscaled.
    pub candidate_age_s: f64,
    pub free_bytes: u64,
    pub tau_bytes: u64,
    /// Eq. 4.2 at this subscriber's severity.
    pub paging_cost: f64,
    pub disk_service_ms: f64,
    pub disk_queue: f64,
    pub tier: Tier,
    pub estimator: Estimator,
    /// When, in ns of the driver's clock.
    pub time: Nanos,
}

/// What a driver observed of a domain at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observation {
    pub free_bytes: u64,
    pub total_bytes: u64,
    pub candidate_age_s: f64,
    pub paging: PagingCost,
    pub estimator: Estimator,
    pub time: Nanos,
}

impl SeverityRecord {
    /// The record a subscriber with memory nice `nice` is given for `obs`.
    pub fn new(config: &SeverityConfig, obs: &Observation, nice: MemNice) -> Self {
        let tau = config.tau(obs.total_bytes);
        let system = config.severity(obs.free_bytes, tau, obs.candidate_age_s);
        let seen = nice.scaled_severity(system);
        Self {
            version: RECORD_VERSION,
            severity_s: seen,
            candidate_age_s: obs.candidate_age_s,
            free_bytes: obs.free_bytes,
            tau_bytes: tau,
            paging_cost: obs.paging.amortized(seen),
            disk_service_ms: obs.paging.disk_service_s * 1e3,
            disk_queue: obs.paging.disk_queue,
            tier: config.tier(obs.free_bytes, tau, system),
            estimator: obs.estimator,
            time: obs.time,
        }
    }

    /// This record (made for nice 0, as a driver publishes a domain's) as a subscriber of
    /// nice `nice` sees it: S divided by its weight and the paging cost at that S (section
    /// 4.3, "Nicing"); the candidate age, free memory, tau and the tier are the domain's and
    /// stay. A driver keeps one record per domain and derives each subscriber's from it, so
    /// that a nice set after a process subscribed applies from the next record on.
    pub fn seen_with(&self, nice: MemNice) -> Self {
        let seen = nice.scaled_severity(self.severity_s);
        let paging = PagingCost {
            disk_service_s: self.disk_service_ms / 1e3,
            disk_queue: self.disk_queue,
        };
        Self {
            severity_s: seen,
            paging_cost: paging.amortized(seen),
            ..*self
        }
    }
}

/// The record's keys, as every channel and `antsched mem status --json` spell them (docs/architecture.md).
pub const KEYS: [&str; 11] = [
    "version",
    "severity_s",
    "candidate_age_s",
    "free_bytes",
    "tau_bytes",
    "paging_cost",
    "disk_service_ms",
    "disk_queue",
    "tier",
    "estimator",
    "time",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_carries_the_design_keys_and_the_scaled_severity() {
        let obs = Observation {
            free_bytes: 0,
            total_bytes: 256 << 20,
            candidate_age_s: 512.0,
            paging: PagingCost {
                disk_service_s: 0.01,
                disk_queue: 2.0,
            },
            estimator: Estimator::Exact,
            time: 7,
        };
        let r = SeverityRecord::new(&SeverityConfig::default(), &obs, MemNice::new(4).unwrap());
        assert_eq!(r.severity_s, 64.0);
        assert_eq!(r.tier, Tier::Paging);
        let json = serde_json::to_value(r).unwrap();
        for key in KEYS {
            assert!(json.get(key).is_some(), "{key}");
        }
        assert_eq!(json["tier"], "paging");
    }

    /// The record a niced subscriber is given is the nice-0 record with S divided by the
    /// weight: the same as making it for that nice directly.
    #[test]
    fn seen_with_a_nice_is_the_record_made_for_that_nice() {
        let obs = Observation {
            free_bytes: 10 << 20,
            total_bytes: 256 << 20,
            candidate_age_s: 80.0,
            paging: PagingCost {
                disk_service_s: 0.004,
                disk_queue: 1.5,
            },
            estimator: Estimator::Turnover,
            time: 9,
        };
        let config = SeverityConfig::default();
        let base = SeverityRecord::new(&config, &obs, MemNice::NORMAL);
        for n in [-20, -4, 0, 10, 19] {
            let nice = MemNice::new(n).unwrap();
            let direct = SeverityRecord::new(&config, &obs, nice);
            let derived = base.seen_with(nice);
            assert_eq!(derived.tier, direct.tier, "{n}");
            assert!(
                (derived.severity_s / direct.severity_s - 1.0).abs() < 1e-12,
                "{n}"
            );
            assert!(
                (derived.paging_cost / direct.paging_cost - 1.0).abs() < 1e-9,
                "{n}"
            );
            assert_eq!(derived.free_bytes, base.free_bytes);
        }
    }
}
