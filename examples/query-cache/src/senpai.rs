//! A Senpai-style controller on the run's own memory group (Meta's Senpai, the anchors' note
//! section 1.1; the memory simulator's `senpai` baseline, `antsched_mem::sim`): every
//! interval it reads the group's memory stall (PSI `some total` of the cgroup2 twin that
//! `antsched mem run` makes beside the v1 group), and lowers the group's v1
//! `memory.limit_in_bytes` by a fraction of the current limit while the stall over the interval
//! is under a target, raising it by the same fraction when above; never below the workload's
//! floor, never above the limit the group had (the machine's size); the limit it found is
//! written back at the end.
//!
//! Without swap a lower limit can only make the kernel reclaim the group's *file* pages (the
//! database's), never the anonymous result cache: that is all Senpai can do on this machine,
//! and the program says so.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde::Serialize;

/// The memory simulator's Senpai constants (`crates/mem/src/sim/scenario.rs`:
/// `SENPAI_TARGET`, `SENPAI_STEP`, `SENPAI_INTERVAL`, private there; a test of this crate
/// parses a `senpai` scenario and checks that these are its defaults): the stall target as a
/// fraction of the interval (0.1%; Senpai's own is 10 ms per 6 s, 0.17%), the step as a
/// fraction of the current limit, and the interval.
pub const TARGET: f64 = 0.001;
pub const STEP: f64 = 0.01;
pub const INTERVAL_S: f64 = 6.0;
/// oomd's Senpai `limit_min` (100 MiB): the limit is never set under it.
pub const LIMIT_MIN: u64 = 100 << 20;
/// Room left above what the kernel cannot reclaim, so that a page fault of the database
/// always finds a file page to evict instead of meeting the OOM killer.
pub const HEADROOM: u64 = 4 << 20;

/// What the program prints and the JSON carries about the controller's reach.
pub const NO_SWAP_NOTE: &str =
    "without swap a lower limit can only reclaim the group's file pages \
    (the database's), never the anonymous result cache: that is all Senpai can do here";

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Stall target, a fraction of the interval.
    pub target: f64,
    /// Step, a fraction of the current limit.
    pub step: f64,
    pub interval: Duration,
    /// The lowest limit ever written.
    pub limit_min: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            target: TARGET,
            step: STEP,
            interval: Duration::from_secs_f64(INTERVAL_S),
            limit_min: LIMIT_MIN,
        }
    }
}

impl Params {
    /// The next limit: a step down while the stall is under the target, a step up otherwise,
    /// kept within [floor, ceiling] (the ceiling wins if the floor is above it).
    pub fn next_limit(&self, limit: u64, stall: f64, floor: u64, ceiling: u64) -> u64 {
        let l = limit as f64;
        let next = if stall < self.target {
            l * (1.0 - self.step)
        } else {
            l * (1.0 + self.step)
        };
        (next as u64).max(floor).min(ceiling)
    }

    /// The floor: what the kernel cannot reclaim from the group without swap (its usage minus
    /// its file pages: anonymous and kernel memory) plus [`HEADROOM`], and at least
    /// `limit_min`: oomd's "unreclaimable + min", where anonymous memory is unreclaimable
    /// because there is no swap.
    pub fn floor(&self, usage: u64, file_bytes: u64) -> u64 {
        (usage.saturating_sub(file_bytes) + HEADROOM).max(self.limit_min)
    }
}

/// `some total=` of a PSI file, microseconds stalled since boot (or the group's creation).
pub fn psi_some_total_us(text: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with("some "))?
        .split_whitespace()
        .find_map(|w| w.strip_prefix("total="))?
        .parse()
        .ok()
}

/// The group's file pages from its `memory.stat` (`total_inactive_file + total_active_file`,
/// the hierarchical counters; the local ones when those are missing).
pub fn file_bytes(stat: &str) -> Option<u64> {
    let get = |k: &str| -> Option<u64> {
        stat.lines()
            .find_map(|l| l.strip_prefix(k)?.strip_prefix(' ')?.trim().parse().ok())
    };
    match (get("total_inactive_file"), get("total_active_file")) {
        (Some(i), Some(a)) => Some(i + a),
        _ => Some(get("inactive_file")? + get("active_file")?),
    }
}

/// The files the controller reads and writes: a v1 memory group and its PSI file.
#[derive(Clone, Debug)]
pub struct Group {
    pub dir: PathBuf,
    pub pressure: PathBuf,
}

impl Group {
    fn read_u64(&self, name: &str) -> anyhow::Result<u64> {
        let p = self.dir.join(name);
        let text = std::fs::read_to_string(&p)
            .with_context(|| format!("senpai: cannot read {}", p.display()))?;
        text.trim()
            .parse()
            .with_context(|| format!("senpai: {}: not a number: {text:?}", p.display()))
    }

    pub fn limit(&self) -> anyhow::Result<u64> {
        self.read_u64("memory.limit_in_bytes")
    }

