//! The memory simulator against the thesis's shapes (section 6.2's database cache; section
//! 4.5's weighted equilibrium is in `paper.rs`, on the paper's own scenarios) and its contract
//! (deterministic, bad scenarios refused).

use antsched_mem::sim::{parse_scenario, simulate, MemReport};

fn run(text: &str) -> MemReport {
    let s = parse_scenario(text, "test.toml").unwrap();
    simulate(&s, 1).unwrap()
}

/// A database with a query cache on the thesis's 256 MB machine (about 200 MB for the
/// applications), a data file larger than memory, and optionally a hog.
fn database(cache: &str, hog: Option<f64>, policy: &str) -> String {
    let hog = hog.map_or(String::new(), |at| {
        format!("\n[[process]]\nname = \"hog\"\nkind = \"hog\"\nsize_mb = 150\nstart_s = {at}\n")
    });
    format!(
        r#"
[machine]
memory_mb = 256
reserved_mb = 56
max_time_s = 3000

[policy]
kind = "{policy}"

[[process]]
name = "db"
kind = "cache"
queries = 120000
distinct = 43000
types = 43
alpha = 0.6
cost_ms = [0.5, 8]
result_kb = [2, 16]
base_ms = 2
data_mb = 200
data_pages_per_miss = 2
{cache}
{hog}"#
    )
}

/// Fig. 6.1: the cache grows while S stays at S_max, S then falls (exponentially with free
/// memory) to the candidate age, and the database reacts to notifications within 100 ms.
#[test]
fn section_6_2_fig_6_1_growth_at_s_max_then_a_fall_to_the_candidate_age() {
    let r = run(&database("", None, "antsched"));
    let db = &r.processes[0];
    assert!(db.finished && db.runtime_s.is_some());
    let s = &r.severity;
    let first_below = s
        .iter()
        .position(|x| x.severity_s < 3600.0)
        .expect("S falls");
    // Growth at S_max: the cache is tens of MB before S moves.
    assert!(
        s[first_below.saturating_sub(1)].cache_mb[0] > 40.0,
        "{:?}",
        s[first_below - 1]
    );
    // S ends near the candidate age, far below S_max, with free memory used up: over the
    // last minute (one sample can catch the cache between release rounds), the median free
    // memory is under a quarter of tau (20 MB here).
    let last = &s[s.len() - 2];
    assert!(last.severity_s < 1500.0, "{last:?}");
    let mut free: Vec<f64> = s
        .iter()
        .filter(|x| x.time_s > last.time_s - 60.0)
        .map(|x| x.free_mb)
        .collect();
    free.sort_by(f64::total_cmp);
    assert!(
        free[free.len() / 2] < 5.0,
        "free over the last minute: {free:?}"
    );
    assert!(db.notifications > 0);
    assert!(
        db.reaction_ms_max < 100.0,
        "reaction {} ms",
        db.reaction_ms_max
    );
}

/// Section 6.2.5: a memory hog at 10 minutes; the adaptive cache gives its memory back
/// (fewer pages read back, faster) where a fixed 200 MB cache pages.
#[test]
fn section_6_2_5_the_adaptive_cache_makes_room_for_a_hog_and_the_fixed_one_pages() {
    let adaptive = run(&database("", Some(600.0), "antsched"));
    let fixed = run(&database("cache_mb = 200", Some(600.0), "fixed"));
    let before = adaptive
        .severity
        .iter()
        .filter(|x| x.time_s > 500.0 && x.time_s < 600.0)
        .map(|x| x.cache_mb[0])
        .fold(0.0, f64::max);
    let after = adaptive
        .severity
        .iter()
        .filter(|x| x.time_s > 700.0)
        .map(|x| x.cache_mb[0])
        .fold(f64::INFINITY, f64::min);
    assert!(
        after < before / 2.0,
        "cache {before:.0} MB before the hog, {after:.0} after"
    );
    assert!(
        fixed.pages_read_back > 10 * adaptive.pages_read_back.max(1),
        "read back: fixed {} adaptive {}",
        fixed.pages_read_back,
        adaptive.pages_read_back
    );
    let rt = |r: &MemReport| r.processes[0].runtime_s.unwrap_or(f64::INFINITY);
    assert!(
        rt(&adaptive) < rt(&fixed),
        "{} vs {}",
        rt(&adaptive),
        rt(&fixed)
    );
}

#[test]
fn the_same_scenario_and_seed_give_the_same_run() {
    let text = database("", Some(100.0), "antsched").replace("queries = 120000", "queries = 20000");
    let a = run(&text);
    let b = run(&text);
    assert_eq!(a.processes[0].runtime_s, b.processes[0].runtime_s);
    assert_eq!(a.pages_read_back, b.pages_read_back);
    assert_eq!(a.sim.page_refs, b.sim.page_refs);
}

/// Every baseline runs the same workload to completion and reports.
#[test]
fn every_baseline_runs_the_database_with_a_hog() {
    for policy in ["fixed", "psi", "halve", "senpai", "damon_reclaim"] {
        let text = database("cache_mb = 300", Some(300.0), policy)
            .replace("queries = 120000", "queries = 40000");
        let r = run(&text);
        assert_eq!(r.policy, policy);
        assert!(
            r.processes[0].runtime_s.is_some(),
            "{policy} did not finish"
        );
    }
}

/// A long run reports its progress as it goes: shares in [0, 1] that never fall, and the
/// same result as without.
#[test]
fn a_long_run_reports_its_progress_within_the_run() {
    let s = parse_scenario(&database("", None, "antsched"), "test.toml").unwrap();
    let mut seen = Vec::new();
    let with = antsched_mem::sim::simulate_with_progress(&s, 1, &mut |x| seen.push(x)).unwrap();
    assert!(seen.len() >= 10, "{seen:?}");
    assert!(seen.iter().all(|s| (0.0..=1.0).contains(s)));
    assert!(
        seen.windows(2).all(|w| w[1] >= w[0]),
        "never falls: {seen:?}"
    );
    assert!(seen.last().is_some_and(|&s| s > 0.9), "{seen:?}");
    let without = simulate(&s, 1).unwrap();
    assert_eq!(with.duration_s, without.duration_s);
    assert_eq!(with.pages_read_back, without.pages_read_back);
}
