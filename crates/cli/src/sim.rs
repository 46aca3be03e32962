//! `antsched sim JOB.fio`: one fio job file under several schedulers, side by side; or
//! `antsched sim --trace FILE`: a trace replayed under them (see `docs/traces.md`).

use std::path::PathBuf;

use antsched_core::{registry, Spec};
use antsched_sim::{disk_model, replay_each, simulate_each};
use antsched_workload::fio::JobFile;
use antsched_workload::report::RunReport;
use antsched_workload::trace;
use anyhow::Context;

use crate::progress::Progress;

#[derive(clap::Args)]
pub struct Args {
    /// The workload, as a fio job file.
    #[arg(required_unless_present = "trace", conflicts_with = "trace")]
    job: Option<PathBuf>,
    #[command(flatten)]
    trace: crate::trace_args::TraceArgs,
    /// Disk model: a built-in name (see `antsched disks`) or a DiskSim .parv file.
    #[arg(long, default_value = "deskstar-34gxp", value_name = "NAME|FILE")]
    disk: String,
    /// Scheduler SPEC (NAME[:key=value,...]); repeat for one row each.
    #[arg(long = "scheduler", value_name = "SPEC", default_values_t = [antsched_core::DEFAULT_SCHEDULER.to_string()])]
    schedulers: Vec<String>,
    /// Seed of every random choice (offsets, think times, lottery draws).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the results as JSON (`{"runs": [...]}`) to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    #[command(flatten)]
    limits: crate::limits::LimitArgs,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    for s in &a.schedulers {
        registry::resolve(&Spec::parse(s)?)?;
    }
    let disk = disk_model(&a.disk)?;
    if let Some(path) = &a.json {
        crate::output::check_writable(path)?;
    }
    // The bar moves within each run, not only as runs end: one run of a long job can take
    // minutes. Each run's share is kept in thousandths; the bar shows their sum.
    let progress = Progress::share("simulating");
    let shares: Vec<std::sync::atomic::AtomicU64> =
        a.schedulers.iter().map(|_| Default::default()).collect();
    let on_progress = |i: usize, share: f64| {
        use std::sync::atomic::Ordering::Relaxed;
        shares[i].store((share.clamp(0.0, 1.0) * 1000.0) as u64, Relaxed);
        let sum: u64 = shares.iter().map(|s| s.load(Relaxed)).sum();
        progress.set_share(sum as f64 / 1000.0 / shares.len() as f64);
    };
    let results = match (&a.job, &a.trace.trace) {
        (Some(job), _) => {
            let jobs = JobFile::load_with(job, &a.limits.limits()?)?;
            simulate_each(&jobs, &*disk, &a.schedulers, a.seed, &on_progress)?
        }
        (None, Some(trace)) => {
            let (format, opts) = a.trace.options()?;
            // Opened once here so that a missing file or an unknown format is one error,
            // before any run; each run then reads the trace again, as it replays it.
            drop(trace::open_file(trace, format)?);
            let open = || crate::trace_args::replay(trace, format, opts);
            replay_each(&open, &*disk, &a.schedulers, a.seed, &on_progress)
        }
        (None, None) => unreachable!("clap requires a job file or --trace"),
    };
    progress.finish();
    let runs = results
        .into_iter()
        .zip(&a.schedulers)
        .map(|(r, s)| r.with_context(|| format!("scheduler {s}")))
        .collect::<anyhow::Result<Vec<RunReport>>>()?;
    print!("{}", table(&runs));
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&serde_json::json!({ "runs": runs }))?;
        crate::output::write_atomically(path, text.as_bytes())?;
    }
    Ok(())
}

/// One row per run: its length (with `exitall`, the time the job that ended it took: the
/// Linux/CAS paper's measure), throughput, utilization, per-context throughput and share,
/// the scheduler's waits, and the simulator's speed.
pub fn table(runs: &[RunReport]) -> String {
    let mut out = String::new();
    let w = runs
        .iter()
        .map(|r| r.scheduler.len())
        .max()
        .unwrap_or(9)
        .max(9);
    out += &format!(
        "{:w$}  {:>8}  {:>8}  {:>5}  {:>27}  {:>17}  {:>10}\n",
        "scheduler",
        "secs",
        "MB/s",
        "util",
        "per context MB/s (share)",
        "waits/hits/t.o.",
        "sim req/s"
    );
    for r in runs {
        let per: Vec<String> = r
            .contexts
            .iter()
            .map(|c| format!("{:.2} ({:.0}%)", c.throughput_mb_s, c.share * 100.0))
            .collect();
        let a = &r.anticipation;
        out += &format!(
            "{:w$}  {:8.2}  {:8.2}  {:5.3}  {:>27}  {:>17}  {:>10}\n",
            r.scheduler,
            r.duration_s,
            r.throughput_mb_s,
            r.utilization,
            per.join(" "),
            format!("{}/{}/{}", a.waits, a.hits, a.timeouts),
            r.sim
                .map_or("-".into(), |s| format!("{:.0}", s.requests_per_s)),
        );
    }
    out
}
