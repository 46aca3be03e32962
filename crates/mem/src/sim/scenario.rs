//! The scenario file of `antsched mem simulate`: a machine, a policy, and processes, in TOML.
//!
//! ```toml
//! [machine]
//! memory_mb = 256          # physical memory
//! reserved_mb = 56         # kernel and everything else: not available to the processes
//! disk = "deskstar-34gxp"  # a built-in disk or a DiskSim .parv file; paging I/O goes here
//! scheduler = "as-aged-sptf"
//! max_time_s = 7200        # a run not finished by then is reported as never finishing
//! notify_repeat_s = 1      # the reminder while S < S_max (section 4.6: every second)
//!
//! [severity]               # optional: the tunables of section 4.2.1
//! s_max = 3600
//!
//! [policy]
//! kind = "antsched"        # antsched | fixed | psi | halve | senpai | damon_reclaim
//!
//! [[process]]
//! name = "db"
//! kind = "cache"           # cache | hog | gc_heap | malloc | zipf
//! queries = 200000
//! ```
//!
//! Every key is checked: an unknown key, a wrong type or a value out of range is an error that
//! names the key and its line.

use serde::{Deserialize, Serialize};

use crate::cache::ReleaseOrder;
use crate::nice::MemNice;
use crate::severity::SeverityConfig;
use crate::sim::workload::Popularity;

/// A whole scenario.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scenario {
    pub machine: Machine,
    pub severity: SeverityConfig,
    pub policy: Policy,
    #[serde(rename = "process")]
    pub processes: Vec<ProcessSpec>,
}

/// The file as written: flat tables, so that the TOML reader itself reports an unknown key or
/// a wrong type with its line (serde's tagged enums would lose the position).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    machine: Machine,
    #[serde(default)]
    severity: SeverityConfig,
    #[serde(default)]
    policy: Option<RawPolicy>,
    #[serde(default, rename = "process")]
    processes: Vec<RawProcess>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    kind: String,
    low: Option<f64>,
    critical: Option<f64>,
    hold_s: Option<f64>,
    threshold: Option<f64>,
    interval_s: Option<f64>,
    target: Option<f64>,
    step: Option<f64>,
    min_age_s: Option<f64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawProcess {
    name: String,
    kind: String,
    nice: Option<i64>,
    weight: Option<f64>,
    start_s: Option<f64>,
    // cache
    queries: Option<u64>,
    distinct: Option<u64>,
    types: Option<u64>,
    alpha: Option<f64>,
    popularity: Option<Popularity>,
    cost_ms: Option<[f64; 2]>,
    result_kb: Option<[f64; 2]>,
    base_ms: Option<f64>,
    hit_ms: Option<f64>,
    think_ms: Option<f64>,
    data_mb: Option<f64>,
    data_pages_per_miss: Option<u32>,
    data_alpha: Option<f64>,
    cache_mb: Option<f64>,
    order: Option<ReleaseOrder>,
    round_mb: Option<f64>,
    // hog
    size_mb: Option<f64>,
    touch_mb_s: Option<f64>,
    retouch_s: Option<f64>,
    // gc_heap
    alloc_mb: Option<f64>,
    live_mb: Option<f64>,
    heap_mb: Option<f64>,
    mutator_ms_per_mb: Option<f64>,
    gc_ms_per_live_mb: Option<f64>,
    gc_below_s: Option<f64>,
    // malloc
    pool_mb: Option<f64>,
    working_mb: Option<f64>,
    // malloc, zipf
    refs: Option<u64>,
    ref_us: Option<f64>,
    // zipf
    pages_mb: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Machine {
    pub memory_mb: f64,
    #[serde(default)]
    pub reserved_mb: f64,
    #[serde(default = "default_disk")]
    pub disk: String,
    #[serde(default = "default_scheduler")]
    pub scheduler: String,
    #[serde(default = "default_max_time")]
    pub max_time_s: f64,
    /// Sampling period of the time series (S, free memory, sizes, disk queue).
    #[serde(default = "default_sample")]
    pub sample_s: f64,
    /// How often a subscriber whose S is below S_max is reminded of it (section 4.6: every
    /// second).
    #[serde(default = "default_repeat")]
    pub notify_repeat_s: f64,
}

fn default_disk() -> String {
    "deskstar-34gxp".into()
}
/// The default of every command that schedules a disk (issue 18): a scenario that names none
/// pages through the same scheduler as `antsched sim`, `run` and `mount` without one.
fn default_scheduler() -> String {
    antsched_core::DEFAULT_SCHEDULER.into()
}
fn default_max_time() -> f64 {
    4.0 * 3600.0
}
fn default_sample() -> f64 {
    1.0
}
fn default_repeat() -> f64 {
    crate::notify::REPEAT as f64 / 1e9
}

/// How elastic processes (caches, heaps, pools) learn of pressure and react; the thesis's
/// policy and the anchors' (see `../shared/notes/adaptive-memory-anchors.md`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Policy {
    /// The thesis: severity, notifications on doubling, halving and every second, the cost
    /// rule, weights enforced by the replacement.
    Antsched,
    /// No adaptation: every process keeps its configured size.
    Fixed,
    /// Discrete pressure levels from PSI (lmkd, GLib's GMemoryMonitor, Chrome): at `low` the
    /// caches trim a quarter, at `critical` they drop everything; they may grow again after
    /// `hold_s` without pressure.
    Psi {
        low: f64,
        critical: f64,
        hold_s: f64,
    },
    /// MariaDB 11.8's buffer pool: halve on pressure, at most once per `interval_s`, never grow
    /// back.
    Halve { threshold: f64, interval_s: f64 },
    /// Senpai: every `interval_s`, lower each process's memory limit by `step` while its
    /// pressure is under `target`, raise it when above; the kernel reclaims past the limit.
    Senpai {
        target: f64,
        step: f64,
        interval_s: f64,
    },
    /// DAMON_RECLAIM: the kernel pages out whatever was idle for `min_age_s`, whatever the
    /// pressure; applications do not adapt.
    DamonReclaim { min_age_s: f64 },
}

