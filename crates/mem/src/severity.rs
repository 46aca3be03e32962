//! The severity metric (thesis section 4.2) and the amortized paging cost (Eq. 4.2).

use serde::{Deserialize, Serialize};

/// The system parameters of section 4.2.1. Every one is a tunable; the defaults are the
/// thesis's.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeverityConfig {
    /// No pressure: the severity reported while free memory is at or above tau. 1 hour.
    pub s_max: f64,
    /// The smallest age the replacement model resolves, the width of its first bin. 5 s.
    pub s_min: f64,
    /// tau as a fraction of the domain's memory. 10%.
    pub tau_fraction: f64,
}

/// Where on the severity curve the domain is; the record's `tier` (section 4.7's four tiers
/// as the system sees them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
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
