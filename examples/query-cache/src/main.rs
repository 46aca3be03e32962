//! The `query-cache` command: `populate`, `run`, `plot`, `hog` (see the crate's docs).

use std::path::PathBuf;
use std::time::Duration;

use antsched_query_cache::run::{CacheMode, Hog, RunConfig};
use antsched_query_cache::{plot, run, schema, senpai, sys};
use anyhow::bail;
use clap::Parser;

#[derive(Parser)]
#[command(
    name = "query-cache",
    about = "A database query-result cache driven by antsched memd's severity"
)]
enum Cmd {
    /// Make the database: an ATIS-like schema filled deterministically from SEED.
    Populate {
        #[arg(long, value_name = "PATH")]
        db: PathBuf,
        /// About how large the file should be, MiB.
        #[arg(long, default_value_t = 200.0)]
        size_mb: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Run the query mix against the database through the result cache.
    Run(Box<RunArgs>),
    /// Draw a run's timeline (S, cache, free memory, disk queue over time) as an SVG.
    Plot {
        /// The timeline CSV a run wrote, one or more (one panel each, labelled by file name).
        #[arg(required = true)]
        timeline: Vec<PathBuf>,
        #[arg(long, value_name = "FILE.svg")]
        out: PathBuf,
    },
    /// A memory hog: take MB MiB of anonymous memory, then keep touching it until killed.
    Hog {
        #[arg(long)]
        mb: u64,
        #[arg(long, default_value_t = 50.0)]
        rate_mb_s: f64,
        #[arg(long, default_value_t = 10.0)]
        retouch_s: f64,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    #[arg(long, value_name = "PATH")]
    db: PathBuf,
    /// Queries to answer.
    #[arg(long, default_value_t = 40_000)]
    queries: u64,
    /// fixed:SIZE (fixed:0 is no cache), adaptive, psi, halve or senpai, the last three with
    /// an optional :SIZE (a cache of SIZE, default 300M; senpai also steps the memory group's
    /// limit on its memory stall).
    #[arg(long, value_name = "MODE")]
    cache: String,
    /// antsched memd's socket: adaptive mode's notifications, and S in the timeline. Without
    /// it an adaptive cache is never told S and grows without bound.
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// The memory group (v1 cgroup directory) whose severity to follow; default: the group
    /// this process runs in (as `antsched mem run` puts it).
    #[arg(long, value_name = "CGROUP")]
    domain: Option<PathBuf>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The Zipf exponent of the queries' popularity.
    #[arg(long, default_value_t = 0.8)]
    alpha: f64,
    /// Stop after this many seconds (the run then counts as not finished).
    #[arg(long, value_name = "SECONDS")]
    time_limit: Option<f64>,
    /// Start a memory hog of this many MiB (a child in the same memory group).
    #[arg(long, value_name = "MB")]
    hog_mb: Option<u64>,
    /// When the hog starts, seconds after the queries start.
    #[arg(long, default_value_t = 30.0)]
    hog_at: f64,
    /// How fast the hog takes its memory, MiB/s.
    #[arg(long, default_value_t = 50.0)]
    hog_rate_mb_s: f64,
    /// Do not read the database once before the timed part.
    #[arg(long)]
    no_warm: bool,
    /// MiB released per round of the cost rule.
    #[arg(long, default_value_t = 4.0)]
    round_mb: f64,
    /// The disk service time (C_disk) of the cost rule, ms, in place of memd's: memd
    /// measures a block device, and an `antsched mount`'s emulated disk is none.
    #[arg(long, value_name = "MS")]
    paging_disk_ms: Option<f64>,
    /// senpai: seconds between the controller's steps (the memory simulator's Senpai: 6).
    #[arg(long, value_name = "SECONDS", default_value_t = antsched_query_cache::senpai::INTERVAL_S)]
    senpai_interval: f64,
    #[arg(long, value_name = "OUT")]
    json: Option<PathBuf>,
    #[arg(long, value_name = "OUT.csv")]
    timeline: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    match Cmd::parse() {
        Cmd::Populate { db, size_mb, seed } => {
            let t = std::time::Instant::now();
            let bytes = schema::populate(&db, size_mb, seed)?;
            println!(
                "{}: {:.1} MiB in {:.1} s",
                db.display(),
                bytes as f64 / 1048576.0,
                t.elapsed().as_secs_f64()
            );
            Ok(())
        }
        Cmd::Run(a) => {
            let a = *a;
            let mode = CacheMode::parse(&a.cache)?;
            let seconds = |what: &str, v: f64| -> anyhow::Result<f64> {
                if v.is_finite() && v >= 0.0 {
                    Ok(v)
                } else {
                    bail!("{what} {v}: must be a number of seconds, 0 or more")
                }
            };
            if !(a.round_mb.is_finite() && a.round_mb > 0.0) {
                bail!("--round-mb {}: must be more than 0", a.round_mb);
            }
            let cfg = RunConfig {
                db: a.db,
                queries: a.queries,
                mode,
                socket: a.socket,
                domain: a.domain,
                seed: a.seed,
                alpha: a.alpha,
                time_limit: a
                    .time_limit
                    .map(|t| seconds("--time-limit", t).map(Duration::from_secs_f64))
                    .transpose()?,
                hog: match a.hog_mb {
                    Some(mb) => Some(Hog {
                        mb,
                        start_s: seconds("--hog-at", a.hog_at)?,
                        rate_mb_s: seconds("--hog-rate-mb-s", a.hog_rate_mb_s)?.max(0.1),
                    }),
                    None => None,
                },
                warm: !a.no_warm,
                round_bytes: (a.round_mb * 1048576.0) as u64,
                paging_disk_ms: match a.paging_disk_ms {
                    Some(ms) if !(ms.is_finite() && ms > 0.0) => {
                        bail!("--paging-disk-ms {ms}: must be more than 0")
                    }
                    ms => ms,
                },
                senpai: senpai::params(a.senpai_interval)?,
                json: a.json,
                timeline: a.timeline,
            };
            let r = run::run(&cfg)?;
            println!(
                "{}: {} of {} queries in {:.1} s{}, hit rate {:.1}%, peak RSS {:.0} MiB (anon {:.0}), cache peak {:.0} MiB, mean {:.0}; notifications {}, reaction mean {} ms, max {} ms",
                r.policy,
                r.completed_queries,
                r.queries,
                r.runtime_s,
                if r.completed { "" } else { " (did not finish)" },
                r.hit_rate * 100.0,
                r.peak_rss_mb,
                r.peak_anon_mb,
                r.peak_cache_mb,
                r.mean_cache_mb,
                r.notifications,
                r.reaction.mean_ms.map_or("-".into(), |v| format!("{v:.1}")),
                r.reaction.max_ms.map_or("-".into(), |v| format!("{v:.1}")),
            );
            if let Some(s) = &r.senpai {
                println!(
                    "senpai: limit from {:.0} MiB (usage at start) down to {:.0}, mean {:.0}, last {:.0}; {} steps down, {} up, {} held, {} refused; {} of {} intervals over the {:.2}% stall target ({:.0} ms stalled); limit {:.0} MiB restored: {}; {}",
                    s.start_limit_mb,
                    s.min_limit_mb,
                    s.mean_limit_mb,
                    s.final_limit_mb,
                    s.lowered,
                    s.raised,
                    s.held,
                    s.refused,
                    s.over_target,
                    s.intervals,
                    s.target * 100.0,
                    s.stall_ms,
                    s.ceiling_mb,
                    if s.restored { "yes" } else { "NO" },
                    s.note
                );
            }
            Ok(())
        }
        Cmd::Plot { timeline, out } => plot::plot(&timeline, &out),
        Cmd::Hog {
            mb,
            rate_mb_s,
            retouch_s,
        } => {
            if !(retouch_s.is_finite() && retouch_s > 0.0) {
                bail!("--retouch-s {retouch_s}: must be more than 0");
            }
            sys::hog(mb, rate_mb_s, Duration::from_secs_f64(retouch_s))
        }
    }
}
