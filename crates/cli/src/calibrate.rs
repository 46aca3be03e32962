//! `antsched calibrate PATH|--emulate NAME [--out CURVE.json]`: the paper's positioning-time
//! calibration (section 3.6), on a real file or device, or on an emulated disk in real time.

use std::path::PathBuf;

use antsched_core::{build, BuildEnv};
use antsched_disk::curve::accuracy_within_20pct;
use antsched_io::calibrate::{measure, CalibrateOptions};
use antsched_io::{clock, Backend, Options, Runtime, SetupError, Store};
use antsched_sim::device::{accuracy_on, best_possible_accuracy, decision_samples};
use antsched_sim::disk_model;
use anyhow::{bail, Context};

use crate::progress::Progress;

#[derive(clap::Args)]
pub struct Args {
    /// A regular file or block device to measure (read only, O_DIRECT). A file must hold
    /// real data: holes of a sparse file are answered without touching the device.
    #[arg(
        value_name = "PATH",
        conflicts_with = "emulate",
        required_unless_present = "emulate"
    )]
    path: Option<PathBuf>,
    /// Measure an emulated disk instead (a built-in model or a DiskSim .parv file), in real
    /// time, and score the curve against the model.
    #[arg(long, value_name = "NAME")]
    emulate: Option<String>,
    /// Write the curve as JSON (what `estimator=CURVE.json` reads).
    #[arg(long, value_name = "CURVE.json")]
    out: Option<PathBuf>,
    /// Reads per distance (the simulator's calibrated estimator uses 40).
    #[arg(long, default_value_t = CalibrateOptions::default().pairs,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pairs: u32,
    /// Distances per factor of ten.
    #[arg(long, default_value_t = CalibrateOptions::default().per_decade,
          value_parser = clap::value_parser!(u32).range(1..=1_000))]
    per_decade: u32,
    /// Independent passes of the measurement (each with its own places, order and pauses);
    /// the curve is their median at each distance, and their spread says how far to trust it.
    #[arg(long, default_value_t = CalibrateOptions::default().repeats,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    repeats: u32,
    /// Seed of the plan (places, order, pauses); pass k uses SEED + k.
    #[arg(long, default_value_t = CalibrateOptions::default().seed)]
    seed: u64,
    /// Open PATH without O_DIRECT (where O_DIRECT is refused; the page cache then answers
    /// repeated reads, and the curve says little about the device).
    #[arg(long)]
    buffered: bool,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    // Every read of the plan is held and timed: bound it before building it (a
    // `--per-decade 4294967295` once asked for billions). About 10 decades of distances.
    const MAX_READS_PER_DECADE: u32 = 100_000;
    let d = CalibrateOptions::default();
    let reads = u64::from(a.pairs) * u64::from(a.per_decade) * u64::from(a.repeats);
    if reads > u64::from(MAX_READS_PER_DECADE) {
        bail!(
            "--pairs {} times --per-decade {} times --repeats {} is {reads} reads per factor of \
             ten of distance; at most {MAX_READS_PER_DECADE} are allowed (the defaults take {})",
            a.pairs,
            a.per_decade,
            a.repeats,
            d.pairs * d.per_decade * d.repeats
        );
    }
    if let Some(out) = &a.out {
        crate::output::check_writable(out)?;
    }
    let opts = CalibrateOptions {
        pairs: a.pairs,
        per_decade: a.per_decade,
        seed: a.seed,
        repeats: a.repeats,
        ..CalibrateOptions::default()
    };
    let noop = build("noop", &BuildEnv::default())?;
    let rt_opts = Options {
        spin: 200_000,
        realtime_priority: Some(2),
        ..Options::default()
    };
    let _ = clock::set_realtime(1);
    let mut backing = None;
    let (rt, model, what) = match (&a.path, &a.emulate) {
        (Some(p), _) => {
            let backend = match Backend::file(p, !a.buffered) {
                Ok(b) => b,
                // EINVAL from open(O_DIRECT): the file system does not do direct I/O.
                Err(e @ SetupError::Open { .. }) if !a.buffered && refuses_direct(&e) => {
                    bail!("{e} (the file system refuses O_DIRECT; try --buffered)")
                }
                Err(e) => return Err(e.into()),
            };
            if backend.capacity_sectors() == 0 {
                bail!("{} is empty", p.display());
            }
            (
                Runtime::start(backend, noop, rt_opts)?,
                None,
                p.display().to_string(),
            )
        }
        (None, Some(name)) => {
            let model = disk_model(name)?;
            // The emulated disk moves real bytes: back it with a sparse file of its size.
            let path =
                std::env::temp_dir().join(format!("antsched-calibrate-{}.img", std::process::id()));
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&path)
                .with_context(|| format!("cannot create the backing file {}", path.display()))?;
            f.set_len(model.capacity_sectors() * 512)
                .with_context(|| format!("cannot size the backing file {}", path.display()))?;
            backing = Some(path);
            let backend = Backend::emulated(model.clone_box(), Store::whole(f));
            (
                Runtime::start(backend, noop, rt_opts)?,
                Some(model),
                format!("emulated {name}"),
            )
        }
        (None, None) => bail!("give PATH or --emulate NAME"),
    };
    let progress = Progress::new(0, "calibrating");
    let result = measure(&rt, &opts, &|done, total| {
        progress.set_length(total);
        progress.set_position(done);
    });
    progress.finish();
    drop(rt);
    if let Some(p) = backing {
        let _ = std::fs::remove_file(p);
    }
    let cal = result?;
    let mut curve = cal.curve;
    curve.source = Some(format!(
        "calibrated on {what}: {} reads of {} KiB in {} passes, {} per distance, {} distances per decade; the median of the passes",
        cal.samples.len(),
        opts.sectors / 2,
        cal.passes.len(),
        opts.pairs,
        opts.per_decade
    ));
    println!(
        "measured {} reads in {:.1} s; transfer of one {} KiB read: {:.1} us (subtracted)",
        cal.samples.len(),
        cal.wall_s,
        opts.sectors / 2,
        cal.transfer_us
    );
    println!("{:>12}  {:>10}", "distance", "time_us");
    for p in &curve.points {
        println!("{:>12}  {:>10.1}", p.distance, p.time_us);
    }
    if let Some(model) = &model {
        let core_curve =
            antsched_core::PositioningCurve::from_json(&curve.to_json(), "the measured curve")?;
        let decisions = decision_samples(&**model)?;
        let acc = accuracy_on(&decisions, &core_curve);
        let ceiling = best_possible_accuracy(&decisions);
        let mut per_pass = Vec::new();
        for p in &cal.passes {
            let c = antsched_core::PositioningCurve::from_json(&p.to_json(), "a pass's curve")?;
            per_pass.push((accuracy_on(&decisions, &c) * 1000.0).round() / 1000.0);
        }
        if let Some(q) = curve.calibration.as_mut() {
            q.pass_accuracy = per_pass;
            q.warnings = antsched_disk::curve::warnings(q);
        }
        let random = accuracy_within_20pct(&curve, &**model, 20_000, 7);
        curve.accuracy_within_20pct = Some((acc * 1000.0).round() / 1000.0);
        println!(
            "accuracy_within_20pct: {acc:.3} of the {} positioning times schedulers compare on the paper's two-reader workloads \
             (the best any distance curve could do there: {ceiling:.3}); {random:.3} of 20000 random request pairs",
            decisions.len()
        );
    }
    if let Some(q) = &curve.calibration {
        print!("{}", quality_lines(q));
        for w in &q.warnings {
            eprintln!("warning: {w}");
        }
    }
    if let Some(out) = &a.out {
        crate::output::write_atomically(out, curve.to_json().as_bytes())?;
        println!("wrote {}", out.display());
    }
    Ok(())
}

