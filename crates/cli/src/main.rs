//! The `antsched` command. Argument parsing, tables, JSON and plots; the logic lives in the
//! library crates.

mod disk;
mod disks;
mod output;
mod schedulers;

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
    /// List every scheduler with its tunables and their defaults.
    Schedulers,
    /// Every built-in disk model with its key figures.
    Disks(disks::Args),
    /// Disk model tools (validation against measured traces).
    Disk(disk::Args),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Schedulers => schedulers::run(&mut std::io::stdout().lock()),
        Command::Disks(a) => disks::run(a),
        Command::Disk(a) => disk::run(a),
    }
}
