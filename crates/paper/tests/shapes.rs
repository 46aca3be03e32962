//! The headline shapes of the paper's experiments, from one run of the suite, with the
//! tolerances stated in each test; and the comparison's promises (every scheduler on every
//! microbenchmark, the default near every column's best).

use std::sync::OnceLock;

use antsched_paper::{self as paper, Experiment, PaperOptions, PaperRun};
use antsched_sim::{disk_model, simulate};
use antsched_workload::fio::{parse, JobFile};
use antsched_workload::report::RunReport;

fn job(text: &str) -> JobFile {
    parse(text, "test.fio").unwrap()
}

fn sim(text: &str, spec: &str, seed: u64) -> RunReport {
    simulate(
        &job(text),
        disk_model("deskstar-34gxp").unwrap(),
        spec,
        seed,
    )
    .unwrap()
}

/// The whole suite, run once for all the shape tests below (about a second in release).
fn suite() -> &'static (Vec<PaperRun>, Vec<Experiment>) {
    static SUITE: OnceLock<(Vec<PaperRun>, Vec<Experiment>)> = OnceLock::new();
    SUITE.get_or_init(|| {
        let runs = paper::run(&paper::plan(&PaperOptions::default()), 1, &|| {}).unwrap();
        let e = paper::evaluate(&runs, &PaperOptions::default());
        (runs, e)
    })
}

fn run(group: &str, variant: &str, x: Option<f64>, label: &str) -> &'static RunReport {
    &suite()
        .0
        .iter()
        .find(|r| {
            r.plan.group == group
                && r.plan.variant == variant
                && r.plan.x == x
                && r.plan.label == label
        })
        .unwrap_or_else(|| panic!("no run {group} {variant} {x:?} {label}"))
        .report
}

fn mb_s(group: &str, variant: &str, x: Option<f64>, label: &str) -> f64 {
    run(group, variant, x, label).throughput_mb_s
}

fn gain(group: &str, variant: &str, x: Option<f64>) -> f64 {
    mb_s(group, variant, x, paper::ANTICIPATORY) / mb_s(group, variant, x, paper::BASELINE)
}

fn shares(group: &str, label: &str) -> Vec<f64> {
    let r = suite()
        .0
        .iter()
        .find(|r| r.plan.group == group && r.plan.label == label)
        .unwrap();
    r.report.contexts.iter().map(|c| c.share).collect()
}

/// One reader alone: the disk's bandwidth for 64 KB synchronous sequential reads.
fn single_reader_mb_s() -> f64 {
    sim(
        "[r]\nrw=read\nbs=64k\nsize=1g\nioengine=mmap\ntime_based\nruntime=20s\nantsched_issue_delay=200us\nfilename=r\n",
        "aged-sptf",
        1,
    )
    .throughput_mb_s
}

/// Section 4.1: "four times" for two sequential mmap readers; the window is the paper's
/// figure give or take a quarter (the paper gives one number, read off its Figure 4).
#[test]
fn sequential_mmap_readers_gain_about_four_times_and_reach_90_percent_of_one_reader() {
    let g = gain("fig4-access-patterns", "seq/mmap", None);
    assert!((3.0..=5.0).contains(&g), "gain {g}, the paper's about 4");
    let anticipated = mb_s(
        "fig4-access-patterns",
        "seq/mmap",
        None,
        paper::ANTICIPATORY,
    );
    let alone = single_reader_mb_s();
    assert!(
        anticipated >= 0.9 * alone,
        "{anticipated} MB/s against {alone} alone"
    );
}

/// Section 4.1: alternate blocks about double ("half the disk bandwidth" against 5 MB/s),
/// random blocks +28% (read) and +30% (mmap). The windows are the paper's figures: 1.8 to
/// 2.5 for a doubling that the paper gives as a fraction of the bandwidth, and +18% to +40%
/// around its +28 to +30%.
#[test]
fn alternate_blocks_gain_about_2x_random_near_the_papers_28_to_30_percent() {
    for v in ["alter/read", "alter/mmap"] {
        let g = gain("fig4-access-patterns", v, None);
        assert!((1.8..=2.5).contains(&g), "{v}: {g}");
    }
    for v in ["random/read", "random/mmap"] {
        let g = gain("fig4-access-patterns", v, None);
        assert!(
            (1.18..=1.40).contains(&g),
            "{v}: {g}, the paper's +28 to +30%"
        );
    }
}

