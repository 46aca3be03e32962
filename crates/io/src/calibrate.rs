//! Calibration: positioning time against LBN distance, measured from user level as the
//! paper's installation-time program did (section 3.6), on a real file or device or on an
//! emulated disk in real time.
//!
//! The reads follow an [`antsched_disk::curve::CalibrationPlan`]: 4 KiB reads at log-spaced
//! LBN distances (10 per factor of ten, 40 of each by default), in random order so the head
//! roams the disk, each after a random pause of up to 12 ms so the platter's phase is random
//! and each distance's samples carry the average rotational wait. The simulator's
//! `estimator=calibrated` runs the very same plan on the model in virtual time
//! (`antsched_sim::device::calibrate`), so the two curves differ only by real-time jitter.
//!
//! A read's latency is positioning plus transfer. The transfer is estimated first, from the
//! slope of latency against length for sequential reads the drive can serve from its
//! read-ahead (a 4 KiB and a 32 KiB read right behind a read and a pause, at a few places),
//! and subtracted from every sample. The
//! curve is then fitted with [`fit_within`]: per distance bin, the time that most samples are
//! within 20% of.
//!
//! ## On a busy machine
//!
//! Every time is taken by the runtime's event loop, and a machine busy with other work can keep
//! the loop (and the thread issuing the reads) from running when a read completes, which
//! lengthens that sample. The plan is therefore measured in `repeats` independent passes (3 by
//! default; each with its own places, order and pauses), each pass fitted on its own, and the
//! curve kept is, at every distance, the median of the passes' curves
//! ([`antsched_disk::curve::median_curve`]); the transfer time is the median over every pass's
//! sequential reads. The result carries its [`Quality`](antsched_disk::curve::Quality): the passes' spread, the fraction of
//! distances where they agree within 20% (the confidence), how late the measuring thread woke
//! for its reads, and warnings when the machine was too noisy or the passes disagree.
//!
//! ## How good can such a curve be?
//!
//! The paper reports "an accuracy of about 75%". We define accuracy as the fraction of the
//! positioning times a scheduler actually compares for which the curve is within 20% of the
//! exact (model) time; the test set is every question the scheduler asks on the paper's three
//! two-reader workloads ([`antsched_sim::device::decision_samples`]). On the Deskstar 34GXP
//! model most of those questions are about the other reader's file, a gigabyte away, whose
//! exact time spreads over a whole revolution (3.9 to 13.3 ms) with the platter's phase. No
//! function of distance alone can be within 20% of most of them: the best any curve could do,
//! fitted on the test set itself, is reported beside the measured accuracy
//! ([`antsched_sim::device::best_possible_accuracy`]).

use antsched_core::Nanos;
use antsched_disk::curve::{
    disturbed, fit_within, median, median_curve, warnings, CalibrationPlan, FittedCurve, SplitMix,
};
use antsched_sim::device::CALIBRATION;

use crate::buf::IoBuf;
use crate::error::IoError;
use crate::runtime::{Ctx, Runtime};

/// What to measure.
#[derive(Clone, Debug)]
pub struct CalibrateOptions {
    /// Read size in sectors.
    pub sectors: u32,
    /// Distances per factor of ten.
    pub per_decade: u32,
    /// Reads per distance.
    pub pairs: u32,
    /// Longest random pause between reads.
    pub max_pause: Nanos,
    pub seed: u64,
    /// Independent passes of the plan (pass `k` uses seed `seed + k`); the curve is their
    /// median at each distance.
    pub repeats: u32,
}

/// How many times a disturbed read is measured again before its last measurement is kept.
pub const MAX_REMEASURE: u32 = 3;

/// Default [`CalibrateOptions::repeats`]: three passes, so that one disturbed pass cannot move
/// the median.
pub const DEFAULT_REPEATS: u32 = 3;

impl Default for CalibrateOptions {
    /// The simulator's settings ([`CALIBRATION`]).
    fn default() -> Self {
        Self {
            sectors: CALIBRATION.sectors,
            per_decade: CALIBRATION.per_decade,
            pairs: CALIBRATION.pairs,
            max_pause: CALIBRATION.max_pause,
            seed: CALIBRATION.seed,
            repeats: DEFAULT_REPEATS,
        }
    }
}

/// What a calibration measured.
#[derive(Clone, Debug)]
pub struct Calibration {
    /// The median of the passes' curves, its [`Quality`](antsched_disk::curve::Quality) in
    /// `calibration`.
    pub curve: FittedCurve,
    /// Each pass's own curve.
    pub passes: Vec<FittedCurve>,
    /// (LBN distance, positioning µs) of every read of every pass, transfer subtracted.
    pub samples: Vec<(u64, f64)>,
    /// The transfer time of one read, as estimated and subtracted, in µs.
    pub transfer_us: f64,
    /// Seconds the measurement took.
    pub wall_s: f64,
}

