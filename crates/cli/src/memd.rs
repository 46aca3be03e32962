//! `antsched memd`: the severity service in the foreground, and `antsched mem status`, which
//! asks it for the record. The daemon and the client are `antsched-memd`; this is argument
//! parsing, signals and printing.

use std::path::PathBuf;
use std::time::Duration;

use antsched_mem::record::SeverityRecord;
use antsched_memd::{Config, Daemon, DiskChoice, ProcSource};
use anyhow::Context;

#[derive(clap::Args)]
pub struct Args {
    /// The Unix socket clients connect to. The default's directory is created if missing;
    /// another path's directory must exist.
    #[arg(long, value_name = "PATH", default_value = antsched_memd::DEFAULT_SOCKET)]
    socket: PathBuf,
    /// How often the machine is observed (a duration with a unit: 1s, 250ms).
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    interval: String,
    /// The device whose /proc/diskstats line gives the paging cost (default: the root file
    /// system's).
    #[arg(long, value_name = "NAME")]
    disk: Option<String>,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let ns = antsched_core::spec::parse_duration(&a.interval)
        .map_err(|e| anyhow::anyhow!("--interval {:?}: {e}", a.interval))?;
    if ns == 0 {
        anyhow::bail!("--interval 0: the interval must be above zero");
    }
    if a.socket.as_os_str() == antsched_memd::DEFAULT_SOCKET {
        let dir = a
            .socket
            .parent()
            .context("the default socket has a directory")?;
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create {} for the socket", dir.display()))?;
    }
    let disk = a.disk.map_or(DiskChoice::Root, DiskChoice::Named);
    let source = ProcSource::new("/proc", disk)?;
    eprintln!(
        "antsched memd: the machine domain from /proc, paging cost from disk {}",
        source.disk()
    );
    // Signals are blocked before the daemon exists, so that no thread it might start takes
    // them; one thread waits for them and stops the loop, which then removes the socket.
    let set = crate::signals::block();
    let config = Config {
        interval: Duration::from_nanos(ns),
        ..Config::new(&a.socket)
    };
    let mut daemon = Daemon::bind(config, Box::new(source))?;
    let stopper = daemon.stopper();
    std::thread::Builder::new()
        .name("antsched-signals".into())
        .spawn(move || {
            let sig = crate::signals::wait(&set);
            eprintln!("antsched memd: signal {sig}");
            stopper.stop();
        })?;
    daemon.run()?;
    drop(daemon);
    eprintln!("antsched memd: stopped; removed {}", a.socket.display());
    Ok(())
}

#[derive(clap::Args)]
pub struct StatusArgs {
    /// The daemon's socket.
    #[arg(long, value_name = "PATH", default_value = antsched_memd::DEFAULT_SOCKET)]
    socket: PathBuf,
    /// Print the record as one JSON object with the keys of DESIGN.md.
    #[arg(long)]
    json: bool,
}

pub fn status(a: StatusArgs) -> anyhow::Result<()> {
    let client = antsched_memd::connect(&a.socket)?;
    let r = client.current();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print!("{}", table(&r));
    }
    Ok(())
}

fn table(r: &SeverityRecord) -> String {
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    let age_ms = antsched_memd::monotonic_ns().saturating_sub(r.time) as f64 / 1e6;
    format!(
        "severity       {:.1} s ({})\n\
         candidate age  {:.1} s (estimator {})\n\
         free           {:.1} MiB (tau {:.1} MiB)\n\
         paging cost    {:.3e} per s (disk {:.3} ms per I/O, queue {:.2})\n\
         record         version {}, {:.0} ms old\n",
        r.severity_s,
        json_name(&r.tier),
        r.candidate_age_s,
        json_name(&r.estimator),
        mib(r.free_bytes),
        mib(r.tau_bytes),
        r.paging_cost,
        r.disk_service_ms,
        r.disk_queue,
        r.version,
        age_ms
    )
}

/// The name a value has in the JSON (`plenty`, `turnover`), so that both outputs say the same.
fn json_name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
