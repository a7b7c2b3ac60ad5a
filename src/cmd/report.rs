//! Where the library's reports go on the command line: standard error,
//! one line each after the program's name; `-q` keeps all but the
//! `--explain` notes off it, and a download's progress is drawn on one
//! line, redrawn in place, when standard error is a terminal.

use std::io::{IsTerminal, Write};
use std::sync::Arc;

use symfilter::report::{Progress, Report, Reporter};

pub struct Stderr {
    quiet: bool,
    terminal: bool,
}

impl Stderr {
    pub fn new(quiet: bool) -> Arc<Stderr> {
        Arc::new(Stderr {
            quiet,
            terminal: std::io::stderr().is_terminal(),
        })
    }
}

impl Reporter for Stderr {
    fn report(&self, report: &Report<'_>) {
        let mut err = std::io::stderr().lock();
        let _ = match report {
            Report::Note(_) => writeln!(err, "symfilter: {report}"),
            _ if self.quiet => Ok(()),
            Report::Diagnostic { .. } | Report::Warning(_) => writeln!(err, "symfilter: {report}"),
            Report::Progress(Progress::Update { .. }) => {
                write!(err, "\r\x1b[Ksymfilter: {report}").and_then(|()| err.flush())
            }
            Report::Progress(Progress::Done) => write!(err, "\r\x1b[K").and_then(|()| err.flush()),
        };
    }

    fn wants_progress(&self) -> bool {
        self.terminal && !self.quiet
    }
}