#[test]
fn with_read_ahead_the_baseline_is_near_full_bandwidth_and_anticipation_no_worse() {
    let base = mb_s("fig4-access-patterns", "seq/read", None, paper::BASELINE);
    let alone = single_reader_mb_s();
    assert!(base >= 0.9 * alone, "{base} against {alone}");
    let g = gain("fig4-access-patterns", "seq/read", None);
    assert!(
        g >= 0.99,
        "anticipation made prefetching readers slower: {g}"
    );
}

/// Anticipation's waits in the suite's run of `group`/`variant` at think time `t`.
fn waits(group: &str, variant: &str, t: f64) -> u64 {
    run(group, variant, Some(t), paper::ANTICIPATORY)
        .anticipation
        .waits
}

/// The think times of a sweep, increasing.
fn think_times(group: &str, variant: &str) -> Vec<f64> {
    paper::sweep_xs(&suite().0, group, variant)
}

/// Where the gain of a symmetric sweep ends (the first think time whose gain is at most
/// 1.1), where anticipation stops waiting (its first think time without a wait), and the
/// think time of the asymmetric sweep's dip (where as-aged-sptf is slowest), worked out here
/// from the runs.
fn end_stop_dip(group: (&str, &str), asym: (&str, &str)) -> (f64, f64, f64) {
    let xs = think_times(group.0, group.1);
    let end = xs
        .iter()
        .copied()
        .find(|&t| gain(group.0, group.1, Some(t)) <= 1.1)
        .expect("the gain never ends");
    let stop = xs
        .iter()
        .copied()
        .find(|&t| waits(group.0, group.1, t) == 0)
        .expect("anticipation never stops waiting");
    let dip = think_times(asym.0, asym.1)
        .into_iter()
        .min_by(|&x, &y| {
            mb_s(asym.0, asym.1, Some(x), paper::ANTICIPATORY).total_cmp(&mb_s(
                asym.0,
                asym.1,
                Some(y),
                paper::ANTICIPATORY,
            ))
        })
        .unwrap();
    (end, stop, dip)
}

/// Section 4.2.1 on the suite's default layout (the files 6 GB apart): four times at t = 0,
/// declining, and within 10% of the baseline from where it ends to 12 ms. Where it ends is
/// not the paper's "about 8ms" here but where the rule's arithmetic puts it: the SPTF rule
/// waits while the median think time is below the calibrated curve's cost of a switch less
/// the reader's decayed average positioning, and once that average has taken one switch the
/// median passes it at the first think time `paper::first_not_waited` gives. The runs must
/// stop waiting exactly there, and the gain end there. At 13 and 14 ms the drive's own
/// read-ahead starts serving the baseline from its cache and anticipation, pricing switches
/// with the calibrated curve, is behind by up to a fifth (explained in the report): it must
/// not lose more than a quarter.
#[test]
fn the_symmetric_gain_declines_and_ends_where_the_curve_prices_a_switch() {
    assert!(gain("fig5-symmetric", "", Some(0.0)) >= 3.5);
    assert!(gain("fig5-symmetric", "", Some(4.0)) > 1.3);
    let (end, stop, _) = end_stop_dip(("fig5-symmetric", ""), ("fig6-asymmetric", ""));
    let o = PaperOptions::default();
    let w = paper::wait_thresholds(&o, o.file_spacing).expect("the calibrated curve");
    let predicted = paper::first_not_waited(&think_times("fig5-symmetric", ""), w.one_switch_ms)
        .expect("the sweep reaches the one-switch benefit");
    assert_eq!(
        stop, predicted,
        "waiting stops at {stop} ms, the rule says {predicted} ms"
    );
    assert_eq!(
        end, stop,
        "the gain ends at {end} ms, waiting stops at {stop} ms"
    );
    let mut last = f64::INFINITY;
    for t in 0..=12 {
        let g = gain("fig5-symmetric", "", Some(f64::from(t)));
        assert!(g <= last * 1.02, "t = {t}: gain {g} rose from {last}");
        if f64::from(t) >= end {
            assert!((0.9..=1.1).contains(&g), "t = {t}: gain {g}");
        }
        last = g;
    }
    for t in [13.0, 14.0] {
        let g = gain("fig5-symmetric", "", Some(t));
        assert!(g >= 0.75, "t = {t}: gain {g}");
    }
}

