//! What the library tells its user besides its output: diagnostics about
//! the input, warnings about the sources, `--explain` notes and download
//! progress, as typed [`Report`]s given to one [`Reporter`].
//!
//! The library never writes to the terminal itself: the command line
//! implements [`Reporter`] (standard error, `-q`, whether a progress line
//! can be drawn); tests collect reports; on two threads they travel with
//! the output, to be given in their place among it (see
//! [`crate::pipeline`]). Each report's text is its [`Display`](fmt::Display) form,
//! with control characters from logs, debug info and servers shown escaped
//! (see [`crate::escape`]).

use std::fmt;
use std::time::Duration;

use crate::escape::controls;

/// One thing to tell the user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report<'a> {
    /// A problem at a place in the input (`input` is a path or `<stdin>`,
    /// `column` counts bytes from 1).
    Diagnostic {
        input: &'a str,
        line: u64,
        column: usize,
        message: &'a str,
    },
    /// A problem not about one place in the input (a server that failed, a
    /// setting that was ignored).
    Warning(&'a str),
    /// Something asked for (`--explain`): said even when diagnostics and
    /// warnings are not.
    Note(&'a str),
    /// A download under way.
    Progress(Progress<'a>),
}

/// Where a slow download stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress<'a> {
    /// `received` bytes of `total` (when announced) after `elapsed`.
    Update {
        /// The build ID asked for, in hex.
        build_id: &'a str,
        url: &'a str,
        received: u64,
        total: Option<u64>,
        elapsed: Duration,
    },
    /// The download reported by the last update ended.
    Done,
}

/// Where reports go. Shared by threads (downloads run in the background).
pub trait Reporter: Send + Sync {
    fn report(&self, report: &Report<'_>);

    /// Whether [`Progress`] is wanted (a terminal can show it): when not,
    /// downloads are not watched for it.
    fn wants_progress(&self) -> bool {
        false
    }
}

/// A reporter that drops everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Reporter for Silent {
    fn report(&self, _: &Report<'_>) {}
}

impl fmt::Display for Report<'_> {
    /// The report as one line of text, without the program's name (a
    /// progress report without its redrawing; [`Progress::Done`] is empty).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Report::Diagnostic {
                input,
                line,
                column,
                message,
            } => write!(
                f,
                "{}:{line}:{column}: {}",
                controls(input),
                controls(message)
            ),
            Report::Warning(message) | Report::Note(message) => f.write_str(&controls(message)),
            Report::Progress(p) => p.fmt(f),
        }
    }
}

impl fmt::Display for Progress<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Progress::Update {
            build_id,
            url,
            received,
            total,
            elapsed,
        } = *self
        else {
            return Ok(());
        };
        let host = url
            .split_once("://")
            .map_or(url, |(_, rest)| rest.split('/').next().unwrap_or(rest));
        let amount = match total {
            Some(t) => format!("{} of {}", size(received), size(t)),
            None if received == 0 => "waiting for the server".to_owned(),
            None => size(received),
        };
        write!(
            f,
            "debuginfod: {} from {}: {amount} ({} s)",
            controls(build_id),
            controls(host),
            elapsed.as_secs()
        )
    }
}

fn size(n: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    if n >= MIB {
        format!("{}.{} MiB", n / MIB, (n % MIB) * 10 / MIB)
    } else {
        format!("{} KiB", n.div_ceil(KIB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(url: &str, received: u64, total: Option<u64>) -> String {
        Report::Progress(Progress::Update {
            build_id: "ab12",
            url,
            received,
            total,
            elapsed: Duration::from_millis(2500),
        })
        .to_string()
    }

    #[test]
    fn progress_line() {
        assert_eq!(
            update(
                "https://debuginfod.example.org:8002/buildid/ab12/debuginfo",
                3 << 20,
                Some(10 << 20),
            ),
            "debuginfod: ab12 from debuginfod.example.org:8002: 3.0 MiB of 10.0 MiB (2 s)"
        );
        assert_eq!(
            update("http://h/buildid/ab12/debuginfo", 0, None),
            "debuginfod: ab12 from h: waiting for the server (2 s)"
        );
        assert_eq!(
            update("http://h/x", 1500, None),
            "debuginfod: ab12 from h: 2 KiB (2 s)"
        );
        assert_eq!(Report::Progress(Progress::Done).to_string(), "");
    }

    #[test]
    fn text_from_logs_and_servers_is_escaped() {
        let d = Report::Diagnostic {
            input: "a\x1b.log",
            line: 3,
            column: 7,
            message: "no mmap covers \u{9b}2J",
        };
        assert_eq!(d.to_string(), "a\\u{1b}.log:3:7: no mmap covers \\u{9b}2J");
        assert_eq!(
            Report::Warning("debuginfod: http://h: 500 \x07").to_string(),
            "debuginfod: http://h: 500 \\u{7}"
        );
        assert_eq!(Report::Note("explain: x").to_string(), "explain: x");
    }
}
