//! The memory half of `antsched paper`: the thesis's chapter 6 (and section 4.5) on the memory
//! simulator, in parallel, with plots, scenario files and the report's section.

use std::fmt::Write as _;
use std::path::Path;

use antsched_mem::paper::{self, MemPaperOptions, MemRun, PlannedRun, Verdict};
use antsched_mem::sim::MemReport;
use antsched_paper::Experiment;
use rayon::prelude::*;

use crate::paper::{fmt, Args};
use crate::plots::{Bars, Lines, Plot};
use crate::progress::Progress;

/// The memory half's results.
pub struct MemHalf {
    pub quick: bool,
    pub disk: String,
    pub plan: Vec<PlannedRun>,
    pub runs: Vec<MemRun>,
    pub experiments: Vec<Experiment>,
    pub verdicts: Vec<Verdict>,
}

impl MemHalf {
    /// Page references simulated over every run.
    fn page_refs(&self) -> u64 {
        self.runs.iter().map(|r| r.report.sim.page_refs).sum()
    }

    /// The simulators' own time for them, s (each run on one core).
    fn sim_wall_s(&self) -> f64 {
        self.runs.iter().map(|r| r.report.sim.wall_s).sum()
    }

    fn find(&self, name: &str) -> Option<&MemReport> {
        self.runs.iter().find(|r| r.name == name).map(|r| &r.report)
    }
}

pub fn run(disk: &str, quick: bool, seed: u64) -> anyhow::Result<MemHalf> {
    let plan = paper::plan(&MemPaperOptions {
        disk: disk.to_string(),
        quick,
    });
    let progress = Progress::new(plan.len() as u64, "paper (memory)");
    let runs = plan
        .par_iter()
        .map(|p| {
            let r = paper::run_one(p, seed);
            progress.inc();
            r
        })
        .collect::<Result<Vec<_>, String>>()
        .map_err(|e| anyhow::anyhow!(e))?;
    progress.finish();
    let experiments = paper::evaluate(&runs);
    let verdicts = paper::verdicts(&runs);
    Ok(MemHalf {
        quick,
        disk: disk.to_string(),
        plan,
        runs,
        experiments,
        verdicts,
    })
}

fn refs_per_s(m: &MemHalf) -> f64 {
    m.page_refs() as f64 / m.sim_wall_s().max(1e-9)
}

/// The console lines after the table: the baselines' verdicts and the simulator's speed.
pub fn console(m: &MemHalf) -> String {
    let mut s = String::new();
    let faster = m.verdicts.iter().filter(|v| v.faster).count();
    let ahead = m.verdicts.iter().filter(|v| v.faster && v.smaller).count();
    let _ = writeln!(
        s,
        "memory: antsched's policy faster than the baseline in {faster} of {} runs, and at equal \
         or smaller footprint in {ahead} (report.md: the baselines' table); simulator {:.1} \
         million page references/s per core ({} runs)",
        m.verdicts.len(),
        refs_per_s(m) / 1e6,
        m.runs.len()
    );
    s
}

pub fn json(m: &MemHalf) -> anyhow::Result<serde_json::Value> {
    Ok(serde_json::json!({
        "runs": m.runs.iter().map(|r| {
            let mut v = serde_json::to_value(&r.report).unwrap_or_default();
            v["name"] = serde_json::json!(r.name);
            v
        }).collect::<Vec<_>>(),
        "verdicts": m.verdicts,
        "sim": {
            "page_refs": m.page_refs(),
            "wall_s": m.sim_wall_s(),
            "page_refs_per_s": refs_per_s(m),
        },
    }))
}

/// At most `n` points of a time series, evenly spaced (plots of long runs stay small).
fn thin(v: Vec<(f64, f64)>, n: usize) -> Vec<(f64, f64)> {
    let step = v.len().div_ceil(n.max(1)).max(1);
    v.into_iter().step_by(step).collect()
}

