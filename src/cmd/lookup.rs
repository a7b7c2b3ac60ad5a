use std::process::ExitCode;

use clap::Args;

use super::sources::SourceArgs;

#[derive(Args, Debug)]
pub struct LookupArgs {
    #[command(flatten)]
    pub sources: SourceArgs,
}

pub fn run(_args: LookupArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("lookup is not built yet")
}
