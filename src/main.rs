//! The symfilter binary: the command line ([`cmd`]: clap, anyhow, exit
//! codes) over the library.

mod cmd;

use std::process::ExitCode;

fn main() -> ExitCode {
    cmd::main()
}
