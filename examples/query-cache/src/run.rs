//! A run: the query mix against the database, answered from the result cache when it can be,
//! with a controller that sizes the cache (the thesis's cost rule driven by memd's
//! notifications, or one of the anchors' policies), a sampler that writes the timeline every
//! 100 ms, and optionally a memory hog started part-way in the same memory group.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use antsched_core::Nanos;
use antsched_mem::cache::{CacheConfig, EntryCost};
use antsched_mem::cost::PagingCost;
use antsched_memd::{monotonic_ns, Client};
use anyhow::{bail, Context};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;

use crate::cache::{trim, Released, ResultCache};
use crate::mix::{types, Mix, QueryType, VERSIONS};
use crate::senpai;
use crate::sys::{self, Mmap};

/// How the cache is sized.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CacheMode {
    /// A conventional cache of this capacity (0: no cache).
    Fixed(u64),
    /// The thesis's: no capacity; release rounds of the cost rule at the severity memd sends.
    Adaptive,
    /// lmkd/GLib-style discrete levels from the group's PSI: `some` avg10 at 10% halves the
    /// cache, at 40% drops it all; growth is held for [`PSI_HOLD`] after the last level. The
    /// capacity is the configured size the cache may grow to.
    Psi(u64),
    /// MariaDB 11.8's: halve on pressure (the group's PSI `some` avg10 at 10%), at most once a
    /// minute, never grow back. The capacity is the configured size.
    Halve(u64),
    /// A cache of the configured size in a group whose limit a Senpai-style controller steps
    /// on the group's memory stall ([`crate::senpai`]). Without swap the lower limit can only
    /// reclaim the database's file pages, never the anonymous cache.
    Senpai(u64),
}

impl CacheMode {
    /// `fixed:SIZE`, `adaptive`, `psi[:SIZE]`, `halve[:SIZE]`, `senpai[:SIZE]` (SIZE as 100M,
    /// 1G; 300M for psi, halve and senpai when left out, the configured cache of the anchors'
    /// runs in `antsched paper`).
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let (kind, given) = match text.split_once(':') {
            Some((k, s)) => (k, Some(s)),
            None => (text, None),
        };
        let size = |default: Option<u64>| -> anyhow::Result<u64> {
            match (given, default) {
                // 0 is a size here (no cache), which a cgroup limit cannot be.
                (Some(s), _) if s.trim().trim_end_matches(['K', 'M', 'G', 'T']) == "0" => Ok(0),
                (Some(s), _) => antsched_memd::parse_size(s)
                    .with_context(|| format!("--cache {text}: the size")),
                (None, Some(d)) => Ok(d),
                (None, None) => bail!("--cache {text}: fixed needs a size, as fixed:100M"),
            }
        };
        Ok(match kind {
            "fixed" => CacheMode::Fixed(size(None)?),
            "adaptive" if given.is_none() => CacheMode::Adaptive,
            "psi" => CacheMode::Psi(size(Some(300 << 20))?),
            "halve" => CacheMode::Halve(size(Some(300 << 20))?),
            "senpai" => CacheMode::Senpai(size(Some(300 << 20))?),
            _ => bail!(
                "--cache {text}: expected fixed:SIZE, adaptive, psi[:SIZE], halve[:SIZE] or senpai[:SIZE]"
            ),
        })
    }

    pub fn name(&self) -> String {
        let mb = |b: u64| b as f64 / 1048576.0;
        match self {
            CacheMode::Fixed(b) => format!("fixed:{:.0}M", mb(*b)),
            CacheMode::Adaptive => "adaptive".into(),
            CacheMode::Psi(b) => format!("psi:{:.0}M", mb(*b)),
            CacheMode::Halve(b) => format!("halve:{:.0}M", mb(*b)),
            CacheMode::Senpai(b) => format!("senpai:{:.0}M", mb(*b)),
        }
    }
}

/// The PSI levels' hold on growth after the last level seen, and how often a level that
/// persists acts again (avg10 is a 10 s average: acting on every 100 ms sample of one episode
/// would drop the cache to nothing in a second).
pub const PSI_HOLD: Duration = Duration::from_secs(10);
/// MariaDB 11.8 halves at most once a minute.
pub const HALVE_INTERVAL: Duration = Duration::from_secs(60);

