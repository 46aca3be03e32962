//! The processes of a scenario: what each touches in a step, and how each reacts to the
//! severity (section 4.7's tiers) or to the anchors' signals.

use antsched_core::Nanos;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashMap;

use super::engine::{secs, NONE, PAGE};
use super::scenario::{
    CacheSpec, HeapSpec, HogSpec, MallocSpec, ProcessKind, ProcessSpec, ZipfSpec,
};
use super::workload::{log_uniform, rng_for, Zipf};
use crate::cache::{reuse_by_frequency, AdaptiveCache, CacheConfig, EntryCost, ReleaseOrder};
use crate::cost::PagingCost;
use crate::nice::MemNice;
use crate::notify::{Notification, Notifier};
use crate::severity::SeverityConfig;

/// One page touched by a step. `data`: a page of the process's data file (clean, read back
/// from the file when dropped) rather than anonymous memory.
#[derive(Clone, Copy, Debug)]
pub struct Touch {
    pub vpage: u32,
    pub write: bool,
    pub data: bool,
}

/// A step: pages to touch, then CPU time.
#[derive(Clone, Debug, Default)]
pub struct Step {
    pub touches: Vec<Touch>,
    pub next: usize,
    pub cpu: Nanos,
}

/// Pages a hog or an allocator touches per step: a megabyte.
const CHUNK: u32 = 256;
/// References per step of a reference stream.
const BATCH: u32 = 64;

pub struct Proc {
    pub name: String,
    pub nice: MemNice,
    pub notifier: Notifier,
    pub vm: Vec<u32>,
    /// Entries of `vm` that are not [`NONE`] (resident or in swap), kept by the engine as it
    /// maps and unmaps pages.
    pub held: u64,
    pub resident: u64,
    pub started: Option<Nanos>,
    pub done: Option<Nanos>,
    pub killed: bool,
    pub blocked: bool,
    pub step: Option<Step>,
    /// The touches buffer of the last finished step, cleared and reused by the next
    /// [`plan`](Self::plan): a step is planned for every query or batch of references, and
    /// allocating its list each time cost more than the references themselves.
    pub spare_touches: Vec<Touch>,
    pub pending: Option<Notification>,
    /// Virtual pages the model let go of, for the engine to free.
    pub released: Vec<u32>,
    /// Pages given back in all (counted as the engine frees them).
    pub released_pages: u64,
    /// Each notification handled: when it was sent and how long it took to reach the
    /// handler, ms.
    pub reactions: Vec<(Nanos, f64)>,
    pub faults: u64,
    /// Of the faults, those read back from the swap area.
    pub pages_read_back: u64,
    /// Senpai's limit on the process's resident pages.
    pub limit_pages: Option<f64>,
    pub resident_sum: f64,
    pub resident_n: u64,
    pub peak: u64,
    pub kind: Kind,
}

pub enum Kind {
    Cache(Box<CacheState>),
    Hog(HogState),
    Heap(HeapState),
    Malloc(MallocState),
    Zipf(ZipfState),
}

pub struct CacheState {
    spec: CacheSpec,
    cache: Option<AdaptiveCache<u32>>,
    popularity: Zipf,
    data: Zipf,
    data_pages: u32,
    rng: ChaCha8Rng,
    results: Results,
    queries: u64,
    hits: u64,
    /// When the PSI baseline's hold on growth ends.
    cap_until: Option<Nanos>,
    last_halve: Option<Nanos>,
    /// Only the least-amortized-cost order prices a result by how often its query was asked
    /// (see `reuse_p`).
    by_frequency: bool,
    /// The paging cost (Eq. 4.2) at the severity last told, per second of holding a page;
    /// None until the first notification.
    paging_per_s: Option<f64>,
    /// The next query, drawn at the end of the step before (after that step's draws, so the
    /// stream is the same) so that its record can be fetched from memory during the think
    /// time: on a catalogue of millions the record is a miss, most of a query's time.
    next_q: Option<u32>,
}

