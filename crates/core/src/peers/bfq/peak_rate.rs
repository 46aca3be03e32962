//! BFQ's estimate of the device's peak rate, from which it sizes the largest budget when
//! `max_budget` is 0 (auto): the sectors the device moves in `timeout_sync` at its peak
//! (`bfq_update_peak_rate`, `bfq_update_rate_reset`, `bfq_calc_max_budget`).
//!
//! Dispatches are sampled over intervals of at least 300 ms (target 1 s). An interval's rate
//! is total sectors over its duration; it is discarded if the interval was mostly random
//! I/O and below the current estimate, or faster than 20 sectors/us (impossible, a glitch).
//! Otherwise it enters a low-pass filter whose weight grows with the interval's length and
//! its fraction of sequential samples, up to 8/10.

use crate::request::{Nanos, MS, US};

/// Rates are sectors per microsecond, left-shifted by this (`BFQ_RATE_SHIFT`).
pub const RATE_SHIFT: u32 = 16;
/// `BFQ_RATE_MIN_SAMPLES`.
const MIN_SAMPLES: u64 = 32;
/// `BFQ_RATE_MIN_INTERVAL`.
const MIN_INTERVAL: Nanos = 300 * MS;
/// `BFQ_RATE_REF_INTERVAL`.
const REF_INTERVAL: Nanos = 1_000 * MS;
/// `ref_rate[0]`: the reference peak rate of a rotational disk, (sectors/us) << 16.
pub const REF_RATE_ROTATIONAL: u64 = 14_000;

/// One dispatch as the estimator sees it.
pub struct Dispatch {
    pub now: Nanos,
    pub sectors: u64,
    /// Requests in the device before this one.
    pub in_driver: usize,
    /// It is far from the end of the previous dispatch (`BFQ_RQ_SEEKY`).
    pub seeky: bool,
}

#[derive(Clone, Debug)]
pub struct PeakRate {
    /// (sectors/us) << 16.
    pub peak_rate: u64,
    samples: u64,
    sequential_samples: u64,
    tot_sectors: u64,
    pub last_rq_max_size: u64,
    first_dispatch: Nanos,
    last_dispatch: Nanos,
    delta_from_first: Nanos,
    pub last_completion: Nanos,
}

impl Default for PeakRate {
    fn default() -> Self {
        Self {
            // A rotational device starts at 2/3 of the reference rate.
            peak_rate: REF_RATE_ROTATIONAL * 2 / 3,
            samples: 0,
            sequential_samples: 0,
            tot_sectors: 0,
            last_rq_max_size: 0,
            first_dispatch: 0,
            last_dispatch: 0,
            delta_from_first: 0,
            last_completion: 0,
        }
    }
}

impl PeakRate {
    /// `bfq_calc_max_budget`: sectors moved in `timeout` at the peak rate.
    pub fn max_budget(&self, timeout: Nanos) -> u64 {
        // Saturating: an hour's timeout at a fast device's rate is near 2^64 before the shift.
        self.peak_rate
            .saturating_mul(1_000)
            .saturating_mul(timeout / MS)
            >> RATE_SHIFT
    }

    /// `bfq_reset_rate_computation`.
    fn reset(&mut self, d: Option<&Dispatch>) {
        match d {
            Some(d) => {
                self.last_dispatch = d.now;
                self.first_dispatch = d.now;
                self.samples = 1;
                self.sequential_samples = 0;
                self.tot_sectors = d.sectors;
                self.last_rq_max_size = d.sectors;
            }
            None => self.samples = 0,
        }
    }

    /// `bfq_update_rate_reset`: close the interval; returns whether the estimate changed.
    pub fn update_rate_reset(&mut self, d: Option<&Dispatch>) -> bool {
        let mut changed = false;
        if self.samples >= MIN_SAMPLES && self.delta_from_first >= MIN_INTERVAL {
            self.delta_from_first = self
                .delta_from_first
                .max(self.last_completion.saturating_sub(self.first_dispatch));
            let us = (self.delta_from_first / US).max(1);
            let rate = (self.tot_sectors << RATE_SHIFT) / us;
            let mostly_random = self.sequential_samples < (3 * self.samples) / 4;
            if !((mostly_random && rate <= self.peak_rate) || rate > 20 << RATE_SHIFT) {
                // Weight of the new sample: up to 8/10 for a long, sequential interval.
                let weight = (9 * self.sequential_samples) / self.samples;
                let weight = (weight * self.delta_from_first / REF_INTERVAL).min(8);
                let divisor = 10 - weight;
                self.peak_rate = self.peak_rate * (divisor - 1) / divisor + rate / divisor;
                self.peak_rate = self.peak_rate.max(1);
                changed = true;
            }
        }
        self.reset(d);
        changed
    }

    /// `bfq_update_peak_rate`, on every dispatch; returns whether the estimate changed.
    pub fn dispatched(&mut self, d: &Dispatch) -> bool {
        if self.samples == 0 {
            self.reset(Some(d));
            self.last_dispatch = d.now;
            return false;
        }
        // A long pause with the device empty: close the interval.
        if d.now.saturating_sub(self.last_dispatch) > 100 * MS && d.in_driver == 0 {
            let changed = self.update_rate_reset(Some(d));
            self.last_dispatch = d.now;
            return changed;
        }
        self.samples += 1;
        if (d.in_driver > 0 || d.now.saturating_sub(self.last_completion) < 2 * MS) && !d.seeky {
            self.sequential_samples += 1;
        }
        self.tot_sectors += d.sectors;
        if self.samples % 32 != 0 {
            self.last_rq_max_size = self.last_rq_max_size.max(d.sectors);
        } else {
            self.last_rq_max_size = d.sectors;
        }
        self.delta_from_first = d.now.saturating_sub(self.first_dispatch);
        let changed = if self.delta_from_first < REF_INTERVAL {
            false
        } else {
            self.update_rate_reset(Some(d))
        };
        self.last_dispatch = d.now;
        changed
    }

    /// On a completion: if the device has been moving less than 1 sector per ms for the last
    /// 2 ms or more, the interval is over (`bfq_completed_request`).
    pub fn completed(&mut self, now: Nanos) -> bool {
        let delta_us = now.saturating_sub(self.last_completion) / US;
        let changed = delta_us > 2_000
            && (self.last_rq_max_size << RATE_SHIFT) / delta_us < 1 << (RATE_SHIFT - 10)
            && self.update_rate_reset(None);
        self.last_completion = now;
        changed
    }
}