const PSI_LOW: f64 = 0.10;
const PSI_CRITICAL: f64 = 0.40;
const PSI_HOLD: f64 = 30.0;
const HALVE_INTERVAL: f64 = 60.0;
const SENPAI_TARGET: f64 = 0.001;
const SENPAI_STEP: f64 = 0.01;
const SENPAI_INTERVAL: f64 = 6.0;
const DAMON_AGE: f64 = 120.0;

impl Policy {
    pub fn name(&self) -> &'static str {
        match self {
            Policy::Antsched => "antsched",
            Policy::Fixed => "fixed",
            Policy::Psi { .. } => "psi",
            Policy::Halve { .. } => "halve",
            Policy::Senpai { .. } => "senpai",
            Policy::DamonReclaim { .. } => "damon_reclaim",
        }
    }
}

/// One process. `nice` or `weight` set its memory nice value (section 4.4).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProcessSpec {
    pub name: String,
    pub nice: Option<i64>,
    pub weight: Option<f64>,
    pub start_s: f64,
    pub kind: ProcessKind,
}

/// What a process does.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProcessKind {
    Cache(CacheSpec),
    Hog(HogSpec),
    GcHeap(HeapSpec),
    Malloc(MallocSpec),
    Zipf(ZipfSpec),
}

/// A query server with a result cache (the database of section 6.2, the two caches of
/// section 4.5). Queries follow a Zipf popularity; a miss evaluates the query (CPU, and
/// reads of the data file's pages through the page cache) and caches its result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CacheSpec {
    /// Queries to run; the process's runtime is the time to run them.
    pub queries: u64,
    /// Distinct queries (types times versions).
    pub distinct: u64,
    /// Query types; each has its own evaluation cost.
    pub types: u64,
    /// Zipf exponent of the popularity of distinct queries.
    pub alpha: f64,
    /// Zipf's law, or section 4.5.1's power law (`popularity = "power_law"`).
    pub popularity: Popularity,
    /// The evaluation cost of a miss, spread log-uniformly over the types, ms.
    pub cost_ms: [f64; 2],
    /// Result sizes, log-uniform per distinct query, KiB (whole pages are used).
    pub result_kb: [f64; 2],
    /// Work of every query besides evaluating it (parsing, the client), ms.
    pub base_ms: f64,
    /// Work of a hit, ms.
    pub hit_ms: f64,
    /// Pause between queries (an open client), ms.
    pub think_ms: f64,
    /// The data file a miss reads from, MiB, and the pages a miss reads.
    pub data_mb: f64,
    pub data_pages_per_miss: u32,
    /// Zipf exponent of data page popularity.
    pub data_alpha: f64,
    /// A fixed cache size, MiB; absent: unbounded, sized by the policy.
    pub cache_mb: Option<f64>,
    pub order: ReleaseOrder,
    /// Released per round before S is checked again, MiB.
    pub round_mb: f64,
}

const TYPES: u64 = 1;
const RESULT_KB: [f64; 2] = [4.0, 4.0];
const HIT_MS: f64 = 0.01;
const DATA_ALPHA: f64 = 0.6;
const ORDER: ReleaseOrder = ReleaseOrder::LeastAmortizedCost;
const ROUND_MB: f64 = 4.0;

/// A memory hog: allocates `size_mb` at `touch_mb_s` and then keeps touching all of it, at
/// the same rate or, with `retouch_s`, once every `retouch_s` (a hog that keeps its memory hot
/// without touching it as fast as it can).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HogSpec {
    pub size_mb: f64,
    pub touch_mb_s: f64,
    pub retouch_s: Option<f64>,
}

/// A hog's allocation rate when its scenario gives none, MB/s.
pub const TOUCH_RATE: f64 = 100.0;

