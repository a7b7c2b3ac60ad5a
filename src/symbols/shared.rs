//! Answers handed from one thread to another: a read-ahead thread (see
//! [`crate::readahead`]) looks up the addresses a log will ask for before
//! the writing filter gets there and publishes what it found here; the
//! writing filter's [`Memo`](super::Memo) takes an answer from here instead
//! of computing it. Each side keeps its own sources (parsed DWARF is not
//! shared between threads), so an answer is moved, not computed twice.
//!
//! Both sides run the same filter over the same lines, so the writing side
//! knows when an answer is coming: while the read-ahead has not gone past
//! the writer's line, a missing answer is being (or about to be) computed
//! there, and the writer waits for it rather than racing to compute it too.
//! Once the read-ahead is past the line (or gone), a missing answer will
//! not come (its module was not found locally, say) and the writer computes
//! it itself.

use rustc_hash::FxHashMap as HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::{BuildId, CodeInfo, DataInfo, Miss};

/// Answers waiting to be taken, at most: the read-ahead stops publishing
/// (it does not wait) beyond this, so memory stays bounded whatever the log.
const MAX_WAITING: usize = 1 << 16;

/// Longest single wait for the read-ahead before looking again; a safety
/// net, as every change the writer waits for comes with a wake-up.
const WAIT_SLICE: Duration = Duration::from_millis(50);

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Code,
    Data,
}

enum Answer {
    Code(Result<Arc<CodeInfo>, Miss>),
    Data(Result<Arc<DataInfo>, Miss>),
}

/// A line position on its own cache line: each side writes one of them on
/// every line with elements.
#[derive(Default)]
#[repr(align(128))]
struct Position(AtomicU64);

type Table = HashMap<(BuildId, u64, Kind), Answer>;

/// The table between the two threads.
#[derive(Default)]
pub struct SharedAnswers {
    table: Mutex<Table>,
    published: Condvar,
    /// Line (counted over all inputs) the read-ahead is resolving.
    ahead: Position,
    /// Line the writer is resolving.
    writer: Position,
    /// The read-ahead stopped: nothing more will come.
    ahead_done: AtomicBool,
    /// The writer is waiting (the read-ahead then wakes it when it moves on
    /// to a later line).
    writer_waits: AtomicBool,
    /// Answers taken by the writer, and its time spent waiting (for
    /// `SYMFILTER_READ_AHEAD_STATS`).
    taken: AtomicU64,
    waited_us: AtomicU64,
}

/// Which side of a [`SharedAnswers`] a symbolizer is on.
#[derive(Clone)]
pub enum Sharing {
    /// Puts every answer it computes into the table.
    Publish(Arc<SharedAnswers>),
    /// Takes answers from the table before computing one.
    Take(Arc<SharedAnswers>),
}

impl Sharing {
    /// This side is now resolving `line` (counted over all inputs).
    pub fn at_line(&self, line: u64) {
        match self {
            Sharing::Publish(shared) => {
                shared.ahead.0.store(line, Ordering::Release);
                if shared.writer_waits.load(Ordering::Acquire) {
                    // Under the lock: the writer is either before its check
                    // of `ahead` (and sees the new line) or waiting.
                    let _table = shared.lock();
                    shared.published.notify_all();
                }
            }
            Sharing::Take(shared) => shared.writer.0.store(line, Ordering::Relaxed),
        }
    }
}

