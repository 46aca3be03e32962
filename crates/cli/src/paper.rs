//! `antsched paper`: the SOSP 2001 paper's microbenchmarks on the model of its disk (the disk
//! half), and the thesis's memory experiments on the memory simulator (the memory half, in
//! `paper_mem`), side by side with the published numbers, with plots and a report.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use antsched_paper::{self as paper, Comparison, Experiment, Measure, PaperOptions, PaperRun};
use anyhow::Context;

use crate::plots::{Bars, Heatmap, Lines, Plot};
use crate::progress::Progress;

/// Which half of the thesis to reproduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// The SOSP 2001 paper's microbenchmarks and the peers' tables.
    Disk,
    /// The thesis's chapter 6 (and section 4.5) on the memory simulator.
    Memory,
    /// Both.
    All,
}

#[derive(clap::Args)]
pub struct Args {
    /// Which half: the disk experiments, the memory experiments, or both.
    #[arg(long, value_enum, default_value = "all")]
    part: Part,
    /// The paper's disk: a built-in model (see `antsched disks`) or a DiskSim .parv file.
    #[arg(long, default_value = "deskstar-34gxp", value_name = "NAME|FILE")]
    disk: String,
    /// The 15,000 rpm disk of section 4.8.
    #[arg(long, default_value = "cheetah-15k", value_name = "NAME|FILE")]
    fast_disk: String,
    /// Where the report, plots and job files go.
    #[arg(long, default_value = "antsched-out", value_name = "DIR")]
    out: PathBuf,
    /// Also write the results as JSON (`{"experiments": [...], "runs": [...]}`) to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Shorter runs and sparser sweeps: seconds instead of minutes.
    #[arg(long)]
    quick: bool,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The schedulers' positioning-time estimator: `calibrated` (an LBN-distance curve fitted
    /// to the disk model, as the paper's implementation used), `exact`, `seek` or CURVE.json.
    #[arg(long, default_value = "calibrated")]
    estimator: String,
    /// Distance between the readers' files on the disk, in MiB (the paper does not say where
    /// its files lay; see the report).
    #[arg(long, value_name = "MIB", default_value_t = paper::FILE_SPACING >> 20)]
    file_spacing: u64,
}

/// The disk half's results.
struct DiskHalf {
    opts: PaperOptions,
    runs: Vec<PaperRun>,
    experiments: Vec<Experiment>,
    comparison: Comparison,
}