/// Section 4.2.2 on the default layout: a dip, then a recovery to the maximum once only the
/// quick reader is waited for; the dip at the last think time the rule still waits for the
/// slow reader, whose average positioning has taken two switches (within one step of the
/// sweep: the second switch comes from a little nearer, after the other reader's run, and the
/// curve's slope there moves the benefit by a few microseconds).
#[test]
fn the_asymmetric_case_dips_then_recovers_once_only_the_fast_reader_is_waited_for() {
    let a = |t: f64| mb_s("fig6-asymmetric", "", Some(t), paper::ANTICIPATORY);
    let start = a(0.0);
    let dip = (1..=8)
        .map(|t| a(f64::from(t)))
        .fold(f64::INFINITY, f64::min);
    assert!(dip < 0.8 * start, "no dip: {dip} against {start}");
    assert!(
        a(14.0) >= 0.95 * start,
        "no recovery: {} against {start}",
        a(14.0)
    );
    let (_, _, t) = end_stop_dip(("fig5-symmetric", ""), ("fig6-asymmetric", ""));
    let o = PaperOptions::default();
    let w = paper::wait_thresholds(&o, o.file_spacing).unwrap();
    let predicted =
        paper::last_waited(&think_times("fig6-asymmetric", ""), w.two_switches_ms).unwrap();
    assert!(
        (t - predicted).abs() <= 1.0,
        "dip at {t} ms, the rule says {predicted} ms"
    );
}

/// Sections 4.2.1 and 4.2.2 with the readers' files back to back, the least distance two
/// 1 GB files allow and the layout the original release's README makes them in (`file0` and
/// `file1` written one after the other): the setup of the suite meant to reproduce the
/// paper's think-time shapes (its default spaces the files for section 4.1's random gain,
/// tested above on its +28 to +30%). The windows are the paper's figures within a step of
/// the sweep: the gain ends "at about 8ms", 7 to 9 ms; the dip is where the heuristic stops
/// waiting for the slow reader, "(4ms)", 3 to 5 ms. A miss fails.
#[test]
fn with_the_files_back_to_back_the_gain_ends_near_8ms_and_the_dip_is_near_4ms() {
    let mib = paper::SPACING_SWEEP_MIB[0];
    assert_eq!(mib << 20, paper::FILE_SIZE, "the sweep starts back to back");
    let (sym, asym) = (format!("symmetric/{mib}"), format!("asymmetric/{mib}"));
    let g = paper::SPACING_SWEEP;
    let (end, _, dip) = end_stop_dip((g, &sym), (g, &asym));
    assert!(
        (7.0..=9.0).contains(&end),
        "the gain ends at {end} ms, the paper's about 8"
    );
    assert!(
        (3.0..=5.0).contains(&dip),
        "the dip is at {dip} ms, the paper's 4"
    );
    // Four times at t = 0, a dip, and the recovery "back to the maximum".
    assert!(gain(g, &sym, Some(0.0)) >= 3.5);
    let a = |t: f64| mb_s(g, &asym, Some(t), paper::ANTICIPATORY);
    assert!(
        a(dip) < 0.8 * a(0.0),
        "no dip: {} against {}",
        a(dip),
        a(0.0)
    );
    assert!(a(14.0) >= 0.95 * a(0.0), "no recovery: {}", a(14.0));
    // The report names this layout among those that reproduce both.
    let e = suite()
        .1
        .iter()
        .find(|e| e.id == paper::SPACING_SWEEP)
        .expect("the sweep's experiment");
    let note = e.note.as_deref().expect("the sweep's summary");
    let both = note
        .split("both hold")
        .nth(1)
        .and_then(|s| s.split('.').next())
        .unwrap_or_default();
    assert!(both.contains(&mib.to_string()), "{note}");
}

