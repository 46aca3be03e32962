//! Memory nice values, their weights, and the three priority classes (thesis sections 4.4,
//! 5.1.2 and 5.1.3).
//!
//! A process's memory nice value says how much memory is worth to it relative to others. The
//! thesis maps nice values in [-20, +19] exponentially onto weights in [2^(-S/2), 2^(S/2)] with
//! a scaling constant S = 30 (not the severity): weight = 2^(nice * S / 40). A niced-down
//! process (positive nice, weight above 1) is told a severity divided by its weight, so it
//! sees more pressure and adapts sooner (section 4.4); and the kernel multiplies its pages'
//! ages by the same weight, so it is paged sooner if it does not cooperate (section 5.1.2).
//!
//! Because the replacement model's age bins double from one to the next, multiplying ages by
//! a weight W is the same as attaching the process's bins log2(W) chains further along
//! ([`MemNice::shift`]); with B = 10 bins, processes whose shifts differ by B or more have
//! disjoint age ranges and never compete: the S/B = 3 priority classes of section 5.1.3.

use serde::{Deserialize, Serialize};

/// The thesis's scaling constant S (section 5.1.2): nice +19 multiplies ages by about 2^15.
pub const NICE_SCALE: f64 = 30.0;
/// The number of age bins per process, B (section 5.1.1).
pub const BINS: u32 = 10;
/// The nice range, as for CPU nice.
pub const NICE_MIN: i32 = -20;
pub const NICE_MAX: i32 = 19;

/// A memory nice value, held as the base-2 logarithm of its weight so that a scenario can
/// also give a weight directly (the equilibrium experiment's eta = 5).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemNice {
    log2_weight: f64,
}

/// One of the S/B = 3 disjoint priority classes of section 5.1.3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PriorityClass {
    /// Nice at or below -40 B / S (about -13.3): never paged while a lower class has pages.
    High,
    Normal,
    /// Nice at or above +13.3: paged first, and cannot make a higher class adapt or page.
    Low,
}

impl PriorityClass {
    /// Low 0, Normal 1, High 2: a class is protected from every class of a smaller rank.
    pub fn rank(self) -> u8 {
        match self {
            PriorityClass::Low => 0,
            PriorityClass::Normal => 1,
            PriorityClass::High => 2,
        }
    }

    /// The class of a chain shift (a weight's log2, truncated): a whole bin set or more
    /// either way.
    pub fn of_shift(shift: i32) -> Self {
        let b = BINS as i32;
        match shift {
            s if s >= b => PriorityClass::Low,
            s if s <= -b => PriorityClass::High,
            _ => PriorityClass::Normal,
        }
    }
}

/// A nice value or weight outside the range the thesis defines.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum NiceError {
    #[error("memory nice {0} is outside {NICE_MIN}..={NICE_MAX}")]
    Nice(i64),
    #[error("memory weight {0} is outside 2^-15..=2^15 (a positive number)")]
    Weight(f64),
}

impl Default for MemNice {
    fn default() -> Self {
        Self { log2_weight: 0.0 }
    }
}

impl MemNice {
    /// Nice 0: weight 1, no shift, the normal class.
    pub const NORMAL: MemNice = MemNice { log2_weight: 0.0 };

    /// The memory nice value `nice`, in -20..=19.
    pub fn new(nice: i64) -> Result<Self, NiceError> {
        if !(NICE_MIN as i64..=NICE_MAX as i64).contains(&nice) {
            return Err(NiceError::Nice(nice));
        }
        Ok(Self {
            log2_weight: nice as f64 * NICE_SCALE / 40.0,
        })
    }

    /// A weight given directly (eta of section 4.5), in 2^-15..=2^15.
    pub fn from_weight(weight: f64) -> Result<Self, NiceError> {
        let limit = NICE_SCALE / 2.0;
        if !(weight.is_finite() && weight > 0.0) || weight.log2().abs() > limit + 1e-9 {
            return Err(NiceError::Weight(weight));
        }
        Ok(Self {
            log2_weight: weight.log2(),
        })
    }

    /// The nice value this weight corresponds to (not always an integer).
    pub fn nice(&self) -> f64 {
        self.log2_weight * 40.0 / NICE_SCALE
    }

    /// The weight W = 2^(nice * S / 40).
    pub fn weight(&self) -> f64 {
        self.log2_weight.exp2()
    }

    /// How many chains the process's bins are shifted: log2(W), truncated toward zero. The
    /// bins are powers of two apart, so the replacement applies the weight rounded toward 1 to
    /// a power of two; truncation (not rounding) keeps the class boundary where the thesis
    /// puts it: nice 13 (9.75) still overlaps the normal class by one bin, nice 14 (10.5) does
    /// not.
    pub fn shift(&self) -> i32 {
        self.log2_weight.trunc() as i32
    }

