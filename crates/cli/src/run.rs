//! `antsched run JOB.fio --backend emulated:NAME --dir DIR`: the job file in real time.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use antsched_core::{registry, spec::parse_duration, Spec};
use antsched_io::job::{self, RealRun, RunOptions};
use antsched_io::replay::{self, TraceRunOptions};
use antsched_io::BackendSpec;
use antsched_sim::{disk_model, simulate};
use antsched_workload::fio::JobFile;
use antsched_workload::trace::timing::ReplayOptions;
use antsched_workload::trace::{self, Format};
use anyhow::{bail, Context};

use crate::progress::Progress;
use crate::signals;
use crate::trace_args;

#[derive(clap::Args)]
pub struct Args {
    /// The workload, as a fio job file (the same one `antsched sim` takes).
    #[arg(required_unless_present = "trace", conflicts_with = "trace")]
    job: Option<PathBuf>,
    #[command(flatten)]
    trace: crate::trace_args::TraceArgs,
    /// The device: emulated:NAME, a built-in disk model (see `antsched disks`) or a DiskSim
    /// .parv file, whose timing the run reproduces in real time.
    #[arg(long, value_name = "emulated:NAME")]
    backend: String,
    /// Directory for the job's files (created with checkable content, reused when they
    /// already hold it).
    #[arg(long, value_name = "DIR", required_unless_present = "trace")]
    dir: Option<PathBuf>,
    /// Scheduler SPEC (NAME[:key=value,...]); repeat for one row each. The runs go one after
    /// another: each needs the disk to itself.
    #[arg(long = "scheduler", value_name = "SPEC", default_values_t = [antsched_core::DEFAULT_SCHEDULER.to_string()])]
    schedulers: Vec<String>,
    /// Seed of every random choice (offsets, think times), as for `antsched sim`.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Cap every job's runtime (e.g. 10s): real time is slow, and the 1 GB files of the paper
    /// take minutes to read.
    #[arg(long, value_name = "DURATION")]
    runtime: Option<String>,
    /// The event loop spins, instead of sleeping, for deadlines closer than this (0: always
    /// sleep). Spinning costs CPU but wakes on time; see `timer_overshoot_us`.
    #[arg(long, value_name = "DURATION", default_value = "200us")]
    spin: String,
    /// Do not put the event loop and the issuers in the real-time scheduling class
    /// (SCHED_FIFO, which needs root or CAP_SYS_NICE; without it they wake late on a busy
    /// machine).
    #[arg(long)]
    no_realtime: bool,
    /// Also simulate the same (capped) job under each scheduler and print both.
    #[arg(long)]
    compare_sim: bool,
    /// Write the results as JSON (`{"runs": [...]}`) to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    #[command(flatten)]
    limits: crate::limits::LimitArgs,
}

