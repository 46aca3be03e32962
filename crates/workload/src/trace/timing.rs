//! When a replayed record is issued: the rule both drivers of a replay follow, the simulator
//! on virtual time (`antsched sim --trace`) and the real-time runtime (`antsched run --trace`).
//!
//! - Open loop: at its trace time (scaled), whatever the disk did.
//! - Closed loop: its process issues it the think time after its predecessor (the process's
//!   previous record) completes in the replay. The think time is the trace's gap from the
//!   predecessor's completion to this issue where the trace has completion times, else the gap
//!   between the two issues less the predecessor's service time in the replay, floored at 0.
//!   Requests the process had in flight together in the trace (issued before the predecessor
//!   completed there, or, without completion times, at the same instant) are issued together:
//!   at the predecessor's issue in the replay plus their gap in the trace, without waiting.
//! - A process's first request is issued at its trace time (scaled) in both modes.
//!
//! Times are relative to the trace's first record, whose time is the replay's zero.

use antsched_core::Nanos;

use super::{Record, TraceError};

/// How requests are timed; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Loop {
    Open,
    #[default]
    Closed,
}

impl std::str::FromStr for Loop {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "open" => Ok(Loop::Open),
            "closed" => Ok(Loop::Closed),
            _ => Err(format!("expected open or closed, found {s:?}")),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct ReplayOptions {
    pub mode: Loop,
    /// Trace time is multiplied by this (0.5 replays twice as fast).
    pub time_scale: f64,
    /// Each sector is multiplied by this, to replay a trace of a larger (or smaller) disk on
    /// the modelled one. Without it, a request beyond the disk's end is an error.
    pub lba_scale: Option<f64>,
    /// Records the simulator reads ahead of its replay, across all processes. (The real-time
    /// replay holds a bounded channel per process instead.)
    pub window: usize,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        Self {
            mode: Loop::Closed,
            time_scale: 1.0,
            lba_scale: None,
            window: 65_536,
        }
    }
}

/// What the timing rule needs of a process's previous record.
#[derive(Clone, Copy, Debug)]
pub struct Previous {
    /// Its issue and completion in the trace.
    pub trace_issue: Nanos,
    pub trace_done: Option<Nanos>,
    /// Its issue and completion in the replay (`None` while in flight).
    pub issued: Nanos,
    pub done: Option<Nanos>,
}

impl ReplayOptions {
    /// A trace interval on the replay's clock.
    pub fn gap(&self, d: Nanos) -> Nanos {
        if self.time_scale == 1.0 {
            d
        } else {
            // `as` saturates; a negative or NaN scale is refused by the command line.
            (d as f64 * self.time_scale) as Nanos
        }
    }

    /// When record `r` is due on the replay's clock, its process's previous record being
    /// `prev` and the trace's first record at `t0`: `None` while the rule waits for `prev`
    /// to complete.
    pub fn due(&self, t0: Nanos, prev: Option<&Previous>, r: &Record) -> Option<Nanos> {
        let prev = match (self.mode, prev) {
            (Loop::Open, _) | (Loop::Closed, None) => {
                return Some(self.gap(r.time.saturating_sub(t0)))
            }
            (Loop::Closed, Some(p)) => p,
        };
        let together = match prev.trace_done {
            Some(done) => r.time < done,
            None => r.time == prev.trace_issue,
        };
        if together {
            return Some(
                prev.issued
                    .saturating_add(self.gap(r.time.saturating_sub(prev.trace_issue))),
            );
        }
        let done = prev.done?;
        let think = match prev.trace_done {
            Some(d) => self.gap(r.time.saturating_sub(d)),
            None => self
                .gap(r.time.saturating_sub(prev.trace_issue))
                .saturating_sub(done - prev.issued),
        };
        Some(done.saturating_add(think))
    }

    /// Where record `r` lies on a disk of `capacity` sectors: its sector as the LBA scale maps
    /// it, and its length in sectors; or, if it ends beyond the disk, the error naming its line
    /// of `file`. Both replays, the simulator's and the real-time runtime's, place records so.
    pub fn place(&self, r: &Record, capacity: u64, file: &str) -> Result<(u64, u64), TraceError> {
        let sectors = r.bytes.div_ceil(512);
        let sector = match self.lba_scale {
            None => r.sector,
            Some(s) => (r.sector as f64 * s) as u64,
        };
        if sectors > u64::from(u32::MAX) || sector.saturating_add(sectors) > capacity {
            return Err(TraceError::BeyondDisk {
                file: file.to_string(),
                line: r.line,
                sector,
                bytes: r.bytes,
                capacity,
            });
        }
        Ok((sector, sectors))
    }
}