impl CacheState {
    /// The probability that query `q`'s result is used again while keeping it is worth it:
    /// `cache::reuse_by_frequency` (the one rule the real programs use too) on the query's
    /// asks before this one, its regeneration cost and the paging cost at the last S told.
    fn reuse_p(&self, q: u32, regen_s: f64, life_s: f64) -> f64 {
        let Some(paging) = self.paging_per_s.filter(|_| self.by_frequency) else {
            return 1.0;
        };
        let asks = self.results.queries[q as usize].asks;
        reuse_by_frequency(asks.saturating_sub(1) as u64, life_s, regen_s, Some(paging))
    }
}

pub struct HogState {
    spec: HogSpec,
    pages: u32,
    ptr: u32,
    /// Every page has been touched once: the hog has all its memory.
    allocated: bool,
}

pub struct HeapState {
    spec: HeapSpec,
    live: u32,
    hard: u32,
    soft: Option<u32>,
    ptr: u32,
    allocated: u64,
    total: u64,
    gc_requested: bool,
    collections: u64,
    last_halve: Option<Nanos>,
}

pub struct MallocState {
    spec: MallocSpec,
    working: u32,
    pool: u32,
    started: bool,
    pool_held: bool,
    refs: u64,
    rng: ChaCha8Rng,
}

pub struct ZipfState {
    spec: ZipfSpec,
    zipf: Zipf,
    refs: u64,
    rng: ChaCha8Rng,
}

fn pages(mb: f64) -> u32 {
    ((mb * 1048576.0 / PAGE as f64).ceil() as u64).min(u32::MAX as u64 >> 2) as u32
}

impl Proc {
    pub fn new(
        index: usize,
        spec: &ProcessSpec,
        nice: MemNice,
        cfg: &SeverityConfig,
        repeat: Nanos,
        adaptive: bool,
        seed: u64,
    ) -> Self {
        let rng = rng_for(seed, index);
        let kind = match &spec.kind {
            ProcessKind::Cache(c) => {
                let data_pages = pages(c.data_mb);
                let cache = match c.cache_mb {
                    Some(mb) if mb <= 0.0 => None,
                    size => Some(AdaptiveCache::new(CacheConfig {
                        round_bytes: (c.round_mb * 1048576.0) as u64,
                        order: c.order,
                        max_bytes: size.map(|mb| (mb * 1048576.0) as u64),
                        adaptive: adaptive && size.is_none(),
                    })),
                };
                let by_frequency = c.order == ReleaseOrder::LeastAmortizedCost
                    && cache.as_ref().is_some_and(|k| k.config().adaptive);
                Kind::Cache(Box::new(CacheState {
                    popularity: Zipf::with(c.distinct, c.alpha, c.popularity),
                    data: Zipf::new(data_pages as u64, c.data_alpha),
                    data_pages,
                    spec: c.clone(),
                    cache,
                    rng,
                    results: Results::new(c.distinct),
                    queries: 0,
                    hits: 0,
                    cap_until: None,
                    last_halve: None,
                    by_frequency,
                    paging_per_s: None,
                    next_q: None,
                }))
            }
            ProcessKind::Hog(h) => Kind::Hog(HogState {
                spec: h.clone(),
                pages: pages(h.size_mb).max(1),
                ptr: 0,
                allocated: false,
            }),
            ProcessKind::GcHeap(g) => Kind::Heap(HeapState {
                spec: g.clone(),
                live: pages(g.live_mb).max(1),
                hard: pages(g.heap_mb).max(2),
                soft: None,
                ptr: pages(g.live_mb).max(1),
                allocated: 0,
                total: pages(g.alloc_mb) as u64,
                gc_requested: false,
                collections: 0,
                last_halve: None,
            }),
            ProcessKind::Malloc(m) => Kind::Malloc(MallocState {
                spec: m.clone(),
                working: pages(m.working_mb).max(1),
                pool: pages(m.pool_mb),
                started: false,
                pool_held: true,
                refs: 0,
                rng,
            }),
            ProcessKind::Zipf(z) => Kind::Zipf(ZipfState {
                zipf: Zipf::new(pages(z.pages_mb).max(1) as u64, z.alpha),
                spec: z.clone(),
                refs: 0,
                rng,
            }),
        };
        let mut p = Self {
            name: spec.name.clone(),
            nice,
            notifier: Notifier::with_repeat(cfg.s_max, repeat),
            vm: Vec::new(),
            held: 0,
            resident: 0,
            started: None,
            done: None,
            killed: false,
            blocked: false,
            step: None,
            spare_touches: Vec::new(),
            pending: None,
            released: Vec::new(),
            released_pages: 0,
            reactions: Vec::new(),
            faults: 0,
            pages_read_back: 0,
            limit_pages: None,
            resident_sum: 0.0,
            resident_n: 0,
            peak: 0,
            kind,
        };
        let initial = match &p.kind {
            Kind::Cache(c) => c.data_pages,
            Kind::Hog(h) => h.pages,
            Kind::Heap(h) => h.hard.min(1 << 24),
            Kind::Malloc(m) => m.working + m.pool,
            Kind::Zipf(z) => pages(z.spec.pages_mb).max(1),
        };
        p.vm = vec![NONE; initial as usize];
        p
    }