/// A garbage-collected heap (section 6.3): the program allocates `alloc_mb` in all; the heap
/// grows until `heap_mb`, then a collection touches the live set (its cost grows with it) and
/// allocation starts again above it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HeapSpec {
    pub alloc_mb: f64,
    pub live_mb: f64,
    pub heap_mb: f64,
    pub mutator_ms_per_mb: f64,
    pub gc_ms_per_live_mb: f64,
    /// Adaptation (section 4.7, tier 1): collect when the severity it is told falls below this.
    pub gc_below_s: f64,
}

const MUTATOR_MS: f64 = 10.0;
const GC_MS: f64 = 20.0;
const GC_BELOW: f64 = 600.0;

/// An allocator's free-page pool (section 6.4) beside a working set it keeps using.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MallocSpec {
    pub pool_mb: f64,
    pub working_mb: f64,
    /// References to the working set, and the work of each, µs.
    pub refs: u64,
    pub ref_us: f64,
}

/// Page references with a Zipf popularity over a working set.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ZipfSpec {
    pub pages_mb: f64,
    pub alpha: f64,
    pub refs: u64,
    pub ref_us: f64,
}

const REF_US: f64 = 1.0;

/// A scenario that cannot run, with the key and line at fault.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{origin}: {message}")]
    Toml { origin: String, message: String },
    #[error("{origin}: {key} = {value}: {why}")]
    Invalid {
        origin: String,
        key: String,
        value: String,
        why: String,
    },
}

/// Parses and checks a scenario. `origin` names it in errors (a path).
pub fn parse_scenario(text: &str, origin: &str) -> Result<Scenario, ScenarioError> {
    let raw: RawScenario = toml::from_str(text).map_err(|e| ScenarioError::Toml {
        origin: origin.to_string(),
        message: e.to_string().trim_end().to_string(),
    })?;
    let at = |key: &str| {
        format!(
            "{origin}{}",
            line_of(text, key).map_or(String::new(), |l| format!(", line {l}"))
        )
    };
    let scenario = raw.typed(&at)?;
    scenario.check(&at)?;
    Ok(scenario)
}

/// The line of `key` (`machine.memory_mb`, `policy.low`, `process[2] (db).alpha`) in `text`,
/// found by walking the table headers as TOML defines them.
fn line_of(text: &str, key: &str) -> Option<usize> {
    let (section, index, field) = if let Some(rest) = key.strip_prefix("process[") {
        let (i, rest) = rest.split_once(']')?;
        (
            Some("process"),
            i.parse::<usize>().ok(),
            rest.rsplit('.').next()?,
        )
    } else {
        let (t, f) = key.split_once('.').unwrap_or((key, ""));
        let t = ["machine", "severity", "policy"]
            .into_iter()
            .find(|&x| x == t)?;
        (Some(t), None, f)
    };
    let mut current: Option<(&str, usize)> = None;
    let mut processes = 0;
    let mut header_line = None;
    for (n, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.starts_with("[[process]]") {
            current = Some(("process", processes));
            processes += 1;
        } else if let Some(h) = l.strip_prefix('[') {
            let name = h.trim_end_matches(']').trim();
            current = Some((
                if ["machine", "severity", "policy"].contains(&name) {
                    name
                } else {
                    ""
                },
                0,
            ));
        }
        let here = match (current, section, index) {
            (Some(("process", i)), Some("process"), Some(j)) => i == j,
            (Some((t, _)), Some(s), None) => t == s,
            _ => false,
        };
        if !here {
            continue;
        }
        if l.starts_with('[') {
            header_line = Some(n + 1);
            if field.is_empty() || field.starts_with(' ') {
                return header_line;
            }
        } else if let Some((k, _)) = l.split_once('=') {
            if k.trim() == field {
                return Some(n + 1);
            }
        }
    }
    header_line
}

