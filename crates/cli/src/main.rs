//! The `antsched` command. Argument parsing, tables, JSON and plots; the logic lives in the
//! library crates.

mod calibrate;
mod disk;
mod disks;
mod mount;
mod output;
mod paper;
mod plots;
mod progress;
mod run;
mod schedulers;
mod sim;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "antsched",
    version,
    about = "Anticipatory disk scheduling: simulated, emulated and real"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Reproduce the SOSP 2001 paper's microbenchmarks on the model of its disk.
    Paper(paper::Args),
    /// List every scheduler with its tunables and their defaults.
    Schedulers,
    /// Every built-in disk model with its key figures.
    Disks(disks::Args),
    /// Disk model tools (validation against measured traces).
    Disk(disk::Args),
    /// Simulate a fio job file under one or more schedulers.
    Sim(sim::Args),
    /// Run a fio job file in real time on an emulated disk (io_uring runtime).
    Run(run::Args),
    /// Measure positioning time against LBN distance and fit the calibrated estimator's curve.
    Calibrate(calibrate::Args),
    /// Mount a directory through FUSE on an emulated disk, scheduled per process.
    Mount(mount::Args),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Paper(a) => paper::run(a),
        Command::Schedulers => schedulers::run(&mut std::io::stdout().lock()),
        Command::Disks(a) => disks::run(a),
        Command::Disk(a) => disk::run(a),
        Command::Sim(a) => sim::run(a),
        Command::Run(a) => run::run(a),
        Command::Calibrate(a) => calibrate::run(a),
        Command::Mount(a) => mount::run(a),
    }
}