/// Writes the scenario files and plots into `dir`; returns the plots' base names and adds
/// the scenario files to `files`.
pub fn write(dir: &Path, m: &MemHalf, files: &mut Vec<String>) -> anyhow::Result<Vec<String>> {
    std::fs::create_dir_all(dir.join("scenarios"))?;
    for p in &m.plan {
        let f = format!("scenarios/{}.toml", p.name);
        std::fs::write(dir.join(&f), &p.scenario)?;
        files.push(f);
    }
    let mut plots = Vec::new();
    // Fig. 6.1: S, the cache, free memory and the disk queue over time, adaptive and fixed.
    for (name, run) in [
        ("fig6_1-adaptive", paper::policy_name("antsched", true)),
        (
            "fig6_1-fixed",
            paper::fixed_name(paper::FIG_6_1_FIXED_MB, true),
        ),
    ] {
        let Some(r) = m.find(&run) else { continue };
        let t = |f: &dyn Fn(&antsched_mem::sim::Sample) -> f64| {
            thin(r.severity.iter().map(|x| (x.time_s, f(x))).collect(), 600)
        };
        Lines {
            title: &format!("Fig. 6.1 ({run}): severity"),
            x_label: "time (s)",
            y_label: "S (s)",
            series: vec![
                ("S".into(), t(&|x| x.severity_s)),
                ("candidate age".into(), t(&|x| x.candidate_age_s)),
            ],
        }
        .save(&dir.join(format!("{name}-severity")))?;
        Lines {
            title: &format!("Fig. 6.1 ({run}): memory and disk queue"),
            x_label: "time (s)",
            y_label: "MB; requests",
            series: vec![
                ("query cache (MB)".into(), t(&|x| x.cache_mb[0])),
                ("free (MB)".into(), t(&|x| x.free_mb)),
                (
                    "hog (MB)".into(),
                    t(&|x| x.resident_mb.get(1).copied().unwrap_or(0.0)),
                ),
                ("disk queue".into(), t(&|x| x.disk_queue as f64)),
            ],
        }
        .save(&dir.join(format!("{name}-memory")))?;
        plots.push(format!("{name}-severity"));
        plots.push(format!("{name}-memory"));
    }
    // Experiment 1: measured against the model.
    let mut cats = Vec::new();
    let (mut ours, mut model) = (Vec::new(), Vec::new());
    if let Some(e) = m.experiments.iter().find(|e| e.id == "mem-equilibrium") {
        for r in e.rows.iter().filter(|r| r.quantity.contains("performance")) {
            cats.push(
                r.quantity
                    .replace(" cache's performance", "")
                    .replace("Zipf's law, ", "Zipf ")
                    .replace("alpha ", "a")
                    .replace("eta ", "η"),
            );
            ours.push(r.ours);
            model.push(r.paper.unwrap_or(f64::NAN));
        }
    }
    if !cats.is_empty() {
        Bars {
            title: "Section 4.5: performance against an even split",
            y_label: "hit rate / even split's",
            categories: cats,
            series: vec![("antsched".into(), ours), ("Eqs. 4.6, 4.7".into(), model)],
        }
        .save(&dir.join("equilibrium"))?;
        plots.push("equilibrium".into());
    }
    // Experiment 3 and 6: runtimes.
    let minutes = |name: &str| {
        m.find(name).map_or(f64::NAN, |r| {
            r.processes[0].runtime_s.unwrap_or(r.duration_s) / 60.0
        })
    };
    let mut cats: Vec<String> = paper::CACHE_SIZES
        .iter()
        .map(|mb| format!("{mb} MB"))
        .collect();
    cats.push("adaptive".into());
    let mut vals: Vec<f64> = paper::CACHE_SIZES
        .iter()
        .map(|&mb| minutes(&paper::fixed_name(mb, false)))
        .collect();
    vals.push(minutes(&paper::policy_name("antsched", false)));
    Bars {
        title: "Section 6.2.5: the database's runtime",
        y_label: "minutes",
        categories: cats,
        series: vec![("antsched".into(), vals)],
    }
    .save(&dir.join("runtime-table"))?;
    plots.push("runtime-table".into());
    let policies: Vec<&str> = std::iter::once("antsched")
        .chain(paper::BASELINES)
        .collect();
    Bars {
        title: "The anchors' policies: the database's runtime",
        y_label: "minutes (a run that never finished: its cap)",
        categories: policies.iter().map(|p| p.to_string()).collect(),
        series: [false, true]
            .into_iter()
            .map(|hog| {
                (
                    if hog { "with the hog" } else { "alone" }.to_string(),
                    policies
                        .iter()
                        .map(|p| minutes(&paper::policy_name(p, hog)))
                        .collect(),
                )
            })
            .collect(),
    }
    .save(&dir.join("baselines"))?;
    plots.push("baselines".into());
    // Experiment 5: runtime against heap size.
    let heaps: Vec<(f64, f64)> = paper::HEAPS_MB
        .iter()
        .filter_map(|&mb| {
            m.find(&paper::heap_name(mb))
                .map(|r| (mb, r.processes[0].runtime_s.unwrap_or(r.duration_s)))
        })
        .collect();
    Lines {
        title: "Section 6.3: runtime against heap size (never finished: the cap)",
        x_label: "heap (MB)",
        y_label: "runtime (s)",
        series: vec![("fixed heap".into(), heaps)],
    }
    .save(&dir.join("gc-heap"))?;
    plots.push("gc-heap".into());
    Ok(plots)
}

