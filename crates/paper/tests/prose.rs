//! The disk report's prose says only what the runs of its invocation say (issue 16): every
//! figure in a reason a row differs from the paper, and in the modelling notes, is a value of
//! that invocation's runs, options or published table, or is computed from figures printed
//! beside it. Run with another disk, seed, spacing and estimator than the defaults, so that a
//! figure of the default suite written into the code would show up here.

use std::collections::BTreeSet;

use antsched_paper::{self as paper, CasScale, PaperOptions, PaperRun};
use antsched_workload::report::RunReport;

/// A figure in prose: its value, how many decimals it was printed with, and whether it was a
/// percentage.
#[derive(Debug)]
struct Figure {
    text: String,
    value: f64,
    decimals: i32,
    percent: bool,
}

/// The figures of `text`: numbers not part of a name (`fig5`, `cheetah-15k`, `4.1`-style
/// section numbers after a letter), a setting (`age_bound=1s`, `t=0`) or code in backticks.
fn figures(text: &str) -> Vec<Figure> {
    let mut out = Vec::new();
    let b: Vec<char> = text.chars().collect();
    let mut in_code = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == '`' {
            in_code = !in_code;
            i += 1;
            continue;
        }
        let starts = c.is_ascii_digit()
            && !in_code
            && (i == 0 || !(b[i - 1].is_alphanumeric() || "=._-/:".contains(b[i - 1])));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < b.len() && (b[j].is_ascii_digit() || b[j] == ',' || b[j] == '.') {
            j += 1;
        }
        // A trailing `.` or `,` ends the sentence or clause, not the number.
        let mut end = j;
        while end > i && (b[end - 1] == '.' || b[end - 1] == ',') {
            end -= 1;
        }
        let raw: String = b[i..end].iter().filter(|&&c| c != ',').collect();
        // `1:2` weights, `2.6.9` versions and `4.2.1` sections are not figures.
        let ratio_or_version =
            (j < b.len() && b[j] == ':' && b.get(j + 1).is_some_and(|c| c.is_ascii_digit()))
                || raw.matches('.').count() > 1;
        let followed_by_name = j < b.len() && (b[j].is_alphabetic() || b[j] == '-') && end == j;
        if !ratio_or_version && !followed_by_name {
            if let Ok(value) = raw.parse::<f64>() {
                let decimals = raw.split('.').nth(1).map_or(0, |d| d.len() as i32);
                out.push(Figure {
                    text: b[i..end].iter().collect(),
                    value,
                    decimals,
                    percent: b.get(end) == Some(&'%'),
                });
            }
        }
        i = j.max(i + 1);
    }
    out
}

/// Disk time per application request, ms (worked out here independently of the report's own
/// helper).
fn service_ms(r: &RunReport) -> f64 {
    let ios: u64 = r
        .contexts
        .iter()
        .filter(|c| c.name != "writeback")
        .map(|c| c.ios)
        .sum();
    r.utilization * r.duration_s * 1e3 / ios.max(1) as f64
}

/// Every value the prose may print as it is: each run's figures, the options', the
/// published table's and the evaluation's.
fn direct_values<'a>(
    runs: impl IntoIterator<Item = &'a PaperRun>,
    experiments: &[&paper::Experiment],
    o: &PaperOptions,
) -> Vec<f64> {
    let c = CasScale::of(o);
    let files = f64::from(c.tree_files);
    let dirs = (files / f64::from(paper::TREE_DIR_FILES)).ceil();
    let mut v = vec![
        (o.file_spacing >> 20) as f64,
        f64::from(c.reader_mib),
        f64::from(c.reader_mib) * 1.048576,
        files,
        dirs,
        f64::from(c.cap_s),
        paper::LINUX_TREE_FILES,
        paper::LINUX_TREE_FILES / f64::from(paper::TREE_DIR_FILES),
    ];
    if let Ok(d) = antsched_sim::disk_model(&o.fast_disk) {
        v.push(d.capacity_sectors() as f64 * 512.0 / 1048576.0);
    }
    for r in runs {
        let x = &r.report;
        v.extend([
            x.throughput_mb_s,
            x.utilization,
            x.duration_s,
            x.duration_s * 1e3 / files,
            x.duration_s / dirs,
            service_ms(x),
            x.anticipation.waits as f64,
            x.anticipation.hits as f64,
            x.anticipation.timeouts as f64,
            x.anticipation.waited_ms,
        ]);
        v.extend(r.plan.x);
        // A `find` run has a context per file: its contexts' figures are not quoted.
        for c in x.contexts.iter().take(3) {
            v.extend([c.throughput_mb_s, c.share, c.byte_share, c.latency_ms.p99]);
        }
        // Share ratios of two contexts (q/p).
        if let [p, q, ..] = x.contexts.as_slice() {
            v.push(q.share / p.share);
        }
    }
    for e in experiments {
        for row in &e.rows {
            v.extend([row.ours]);
            v.extend(row.paper);
            v.extend(row.ratio);
        }
    }
    v.retain(|x| x.is_finite());
    v
}

