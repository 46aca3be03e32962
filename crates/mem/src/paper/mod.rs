//! The thesis's chapter 6 (and section 4.5's equilibrium) on the memory simulator: the memory
//! half of `antsched paper`.
//!
//! Each run is a scenario file (see [`scenarios`]), so anyone can rerun one with `antsched mem
//! simulate`. [`plan`] lists the runs, the caller simulates them (in parallel: each is
//! independent and deterministic for its seed), and [`evaluate`] sets every figure the thesis
//! published beside ours, with the reason worked out from the runs wherever the two differ by
//! more than 15%.
//!
//! The experiments:
//! 1. section 4.5: two identical caches, one niced by eta in {1, 5, 32}, alpha in {0.7, 0.8};
//!    memory shares and each one's performance against Eqs. 4.5 to 4.7, with the model's own
//!    power-law popularity, and with Zipf's law at eta 1 and 32;
//! 2. section 6.2.4 and Fig. 6.1: the database's query cache on the 256 MB machine, S over
//!    time, a memory hog at 10 minutes, and a fixed 200 MB cache under the same hog;
//! 3. section 6.2.5: the runtime table, fixed caches of 0, 100, 170 and 300 MB against the
//!    adaptive cache;
//! 4. section 6.2.6: release orders (LRU, LRU with look-ahead, least amortized cost first),
//!    and the cost of releasing too much at once;
//! 5. section 6.3: a garbage-collected heap, runtime against heap size with its thrashing
//!    cliff, the adaptation that removes it, a 90 MB hog, and the hog niced into a lower class;
//! 6. the anchors' policies (`../shared/notes/adaptive-memory-anchors.md`) against antsched's
//!    on experiments 2 and 3.

mod evaluate;
pub mod scenarios;

pub use evaluate::{evaluate, verdicts, Verdict};

use serde::Serialize;

use crate::cache::ReleaseOrder;
use crate::sim::{parse_scenario, simulate, MemReport, Popularity};
use scenarios::{Atis, Jvm};

/// What the suite runs on.
#[derive(Clone, Debug)]
pub struct MemPaperOptions {
    /// The disk paging I/O goes to.
    pub disk: String,
    /// A quarter of each workload and sparser sweeps.
    pub quick: bool,
}

/// One run of the suite: a name (the scenario file's stem) and its scenario.
#[derive(Clone, Debug, Serialize)]
pub struct PlannedRun {
    pub name: String,
    #[serde(skip)]
    pub scenario: String,
}

/// A run and what it gave.
#[derive(Clone, Debug, Serialize)]
pub struct MemRun {
    pub name: String,
    pub report: MemReport,
}

/// The equilibrium grid of section 4.5.
pub const ETAS: [f64; 3] = [1.0, 5.0, 32.0];
pub const ALPHAS: [f64; 2] = [0.7, 0.8];
/// The equilibrium with Zipf's law runs where the head of its distribution matters, the
/// niced cache of a few hundred results at eta 32, and the even split it is measured against.
pub const ZIPF_ETAS: [f64; 2] = [1.0, 32.0];
/// The eta-32 equilibrium once more with the reminder every 100 ms instead of every second:
/// how much of the niced cache's excess share is its growth between release rounds.
pub const FAST_REPEAT_S: f64 = 0.1;
/// The fixed cache sizes of section 6.2.5's table, MiB.
pub const CACHE_SIZES: [f64; 4] = [0.0, 100.0, 170.0, 300.0];
/// The cache the thesis's default configuration has (the "default" row).
pub const DEFAULT_CACHE_MB: f64 = 100.0;
/// Fig. 6.1's baseline: a fixed 200 MB cache under the hog.
pub const FIG_6_1_FIXED_MB: f64 = 200.0;
/// The fixed cache of section 6.2.6's release-order comparison.
pub const ORDER_CACHE_MB: f64 = 170.0;
/// "Releasing too much at once": every entry cheaper than paging in one round.
pub const ALL_AT_ONCE_MB: f64 = 256.0;
/// The baselines' configured cache (they trim it on their own signals).
pub const BASELINE_CACHE_MB: f64 = 300.0;
/// The anchors' policies, as the scenario files name them.
pub const BASELINES: [&str; 5] = ["fixed", "psi", "halve", "senpai", "damon_reclaim"];
/// The JVM's heap sizes: the thesis's table around the cliff, and below it.
pub const HEAPS_MB: [f64; 11] = [
    43.0, 50.0, 100.0, 150.0, 200.0, 220.0, 225.0, 227.0, 228.0, 230.0, 231.0,
];
const HEAPS_QUICK_MB: [f64; 6] = [43.0, 100.0, 220.0, 227.0, 228.0, 231.0];
/// The adaptive JVM's heap limit: "10 GB", so that only the severity sizes it.
pub const ADAPTIVE_HEAP_MB: f64 = 10_000.0;
/// Nice +14 moves the hog into the next priority class (section 6.3.4).
pub const HOG_NICE: i64 = 14;

