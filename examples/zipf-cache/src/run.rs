//! A run: requests served from the cache for a set time, a controller thread that follows memd,
//! and a sampler that records the cache every 100 ms.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use antsched_core::Nanos;
use antsched_mem::cache::{reuse_by_frequency, AdaptiveCache, CacheConfig, EntryCost};
use antsched_mem::cost::PagingCost;
use antsched_mem::sim::{Popularity, Zipf};
use antsched_memd::{monotonic_ns, Client};
use anyhow::{bail, Context};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::slab::{fill, Slab, VALUE_BYTES};

/// What a miss costs, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum MissWork {
    /// Sleep C_r: a regeneration that waits (a database or a remote fetch). The default: the
    /// two programs share two cores with the rest of the machine, and a sleep takes its time
    /// whatever the load, so the programs meet through memory alone, not through the CPU
    /// scheduler.
    Sleep,
    /// Hash the value again and again until C_r has passed on the monotonic clock: real CPU
    /// work, whose wall time is still C_r however busy the cores are (the clock calibrates it).
    Spin,
}

pub struct RunConfig {
    pub keys: u64,
    pub alpha: f64,
    pub popularity: Popularity,
    pub miss_ms: f64,
    pub miss_work: MissWork,
    pub duration: Duration,
    /// memd's socket; without it the cache is never told S and grows without bound (or to
    /// `fixed_bytes`).
    pub socket: Option<PathBuf>,
    /// The memory group (v1 cgroup directory) whose domain to follow, or `machine`; default:
    /// this process's group.
    pub domain: Option<PathBuf>,
    /// memd's S_max (its `--s-max`): a round at S_max lifts the cache's hold.
    pub s_max: f64,
    /// C_disk of the cost rule, ms, in place of memd's (which measures a block device).
    pub paging_disk_ms: Option<f64>,
    /// A fixed capacity instead of the adaptive policy.
    pub fixed_bytes: Option<u64>,
    pub round_bytes: u64,
    /// Serve only once this file exists (so that a script can set the memory nice first).
    pub wait_file: Option<PathBuf>,
    pub seed: u64,
    pub window: Duration,
    pub json: Option<PathBuf>,
    pub timeline: Option<PathBuf>,
}

/// The cache: the policy over keys, and each key's slot in the slab.
pub struct Cache {
    policy: AdaptiveCache<u32>,
    slots: FxHashMap<u32, u32>,
    slab: Slab,
}

impl Cache {
    pub fn new(config: CacheConfig, capacity: u32) -> anyhow::Result<Self> {
        Ok(Self {
            policy: AdaptiveCache::new(config),
            slots: FxHashMap::default(),
            slab: Slab::new(capacity)?,
        })
    }

    pub fn bytes(&self) -> u64 {
        self.policy.bytes()
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// A lookup: the value, its last access refreshed.
    pub fn get(&mut self, key: u32, now: Nanos) -> Option<&[u8]> {
        if self.policy.get(&key, now) {
            let slot = self.slots[&key];
            Some(self.slab.get(slot))
        } else {
            None
        }
    }

    /// Makes `key`'s value and caches it if the policy admits it, evicting in the release
    /// order to make room (those slots are reused, not returned). False when not cached.
    pub fn insert(&mut self, key: u32, cost: EntryCost, now: Nanos) -> bool {
        let bytes = VALUE_BYTES as u64;
        if !self.policy.admits(bytes) {
            return false;
        }
        for victim in self.policy.evict_for(bytes, now) {
            if let Some(s) = self.slots.remove(&victim) {
                self.slab.recycle(s);
            }
        }
        let Some(slot) = self.slab.alloc() else {
            return false;
        };
        fill(key, self.slab.get_mut(slot));
        if let Some(old) = self.slots.insert(key, slot) {
            self.slab.recycle(old);
        }
        self.policy.insert(key, bytes, cost, now);
        debug_assert_eq!(self.policy.bytes(), self.slots.len() as u64 * bytes);
        true
    }

    /// One release round of the cost rule at `severity_s`; the released values' pages go back
    /// to the kernel. Returns the bytes released and whether there is more to release.
    pub fn release_round(
        &mut self,
        severity_s: f64,
        s_max: f64,
        paging: &PagingCost,
        now: Nanos,
    ) -> (u64, bool) {
        let round = self.policy.release_round(severity_s, s_max, paging, now);
        for k in &round.released {
            if let Some(s) = self.slots.remove(k) {
                self.slab.release(s);
            }
        }
        (round.bytes, round.more)
    }
}

/// Hit rate and cache over a span of the run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Window {
    pub start_s: f64,
    pub end_s: f64,
    pub queries: u64,
    pub hits: u64,
    pub hit_rate: f64,
    pub cache_mb_mean: f64,
    pub rss_mb_mean: f64,
    /// The mean S this process was told (memd divides the domain's by its nice's weight).
    pub severity_s_mean: Option<f64>,
}

