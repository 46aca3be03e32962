//! `antsched mem`: the memory half. `antsched mem simulate SCENARIO.toml` runs a user's
//! scenario on the memory simulator and prints its processes' runtimes and footprints, with
//! the time series as JSON and plots; `antsched mem status` prints the record `antsched memd`
//! publishes, `antsched mem run` runs a command in a memory cgroup of its own and `antsched
//! mem nice` sets a memory nice (all three in `memd.rs`); `antsched mem watch` follows one
//! domain's record live (`watch.rs`).

use std::path::{Path, PathBuf};

use antsched_mem::sim::{self, MemReport};
use anyhow::Context;

use crate::plots::{Lines, Plot};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: MemCommand,
}

#[derive(clap::Subcommand)]
enum MemCommand {
    /// Simulate a scenario (machine, processes, policy) on virtual time.
    Simulate(SimulateArgs),
    /// The severity records `antsched memd` publishes now, one per domain.
    Status(crate::memd::StatusArgs),
    /// One domain's severity record, live: a line per notification and per interval, a
    /// plot of S over time on exit.
    Watch(crate::watch::WatchArgs),
    /// Run a command in a new memory cgroup of its own (root), governed by a running memd.
    Run(crate::memd::RunArgs),
    /// Set the memory nice of a process or of a governed group (asks a running memd).
    Nice(crate::memd::NiceArgs),
}

#[derive(clap::Args)]
struct SimulateArgs {
    /// The scenario, in TOML (see docs/memory.md).
    scenario: PathBuf,
    /// Write the run as JSON (`{"runs": [...]}`) to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write plots (S over time, memory per process) to DIR.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    match a.command {
        MemCommand::Simulate(a) => simulate(a),
        MemCommand::Status(a) => crate::memd::status(a),
        MemCommand::Watch(a) => crate::watch::watch(a),
        MemCommand::Run(a) => crate::memd::mem_run(a),
        MemCommand::Nice(a) => crate::memd::nice(a),
    }
}

fn simulate(a: SimulateArgs) -> anyhow::Result<()> {
    let origin = a.scenario.display().to_string();
    let text =
        antsched_disk::read_text(&a.scenario).with_context(|| format!("cannot read {origin}"))?;
    let scenario = sim::parse_scenario(&text, &origin)?;
    if let Some(path) = &a.json {
        crate::output::check_writable(path)?;
    }
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        crate::output::check_writable(&dir.join("memory.svg"))?;
    }
    let progress = crate::progress::Progress::share("simulating");
    let report =
        sim::simulate_with_progress(&scenario, a.seed, &mut |share| progress.set_share(share))
            .map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
    progress.finish();
    print!("{}", table(&report));
    if let Some(path) = &a.json {
        let json = serde_json::json!({ "runs": [report] });
        crate::output::write_atomically(path, serde_json::to_string_pretty(&json)?.as_bytes())?;
    }
    if let Some(dir) = &a.out {
        plot(&report, dir)?;
    }
    Ok(())
}

/// One line per process, then the run's totals.
pub fn table(r: &MemReport) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "policy {}, scheduler {} on {}: {:.1} s simulated",
        r.policy, r.scheduler, r.disk, r.duration_s
    );
    let _ = writeln!(
        s,
        "{:<16} {:>6} {:>11} {:>9} {:>9} {:>8} {:>9}",
        "process", "nice", "runtime_s", "resident", "peak_mb", "hit_rate", "faults"
    );
    for p in &r.processes {
        let _ = writeln!(
            s,
            "{:<16} {:>6.1} {:>11} {:>9.1} {:>9.1} {:>8} {:>9}",
            p.name,
            p.nice,
            match (p.runtime_s, p.finished) {
                (Some(t), _) => format!("{t:.1}"),
                _ if p.killed => "killed".to_string(),
                // A hog runs until the others are done: it has no runtime of its own.
                (None, true) => "-".to_string(),
                (None, false) => "never".to_string(),
            },
            p.resident_mb,
            p.peak_mb,
            p.hit_rate
                .map_or("-".to_string(), |h| format!("{:.1}%", h * 100.0)),
            p.faults
        );
    }
    let _ = writeln!(
        s,
        "pages read back {}, page-outs {}, data reads {}, notifications {}, disk queue max {}",
        r.pages_read_back, r.page_outs, r.data_reads, r.notifications, r.max_disk_queue
    );
    let _ = writeln!(
        s,
        "simulator: {} page references in {:.2} s ({:.0} per second)",
        r.sim.page_refs, r.sim.wall_s, r.sim.page_refs_per_s
    );
    s
}

/// S over time, and each process's memory over time.
pub fn plot(r: &MemReport, dir: &Path) -> anyhow::Result<()> {
    let t = |f: &dyn Fn(&sim::Sample) -> f64| -> Vec<(f64, f64)> {
        r.severity.iter().map(|x| (x.time_s, f(x))).collect()
    };
    Lines {
        title: "severity",
        x_label: "time (s)",
        y_label: "S (s)",
        series: vec![
            ("S".into(), t(&|x| x.severity_s)),
            ("candidate age".into(), t(&|x| x.candidate_age_s)),
        ],
    }
    .save(&dir.join("severity"))?;
    let mut series: Vec<(String, Vec<(f64, f64)>)> = r
        .processes
        .iter()
        .enumerate()
        .map(|(i, p)| (format!("{} resident", p.name), t(&|x| x.resident_mb[i])))
        .collect();
    series.push(("free".into(), t(&|x| x.free_mb)));
    Lines {
        title: "memory",
        x_label: "time (s)",
        y_label: "MiB",
        series,
    }
    .save(&dir.join("memory"))?;
    Ok(())
}