impl RawScenario {
    fn typed(self, at: &dyn Fn(&str) -> String) -> Result<Scenario, ScenarioError> {
        let err = |key: &str, value: &str, why: &str| ScenarioError::Invalid {
            origin: at(key),
            key: key.to_string(),
            value: value.to_string(),
            why: why.to_string(),
        };
        let policy = match self.policy {
            None => Policy::Antsched,
            Some(p) => {
                let given: &[(&str, bool)] = &[
                    ("low", p.low.is_some()),
                    ("critical", p.critical.is_some()),
                    ("hold_s", p.hold_s.is_some()),
                    ("threshold", p.threshold.is_some()),
                    ("interval_s", p.interval_s.is_some()),
                    ("target", p.target.is_some()),
                    ("step", p.step.is_some()),
                    ("min_age_s", p.min_age_s.is_some()),
                ];
                let (policy, allowed): (Policy, &[&str]) = match p.kind.as_str() {
                    "antsched" => (Policy::Antsched, &[]),
                    "fixed" => (Policy::Fixed, &[]),
                    "psi" => (
                        Policy::Psi {
                            low: p.low.unwrap_or(PSI_LOW),
                            critical: p.critical.unwrap_or(PSI_CRITICAL),
                            hold_s: p.hold_s.unwrap_or(PSI_HOLD),
                        },
                        &["low", "critical", "hold_s"],
                    ),
                    "halve" => (
                        Policy::Halve {
                            threshold: p.threshold.unwrap_or(PSI_LOW),
                            interval_s: p.interval_s.unwrap_or(HALVE_INTERVAL),
                        },
                        &["threshold", "interval_s"],
                    ),
                    "senpai" => (
                        Policy::Senpai {
                            target: p.target.unwrap_or(SENPAI_TARGET),
                            step: p.step.unwrap_or(SENPAI_STEP),
                            interval_s: p.interval_s.unwrap_or(SENPAI_INTERVAL),
                        },
                        &["target", "step", "interval_s"],
                    ),
                    "damon_reclaim" => (
                        Policy::DamonReclaim {
                            min_age_s: p.min_age_s.unwrap_or(DAMON_AGE),
                        },
                        &["min_age_s"],
                    ),
                    other => {
                        return Err(err(
                            "policy.kind",
                            other,
                            "must be antsched, fixed, psi, halve, senpai or damon_reclaim",
                        ))
                    }
                };
                if let Some((k, _)) = given.iter().find(|(k, g)| *g && !allowed.contains(k)) {
                    return Err(err(
                        &format!("policy.{k}"),
                        "",
                        &format!("does not apply to policy {}", p.kind),
                    ));
                }
                policy
            }
        };
        let mut processes = Vec::with_capacity(self.processes.len());
        for (i, r) in self.processes.into_iter().enumerate() {
            processes.push(r.typed(i, &err)?);
        }
        Ok(Scenario {
            machine: self.machine,
            severity: self.severity,
            policy,
            processes,
        })
    }
}

