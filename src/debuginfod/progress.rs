//! A one-line progress display on stderr for downloads that take more than
//! a moment (only when stderr is a terminal). A small thread redraws it, so
//! it also shows while a slow server has not answered yet; it is erased
//! when the download ends, before any other output.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Nothing is shown for downloads shorter than this.
const DELAY: Duration = Duration::from_millis(750);
const EVERY: Duration = Duration::from_millis(250);
const UNKNOWN: u64 = u64::MAX;

/// Run `work`, which reports `(received, total)` through the function it
/// is given; show progress meanwhile when `enabled`.
pub fn show<T>(
    enabled: bool,
    hex: &str,
    url: &str,
    work: impl FnOnce(&mut dyn FnMut(u64, Option<u64>)) -> T,
) -> T {
    // Downloads run several at once (see `symbols::prefetch`): one line
    // is shown, for the first of those under way.
    if !enabled || PAINTING.swap(true, Ordering::SeqCst) {
        return work(&mut |_, _| {});
    }
    let out = paint(hex, url, work);
    PAINTING.store(false, Ordering::SeqCst);
    out
}

/// Whether a progress line is being drawn.
static PAINTING: AtomicBool = AtomicBool::new(false);

fn paint<T>(hex: &str, url: &str, work: impl FnOnce(&mut dyn FnMut(u64, Option<u64>)) -> T) -> T {
    let got = AtomicU64::new(0);
    let total = AtomicU64::new(UNKNOWN);
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let painter = scope.spawn(|| {
            let start = Instant::now();
            let mut shown = false;
            loop {
                std::thread::park_timeout(EVERY);
                if done.load(Ordering::SeqCst) {
                    break;
                }
                if start.elapsed() < DELAY {
                    continue;
                }
                let t = total.load(Ordering::Relaxed);
                let line = text(
                    hex,
                    url,
                    got.load(Ordering::Relaxed),
                    (t != UNKNOWN).then_some(t),
                    start.elapsed(),
                );
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r\x1b[K{line}");
                let _ = err.flush();
                shown = true;
            }
            if shown {
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r\x1b[K");
                let _ = err.flush();
            }
        });
        let out = work(&mut |g, t| {
            got.store(g, Ordering::Relaxed);
            total.store(t.unwrap_or(UNKNOWN), Ordering::Relaxed);
        });
        done.store(true, Ordering::SeqCst);
        painter.thread().unpark();
        let _ = painter.join();
        out
    })
}

/// The progress line (without the leading carriage return).
pub fn text(hex: &str, url: &str, got: u64, total: Option<u64>, elapsed: Duration) -> String {
    let host = url
        .split_once("://")
        .map_or(url, |(_, rest)| rest.split('/').next().unwrap_or(rest));
    let amount = match total {
        Some(t) => format!("{} of {}", size(got), size(t)),
        None if got == 0 => "waiting for the server".to_owned(),
        None => size(got),
    };
    format!(
        "symfilter: debuginfod: {hex} from {host}: {amount} ({} s)",
        elapsed.as_secs()
    )
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

    #[test]
    fn progress_line() {
        let d = Duration::from_millis(2500);
        assert_eq!(
            text(
                "ab12",
                "https://debuginfod.example.org:8002/buildid/ab12/debuginfo",
                3 << 20,
                Some(10 << 20),
                d
            ),
            "symfilter: debuginfod: ab12 from debuginfod.example.org:8002: 3.0 MiB of 10.0 MiB (2 s)"
        );
        assert_eq!(
            text("ab12", "http://h/buildid/ab12/debuginfo", 0, None, d),
            "symfilter: debuginfod: ab12 from h: waiting for the server (2 s)"
        );
        assert_eq!(
            text("ab12", "http://h/x", 1500, None, d),
            "symfilter: debuginfod: ab12 from h: 2 KiB (2 s)"
        );
    }

    #[test]
    fn disabled_runs_the_work_and_enabled_returns_its_result() {
        assert_eq!(
            show(false, "ab", "http://h", |r| {
                r(1, None);
                7
            }),
            7
        );
        assert_eq!(
            show(true, "ab", "http://h", |r| {
                r(1, Some(2));
                8
            }),
            8
        );
    }
}