/// A memory hog started part-way, in the same memory group (a child process).
#[derive(Clone, Debug, Serialize)]
pub struct Hog {
    pub mb: u64,
    pub start_s: f64,
    pub rate_mb_s: f64,
}

pub struct RunConfig {
    pub db: PathBuf,
    pub queries: u64,
    pub mode: CacheMode,
    /// memd's socket; adaptive mode without it grows without bound (no one tells it S).
    pub socket: Option<PathBuf>,
    /// The memory group (a v1 cgroup directory); by default the one this process is in.
    pub domain: Option<PathBuf>,
    pub seed: u64,
    pub alpha: f64,
    pub time_limit: Option<Duration>,
    pub hog: Option<Hog>,
    /// Read the whole database through its mapping before the timed part.
    pub warm: bool,
    /// Bytes per release round.
    pub round_bytes: u64,
    /// C_disk for the cost rule, ms, in place of the one memd publishes: memd measures a
    /// block device of /proc/diskstats, and the database lies on an `antsched mount`, which
    /// has none (its disk is emulated).
    pub paging_disk_ms: Option<f64>,
    /// The Senpai-style controller's constants (senpai mode).
    pub senpai: senpai::Params,
    pub json: Option<PathBuf>,
    pub timeline: Option<PathBuf>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Reaction {
    pub count: usize,
    pub mean_ms: Option<f64>,
    pub max_ms: Option<f64>,
}

/// What a run measured; the JSON the `run` subcommand writes.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub policy: String,
    pub queries: u64,
    pub completed_queries: u64,
    /// All queries answered within the time limit.
    pub completed: bool,
    pub runtime_s: f64,
    pub hits: u64,
    pub hit_rate: f64,
    pub evaluated: u64,
    pub eval_ms_mean: f64,
    /// The cheapest and the dearest type's mean evaluation time, ms.
    pub eval_ms_type_min: f64,
    pub eval_ms_type_max: f64,
    pub peak_rss_mb: f64,
    pub peak_anon_mb: f64,
    /// The memory group's peak usage (its `memory.max_usage_in_bytes`: the cache, the
    /// database's pages and a hog), when the run has a group of its own.
    pub group_peak_mb: Option<f64>,
    pub peak_cache_mb: f64,
    pub mean_cache_mb: f64,
    pub cache_entries_end: usize,
    pub notifications: u64,
    pub reaction: Reaction,
    pub released_mb: f64,
    pub db_mb: f64,
    pub warm_s: f64,
    pub seed: u64,
    pub alpha: f64,
    pub types: usize,
    pub versions: u32,
    pub domain: Option<String>,
    pub memd: bool,
    pub hog: Option<Hog>,
    /// How the hog ended: "killed at the end", or how it died before.
    pub hog_exit: Option<String>,
    /// The group's mean usage over the run (the 100 ms samples), MiB.
    pub mean_group_mb: Option<f64>,
    /// What the Senpai-style controller did (senpai mode).
    pub senpai: Option<senpai::Summary>,
}

/// A line of the timeline.
#[derive(Clone, Debug)]
struct Row {
    t: f64,
    event: &'static str,
    severity_s: Option<f64>,
    cache_mb: f64,
    free_mb: Option<f64>,
    disk_queue: Option<f64>,
    rss_mb: f64,
    anon_mb: f64,
    queries: u64,
    reaction_ms: Option<f64>,
    released_mb: Option<f64>,
    /// The group's limit and usage (samples and Senpai's steps).
    limit_mb: Option<f64>,
    group_mb: Option<f64>,
    /// Senpai's steps: the group's stall over the interval, percent.
    stall_pct: Option<f64>,
}

struct Shared {
    cache: Mutex<ResultCache>,
    queries: AtomicU64,
    stop: AtomicBool,
    events: Mutex<Vec<Row>>,
    start: Nanos,
}

