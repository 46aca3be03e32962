//! The thesis's figures beside ours, with the reason for every large difference worked out
//! from the runs.
//!
//! Sources: the thesis's sections 4.5 and 6.2 to 6.3, as summarized with every number in
//! `../shared/notes/thesis-summary.md`, section 2.11. Equations stand in the thesis's column
//! where the thesis gives a model rather than a measurement (section 4.5).

use std::fmt::Write as _;

use antsched_paper::Experiment;
use serde::Serialize;

use super::*;
use crate::cache::ReleaseOrder;
use crate::sim::{MemReport, ProcReport};

/// Section 6.2.5's table: cache size (MB), runtime (min), hit rate (%), footprint (MB).
const THESIS_TABLE: [(f64, f64, f64, f64); 4] = [
    (0.0, 46.7, 0.0, 3.0),
    (100.0, 34.7, 41.0, 109.0),
    (170.0, 34.1, 63.2, 183.0),
    (300.0, 28.8, 90.2, 195.0),
];
const THESIS_ADAPTIVE_MIN: f64 = 30.6;
const THESIS_HOG_MIN: f64 = 40.9;
/// Fig. 6.1: the cache before S moves, when S moves, S at steady state, the reaction as S
/// falls ("within 100 ms") and to the hog's notifications (mean, max), and the release.
const THESIS_GROWTH_MB: f64 = 180.0;
const THESIS_S_LEAVES_S_MAX_S: f64 = 240.0;
const THESIS_STEADY_S: f64 = 512.0;
const THESIS_REACTION_BEFORE_MS: f64 = 100.0;
const THESIS_REACTION_MEAN_MS: f64 = 8.0;
const THESIS_REACTION_MAX_MS: f64 = 88.0;
const THESIS_RELEASE_S: f64 = 0.4;
const THESIS_FIXED_QUEUE: f64 = 40.0;
/// Section 6.2.6: LRU, LRU with look-ahead, least amortized cost first (min), and "releasing
/// too much at once cost up to 47%".
const THESIS_ORDERS_MIN: [(ReleaseOrder, &str, f64); 3] = [
    (ReleaseOrder::Lru, "LRU", 40.9),
    (ReleaseOrder::LruLookahead, "LRU with look-ahead", 37.4),
    (
        ReleaseOrder::LeastAmortizedCost,
        "least amortized cost first",
        34.1,
    ),
];
const THESIS_ALL_AT_ONCE: f64 = 1.47;
/// Section 6.3.2, the 1 MB-message run: runtime (s) against heap size (MB); 231 never ends.
const THESIS_HEAPS: [(f64, f64); 5] = [
    (220.0, 240.7),
    (225.0, 249.3),
    (227.0, 255.7),
    (228.0, 506.8),
    (230.0, 817.7),
];
const THESIS_NEVER_HEAP: f64 = 231.0;
const THESIS_HEAP_SPEEDUP: f64 = 4.4;
const THESIS_ADAPTIVE_HEAP_MB: f64 = 220.0;
const THESIS_HOG_SLOWDOWN: f64 = 1.55;

fn find<'a>(runs: &'a [MemRun], name: &str) -> Option<&'a MemReport> {
    runs.iter().find(|r| r.name == name).map(|r| &r.report)
}

fn first(r: &MemReport) -> &ProcReport {
    &r.processes[0]
}

/// The first process's runtime, or the run's length as a lower bound when it never finished.
fn runtime_s(r: &MemReport) -> (f64, bool) {
    match first(r).runtime_s {
        Some(t) => (t, false),
        None => (r.duration_s, true),
    }
}

fn minutes(r: Option<&MemReport>) -> (f64, bool) {
    r.map_or((f64::NAN, false), |r| {
        let (t, never) = runtime_s(r);
        (t / 60.0, never)
    })
}

