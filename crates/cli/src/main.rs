//! The `antsched` command. Argument parsing, tables, JSON and plots; the logic lives in the
//! library crates.

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
enum Command {}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {}
}