    /// Pages of the process's data file (placed on the disk before the swap area).
    pub fn data_pages(&self) -> u64 {
        match &self.kind {
            Kind::Cache(c) => c.data_pages as u64,
            _ => 0,
        }
    }

    pub fn is_data(&self, v: u32) -> bool {
        matches!(&self.kind, Kind::Cache(c) if v < c.data_pages)
    }

    /// Whether the process ends by itself (a hog runs until the others are done).
    pub fn finite(&self) -> bool {
        !matches!(self.kind, Kind::Hog(_))
    }

    /// How much of its work it has done, 0 to 1 (a hog's is never done: None).
    pub fn fraction(&self) -> Option<f64> {
        let of = |done: u64, all: u64| (done as f64 / all.max(1) as f64).min(1.0);
        match &self.kind {
            Kind::Cache(c) => Some(of(c.queries, c.spec.queries)),
            Kind::Heap(h) => Some(of(h.allocated, h.total)),
            Kind::Malloc(m) => Some(of(m.refs, m.spec.refs)),
            Kind::Zipf(z) => Some(of(z.refs, z.spec.refs)),
            Kind::Hog(_) => None,
        }
    }

    /// Whether it subscribes to notifications (elastic processes do; a hog does not).
    pub fn listens(&self) -> bool {
        match &self.kind {
            Kind::Cache(c) => c.cache.as_ref().is_some_and(|c| c.config().adaptive),
            Kind::Heap(_) | Kind::Malloc(_) => true,
            Kind::Hog(_) | Kind::Zipf(_) => false,
        }
    }

    /// A cache's lookups and hits so far; (0, 0) for other kinds.
    pub fn lookups(&self) -> (u64, u64) {
        match &self.kind {
            Kind::Cache(c) => (c.queries, c.hits),
            _ => (0, 0),
        }
    }

    pub fn hit_rate(&self) -> Option<f64> {
        match &self.kind {
            Kind::Cache(c) => Some(c.hits as f64 / c.queries.max(1) as f64),
            _ => None,
        }
    }

    pub fn collections(&self) -> u64 {
        match &self.kind {
            Kind::Heap(h) => h.collections,
            _ => 0,
        }
    }

    /// The elastic part's size: a cache's bytes, a heap's extent, a pool still held. MiB.
    pub fn elastic_mb(&self) -> f64 {
        let mb = |pages: u64| pages as f64 * PAGE as f64 / 1048576.0;
        match &self.kind {
            Kind::Cache(c) => c
                .cache
                .as_ref()
                .map_or(0.0, |c| c.bytes() as f64 / 1048576.0),
            // The heap's size is what it holds (resident or in swap), not its limit: an
            // adaptive heap's limit is the 10 GB it may grow to.
            Kind::Heap(_) => mb(self.held),
            Kind::Malloc(m) => mb(if m.pool_held { m.pool as u64 } else { 0 }),
            _ => 0.0,
        }
    }

    fn ensure(&mut self, v: u32) {
        if self.vm.len() <= v as usize {
            self.vm.resize(v as usize + 1, NONE);
        }
    }

