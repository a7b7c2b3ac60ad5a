use std::process::ExitCode;

fn main() -> ExitCode {
    symfilter::cmd::main()
}
