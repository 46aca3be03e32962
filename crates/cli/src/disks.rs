//! `antsched disks`: the built-in disk models and their key figures.

use std::path::PathBuf;

use anyhow::Context;

#[derive(clap::Args)]
pub struct Args {
    /// Also write the table as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(path) = &args.json {
        crate::output::check_writable(path)?;
    }
    let infos = antsched_disk::presets();
    println!(
        "{:<16} {:>7} {:>10} {:>12} {:>12} {:>10}  description",
        "name", "rpm", "capacity", "outer MB/s", "inner MB/s", "avg seek"
    );
    for p in &infos {
        let rpm = p
            .rpm
            .map(|r| format!("{r:.0}"))
            .unwrap_or_else(|| "-".into());
        let seek = if p.rpm.is_some() {
            format!("{:.2} ms", p.average_seek_ms)
        } else {
            "-".into()
        };
        println!(
            "{:<16} {:>7} {:>7.1} GB {:>12.1} {:>12.1} {:>10}  {}",
            p.name,
            rpm,
            p.capacity_bytes as f64 / 1e9,
            p.outer_mb_s,
            p.inner_mb_s,
            seek,
            p.description
        );
    }
    if let Some(path) = args.json {
        let text = serde_json::to_string_pretty(&serde_json::json!({ "disks": infos }))
            .context("cannot encode the table")?;
        crate::output::write_atomically(&path, text.as_bytes())?;
    }
    Ok(())
}