/// What a run measured: the JSON `run --json` writes.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub pid: u32,
    pub policy: String,
    pub keys: u64,
    pub alpha: f64,
    pub popularity: Popularity,
    pub miss_ms: f64,
    pub miss_work: MissWork,
    pub duration_s: f64,
    pub queries: u64,
    pub hits: u64,
    pub hit_rate: f64,
    pub queries_per_s: f64,
    /// The mean wall time of a miss's work, ms (C_r as it came out).
    pub miss_ms_measured: f64,
    pub peak_cache_mb: f64,
    pub cache_mb_mean: f64,
    /// The second half of the run, where the equilibrium is measured.
    pub second_half: Window,
    pub windows: Vec<Window>,
    pub notifications: u64,
    pub rounds: u64,
    pub released_mb: f64,
    pub memd: bool,
    pub domain: Option<String>,
    pub s_max: f64,
    pub paging_disk_ms: Option<f64>,
    pub seed: u64,
}

#[derive(Clone, Copy, Debug)]
struct Sample {
    t: f64,
    severity_s: Option<f64>,
    cache_mb: f64,
    entries: usize,
    rss_mb: f64,
    queries: u64,
    hits: u64,
}

struct Shared {
    cache: Mutex<Cache>,
    queries: AtomicU64,
    hits: AtomicU64,
    /// The paging cost per second of holding a page at the S last told (f64 bits), for the
    /// frequency pricing; u64::MAX until the first notification.
    paging_per_s: AtomicU64,
    stop: AtomicBool,
    start: Instant,
}

impl Shared {
    fn cache(&self) -> MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn paging_per_s(&self) -> Option<f64> {
        let bits = self.paging_per_s.load(Ordering::Relaxed);
        (bits != u64::MAX).then(|| f64::from_bits(bits))
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
            return Ok(Path::new("/sys/fs/cgroup/memory").join(path.trim_start_matches('/')));
        }
    }
    bail!("/proc/self/cgroup has no memory controller line (no cgroup v1 memory hierarchy)")
}

fn rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// The controller (section 6.2.3, as examples/query-cache's adaptive policy): on each
/// notification, and every 200 ms without one, release rounds at the S the page says (this
/// process's S: memd has divided it by the weight of its nice), S read again between rounds.
/// Returns (notifications, rounds, bytes released).
fn adaptive_loop(
    shared: &Shared,
    client: &Client,
    s_max: f64,
    disk_ms: Option<f64>,
) -> anyhow::Result<(u64, u64, u64)> {
    let (mut notifications, mut rounds, mut released) = (0u64, 0u64, 0u64);
    while !shared.stop.load(Ordering::Relaxed) {
        let n = client.wait(Some(Duration::from_millis(200)))?;
        notifications += u64::from(n > 0);
        loop {
            let r = client.current();
            let paging = PagingCost {
                disk_service_s: disk_ms.unwrap_or(r.disk_service_ms) / 1e3,
                disk_queue: r.disk_queue,
            };
            shared
                .paging_per_s
                .store(paging.amortized(r.severity_s).to_bits(), Ordering::Relaxed);
            let (bytes, more) =
                shared
                    .cache()
                    .release_round(r.severity_s, s_max, &paging, monotonic_ns());
            rounds += 1;
            released += bytes;
            if !more || shared.stop.load(Ordering::Relaxed) {
                break;
            }
        }
    }
    Ok((notifications, rounds, released))
}