/// Mean of the first process's elastic memory over `[t0, t1]` of the time series.
fn mean_cache(r: &MemReport, proc: usize, t0: f64, t1: f64) -> f64 {
    let v: Vec<f64> = r
        .severity
        .iter()
        .filter(|x| x.time_s >= t0 && x.time_s <= t1)
        .map(|x| x.cache_mb[proc])
        .collect();
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// A cache's hit rate over `[t0, t1]` of the time series.
fn hit_rate_between(r: &MemReport, proc: usize, t0: f64, t1: f64) -> f64 {
    let within: Vec<_> = r
        .severity
        .iter()
        .filter(|x| x.time_s >= t0 && x.time_s <= t1)
        .collect();
    match (within.first(), within.last()) {
        (Some(a), Some(b)) if b.lookups[proc] > a.lookups[proc] => {
            (b.hits[proc] - a.hits[proc]) as f64 / (b.lookups[proc] - a.lookups[proc]) as f64
        }
        _ => f64::NAN,
    }
}

/// The end of the time both of a run's processes ran.
fn both_ran(r: &MemReport) -> f64 {
    r.processes
        .iter()
        .filter_map(|p| p.runtime_s)
        .fold(r.duration_s, f64::min)
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// What a database run did, in the words the explanations use.
fn atis_facts(r: &MemReport) -> String {
    let p = first(r);
    format!(
        "{:.1}% hits, {:.0} MB resident on average, {} pages read back from swap, {} data-file reads",
        p.hit_rate.unwrap_or(0.0) * 100.0,
        p.resident_mb,
        p.pages_read_back,
        r.data_reads
    )
}

/// Every experiment's published figures beside ours.
pub fn evaluate(runs: &[MemRun]) -> Vec<Experiment> {
    vec![
        equilibrium(runs),
        fig_6_1(runs),
        runtime_table(runs),
        release_order(runs),
        heap(runs),
        baselines(runs),
    ]
}

fn equilibrium(runs: &[MemRun]) -> Experiment {
    let title = format!(
        "Two identical caches ({} ms misses, results a page, {} MB for both), the first niced \
         by eta: each one's share of memory and performance (hit rate) against an even split \
         (eta = 1), over the second half of the time both ran. The thesis's column is its \
         model: Eq. 4.5 (M2 / M1 = eta^(1/alpha)), Eqs. 4.6 and 4.7. First with the model's \
         own popularity (the M most popular results carry (M / n)^(1 - alpha) of the asks), \
         then with Zipf's law (rank r asked in proportion to (r + 1)^-alpha).",
        scenarios::EQ_COST_MS,
        scenarios::MEMORY_MB - scenarios::RESERVED_MB
    );
    let mut e = Experiment::new("mem-equilibrium", "4.5", &title);
    for popularity in [Popularity::PowerLaw, Popularity::Zipf] {
        let law = match popularity {
            Popularity::PowerLaw => "",
            Popularity::Zipf => "Zipf's law, ",
        };
        for alpha in ALPHAS {
            let Some(even) = find(runs, &eq_name(popularity, alpha, 1.0)) else {
                continue;
            };
            let (t0, t1) = settled(even);
            let h_even =
                (hit_rate_between(even, 0, t0, t1) + hit_rate_between(even, 1, t0, t1)) / 2.0;
            let m_even = mean_cache(even, 0, t0, t1);
            // The model's premise: the caches contend for the machine.
            e.row(
                &format!("{law}alpha {alpha}, eta 1: time with S below S_max (contention)"),
                None,
                below_s_max(even, t0, t1),
            );
            for eta in ETAS {
                let Some(r) = find(runs, &eq_name(popularity, alpha, eta)) else {
                    continue;
                };
                let (t0, t1) = settled(r);
                let m1 = mean_cache(r, 0, t0, t1);
                let m2 = mean_cache(r, 1, t0, t1);
                let k = eta.powf(1.0 / alpha);
                let at = |q: &str| format!("{law}alpha {alpha}, eta {eta}: {q}");
                e.row(
                    &at("other cache's share of memory (Eq. 4.5)"),
                    Some(k / (1.0 + k)),
                    m2 / (m1 + m2),
                );
                if eta == 1.0 {
                    continue;
                }
                // The niced cache's own share shows a miss that the other's, near 1, hides.
                let model_share = 1.0 / (1.0 + k);
                e.row(
                    &at("niced cache's share of memory (Eq. 4.5)"),
                    Some(model_share),
                    m1 / (m1 + m2),
                );
                let fast = (popularity == Popularity::PowerLaw && eta == ETAS[ETAS.len() - 1])
                    .then(|| find(runs, &eq_fast_repeat_name(alpha)))
                    .flatten()
                    .map(|f| {
                        let (t0, t1) = settled(f);
                        let (f1, f2) = (mean_cache(f, 0, t0, t1), mean_cache(f, 1, t0, t1));
                        f1 / (f1 + f2)
                    });
                // One reason for both shares: it gives the faster reminder's share beside the
                // one-second reminder's.
                let why = share_why(
                    r,
                    (t0, t1),
                    (m1, m2),
                    model_share,
                    fast.map(|s| s / model_share),
                );
                e.why(why.clone());
                if let Some(share) = fast {
                    e.row(
                        &at(&format!(
                            "niced cache's share with the reminder every {} ms (Eq. 4.5)",
                            FAST_REPEAT_S * 1e3
                        )),
                        Some(model_share),
                        share,
                    );
                    e.why(why);
                }
                let h1 = hit_rate_between(r, 0, t0, t1) / h_even;
                let h2 = hit_rate_between(r, 1, t0, t1) / h_even;
                // The model's hit rate grows as M^(1 - alpha). Under Zipf's law a cache that
                // holds the M most popular of N results has sum(i^-alpha, i <= M) / sum(i^-alpha,
                // i <= N), which for a few hundred results is well below the power law (the
                // head of the distribution). Computed for the memory each cache held, results
                // being a page.
                let results = |mb: f64| (mb * 1048576.0 / crate::sim::PAGE as f64).round() as u64;
                let ideal = |m: f64| match popularity {
                    Popularity::PowerLaw => (m / m_even).powf(1.0 - alpha),
                    Popularity::Zipf => {
                        zipf_mass(results(m), alpha) / zipf_mass(results(m_even), alpha)
                    }
                };
                let why = |h: f64, m: f64| {
                    format!(
                        "a cache that held exactly the {} most popular results ({m:.1} MB) \
                         against {} at the even split ({m_even:.0} MB) would have {:.2} of the \
                         even split's hit rate, where the model's M^(1 - alpha) gives {:.2}{}; \
                         ours had {h:.2}",
                        results(m),
                        results(m_even),
                        ideal(m),
                        (m / m_even).powf(1.0 - alpha),
                        match popularity {
                            Popularity::Zipf =>
                                ": the power law leaves out the head of Zipf's \
                                                law, which matters for a small cache",
                            Popularity::PowerLaw => "",
                        }
                    )
                };
                e.row(
                    &at("niced cache's performance (Eq. 4.6)"),
                    Some((2.0 / (1.0 + k)).powf(1.0 - alpha)),
                    h1,
                );
                e.why(why(h1, m1));
                e.row(
                    &at("the same for a cache of the most popular results in the same memory"),
                    None,
                    ideal(m1),
                );
                e.row(
                    &at("other cache's performance (Eq. 4.7)"),
                    Some((2.0 * k / (1.0 + k)).powf(1.0 - alpha)),
                    h2,
                );
                e.why(why(h2, m2));
            }
        }
    }
    e
}

/// The model is about the steady state: the second half of the time both caches ran, after
/// they have filled and settled.
fn settled(r: &MemReport) -> (f64, f64) {
    let end = both_ran(r);
    (end / 2.0, end)
}

/// The fraction of `[t0, t1]`'s samples with S below S_max (the suite's scenarios keep the
/// thesis's S_max, the default).
fn below_s_max(r: &MemReport, t0: f64, t1: f64) -> f64 {
    let s_max = crate::SeverityConfig::default().s_max;
    let within: Vec<_> = r
        .severity
        .iter()
        .filter(|x| x.time_s >= t0 && x.time_s <= t1)
        .collect();
    within.iter().filter(|x| x.severity_s < s_max).count() as f64 / within.len().max(1) as f64
}

/// Why a niced cache's share is off the model's, from the run: how much of the time the
/// caches contended, what the niced cache takes in on misses between its release rounds (a
/// result that came in on a miss stays until the next round, at most the 1 s repeat), and,
/// where the suite ran it, the same run with rounds every [`FAST_REPEAT_S`] (`fast`: that run's
/// niced share over the model's).
fn share_why(
    r: &MemReport,
    (t0, t1): (f64, f64),
    (m1, m2): (f64, f64),
    model_share: f64,
    fast: Option<f64>,
) -> String {
    let model_mb = (m1 + m2) * model_share;
    let within: Vec<_> = r
        .severity
        .iter()
        .filter(|x| x.time_s >= t0 && x.time_s <= t1)
        .collect();
    let misses_per_s = match (within.first(), within.last()) {
        (Some(a), Some(b)) if b.time_s > a.time_s => {
            ((b.lookups[0] - a.lookups[0]) - (b.hits[0] - a.hits[0])) as f64 / (b.time_s - a.time_s)
        }
        _ => f64::NAN,
    };
    let per_second_mb = misses_per_s * crate::sim::PAGE as f64 / 1048576.0;
    let mut why = format!(
        "the caches held {m1:.1} and {m2:.1} MB, the model's split of that {model_mb:.1} MB for \
         the niced one; S was below S_max {:.0}% of the time, and the niced cache took in \
         {misses_per_s:.0} results a second on misses, which wait for its next round (at most \
         the 1 s repeat): up to {per_second_mb:.1} MB",
        below_s_max(r, t0, t1) * 100.0
    );
    let ratio = m1 / (m1 + m2) / model_share;
    if let Some(fast) = fast {
        let _ = write!(
            why,
            ". With the reminder, and so the rounds, every {} ms the niced share is {fast:.2}x \
             the model's, against {ratio:.2}x every second",
            FAST_REPEAT_S * 1e3
        );
        if ratio > 1.0 && fast < ratio {
            let _ = write!(
                why,
                ": {:.0}% of the excess goes with rounds {:.0} times as often",
                ((ratio - fast) / (ratio - 1.0)).min(1.0) * 100.0,
                crate::notify::REPEAT as f64 / 1e9 / FAST_REPEAT_S
            );
        }
    }
    why
}

/// sum(i^-alpha) for i = 1..=n: the popularity mass of a Zipf catalogue's n most popular
/// items (unnormalized).
fn zipf_mass(n: u64, alpha: f64) -> f64 {
    (1..=n.min(scenarios::EQ_DISTINCT))
        .map(|i| (i as f64).powf(-alpha))
        .sum()
}

/// The time the cache took to give its memory back after the hog started: until it was within
/// 10% of the lowest it reached in the following minute.
fn release_s(r: &MemReport, hog_start: f64) -> f64 {
    let window: Vec<_> = r
        .severity
        .iter()
        .filter(|x| x.time_s >= hog_start && x.time_s <= hog_start + 60.0)
        .collect();
    let (Some(start), Some(low)) = (
        window.first().map(|x| x.cache_mb[0]),
        window.iter().map(|x| x.cache_mb[0]).min_by(f64::total_cmp),
    ) else {
        return f64::NAN;
    };
    let target = low + 0.1 * (start - low);
    window
        .iter()
        .find(|x| x.cache_mb[0] <= target)
        .map_or(f64::NAN, |x| x.time_s - hog_start)
}

fn fig_6_1(runs: &[MemRun]) -> Experiment {
    let mut e = Experiment::new(
        "mem-fig6.1",
        "6.2.4, Fig. 6.1",
        "The database's adaptive query cache on the 256 MB machine, a memory hog at 10 minutes \
         (plots fig6_1-*), and the same run with a fixed 200 MB cache.",
    );
    if let Some(r) = find(runs, &policy_name("antsched", true)) {
        let s_max = r.severity.first().map_or(3600.0, |x| x.severity_s);
        let leaves = r.severity.iter().position(|x| x.severity_s < s_max);
        let hog_start = r
            .processes
            .get(1)
            .map_or(f64::NAN, |_| r.duration_s.min(hog_start_of(r)));
        if let Some(i) = leaves {
            let before = &r.severity[i.saturating_sub(1)];
            e.row(
                "cache when S first falls below S_max, MB",
                Some(THESIS_GROWTH_MB),
                before.cache_mb[0],
            );
            e.why(format!(
                "the database's data-file pages share the 200 MB: {:.0} MB of its memory was \
                 not cache when S first fell",
                before.resident_mb[0] - before.cache_mb[0]
            ));
            e.row(
                "time S first falls below S_max, s",
                Some(THESIS_S_LEAVES_S_MAX_S),
                r.severity[i].time_s,
            );
            let free = r.severity[i].free_mb;
            let others = r.severity[i].resident_mb.iter().sum::<f64>() - before.cache_mb[0];
            let growth = before.cache_mb[0] / r.severity[i].time_s.max(1e-9) * 60.0;
            e.why(format!(
                "S leaves S_max when free memory falls under tau ({free:.1} MB free then): the \
                 cache grew by one result a miss, {growth:.0} MB a minute here, beside {others:.0} \
                 MB of the database's data-file pages and the rest of its memory; the thesis's \
                 database grew more slowly and held less of its data file"
            ));
        }
        let steady = before_hog(r, hog_start, |x| x.severity_s);
        e.row(
            "S in the 2 minutes before the hog, median, s",
            Some(THESIS_STEADY_S),
            steady,
        );
        let candidate = before_hog(r, hog_start, |x| x.candidate_age_s);
        let free = before_hog(r, hog_start, |x| x.free_mb);
        e.why(format!(
            "S is the candidate age ({candidate:.0} s here, a power-of-two multiple of 5 s: the \
             age bins of section 5.1) ramped by the {free:.1} MB that stay free (Eq. 4.1); the \
             thesis's 512 s is the same kind of bin boundary"
        ));
        let db = first(r);
        // The thesis gives the reaction twice: "within 100 ms" as S falls before the hog, and
        // 8 ms mean, 88 ms max once the hog pages.
        let (before, after): (Vec<_>, Vec<_>) =
            db.reactions.iter().partition(|x| x.time_s < hog_start);
        let max = |v: &[&crate::sim::Reaction]| v.iter().map(|x| x.ms).fold(f64::NAN, f64::max);
        let mean_of = |v: &[&crate::sim::Reaction]| {
            v.iter().map(|x| x.ms).sum::<f64>() / v.len().max(1) as f64
        };
        let blocked = |v: &[&crate::sim::Reaction]| v.iter().filter(|x| x.ms > 0.0).count();
        let model = "a computing process takes a notification at once, one blocked in a \
                     fault when its read completes (SIGMEM does not interrupt a page fault)";
        e.row(
            "notification to handler before the hog, max, ms (thesis: within 100 ms)",
            Some(THESIS_REACTION_BEFORE_MS),
            max(&before),
        );
        e.why(format!(
            "{model}: {} of {} notifications before the hog found the database in a fault",
            blocked(&before),
            before.len()
        ));
        e.row(
            "notification to handler with the hog, mean, ms",
            Some(THESIS_REACTION_MEAN_MS),
            mean_of(&after),
        );
        e.why(format!(
            "{model}, and each simulated process has a CPU of its own, where the thesis's \
             single CPU also ran the hog: {} of {} notifications after the hog started found \
             the database in a fault",
            blocked(&after),
            after.len()
        ));
        e.row(
            "notification to handler with the hog, max, ms",
            Some(THESIS_REACTION_MAX_MS),
            max(&after),
        );
        e.why(format!(
            "{model}; the longest are reads queued behind the hog's paging, the disk queue up \
             to {} requests ({} pages read by the database in the run)",
            r.max_disk_queue, db.faults
        ));
        e.row(
            "hog start to the cache's release, s",
            Some(THESIS_RELEASE_S),
            release_s(r, hog_start),
        );
        // How long the hog took to get 90% of what it came to hold: the cache gives way as
        // its pages arrive, not before.
        let hog_peak = r
            .severity
            .iter()
            .filter_map(|x| x.resident_mb.get(1))
            .fold(0.0, |a: f64, &b| a.max(b));
        let hog_in = r
            .severity
            .iter()
            .find(|x| x.time_s >= hog_start && x.resident_mb.get(1) >= Some(&(0.9 * hog_peak)))
            .map_or(f64::NAN, |x| x.time_s - hog_start);
        e.why(format!(
            "the cache gives its memory back a few MB a round as the hog's pages arrive, and \
             the hog took {hog_in:.1} s to reach 90% of its {hog_peak:.0} MB resident (it \
             allocates at {} MB/s; the thesis does not say how fast its hog was); measured on \
             the {:.1} s samples of the time series ({:.0} MB released in all)",
            crate::sim::scenario::TOUCH_RATE,
            r.severity
                .get(1)
                .map_or(f64::NAN, |x| x.time_s - r.severity[0].time_s),
            db.released_mb
        ));
        let (t, never) = runtime_s(r);
        e.row_bounded(
            "runtime with the hog, min",
            Some(THESIS_HOG_MIN),
            t / 60.0,
            never,
        );
        e.why(format!("{} ({})", atis_facts(r), scale_note(r)));
        e.row("pages read back, adaptive", None, r.pages_read_back as f64);
    }
    if let Some(f) = find(runs, &fixed_name(FIG_6_1_FIXED_MB, true)) {
        let (t, never) = runtime_s(f);
        e.row_bounded(
            "fixed 200 MB cache with the hog: runtime, min (thesis: never finishes)",
            None,
            t / 60.0,
            never,
        );
        e.row(
            "fixed 200 MB cache with the hog: disk queue, max (thesis: past 40)",
            Some(THESIS_FIXED_QUEUE),
            f.max_disk_queue as f64,
        );
        e.why(format!(
            "past 40 is all the thesis says; the queue is the page-outs and page-ins of the \
             fixed cache and the hog ({} page-outs, {} pages read back)",
            f.page_outs, f.pages_read_back
        ));
        e.row(
            "pages read back, fixed 200 MB",
            None,
            f.pages_read_back as f64,
        );
    }
    e
}

/// The median of a quantity of the time series over the 2 minutes before the hog started.
fn before_hog(r: &MemReport, hog_start: f64, f: impl Fn(&crate::sim::Sample) -> f64) -> f64 {
    median(
        r.severity
            .iter()
            .filter(|x| x.time_s > hog_start - 120.0 && x.time_s < hog_start)
            .map(f)
            .collect(),
    )
}

/// When the hog of a run started: its first sample with memory.
fn hog_start_of(r: &MemReport) -> f64 {
    r.severity
        .iter()
        .find(|x| x.resident_mb.get(1).is_some_and(|&m| m > 0.0))
        .map_or(f64::NAN, |x| x.time_s)
}

fn scale_note(r: &MemReport) -> String {
    format!("{:.0} s simulated", r.duration_s)
}

fn runtime_table(runs: &[MemRun]) -> Experiment {
    let mut e = Experiment::new(
        "mem-runtime-table",
        "6.2.5",
        "The ATIS workload (430,000 queries over 43,000 distinct ones) with fixed query caches \
         and with the adaptive cache: runtime, hit rate, footprint.",
    );
    let mut best: Option<(f64, f64)> = None;
    for (mb, rt, hit, foot) in THESIS_TABLE {
        let Some(r) = find(runs, &fixed_name(mb, false)) else {
            continue;
        };
        let (t, never) = runtime_s(r);
        e.row_bounded(
            &format!("{mb} MB cache: runtime, min"),
            Some(rt),
            t / 60.0,
            never,
        );
        e.why(atis_facts(r));
        if !never && best.is_none_or(|(_, b)| t < b) {
            best = Some((mb, t));
        }
        e.row(
            &format!("{mb} MB cache: hit rate, %"),
            Some(hit),
            first(r).hit_rate.unwrap_or(0.0) * 100.0,
        );
        e.why(format!(
            "the popularity of the 43,000 queries is uniform here (10 runs of each, as ATIS); \
             the hit rate of a cache of C MB is about C over the {:.0} MB all results take, less \
             the first run of each",
            43_000.0 * result_mb_mean()
        ));
        e.row(
            &format!("{mb} MB cache: footprint, MB"),
            Some(foot),
            first(r).resident_mb,
        );
        e.why(format!(
            "the footprint here is the database's resident memory averaged over the run, the \
             data file's cached pages included ({} data-file reads)",
            r.data_reads
        ));
    }
    if let Some(r) = find(runs, &policy_name("antsched", false)) {
        let (t, never) = runtime_s(r);
        e.row_bounded(
            "adaptive cache: runtime, min",
            Some(THESIS_ADAPTIVE_MIN),
            t / 60.0,
            never,
        );
        e.why(atis_facts(r));
        e.row("adaptive cache: footprint, MB", None, first(r).resident_mb);
        if let Some((mb, b)) = best {
            e.row(
                &format!("adaptive / best fixed ({mb} MB here, 300 MB in the thesis)"),
                Some(THESIS_ADAPTIVE_MIN / THESIS_TABLE[3].1),
                t / b,
            );
        }
        if let Some(d) = find(runs, &fixed_name(DEFAULT_CACHE_MB, false)) {
            e.row(
                "adaptive / the default 100 MB cache",
                Some(THESIS_ADAPTIVE_MIN / THESIS_TABLE[1].1),
                t / runtime_s(d).0,
            );
        }
    }
    e
}

/// Mean result size of the ATIS model, MB (whole pages).
fn result_mb_mean() -> f64 {
    // Log-uniform sizes in KiB, rounded up to 4 KiB pages: integrate numerically.
    let [lo, hi] = scenarios::ATIS_RESULT_KB;
    let n = 10_000;
    (0..n)
        .map(|i| {
            let kb = lo * (hi / lo).powf((i as f64 + 0.5) / n as f64);
            (kb / 4.0).ceil() * 4.0
        })
        .sum::<f64>()
        / n as f64
        / 1024.0
}

fn release_order(runs: &[MemRun]) -> Experiment {
    let mut e = Experiment::new(
        "mem-release-order",
        "6.2.6",
        "A fixed 170 MB cache replacing in three orders; and the adaptive cache under the hog \
         releasing everything cheaper than paging in one round instead of a few MB a round.",
    );
    let mut lac = None;
    let mut lru = None;
    for (order, label, paper) in THESIS_ORDERS_MIN {
        let r = find(runs, &order_name(order));
        let (t, never) = minutes(r);
        e.row_bounded(&format!("{label}: runtime, min"), Some(paper), t, never);
        if let Some(r) = r {
            e.why(format!(
                "{}; with every query equally popular the orders differ only in which results \
                 they keep (see the LRU / least amortized cost first row)",
                atis_facts(r)
            ));
        }
        match order {
            ReleaseOrder::Lru => lru = Some(t),
            ReleaseOrder::LeastAmortizedCost => lac = Some(t),
            ReleaseOrder::LruLookahead => {}
        }
    }
    if let (Some(a), Some(b)) = (lru, lac) {
        e.row(
            "LRU / least amortized cost first",
            Some(THESIS_ORDERS_MIN[0].2 / THESIS_ORDERS_MIN[2].2),
            a / b,
        );
        if let (Some(l), Some(c)) = (
            find(runs, &order_name(ReleaseOrder::Lru)),
            find(runs, &order_name(ReleaseOrder::LeastAmortizedCost)),
        ) {
            let [lo, hi] = scenarios::ATIS_COST_MS;
            e.why(format!(
                "both orders hit about as often ({:.1}% LRU, {:.1}% least amortized cost), so \
                 the gain is only in which results are kept: evaluation costs {lo} to {hi} ms \
                 here against {:.2} ms of work every query does, so keeping the dearer results \
                 saves a few ms a hit at most; the thesis's queries varied more in cost than \
                 in what else they paid",
                first(l).hit_rate.unwrap_or(0.0) * 100.0,
                first(c).hit_rate.unwrap_or(0.0) * 100.0,
                scenarios::ATIS_BASE_MS
            ));
        }
    }
    if let (Some(all), Some(few)) = (
        find(runs, ALL_AT_ONCE),
        find(runs, &policy_name("antsched", true)),
    ) {
        e.row(
            "all at once / a few MB a round, with the hog (thesis: up to 1.47)",
            Some(THESIS_ALL_AT_ONCE),
            runtime_s(all).0 / runtime_s(few).0,
        );
        e.why(format!(
            "the thesis gives the worst case it saw; here one round releases {:.0} MB where \
             rounds of 4 MB released {:.0} MB, and the database's runtime changes by the \
             queries it then has to evaluate again ({:.1}% against {:.1}% hits)",
            first(all).released_mb,
            first(few).released_mb,
            first(all).hit_rate.unwrap_or(0.0) * 100.0,
            first(few).hit_rate.unwrap_or(0.0) * 100.0
        ));
    }
    e
}

/// The heap's resident size over the second half of a run (the heap the JVM settled at).
fn settled_heap(r: &MemReport) -> f64 {
    let (end, _) = runtime_s(r);
    median(
        r.severity
            .iter()
            .filter(|x| x.time_s > end / 2.0 && x.time_s < end)
            .map(|x| x.resident_mb[0])
            .collect(),
    )
}

fn heap(runs: &[MemRun]) -> Experiment {
    let mut e = Experiment::new(
        "mem-gc",
        "6.3",
        "A garbage-collected heap (the 1 MB-message Scribe run): runtime against heap size with \
         its thrashing cliff; the adaptive heap (collect when S < 10 min, 10 GB limit); a 90 MB \
         hog; the hog niced +14, into the next class.",
    );
    let fixed = |mb: f64| find(runs, &heap_name(mb));
    let mut cliff_noted = false;
    for mb in HEAPS_MB {
        let Some(r) = fixed(mb) else { continue };
        let paper = THESIS_HEAPS.iter().find(|x| x.0 == mb).map(|x| x.1);
        let (t, never) = runtime_s(r);
        let label = if mb == THESIS_NEVER_HEAP {
            format!("{mb} MB heap: runtime, s (thesis: never finishes)")
        } else {
            format!("{mb} MB heap: runtime, s")
        };
        e.row_bounded(&label, paper, t, never);
        if never && !cliff_noted {
            cliff_noted = true;
            let avail = r
                .severity
                .iter()
                .map(|x| x.resident_mb[0] + x.free_mb)
                .fold(0.0, f64::max);
            e.why(format!(
                "the heap no longer fits in the {avail:.0} MB the machine leaves it, and each \
                 cycle allocates through the whole heap in address order, so the age-ordered \
                 replacement evicts exactly the pages needed next: {} pages read back before the \
                 run was stopped; FreeBSD's pager in the thesis degraded over a few MB more",
                r.pages_read_back
            ));
        } else if never {
            e.why("as the row above: past the cliff every page is read back".into());
        }
    }
    if let (Some(small), Some(big)) = (fixed(HEAPS_MB[0]), fixed(220.0)) {
        e.row(
            "43 MB heap / 220 MB heap, runtime",
            Some(THESIS_HEAP_SPEEDUP),
            runtime_s(small).0 / runtime_s(big).0,
        );
        e.why(format!(
            "collections cost in proportion to the live set here ({} collections at 43 MB, {} at \
             220 MB); the thesis's collector also paid for the heap's size",
            first(small).collections,
            first(big).collections
        ));
    }
    let adaptive = find(runs, JVM_ADAPTIVE);
    if let Some(r) = adaptive {
        e.row(
            "adaptive heap: settled size, MB",
            Some(THESIS_ADAPTIVE_HEAP_MB),
            settled_heap(r),
        );
        let (end, _) = runtime_s(r);
        let late: Vec<f64> = r
            .severity
            .iter()
            .filter(|x| x.time_s > end / 2.0 && x.time_s < end)
            .map(|x| x.resident_mb[0])
            .collect();
        e.why(format!(
            "the heap collects whenever S falls under 10 minutes ({} collections) and then \
             holds its size until S is back at S_max, so over the second half of the run it \
             swings between {:.0} and {:.0} MB resident (the median is the row); the thesis \
             reports where its heap settled, not how it swung",
            first(r).collections,
            late.iter().copied().fold(f64::INFINITY, f64::min),
            late.iter().copied().fold(0.0, f64::max),
        ));
        let (t, never) = runtime_s(r);
        e.row_bounded("adaptive heap: runtime, s", None, t, never);
    }
    if let Some(r) = find(runs, JVM_HOG) {
        let (t, never) = runtime_s(r);
        e.row_bounded(
            "220 MB heap with the 90 MB hog: runtime, s (thesis: never finishes)",
            None,
            t,
            never,
        );
    }
    if let (Some(h), Some(a)) = (find(runs, JVM_ADAPTIVE_HOG), adaptive) {
        let (t, never) = runtime_s(h);
        e.row_bounded(
            "adaptive heap with the hog / without",
            Some(THESIS_HOG_SLOWDOWN),
            t / runtime_s(a).0,
            never,
        );
        e.why(format!(
            "the heap gives way by collecting early ({} collections with the hog, {} without) \
             and reads back {} pages; the thesis's JVM also paid for a collector that touches \
             the whole heap",
            first(h).collections,
            first(a).collections,
            first(h).pages_read_back
        ));
    }
    if let Some(n) = find(runs, JVM_ADAPTIVE_NICED_HOG) {
        e.row(
            "hog niced +14: heap's settled size, MB",
            Some(THESIS_ADAPTIVE_HEAP_MB),
            settled_heap(n),
        );
        let (t, never) = runtime_s(n);
        e.row_bounded("hog niced +14: the heap's runtime, s", None, t, never);
        e.row(
            "hog niced +14: the heap's pages read back (thesis: the hog evicts only its own)",
            None,
            first(n).pages_read_back as f64,
        );
        e.row(
            "hog niced +14: the hog's pages read back",
            None,
            n.processes
                .get(1)
                .map_or(f64::NAN, |p| p.pages_read_back as f64),
        );
        if let Some(a) = adaptive {
            e.row(
                "hog niced +14: the heap's pages read back, alone",
                None,
                first(a).pages_read_back as f64,
            );
        }
    }
    e
}

fn baselines(runs: &[MemRun]) -> Experiment {
    let mut e = Experiment::new(
        "mem-baselines",
        "6 (anchors)",
        "Today's policies on the database (300 MB configured cache) against antsched's adaptive \
         cache, without and with the hog: runtime, footprint, pages read back. The thesis ran none \
         of them.",
    );
    for hog in [false, true] {
        for policy in std::iter::once("antsched").chain(BASELINES) {
            let Some(r) = find(runs, &policy_name(policy, hog)) else {
                continue;
            };
            let tag = format!("{policy}{}", if hog { ", hog" } else { "" });
            let (t, never) = runtime_s(r);
            e.row_bounded(&format!("{tag}: runtime, min"), None, t / 60.0, never);
            e.row(&format!("{tag}: footprint, MB"), None, first(r).resident_mb);
            e.row(
                &format!("{tag}: pages read back"),
                None,
                r.pages_read_back as f64,
            );
        }
    }
    e
}

/// antsched's policy against one baseline on one workload.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    pub baseline: String,
    pub hog: bool,
    /// antsched finished sooner (a baseline that never finished counts as slower).
    pub faster: bool,
    /// antsched's footprint is at most the baseline's (within 1 MB).
    pub smaller: bool,
    pub antsched_min: f64,
    pub baseline_min: f64,
    pub antsched_mb: f64,
    pub baseline_mb: f64,
    /// Free memory, mean over the database's run: memory a smaller footprint left unused.
    pub antsched_free_mb: f64,
    pub baseline_free_mb: f64,
}

/// Mean free memory while the first process ran.
fn mean_free(r: &MemReport) -> f64 {
    let (end, _) = runtime_s(r);
    let v: Vec<f64> = r
        .severity
        .iter()
        .filter(|x| x.time_s <= end)
        .map(|x| x.free_mb)
        .collect();
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// For experiment 6: is antsched's policy ahead of every baseline on runtime at equal or
/// smaller footprint?
pub fn verdicts(runs: &[MemRun]) -> Vec<Verdict> {
    let mut out = Vec::new();
    for hog in [false, true] {
        let Some(a) = find(runs, &policy_name("antsched", hog)) else {
            continue;
        };
        for b in BASELINES {
            let Some(r) = find(runs, &policy_name(b, hog)) else {
                continue;
            };
            let (ta, na) = runtime_s(a);
            let (tb, nb) = runtime_s(r);
            out.push(Verdict {
                baseline: b.into(),
                hog,
                faster: !na && (nb || ta < tb),
                smaller: first(a).resident_mb <= first(r).resident_mb + 1.0,
                antsched_min: ta / 60.0,
                baseline_min: tb / 60.0,
                antsched_mb: first(a).resident_mb,
                baseline_mb: first(r).resident_mb,
                antsched_free_mb: mean_free(a),
                baseline_free_mb: mean_free(r),
            });
        }
    }
    out
}