impl Args {
    pub fn seed(&self) -> u64 {
        self.seed
    }
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let (disk_part, memory_part) = (a.part != Part::Memory, a.part != Part::Disk);
    // Check the disks before minutes of work.
    antsched_sim::disk_model(&a.disk)?;
    if disk_part {
        antsched_sim::disk_model(&a.fast_disk)?;
    }
    // And the destinations: a full run must not end by failing to write its results.
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("cannot create {}", a.out.display()))?;
    crate::output::check_writable(&a.out.join("report.md"))?;
    if let Some(path) = &a.json {
        crate::output::check_writable(path)?;
    }
    let disk = if disk_part {
        let min_mib = paper::MIN_FILE_SPACING >> 20;
        let file_spacing = a
            .file_spacing
            .checked_mul(1 << 20)
            .filter(|&b| b >= paper::MIN_FILE_SPACING)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "--file-spacing {} MiB: give at least {min_mib} MiB (the Linux/CAS experiments \
                     place a file one spacing after a 2 GiB one) and little enough that three \
                     readers' files fit on the disk (the default is {} MiB)",
                    a.file_spacing,
                    paper::FILE_SPACING >> 20
                )
            })?;
        let opts = PaperOptions {
            disk: a.disk.clone(),
            fast_disk: a.fast_disk.clone(),
            quick: a.quick,
            estimator: a.estimator.clone(),
            file_spacing,
        };
        let plan = paper::plan(&opts);
        paper::check(&plan).with_context(|| {
            format!(
                "--file-spacing {} MiB: the suite's files do not fit on the disks ({} and {}) this \
                 far apart; give a smaller --file-spacing (from {min_mib} MiB; the default is {} MiB)",
                a.file_spacing,
                a.disk,
                a.fast_disk,
                paper::FILE_SPACING >> 20
            )
        })?;
        let progress = Progress::new(plan.len() as u64, "paper (disk)");
        let runs = paper::run(&plan, a.seed, &|| progress.inc())?;
        progress.finish();
        let experiments = paper::evaluate(&runs, &opts);
        let comparison = paper::compare(&runs);
        Some(DiskHalf {
            opts,
            runs,
            experiments,
            comparison,
        })
    } else {
        None
    };
    let memory = if memory_part {
        Some(crate::paper_mem::run(&a.disk, a.quick, a.seed)?)
    } else {
        None
    };

    let experiments: Vec<&Experiment> = disk
        .iter()
        .flat_map(|d| &d.experiments)
        .chain(memory.iter().flat_map(|m| &m.experiments))
        .collect();
    print!("{}", summary(&experiments));
    if let Some(d) = &disk {
        println!(
            "comparison: {} schedulers on {} microbenchmarks (report.md, comparison.png)",
            d.comparison.rows.len(),
            d.comparison.columns.len()
        );
    }
    if let Some(m) = &memory {
        print!("{}", crate::paper_mem::console(m));
    }

    let mut json = serde_json::json!({
        "disk": a.disk,
        "quick": a.quick,
        "seed": a.seed,
        "part": format!("{:?}", a.part).to_lowercase(),
        "experiments": experiments,
    });
    if let Some(d) = &disk {
        json["fast_disk"] = serde_json::json!(a.fast_disk);
        json["comparison"] = serde_json::to_value(&d.comparison)?;
        json["runs"] =
            serde_json::json!(d.runs.iter().map(|r| serde_json::json!({
            "group": r.plan.group, "variant": r.plan.variant, "x": r.plan.x, "report": r.report,
        })).collect::<Vec<_>>());
    }
    if let Some(m) = &memory {
        json["memory"] = crate::paper_mem::json(m)?;
    }
    let json = serde_json::to_string_pretty(&json)?;
    write_outputs(&a, disk.as_ref(), memory.as_ref(), &json)?;
    if let Some(path) = &a.json {
        crate::output::write_atomically(path, json.as_bytes())?;
    }
    eprintln!("report: {}", a.out.join("report.md").display());
    Ok(())
}

/// A row's value, with `≥` where it is a lower bound (a capped run).
pub(crate) fn fmt_bound(v: f64, lower_bound: bool) -> String {
    if lower_bound {
        format!("≥{}", fmt(v))
    } else {
        fmt(v)
    }
}