/// The groups of runs an experiment's reasons may quote: its own, and those it is set
/// against (section 4.8 against 4.1, the dip against the symmetric sweep, the Stride rates
/// against the readers unweighted, the Linux/CAS tables against one reader alone).
fn groups_of(id: &str) -> &'static [&'static str] {
    match id {
        "fig13-fast-disk" => &["fig13-fast-disk", "fig4-access-patterns"],
        "fig6-asymmetric" => &["fig6-asymmetric", "fig5-symmetric"],
        "sec4.2-file-spacing" => &["sec4.2-file-spacing"],
        "fig12-stride-1-2" => &["fig12-stride-1-2", "fig4-access-patterns"],
        "cas-table1" => &["cas-table1", "bfq-shares"],
        "cas-table2" => &["cas-table2", "bfq-shares"],
        "fig4-access-patterns" => &["fig4-access-patterns"],
        "fig5-symmetric" => &["fig5-symmetric"],
        "fig7-adversary" => &["fig7-adversary"],
        "sec4.2.4-one-at-a-time" => &["sec4.2.4-one-at-a-time", "fig7-adversary"],
        "sec4.2.4-timer" => &["sec4.2.4-timer"],
        "cas-table3" => &["cas-table3"],
        _ => &[],
    }
}

/// Whether `text` names scheduler `s` (`aged-sptf` is not named by `as-aged-sptf`).
fn names(text: &str, s: &str) -> bool {
    text.match_indices(s).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + s.len()..].chars().next();
        let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '.');
        !part(before) && !part(after)
    })
}

/// The runs a reason of experiment `id` may quote: of its groups, under the schedulers it
/// names (a reason quotes the runs it is about). The Linux/CAS tables' streaming rate is one
/// reader alone under deadline.
fn runs_for<'a>(runs: &'a [PaperRun], id: &str, why: &str) -> Vec<&'a PaperRun> {
    runs.iter()
        .filter(|r| groups_of(id).contains(&r.plan.group.as_str()))
        .filter(|r| {
            names(why, &r.plan.label)
                || (r.plan.group == "bfq-shares"
                    && r.plan.variant == "1-reader"
                    && r.plan.label == "deadline")
                || (id == "sec4.2.4-timer")
        })
        .collect()
}

/// Whether `f`, as printed, is `v`.
fn prints_as(f: &Figure, v: f64) -> bool {
    let v = if f.percent { v * 100.0 } else { v };
    let half = 0.5 * 10f64.powi(-f.decimals) + 1e-9 * v.abs().max(1.0);
    (v - f.value).abs() <= half
}