/// Why a calibration failed.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    #[error("the device holds {sectors} sectors; calibration needs at least {needed} ({} KiB)", needed / 2)]
    TooSmall { sectors: u64, needed: u64 },
    #[error("a calibration read failed: {0}")]
    Io(#[from] IoError),
    #[error("the measurements cannot be fitted: {0}")]
    Fit(#[from] antsched_disk::curve::FitError),
}

/// Latency of one read of `sectors` at `sector`, issued now: (issued, completed).
/// Reads `sectors` at `sector` and returns when the device got the read and when it finished,
/// on the runtime's clock: the device's time alone, without the hand-offs between this thread
/// and the event loop (tens of microseconds, which the scheduler never sees either); and how
/// late the runtime completed it where it can tell ([`Done::late`](crate::Done)).
fn timed_read(rt: &Runtime, sector: u64, sectors: u32) -> Result<(Nanos, Nanos, Nanos), IoError> {
    let ctx = Ctx::new(0, 0);
    let d = rt
        .submit(
            ctx,
            antsched_core::Op::Read,
            sector,
            IoBuf::zeroed(sectors as usize * 512),
            true,
            false,
        )
        .wait()?;
    Ok((d.dispatched_at, d.completed_at, d.late))
}

/// Measures the device behind `rt` (a runtime whose scheduler passes requests straight
/// through, such as `noop`: one request at a time is in flight here anyway). `progress` is
/// called with (reads done, reads planned).
pub fn measure(
    rt: &Runtime,
    opts: &CalibrateOptions,
    progress: &dyn Fn(u64, u64),
) -> Result<Calibration, CalibrateError> {
    let cap = rt.capacity_sectors();
    let big: u32 = 1024;
    let needed = u64::from(big) * 4;
    if cap < needed {
        return Err(CalibrateError::TooSmall {
            sectors: cap,
            needed,
        });
    }
    let clock = rt.clock();
    let start = clock.now();
    // Transfer: the slope of latency against length, for reads the drive can serve from its
    // read-ahead (each follows a read and a pause in which the drive reads on). That is the
    // interface's rate: subtracting it makes a cache hit's sample its command overhead, as
    // the model counts it, and leaves a miss's sample too long only by the difference
    // between media and interface rates over one short read (about 0.1 ms for 4 KiB on a
    // 2001 disk, against the milliseconds of a miss). A device without read-ahead serves
    // these from the media, and the slope is the media rate.
    let mut rng = SplitMix::new(opts.seed ^ 0x7a5f);
    let mut slopes = Vec::new();
    let n = opts.sectors.max(1);
    let second = (8 * n).min(big);
    let repeats = opts.repeats.max(1);
    for _ in 0..7 * repeats {
        let at = rng.below(cap - u64::from(big) - 2 * u64::from(n) - 1);
        let (_, t, _) = timed_read(rt, at, n)?;
        clock.sleep_until(t + 15_000_000, 200_000);
        let (a0, a1, _) = timed_read(rt, at + u64::from(n), n)?;
        let (b0, b1, _) = timed_read(rt, at + 2 * u64::from(n), second)?;
        let small = (a1 - a0) as f64;
        let large = (b1 - b0) as f64;
        slopes.push(((large - small) / f64::from(second - n)).max(0.0));
    }
    let per_sector_ns = median(&mut slopes);
    let transfer_ns = per_sector_ns * f64::from(n);

    let plans: Vec<CalibrationPlan> = (0..repeats)
        .map(|k| {
            CalibrationPlan::new(
                cap,
                n,
                opts.per_decade,
                opts.pairs,
                opts.max_pause,
                opts.seed.wrapping_add(u64::from(k)),
            )
        })
        .collect();
    let total: u64 = plans.iter().map(|p| p.reads.len() as u64).sum();
    let mut done = 0u64;
    let mut samples = Vec::with_capacity(total as usize);
    let mut passes = Vec::with_capacity(plans.len());
    // How late the measuring thread got to each read after its pause, in µs.
    let mut wake_late = Vec::with_capacity(total as usize);
    // Reads measured again because the first measurement was disturbed, and samples kept
    // although every attempt was.
    let (mut remeasured, mut kept_disturbed) = (0u64, 0u64);
    let mut disturbed_first = 0u64;
    for plan in &plans {
        let (_, mut last, _) = timed_read(rt, plan.first, n)?;
        let mut prev = plan.first;
        let mut pass = Vec::with_capacity(plan.reads.len());
        for &(lbn, d, pause) in &plan.reads {
            let mut attempt = 0;
            let sample = loop {
                if attempt > 0 {
                    // Put the head back where the read starts from: the previous read again.
                    let (_, t, _) = timed_read(rt, prev, n)?;
                    last = t;
                }
                let due = last + pause;
                clock.sleep_until(due, 200_000);
                let woke = clock.now().saturating_sub(due) as f64 / 1e3;
                let (t0, t1, late) = timed_read(rt, lbn, n)?;
                last = t1;
                let disturbed = disturbed(woke, late as f64 / 1e3);
                if attempt == 0 {
                    wake_late.push(woke);
                    disturbed_first += u64::from(disturbed);
                }
                let t = ((t1 - t0) as f64 - transfer_ns).max(0.0) / 1e3;
                if !disturbed {
                    break t;
                }
                if attempt == MAX_REMEASURE {
                    kept_disturbed += 1;
                    break t;
                }
                attempt += 1;
                remeasured += 1;
            };
            pass.push((d, sample));
            prev = lbn;
            if done % 64 == 0 {
                progress(done, total);
            }
            done += 1;
        }
        passes.push(fit_within(&pass, 0.2, None)?);
        samples.extend(pass);
    }
    progress(total, total);
    let (mut curve, mut quality) = median_curve(&passes)?;
    quality.late_fraction = disturbed_first as f64 / total.max(1) as f64;
    quality.remeasured = remeasured;
    quality.disturbed_fraction = kept_disturbed as f64 / total.max(1) as f64;
    wake_late.sort_by(f64::total_cmp);
    quality.wake_late_p50_us = median(&mut wake_late);
    quality.wake_late_p99_us = wake_late
        .get((wake_late.len() * 99 / 100).min(wake_late.len().saturating_sub(1)))
        .copied()
        .unwrap_or(0.0);
    quality.warnings = warnings(&quality);
    curve.calibration = Some(quality);
    Ok(Calibration {
        curve,
        passes,
        samples,
        transfer_us: transfer_ns / 1e3,
        wall_s: (clock.now() - start) as f64 / 1e9,
    })
}
