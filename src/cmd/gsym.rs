use std::process::ExitCode;

use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum GsymCommand {
    /// Write a GSYM file from an ELF/DWARF file or a Breakpad .sym file.
    Create,
}

pub fn run(_cmd: GsymCommand) -> anyhow::Result<ExitCode> {
    anyhow::bail!("gsym is not built yet")
}
