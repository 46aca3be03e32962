//! The options of a trace replay, the same for `antsched sim --trace` and `antsched run
//! --trace` (see `docs/traces.md`).

use std::path::{Path, PathBuf};

use antsched_sim::engine::Replay;
use antsched_sim::SimError;
use antsched_workload::trace::timing::{Loop, ReplayOptions};
use antsched_workload::trace::{self, Background, Format, TraceError};

#[derive(clap::Args)]
pub struct TraceArgs {
    /// Replay this trace instead of a job file (perf script, blkparse, MSR, SPC, fio iolog,
    /// DiskSim ASCII; see docs/traces.md).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// The trace's format, if not the one its first lines show: perf, blkparse, msr, spc,
    /// fio, disksim.
    #[arg(long, value_name = "NAME", requires = "trace")]
    format: Option<String>,
    /// closed: each process issues a request the trace's think time after its previous one
    /// completes; open: every request at its trace time.
    #[arg(
        long,
        value_name = "open|closed",
        default_value = "closed",
        requires = "trace"
    )]
    replay: Loop,
    /// Multiply the trace's times by X (0.5 replays twice as fast).
    #[arg(long, value_name = "X", default_value_t = 1.0, requires = "trace")]
    time_scale: f64,
    /// Multiply the trace's sectors by X, to replay a trace of another disk on this one
    /// (without it, a request beyond this disk's end is an error naming its line).
    #[arg(long, value_name = "X", requires = "trace")]
    lba_scale: Option<f64>,
}

impl TraceArgs {
    /// The forced format, if any, and the replay's options, checked.
    pub fn options(&self) -> anyhow::Result<(Option<Format>, ReplayOptions)> {
        let format = self.format.as_deref().map(Format::from_name).transpose()?;
        for (name, x) in [
            ("--time-scale", self.time_scale),
            ("--lba-scale", self.lba_scale.unwrap_or(1.0)),
        ] {
            anyhow::ensure!(
                x.is_finite() && x > 0.0,
                "{name} takes a number above 0, not {x}"
            );
        }
        let opts = ReplayOptions {
            mode: self.replay,
            time_scale: self.time_scale,
            lba_scale: self.lba_scale,
            ..ReplayOptions::default()
        };
        Ok((format, opts))
    }
}

/// The simulator's replay of the trace at `path`, read as it is replayed: read and parsed on
/// a thread of its own, as parsing a line costs about what simulating its request does.
pub fn replay(
    path: &Path,
    format: Option<Format>,
    opts: ReplayOptions,
) -> Result<Replay<'static>, SimError> {
    let (reader, share) = trace::open_file(path, format)?;
    let format = reader.format();
    let records = Background::spawn(reader).map_err(|source| TraceError::Io {
        file: path.display().to_string(),
        source,
    })?;
    let name = path.display().to_string();
    Ok(Replay::new(Box::new(records), &name, format, opts).fraction(share))
}
