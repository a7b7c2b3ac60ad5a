//! Progress reports for downloads that take more than a moment (only when
//! the reporter wants them: the command line draws them on a terminal). A
//! small thread reports at intervals, so progress also shows while a slow
//! server has not answered yet; [`Progress::Done`] follows the last update
//! when the download ends.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::report::{Progress, Report, Reporter};

/// Nothing is shown for downloads shorter than this.
const DELAY: Duration = Duration::from_millis(750);
const EVERY: Duration = Duration::from_millis(250);
const UNKNOWN: u64 = u64::MAX;

/// Run `work`, which reports `(received, total)` through the function it
/// is given; report progress meanwhile when `reporter` wants it.
pub fn show<T>(
    reporter: &dyn Reporter,
    hex: &str,
    url: &str,
    work: impl FnOnce(&mut dyn FnMut(u64, Option<u64>)) -> T,
) -> T {
    // Downloads run several at once (see `symbols::prefetch`): one is
    // reported, the first of those under way.
    if !reporter.wants_progress() || WATCHED.swap(true, Ordering::SeqCst) {
        return work(&mut |_, _| {});
    }
    let out = watch(reporter, hex, url, work);
    WATCHED.store(false, Ordering::SeqCst);
    out
}

/// Whether a download's progress is being reported.
static WATCHED: AtomicBool = AtomicBool::new(false);

fn watch<T>(
    reporter: &dyn Reporter,
    hex: &str,
    url: &str,
    work: impl FnOnce(&mut dyn FnMut(u64, Option<u64>)) -> T,
) -> T {
    let got = AtomicU64::new(0);
    let total = AtomicU64::new(UNKNOWN);
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let watcher = scope.spawn(|| {
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
                reporter.report(&Report::Progress(Progress::Update {
                    build_id: hex,
                    url,
                    received: got.load(Ordering::Relaxed),
                    total: (t != UNKNOWN).then_some(t),
                    elapsed: start.elapsed(),
                }));
                shown = true;
            }
            if shown {
                reporter.report(&Report::Progress(Progress::Done));
            }
        });
        let out = work(&mut |g, t| {
            got.store(g, Ordering::Relaxed);
            total.store(t.unwrap_or(UNKNOWN), Ordering::Relaxed);
        });
        done.store(true, Ordering::SeqCst);
        watcher.thread().unpark();
        let _ = watcher.join();
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Silent;

    struct Watching;

    impl Reporter for Watching {
        fn report(&self, _: &Report<'_>) {}
        fn wants_progress(&self) -> bool {
            true
        }
    }

    #[test]
    fn unwatched_runs_the_work_and_watched_returns_its_result() {
        assert_eq!(
            show(&Silent, "ab", "http://h", |r| {
                r(1, None);
                7
            }),
            7
        );
        assert_eq!(
            show(&Watching, "ab", "http://h", |r| {
                r(1, Some(2));
                8
            }),
            8
        );
    }
}
