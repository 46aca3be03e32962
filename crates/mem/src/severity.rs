//! The severity metric (thesis section 4.2) and the system's paging cost (Eq. 4.2).
//!
//! The severity S is a time: the age of the page the system would evict next (the candidate
//! age, S_paging). Smaller means more pressure. While free memory is plentiful there is no
//! pressure and S is S_max; once free memory is exhausted S is the candidate age; in between,
//! while free memory falls from tau to zero, S falls *geometrically* from S_max to S_paging
//! (Eq. 4.1). The geometric ramp turns a linear fall of free memory into an exponential fall of
//! S, which staggers applications' reactions: the cheap ones (a malloc pool, a cache's oldest
//! entries) fire first and may make the expensive ones (a full collection) unnecessary, and a
//! slow one such as a collection gets time to run before paging starts (section 4.2).

use serde::{Deserialize, Serialize};

/// The system parameters of section 4.2.1. Every one is a tunable; the defaults are the
/// thesis's.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SeverityConfig {
    /// No pressure: the severity reported while free memory is at or above tau. 1 hour.
    pub s_max: f64,
    /// The smallest age the replacement model resolves, the width of its first bin. 5 s.
    pub s_min: f64,
    /// tau as a fraction of the domain's memory. 10%: real applications rarely allocate more
    /// than that in the ~100 ms others need to react (section 5.3).
    pub tau_fraction: f64,
    /// Below this severity (while paging) the domain is thrashing: tier 4 of section 4.7,
    /// "S is a few seconds". 10 s, two bins' worth.
    pub thrashing_s: f64,
}

impl Default for SeverityConfig {
    fn default() -> Self {
        Self {
            s_max: 3600.0,
            s_min: 5.0,
            tau_fraction: 0.10,
            thrashing_s: 10.0,
        }
    }
}

/// A tunable outside what the model can mean.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error("{key} = {value}: {why}")]
    Invalid {
        key: &'static str,
        value: f64,
        why: &'static str,
    },
}

/// Where on the severity curve the domain is; the record's `tier` (section 4.7's four tiers
/// as the system sees them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Free memory at or above tau: S = S_max.
    Plenty,
    /// 0 < free < tau: S ramps geometrically from S_max toward the candidate age.
    Ramp,
    /// Free memory exhausted: S is the candidate age; the system may page.
    Paging,
    /// Paging with S of a few seconds: drastic measures (tier 4 of section 4.7).
    Thrashing,
}