impl RawProcess {
    fn typed(
        self,
        i: usize,
        err: &dyn Fn(&str, &str, &str) -> ScenarioError,
    ) -> Result<ProcessSpec, ScenarioError> {
        let key = |k: &str| format!("process[{i}] ({}).{k}", self.name);
        let r = &self;
        // Which keys each kind takes; any other given key is an error, not silently ignored.
        let given: Vec<(&str, bool)> = vec![
            ("queries", r.queries.is_some()),
            ("distinct", r.distinct.is_some()),
            ("types", r.types.is_some()),
            ("alpha", r.alpha.is_some()),
            ("popularity", r.popularity.is_some()),
            ("cost_ms", r.cost_ms.is_some()),
            ("result_kb", r.result_kb.is_some()),
            ("base_ms", r.base_ms.is_some()),
            ("hit_ms", r.hit_ms.is_some()),
            ("think_ms", r.think_ms.is_some()),
            ("data_mb", r.data_mb.is_some()),
            ("data_pages_per_miss", r.data_pages_per_miss.is_some()),
            ("data_alpha", r.data_alpha.is_some()),
            ("cache_mb", r.cache_mb.is_some()),
            ("order", r.order.is_some()),
            ("round_mb", r.round_mb.is_some()),
            ("size_mb", r.size_mb.is_some()),
            ("touch_mb_s", r.touch_mb_s.is_some()),
            ("retouch_s", r.retouch_s.is_some()),
            ("alloc_mb", r.alloc_mb.is_some()),
            ("live_mb", r.live_mb.is_some()),
            ("heap_mb", r.heap_mb.is_some()),
            ("mutator_ms_per_mb", r.mutator_ms_per_mb.is_some()),
            ("gc_ms_per_live_mb", r.gc_ms_per_live_mb.is_some()),
            ("gc_below_s", r.gc_below_s.is_some()),
            ("pool_mb", r.pool_mb.is_some()),
            ("working_mb", r.working_mb.is_some()),
            ("refs", r.refs.is_some()),
            ("ref_us", r.ref_us.is_some()),
            ("pages_mb", r.pages_mb.is_some()),
        ];
        let need = |k: &str, v: Option<f64>| {
            v.ok_or_else(|| err(&key(k), "", "is required for this kind"))
        };
        let need_u = |k: &str, v: Option<u64>| {
            v.ok_or_else(|| err(&key(k), "", "is required for this kind"))
        };
        let (kind, allowed): (ProcessKind, &[&str]) = match r.kind.as_str() {
            "cache" => (
                ProcessKind::Cache(CacheSpec {
                    queries: need_u("queries", r.queries)?,
                    distinct: need_u("distinct", r.distinct)?,
                    types: r.types.unwrap_or(TYPES),
                    alpha: need("alpha", r.alpha)?,
                    popularity: r.popularity.unwrap_or_default(),
                    cost_ms: r
                        .cost_ms
                        .ok_or_else(|| err(&key("cost_ms"), "", "is required for this kind"))?,
                    result_kb: r.result_kb.unwrap_or(RESULT_KB),
                    base_ms: r.base_ms.unwrap_or(0.0),
                    hit_ms: r.hit_ms.unwrap_or(HIT_MS),
                    think_ms: r.think_ms.unwrap_or(0.0),
                    data_mb: r.data_mb.unwrap_or(0.0),
                    data_pages_per_miss: r.data_pages_per_miss.unwrap_or(0),
                    data_alpha: r.data_alpha.unwrap_or(DATA_ALPHA),
                    cache_mb: r.cache_mb,
                    order: r.order.unwrap_or(ORDER),
                    round_mb: r.round_mb.unwrap_or(ROUND_MB),
                }),
                &[
                    "queries",
                    "distinct",
                    "types",
                    "alpha",
                    "popularity",
                    "cost_ms",
                    "result_kb",
                    "base_ms",
                    "hit_ms",
                    "think_ms",
                    "data_mb",
                    "data_pages_per_miss",
                    "data_alpha",
                    "cache_mb",
                    "order",
                    "round_mb",
                ],
            ),
            "hog" => (
                ProcessKind::Hog(HogSpec {
                    size_mb: need("size_mb", r.size_mb)?,
                    touch_mb_s: r.touch_mb_s.unwrap_or(TOUCH_RATE),
                    retouch_s: r.retouch_s,
                }),
                &["size_mb", "touch_mb_s", "retouch_s"],
            ),
            "gc_heap" => (
                ProcessKind::GcHeap(HeapSpec {
                    alloc_mb: need("alloc_mb", r.alloc_mb)?,
                    live_mb: need("live_mb", r.live_mb)?,
                    heap_mb: need("heap_mb", r.heap_mb)?,
                    mutator_ms_per_mb: r.mutator_ms_per_mb.unwrap_or(MUTATOR_MS),
                    gc_ms_per_live_mb: r.gc_ms_per_live_mb.unwrap_or(GC_MS),
                    gc_below_s: r.gc_below_s.unwrap_or(GC_BELOW),
                }),
                &[
                    "alloc_mb",
                    "live_mb",
                    "heap_mb",
                    "mutator_ms_per_mb",
                    "gc_ms_per_live_mb",
                    "gc_below_s",
                ],
            ),
            "malloc" => (
                ProcessKind::Malloc(MallocSpec {
                    pool_mb: need("pool_mb", r.pool_mb)?,
                    working_mb: need("working_mb", r.working_mb)?,
                    refs: need_u("refs", r.refs)?,
                    ref_us: r.ref_us.unwrap_or(REF_US),
                }),
                &["pool_mb", "working_mb", "refs", "ref_us"],
            ),
            "zipf" => (
                ProcessKind::Zipf(ZipfSpec {
                    pages_mb: need("pages_mb", r.pages_mb)?,
                    alpha: need("alpha", r.alpha)?,
                    refs: need_u("refs", r.refs)?,
                    ref_us: r.ref_us.unwrap_or(REF_US),
                }),
                &["pages_mb", "alpha", "refs", "ref_us"],
            ),
            other => {
                return Err(err(
                    &key("kind"),
                    other,
                    "must be cache, hog, gc_heap, malloc or zipf",
                ));
            }
        };
        if let Some((k, _)) = given.iter().find(|(k, g)| *g && !allowed.contains(k)) {
            return Err(err(
                &key(k),
                "",
                &format!("does not apply to kind {}", r.kind),
            ));
        }
        Ok(ProcessSpec {
            name: self.name,
            nice: self.nice,
            weight: self.weight,
            start_s: self.start_s.unwrap_or(0.0),
            kind,
        })
    }
}

/// The largest machine a scenario may describe: 1 TiB (the simulator keeps per-page state).
pub const MAX_MEMORY_MB: f64 = 1024.0 * 1024.0;
/// The longest run: a year of virtual time.
pub const MAX_TIME_S: f64 = 365.0 * 86400.0;
/// The most processes.
pub const MAX_PROCESSES: usize = 4096;