impl Shared {
    fn cache(&self) -> MutexGuard<'_, ResultCache> {
        // A panicking thread poisons the lock; the cache is still consistent between calls.
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn elapsed_s(&self) -> f64 {
        monotonic_ns().saturating_sub(self.start) as f64 / 1e9
    }

    fn event(
        &self,
        event: &'static str,
        reaction_ms: Option<f64>,
        released: &Released,
        s: Option<f64>,
    ) {
        let (rss, anon) = sys::rss_mb();
        let row = Row {
            t: self.elapsed_s(),
            event,
            severity_s: s,
            cache_mb: self.cache().bytes() as f64 / 1048576.0,
            free_mb: None,
            disk_queue: None,
            rss_mb: rss,
            anon_mb: anon,
            queries: self.queries.load(Ordering::Relaxed),
            reaction_ms,
            released_mb: Some(released.bytes as f64 / 1048576.0),
            limit_mb: None,
            group_mb: None,
            stall_pct: None,
        };
        self.push(row);
    }

    fn push(&self, row: Row) {
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(row);
    }

    /// A step of the Senpai-style controller: what it did (`event`), the limit after it
    /// (`limit_mb`) and the stall over its interval (`stall_pct`).
    fn senpai_step(&self, step: &senpai::Step) {
        let (rss, anon) = sys::rss_mb();
        let row = Row {
            t: self.elapsed_s(),
            event: step.event,
            severity_s: None,
            cache_mb: self.cache().bytes() as f64 / 1048576.0,
            free_mb: None,
            disk_queue: None,
            rss_mb: rss,
            anon_mb: anon,
            queries: self.queries.load(Ordering::Relaxed),
            reaction_ms: None,
            released_mb: None,
            limit_mb: Some(step.limit as f64 / 1048576.0),
            group_mb: None,
            stall_pct: Some(step.stall * 100.0),
        };
        self.push(row);
    }
}

/// The memory group this process is in (its v1 memory controller's line of /proc/self/cgroup).
pub fn own_memory_group() -> anyhow::Result<PathBuf> {
    let text =
        std::fs::read_to_string("/proc/self/cgroup").context("cannot read /proc/self/cgroup")?;
    for line in text.lines() {
        let mut f = line.splitn(3, ':');
        let (_, controllers, path) = (f.next(), f.next().unwrap_or(""), f.next().unwrap_or(""));
        if controllers.split(',').any(|c| c == "memory") {
            return Ok(Path::new(sys::MEMCG_V1_ROOT).join(path.trim_start_matches('/')));
        }
    }
    bail!("/proc/self/cgroup has no memory controller line (no cgroup v1 memory hierarchy)")
}

/// Renders a result's rows as the response a client would get, one JSON object per line
/// (what a web front end caches): the bytes a cache entry holds.
fn render(
    rows: &mut rusqlite::Rows<'_>,
    names: &[String],
    out: &mut Vec<u8>,
) -> rusqlite::Result<()> {
    use std::io::Write as _;
    while let Some(row) = rows.next()? {
        out.push(b'{');
        for (i, name) in names.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.push(b'"');
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b"\":");
            // Writing to a Vec cannot fail.
            let _ = match row.get_ref(i)? {
                ValueRef::Null => write!(out, "null"),
                ValueRef::Integer(v) => write!(out, "{v}"),
                ValueRef::Real(v) => write!(out, "{v}"),
                ValueRef::Text(t) | ValueRef::Blob(t) => {
                    out.push(b'"');
                    for &b in t {
                        if b == b'"' || b == b'\\' {
                            out.push(b'\\');
                        }
                        out.push(b);
                    }
                    out.push(b'"');
                    Ok(())
                }
            };
        }
        out.extend_from_slice(b"}\n");
    }
    Ok(())
}

