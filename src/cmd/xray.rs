use std::process::ExitCode;

use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum XrayCommand {
    /// Per-function call counts and times.
    Account,
}

pub fn run(_cmd: XrayCommand) -> anyhow::Result<ExitCode> {
    anyhow::bail!("xray is not built yet")
}
