//! A lower bound on what reaching a request costs a drive, by its LBN distance from the head:
//! what lets SPTF stop looking once no request farther out could beat the best it has found.
//!
//! SPTF with the exact estimator asks the device model about every pending request: among
//! hundreds (an open-loop trace, a server's clients) that is hundreds of walks through the
//! mechanism per decision, where the seek estimator's decision looks at a few. Most of those
//! requests are far away, and a far request cannot be cheap: in LBN order a drive fills its
//! cylinders one after another (zones, surfaces and spare sectors only change how many LBNs a
//! cylinder holds), so a request `d` sectors from the head lies at least `d / S - 1`
//! cylinders from it, with `S` the most LBNs any cylinder holds, and reaching it costs at
//! least the command overhead plus the seek over those cylinders (the rotation and the head
//! switch only add). The exceptions are the requests the drive's cache may serve at the price
//! of a command wherever they lie: the [`PositioningFloor::cached`] ranges, which the walk
//! asks about first.

use std::sync::Arc;

use crate::Nanos;

/// A lower bound on [`crate::DeviceModel::media_positioning_time`] at one instant, from one
/// head, for every request that does not start in a [`cached`](Self::cached) range.
#[derive(Clone, Debug)]
pub struct PositioningFloor {
    /// Sector ranges `[start, end)` the cache may serve a request starting in (its segments
    /// and the read-ahead's reach): the bound does not hold there.
    pub cached: Vec<(u64, u64)>,
    /// The least command overhead of a media access, read or write, ms.
    pub(crate) overhead_ms: f64,
    /// The most LBNs a cylinder holds.
    pub(crate) sectors_per_cylinder: u64,
    /// How many cylinders the arm may start from away from the head's cylinder: the read-ahead
    /// carries it on past the last request.
    pub(crate) arm_offset: u64,
    /// The least seek time over `k` cylinders or more, ms ([`seek_floor`]).
    pub(crate) seek_floor: Arc<[f64]>,
}

/// Taken off every bound: the model's clock is milliseconds in `f64`, and a request's
/// positioning is a difference of two absolute times, which may round below the sum of its
/// parts by a few units in the last place.
const ROUNDING: Nanos = 1_000;

impl PositioningFloor {
    /// The bound for a request whose first sector lies `distance` sectors or more from the head
    /// (outside [`cached`](Self::cached)); non-decreasing in `distance`.
    pub fn at(&self, distance: u64) -> Nanos {
        // The LBNs from the head to the request fill at least this many cylinders beyond the
        // head's: `distance` sectors, at most `S` to a cylinder.
        let cylinders = distance
            .div_ceil(self.sectors_per_cylinder)
            .saturating_sub(1);
        let gap = cylinders.saturating_sub(self.arm_offset);
        let last = self.seek_floor.len() - 1;
        let seek = self.seek_floor[(gap.min(last as u64)) as usize];
        let ms = self.overhead_ms + seek;
        if ms <= 0.0 {
            return 0;
        }
        ((ms * 1e6) as Nanos).saturating_sub(ROUNDING)
    }
}

/// `floor[k]`: the least of `seek(j)` over `j >= k` (`k` up to `cylinders`), where `seek` is
/// what the model charges to move the arm `j` cylinders, read or write. A measured seek table
/// need not be monotone, so the floor is the suffix minimum, not the curve.
pub(crate) fn seek_floor(cylinders: u32, seek: impl Fn(u32) -> f64) -> Arc<[f64]> {
    let mut floor: Vec<f64> = (0..=cylinders).map(seek).collect();
    for k in (0..floor.len().saturating_sub(1)).rev() {
        floor[k] = floor[k].min(floor[k + 1]);
    }
    floor.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_is_the_suffix_minimum_and_grows_with_distance() {
        let floor = seek_floor(4, |j| [0.0, 3.0, 2.0, 5.0, 4.0][j as usize]);
        assert_eq!(&floor[..], &[0.0, 2.0, 2.0, 4.0, 4.0]);
        let f = PositioningFloor {
            cached: Vec::new(),
            overhead_ms: 0.5,
            sectors_per_cylinder: 100,
            arm_offset: 1,
            seek_floor: floor,
        };
        // Up to two cylinders' worth of LBNs may still share the arm's cylinder (one for the
        // head's own, one for the arm's offset): overhead alone.
        assert_eq!(f.at(0), 500_000 - ROUNDING);
        assert_eq!(f.at(200), 500_000 - ROUNDING);
        assert_eq!(f.at(201), 2_500_000 - ROUNDING);
        assert_eq!(f.at(401), 4_500_000 - ROUNDING);
        assert_eq!(f.at(u64::MAX), 4_500_000 - ROUNDING);
        let mut last = 0;
        for d in (0..1_000).step_by(7) {
            assert!(f.at(d) >= last);
            last = f.at(d);
        }
    }
}