impl SeverityConfig {
    /// Checks every tunable; the error names the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key, value, why| Err(ConfigError::Invalid { key, value, why });
        if !(self.s_min.is_finite() && self.s_min > 0.0) {
            return bad("s_min", self.s_min, "must be a positive number of seconds");
        }
        if !(self.s_max.is_finite() && self.s_max >= self.s_min) {
            return bad(
                "s_max",
                self.s_max,
                "must be a number of seconds at least s_min",
            );
        }
        if !(self.tau_fraction > 0.0 && self.tau_fraction < 1.0) {
            return bad("tau_fraction", self.tau_fraction, "must be between 0 and 1");
        }
        if !(self.thrashing_s.is_finite() && self.thrashing_s >= 0.0) {
            return bad(
                "thrashing_s",
                self.thrashing_s,
                "must be a number of seconds",
            );
        }
        Ok(())
    }

    /// tau for a domain of `total` bytes (or pages: the unit is the caller's).
    pub fn tau(&self, total: u64) -> u64 {
        (total as f64 * self.tau_fraction).round() as u64
    }

    /// Eq. 4.1: the severity from free memory, tau (same unit) and the candidate age.
    ///
    /// The candidate age is clamped to [S_min, S_max]: the replacement model cannot tell
    /// ages below its first bin apart, and a candidate older than S_max means no pressure.
    /// With that clamp S is monotone in both free memory and the candidate age.
    pub fn severity(&self, free: u64, tau: u64, candidate_age_s: f64) -> f64 {
        let paging = if candidate_age_s.is_nan() {
            self.s_max
        } else {
            candidate_age_s.clamp(self.s_min, self.s_max)
        };
        if free == 0 {
            // Case 1: the system may be paging; the price is the age of what it evicts.
            paging
        } else if free >= tau {
            // Case 3: plenty.
            self.s_max
        } else {
            // Case 2: S = S_paging * (S_max / S_paging)^(free / tau).
            let x = free as f64 / tau as f64;
            (paging * (self.s_max / paging).powf(x)).min(self.s_max)
        }
    }

    /// The tier a severity and free memory put the domain in.
    pub fn tier(&self, free: u64, tau: u64, severity_s: f64) -> Tier {
        if free >= tau && free > 0 {
            Tier::Plenty
        } else if free > 0 {
            Tier::Ramp
        } else if severity_s < self.thrashing_s {
            Tier::Thrashing
        } else {
            Tier::Paging
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const TAU: u64 = 1000;

    /// Eq. 4.1 at its three defining points: free 0 gives the candidate age, free tau gives
    /// S_max, and halfway the geometric mean of the two.
    #[test]
    fn section_4_2_eq_4_1_at_free_0_tau_half_and_tau() {
        let c = SeverityConfig::default();
        assert_eq!(c.severity(0, TAU, 512.0), 512.0);
        assert_eq!(c.severity(TAU, TAU, 512.0), 3600.0);
        assert_eq!(c.severity(10 * TAU, TAU, 512.0), 3600.0);
        let half = c.severity(TAU / 2, TAU, 512.0);
        assert!((half - (512.0f64 * 3600.0).sqrt()).abs() < 1e-9, "{half}");
        // A quarter of the way down free memory, a quarter of the way down log S.
        let q = c.severity(3 * TAU / 4, TAU, 512.0);
        assert!((q.ln() - (0.25 * 512f64.ln() + 0.75 * 3600f64.ln())).abs() < 1e-9);
    }

    /// Section 4.2: ages below S_min or above S_max are clamped.
    #[test]
    fn section_4_2_candidate_ages_are_clamped_to_the_resolvable_range() {
        let c = SeverityConfig::default();
        assert_eq!(c.severity(0, TAU, 0.1), 5.0);
        assert_eq!(c.severity(0, TAU, 1e9), 3600.0);
        assert_eq!(c.severity(0, TAU, f64::NAN), 3600.0);
    }

    #[test]
    fn section_4_7_tiers() {
        let c = SeverityConfig::default();
        assert_eq!(c.tier(TAU, TAU, 3600.0), Tier::Plenty);
        assert_eq!(c.tier(1, TAU, 3000.0), Tier::Ramp);
        assert_eq!(c.tier(0, TAU, 512.0), Tier::Paging);
        assert_eq!(c.tier(0, TAU, 5.0), Tier::Thrashing);
    }

    #[test]
    fn bad_tunables_are_named() {
        let c = SeverityConfig {
            s_min: 0.0,
            ..Default::default()
        };
        assert!(c.validate().unwrap_err().to_string().starts_with("s_min"));
        let c = SeverityConfig {
            tau_fraction: 1.5,
            ..Default::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .starts_with("tau_fraction"));
        assert!(SeverityConfig::default().validate().is_ok());
    }

    proptest! {
        /// S is monotone in free memory and in the candidate age.
        #[test]
        fn severity_is_monotone_in_free_memory_and_candidate_age(
            free in 0u64..2000, more in 0u64..500, age in 0.0f64..10_000.0, older in 0.0f64..5000.0
        ) {
            let c = SeverityConfig::default();
            let s = c.severity(free, TAU, age);
            prop_assert!(c.severity(free + more, TAU, age) >= s - 1e-9);
            prop_assert!(c.severity(free, TAU, age + older) >= s - 1e-9);
            prop_assert!((c.s_min..=c.s_max).contains(&s));
        }
    }
}
