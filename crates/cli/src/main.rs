//! The `antsched` command. Argument parsing, tables, JSON and plots; the logic lives in the
//! library crates.

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
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match cli.command {
        Command::Schedulers => schedulers::run(&mut out),
    }
}