impl SharedAnswers {
    fn lock(&self) -> Option<MutexGuard<'_, Table>> {
        // A poisoned lock means the other thread panicked; answers are then
        // simply not shared.
        self.table.lock().ok()
    }

    fn put(&self, id: &BuildId, addr: u64, kind: Kind, answer: Answer) {
        if let Some(mut table) = self.lock() {
            if table.len() < MAX_WAITING {
                table.insert((id.clone(), addr, kind), answer);
            }
            self.published.notify_all();
        }
    }

    /// The answer for `(id, addr)`, waiting while the read-ahead may still
    /// bring it; `None` when it will not come.
    fn take(&self, id: &BuildId, addr: u64, kind: Kind) -> Option<Answer> {
        let key = (id.clone(), addr, kind);
        let mut table = self.lock()?;
        loop {
            if let Some(answer) = table.remove(&key) {
                self.taken.fetch_add(1, Ordering::Relaxed);
                return Some(answer);
            }
            if self.ahead_done.load(Ordering::Acquire) || self.ahead_of_writer() {
                return None;
            }
            self.writer_waits.store(true, Ordering::Release);
            let since = Instant::now();
            let waited = self.published.wait_timeout(table, WAIT_SLICE);
            let us = since.elapsed().as_micros();
            self.waited_us.fetch_add(us as u64, Ordering::Relaxed);
            self.writer_waits.store(false, Ordering::Release);
            table = waited.ok()?.0;
        }
    }

    pub fn put_code(&self, id: &BuildId, addr: u64, answer: &Result<Arc<CodeInfo>, Miss>) {
        self.put(id, addr, Kind::Code, Answer::Code(answer.clone()));
    }

    pub fn take_code(&self, id: &BuildId, addr: u64) -> Option<Result<Arc<CodeInfo>, Miss>> {
        match self.take(id, addr, Kind::Code)? {
            Answer::Code(a) => Some(a),
            Answer::Data(_) => None,
        }
    }

    pub fn put_data(&self, id: &BuildId, addr: u64, answer: &Result<Arc<DataInfo>, Miss>) {
        self.put(id, addr, Kind::Data, Answer::Data(answer.clone()));
    }

    pub fn take_data(&self, id: &BuildId, addr: u64) -> Option<Result<Arc<DataInfo>, Miss>> {
        match self.take(id, addr, Kind::Data)? {
            Answer::Data(a) => Some(a),
            Answer::Code(_) => None,
        }
    }

    /// The read-ahead has stopped (finished, or failed): the writer stops
    /// waiting for it.
    pub fn ahead_done(&self) {
        self.ahead_done.store(true, Ordering::Release);
        if let Some(_table) = self.lock() {
            self.published.notify_all();
        }
    }

    /// Whether the read-ahead is past the line the writer is resolving.
    pub fn ahead_of_writer(&self) -> bool {
        self.ahead.0.load(Ordering::Acquire) > self.writer.0.load(Ordering::Relaxed)
    }

    /// What the read-ahead did for the writer: answers taken, and
    /// milliseconds spent waiting for them.
    pub fn stats(&self) -> (u64, u64) {
        (
            self.taken.load(Ordering::Relaxed),
            self.waited_us.load(Ordering::Relaxed) / 1000,
        )
    }

    /// Answers published and not yet taken.
    pub fn waiting(&self) -> usize {
        self.lock().map_or(0, |t| t.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_taken_once_and_the_table_is_bounded() {
        let shared = SharedAnswers::default();
        // The read-ahead is past the writer's line: nothing is waited for.
        shared.ahead.0.store(5, Ordering::Relaxed);
        let id = BuildId(vec![1, 2]);
        let answer = Ok(Arc::new(CodeInfo::default()));
        shared.put_code(&id, 7, &answer);
        assert_eq!(shared.take_code(&BuildId(vec![1, 3]), 7), None);
        assert_eq!(shared.take_data(&id, 7), None);
        let got = shared.take_code(&id, 7).unwrap().unwrap();
        assert!(Arc::ptr_eq(&got, answer.as_ref().unwrap()));
        assert_eq!(shared.take_code(&id, 7), None);
        for a in 0..(MAX_WAITING as u64 + 5) {
            shared.put_data(&id, a, &Err(Miss::NoInfo));
        }
        assert_eq!(shared.waiting(), MAX_WAITING);
    }

    #[test]
    fn the_writer_waits_for_an_answer_the_read_ahead_is_computing() {
        let shared = Arc::new(SharedAnswers::default());
        let (ahead, writer) = (
            Sharing::Publish(Arc::clone(&shared)),
            Sharing::Take(Arc::clone(&shared)),
        );
        ahead.at_line(3);
        writer.at_line(3);
        let id = BuildId(vec![9]);
        let publisher = {
            let shared = Arc::clone(&shared);
            let id = id.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                shared.put_data(&id, 1, &Err(Miss::NoInfo));
                // Moving on to a later line without publishing address 2
                // releases the writer waiting for it.
                std::thread::sleep(Duration::from_millis(20));
                ahead.at_line(4);
            })
        };
        assert_eq!(shared.take_data(&id, 1), Some(Err(Miss::NoInfo)));
        assert_eq!(shared.take_data(&id, 2), None);
        publisher.join().unwrap();
        // Once the read-ahead is done, nothing is waited for.
        writer.at_line(10);
        shared.ahead_done();
        assert_eq!(shared.take_code(&id, 3), None);
    }
}