    /// The next step, or None when the process has finished its work.
    pub fn plan(&mut self, now: Nanos) -> Option<Step> {
        let mut touches = std::mem::take(&mut self.spare_touches);
        touches.clear();
        let mut step = Step {
            touches,
            ..Step::default()
        };
        let life_s = self
            .started
            .map_or(0.0, |s| now.saturating_sub(s) as f64 / 1e9);
        match &mut self.kind {
            Kind::Cache(c) => {
                if c.queries >= c.spec.queries {
                    return None;
                }
                c.queries += 1;
                let q = match c.next_q.take() {
                    Some(q) => q,
                    None => c.popularity.sample(&mut c.rng) as u32,
                };
                let asked = &mut c.results.queries[q as usize];
                asked.asks = asked.asks.saturating_add(1);
                // The record says whether the result is cached: a miss (most queries on a
                // large catalogue) costs no probe of the cache's index.
                let cached = asked.pages > 0;
                let think = ms(c.spec.think_ms);
                let hit = match c.cache.as_mut() {
                    Some(cache) if cached => cache.get(&q, now),
                    _ => false,
                };
                debug_assert_eq!(hit, cached, "query {q}: the record and the cache disagree");
                if hit {
                    c.hits += 1;
                    let Query {
                        first, pages: n, ..
                    } = c.results.queries[q as usize];
                    step.touches.extend((first..first + n).map(|v| Touch {
                        vpage: v,
                        write: false,
                        data: false,
                    }));
                    step.cpu = ms(c.spec.base_ms + c.spec.hit_ms) + think;
                } else {
                    for _ in 0..c.spec.data_pages_per_miss {
                        let v = c.data.sample(&mut c.rng) as u32;
                        step.touches.push(Touch {
                            vpage: v,
                            write: false,
                            data: true,
                        });
                    }
                    let ty = q as u64 % c.spec.types;
                    let cost = log_uniform(c.spec.cost_ms[0], c.spec.cost_ms[1], ty, 1);
                    step.cpu = ms(c.spec.base_ms + cost) + think;
                    let kb = log_uniform(c.spec.result_kb[0], c.spec.result_kb[1], q as u64, 2);
                    let n = ((kb * 1024.0 / PAGE as f64).ceil() as u32).max(1);
                    let bytes = n as u64 * PAGE;
                    if let Some(cache) = c.cache.as_mut() {
                        if cache.admits(bytes) {
                            let victims = cache.evict_for(bytes, now);
                            // The victims' runs are freed first, so that the new result takes
                            // the run just freed (its page-table entries are still in the
                            // processor's cache); which virtual pages a result gets changes
                            // nothing else.
                            c.results.drop_all(victims, &mut self.released);
                            let first = c.results.alloc(&mut self.vm, c.data_pages, n);
                            let reuse_p = c.reuse_p(q, cost / 1e3, life_s);
                            let cache = c.cache.as_mut().expect("a cache");
                            cache.insert(
                                q,
                                bytes,
                                EntryCost {
                                    free_cost_s: 0.0,
                                    regen_cost_s: cost / 1e3,
                                    reuse_p,
                                },
                                now,
                            );
                            let cached = &mut c.results.queries[q as usize];
                            (cached.first, cached.pages) = (first, n);
                            step.touches.extend((first..first + n).map(|v| Touch {
                                vpage: v,
                                write: true,
                                data: false,
                            }));
                        }
                    }
                }
                if c.queries < c.spec.queries {
                    let nq = c.popularity.sample(&mut c.rng) as u32;
                    c.next_q = Some(nq);
                    crate::prefetch::prefetch(&c.results.queries, nq as usize);
                }
            }
            Kind::Hog(h) => {
                let n = CHUNK.min(h.pages);
                for _ in 0..n {
                    step.touches.push(Touch {
                        vpage: h.ptr,
                        write: true,
                        data: false,
                    });
                    h.ptr = (h.ptr + 1) % h.pages;
                }
                let mut t = n as f64 * PAGE as f64 / 1048576.0 / h.spec.touch_mb_s;
                if let (true, Some(period)) = (h.allocated, h.spec.retouch_s) {
                    t = t.max(period * n as f64 / h.pages as f64);
                }
                h.allocated |= h.ptr < n;
                step.cpu = secs(t);
            }
            Kind::Heap(h) => {
                if h.allocated >= h.total {
                    return None;
                }
                let limit = h.effective_limit();
                if h.gc_requested || h.ptr >= limit {
                    // A collection: the live set is traced and compacted to the bottom of the
                    // heap; its cost grows with the live set (section 6.3).
                    step.touches.extend((0..h.live).map(|v| Touch {
                        vpage: v,
                        write: true,
                        data: false,
                    }));
                    step.cpu =
                        ms(h.spec.gc_ms_per_live_mb * h.live as f64 * PAGE as f64 / 1048576.0);
                    h.ptr = h.live;
                    h.gc_requested = false;
                    h.collections += 1;
                    // A heap held under a soft limit gives back what lies above it.
                    let top = self.vm.len() as u32;
                    if limit < top {
                        for v in limit..top {
                            if self.vm[v as usize] != NONE {
                                self.released.push(v);
                            }
                        }
                    }
                } else {
                    let n = CHUNK.min(limit - h.ptr);
                    if self.vm.len() < (h.ptr + n) as usize {
                        self.vm.resize((h.ptr + n) as usize, NONE);
                    }
                    step.touches.extend((h.ptr..h.ptr + n).map(|v| Touch {
                        vpage: v,
                        write: true,
                        data: false,
                    }));
                    step.cpu = ms(h.spec.mutator_ms_per_mb * n as f64 * PAGE as f64 / 1048576.0);
                    h.ptr += n;
                    h.allocated += n as u64;
                }
            }
            Kind::Malloc(m) => {
                if m.refs >= m.spec.refs {
                    return None;
                }
                if !m.started {
                    m.started = true;
                    step.touches.extend((0..m.working + m.pool).map(|v| Touch {
                        vpage: v,
                        write: true,
                        data: false,
                    }));
                } else {
                    let n = BATCH.min((m.spec.refs - m.refs) as u32);
                    for _ in 0..n {
                        let v = m.rng.random_range(0..m.working);
                        step.touches.push(Touch {
                            vpage: v,
                            write: false,
                            data: false,
                        });
                    }
                    m.refs += n as u64;
                    step.cpu = secs(m.spec.ref_us * n as f64 / 1e6);
                }
            }
            Kind::Zipf(z) => {
                if z.refs >= z.spec.refs {
                    return None;
                }
                let n = BATCH.min((z.spec.refs - z.refs) as u32);
                for _ in 0..n {
                    let v = z.zipf.sample(&mut z.rng) as u32;
                    step.touches.push(Touch {
                        vpage: v,
                        write: false,
                        data: false,
                    });
                }
                z.refs += n as u64;
                step.cpu = secs(z.spec.ref_us * n as f64 / 1e6);
            }
        }
        if let Some(max) = step.touches.iter().map(|t| t.vpage).max() {
            self.ensure(max);
        }
        Some(step)
    }