/// The spacing sweep: at every distance the runs stop waiting exactly where the rule's
/// arithmetic on the calibrated curve says (one switch in the reader's average), and the dip
/// falls within a step of where it says (two switches); the end and the dip move later as
/// the files move apart, from back to back to twice the default.
#[test]
fn the_file_spacing_moves_the_end_and_the_dip_as_the_curve_predicts() {
    let o = PaperOptions::default();
    let g = paper::SPACING_SWEEP;
    let mut seen = Vec::new();
    for mib in paper::SPACING_SWEEP_MIB {
        let (sym, asym) = (format!("symmetric/{mib}"), format!("asymmetric/{mib}"));
        let (_, stop, dip) = end_stop_dip((g, &sym), (g, &asym));
        let w = paper::wait_thresholds(&o, mib << 20).unwrap();
        let p_stop = paper::first_not_waited(&think_times(g, &sym), w.one_switch_ms).unwrap();
        let p_dip = paper::last_waited(&think_times(g, &asym), w.two_switches_ms).unwrap();
        assert_eq!(
            stop, p_stop,
            "{mib} MiB: waiting stops at {stop} ms, the rule says {p_stop}"
        );
        assert!(
            (dip - p_dip).abs() <= 1.0,
            "{mib} MiB: dip at {dip} ms, the rule says {p_dip}"
        );
        seen.push((stop, dip));
    }
    let (first, last) = (seen[0], seen[seen.len() - 1]);
    assert!(last.0 > first.0, "waiting stops at {first:?} and {last:?}");
    assert!(last.1 > first.1, "the dip is at {first:?} and {last:?}");
}

/// Section 4.2.4: "For n = 0, the anticipatory scheduler can cope with all requests arriving
/// slowly. But for n between 1 and 4, the anticipation heuristic performs only slightly worse
/// than the original system: by about 20%." The windows: as/original within 5% of 1 at n = 0,
/// and 0.7 to 0.9 (the paper's 0.8, give or take half its loss) for n = 1 to 4, with the
/// adversary's requests arriving together, as the paper likens them to a large read split into
/// pieces. Every wait then times out: anticipation gains nothing and loses the timeouts.
#[test]
fn the_adversary_copes_at_n_0_and_costs_about_20_percent_for_n_1_to_4() {
    let g = gain("fig7-adversary", "", Some(0.0));
    assert!(
        (0.95..=1.05).contains(&g),
        "n = 0: {g}, the paper's \"copes\""
    );
    for n in 1..=4 {
        let g = gain("fig7-adversary", "", Some(f64::from(n)));
        assert!(
            (0.7..=0.9).contains(&g),
            "n = {n}: {g}, the paper's about 0.8"
        );
        let a = run(
            "fig7-adversary",
            "",
            Some(f64::from(n)),
            paper::ANTICIPATORY,
        );
        assert_eq!(a.anticipation.hits, 0, "n = {n}: a wait was answered");
        assert!(a.anticipation.timeouts > 0, "n = {n}: no timeout");
    }
}

/// The same adversary with its rapid requests issued one at a time is not the paper's
/// figure: from n = 2 on the heuristic waits within each burst and is answered (n answered
/// waits per timeout, within 10%), and anticipation gains. The report explains the
/// difference with these runs.
#[test]
fn one_request_at_a_time_the_heuristic_is_answered_within_the_bursts_and_gains() {
    for n in 2..=4 {
        let x = Some(f64::from(n));
        let a = run("sec4.2.4-one-at-a-time", "", x, paper::ANTICIPATORY);
        let per = a.anticipation.hits as f64 / a.anticipation.timeouts.max(1) as f64;
        assert!(
            (f64::from(n) * 0.9..=f64::from(n) * 1.1).contains(&per),
            "n = {n}: {per} answered waits per timeout"
        );
        let g = gain("sec4.2.4-one-at-a-time", "", x);
        assert!(g > 1.0, "n = {n}: {g}");
    }
}

#[test]
fn stride_shares_without_and_with_anticipation() {
    // 1:2 weights. Without anticipation, near 1:1 (within 25%); with as-stride and the
    // combination, near 1:2 (within 20%); the combination at full throughput (90% of
    // anticipated Aged-SPTF on the same readers).
    let ratio = |l: &str| {
        let s = shares("fig12-stride-1-2", l);
        s[1] / s[0]
    };
    assert!(
        (0.8..=1.25).contains(&ratio("stride")),
        "{}",
        ratio("stride")
    );
    assert!(
        (1.6..=2.4).contains(&ratio("as-stride")),
        "{}",
        ratio("as-stride")
    );
    assert!(
        (1.6..=2.4).contains(&ratio("as-stride-combo")),
        "{}",
        ratio("as-stride-combo")
    );
    let combo = mb_s("fig12-stride-1-2", "", None, "as-stride-combo");
    let best = mb_s(
        "fig4-access-patterns",
        "seq/mmap",
        None,
        paper::ANTICIPATORY,
    );
    assert!(combo >= 0.9 * best, "{combo} against {best}");
    // 1:1:3 weights: Stride 1:1:2, Lottery 2:2:3, as-stride 1:1:3 (each within 15%).
    let r_over_p = |l: &str| {
        let s = shares("sec2-shares-1-1-3", l);
        s[2] / ((s[0] + s[1]) / 2.0)
    };
    for (l, want) in [("stride", 2.0), ("lottery", 1.5), ("as-stride", 3.0)] {
        let got = r_over_p(l);
        assert!(
            (got / want - 1.0).abs() <= 0.15,
            "{l}: {got} against {want}"
        );
    }
}