/// The calibration's quality as printed: passes, spread, confidence, the machine's noise.
fn quality_lines(q: &antsched_disk::curve::Quality) -> String {
    let mut s = format!(
        "passes: {}; spread between them (largest - smallest) / median: {:.1}% at the median distance, {:.1}% at most; \
         confidence {:.3} (distances where every pass is within 20% of the median)\n",
        q.passes,
        q.spread_median * 100.0,
        q.spread_max * 100.0,
        q.confidence
    );
    s += &format!(
        "disturbed (issued or completed more than {:.0} us late): {:.1}% of first measurements, \
         {} measured again, {:.1}% of the samples kept; lateness at issue p50 {:.1} us, p99 {:.1} us\n",
        antsched_disk::curve::LATE_WAKE_US,
        q.late_fraction * 100.0,
        q.remeasured,
        q.disturbed_fraction * 100.0,
        q.wake_late_p50_us,
        q.wake_late_p99_us
    );
    if !q.pass_accuracy.is_empty() {
        let each: Vec<String> = q.pass_accuracy.iter().map(|a| format!("{a:.3}")).collect();
        s += &format!("accuracy of each pass: {}\n", each.join(", "));
    }
    s
}

fn refuses_direct(e: &SetupError) -> bool {
    matches!(e, SetupError::Open { source, .. } if source.raw_os_error() == Some(libc::EINVAL))
}