impl Scenario {
    /// Checks every value for a range the model can mean; errors name the key.
    pub fn check(&self, at: &dyn Fn(&str) -> String) -> Result<(), ScenarioError> {
        let bad = |key: &str, value: &dyn std::fmt::Display, why: &str| {
            Err(ScenarioError::Invalid {
                origin: at(key),
                key: key.to_string(),
                value: antsched_disk::compact_value(value.to_string()),
                why: why.to_string(),
            })
        };
        let m = &self.machine;
        let positive = |x: f64| x.is_finite() && x > 0.0;
        let non_negative = |x: f64| x.is_finite() && x >= 0.0;
        if !(positive(m.memory_mb) && m.memory_mb <= MAX_MEMORY_MB) {
            return bad(
                "machine.memory_mb",
                &m.memory_mb,
                "must be between 0 and 1048576 MiB",
            );
        }
        if !(non_negative(m.reserved_mb) && m.reserved_mb < m.memory_mb) {
            return bad(
                "machine.reserved_mb",
                &m.reserved_mb,
                "must be at least 0 and below memory_mb",
            );
        }
        if !(positive(m.max_time_s) && m.max_time_s <= MAX_TIME_S) {
            return bad(
                "machine.max_time_s",
                &m.max_time_s,
                "must be a positive number of seconds up to a year",
            );
        }
        if !(positive(m.sample_s) && m.sample_s >= 0.001 && m.sample_s <= m.max_time_s) {
            return bad(
                "machine.sample_s",
                &m.sample_s,
                "must be between 1 ms and max_time_s",
            );
        }
        if !(positive(m.notify_repeat_s) && (0.001..=3600.0).contains(&m.notify_repeat_s)) {
            return bad(
                "machine.notify_repeat_s",
                &m.notify_repeat_s,
                "must be between 1 ms and 1 h",
            );
        }
        if m.max_time_s / m.sample_s > 1e6 {
            return bad(
                "machine.sample_s",
                &m.sample_s,
                "gives more than a million samples; sample less often",
            );
        }
        if let Err(e) = self.severity.validate() {
            return bad("severity", &"", &e.to_string());
        }
        match &self.policy {
            Policy::Psi {
                low,
                critical,
                hold_s,
            } => {
                if !(positive(*low) && low < critical && *critical <= 1.0) {
                    return bad(
                        "policy.low",
                        low,
                        "must be a fraction, below critical (at most 1)",
                    );
                }
                if !non_negative(*hold_s) {
                    return bad("policy.hold_s", hold_s, "must be a number of seconds");
                }
            }
            Policy::Halve {
                threshold,
                interval_s,
            } => {
                if !(positive(*threshold) && *threshold <= 1.0) {
                    return bad(
                        "policy.threshold",
                        threshold,
                        "must be a fraction in (0, 1]",
                    );
                }
                if !positive(*interval_s) {
                    return bad(
                        "policy.interval_s",
                        interval_s,
                        "must be a positive number of seconds",
                    );
                }
            }
            Policy::Senpai {
                target,
                step,
                interval_s,
            } => {
                if !(positive(*target) && *target < 1.0) {
                    return bad("policy.target", target, "must be a fraction in (0, 1)");
                }
                if !(positive(*step) && *step < 1.0) {
                    return bad("policy.step", step, "must be a fraction in (0, 1)");
                }
                if !(positive(*interval_s) && *interval_s >= 0.01) {
                    return bad("policy.interval_s", interval_s, "must be at least 10 ms");
                }
            }
            Policy::DamonReclaim { min_age_s } => {
                if !positive(*min_age_s) {
                    return bad(
                        "policy.min_age_s",
                        min_age_s,
                        "must be a positive number of seconds",
                    );
                }
            }
            Policy::Antsched | Policy::Fixed => {}
        }
        if self.processes.is_empty() {
            return bad(
                "process",
                &"[]",
                "a scenario needs at least one [[process]]",
            );
        }
        if self.processes.len() > MAX_PROCESSES {
            return bad(
                "process",
                &self.processes.len(),
                "more than 4,096 processes",
            );
        }
        let mut names = std::collections::HashSet::new();
        let limit_pages = |mb: f64| (0.0..=16.0 * MAX_MEMORY_MB).contains(&mb);
        for (i, p) in self.processes.iter().enumerate() {
            let key = |k: &str| format!("process[{i}] ({}).{k}", p.name);
            if p.name.is_empty() || !names.insert(p.name.clone()) {
                return bad(
                    &format!("process[{i}].name"),
                    &p.name,
                    "must be given and unique",
                );
            }
            if p.nice.is_some() && p.weight.is_some() {
                return bad(&key("weight"), &"", "give nice or weight, not both");
            }
            if let Err(e) = self.nice_of(p) {
                return bad(
                    &key(if p.nice.is_some() { "nice" } else { "weight" }),
                    &"",
                    &e.to_string(),
                );
            }
            if !(non_negative(p.start_s) && p.start_s < m.max_time_s) {
                return bad(
                    &key("start_s"),
                    &p.start_s,
                    "must be at least 0 and before max_time_s",
                );
            }
            match &p.kind {
                ProcessKind::Cache(c) => {
                    if c.queries == 0 || c.queries > 1_000_000_000 {
                        return bad(&key("queries"), &c.queries, "must be between 1 and 10^9");
                    }
                    if c.distinct == 0 || c.distinct > 100_000_000 {
                        return bad(&key("distinct"), &c.distinct, "must be between 1 and 10^8");
                    }
                    if c.types == 0 || c.types > c.distinct {
                        return bad(&key("types"), &c.types, "must be between 1 and distinct");
                    }
                    if !(c.alpha.is_finite() && (0.0..=3.0).contains(&c.alpha)) {
                        return bad(&key("alpha"), &c.alpha, "must be between 0 and 3");
                    }
                    if c.popularity == Popularity::PowerLaw && c.alpha >= 1.0 {
                        return bad(
                            &key("alpha"),
                            &c.alpha,
                            "must be below 1 with popularity = \"power_law\"",
                        );
                    }
                    if !(c.data_alpha.is_finite() && (0.0..=3.0).contains(&c.data_alpha)) {
                        return bad(&key("data_alpha"), &c.data_alpha, "must be between 0 and 3");
                    }
                    for (k, r) in [("cost_ms", c.cost_ms), ("result_kb", c.result_kb)] {
                        if !(non_negative(r[0]) && r[0] <= r[1] && r[1].is_finite() && r[1] <= 1e6)
                        {
                            return bad(
                                &key(k),
                                &format!("{:?}", r),
                                "must be [low, high] with 0 <= low <= high <= 10^6",
                            );
                        }
                    }
                    if c.result_kb[0] <= 0.0 {
                        return bad(
                            &key("result_kb"),
                            &format!("{:?}", c.result_kb),
                            "results take at least a byte",
                        );
                    }
                    for (k, v) in [
                        ("base_ms", c.base_ms),
                        ("hit_ms", c.hit_ms),
                        ("think_ms", c.think_ms),
                    ] {
                        if !(non_negative(v) && v <= 1e6) {
                            return bad(&key(k), &v, "must be between 0 and 10^6 ms");
                        }
                    }
                    if !limit_pages(c.data_mb) {
                        return bad(
                            &key("data_mb"),
                            &c.data_mb,
                            "must be a size in MiB up to 16 TiB",
                        );
                    }
                    if c.data_pages_per_miss > 0 && c.data_mb < 0.004 {
                        return bad(
                            &key("data_pages_per_miss"),
                            &c.data_pages_per_miss,
                            "needs data_mb of at least a page",
                        );
                    }
                    if c.data_pages_per_miss > 4096 {
                        return bad(
                            &key("data_pages_per_miss"),
                            &c.data_pages_per_miss,
                            "at most 4,096",
                        );
                    }
                    if let Some(s) = c.cache_mb {
                        if !limit_pages(s) {
                            return bad(&key("cache_mb"), &s, "must be a size in MiB");
                        }
                    }
                    if !(positive(c.round_mb) && c.round_mb <= MAX_MEMORY_MB) {
                        return bad(
                            &key("round_mb"),
                            &c.round_mb,
                            "must be a positive size in MiB",
                        );
                    }
                }
                ProcessKind::Hog(h) => {
                    if !(positive(h.size_mb) && limit_pages(h.size_mb)) {
                        return bad(
                            &key("size_mb"),
                            &h.size_mb,
                            "must be a positive size in MiB",
                        );
                    }
                    if !(positive(h.touch_mb_s) && h.touch_mb_s <= 1e6) {
                        return bad(
                            &key("touch_mb_s"),
                            &h.touch_mb_s,
                            "must be positive, up to 10^6 MiB/s",
                        );
                    }
                    if let Some(r) = h.retouch_s {
                        if !(positive(r) && r <= 1e6) {
                            return bad(&key("retouch_s"), &r, "must be positive, up to 10^6 s");
                        }
                    }
                }
                ProcessKind::GcHeap(g) => {
                    if !(positive(g.live_mb) && g.live_mb < g.heap_mb && limit_pages(g.heap_mb)) {
                        return bad(
                            &key("heap_mb"),
                            &g.heap_mb,
                            "must be larger than live_mb (and a size in MiB)",
                        );
                    }
                    if !(positive(g.alloc_mb) && g.alloc_mb <= 1e9) {
                        return bad(
                            &key("alloc_mb"),
                            &g.alloc_mb,
                            "must be positive, up to 10^9 MiB",
                        );
                    }
                    for (k, v) in [
                        ("mutator_ms_per_mb", g.mutator_ms_per_mb),
                        ("gc_ms_per_live_mb", g.gc_ms_per_live_mb),
                        ("gc_below_s", g.gc_below_s),
                    ] {
                        if !(non_negative(v) && v <= 1e6) {
                            return bad(&key(k), &v, "must be between 0 and 10^6");
                        }
                    }
                }
                ProcessKind::Malloc(a) => {
                    if !(limit_pages(a.pool_mb)
                        && positive(a.working_mb)
                        && limit_pages(a.working_mb))
                    {
                        return bad(
                            &key("working_mb"),
                            &a.working_mb,
                            "pool_mb and working_mb must be sizes in MiB, working_mb positive",
                        );
                    }
                    if a.refs == 0
                        || a.refs > 10_000_000_000
                        || !(non_negative(a.ref_us) && a.ref_us <= 1e6)
                    {
                        return bad(
                            &key("refs"),
                            &a.refs,
                            "refs between 1 and 10^10, ref_us between 0 and 10^6",
                        );
                    }
                }
                ProcessKind::Zipf(z) => {
                    if !(positive(z.pages_mb) && limit_pages(z.pages_mb)) {
                        return bad(
                            &key("pages_mb"),
                            &z.pages_mb,
                            "must be a positive size in MiB",
                        );
                    }
                    if !(z.alpha.is_finite() && (0.0..=3.0).contains(&z.alpha)) {
                        return bad(&key("alpha"), &z.alpha, "must be between 0 and 3");
                    }
                    if z.refs == 0
                        || z.refs > 10_000_000_000
                        || !(non_negative(z.ref_us) && z.ref_us <= 1e6)
                    {
                        return bad(
                            &key("refs"),
                            &z.refs,
                            "refs between 1 and 10^10, ref_us between 0 and 10^6",
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// The memory nice value of a process: `nice`, `weight`, or 0.
    pub fn nice_of(&self, p: &ProcessSpec) -> Result<MemNice, crate::nice::NiceError> {
        match (p.nice, p.weight) {
            (Some(n), _) => MemNice::new(n),
            (None, Some(w)) => MemNice::from_weight(w),
            (None, None) => Ok(MemNice::NORMAL),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[machine]
memory_mb = 64

[[process]]
name = "a"
kind = "zipf"
pages_mb = 10
alpha = 0.8
refs = 1000
"#;

    #[test]
    fn a_scenario_parses_with_defaults() {
        let s = parse_scenario(GOOD, "good.toml").unwrap();
        assert_eq!(s.policy, Policy::Antsched);
        assert_eq!(s.machine.disk, "deskstar-34gxp");
        assert_eq!(s.severity, SeverityConfig::default());
    }

    #[test]
    fn bad_scenarios_name_the_key_and_line() {
        let unknown = GOOD.replace("alpha = 0.8", "alpah = 0.8");
        let e = parse_scenario(&unknown, "s.toml").unwrap_err().to_string();
        assert!(
            e.contains("s.toml") && e.contains("alpah") && e.contains("line"),
            "{e}"
        );
        let typed = GOOD.replace("refs = 1000", "refs = \"many\"");
        let e = parse_scenario(&typed, "s.toml").unwrap_err().to_string();
        assert!(e.contains("line 10"), "{e}");
        let range = GOOD.replace("alpha = 0.8", "alpha = -1");
        let e = parse_scenario(&range, "s.toml").unwrap_err().to_string();
        assert!(
            e.contains("process[0] (a).alpha") && e.contains("s.toml, line 9"),
            "{e}"
        );
        // Section 4.5.1's power law is a density only below alpha 1.
        let cache = "[machine]\nmemory_mb = 64\n\n[[process]]\nname = \"c\"\nkind = \"cache\"\n\
                     queries = 10\ndistinct = 100\nalpha = 1.2\npopularity = \"power_law\"\n\
                     cost_ms = [1, 1]\n";
        let e = parse_scenario(cache, "s.toml").unwrap_err().to_string();
        assert!(
            e.contains("process[0] (c).alpha") && e.contains("below 1") && e.contains("line 9"),
            "{e}"
        );
        let unknown_law = cache.replace("power_law", "pareto");
        let e = parse_scenario(&unknown_law, "s.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("pareto") && e.contains("line 10"), "{e}");
        let misplaced = GOOD.replace("refs = 1000", "refs = 1000\nsize_mb = 3");
        let e = parse_scenario(&misplaced, "s.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("size_mb")
                && e.contains("does not apply to kind zipf")
                && e.contains("line 11"),
            "{e}"
        );
        let mem = GOOD.replace("memory_mb = 64", "memory_mb = 1e308");
        let e = parse_scenario(&mem, "s.toml").unwrap_err().to_string();
        assert!(
            e.contains("machine.memory_mb") && e.contains("line 3"),
            "{e}"
        );
        let repeat = GOOD.replace("memory_mb = 64", "memory_mb = 64\nnotify_repeat_s = 0");
        let e = parse_scenario(&repeat, "s.toml").unwrap_err().to_string();
        assert!(
            e.contains("machine.notify_repeat_s") && e.contains("line 4"),
            "{e}"
        );
        let nice = GOOD.replace("name = \"a\"", "name = \"a\"\nnice = 40");
        let e = parse_scenario(&nice, "s.toml").unwrap_err().to_string();
        assert!(e.contains("nice"), "{e}");
        let kind = GOOD.replace("kind = \"zipf\"", "kind = \"zipper\"");
        let e = parse_scenario(&kind, "s.toml").unwrap_err().to_string();
        assert!(e.contains("zipper"), "{e}");
        let policy = format!("{GOOD}\n[policy]\nkind = \"psi\"\nlow = 2.0\n");
        let e = parse_scenario(&policy, "s.toml").unwrap_err().to_string();
        assert!(e.contains("policy.low"), "{e}");
        let hog = format!(
            "{GOOD}\n[[process]]\nname = \"h\"\nkind = \"hog\"\nsize_mb = 8\nretouch_s = 0\n"
        );
        let e = parse_scenario(&hog, "s.toml").unwrap_err().to_string();
        assert!(
            e.contains("process[1] (h).retouch_s") && e.contains("line 16"),
            "{e}"
        );
    }
}
