//! The `zipf-cache` command: `run` (serve a Zipf catalogue through the adaptive cache) and
//! `stream` (a file through the page cache at a set rate). See the crate's docs and
//! `docs/memory-real.md`, "Memory nice".

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use antsched_mem::sim::Popularity;
use antsched_zipf_cache::run::{self, MissWork, RunConfig};
use antsched_zipf_cache::stream;
use anyhow::{bail, Context};
use clap::Parser;

#[derive(Parser)]
#[command(
    name = "zipf-cache",
    about = "A cache of 4 KiB values over a Zipf catalogue, sized by antsched memd's severity"
)]
enum Cmd {
    /// Serve requests for Zipf-distributed keys through the cache for --duration.
    Run(RunArgs),
    /// Stream a file through the page cache at --mb-s, in a loop, until killed.
    Stream {
        #[arg(long, value_name = "PATH")]
        file: PathBuf,
        /// MiB per second.
        #[arg(long)]
        mb_s: f64,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// How many distinct keys (a value is 4 KiB: 1,000,000 keys are 3.8 GiB of values).
    #[arg(long, default_value_t = 1_000_000)]
    keys: u64,
    /// The Zipf exponent of the keys' popularity.
    #[arg(long, default_value_t = 0.8)]
    alpha: f64,
    /// How the asks spread over the keys: `zipf` (rank r about as often as (r + 1)^-alpha) or
    /// `power-law` (section 4.5.1's model: the M most popular keys carry (M / keys)^(1 - alpha)
    /// of the asks; alpha below 1).
    #[arg(long, value_enum, default_value = "zipf")]
    popularity: PopularityArg,
    /// C_r: what a miss costs, ms.
    #[arg(long, default_value_t = 0.2)]
    miss_ms: f64,
    /// How a miss spends C_r: sleep (the default) or spin (CPU work timed by the clock).
    #[arg(long, value_enum, default_value = "sleep")]
    miss_work: MissWork,
    /// How long to serve, seconds.
    #[arg(long, default_value_t = 60.0)]
    duration: f64,
    /// antsched memd's socket. Without it the cache is never told S.
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// The memory group (v1 cgroup directory) whose severity to follow, or `machine`;
    /// default: this process's group (as `antsched mem run` puts it).
    #[arg(long, value_name = "CGROUP")]
    domain: Option<PathBuf>,
    /// memd's S_max, seconds (its --s-max): a release round at S_max lets the cache grow.
    #[arg(long, default_value_t = 3600.0)]
    s_max: f64,
    /// C_disk of the cost rule, ms, in place of the one memd measures.
    #[arg(long, value_name = "MS")]
    paging_disk_ms: Option<f64>,
    /// A fixed capacity (as 100M) instead of the adaptive policy.
    #[arg(long, value_name = "SIZE")]
    fixed: Option<String>,
    /// MiB released per round of the cost rule.
    #[arg(long, default_value_t = 4.0)]
    round_mb: f64,
    /// Subscribe, then wait until this file exists before serving.
    #[arg(long, value_name = "PATH")]
    wait_file: Option<PathBuf>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The hit rate and the cache are reported per window of this many seconds.
    #[arg(long, default_value_t = 10.0)]
    window: f64,
    #[arg(long, value_name = "OUT")]
    json: Option<PathBuf>,
    /// Every 100 ms: time, S told, cache MB, entries, RSS, queries, hits.
    #[arg(long, value_name = "OUT.csv")]
    timeline: Option<PathBuf>,
}

fn seconds(what: &str, v: f64) -> anyhow::Result<Duration> {
    if v.is_finite() && v > 0.0 && v < 1e9 {
        Ok(Duration::from_secs_f64(v))
    } else {
        bail!("{what} {v}: must be a number of seconds above 0")
    }
}

fn main() -> anyhow::Result<()> {
    match Cmd::parse() {
        Cmd::Run(a) => {
            if !(a.round_mb.is_finite() && a.round_mb > 0.0) {
                bail!("--round-mb {}: must be more than 0", a.round_mb);
            }
            let fixed_bytes = a
                .fixed
                .as_deref()
                .map(|s| {
                    antsched_memd::parse_size(s).with_context(|| format!("--fixed {s}: the size"))
                })
                .transpose()?;
            let cfg = RunConfig {
                keys: a.keys,
                alpha: a.alpha,
                popularity: a.popularity.into(),
                miss_ms: a.miss_ms,
                miss_work: a.miss_work,
                duration: seconds("--duration", a.duration)?,
                socket: a.socket,
                domain: a.domain,
                s_max: a.s_max,
                paging_disk_ms: a.paging_disk_ms,
                fixed_bytes,
                round_bytes: (a.round_mb * 1048576.0) as u64,
                wait_file: a.wait_file,
                seed: a.seed,
                window: seconds("--window", a.window)?,
                json: a.json,
                timeline: a.timeline,
            };
            let r = run::run(&cfg)?;
            println!(
                "zipf-cache {}: {} queries in {:.1} s ({:.0}/s), hit rate {:.1}% (second half {:.1}%), cache mean {:.1} MiB (second half {:.1}), peak {:.1}; miss {:.3} ms; {} notifications, {} rounds, {:.1} MiB released",
                r.policy,
                r.queries,
                r.duration_s,
                r.queries_per_s,
                r.hit_rate * 100.0,
                r.second_half.hit_rate * 100.0,
                r.cache_mb_mean,
                r.second_half.cache_mb_mean,
                r.peak_cache_mb,
                r.miss_ms_measured,
                r.notifications,
                r.rounds,
                r.released_mb,
            );
            Ok(())
        }
        Cmd::Stream { file, mb_s } => {
            stream::stream(&file, mb_s, &AtomicBool::new(false))?;
            Ok(())
        }
    }
}

/// `--popularity`, as clap spells it.
#[derive(Clone, Copy, clap::ValueEnum)]
enum PopularityArg {
    Zipf,
    PowerLaw,
}

impl From<PopularityArg> for Popularity {
    fn from(p: PopularityArg) -> Self {
        match p {
            PopularityArg::Zipf => Popularity::Zipf,
            PopularityArg::PowerLaw => Popularity::PowerLaw,
        }
    }
}
