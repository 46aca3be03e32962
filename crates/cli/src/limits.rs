//! `--limit KEY=VALUE`: what one job file may cost, shared by the commands that take job files.

use antsched_workload::fio::Limits;

#[derive(clap::Args, Clone, Debug, Default)]
pub struct LimitArgs {
    /// Raise a limit on what the job file may cost, checked before anything is allocated or
    /// run: files=N (files laid out, default 1000000), pieces=N (pieces per request, default
    /// 4096), writeback_interval=DURATION (the shortest antsched_writeback_interval, default
    /// 1ms). Repeat for several. A job past a limit is refused with the option, the cost and
    /// the --limit that would allow it (see docs/workloads.md, "Limits").
    #[arg(long = "limit", value_name = "KEY=VALUE")]
    limit: Vec<String>,
}

impl LimitArgs {
    /// The limits the flags give (the defaults where none is given).
    pub fn limits(&self) -> anyhow::Result<Limits> {
        let mut limits = Limits::default();
        for l in &self.limit {
            limits
                .set(l)
                .map_err(|e| anyhow::anyhow!("--limit {l}: {e}"))?;
        }
        Ok(limits)
    }
}