/// The names of the runs, so that [`plan`] and [`evaluate`] agree.
pub fn eq_name(popularity: Popularity, alpha: f64, eta: f64) -> String {
    match popularity {
        Popularity::PowerLaw => format!("eq-alpha{alpha}-eta{eta}"),
        Popularity::Zipf => format!("eq-zipf-alpha{alpha}-eta{eta}"),
    }
}
/// The power-law run at `alpha` and the largest eta with the [`FAST_REPEAT_S`] reminder.
pub fn eq_fast_repeat_name(alpha: f64) -> String {
    format!(
        "{}-repeat{FAST_REPEAT_S}",
        eq_name(Popularity::PowerLaw, alpha, ETAS[ETAS.len() - 1])
    )
}
pub fn fixed_name(mb: f64, hog: bool) -> String {
    format!("atis-fixed-{mb}{}", if hog { "-hog" } else { "" })
}
pub fn policy_name(policy: &str, hog: bool) -> String {
    match policy {
        "antsched" => format!("atis-adaptive{}", if hog { "-hog" } else { "" }),
        "fixed" => fixed_name(BASELINE_CACHE_MB, hog),
        p => format!("atis-{p}{}", if hog { "-hog" } else { "" }),
    }
}
pub fn order_name(order: ReleaseOrder) -> String {
    match order {
        ReleaseOrder::LeastAmortizedCost => fixed_name(ORDER_CACHE_MB, false),
        ReleaseOrder::Lru => format!("atis-lru-{ORDER_CACHE_MB}"),
        ReleaseOrder::LruLookahead => format!("atis-lookahead-{ORDER_CACHE_MB}"),
    }
}
pub const ALL_AT_ONCE: &str = "atis-adaptive-hog-all-at-once";
pub fn heap_name(mb: f64) -> String {
    format!("jvm-heap-{mb}")
}
pub const JVM_ADAPTIVE: &str = "jvm-adaptive";
pub const JVM_HOG: &str = "jvm-heap-220-hog";
pub const JVM_ADAPTIVE_HOG: &str = "jvm-adaptive-hog";
pub const JVM_ADAPTIVE_NICED_HOG: &str = "jvm-adaptive-niced-hog";

