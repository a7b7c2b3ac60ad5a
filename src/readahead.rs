//! Read-ahead: when the log is a regular file, a second thread runs the
//! same filter over the same bytes a little in front of the one that writes
//! the output, with a renderer that prints nothing ([`Filter::read_ahead`]).
//! It does the expensive part of first lookups (parsing units' functions
//! and line programs) while the writing thread renders earlier lines, and
//! hands each answer over through
//! [`SharedAnswers`](crate::symbols::SharedAnswers), which also decides
//! which thread looks up what (by address region, so that no unit is parsed
//! by both).
//!
//! Nothing the user sees depends on it: answers are the same whichever
//! thread computes them, and the writing filter computes any answer that
//! will not come. The read-ahead thread has its own sources (parsed
//! DWARF is not shared between threads), reads the files by position
//! (`pread`, so a shared standard input's offset is untouched), stays at
//! most [`LEAD`] bytes in front, and stops when the writing side is done.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::Duration;

use crate::filter::Filter;
use crate::symbols::SharedAnswers;

/// How far the read-ahead may run in front of the writing filter, in input
/// bytes: far enough to stay ahead through a stretch of new addresses,
/// near enough that what it hands over is taken soon.
pub const LEAD: u64 = 16 << 20;

/// Where the writing filter is, and whether it is done.
#[derive(Default)]
struct Progress {
    /// Input bytes the writing filter has read, over all its inputs.
    read: AtomicU64,
    stop: AtomicBool,
}

/// The writing side's handle: wrap its readers with [`counted`]; dropping
/// it stops the thread.
pub struct ReadAhead {
    progress: Arc<Progress>,
}

/// A reader that tells the read-ahead, if there is one, how far the writing
/// filter has read.
pub struct Counted<R> {
    inner: R,
    progress: Option<Arc<Progress>>,
}

/// `reader`, telling `ahead` (if any) how far the writing filter got.
pub fn counted<R: Read>(ahead: Option<&ReadAhead>, reader: R) -> Counted<R> {
    Counted {
        inner: reader,
        progress: ahead.map(|a| Arc::clone(&a.progress)),
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(progress) = &self.progress {
            progress.read.fetch_add(n as u64, Ordering::Relaxed);
        }
        Ok(n)
    }
}

/// An input for the read-ahead: its own handle on a regular file, read by
/// position from `start`.
pub struct ReadFrom {
    pub file: File,
    pub start: u64,
}

/// One input as the read-ahead thread reads it: by position, never more
/// than [`LEAD`] bytes in front of the writing filter.
struct Behind {
    file: File,
    start: u64,
    at: u64,
    /// Bytes read from earlier inputs.
    before: u64,
    progress: Arc<Progress>,
    shared: Arc<SharedAnswers>,
}

impl Read for Behind {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.progress.stop.load(Ordering::Relaxed) {
                return Ok(0);
            }
            // Never held back while not past the writer's line: the writer
            // may be waiting for an answer from here.
            let ahead = self.before + self.at;
            if ahead <= self.progress.read.load(Ordering::Relaxed) + LEAD
                || !self.shared.ahead_of_writer()
            {
                break;
            }
            thread::sleep(Duration::from_millis(1));
        }
        let n = self.file.read_at(buf, self.start + self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

impl ReadAhead {
    /// Start `filter` (made with [`Filter::read_ahead`]) over `inputs` in
    /// order, on its own thread. The files must be regular files holding
    /// what the writing filter will read, in the same order.
    pub fn start(
        mut filter: Filter,
        inputs: Vec<ReadFrom>,
        answers: Arc<SharedAnswers>,
    ) -> io::Result<ReadAhead> {
        let progress = Arc::new(Progress::default());
        let shared = Arc::clone(&progress);
        let on_failure = Arc::clone(&answers);
        let spawned = thread::Builder::new()
            .name("read-ahead".into())
            .spawn(move || {
                // However the thread ends (a panic included), the writer
                // stops waiting for it.
                let _done = Done(Arc::clone(&answers));
                let mut sink = io::sink();
                let mut before = 0;
                for ReadFrom { file, start } in inputs {
                    let mut reader = Behind {
                        file,
                        start,
                        at: 0,
                        before,
                        progress: Arc::clone(&shared),
                        shared: Arc::clone(&answers),
                    };
                    // Errors are the writing filter's to report.
                    let _ = filter.run("<read-ahead>", &mut reader, &mut sink);
                    before += reader.at;
                    if shared.stop.load(Ordering::Relaxed) {
                        break;
                    }
                }
                // Like the writing side, skip freeing what was parsed.
                std::mem::forget(filter);
            });
        if let Err(e) = spawned {
            on_failure.ahead_done();
            return Err(e);
        }
        Ok(ReadAhead { progress })
    }
}

struct Done(Arc<SharedAnswers>);

impl Drop for Done {
    fn drop(&mut self) {
        self.0.ahead_done();
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        // Not joined: the thread may be inside one long lookup, and nothing
        // it holds needs an orderly end.
        self.progress.stop.store(true, Ordering::Relaxed);
    }
}