/// Evaluates one query into its serialized result.
fn evaluate(db: &Connection, ty: &QueryType, version: u32) -> anyhow::Result<Vec<u8>> {
    let mut stmt = db
        .prepare_cached(ty.sql())
        .with_context(|| format!("query type {}: preparing", ty.name()))?;
    let names: Vec<String> = stmt.column_names().iter().map(|n| n.to_string()).collect();
    let params = ty.params(version);
    let mut rows = stmt
        .query(rusqlite::params_from_iter(params.iter()))
        .with_context(|| format!("query type {} version {version}", ty.name()))?;
    let mut out = Vec::new();
    render(&mut rows, &names, &mut out)
        .with_context(|| format!("query type {} version {version}: reading rows", ty.name()))?;
    Ok(out)
}

/// The adaptive controller (section 6.2.3): on each notification (S halved or doubled, or the
/// daemon's 1 s repeat while S < S_max), release rounds of a few MB at the S the page says, S
/// read again between rounds; a round at S_max lifts the hold so that the cache grows back.
/// The thread also wakes every 200 ms without a notification and runs the same rounds, so
/// that the hold is lifted soon after S is back at S_max (logged as a `release`).
fn adaptive_loop(
    shared: &Shared,
    client: &Client,
    s_max: f64,
    disk_ms: Option<f64>,
) -> anyhow::Result<()> {
    while !shared.stop.load(Ordering::Relaxed) {
        let n = client.wait(Some(Duration::from_millis(200)))?;
        let first = client.current();
        let reaction = (n > 0).then(|| monotonic_ns().saturating_sub(first.time) as f64 / 1e6);
        let mut total = Released::default();
        loop {
            let r = client.current();
            let paging = PagingCost {
                disk_service_s: disk_ms.unwrap_or(r.disk_service_ms) / 1e3,
                disk_queue: r.disk_queue,
            };
            let round = shared
                .cache()
                .release_round(r.severity_s, s_max, &paging, monotonic_ns());
            total.entries += round.entries;
            total.bytes += round.bytes;
            if round.bytes > 0 {
                trim();
            }
            if !round.more || shared.stop.load(Ordering::Relaxed) {
                break;
            }
        }
        if n > 0 || total.bytes > 0 {
            // "release": a round on the periodic check, between notifications.
            let event = if n > 0 { "notification" } else { "release" };
            shared.event(event, reaction, &total, Some(first.severity_s));
        }
    }
    Ok(())
}

/// `some avg10` of a PSI file, percent.
fn psi_some_avg10(path: &Path) -> anyhow::Result<f64> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    text.lines()
        .find(|l| l.starts_with("some "))
        .and_then(|l| l.split_whitespace().find_map(|w| w.strip_prefix("avg10=")))
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("{}: no `some avg10=` in {text:?}", path.display()))
}

/// The anchors' controllers on the group's PSI, sampled every 100 ms.
fn psi_loop(shared: &Shared, pressure: &Path, mode: CacheMode) -> anyhow::Result<()> {
    let mut last_act: Option<Instant> = None;
    let mut last_level = 0u8;
    while !shared.stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        let avg10 = psi_some_avg10(pressure)?;
        let now = monotonic_ns();
        match mode {
            CacheMode::Psi(_) => {
                let level = if avg10 >= 40.0 {
                    2
                } else {
                    u8::from(avg10 >= 10.0)
                };
                let since = last_act.map_or(Duration::MAX, |t| t.elapsed());
                if level > 0 && (level > last_level || since >= PSI_HOLD) {
                    let r = {
                        let mut c = shared.cache();
                        let cap = if level == 2 { 0 } else { c.bytes() / 2 };
                        c.hold_at(Some(cap), now)
                    };
                    trim();
                    last_act = Some(Instant::now());
                    shared.event(
                        if level == 2 {
                            "psi_critical"
                        } else {
                            "psi_low"
                        },
                        None,
                        &r,
                        None,
                    );
                } else if level == 0 && last_act.is_some() && since >= PSI_HOLD {
                    shared.cache().hold_at(None, now);
                    last_act = None;
                    shared.event("psi_release_hold", None, &Released::default(), None);
                }
                last_level = level;
            }
            CacheMode::Halve(_) => {
                let since = last_act.map_or(Duration::MAX, |t| t.elapsed());
                if avg10 >= 10.0 && since >= HALVE_INTERVAL {
                    let r = {
                        let mut c = shared.cache();
                        let cap = c.bytes() / 2;
                        c.hold_at(Some(cap), now)
                    };
                    trim();
                    last_act = Some(Instant::now());
                    shared.event("halve", None, &r, None);
                }
            }
            _ => return Ok(()),
        }
    }
    Ok(())
}