#[test]
fn the_15k_rpm_gain_is_larger_than_the_7200_rpm_gain() {
    let fast = gain("fig13-fast-disk", "seq/mmap", None);
    let slow = gain("fig4-access-patterns", "seq/mmap", None);
    assert!(fast > slow, "{fast} against {slow}");
}

#[test]
fn every_difference_beyond_15_percent_is_explained() {
    for e in &suite().1 {
        for r in &e.rows {
            if r.ratio.is_some_and(|x| !(0.85..=1.15).contains(&x)) {
                // A reason worked out from the runs, attached to the row.
                let why = r.why.clone().unwrap_or_default();
                assert!(
                    !why.is_empty(),
                    "{}: {} has no explanation",
                    e.id,
                    r.quantity
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The Linux/CAS paper's tables, BFQ's shares, and comparison mode (same suite run).

/// The timed job's seconds (the run's length) and whether the run was capped first.
fn timed(group: &str, variant: &str, label: &str) -> (f64, bool) {
    let r = suite()
        .0
        .iter()
        .find(|r| r.plan.group == group && r.plan.variant == variant && r.plan.label == label)
        .unwrap_or_else(|| panic!("no run {group} {variant} {label}"));
    let cap = r.plan.cap_s.expect("a timed run has a cap");
    (r.report.duration_s, r.report.duration_s >= cap - 1e-6)
}

#[test]
fn cas_table1_deadline_lets_a_writer_delay_the_reader_an_order_of_magnitude_more_than_as() {
    // The paper: deadline 129 s, LAS 10 s, CAS 9 s. Ranking: deadline slowest; deadline over
    // LAS between 5 and 30 (an order of magnitude, the paper's 12.9 within a factor of 2.5);
    // CAS within 10% of LAS (there is nothing to cooperate on).
    let (d, d_capped) = timed("cas-table1", "", "deadline");
    let (l, _) = timed("cas-table1", "", "linux-as");
    let (c, _) = timed("cas-table1", "", "cas");
    assert!(!d_capped, "deadline's reader did not finish");
    assert!(
        (5.0..=30.0).contains(&(d / l)),
        "deadline {d} s, linux-as {l} s"
    );
    assert!((c / l - 1.0).abs() <= 0.1, "cas {c} s, linux-as {l} s");
    // CFQ and BFQ protect the reader too (within 3x LAS's time).
    for s in ["cfq", "bfq", "linux-as-2.6.32"] {
        let (t, _) = timed("cas-table1", "", s);
        assert!(t <= 3.0 * l, "{s}: {t} s against linux-as {l} s");
    }
    // The weakness the report states: Aged-SPTF lets the write-back flood age past its bound
    // and then serves it oldest first, and the reader waits behind it (antsched's anticipation
    // cannot help a reader whose request is never the SPTF choice). If this starts to fail,
    // the report's comparison text is out of date.
    let (_, capped) = timed("cas-table1", "", "as-aged-sptf");
    assert!(
        capped,
        "as-aged-sptf no longer starves the reader: update the report"
    );
}

#[test]
fn cas_table2_las_starves_find_exec_cat_and_cas_does_not() {
    // The paper: CAS 255 s < deadline 297 s << LAS 4,767 s. Ranking CAS < deadline < LAS;
    // LAS over CAS between 6 and 60 and LAS over deadline between 4 and 50 (an order of
    // magnitude; the paper's 18.7 and 16); deadline over CAS between 1 and 5 (same order; the
    // paper's 1.16). linux-as-2.6.32's cooperating rules within 10% of CAS.
    let (d, _) = timed("cas-table2", "", "deadline");
    let (l, l_capped) = timed("cas-table2", "", "linux-as");
    let (c, _) = timed("cas-table2", "", "cas");
    assert!(!l_capped, "linux-as's find did not finish: raise the cap");
    assert!(c < d && d < l, "cas {c} s, deadline {d} s, linux-as {l} s");
    assert!((6.0..=60.0).contains(&(l / c)), "linux-as {l} s, cas {c} s");
    assert!(
        (4.0..=50.0).contains(&(l / d)),
        "linux-as {l} s, deadline {d} s"
    );
    assert!((1.0..=5.0).contains(&(d / c)), "deadline {d} s, cas {c} s");
    let (m, _) = timed("cas-table2", "", "linux-as-2.6.32");
    assert!((m / c - 1.0).abs() <= 0.1, "2.6.32 {m} s, cas {c} s");
    // Throughput: LAS and CAS keep the stream going (within 15% of each other), deadline at
    // most half of it (the paper: 35, 34 and 9 MB/s).
    let tp = |s: &str| mb_s("cas-table2", "", None, s);
    assert!((tp("cas") / tp("linux-as") - 1.0).abs() <= 0.15);
    assert!(tp("deadline") <= 0.5 * tp("cas"));
}

#[test]
fn cas_table3_two_finds_cause_a_seek_storm_that_cas_avoids() {
    // The paper: one instance 14.5 to 15.5 MB/s under all three (within 7%); two instances
    // keep 28% (deadline), 26% (LAS) and 75% (CAS) of it. Ours: one instance within 10%
    // across the three; two keep at least 60% under CAS, at most 40% under deadline and LAS,
    // and CAS at least twice both.
    let tp = |v: &str, s: &str| mb_s("cas-table3", v, None, s);
    let one: Vec<f64> = ["deadline", "linux-as", "cas"]
        .iter()
        .map(|s| tp("1-instance", s))
        .collect();
    let (lo, hi) = one
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    assert!(hi / lo <= 1.1, "{one:?}");
    for s in ["deadline", "linux-as"] {
        let kept = tp("2-instances", s) / tp("1-instance", s);
        assert!(kept <= 0.4, "{s} keeps {kept}");
        assert!(
            tp("2-instances", "cas") >= 2.0 * tp("2-instances", s),
            "{s}"
        );
    }
    let kept = tp("2-instances", "cas") / tp("1-instance", "cas");
    assert!(kept >= 0.6, "cas keeps {kept}");
}

#[test]
fn bfq_shares_follow_the_weights_and_two_readers_keep_85_percent() {
    // Byte shares within 10% (relative) of the weights' shares, 1:2 and 1:2:10.
    let bytes = |v: &str| -> Vec<f64> {
        suite()
            .0
            .iter()
            .find(|r| r.plan.group == "bfq-shares" && r.plan.variant == v && r.plan.label == "bfq")
            .unwrap()
            .report
            .contexts
            .iter()
            .map(|c| c.byte_share)
            .collect()
    };
    for (v, weights) in [("1:2", &[1.0, 2.0][..]), ("1:2:10", &[1.0, 2.0, 10.0][..])] {
        let got = bytes(v);
        let total: f64 = weights.iter().sum();
        for (k, w) in weights.iter().enumerate() {
            let want = w / total;
            assert!(
                (got[k] / want - 1.0).abs() <= 0.10,
                "{v}: class {k} has {} of the bytes, its weight {want}",
                got[k]
            );
        }
    }
    // Two sequential readers under BFQ: at least 85% of one reader's bandwidth.
    let two = mb_s("bfq-shares", "2-readers", None, "bfq");
    let one = mb_s("bfq-shares", "1-reader", None, "bfq");
    assert!(two >= 0.85 * one, "{two} MB/s against {one} alone");
}

#[test]
fn comparison_mode_covers_every_scheduler_of_the_catalog_on_every_microbenchmark() {
    let c = paper::compare(&suite().0);
    let names: Vec<&str> = antsched_core::catalog().iter().map(|s| s.name).collect();
    let rows: Vec<&str> = c.rows.iter().map(|r| r.scheduler.as_str()).collect();
    assert_eq!(rows, names, "one row per scheduler, in the catalog's order");
    for r in &c.rows {
        for (k, cell) in r.cells.iter().enumerate() {
            let cell = cell
                .as_ref()
                .unwrap_or_else(|| panic!("{} has no run for {}", r.scheduler, c.columns[k].id));
            assert!(
                cell.throughput_mb_s.is_finite() && (0.0..=1.0).contains(&cell.score),
                "{} on {}: {cell:?}",
                r.scheduler,
                c.columns[k].id
            );
        }
    }
    // Every column has a best, and it includes the section 4.1, 4.2, shares, BFQ and CAS
    // workloads.
    assert!(c.best.iter().all(|b| !b.is_empty()));
    for group in [
        "fig4-access-patterns",
        "fig5-symmetric",
        "fig6-asymmetric",
        "fig12-stride-1-2",
        "sec2-shares-1-1-3",
        "bfq-shares",
        "cas-table1",
        "cas-table2",
        "cas-table3",
    ] {
        assert!(c.columns.iter().any(|k| k.group == group), "{group}");
    }
}

/// Issue 18: the default scheduler starves no context in any column of the comparison, and is
/// within 5% of each column's best (of a share column's target); on the writer's column of
/// CAS Table 1, which trades against the reader's, the writer goes at least as fast as under
/// `linux-as`. A run that starves a context is never a column's best: `as-sptf` reads one of
/// the 4.2.2 readers' files at the disk's full rate and the thinker's never.
#[test]
fn the_default_scheduler_starves_no_one_and_is_near_every_columns_best() {
    let c = paper::compare(&suite().0);
    let row = |name: &str| c.rows.iter().find(|r| r.scheduler == name).unwrap();
    let ours = row(antsched_core::DEFAULT_SCHEDULER);
    let linux_as = row("linux-as");
    for (k, col) in c.columns.iter().enumerate() {
        let x = ours.cells[k].as_ref().unwrap();
        assert!(
            !x.starves(),
            "{} starves a context on {}: {x:?}",
            ours.scheduler,
            col.id
        );
        if col.id == "cas-t1-writes" {
            let theirs = linux_as.cells[k].as_ref().unwrap().value;
            assert!(x.value >= theirs, "{col:?}: {} against {theirs}", x.value);
            continue;
        }
        let top = c.best_score(k);
        let bar = match col.measure {
            paper::Measure::ShareRatio { .. } => 0.95,
            _ => 0.95 * top,
        };
        assert!(x.score >= bar, "{}: {x:?} (best score {top})", col.id);
    }
    let k = c.columns.iter().position(|k| k.id == "asym-4ms").unwrap();
    let greedy = row("as-sptf").cells[k].as_ref().unwrap();
    assert!(greedy.starves() && greedy.worst_wait_ms > paper::STARVATION_MS);
    assert!(!c.best[k].iter().any(|b| b == "as-sptf"), "{:?}", c.best[k]);
}

/// Issue 18, a reader against a synchronous writer (`direct=1` writes, a process blocked on
/// each, as `bench/kernel-peers.sh`'s `rw`): the writer's waited-for writes once won every
/// decision, the reader being never waited for against a write candidate, and the reader got
/// one request per aging period. The reader now gets at least what `linux-as` gives it, and
/// the two together at least 95% of `linux-as`'s total, with every estimator. With the exact
/// one (the simulator's and the mount's default) the drive's write-back cache once made every
/// write look free (priced at its report, 0.1 ms, where the read after it waited for the
/// destage): the reader got 0.04 MB/s. A write is now priced by the media work it defers.
#[test]
fn a_reader_against_a_synchronous_writer_is_not_starved() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/jobs/reader-vs-sync-writer.fio"
    ))
    .unwrap();
    let text = text.as_str();
    let reader = |r: &RunReport| r.contexts[0].throughput_mb_s;
    let theirs = sim(text, "linux-as", 1);
    for spec in [
        "as-rw-sptf",
        "as-rw-sptf:estimator=calibrated",
        "as-rw-sptf:estimator=seek",
    ] {
        let ours = sim(text, spec, 1);
        assert!(
            reader(&ours) >= reader(&theirs),
            "{spec}: reader {:.2} MB/s against linux-as's {:.2}",
            reader(&ours),
            reader(&theirs)
        );
        assert!(
            ours.throughput_mb_s >= 0.95 * theirs.throughput_mb_s,
            "{spec}: {:.2} MB/s against linux-as's {:.2}",
            ours.throughput_mb_s,
            theirs.throughput_mb_s
        );
        let worst = ours
            .contexts
            .iter()
            .map(|c| c.worst_wait_ms())
            .fold(0.0, f64::max);
        assert!(worst < paper::STARVATION_MS, "{spec}: a wait of {worst} ms");
    }
}