    /// The thesis's policy: react to the severity this process is told. True when a cache
    /// has more to release after this round (the engine re-checks S and calls again).
    pub fn on_severity(
        &mut self,
        severity_s: f64,
        s_max: f64,
        paging: &PagingCost,
        now: Nanos,
    ) -> bool {
        match &mut self.kind {
            Kind::Cache(c) => {
                let Some(cache) = c.cache.as_mut() else {
                    return false;
                };
                c.paging_per_s = Some(paging.amortized(severity_s));
                let round = cache.release_round(severity_s, s_max, paging, now);
                c.results.drop_all(round.released, &mut self.released);
                round.more
            }
            Kind::Heap(h) => {
                // Tier 1 (section 4.7): a full collection when S falls under ten minutes, and
                // the heap holds its size while there is pressure; back at S_max it may grow.
                if severity_s < h.spec.gc_below_s {
                    h.gc_requested = true;
                    h.soft = Some(h.soft.unwrap_or(u32::MAX).min(h.ptr.max(h.live + CHUNK)));
                } else if severity_s >= s_max {
                    h.soft = None;
                }
                false
            }
            Kind::Malloc(m) => {
                // Any notification: give back the wholly free pages (section 6.4).
                m.release_pool(&mut self.released);
                false
            }
            Kind::Hog(_) | Kind::Zipf(_) => false,
        }
    }