/// Every 100 ms: S, the cache, the group's free memory, the disk queue, RSS.
fn sample_loop(shared: &Shared, client: Option<&Client>, group: Option<&Path>) -> Vec<Row> {
    let mut rows = Vec::new();
    while !shared.stop.load(Ordering::Relaxed) {
        let record = client.map(Client::current);
        let (rss, anon) = sys::rss_mb();
        let free = group
            .and_then(sys::group_free_bytes)
            .or(record.map(|r| r.free_bytes))
            .map(|b| b as f64 / 1048576.0);
        let (limit, usage) = group.map_or((None, None), sys::group_limit_usage);
        rows.push(Row {
            t: shared.elapsed_s(),
            event: "sample",
            severity_s: record.map(|r| r.severity_s),
            cache_mb: shared.cache().bytes() as f64 / 1048576.0,
            free_mb: free,
            disk_queue: record.map(|r| r.disk_queue),
            rss_mb: rss,
            anon_mb: anon,
            queries: shared.queries.load(Ordering::Relaxed),
            reaction_ms: None,
            released_mb: None,
            limit_mb: limit.map(|b| b as f64 / 1048576.0),
            group_mb: usage.map(|b| b as f64 / 1048576.0),
            stall_pct: None,
        });
        std::thread::sleep(Duration::from_millis(100));
    }
    rows
}

fn write_timeline(path: &Path, rows: &[Row]) -> anyhow::Result<()> {
    use std::fmt::Write as _;
    let mut s = String::from(
        "time_s,event,severity_s,cache_mb,free_mb,disk_queue,rss_mb,anon_mb,queries,reaction_ms,released_mb,limit_mb,group_mb,stall_pct\n",
    );
    let o = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.3}"));
    for r in rows {
        let _ = writeln!(
            s,
            "{:.3},{},{},{:.3},{},{},{:.3},{:.3},{},{},{},{},{},{}",
            r.t,
            r.event,
            o(r.severity_s),
            r.cache_mb,
            o(r.free_mb),
            o(r.disk_queue),
            r.rss_mb,
            r.anon_mb,
            r.queries,
            o(r.reaction_ms),
            o(r.released_mb),
            o(r.limit_mb),
            o(r.group_mb),
            o(r.stall_pct)
        );
    }
    std::fs::write(path, s).with_context(|| format!("cannot write the timeline {}", path.display()))
}