/// The report's memory section (the whole report when the disk half was not run).
pub fn report(m: &MemHalf, plots: &[String], a: &Args, alone: bool) -> String {
    let mut md = String::new();
    if alone {
        md += "# antsched paper: the thesis's adaptive memory management, reproduced\n\n";
    } else {
        md += "# The memory half: the thesis's adaptive memory management\n\n";
    }
    let _ = writeln!(
        md,
        "The thesis's chapter 6 (and the equilibrium of section 4.5) on antsched's memory \
         simulator: a 256 MB machine, paging I/O through `{}` on `{}`, seed {}{}. \
         Every run's scenario is in [`scenarios/`](scenarios/); rerun one with `antsched mem \
         simulate scenarios/NAME.toml`. The simulators ran {:.1} million page references per \
         second on one core ({} page references over {} runs, {:.1} s of simulator time).\n",
        antsched_mem::paper::scenarios::PAGING_SCHEDULER,
        m.disk,
        a_seed(a),
        if m.quick {
            ", quick mode (a quarter of each workload)"
        } else {
            ""
        },
        refs_per_s(m) / 1e6,
        m.page_refs(),
        m.runs.len(),
        m.sim_wall_s()
    );
    md += "What the thesis does not give is chosen once and held for every run (the constants \
           of `antsched_mem::paper::scenarios`): the database's per-query overhead (3.75 ms, from \
           the 0 MB row's 6.5 ms a query), the skew of its data file (Zipf 1.2 over 200 MB, two \
           pages a miss), and for the JVM the memory its machine left to the heap (227 MB, where \
           its runtime doubled) and a collector whose cost grows with the live set. Ratio is ours / \
           thesis; `≥` marks a run stopped at its cap (twice the thesis's slowest database \
           run, eight times the JVM's mutator time) before it finished, which the thesis reports \
           as never finishing.\n\n";
    md += &crate::paper::experiment_tables(&m.experiments, m.quick);
    let _ = writeln!(
        md,
        "## The anchors' policies against antsched's\n\n\
         Runtime of the database (min), its footprint (mean resident MB) and the machine's \
         free memory (mean MB while the database ran) under antsched's policy and each \
         baseline's. A baseline whose footprint is smaller but slower left that memory free: \
         nothing else used it.\n\n\
         | baseline | workload | antsched min | baseline min | antsched MB | baseline MB | antsched free MB | baseline free MB | antsched ahead |\n\
         |---|---|---|---|---|---|---|---|---|"
    );
    for v in &m.verdicts {
        let ahead = match (v.faster, v.smaller) {
            (true, true) => "yes",
            (true, false) => "faster, larger footprint",
            (false, true) => "no: slower",
            (false, false) => "no",
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            v.baseline,
            if v.hog { "with the hog" } else { "alone" },
            fmt(v.antsched_min),
            fmt(v.baseline_min),
            fmt(v.antsched_mb),
            fmt(v.baseline_mb),
            fmt(v.antsched_free_mb),
            fmt(v.baseline_free_mb),
            ahead
        );
    }
    let _ = writeln!(md);
    let _ = writeln!(md, "## Memory plots\n");
    for p in plots {
        let _ = writeln!(md, "![{p}]({p}.png) ([SVG]({p}.svg))\n");
    }
    md
}

fn a_seed(a: &Args) -> u64 {
    a.seed()
}