    pub fn usage(&self) -> anyhow::Result<u64> {
        self.read_u64("memory.usage_in_bytes")
    }

    pub fn file_bytes(&self) -> anyhow::Result<u64> {
        let p = self.dir.join("memory.stat");
        let text = std::fs::read_to_string(&p)
            .with_context(|| format!("senpai: cannot read {}", p.display()))?;
        file_bytes(&text).with_context(|| format!("senpai: {}: no file counters", p.display()))
    }

    pub fn stall_total_us(&self) -> anyhow::Result<u64> {
        let text = std::fs::read_to_string(&self.pressure)
            .with_context(|| format!("senpai: cannot read {}", self.pressure.display()))?;
        psi_some_total_us(&text).with_context(|| {
            format!(
                "senpai: {}: no `some ... total=` in {text:?}",
                self.pressure.display()
            )
        })
    }

    /// Writes the limit. Lowering it under the usage makes the v1 kernel reclaim at once; when
    /// it cannot reclaim enough it refuses with EBUSY, which is `Ok(false)`.
    pub fn set_limit(&self, bytes: u64) -> anyhow::Result<bool> {
        let p = self.dir.join("memory.limit_in_bytes");
        match std::fs::write(&p, bytes.to_string()) {
            Ok(()) => Ok(true),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Ok(false),
            Err(e) => {
                Err(e).with_context(|| format!("senpai: cannot write {bytes} to {}", p.display()))
            }
        }
    }
}

/// One step of the controller, for the timeline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// "senpai_lower", "senpai_raise", "senpai_hold" (at the floor or the ceiling already) or
    /// "senpai_refused" (the kernel could not reclaim down to it).
    pub event: &'static str,
    /// Stall over the interval, a fraction of it.
    pub stall: f64,
    /// The limit after the step.
    pub limit: u64,
    pub floor: u64,
}

/// What the controller did, the `senpai` object of the run's JSON.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    pub interval_s: f64,
    pub target: f64,
    pub step: f64,
    pub limit_min_mb: f64,
    /// The limit the group had (the machine's size), restored at the end.
    pub ceiling_mb: f64,
    /// The limit Senpai started from: the group's usage when it started.
    pub start_limit_mb: f64,
    pub min_limit_mb: f64,
    pub final_limit_mb: f64,
    pub mean_limit_mb: f64,
    pub lowered: u64,
    pub raised: u64,
    pub refused: u64,
    /// Steps that could not move (the floor or the ceiling).
    pub held: u64,
    /// Intervals whose stall was over the target.
    pub over_target: u64,
    pub intervals: u64,
    /// The group's stall over the controller's lifetime, ms.
    pub stall_ms: f64,
    pub restored: bool,
    pub note: &'static str,
}

/// Runs the controller until `stop`, then writes the original limit back. `on_step` sees every
/// step. Reads fail as errors that name the file; the limit is restored also then.
pub fn control(
    group: &Group,
    params: &Params,
    stop: &AtomicBool,
    mut on_step: impl FnMut(&Step),
) -> anyhow::Result<Summary> {
    if !(params.target.is_finite() && params.target >= 0.0) {
        bail!("senpai: target {}: must be 0 or more", params.target);
    }
    if !(params.step.is_finite() && params.step > 0.0 && params.step < 1.0) {
        bail!("senpai: step {}: must be between 0 and 1", params.step);
    }
    if params.interval.is_zero() {
        bail!("senpai: the interval must be more than 0");
    }
    let ceiling = group.limit()?;
    let mut s = Summary {
        interval_s: params.interval.as_secs_f64(),
        target: params.target,
        step: params.step,
        limit_min_mb: mb(params.limit_min),
        ceiling_mb: mb(ceiling),
        note: NO_SWAP_NOTE,
        ..Default::default()
    };
    let result = steps(group, params, stop, ceiling, &mut s, &mut on_step);
    // Restore what the group had, whatever happened.
    let restored = group.set_limit(ceiling);
    s.restored = matches!(restored, Ok(true));
    result?;
    restored?;
    Ok(s)
}