/// Checks every figure of `text` and returns the ones neither a direct value nor computed
/// (a ratio, a ratio per thousand, a relative change, a difference) from a figure printed in
/// the same text and another such figure, a figure published for its experiment, or one of
/// the `constants` of the setup.
fn unbacked(text: &str, direct: &[f64], published: &[f64], constants: &[f64]) -> Vec<String> {
    let mut pool: Vec<f64> = published.iter().chain(constants).copied().collect();
    pool.push(1.0);
    // First the figures that are values of the runs (every value each may be), then, until
    // nothing changes, those computed from printed ones, wherever in the text they stand.
    let mut printed = Vec::new();
    let mut open = Vec::new();
    // A published figure may also be quoted as the change it states (1.55 as "55% more").
    let quoted: Vec<f64> = published.iter().map(|p| p - 1.0).collect();
    for f in figures(text) {
        let matches: Vec<f64> = direct
            .iter()
            .chain(&pool)
            .chain(&quoted)
            .copied()
            .filter(|&v| prints_as(&f, v))
            .collect();
        if matches.is_empty() {
            open.push(f);
        } else {
            printed.extend(matches);
        }
    }
    // A published figure may also be converted by a constant of the setup (the paper's
    // seconds per file of its tree).
    let converted: Vec<f64> = published
        .iter()
        .flat_map(|&p| {
            constants
                .iter()
                .flat_map(move |&c| [p / c, p / c * 1e3, p * c])
        })
        .collect();
    open.retain(|f| !converted.iter().any(|&v| prints_as(f, v)));
    loop {
        let before = open.len();
        open.retain(|f| {
            let others: Vec<f64> = printed.iter().chain(&pool).copied().collect();
            let derived = printed.iter().find_map(|&a| {
                others.iter().find_map(|&b| {
                    [
                        a / b,
                        b / a,
                        a / b * 1e3,
                        b / a * 1e3,
                        a / b - 1.0,
                        b / a - 1.0,
                        a - b,
                        b - a,
                        a * b,
                    ]
                    .into_iter()
                    .find(|v| v.is_finite() && prints_as(f, *v))
                })
            });
            match derived {
                Some(v) => {
                    printed.push(v);
                    false
                }
                None => true,
            }
        });
        if open.len() == before {
            break;
        }
    }
    open.into_iter().map(|f| f.text).collect()
}

#[test]
fn every_figure_of_the_disk_reports_prose_comes_from_its_runs() {
    // Not the defaults: another disk and fast disk (swapped), seed, spacing and estimator.
    check_prose(
        &PaperOptions {
            disk: "cheetah-15k".into(),
            fast_disk: "deskstar-34gxp".into(),
            quick: true,
            estimator: "exact".into(),
            file_spacing: 3 << 30,
        },
        7,
    );
}

/// The same with the calibrated curve, whose reasons also work out what the rule prices a
/// wait at (`paper::wait_thresholds`), on another disk and spacing than the defaults.
#[test]
fn every_figure_of_the_prose_comes_from_its_runs_or_its_curve() {
    check_prose(
        &PaperOptions {
            disk: "ultrastar-hc310".into(),
            quick: true,
            file_spacing: 5 << 30,
            ..PaperOptions::default()
        },
        3,
    );
}

/// What the rule prices a wait at for every distance the suite's runs use (the curve's,
/// where the estimator is one): figures the prose works out from the options, not from runs.
fn curve_figures(o: &PaperOptions) -> Vec<f64> {
    let mut spacings: Vec<u64> = paper::SPACING_SWEEP_MIB.iter().map(|m| m << 20).collect();
    spacings.push(o.file_spacing);
    let mut v: Vec<f64> = spacings
        .iter()
        .filter_map(|&s| paper::wait_thresholds(o, s))
        .chain(paper::least_wait_thresholds(o).map(|(_, w)| w))
        .flat_map(|w| [w.switch_ms, w.one_switch_ms, w.two_switches_ms])
        .collect();
    v.extend(paper::least_wait_thresholds(o).map(|(d, _)| (d >> 20) as f64));
    v
}