/// Every 100 ms a sample; each also goes to the timeline at once (flushed every second), so
/// that a run the OOM killer ends leaves its timeline up to then.
fn sample_loop(
    shared: &Shared,
    client: Option<&Client>,
    mut timeline: Option<std::io::BufWriter<std::fs::File>>,
) -> Vec<Sample> {
    use std::io::Write as _;
    let mut rows = Vec::new();
    if let Some(t) = &mut timeline {
        let _ = t.write_all(TIMELINE_HEADER.as_bytes());
    }
    while !shared.stop.load(Ordering::Relaxed) {
        let (cache_mb, entries) = {
            let c = shared.cache();
            (c.bytes() as f64 / 1048576.0, c.len())
        };
        rows.push(Sample {
            t: shared.start.elapsed().as_secs_f64(),
            severity_s: client.map(|c| c.current().severity_s),
            cache_mb,
            entries,
            rss_mb: rss_mb(),
            queries: shared.queries.load(Ordering::Relaxed),
            hits: shared.hits.load(Ordering::Relaxed),
        });
        if let Some(t) = &mut timeline {
            let _ = t.write_all(timeline_row(rows.last().expect("just pushed")).as_bytes());
            if rows.len() % 10 == 0 {
                let _ = t.flush();
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    rows
}

/// Hit rate over [a, b] from the cumulative counts of the samples, and the means of the rest.
fn window(rows: &[Sample], a: f64, b: f64) -> Window {
    let inside: Vec<&Sample> = rows.iter().filter(|r| r.t >= a && r.t <= b).collect();
    let (Some(first), Some(last)) = (inside.first(), inside.last()) else {
        return Window {
            start_s: a,
            end_s: b,
            ..Default::default()
        };
    };
    let n = inside.len() as f64;
    let queries = last.queries - first.queries;
    let hits = last.hits - first.hits;
    let s: Vec<f64> = inside.iter().filter_map(|r| r.severity_s).collect();
    Window {
        start_s: first.t,
        end_s: last.t,
        queries,
        hits,
        hit_rate: hits as f64 / queries.max(1) as f64,
        cache_mb_mean: inside.iter().map(|r| r.cache_mb).sum::<f64>() / n,
        rss_mb_mean: inside.iter().map(|r| r.rss_mb).sum::<f64>() / n,
        severity_s_mean: (!s.is_empty()).then(|| s.iter().sum::<f64>() / s.len() as f64),
    }
}

const TIMELINE_HEADER: &str = "time_s,severity_s,cache_mb,entries,rss_mb,queries,hits\n";

fn timeline_row(r: &Sample) -> String {
    format!(
        "{:.3},{},{:.3},{},{:.3},{},{}\n",
        r.t,
        r.severity_s.map_or(String::new(), |v| format!("{v:.4}")),
        r.cache_mb,
        r.entries,
        r.rss_mb,
        r.queries,
        r.hits
    )
}

fn write_timeline(path: &Path, rows: &[Sample]) -> anyhow::Result<()> {
    let mut s = String::from(TIMELINE_HEADER);
    for r in rows {
        s.push_str(&timeline_row(r));
    }
    std::fs::write(path, s).with_context(|| format!("cannot write the timeline {}", path.display()))
}

/// Busy work until `d` has passed: the value hashed again and again.
fn spin(d: Duration, key: u32) -> u64 {
    let t = Instant::now();
    let mut h = u64::from(key) | 1;
    while t.elapsed() < d {
        for _ in 0..256 {
            h ^= h << 13;
            h ^= h >> 7;
            h ^= h << 17;
        }
    }
    h
}

pub fn check(cfg: &RunConfig) -> anyhow::Result<()> {
    if !(cfg.alpha.is_finite() && cfg.alpha > 0.0 && cfg.alpha < 3.0) {
        bail!("--alpha {}: must be above 0 and below 3", cfg.alpha);
    }
    if cfg.popularity == Popularity::PowerLaw && cfg.alpha >= 1.0 {
        bail!(
            "--alpha {}: must be below 1 with --popularity power-law",
            cfg.alpha
        );
    }
    if cfg.keys == 0 || cfg.keys > u32::MAX as u64 {
        bail!("--keys {}: must be between 1 and {}", cfg.keys, u32::MAX);
    }
    if !(cfg.miss_ms.is_finite() && cfg.miss_ms > 0.0) {
        bail!("--miss-ms {}: must be more than 0", cfg.miss_ms);
    }
    if cfg.duration.is_zero() {
        bail!("--duration: must be more than 0");
    }
    if cfg.window.is_zero() {
        bail!("--window: must be more than 0");
    }
    if !(cfg.s_max.is_finite() && cfg.s_max >= 5.0) {
        bail!(
            "--s-max {}: must be at least S_min, 5 s (and match memd's --s-max)",
            cfg.s_max
        );
    }
    if let Some(ms) = cfg.paging_disk_ms {
        if !(ms.is_finite() && ms > 0.0) {
            bail!("--paging-disk-ms {ms}: must be more than 0");
        }
    }
    if cfg.round_bytes < VALUE_BYTES as u64 {
        bail!("--round-mb: a round must release at least one 4 KiB value");
    }
    Ok(())
}

pub fn run(cfg: &RunConfig) -> anyhow::Result<Report> {
    check(cfg)?;
    let group = match &cfg.domain {
        Some(d) if d.as_os_str() == antsched_memd::MACHINE => None,
        Some(d) => Some(d.clone()),
        None => own_memory_group().ok(),
    };
    let group_dir = group
        .as_deref()
        .filter(|g| g.join("memory.usage_in_bytes").is_file());
    let machine = cfg.domain.as_deref() == Some(Path::new(antsched_memd::MACHINE));
    let client = match &cfg.socket {
        Some(socket) if machine => Some(Arc::new(antsched_memd::connect(socket).with_context(
            || {
                format!(
                    "cannot subscribe to memd's machine domain at {}",
                    socket.display()
                )
            },
        )?)),
        Some(socket) => {
            let g = group_dir.with_context(|| {
                format!(
                    "--socket given but this process's memory group {} is not a cgroup v1 group \
                     memd could govern (run it under `antsched mem run`, or pass --domain)",
                    group
                        .as_deref()
                        .map_or("(none)".into(), |g| g.display().to_string())
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
    if client.is_none() && cfg.fixed_bytes.is_none() {
        eprintln!("zipf-cache: adaptive without --socket: no one tells the cache S, so it grows without bound");
    }
    let config = CacheConfig {
        max_bytes: cfg.fixed_bytes,
        adaptive: cfg.fixed_bytes.is_none(),
        round_bytes: cfg.round_bytes,
        ..Default::default()
    };
    // Address space for every key's value (no memory until written), at most 64 GiB.
    let capacity = cfg.keys.min(16 << 20) as u32;
    let cache = Cache::new(config, capacity)?;
    // Both outputs are opened before the run, so that a path that cannot be written is an
    // error now rather than after it.
    let timeline = match &cfg.timeline {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p)
                .with_context(|| format!("cannot write the timeline {}", p.display()))?,
        )),
        None => None,
    };
    let json = match &cfg.json {
        Some(p) => Some(
            std::fs::File::create(p).with_context(|| format!("cannot write {}", p.display()))?,
        ),
        None => None,
    };
    if let Some(f) = &cfg.wait_file {
        eprintln!(
            "zipf-cache: pid {} waiting for {}",
            std::process::id(),
            f.display()
        );
        while !f.exists() {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    // Sleeps of a fraction of a millisecond: the default timer slack (50 us) would add a
    // quarter to each.
    // SAFETY: prctl on the calling thread with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000u64, 0, 0, 0) };
    let shared = Arc::new(Shared {
        cache: Mutex::new(cache),
        queries: AtomicU64::new(0),
        hits: AtomicU64::new(0),
        paging_per_s: AtomicU64::new(u64::MAX),
        stop: AtomicBool::new(false),
        start: Instant::now(),
    });
    let controller = match &client {
        Some(c) if cfg.fixed_bytes.is_none() => {
            let (sh, c, s_max, disk) = (shared.clone(), c.clone(), cfg.s_max, cfg.paging_disk_ms);
            Some(
                std::thread::Builder::new()
                    .name("adaptive".into())
                    .spawn(move || adaptive_loop(&sh, &c, s_max, disk))?,
            )
        }
        _ => None,
    };
    let sampler = {
        let (sh, c) = (shared.clone(), client.clone());
        std::thread::Builder::new()
            .name("sampler".into())
            .spawn(move || sample_loop(&sh, c.as_deref(), timeline))?
    };

    let zipf = Zipf::with(cfg.keys, cfg.alpha, cfg.popularity);
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut asks = vec![0u32; cfg.keys as usize];
    let miss = Duration::from_secs_f64(cfg.miss_ms / 1e3);
    let regen_s = cfg.miss_ms / 1e3;
    let (mut queries, mut hits, mut misses) = (0u64, 0u64, 0u64);
    let mut miss_time = Duration::ZERO;
    let mut checksum = 0u64;
    let start = shared.start;
    while start.elapsed() < cfg.duration {
        // A controller that stopped (memd dropped us) would let the cache grow without
        // bound: stop serving and report why.
        if queries % 1024 == 0 && controller.as_ref().is_some_and(|c| c.is_finished()) {
            break;
        }
        let key = zipf.sample(&mut rng) as u32;
        let n = &mut asks[key as usize];
        let before = *n;
        *n = n.saturating_add(1);
        queries += 1;
        let now = monotonic_ns();
        let hit = {
            let mut c = shared.cache();
            match c.get(key, now) {
                Some(v) => {
                    // Reading the value, as sending it would.
                    checksum = checksum
                        .wrapping_add(v.iter().step_by(64).map(|&b| u64::from(b)).sum::<u64>());
                    true
                }
                None => false,
            }
        };
        if hit {
            hits += 1;
        } else {
            misses += 1;
            let t = Instant::now();
            match cfg.miss_work {
                MissWork::Sleep => std::thread::sleep(miss),
                MissWork::Spin => checksum = checksum.wrapping_add(spin(miss, key)),
            }
            miss_time += t.elapsed();
            let life_s = start.elapsed().as_secs_f64();
            let cost = EntryCost {
                free_cost_s: 0.0,
                regen_cost_s: regen_s,
                reuse_p: reuse_by_frequency(
                    u64::from(before),
                    life_s,
                    regen_s,
                    shared.paging_per_s(),
                ),
            };
            shared.cache().insert(key, cost, monotonic_ns());
        }
        shared.queries.store(queries, Ordering::Relaxed);
        shared.hits.store(hits, Ordering::Relaxed);
    }
    let duration_s = start.elapsed().as_secs_f64();
    shared.stop.store(true, Ordering::Relaxed);
    std::hint::black_box(checksum);
    let mut rows = sampler.join().unwrap_or_default();
    let (notifications, rounds, released) = match controller {
        Some(c) => match c.join() {
            Ok(r) => r.context("the cache's controller failed")?,
            Err(_) => bail!("the cache's controller panicked"),
        },
        None => (0, 0, 0),
    };
    if duration_s + 0.5 < cfg.duration.as_secs_f64() {
        bail!("the cache's controller stopped before the run's end");
    }
    // The final counts, so that the last window ends where the run did.
    let (cache_mb, entries) = {
        let c = shared.cache();
        (c.bytes() as f64 / 1048576.0, c.len())
    };
    rows.push(Sample {
        t: duration_s,
        severity_s: client.as_ref().map(|c| c.current().severity_s),
        cache_mb,
        entries,
        rss_mb: rss_mb(),
        queries,
        hits,
    });
    if let Some(path) = &cfg.timeline {
        write_timeline(path, &rows)?;
    }
    let w = cfg.window.as_secs_f64();
    // Windows of the run as configured (the last sample lands a little after it).
    let span = cfg.duration.as_secs_f64();
    let windows: Vec<Window> = (0..)
        .map(|i| i as f64 * w)
        .take_while(|&a| a + 1e-6 < span)
        .map(|a| window(&rows, a, (a + w).min(duration_s)))
        .collect();
    let report = Report {
        pid: std::process::id(),
        policy: match cfg.fixed_bytes {
            Some(b) => format!("fixed:{:.0}M", b as f64 / 1048576.0),
            None => "adaptive".into(),
        },
        keys: cfg.keys,
        alpha: cfg.alpha,
        popularity: cfg.popularity,
        miss_ms: cfg.miss_ms,
        miss_work: cfg.miss_work,
        duration_s,
        queries,
        hits,
        hit_rate: hits as f64 / queries.max(1) as f64,
        queries_per_s: queries as f64 / duration_s,
        miss_ms_measured: miss_time.as_secs_f64() * 1e3 / misses.max(1) as f64,
        peak_cache_mb: rows.iter().map(|r| r.cache_mb).fold(0.0, f64::max),
        cache_mb_mean: rows.iter().map(|r| r.cache_mb).sum::<f64>() / rows.len() as f64,
        second_half: window(&rows, duration_s / 2.0, duration_s),
        windows,
        notifications,
        rounds,
        released_mb: released as f64 / 1048576.0,
        memd: client.is_some(),
        domain: group_dir.map(|g| g.display().to_string()),
        s_max: cfg.s_max,
        paging_disk_ms: cfg.paging_disk_ms,
        seed: cfg.seed,
    };
    if let (Some(mut file), Some(path)) = (json, &cfg.json) {
        use std::io::Write as _;
        let text = serde_json::to_string_pretty(&report)?;
        file.write_all((text + "\n").as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    /// Bytes are whole values; a fixed cache evicts to stay under its capacity; a round under
    /// pressure releases the values the cost rule says (a rarely asked one idle long) and
    /// keeps a fresh dear one.
    #[test]
    fn the_cache_holds_values_and_releases_what_the_rule_says() {
        let mut c = Cache::new(
            CacheConfig {
                max_bytes: Some(3 * VALUE_BYTES as u64),
                adaptive: false,
                ..Default::default()
            },
            16,
        )
        .unwrap();
        let cost = |p| EntryCost {
            free_cost_s: 0.0,
            regen_cost_s: 0.001,
            reuse_p: p,
        };
        for k in 0..5 {
            assert!(c.insert(k, cost(1.0), k as Nanos * S));
        }
        assert_eq!(c.len(), 3);
        assert_eq!(c.bytes(), 3 * VALUE_BYTES as u64);
        let mut v = vec![0; VALUE_BYTES];
        fill(4, &mut v);
        assert_eq!(c.get(4, 6 * S), Some(&v[..]));
        assert!(c.get(0, 6 * S).is_none());

        let mut a = Cache::new(CacheConfig::default(), 16).unwrap();
        a.insert(1, cost(0.01), 0);
        a.insert(2, cost(1.0), 99 * S);
        let paging = PagingCost {
            disk_service_s: 0.001,
            disk_queue: 1.0,
        };
        // At S = 10 s paging costs 2e-4 a second; key 1 is worth 1e-5 / 100 s, key 2
        // 1e-3 / 1 s.
        let (bytes, more) = a.release_round(10.0, 60.0, &paging, 100 * S);
        assert_eq!((bytes, more), (VALUE_BYTES as u64, false));
        assert!(a.get(1, 100 * S).is_none());
        assert!(a.get(2, 100 * S).is_some());
    }

    #[test]
    fn windows_count_hits_between_samples() {
        let s = |t: f64, q: u64, h: u64, mb: f64| Sample {
            t,
            severity_s: Some(20.0),
            cache_mb: mb,
            entries: 0,
            rss_mb: mb,
            queries: q,
            hits: h,
        };
        let rows = [
            s(0.0, 0, 0, 0.0),
            s(5.0, 100, 10, 2.0),
            s(10.0, 300, 110, 4.0),
        ];
        let w = window(&rows, 5.0, 10.0);
        assert_eq!((w.queries, w.hits), (200, 100));
        assert_eq!(w.hit_rate, 0.5);
        assert_eq!(w.cache_mb_mean, 3.0);
        assert_eq!(w.severity_s_mean, Some(20.0));
    }
}
