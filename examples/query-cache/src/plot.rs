//! Fig. 6.1 from a run's timeline: S, the cache's size, the group's free memory and the disk
//! queue over time.

use std::path::{Path, PathBuf};

pub fn plot(_timelines: &[PathBuf], _out: &Path) -> anyhow::Result<()> {
    anyhow::bail!("plot: not built yet")
}
