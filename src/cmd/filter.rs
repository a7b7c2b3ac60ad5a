use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::sources::SourceArgs;

#[derive(Args, Debug)]
pub struct FilterArgs {
    /// Log files to filter, in order; standard input when none.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub sources: SourceArgs,
}

pub fn run(_args: FilterArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("the filter is not built yet")
}