pub fn run(cfg: &RunConfig) -> anyhow::Result<RunReport> {
    if !(cfg.alpha.is_finite() && (0.0..=3.0).contains(&cfg.alpha)) {
        bail!("--alpha {}: must be between 0 and 3", cfg.alpha);
    }
    let db_bytes = std::fs::metadata(&cfg.db)
        .with_context(|| {
            format!(
                "cannot open the database {} (run populate first?)",
                cfg.db.display()
            )
        })?
        .len();
    let db = Connection::open_with_flags(
        &cfg.db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .with_context(|| format!("cannot open the database {}", cfg.db.display()))?;
    // The whole file mapped: SQLite reads its pages through the mapping instead of read()
    // into its own cache, so the database's pages are mapped page cache, which the platform's
    // DAMON scheme leaves alone (it drops idle *unmapped* cache after about a minute). A
    // small page cache of SQLite's own: the result cache is the cache under study.
    db.execute_batch(&format!(
        "PRAGMA mmap_size = {}; PRAGMA cache_size = -2048;",
        db_bytes + (1 << 20)
    ))
    .with_context(|| format!("{}: setting mmap_size", cfg.db.display()))?;
    db.set_prepared_statement_cache_capacity(64);
    let qtypes = types();
    // Refuse a file that is not this program's database before anything is timed.
    db.query_row("SELECT COUNT(*) FROM airports", [], |r| r.get::<_, i64>(0))
        .with_context(|| {
            format!(
                "{} is not a query-cache database (populate makes one)",
                cfg.db.display()
            )
        })?;

    let group = match &cfg.domain {
        Some(d) => Some(d.clone()),
        None => own_memory_group().ok(),
    };
    let group_dir = group
        .as_deref()
        .filter(|g| g.join("memory.usage_in_bytes").is_file());
    let client = match &cfg.socket {
        Some(socket) => {
            let g =
                group_dir.with_context(|| {
                    format!(
                    "--socket given but this process's memory group {} is not a cgroup v1 group \
                     memd could govern (run it under `antsched mem run`, or pass --domain)",
                    group.as_deref().map_or("(none)".into(), |g| g.display().to_string())
                )
                })?;
            Some(Arc::new(
                antsched_memd::connect_group(socket, g).with_context(|| {
                    format!(
                        "cannot subscribe to memd's domain {} at {}",
                        g.display(),
                        socket.display()
                    )
                })?,
            ))
        }
        None => None,
    };
    let pressure = match cfg.mode {
        CacheMode::Psi(_) | CacheMode::Halve(_) => {
            let g = group_dir.context("psi and halve read the memory group's PSI: run under `antsched mem run` or pass --domain")?;
            Some(antsched_memd::pressure_twin(g).with_context(|| {
                format!(
                    "{}: no cgroup2 twin with memory.pressure (antsched mem run makes one)",
                    g.display()
                )
            })?)
        }
        _ => None,
    };
    let senpai_group = match cfg.mode {
        CacheMode::Senpai(_) => {
            let g = group_dir.context(
                "senpai steps the memory group's limit: run under `antsched mem run` or pass --domain",
            )?;
            let group = senpai::group_of(g)?;
            eprintln!(
                "query-cache: senpai on {} every {:.1} s (stall target {:.2}%, step {:.0}%): {}",
                g.display(),
                cfg.senpai.interval.as_secs_f64(),
                cfg.senpai.target * 100.0,
                cfg.senpai.step * 100.0,
                senpai::NO_SWAP_NOTE
            );
            Some(group)
        }
        _ => None,
    };
    if cfg.mode == CacheMode::Adaptive && client.is_none() {
        eprintln!("query-cache: adaptive without --socket: no one tells the cache S, so it grows without bound");
    }

    let config = match cfg.mode {
        CacheMode::Fixed(b) => CacheConfig {
            max_bytes: Some(b),
            adaptive: false,
            round_bytes: cfg.round_bytes,
            ..Default::default()
        },
        CacheMode::Adaptive => CacheConfig {
            max_bytes: None,
            adaptive: true,
            round_bytes: cfg.round_bytes,
            ..Default::default()
        },
        CacheMode::Psi(b) | CacheMode::Halve(b) | CacheMode::Senpai(b) => CacheConfig {
            max_bytes: Some(b),
            adaptive: false,
            round_bytes: cfg.round_bytes,
            ..Default::default()
        },
    };

    // Warm: the database read once through a mapping of our own, which stays for the run so
    // its pages stay mapped.
    let t = Instant::now();
    let map = Mmap::file(&cfg.db)?;
    if cfg.warm {
        map.touch();
    }
    let warm_s = t.elapsed().as_secs_f64();

    let shared = Arc::new(Shared {
        cache: Mutex::new(ResultCache::new(config)),
        queries: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        events: Mutex::new(Vec::new()),
        start: monotonic_ns(),
    });
    let s_max = antsched_mem::SeverityConfig::default().s_max;
    let controller = match (cfg.mode, &client, &pressure) {
        (CacheMode::Adaptive, Some(c), _) => {
            let (sh, c, disk_ms) = (shared.clone(), c.clone(), cfg.paging_disk_ms);
            Some(
                std::thread::Builder::new()
                    .name("adaptive".into())
                    .spawn(move || adaptive_loop(&sh, &c, s_max, disk_ms))?,
            )
        }
        (CacheMode::Psi(_) | CacheMode::Halve(_), _, Some(p)) => {
            let (sh, p, mode) = (shared.clone(), p.clone(), cfg.mode);
            Some(
                std::thread::Builder::new()
                    .name("psi".into())
                    .spawn(move || psi_loop(&sh, &p, mode))?,
            )
        }
        _ => None,
    };
    let senpai_thread = match &senpai_group {
        Some(g) => {
            let (sh, g, params) = (shared.clone(), g.clone(), cfg.senpai);
            Some(
                std::thread::Builder::new()
                    .name("senpai".into())
                    .spawn(move || senpai::control(&g, &params, &sh.stop, |s| sh.senpai_step(s)))?,
            )
        }
        None => None,
    };
    let sampler = {
        let (sh, c, g) = (
            shared.clone(),
            client.clone(),
            group_dir.map(Path::to_path_buf),
        );
        std::thread::Builder::new()
            .name("sampler".into())
            .spawn(move || sample_loop(&sh, c.as_deref(), g.as_deref()))?
    };

    let mut mix = Mix::new(qtypes.len(), cfg.alpha, cfg.seed);
    let mut seen = vec![0u32; qtypes.len() * VERSIONS as usize];
    let mut eval_sum = vec![(0.0f64, 0u64); qtypes.len()];
    let (mut hits, mut evaluated, mut checksum) = (0u64, 0u64, 0u64);
    let mut hog: Option<std::process::Child> = None;
    let mut hog_exit = None;
    let started = Instant::now();
    let mut completed = true;
    let mut done = 0u64;
    let mut evicted = 0u64;
    let result: anyhow::Result<()> = (|| {
        for i in 0..cfg.queries {
            if let Some(limit) = cfg.time_limit {
                if started.elapsed() >= limit {
                    completed = false;
                    break;
                }
            }
            if let (Some(h), None) = (&cfg.hog, &hog) {
                if started.elapsed().as_secs_f64() >= h.start_s {
                    hog = Some(sys::spawn_hog(h)?);
                    shared.event("hog_start", None, &Released::default(), None);
                }
            }
            let q = mix.next_query();
            let key = q.key();
            let n = &mut seen[key as usize];
            *n = n.saturating_add(1);
            let count = *n;
            let now = monotonic_ns();
            {
                let mut c = shared.cache();
                if let Some(v) = c.get(key, now) {
                    // Reading the result, as sending it to the client would.
                    checksum =
                        checksum.wrapping_add(v.iter().step_by(64).map(|&b| b as u64).sum::<u64>());
                    hits += 1;
                    shared.queries.store(i + 1, Ordering::Relaxed);
                    done = i + 1;
                    continue;
                }
            }
            let ty = &qtypes[q.ty as usize];
            let t0 = Instant::now();
            let value = evaluate(&db, ty, q.version)?;
            let cost = t0.elapsed().as_secs_f64();
            evaluated += 1;
            eval_sum[q.ty as usize].0 += cost;
            eval_sum[q.ty as usize].1 += 1;
            if !matches!(cfg.mode, CacheMode::Fixed(0)) {
                // Reuse probability from the observed frequency: a query asked n times
                // is taken to come again with probability n / (n + 1).
                let reuse_p = count as f64 / (count as f64 + 1.0);
                let entry = EntryCost {
                    free_cost_s: 0.0,
                    regen_cost_s: cost,
                    reuse_p,
                };
                // Evicted results are freed at once; their pages go back to the kernel a
                // round's worth at a time: results of other sizes do not reuse the holes
                // they leave, which without a trim kept a fixed 50 MB cache's process at
                // 77 MB of anonymous memory.
                evicted += shared
                    .cache()
                    .insert(key, value, entry, monotonic_ns())
                    .bytes;
                if evicted >= cfg.round_bytes {
                    trim();
                    evicted = 0;
                }
            }
            shared.queries.store(i + 1, Ordering::Relaxed);
            done = i + 1;
        }
        Ok(())
    })();
    let runtime_s = started.elapsed().as_secs_f64();
    shared.stop.store(true, Ordering::Relaxed);
    if let Some(mut h) = hog.take() {
        hog_exit = Some(match h.try_wait() {
            Ok(Some(status)) => format!("died before the end: {status}"),
            _ => {
                let _ = h.kill();
                let _ = h.wait();
                "killed at the end".to_string()
            }
        });
    }
    let rows = sampler.join().unwrap_or_default();
    if let Some(c) = controller {
        match c.join() {
            Ok(r) => r.context("the cache's controller failed")?,
            Err(_) => bail!("the cache's controller panicked"),
        }
    }
    let senpai_summary = match senpai_thread {
        Some(t) => match t.join() {
            Ok(r) => Some(r.context("the Senpai-style controller failed")?),
            Err(_) => bail!("the Senpai-style controller panicked"),
        },
        None => None,
    };
    result?;
    drop(map);
    std::hint::black_box(checksum);

    let mut events = std::mem::take(&mut *shared.events.lock().unwrap_or_else(|p| p.into_inner()));
    let reactions: Vec<f64> = events.iter().filter_map(|e| e.reaction_ms).collect();
    let released: f64 = events
        .iter()
        .filter_map(|e| e.released_mb)
        .fold(0.0, |a, b| a + b);
    let notifications = events.iter().filter(|e| e.event == "notification").count() as u64;
    let cache_samples: Vec<f64> = rows.iter().map(|r| r.cache_mb).collect();
    let peak_anon = rows.iter().map(|r| r.anon_mb).fold(0.0, f64::max);
    if let Some(path) = &cfg.timeline {
        events.extend(rows.iter().cloned());
        events.sort_by(|a, b| a.t.total_cmp(&b.t));
        write_timeline(path, &events)?;
    }
    let type_means: Vec<f64> = eval_sum
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| s / *n as f64 * 1e3)
        .collect();
    let cache = shared.cache();
    let report = RunReport {
        policy: cfg.mode.name(),
        queries: cfg.queries,
        completed_queries: done,
        completed: completed && done == cfg.queries,
        runtime_s,
        hits,
        hit_rate: hits as f64 / done.max(1) as f64,
        evaluated,
        eval_ms_mean: eval_sum.iter().map(|e| e.0).sum::<f64>() / evaluated.max(1) as f64 * 1e3,
        eval_ms_type_min: type_means.iter().copied().reduce(f64::min).unwrap_or(0.0),
        eval_ms_type_max: type_means.iter().copied().fold(0.0, f64::max),
        peak_rss_mb: sys::peak_rss_mb()
            .unwrap_or_else(|| rows.iter().map(|r| r.rss_mb).fold(0.0, f64::max)),
        peak_anon_mb: peak_anon,
        group_peak_mb: group_dir
            .and_then(sys::group_peak_bytes)
            .map(|b| b as f64 / 1048576.0),
        peak_cache_mb: cache_samples
            .iter()
            .copied()
            .fold(cache.bytes() as f64 / 1048576.0, f64::max),
        mean_cache_mb: cache_samples.iter().sum::<f64>() / cache_samples.len().max(1) as f64,
        cache_entries_end: cache.len(),
        notifications,
        reaction: Reaction {
            count: reactions.len(),
            mean_ms: (!reactions.is_empty())
                .then(|| reactions.iter().sum::<f64>() / reactions.len() as f64),
            max_ms: reactions.iter().copied().reduce(f64::max),
        },
        released_mb: released,
        db_mb: db_bytes as f64 / 1048576.0,
        warm_s,
        seed: cfg.seed,
        alpha: cfg.alpha,
        types: qtypes.len(),
        versions: VERSIONS,
        domain: group_dir.map(|g| g.display().to_string()),
        memd: client.is_some(),
        hog: cfg.hog.clone(),
        hog_exit,
        mean_group_mb: {
            let g: Vec<f64> = rows.iter().filter_map(|r| r.group_mb).collect();
            (!g.is_empty()).then(|| g.iter().sum::<f64>() / g.len() as f64)
        },
        senpai: senpai_summary,
    };
    drop(cache);
    if let Some(path) = &cfg.json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(report)
}
