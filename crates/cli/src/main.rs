//! The `antsched` command. Argument parsing, tables, JSON and plots; the logic lives in the
//! library crates.

mod calibrate;
mod disk;
mod disks;
mod limits;
mod mem;
mod memd;
mod mount;
mod output;
mod paper;
mod paper_mem;
mod plots;
mod progress;
mod run;
mod schedulers;
mod signals;
mod sim;
mod trace_args;
mod watch;

use std::process::ExitCode;

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
    /// The memory half: adaptive memory management (simulate a scenario; the daemon's record).
    Mem(mem::Args),
    /// The severity service: publishes the machine's severity record to clients (root; runs in
    /// the foreground until SIGINT or SIGTERM).
    Memd(crate::memd::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Mount(_)) {
        // `antsched schedulers | head` closes the pipe early: end quietly, as `cat` does,
        // instead of panicking in `println!`. Not for `mount`, which must unmount first.
        // SAFETY: setting a signal's disposition to the default before any thread starts.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The error and its causes, one per line, without the backtrace anyhow would add
            // under RUST_BACKTRACE=1: bad input is the user's to fix, not a crash to debug.
            // A cause whose text the message above already quotes is not repeated.
            let mut said = e.to_string();
            eprintln!("error: {}", printable(&said));
            for cause in e.chain().skip(1).map(|c| c.to_string()) {
                if !said.contains(&cause) {
                    eprintln!("  caused by: {}", printable(&cause));
                    said = cause;
                }
            }
            ExitCode::FAILURE
        }
    }
}

/// An error message as the terminal should show it: a user's bytes quoted in it (a NUL in an
/// option name, an escape sequence in a file name) are written as escapes, never raw, so the
/// message can neither hide text nor drive the terminal.
fn printable(message: &str) -> String {
    message
        .chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Paper(a) => paper::run(a),
        Command::Schedulers => schedulers::run(&mut std::io::stdout().lock()),
        Command::Disks(a) => disks::run(a),
        Command::Disk(a) => disk::run(a),
        Command::Sim(a) => sim::run(a),
        Command::Run(a) => run::run(a),
        Command::Calibrate(a) => calibrate::run(a),
        Command::Mount(a) => mount::run(a),
        Command::Mem(a) => mem::run(a),
        Command::Memd(a) => crate::memd::run(a),
    }
}
