//! The command line: the filter (default) and the `lookup`, `gsym` and
//! `xray` subcommands. Everything here is an edge: `anyhow` errors, exit codes.

pub mod filter;
pub mod gsym;
pub mod lookup;
pub mod report;
pub mod sources;
pub mod xray;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use symfilter::base::heap;

/// Symbolize LLVM Symbolizer Markup in logs.
///
/// Reads FILEs (or standard input), replaces markup elements such as
/// {{{bt:0:0x7f..:ra}}} with function names and source locations found by
/// ELF build ID, and writes everything else through unchanged.
///
/// Example: crashing-program 2>&1 | symfilter --build-id-dir ~/debug
#[derive(Parser, Debug)]
#[command(name = "symfilter", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub filter: filter::FilterArgs,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Look up module-relative addresses in one module, one line per frame.
    Lookup(lookup::LookupArgs),
    /// Work with GSYM files.
    #[command(subcommand)]
    Gsym(gsym::GsymCommand),
    /// Decode and report LLVM XRay flight-data-recorder traces.
    #[command(subcommand)]
    Xray(xray::XrayCommand),
}

pub fn main() -> ExitCode {
    // Before any thread starts (see `base::heap`).
    heap::readable_heaps();
    let cli = Cli::parse();
    let result = match cli.command {
        None => filter::run(cli.filter),
        Some(Command::Lookup(args)) => lookup::run(args),
        Some(Command::Gsym(cmd)) => gsym::run(cmd),
        Some(Command::Xray(cmd)) => xray::run(cmd),
    };
    // Files truncated under their mapping that no diagnostic named yet.
    for path in symfilter::base::mapped::take_faults() {
        eprintln!(
            "symfilter: {}",
            symfilter::base::mapped::fault_message(&path)
        );
    }
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("symfilter: {err:#}");
            ExitCode::from(2)
        }
    }
}