/// Every run of the suite, each once.
pub fn plan(o: &MemPaperOptions) -> Vec<PlannedRun> {
    let scale = if o.quick { 0.25 } else { 1.0 };
    let disk = o.disk.as_str();
    let mut runs: Vec<PlannedRun> = Vec::new();
    let mut add = |name: String, scenario: String| {
        if !runs.iter().any(|r| r.name == name) {
            runs.push(PlannedRun { name, scenario });
        }
    };
    // 1. The weighted equilibrium.
    let queries = (1_000_000.0 * scale) as u64;
    for (popularity, etas) in [
        (Popularity::PowerLaw, &ETAS[..]),
        (Popularity::Zipf, &ZIPF_ETAS[..]),
    ] {
        for alpha in ALPHAS {
            for &eta in etas {
                add(
                    eq_name(popularity, alpha, eta),
                    scenarios::two_caches(eta, alpha, popularity, queries, disk, None),
                );
            }
        }
    }
    for alpha in ALPHAS {
        add(
            eq_fast_repeat_name(alpha),
            scenarios::two_caches(
                ETAS[ETAS.len() - 1],
                alpha,
                Popularity::PowerLaw,
                queries,
                disk,
                Some(FAST_REPEAT_S),
            ),
        );
    }
    let atis = Atis {
        scale,
        disk,
        ..Atis::default()
    };
    // 2. Fig. 6.1, sampled finely enough to time the release after the hog.
    add(
        policy_name("antsched", true),
        scenarios::atis(&Atis {
            hog: true,
            sample_s: 0.1,
            ..atis.clone()
        }),
    );
    add(
        fixed_name(FIG_6_1_FIXED_MB, true),
        scenarios::atis(&Atis {
            policy: "fixed",
            cache_mb: Some(FIG_6_1_FIXED_MB),
            hog: true,
            ..atis.clone()
        }),
    );
    // 3. The runtime table.
    for mb in CACHE_SIZES {
        add(
            fixed_name(mb, false),
            scenarios::atis(&Atis {
                policy: "fixed",
                cache_mb: Some(mb),
                ..atis.clone()
            }),
        );
    }
    add(policy_name("antsched", false), scenarios::atis(&atis));
    // 4. Release orders on the fixed 170 MB cache, and everything at once under the hog.
    for order in [ReleaseOrder::Lru, ReleaseOrder::LruLookahead] {
        add(
            order_name(order),
            scenarios::atis(&Atis {
                policy: "fixed",
                cache_mb: Some(ORDER_CACHE_MB),
                order,
                ..atis.clone()
            }),
        );
    }
    add(
        ALL_AT_ONCE.into(),
        scenarios::atis(&Atis {
            hog: true,
            round_mb: ALL_AT_ONCE_MB,
            ..atis.clone()
        }),
    );
    // 6. The anchors' policies on 2 and 3, configured with the largest cache of the table.
    for policy in BASELINES {
        for hog in [false, true] {
            add(
                policy_name(policy, hog),
                scenarios::atis(&Atis {
                    policy,
                    cache_mb: Some(BASELINE_CACHE_MB),
                    hog,
                    ..atis.clone()
                }),
            );
        }
    }
    // 5. The garbage-collected heap.
    let jvm = Jvm {
        policy: "fixed",
        heap_mb: 220.0,
        hog: None,
        scale,
        disk,
    };
    let heaps: &[f64] = if o.quick { &HEAPS_QUICK_MB } else { &HEAPS_MB };
    for &mb in heaps {
        add(
            heap_name(mb),
            scenarios::jvm(&Jvm {
                heap_mb: mb,
                ..jvm.clone()
            }),
        );
    }
    let adaptive = Jvm {
        policy: "antsched",
        heap_mb: ADAPTIVE_HEAP_MB,
        ..jvm.clone()
    };
    add(JVM_ADAPTIVE.into(), scenarios::jvm(&adaptive));
    add(
        JVM_HOG.into(),
        scenarios::jvm(&Jvm {
            hog: Some(0),
            ..jvm.clone()
        }),
    );
    add(
        JVM_ADAPTIVE_HOG.into(),
        scenarios::jvm(&Jvm {
            hog: Some(0),
            ..adaptive.clone()
        }),
    );
    add(
        JVM_ADAPTIVE_NICED_HOG.into(),
        scenarios::jvm(&Jvm {
            hog: Some(HOG_NICE),
            ..adaptive
        }),
    );
    runs
}

/// Simulates one planned run.
pub fn run_one(p: &PlannedRun, seed: u64) -> Result<MemRun, String> {
    let scenario =
        parse_scenario(&p.scenario, &format!("{}.toml", p.name)).map_err(|e| e.to_string())?;
    let report = simulate(&scenario, seed).map_err(|e| format!("{}: {e}", p.name))?;
    Ok(MemRun {
        name: p.name.clone(),
        report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every planned scenario is a valid scenario file, and names are unique.
    #[test]
    fn every_planned_scenario_parses() {
        for quick in [false, true] {
            let plan = plan(&MemPaperOptions {
                disk: "deskstar-34gxp".into(),
                quick,
            });
            for p in &plan {
                parse_scenario(&p.scenario, &p.name).unwrap();
            }
            let mut names: Vec<_> = plan.iter().map(|p| &p.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), plan.len());
        }
    }
}