fn check_prose(o: &PaperOptions, seed: u64) {
    let runs = paper::run(&paper::plan(o), seed, &|| {}).unwrap();
    let experiments = paper::evaluate(&runs, o);
    let every: Vec<&paper::Experiment> = experiments.iter().collect();
    let direct = direct_values(&runs, &every, o);
    // The sizes of the paper's tree and ours, which turn seconds into seconds per file.
    let c = CasScale::of(o);
    let mut constants = vec![
        paper::LINUX_TREE_FILES,
        paper::LINUX_TREE_FILES / f64::from(paper::TREE_DIR_FILES),
        f64::from(c.tree_files),
        f64::from(c.tree_files.div_ceil(paper::TREE_DIR_FILES)),
        // Where the report says a think-time gain has ended: at most 1.1.
        paper::GAIN_ENDED,
        // The spacing sweep's distances, its files' size, and how near the paper's a figure
        // must be to count as the paper's.
        (paper::FILE_SIZE >> 20) as f64,
        paper::THINK_TOLERANCE_MS,
        paper::OFF_BY,
    ];
    constants.extend(paper::SPACING_SWEEP_MIB.iter().map(|&m| m as f64));
    constants.extend(curve_figures(o));
    let mut failures = BTreeSet::new();
    let mut reasons = 0;
    for e in &experiments {
        let published: Vec<f64> = e.paper.values().copied().collect();
        let rows: Vec<&paper::Experiment> = experiments
            .iter()
            .filter(|x| x.id == e.id || groups_of(&e.id).contains(&x.id.as_str()))
            .collect();
        if let Some(note) = &e.note {
            let scoped = direct_values(runs_for(&runs, &e.id, note), &rows, o);
            let bad = unbacked(note, &scoped, &published, &constants);
            if !bad.is_empty() {
                failures.insert(format!("{} / note: {bad:?} in: {note}", e.id));
            }
        }
        for row in &e.rows {
            let Some(why) = &row.why else { continue };
            reasons += 1;
            // Only the runs the reason is about, and the rows of its experiment and those it
            // is set against: a figure of another run that happens to print the same does
            // not count.
            let scoped = direct_values(runs_for(&runs, &e.id, why), &rows, o);
            let bad = unbacked(why, &scoped, &published, &constants);
            if !bad.is_empty() {
                failures.insert(format!("{} / {}: {bad:?} in: {why}", e.id, row.quantity));
            }
        }
    }
    assert!(reasons >= 20, "only {reasons} reasons were worked out");
    let notes = paper::modelling_notes(o, &runs);
    let bad = unbacked(&notes, &direct, &[], &constants);
    // The notes' fixed figures are facts of the paper and its sources (the tree it counted),
    // the simulator's settings and the workload's; they are listed here, so that a new one
    // is looked at.
    let allowed = [
        "2.6.9", "7,200", "2048", "1", "2", "1", "100", "64", "128", "8,750", "530", "2.4", "144",
        "16.5", "17,000", "32", "4", "2.28", "50", "125", "200", "1000", "4", "16", "6",
    ];
    for b in bad {
        if !allowed.contains(&b.as_str()) {
            failures.insert(format!("modelling notes: {b}"));
        }
    }
    // The comparison notes: every figure a cell of the comparison (a value, throughput,
    // p99, share), or computed from two of them (a gain, a share ratio).
    let c = paper::compare(&runs);
    let cells: Vec<f64> = c
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .flat_map(|x| {
            [x.value, x.throughput_mb_s, x.p99_ms]
                .into_iter()
                .chain(x.shares.iter().copied())
        })
        .filter(|v| v.is_finite())
        .collect();
    let mut targets: Vec<f64> = c
        .columns
        .iter()
        .filter_map(|k| match k.measure {
            paper::Measure::ShareRatio { target, .. } => Some(target),
            _ => None,
        })
        .collect();
    targets.extend(cells.iter().copied());
    for b in unbacked(&paper::notes(&c), &targets, &cells, &[]) {
        // The think times of the comparison's columns, and Linux versions.
        if !["4", "8", "2.6.29", "2.6.30"].contains(&b.as_str()) {
            failures.insert(format!("comparison notes: {b}"));
        }
    }
    assert!(
        failures.is_empty(),
        "figures not from the runs:\n{}",
        failures.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// A few reasons recomputed figure by figure from the run they describe: the check above
/// would let a figure through that happened to equal another run's.
#[test]
fn reasons_quote_the_run_they_explain() {
    let o = PaperOptions {
        disk: "ultrastar-hc310".into(),
        quick: true,
        file_spacing: 3 << 30,
        ..PaperOptions::default()
    };
    let runs = paper::run(&paper::plan(&o), 11, &|| {}).unwrap();
    let experiments = paper::evaluate(&runs, &o);
    let run = |g: &str, v: &str, x: Option<f64>, s: &str| {
        &runs
            .iter()
            .find(|r| {
                r.plan.group == g && r.plan.variant == v && r.plan.x == x && r.plan.label == s
            })
            .unwrap()
            .report
    };
    let why = |id: &str, q: &str| {
        experiments
            .iter()
            .find(|e| e.id == id)
            .and_then(|e| e.rows.iter().find(|r| r.quantity.starts_with(q)))
            .and_then(|r| r.why.clone())
            .unwrap_or_else(|| panic!("{id} / {q} has no reason"))
    };
    let w = why("fig4-access-patterns", "alter/mmap gain");
    let a = run(
        "fig4-access-patterns",
        "alter/mmap",
        None,
        paper::ANTICIPATORY,
    );
    let b = run("fig4-access-patterns", "alter/mmap", None, paper::BASELINE);
    assert!(
        w.contains(&format!("{:.1} MB/s here", a.throughput_mb_s)),
        "{w}"
    );
    assert!(
        w.contains(&format!("alternates at {:.1} MB/s", b.throughput_mb_s)),
        "{w}"
    );
    assert!(w.contains("3072 MiB apart"), "{w}");

    let w = why("fig5-symmetric", "gain at t=8ms");
    let b0 = run("fig5-symmetric", "", Some(0.0), paper::BASELINE);
    let a8 = run("fig5-symmetric", "", Some(8.0), paper::ANTICIPATORY);
    assert!(
        w.contains(&format!("{:.1} ms of disk time", service_ms(b0))),
        "{w}"
    );
    assert!(
        w.contains(&format!(
            "{} waits ({} hits",
            a8.anticipation.waits, a8.anticipation.hits
        )),
        "{w}"
    );
    assert!(w.contains("`calibrated` curve"), "{w}");
    // What the rule prices a wait at, from the curve, and where the runs stopped waiting.
    let wt = paper::wait_thresholds(&o, o.file_spacing).unwrap();
    assert!(
        w.contains(&format!("a wait saves {:.2} ms", wt.one_switch_ms)),
        "{w}"
    );
    let stop = runs
        .iter()
        .filter(|r| r.plan.group == "fig5-symmetric" && r.plan.label == paper::ANTICIPATORY)
        .filter(|r| r.report.anticipation.waits == 0)
        .filter_map(|r| r.plan.x)
        .fold(f64::INFINITY, f64::min);
    assert!(w.contains(&format!("no wait from t={stop} ms")), "{w}");
    assert!(!w.contains("6144"), "the default spacing in: {w}");

    let w = why("cas-table3", "cas MB/s, 1 instance");
    let one = run("cas-table3", "1-instance", None, "cas");
    let files = f64::from(CasScale::of(&o).tree_files);
    assert!(
        w.contains(&format!("{:.2} ms per file", one.duration_s * 1e3 / files)),
        "{w}"
    );

    let w = why("fig4-access-patterns", "random/read gain");
    let b = run("fig4-access-patterns", "random/read", None, paper::BASELINE);
    let a = run(
        "fig4-access-patterns",
        "random/read",
        None,
        paper::ANTICIPATORY,
    );
    assert!(
        w.contains(&format!(
            "requests take {:.1} ms of disk time each here and as-aged-sptf's {:.1} ms",
            service_ms(b),
            service_ms(a)
        )),
        "{w}"
    );

    let w = why("fig13-fast-disk", "seq/read bandwidth");
    let fast = run("fig13-fast-disk", "seq/read", None, paper::BASELINE).throughput_mb_s;
    let slow = run("fig4-access-patterns", "seq/read", None, paper::BASELINE).throughput_mb_s;
    assert!(w.contains(&format!("get {fast:.1} MB/s from the `cheetah-15k` model and {slow:.1} MB/s from the `ultrastar-hc310` model")), "{w}");
    assert!(
        w.contains(&format!("{:.2} times as much", fast / slow)),
        "{w}"
    );

    // The dip: the think time where as-aged-sptf is slowest, and its waits there.
    let (t, dip) = runs
        .iter()
        .filter(|r| r.plan.group == "fig6-asymmetric" && r.plan.label == paper::ANTICIPATORY)
        .map(|r| (r.plan.x.unwrap(), &r.report))
        .min_by(|x, y| x.1.throughput_mb_s.total_cmp(&y.1.throughput_mb_s))
        .unwrap();
    let w = why("fig6-asymmetric", "t of the");
    assert!(
        w.contains(&format!(
            "the dip is at t={t} ms here, where as-aged-sptf made {} waits ({} hits, {} timeouts",
            dip.anticipation.waits, dip.anticipation.hits, dip.anticipation.timeouts
        )),
        "{w}"
    );

    let w = why("fig7-adversary", "as/original at n=2");
    let b = run("fig7-adversary", "", Some(2.0), paper::BASELINE);
    let a = run("fig7-adversary", "", Some(2.0), paper::ANTICIPATORY);
    assert!(
        w.contains(&format!(
            "busy {:.0}% of the time at {:.1} MB/s; as-aged-sptf gets {:.1} MB/s after {} waits",
            b.utilization * 100.0,
            b.throughput_mb_s,
            a.throughput_mb_s,
            a.anticipation.waits
        )),
        "{w}"
    );

    // The adversary one request at a time, against the same with its requests together.
    let w = why("sec4.2.4-one-at-a-time", "as/original at n=3");
    let b = run("sec4.2.4-one-at-a-time", "", Some(3.0), paper::BASELINE);
    let a = run("sec4.2.4-one-at-a-time", "", Some(3.0), paper::ANTICIPATORY);
    let ta = run("fig7-adversary", "", Some(3.0), paper::ANTICIPATORY);
    assert!(
        w.contains(&format!(
            "as-aged-sptf gets {:.1} MB/s against aged-sptf's {:.1} after {} waits ({} hits",
            a.throughput_mb_s, b.throughput_mb_s, a.anticipation.waits, a.anticipation.hits
        )),
        "{w}"
    );
    assert!(
        w.contains(&format!(
            "take {:.1} ms of disk time each, aged-sptf's {:.1} ms",
            service_ms(a),
            service_ms(b)
        )),
        "{w}"
    );
    assert!(
        w.contains(&format!(
            "(fig7-adversary) as-aged-sptf gets {:.1} MB/s",
            ta.throughput_mb_s
        )),
        "{w}"
    );

    let w = why("fig12-stride-1-2", "stride-relaxed MB/s");
    let s = run("fig12-stride-1-2", "", None, "stride-relaxed").throughput_mb_s;
    assert!(w.contains(&format!("{s:.1} MB/s here")), "{w}");

    let w = why("cas-table2", "cas find time");
    let c = run("cas-table2", "", None, "cas").duration_s;
    let dirs = f64::from(CasScale::of(&o).tree_files.div_ceil(paper::TREE_DIR_FILES));
    assert!(
        w.contains(&format!("cas takes {:.1} ms here", c * 1e3 / files)),
        "{w}"
    );
    assert!(
        w.contains(&format!("per directory, {:.2} s here", c / dirs)),
        "{w}"
    );

    let w = why("cas-table3", "deadline MB/s, 2 instances");
    let one = run("cas-table3", "1-instance", None, "deadline");
    let two = run("cas-table3", "2-instances", None, "deadline");
    assert!(
        w.contains(&format!(
            "{:.1} times the single find's {:.1} s",
            two.duration_s / one.duration_s,
            one.duration_s
        )),
        "{w}"
    );

    let w = why("cas-table1", "linux-as reader time");
    let stream = run("bfq-shares", "1-reader", None, "deadline").throughput_mb_s;
    let l = run("cas-table1", "", None, "linux-as").duration_s;
    assert!(w.contains(&format!("the reader takes {l:.1} s")), "{w}");
    assert!(
        w.contains(&format!(
            "{stream:.1} MB/s from the `ultrastar-hc310` model"
        )),
        "{w}"
    );
}