    /// A PSI level (0 none, 1 low, 2 critical) for the lmkd/GLib/Chrome-style baseline: at
    /// low a cache trims a quarter and a heap collects; at critical a cache drops everything;
    /// growth is held for `hold` after the last pressure.
    pub fn on_psi_level(&mut self, level: u8, now: Nanos, hold: Nanos) {
        if self.started.is_none() || self.done.is_some() {
            return;
        }
        match &mut self.kind {
            Kind::Cache(c) => {
                let Some(cache) = c.cache.as_mut() else {
                    return;
                };
                let cap = match level {
                    0 if c.cap_until.is_some_and(|t| now >= t) => None,
                    0 => return,
                    1 => Some(cache.bytes() * 3 / 4),
                    _ => Some(0),
                };
                c.cap_until = cap.map(|_| now + hold);
                let dropped = cache.hold_at(cap, now);
                c.results.drop_all(dropped, &mut self.released);
            }
            Kind::Heap(h) if level >= 1 => {
                h.gc_requested = true;
                h.soft = Some(h.ptr.max(h.live + CHUNK));
            }
            Kind::Malloc(m) if level >= 1 => m.release_pool(&mut self.released),
            _ => {}
        }
    }

    /// MariaDB 11.8's rule: halve the pool on pressure, at most once per `interval`, never grow
    /// back.
    pub fn on_halve(&mut self, now: Nanos, interval: Nanos) {
        if self.started.is_none() || self.done.is_some() {
            return;
        }
        match &mut self.kind {
            Kind::Cache(c) => {
                let Some(cache) = c.cache.as_mut() else {
                    return;
                };
                if c.last_halve.is_some_and(|t| now < t + interval) {
                    return;
                }
                c.last_halve = Some(now);
                let dropped = cache.hold_at(Some(cache.bytes() / 2), now);
                c.results.drop_all(dropped, &mut self.released);
            }
            Kind::Heap(h) => {
                if h.last_halve.is_some_and(|t| now < t + interval) {
                    return;
                }
                h.last_halve = Some(now);
                let half = (h.effective_limit() / 2).max(h.live + CHUNK);
                h.soft = Some(half);
                h.gc_requested = true;
            }
            _ => {}
        }
    }
}

impl HeapState {
    fn effective_limit(&self) -> u32 {
        self.hard
            .min(self.soft.unwrap_or(u32::MAX))
            .max(self.live + CHUNK)
    }
}

fn ms(x: f64) -> Nanos {
    secs(x / 1e3)
}

/// What the database keeps per distinct query: how often it was asked (hit or miss), kept
/// beyond the life of its cached result (the database's query statistics), and where that
/// result lies in the process's memory while it is cached. One record per query, so that a
/// query's counter and its result's pages are one memory access: as a counter array beside a
/// hash map of the cached results they cost two cache misses a query, most of a query's time
/// in the equilibrium runs (README, the simulator's speed).
#[derive(Clone, Copy, Debug, Default)]
struct Query {
    asks: u32,
    /// The result's first virtual page, and how many it has (0 while it is not cached).
    first: u32,
    pages: u32,
}

/// The cache's results as pages of the process: each result occupies a run of virtual pages,
/// and freed runs are reused by results of the same length.
struct Results {
    queries: Vec<Query>,
    free_ranges: FxHashMap<u32, Vec<u32>>,
}

impl Results {
    /// The records of `distinct` queries (at most 10^8, the scenario's bound).
    fn new(distinct: u64) -> Self {
        Self {
            queries: vec![Query::default(); distinct as usize],
            free_ranges: FxHashMap::default(),
        }
    }

    /// A run of `n` virtual pages above the data file's `base`.
    fn alloc(&mut self, vm: &mut Vec<u32>, base: u32, n: u32) -> u32 {
        if let Some(first) = self.free_ranges.get_mut(&n).and_then(|v| v.pop()) {
            return first;
        }
        let first = (vm.len() as u32).max(base);
        vm.resize((first + n) as usize, NONE);
        first
    }

    /// Forgets the entries `keys`; their pages go to `released` for the engine to free.
    fn drop_all(&mut self, keys: Vec<u32>, released: &mut Vec<u32>) {
        for key in keys {
            let q = &mut self.queries[key as usize];
            let (first, n) = (q.first, std::mem::take(&mut q.pages));
            if n > 0 {
                released.extend(first..first + n);
                self.free_ranges.entry(n).or_default().push(first);
            }
        }
    }
}

impl MallocState {
    /// Gives back the pool's wholly free pages, once.
    fn release_pool(&mut self, released: &mut Vec<u32>) {
        if self.pool_held {
            self.pool_held = false;
            released.extend(self.working..self.working + self.pool);
        }
    }
}