    /// The priority class: a shift of a whole bin set (B chains) or more either way.
    pub fn class(&self) -> PriorityClass {
        PriorityClass::of_shift(self.shift())
    }

    /// The severity this process is told: the system's severity divided by its weight, so a
    /// niced-down process sees more pressure (section 4.3, "Nicing").
    pub fn scaled_severity(&self, severity_s: f64) -> f64 {
        severity_s / self.weight()
    }

    /// The nice value given to pages this process unmaps and nobody else maps: one more than
    /// its own, as FreeBSD deactivates such pages (section 5.2). Saturates at +19.
    pub fn unmapped(&self) -> MemNice {
        let log2 = (self.log2_weight + NICE_SCALE / 40.0).min(NICE_MAX as f64 * NICE_SCALE / 40.0);
        MemNice {
            log2_weight: log2.max(self.log2_weight),
        }
    }
}

/// The nice a process is subject to: its own, when one was set for it, else its memory
/// cgroup's, else 0. A process's own value is the more specific statement (as a CPU nice set
/// on a process applies whatever its session's), and a group's nice covers every process
/// that runs in it, the way `antsched mem run --nice` gives it to a command and its children.
pub fn effective(process: Option<MemNice>, group: Option<MemNice>) -> MemNice {
    process.or(group).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Section 5.1.2: nice -20..19 onto 2^-15..2^15 (2^14.25 at +19), nice 0 is weight 1.
    #[test]
    fn section_5_1_2_weights_span_2_to_the_plus_minus_15() {
        assert_eq!(MemNice::new(0).unwrap().weight(), 1.0);
        assert_eq!(MemNice::new(-20).unwrap().weight(), 2f64.powi(-15));
        assert!((MemNice::new(19).unwrap().weight() - 2f64.powf(14.25)).abs() < 1e-6);
        assert_eq!(MemNice::new(4).unwrap().weight(), 8.0);
        assert!(MemNice::new(20).is_err());
        assert!(MemNice::new(-21).is_err());
        assert!(MemNice::from_weight(0.0).is_err());
        assert!(MemNice::from_weight(f64::NAN).is_err());
        assert!(MemNice::from_weight(2f64.powi(16)).is_err());
        assert_eq!(MemNice::from_weight(32.0).unwrap().shift(), 5);
    }

    /// Section 5.1.2: the shift is log2 of the weight, in chains.
    #[test]
    fn section_5_1_2_shift_is_log2_of_the_weight() {
        assert_eq!(MemNice::new(4).unwrap().shift(), 3);
        assert_eq!(MemNice::new(-4).unwrap().shift(), -3);
        assert_eq!(MemNice::new(8).unwrap().shift(), 6);
        assert_eq!(MemNice::from_weight(5.0).unwrap().shift(), 2);
    }

    /// Section 5.1.3: three classes, a boundary every 40 B / S = 13.3 nice values; +14 is
    /// just enough to move a process into the next class (section 6.3's niced hog).
    #[test]
    fn section_5_1_3_three_classes_with_boundaries_at_13_3() {
        let class = |n| MemNice::new(n).unwrap().class();
        assert_eq!(class(0), PriorityClass::Normal);
        assert_eq!(class(13), PriorityClass::Normal);
        assert_eq!(class(14), PriorityClass::Low);
        assert_eq!(class(19), PriorityClass::Low);
        assert_eq!(class(-13), PriorityClass::Normal);
        assert_eq!(class(-14), PriorityClass::High);
    }

    /// Section 4.3: the severity a niced-down process is told is divided by its weight.
    #[test]
    fn section_4_3_a_niced_process_sees_severity_divided_by_its_weight() {
        let n = MemNice::new(4).unwrap();
        assert_eq!(n.scaled_severity(3600.0), 450.0);
        let m = MemNice::new(-4).unwrap();
        assert_eq!(m.scaled_severity(450.0), 3600.0);
    }

    #[test]
    fn a_process_nice_overrides_its_group_nice() {
        let p = MemNice::new(-5).unwrap();
        let g = MemNice::new(10).unwrap();
        assert_eq!(effective(Some(p), Some(g)), p);
        assert_eq!(effective(None, Some(g)), g);
        assert_eq!(effective(None, None), MemNice::NORMAL);
    }

    /// Section 5.2: unmapped pages take the unmapper's nice + 1, never past +19.
    #[test]
    fn section_5_2_unmapped_pages_are_niced_one_further() {
        assert!((MemNice::new(0).unwrap().unmapped().nice() - 1.0).abs() < 1e-9);
        assert!((MemNice::new(19).unwrap().unmapped().nice() - 19.0).abs() < 1e-9);
    }
}
