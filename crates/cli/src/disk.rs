//! `antsched disk validate PARV TRACE`: replay a DiskSim validation trace on the imported model
//! and compare with the service times measured on the real drive.

use std::fmt::Write as _;
use std::path::PathBuf;

use antsched_disk::validate::{validate_with, ValidationReport};
use anyhow::Context;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Replay a DiskSim 4.0 validation trace (closed loop, one request outstanding) and print the
    /// demerit figure next to DiskSim's own.
    Validate(ValidateArgs),
}

#[derive(clap::Args)]
struct ValidateArgs {
    /// The drive's DiskSim `.parv` file (it sources the .diskspecs, .model and .seek files).
    parv: PathBuf,
    /// The validation trace: `R|W Hit|Miss|Doub|Trip blkno bcount servtime_us next_interarrival_us` lines.
    trace: PathBuf,
    /// Write the summary as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write one CSV row per trace line to FILE
    /// (`index,op,sector,sectors,measured_ms,model_ms`).
    #[arg(long = "per-request", value_name = "CSV")]
    per_request: Option<PathBuf>,
    /// Change one of the drive's numeric parameters before the replay, by its name in the
    /// .diskspecs or .model file (`--set 'Immediate buffer read=0'`); repeat for several.
    /// DiskSim's own figure is then for a different drive.
    #[arg(long = "set", value_name = "NAME=NUMBER")]
    set: Vec<String>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Command::Validate(a) => run_validate(a),
    }
}

fn run_validate(a: ValidateArgs) -> anyhow::Result<()> {
    for path in a.json.iter().chain(&a.per_request) {
        crate::output::check_writable(path)?;
    }
    let r = validate_with(&a.parv, &a.trace, &a.set)?;
    print_report(&r);
    if !a.set.is_empty() {
        println!("(with --set: DiskSim's figure is for the drive as its files give it)");
    }
    // Build both outputs before writing either, so a failure leaves nothing half done.
    let json = match &a.json {
        Some(_) => Some(serde_json::to_string_pretty(&r).context("cannot encode the report")?),
        None => None,
    };
    let csv = a.per_request.as_ref().map(|_| per_request_csv(&r));
    if let (Some(path), Some(text)) = (&a.json, json) {
        crate::output::write_atomically(path, text.as_bytes())?;
    }
    if let (Some(path), Some(text)) = (&a.per_request, csv) {
        crate::output::write_atomically(path, text.as_bytes())?;
    }
    Ok(())
}

fn print_report(r: &ValidationReport) {
    println!("drive      {}", r.drive);
    println!("requests   {}", r.requests);
    match r.disksim_demerit_ms {
        Some(d) => println!(
            "demerit    {:.3} ms   (DiskSim 4.0: {:.3} ms; {})",
            r.demerit_ms,
            d,
            if r.demerit_ms <= d {
                "at or below DiskSim"
            } else {
                "above DiskSim"
            }
        ),
        None => println!(
            "demerit    {:.3} ms   (no DiskSim 4.0 figure for this drive)",
            r.demerit_ms
        ),
    }
    println!(
        "binned     {:.3} ms   (the demerit as DiskSim's rms computes its figures, from binned distributions)",
        r.demerit_binned_ms
    );
    println!("             measured    model");
    println!(
        "mean all   {:>9.3} {:>8.3} ms",
        r.mean_measured_ms, r.mean_model_ms
    );
    println!(
        "mean reads {:>9.3} {:>8.3} ms",
        r.mean_measured_read_ms, r.mean_model_read_ms
    );
    println!(
        "mean writes{:>9.3} {:>8.3} ms",
        r.mean_measured_write_ms, r.mean_model_write_ms
    );
}

fn per_request_csv(r: &ValidationReport) -> String {
    let mut s = String::with_capacity(r.per_request.len() * 40);
    s.push_str("index,op,sector,sectors,measured_ms,model_ms\n");
    for q in &r.per_request {
        let op = match q.op {
            antsched_disk::DiskOp::Read => "R",
            antsched_disk::DiskOp::Write => "W",
        };
        let _ = writeln!(
            s,
            "{},{},{},{},{:.4},{:.4}",
            q.index, op, q.sector, q.sectors, q.measured_ms, q.model_ms
        );
    }
    s
}