pub(crate) fn fmt(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The console table: experiment, quantity, paper, ours, ratio.
fn summary(experiments: &[&Experiment]) -> String {
    let mut out = String::new();
    let qw = experiments
        .iter()
        .flat_map(|e| e.rows.iter().map(|r| r.quantity.len()))
        .max()
        .unwrap_or(8);
    let _ = writeln!(
        out,
        "{:22}  {:qw$}  {:>7}  {:>7}  {:>6}",
        "experiment", "quantity", "paper", "ours", "ratio"
    );
    for e in experiments {
        for (i, r) in e.rows.iter().enumerate() {
            let id = if i == 0 { e.id.as_str() } else { "" };
            let _ = writeln!(
                out,
                "{id:22}  {:qw$}  {:>7}  {:>7}  {:>6}",
                r.quantity,
                r.paper.map_or("-".into(), fmt),
                fmt_bound(r.ours, r.lower_bound),
                r.ratio.map_or("-".into(), |x| fmt_bound(x, r.lower_bound)),
            );
        }
    }
    out
}

/// Writes the report, plots and job files into `a.out`. Every file is rendered into a
/// scratch directory first and then renamed into place, so a failure leaves no half-written
/// file.
fn write_outputs(
    a: &Args,
    disk: Option<&DiskHalf>,
    memory: Option<&crate::paper_mem::MemHalf>,
    json: &str,
) -> anyhow::Result<()> {
    // `run` made `a.out` before the work.
    let scratch = a
        .out
        .join(format!(".antsched-paper-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)
        .with_context(|| format!("cannot create {}", scratch.display()))?;
    let result = (|| -> anyhow::Result<()> {
        // Every file written, relative to the output directory.
        let mut files: Vec<String> = Vec::new();
        let mut md = String::new();
        if let Some(d) = disk {
            std::fs::create_dir_all(scratch.join("jobs"))?;
            let mut plots = draw_plots(&scratch, &d.runs)?;
            plots.extend(draw_spacing(&scratch, &d.runs, &d.experiments)?);
            plots.push(draw_comparison(&scratch, &d.comparison)?);
            let mut jobs = BTreeMap::new();
            for r in &d.runs {
                let name = if r.plan.variant.is_empty() && r.plan.x.is_none() {
                    r.plan.group.clone()
                } else {
                    format!(
                        "{}{}{}",
                        r.plan.group,
                        if r.plan.variant.is_empty() {
                            String::new()
                        } else {
                            // `seq/read`, `1:2`: file names without separators.
                            format!("-{}", r.plan.variant.replace(['/', ':'], "-"))
                        },
                        r.plan.x.map_or(String::new(), |x| format!("-x{x}")),
                    )
                };
                jobs.entry(name).or_insert_with(|| r.plan.job.clone());
            }
            for (name, job) in &jobs {
                std::fs::write(scratch.join("jobs").join(format!("{name}.fio")), job)?;
                files.push(format!("jobs/{name}.fio"));
            }
            md += &report(a, d, &plots);
            files.extend(plots_files(&plots));
        }
        if let Some(m) = memory {
            let plots = crate::paper_mem::write(&scratch, m, &mut files)?;
            md += &crate::paper_mem::report(m, &plots, a, disk.is_none());
            files.extend(plots_files(&plots));
        }
        std::fs::write(scratch.join("results.json"), json)?;
        std::fs::write(scratch.join("report.md"), md)?;
        files.extend(["results.json".into(), "report.md".into()]);
        // Move everything into place, file by file.
        for f in &files {
            if let Some(parent) = Path::new(f).parent() {
                std::fs::create_dir_all(a.out.join(parent))?;
            }
            std::fs::rename(scratch.join(f), a.out.join(f))
                .with_context(|| format!("cannot write {}", a.out.join(f).display()))?;
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn plots_files(plots: &[String]) -> impl Iterator<Item = String> + '_ {
    plots
        .iter()
        .flat_map(|p| [format!("{p}.png"), format!("{p}.svg")])
}

fn series(runs: &[PaperRun], group: &str, scheduler: &str) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, f64)> = runs
        .iter()
        .filter(|r| r.plan.group == group && r.plan.label == scheduler)
        .filter_map(|r| r.plan.x.map(|x| (x, r.report.throughput_mb_s)))
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

/// Draws every figure into `dir`; returns their base names.
fn draw_plots(dir: &Path, runs: &[PaperRun]) -> anyhow::Result<Vec<String>> {
    let (b, s) = (paper::BASELINE, paper::ANTICIPATORY);
    let mut names = Vec::new();
    for (group, title, name) in [
        (
            "fig4-access-patterns",
            "Figure 4: access patterns, two readers (7,200 rpm)",
            "fig4",
        ),
        (
            "fig13-fast-disk",
            "Figure 13: access patterns on a 15,000 rpm disk",
            "fig13",
        ),
    ] {
        let variants = [
            "seq/read",
            "seq/mmap",
            "alter/read",
            "alter/mmap",
            "random/read",
            "random/mmap",
        ];
        let tp = |v: &str, sched: &str| {
            runs.iter()
                .find(|r| r.plan.group == group && r.plan.variant == v && r.plan.label == sched)
                .map_or(f64::NAN, |r| r.report.throughput_mb_s)
        };
        Bars {
            title,
            y_label: "throughput (MB/s)",
            categories: variants.iter().map(|v| v.to_string()).collect(),
            series: [b, s]
                .iter()
                .map(|sched| {
                    (
                        sched.to_string(),
                        variants.iter().map(|v| tp(v, sched)).collect(),
                    )
                })
                .collect(),
        }
        .save(&dir.join(name))?;
        names.push(name.to_string());
    }
    for (group, title, name) in [
        (
            "fig5-symmetric",
            "Figure 5: both readers think t between requests",
            "fig5",
        ),
        (
            "fig6-asymmetric",
            "Figure 6: one reader thinks t, the other none",
            "fig6",
        ),
        (
            "sec4.2.3-random-think",
            "Section 4.2.3: think times uniform on [0, t]",
            "fig5-random",
        ),
    ] {
        Lines {
            title,
            x_label: "think time t (ms)",
            y_label: "throughput (MB/s)",
            series: [b, s]
                .iter()
                .map(|sched| (sched.to_string(), series(runs, group, sched)))
                .collect(),
        }
        .save(&dir.join(name))?;
        names.push(name.to_string());
    }
    let adv_b = series(runs, "fig7-adversary", b);
    let adv_s = series(runs, "fig7-adversary", s);
    Bars {
        title: "Figure 7: the adversary (n rapid requests with one more, then a pause)",
        y_label: "throughput (MB/s)",
        categories: adv_b.iter().map(|p| format!("n={}", p.0)).collect(),
        series: vec![
            (b.into(), adv_b.iter().map(|p| p.1).collect()),
            (s.into(), adv_s.iter().map(|p| p.1).collect()),
        ],
    }
    .save(&dir.join("fig7"))?;
    names.push("fig7".into());
    // Shares: one group per run, one bar per context.
    // The paper's proportional schedulers only; comparison mode has the others.
    let share_runs: Vec<&PaperRun> = runs
        .iter()
        .filter(|r| {
            (r.plan.group == "fig12-stride-1-2"
                && ["stride", "stride-relaxed", "as-stride", "as-stride-combo"]
                    .contains(&r.plan.label.as_str()))
                || (r.plan.group == "sec2-shares-1-1-3"
                    && ["stride", "lottery", "as-stride", "as-lottery"]
                        .contains(&r.plan.label.as_str()))
        })
        .collect();
    let contexts = share_runs
        .iter()
        .map(|r| r.report.contexts.len())
        .max()
        .unwrap_or(0);
    Bars {
        title: "Proportional share: each class's share of disk time (weights 1:2 and 1:1:3)",
        y_label: "share of disk time",
        categories: share_runs
            .iter()
            .map(|r| {
                format!(
                    "{} {}",
                    if r.plan.group.starts_with("fig12") {
                        "1:2"
                    } else {
                        "1:1:3"
                    },
                    r.plan.label
                )
            })
            .collect(),
        series: (0..contexts)
            .map(|k| {
                (
                    ["p", "q", "r"].get(k).unwrap_or(&"?").to_string(),
                    share_runs
                        .iter()
                        .map(|r| r.report.contexts.get(k).map_or(f64::NAN, |c| c.share))
                        .collect(),
                )
            })
            .collect(),
    }
    .save(&dir.join("shares"))?;
    names.push("shares".into());
    draw_peer_plots(dir, runs, &mut names)?;
    Ok(names)
}

/// The spacing sweep of sections 4.2.1 and 4.2.2: where the symmetric gain ends and the
/// asymmetric dip falls, against the distance between the readers' files, with the paper's
/// think times beside them. Nothing if the sweep did not run.
fn draw_spacing(
    dir: &Path,
    runs: &[PaperRun],
    experiments: &[Experiment],
) -> anyhow::Result<Option<String>> {
    let (b, s) = (paper::BASELINE, paper::ANTICIPATORY);
    let group = paper::SPACING_SWEEP;
    let mibs = paper::swept_spacings(runs);
    if mibs.is_empty() {
        return Ok(None);
    }
    // (x, baseline MB/s, anticipatory MB/s) of one variant, by increasing x.
    let sweep = |variant: &str| -> Vec<(f64, f64, f64)> {
        let mb = |x: f64, sched: &str| {
            runs.iter()
                .find(|r| {
                    r.plan.group == group
                        && r.plan.variant == variant
                        && r.plan.x == Some(x)
                        && r.plan.label == sched
                })
                .map_or(f64::NAN, |r| r.report.throughput_mb_s)
        };
        paper::sweep_xs(runs, group, variant)
            .into_iter()
            .map(|x| (x, mb(x, b), mb(x, s)))
            .collect()
    };
    let gib = |mib: u64| mib as f64 / 1024.0;
    let ends: Vec<(f64, f64)> = mibs
        .iter()
        .map(|&m| (gib(m), paper::gain_end(&sweep(&format!("symmetric/{m}")))))
        .filter(|p| p.1.is_finite())
        .collect();
    let dips: Vec<(f64, f64)> = mibs
        .iter()
        .filter_map(|&m| Some((gib(m), paper::dip(&sweep(&format!("asymmetric/{m}")))?.0)))
        .collect();
    let mut series = vec![
        ("symmetric: t where the gain ends".to_string(), ends),
        ("asymmetric: t of the as-aged-sptf dip".to_string(), dips),
    ];
    // The paper's, from the published table.
    let rows = experiments
        .iter()
        .filter(|e| e.id == group)
        .flat_map(|e| &e.rows);
    for (what, label) in [
        ("gain ends", "the paper: where the gain ends"),
        ("dip", "the paper: the dip"),
    ] {
        if let Some(p) = rows
            .clone()
            .find(|r| r.quantity.contains(what))
            .and_then(|r| r.paper)
        {
            let (lo, hi) = (gib(mibs[0]), gib(mibs[mibs.len() - 1]));
            series.push((label.to_string(), vec![(lo, p), (hi, p)]));
        }
    }
    Lines {
        title: "Sections 4.2.1 and 4.2.2 by the distance between the readers' files",
        x_label: "distance between the files (GiB)",
        y_label: "think time t (ms)",
        series,
    }
    .save(&dir.join("spacing"))?;
    Ok(Some("spacing".into()))
}

/// The schedulers the Linux/CAS tables show: the paper's three, then the ones it did not run.
const CAS_SCHEDULERS: [&str; 7] = [
    "deadline",
    "linux-as",
    "cas",
    "linux-as-2.6.32",
    "cfq",
    "bfq",
    "as-aged-sptf",
];

/// The Linux/CAS tables and BFQ's shares.
fn draw_peer_plots(dir: &Path, runs: &[PaperRun], names: &mut Vec<String>) -> anyhow::Result<()> {
    let find = |group: &str, variant: &str, s: &str| {
        runs.iter()
            .find(|r| r.plan.group == group && r.plan.variant == variant && r.plan.label == s)
    };
    let cats: Vec<String> = CAS_SCHEDULERS.iter().map(|s| s.to_string()).collect();
    for (group, title, name, what) in [
        (
            "cas-table1",
            "Linux/CAS Table 1: time to read the file against a dd writer (s; capped runs at the cap)",
            "cas-table1",
            "reader",
        ),
        (
            "cas-table2",
            "Linux/CAS Table 2: find -exec cat against a streaming cat (s; capped runs at the cap)",
            "cas-table2",
            "find",
        ),
    ] {
        Bars {
            title,
            y_label: "seconds",
            categories: cats.clone(),
            series: vec![(
                format!("{what}'s time"),
                CAS_SCHEDULERS
                    .iter()
                    .map(|s| find(group, "", s).map_or(f64::NAN, |r| r.report.duration_s))
                    .collect(),
            )],
        }
        .save(&dir.join(name))?;
        names.push(name.into());
    }
    Bars {
        title: "Linux/CAS Table 3: one and two find -exec cat on disjoint trees (MB/s)",
        y_label: "throughput (MB/s)",
        categories: cats,
        series: ["1-instance", "2-instances"]
            .iter()
            .map(|v| {
                (
                    v.replace('-', " "),
                    CAS_SCHEDULERS
                        .iter()
                        .map(|s| {
                            find("cas-table3", v, s).map_or(f64::NAN, |r| r.report.throughput_mb_s)
                        })
                        .collect(),
                )
            })
            .collect(),
    }
    .save(&dir.join("cas-table3"))?;
    names.push("cas-table3".into());
    let bfq: Vec<&PaperRun> = ["1:2", "1:2:10", "2-readers"]
        .iter()
        .filter_map(|v| find("bfq-shares", v, "bfq"))
        .collect();
    Bars {
        title: "BFQ: byte shares of sequential readers weighted 1:2, 1:2:10, and 1:1",
        y_label: "share of bytes",
        categories: bfq
            .iter()
            .map(|r| format!("weights {}", r.plan.variant.replace("2-readers", "1:1")))
            .collect(),
        series: (0..3)
            .map(|k| {
                (
                    ["p", "q", "r"][k].to_string(),
                    bfq.iter()
                        .map(|r| r.report.contexts.get(k).map_or(f64::NAN, |c| c.byte_share))
                        .collect(),
                )
            })
            .collect(),
    }
    .save(&dir.join("bfq-shares"))?;
    names.push("bfq-shares".into());
    Ok(())
}

/// A comparison cell's text: its value, `≥` where the run was capped, `‡` where it starved
/// a context.
fn cell_text(x: &paper::Cell) -> String {
    let v = fmt_bound(x.value, x.lower_bound);
    if x.starves() {
        format!("{v}‡")
    } else {
        v
    }
}

/// The comparison as a heat map; returns its base name.
fn draw_comparison(dir: &Path, c: &Comparison) -> anyhow::Result<String> {
    Heatmap {
        title: "Every scheduler on every microbenchmark (green: best of the column; shares: on target)",
        rows: c.rows.iter().map(|r| r.scheduler.clone()).collect(),
        columns: c.columns.iter().map(|k| format!("{} ({})", k.title, k.unit)).collect(),
        cells: c
            .rows
            .iter()
            .map(|r| {
                r.cells
                    .iter()
                    .map(|x| {
                        x.as_ref()
                            .map(|x| (x.score, cell_text(x)))
                    })
                    .collect()
            })
            .collect(),
    }
    .save(&dir.join("comparison"))?;
    Ok("comparison".into())
}

/// `report.md`: what was run, the published figures beside ours, the plots, and an
/// explanation wherever ours differs from the paper by more than 15%.
fn report(a: &Args, d: &DiskHalf, plots: &[String]) -> String {
    let (opts, experiments, comparison) = (&d.opts, &d.experiments, &d.comparison);
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# antsched paper: the SOSP 2001 microbenchmarks, reproduced\n"
    );
    let _ = writeln!(
        md,
        "Disk `{}` (section 4.8: `{}`), estimator `{}`, readers' files {} MiB apart, seed {}{}. Generated by `antsched paper{}` (antsched {}). \
         Every run's fio job file is in [`jobs/`](jobs/); rerun one with `antsched sim jobs/NAME.fio`. \
         All numbers are in [`results.json`](results.json).\n",
        a.disk,
        a.fast_disk,
        a.estimator,
        a.file_spacing,
        a.seed,
        if a.quick { ", quick mode (shorter runs, sparser sweeps)" } else { "" },
        if a.quick { " --quick" } else { "" },
        env!("CARGO_PKG_VERSION"),
    );
    let _ = writeln!(md, "Ratio is ours / paper. MB is 10^6 bytes. Shares are fractions of disk time (the paper's contracts are in disk utilization).\n");
    md += &experiment_tables(experiments, a.quick);
    let _ = writeln!(md, "{}", paper::modelling_notes(opts, &d.runs));
    md += &comparison_section(comparison);
    let _ = writeln!(md, "## Plots\n");
    for p in plots {
        let _ = writeln!(md, "![{p}]({p}.png) ([SVG]({p}.svg))\n");
    }
    md
}

/// Each experiment's table (quantity, paper, ours, ratio), and why ours differs wherever it
/// differs by more than 15%: the reason the evaluation worked out from the runs, or else a
/// note without figures (quick mode, or a difference not yet looked into).
pub(crate) fn experiment_tables(experiments: &[Experiment], quick: bool) -> String {
    let mut md = String::new();
    for e in experiments {
        let _ = writeln!(md, "## {} (section {})\n\n{}\n", e.id, e.section, e.title);
        let _ = writeln!(md, "| quantity | paper | ours | ratio |\n|---|---|---|---|");
        for r in &e.rows {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} |",
                r.quantity,
                r.paper.map_or("-".into(), fmt),
                fmt_bound(r.ours, r.lower_bound),
                r.ratio.map_or("-".into(), |x| fmt_bound(x, r.lower_bound))
            );
        }
        if let Some(note) = &e.note {
            let _ = writeln!(md, "\n{note}");
        }
        let within = (1.0 - paper::OFF_BY)..=(1.0 + paper::OFF_BY);
        let off: Vec<_> = e
            .rows
            .iter()
            .filter(|r| r.ratio.is_some_and(|x| !within.contains(&x)))
            .collect();
        if !off.is_empty() {
            let _ = writeln!(md, "\nWhere ours differs by more than 15%:\n");
            // Several rows of one sweep often share a reason: say it once, after all of them.
            let mut reasons: Vec<(Vec<&str>, String)> = Vec::new();
            for r in off {
                let why = r
                    .why
                    .clone()
                    .unwrap_or_else(|| paper::explain(&e.id, &r.quantity, quick));
                match reasons.iter_mut().find(|(_, w)| *w == why) {
                    Some((rows, _)) => rows.push(&r.quantity),
                    None => reasons.push((vec![&r.quantity], why)),
                }
            }
            for (rows, why) in reasons {
                let _ = writeln!(md, "- {}: {}", rows.join("; "), why);
            }
        }
        let _ = writeln!(md);
    }
    md
}

/// The comparison section of the report: the headline table, throughput and p99 latency of
/// every scheduler on every microbenchmark, and who is best where.
fn comparison_section(c: &Comparison) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## Comparison: every scheduler on every microbenchmark\n\n\
         Every scheduler of the catalog (antsched's own, then the peers) on the suite's \
         microbenchmarks, on the paper's disk: the section 4.1 access patterns, think times of 4 and \
         8 ms (4.2.1: both readers; 4.2.2: one of them), the shares workloads (4.7's 1:2 and 1:1:3 in \
         disk time, BFQ's 1:2 and 1:2:10 in bytes, where a scheduler whose weights' unit is a tunable \
         runs with `share=bytes` and `bfq` with `low_latency=0` as in the BFQ report), two \
         sequential readers, and the Linux/CAS \
         tables (Table 1: the reader's time against a writer; Table 2: the find's time against a \
         streaming reader; Table 3: MB/s of one and two finds). `≥` marks a run stopped at its \
         cap before the timed job finished. `‡` marks a run that starved a context: some request \
         waited over {starve} s, finished or still waiting at the end; such a run scores 0 and is \
         never a column's best, whatever its figure (serving one reader alone is fast). Share columns give the ratio of the classes' shares and \
         their weights' ratio in the header. The heat map \
         ([comparison.png](comparison.png)) colours each column from its best (green) to its worst \
         (red); share columns by distance from the target.\n",
        starve = paper::STARVATION_MS / 1e3
    );
    let header = |md: &mut String, units: bool| {
        let _ = write!(md, "| scheduler |");
        for k in &c.columns {
            if units {
                let _ = write!(md, " {} ({}) |", k.title, k.unit);
            } else {
                let _ = write!(md, " {} |", k.title);
            }
        }
        let _ = write!(md, "\n|---|");
        for _ in &c.columns {
            let _ = write!(md, "---|");
        }
        let _ = writeln!(md);
    };
    type Pick = fn(&paper::Cell) -> String;
    let tables: [(&str, Pick); 3] = [
        (
            "What each microbenchmark measures (the heat map's numbers)",
            cell_text,
        ),
        ("Throughput (MB/s, all applications)", |x| {
            fmt(x.throughput_mb_s)
        }),
        ("p99 latency of the worst-served context (ms)", |x| {
            fmt(x.p99_ms)
        }),
    ];
    for (k, (title, pick)) in tables.into_iter().enumerate() {
        let _ = writeln!(md, "### {title}\n");
        header(&mut md, k == 0);
        for r in &c.rows {
            let _ = write!(md, "| {} |", r.scheduler);
            for x in &r.cells {
                let _ = write!(md, " {} |", x.as_ref().map_or("-".into(), pick));
            }
            let _ = writeln!(md);
        }
        let _ = writeln!(md);
    }
    let _ = writeln!(md, "{}", paper::notes(c));
    let _ = writeln!(md, "### Best on each (within 2% of the best score)\n");
    let _ = writeln!(
        md,
        "The last column is the default scheduler's (`{def}`) figure and its distance from the \
         column's best score (a share ratio: from the target).\n",
        def = antsched_core::DEFAULT_SCHEDULER
    );
    let _ = writeln!(
        md,
        "| microbenchmark | measure | best | {} (distance) |\n|---|---|---|---|",
        antsched_core::DEFAULT_SCHEDULER
    );
    let ours = c
        .rows
        .iter()
        .find(|r| r.scheduler == antsched_core::DEFAULT_SCHEDULER);
    for (j, (k, best)) in c.columns.iter().zip(&c.best).enumerate() {
        let measure = match k.measure {
            Measure::Throughput => "MB/s, higher is better".to_string(),
            Measure::Time => "seconds, lower is better".to_string(),
            Measure::WriteBack => "write-back MB/s, higher is better".to_string(),
            Measure::ShareRatio { target, bytes, .. } => format!(
                "{} share ratio, target {}",
                if bytes { "byte" } else { "disk-time" },
                fmt(target)
            ),
        };
        let best = if best.len() == c.rows.len() {
            "all, within 2%".to_string()
        } else {
            best.join(", ")
        };
        let top = c.best_score(j);
        let distance = match ours.and_then(|r| r.cells[j].as_ref()) {
            None => "-".to_string(),
            Some(x) if x.starves() => format!("{} (starves a context)", cell_text(x)),
            Some(x) if matches!(k.measure, Measure::ShareRatio { .. }) => {
                format!("{} ({:+.1}%)", cell_text(x), (x.score - 1.0) * 100.0)
            }
            Some(x) if top > 0.0 => {
                format!("{} ({:+.1}%)", cell_text(x), (x.score / top - 1.0) * 100.0)
            }
            Some(x) => cell_text(x),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            k.title, measure, best, distance
        );
    }
    let _ = writeln!(md);
    md
}