/// What the runs replay: a job file's workload, laid out in `--dir`, or a trace.
enum Workload {
    Job(Box<(JobFile, job::Prepared)>),
    Trace {
        path: PathBuf,
        format: Option<Format>,
        replay: ReplayOptions,
    },
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let cap = match &a.runtime {
        Some(r) => {
            let cap = parse_duration(r).map_err(|e| anyhow::anyhow!("--runtime {r:?}: {e}"))?;
            if cap == 0 {
                bail!("--runtime {r:?}: expected a duration above 0");
            }
            Some(cap)
        }
        None => None,
    };
    for s in &a.schedulers {
        registry::resolve(&Spec::parse(s)?)?;
    }
    let name = match BackendSpec::parse(&a.backend)? {
        BackendSpec::Emulated(n) => n,
        BackendSpec::File(p) => bail!(
            "--backend file:{p}: antsched run emulates a disk over files in --dir; give --backend emulated:NAME \
             (real devices are driven through the antsched-io library, or measured with `antsched calibrate`)"
        ),
    };
    let model = disk_model(&name)?;
    if let Some(path) = &a.json {
        crate::output::check_writable(path)?;
    }
    let workload = match (&a.job, &a.trace.trace, &a.dir) {
        (Some(job), _, Some(dir)) => {
            let mut jobs = JobFile::load_with(job, &a.limits.limits()?)?;
            if let Some(cap) = cap {
                job::cap_runtime(&mut jobs, cap);
            }
            let prep = job::prepare(&jobs, &*model, dir, a.seed)?;
            for p in &prep.created {
                eprintln!("created {}", p.display());
            }
            Workload::Job(Box::new((jobs, prep)))
        }
        (None, Some(path), _) => {
            let (format, replay) = a.trace.options()?;
            if a.compare_sim && cap.is_some() {
                bail!(
                    "--compare-sim with --trace replays the whole trace in the simulator; \
                     leave out --runtime, or compare with `antsched sim --trace`"
                );
            }
            // Opened here so that a missing file or an unknown format is one error, before
            // any run; each run reads it again as it replays it.
            drop(trace::open_file(path, format)?);
            Workload::Trace {
                path: path.clone(),
                format,
                replay,
            }
        }
        _ => unreachable!("clap requires a job file and --dir, or --trace"),
    };
    let spin = parse_duration(&a.spin).map_err(|e| anyhow::anyhow!("--spin {:?}: {e}", a.spin))?;
    let opts = RunOptions {
        seed: a.seed,
        loop_spin: spin,
        realtime: !a.no_realtime,
        ..RunOptions::default()
    };
    // Ctrl-C (or SIGTERM) during a long comparison keeps what finished: the signal thread
    // prints the finished schedulers' rows, writes their JSON, and ends with the signal's
    // status. The run in progress is abandoned; its files in --dir stay, as after any run.
    let signals = signals::block();
    let finished: Arc<Mutex<Vec<RealRun>>> = Arc::default();
    {
        let finished = finished.clone();
        let json = a.json.clone();
        std::thread::Builder::new()
            .name("antsched-signals".into())
            .spawn(move || {
                let sig = signals::wait(&signals);
                let runs = finished.lock().unwrap_or_else(|e| e.into_inner());
                if runs.is_empty() {
                    eprintln!("antsched: interrupted before any scheduler finished");
                } else {
                    eprintln!(
                        "antsched: interrupted; the {} scheduler(s) that finished:",
                        runs.len()
                    );
                    print!("{}", table(&runs));
                    if let Some(path) = &json {
                        let v = serde_json::json!({ "runs": *runs, "interrupted": true });
                        let written = serde_json::to_string_pretty(&v)
                            .map_err(anyhow::Error::from)
                            .and_then(|t| crate::output::write_atomically(path, t.as_bytes()));
                        if let Err(e) = written {
                            eprintln!("antsched: {e}");
                        }
                    }
                }
                std::process::exit(128 + sig);
            })?;
    }
    let progress = Progress::new(a.schedulers.len() as u64, "running");
    let mut runs: Vec<RealRun> = Vec::new();
    let mut sims = Vec::new();
    for s in &a.schedulers {
        let r = match &workload {
            Workload::Job(j) => {
                job::run(&j.0, &j.1, model.clone_box(), s, &opts).map_err(Into::into)
            }
            Workload::Trace {
                path,
                format,
                replay,
            } => trace::open_file(path, *format)
                .map_err(anyhow::Error::from)
                .and_then(|(records, _)| {
                    // Read on the thread that hands the records to the processes: in real
                    // time the trace is read far faster than it is replayed, and a reader
                    // thread of its own would only compete for the cores the runtime uses.
                    let f = records.format();
                    let topts = TraceRunOptions {
                        replay: *replay,
                        runtime: cap,
                        run: opts.clone(),
                    };
                    let file = path.display().to_string();
                    Ok(replay::replay(
                        records,
                        &file,
                        f,
                        model.clone_box(),
                        s,
                        &topts,
                    )?)
                }),
        }
        .with_context(|| format!("scheduler {s}"))?;
        finished
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(r.clone());
        runs.push(r);
        if a.compare_sim {
            let sim = match &workload {
                Workload::Job(j) => simulate(&j.0, model.clone_box(), s, a.seed),
                Workload::Trace {
                    path,
                    format,
                    replay,
                } => trace_args::replay(path, *format, *replay)
                    .and_then(|t| antsched_sim::replay(t, model.clone_box(), s, a.seed, &|_| {})),
            };
            sims.push(sim.with_context(|| format!("simulating {s}"))?);
        }
        progress.inc();
    }
    progress.finish();
    print!("{}", table(&runs));
    if a.compare_sim {
        let what = match workload {
            Workload::Job(_) => "job",
            Workload::Trace { .. } => "trace",
        };
        println!("\nsimulated on the same {what}:");
        print!("{}", crate::sim::table(&sims));
        println!();
        for (r, s) in runs.iter().zip(&sims) {
            println!(
                "{}: run {:.2} MB/s, sim {:.2} MB/s, run/sim {:.3}",
                r.report.scheduler,
                r.report.throughput_mb_s,
                s.throughput_mb_s,
                r.report.throughput_mb_s / s.throughput_mb_s.max(1e-9)
            );
        }
    }
    let bad: u64 = runs
        .iter()
        .map(|r| r.verify.mismatches + r.verify.io_errors)
        .sum();
    if let Some(path) = &a.json {
        let mut v = serde_json::json!({ "runs": runs });
        if a.compare_sim {
            v["sim"] = serde_json::json!({ "runs": sims });
        }
        crate::output::write_atomically(path, serde_json::to_string_pretty(&v)?.as_bytes())?;
    }
    if bad > 0 {
        let first = runs
            .iter()
            .find_map(|r| r.verify.first_mismatch.clone())
            .unwrap_or_default();
        bail!("{bad} reads returned wrong data or failed (first: {first})");
    }
    Ok(())
}

/// One row per run: throughput, utilization, per-context throughput and share, waits, the
/// timer's overshoot and the data check.
pub fn table(runs: &[RealRun]) -> String {
    let mut out = String::new();
    let w = runs
        .iter()
        .map(|r| r.report.scheduler.len())
        .max()
        .unwrap_or(9)
        .max(9);
    out += &format!(
        "{:w$}  {:>8}  {:>5}  {:>27}  {:>17}  {:>17}  {:>16}\n",
        "scheduler",
        "MB/s",
        "util",
        "per context MB/s (share)",
        "waits/hits/t.o.",
        "timer p50/p99 us",
        "verified"
    );
    for r in runs {
        let per: Vec<String> = r
            .report
            .contexts
            .iter()
            .map(|c| format!("{:.2} ({:.0}%)", c.throughput_mb_s, c.share * 100.0))
            .collect();
        let a = &r.report.anticipation;
        let v = &r.verify;
        out += &format!(
            "{:w$}  {:8.2}  {:5.3}  {:>27}  {:>17}  {:>17}  {:>16}\n",
            r.report.scheduler,
            r.report.throughput_mb_s,
            r.report.utilization,
            per.join(" "),
            format!("{}/{}/{}", a.waits, a.hits, a.timeouts),
            format!(
                "{:.1}/{:.1}",
                r.timer_overshoot_us.p50, r.timer_overshoot_us.p99
            ),
            if v.mismatches + v.io_errors > 0 {
                format!("{} BAD", v.mismatches + v.io_errors)
            } else if v.reads_checked == 0 {
                // A trace's replay stores nothing: there is no content to check.
                "-".to_string()
            } else {
                format!("{} MB ok", v.bytes_checked / 1_000_000)
            },
        );
    }
    out
}