fn steps(
    group: &Group,
    params: &Params,
    stop: &AtomicBool,
    ceiling: u64,
    s: &mut Summary,
    on_step: &mut impl FnMut(&Step),
) -> anyhow::Result<()> {
    // Senpai starts from what the group uses (the simulator: from the resident pages).
    let mut limit = group.usage()?.min(ceiling);
    s.start_limit_mb = mb(limit);
    s.min_limit_mb = mb(limit);
    s.final_limit_mb = mb(limit);
    let first_total = group.stall_total_us()?;
    let mut last_total = first_total;
    let mut last_t = Instant::now();
    let mut limit_sum = 0.0;
    loop {
        // Sleep the interval in slices, so that the end of the run is seen within 100 ms.
        let due = last_t + params.interval;
        while Instant::now() < due {
            if stop.load(Ordering::Relaxed) {
                s.stall_ms = group.stall_total_us()?.saturating_sub(first_total) as f64 / 1e3;
                s.mean_limit_mb = if s.intervals > 0 {
                    limit_sum / s.intervals as f64
                } else {
                    mb(limit)
                };
                return Ok(());
            }
            std::thread::sleep((due - Instant::now()).min(Duration::from_millis(100)));
        }
        let total = group.stall_total_us()?;
        let now = Instant::now();
        let window_us = now.duration_since(last_t).as_secs_f64() * 1e6;
        let stall = total.saturating_sub(last_total) as f64 / window_us.max(1.0);
        (last_total, last_t) = (total, now);
        let floor = params.floor(group.usage()?, group.file_bytes()?);
        let next = params.next_limit(limit, stall, floor, ceiling);
        s.intervals += 1;
        if stall >= params.target {
            s.over_target += 1;
        }
        let event = if next == limit {
            s.held += 1;
            "senpai_hold"
        } else if group.set_limit(next)? {
            if next < limit {
                s.lowered += 1;
                "senpai_lower"
            } else {
                s.raised += 1;
                "senpai_raise"
            }
        } else {
            s.refused += 1;
            "senpai_refused"
        };
        if event != "senpai_refused" {
            limit = next;
        }
        limit_sum += mb(limit);
        s.min_limit_mb = s.min_limit_mb.min(mb(limit));
        s.final_limit_mb = mb(limit);
        on_step(&Step {
            event,
            stall,
            limit,
            floor,
        });
    }
}

fn mb(b: u64) -> f64 {
    b as f64 / 1048576.0
}

/// Checks the controller's options before anything runs.
pub fn params(interval_s: f64) -> anyhow::Result<Params> {
    if !(interval_s.is_finite() && interval_s >= 0.1) {
        bail!("--senpai-interval {interval_s}: must be 0.1 s or more");
    }
    Ok(Params {
        interval: Duration::from_secs_f64(interval_s),
        ..Params::default()
    })
}

/// The v1 group and its PSI twin, for a group directory.
pub fn group_of(dir: &Path) -> anyhow::Result<Group> {
    if !dir.join("memory.limit_in_bytes").is_file() {
        bail!(
            "senpai: {} is not a cgroup v1 memory group (no memory.limit_in_bytes)",
            dir.display()
        );
    }
    let pressure = antsched_memd::pressure_twin(dir).with_context(|| {
        format!(
            "senpai: {}: no cgroup2 twin with memory.pressure (antsched mem run makes one)",
            dir.display()
        )
    })?;
    Ok(Group {
        dir: dir.to_path_buf(),
        pressure,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_down_under_the_target_and_up_over_it_within_floor_and_ceiling() {
        let p = Params::default();
        let (floor, ceil) = (100 << 20, 256 << 20);
        assert_eq!(p.next_limit(200 << 20, 0.0, floor, ceil), 198 << 20);
        assert_eq!(
            p.next_limit(200 << 20, 0.01, floor, ceil),
            (200.0 * 1.01 * 1048576.0) as u64
        );
        // At the target it backs off (Senpai: above or at it).
        assert!(p.next_limit(200 << 20, p.target, floor, ceil) > 200 << 20);
        assert_eq!(p.next_limit(101 << 20, 0.0, floor, ceil), floor);
        assert_eq!(p.next_limit(255 << 20, 1.0, floor, ceil), ceil);
        // A floor over the ceiling: the ceiling.
        assert_eq!(p.next_limit(200 << 20, 0.0, 300 << 20, ceil), ceil);
    }

    #[test]
    fn the_floor_is_what_cannot_be_reclaimed_without_swap_or_limit_min() {
        let p = Params::default();
        // 200 MiB used, 180 of it file pages: 20 + headroom is under limit_min.
        assert_eq!(p.floor(200 << 20, 180 << 20), LIMIT_MIN);
        // 200 MiB used, 50 of file pages: the anonymous 150 + headroom.
        assert_eq!(p.floor(200 << 20, 50 << 20), (150 << 20) + HEADROOM);
    }

    #[test]
    fn psi_and_stat_are_parsed() {
        let psi = "some avg10=1.50 avg60=0.20 avg300=0.00 total=123456\n\
                   full avg10=0.00 avg60=0.00 avg300=0.00 total=99\n";
        assert_eq!(psi_some_total_us(psi), Some(123456));
        assert_eq!(psi_some_total_us("full avg10=0 total=3\n"), None);
        let stat = "cache 10\nrss 5\ninactive_file 1\nactive_file 2\n\
                    total_cache 10\ntotal_inactive_file 4096\ntotal_active_file 8192\n";
        assert_eq!(file_bytes(stat), Some(12288));
        assert_eq!(file_bytes("inactive_file 1\nactive_file 2\n"), Some(3));
        assert_eq!(file_bytes("rss 5\n"), None);
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert!(params(0.0).is_err());
        assert!(params(f64::NAN).is_err());
        assert_eq!(params(1.0).unwrap().interval, Duration::from_secs(1));
    }
}
