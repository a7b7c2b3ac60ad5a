//! Answers handed from one thread to another: the read-ahead thread (see
//! [`super`]) looks up the addresses a log will ask for before the writing
//! filter gets there and publishes what it found here; the writing
//! filter's memos take an answer from here instead of computing it. Each
//! side is the [`AnswerSupplier`] of its own symbolizer (see
//! [`crate::symbols::Memo`]); the modules' parsed DWARF is shared.
//!
//! Most of a first lookup's cost is per compilation unit (its line program,
//! its function list), and a side needing a unit the other is parsing
//! waits for it, so the two sides never work in the same stretch of a
//! module's addresses: each region (`1 << REGION` bytes) of a module
//! belongs to one side at a time, from when an address in it is first
//! needed. The read-ahead takes the regions it meets first, computes and
//! publishes in them, and skips the writer's; the writer waits for an
//! answer in a read-ahead region while the read-ahead has not gone past
//! the writer's line. Waiting makes the writer "hungry": while it is,
//! every other region the read-ahead meets (but the one the writer waits
//! in) becomes the writer's (and a new region the writer meets first is
//! its own), so at a stretch of new addresses, the start of a log
//! typically, both threads work on first lookups at once. Once the read-ahead is far in
//! front (more than half of its [`LEAD`](super::LEAD)), it has time to
//! spare and takes back the writer's regions it meets: the writer renders
//! too, and is then the slower of the two. So regions go back and forth
//! with the load, and the two threads stay busy. A unit whose code is
//! spread over several regions (Rust's codegen units) is parsed by the
//! side that needs it first. Once the read-ahead is past the writer's line
//! (or gone), an answer it did not publish will not come (its module was
//! not found locally, or the writer's memo has forgotten an answer it
//! took), and the writer computes it. Only code answers are handed over:
//! data answers are the writer's own (see [`Sharing::computes_data`]).
//!
//! An answer is handed over for the same question only: it is published
//! and taken under its module, address and [`CodeWant`]. Modules are
//! known here by a number each side asks for once
//! ([`AnswerSupplier::module`]): a build ID is copied, hashed and compared
//! once per module, not per address. Both sides ask with the same wants
//! (the read-ahead's filter is built from a clone of the writer's
//! options), so in practice every answer can be taken; the want in the key
//! keeps a differing caller from taking an answer to another question.

use rustc_hash::FxHashMap as HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::symbols::{AnswerSupplier, BuildId, CodeInfo, CodeWant, Miss};

/// Answers waiting to be taken, at most: the read-ahead stops publishing
/// (it does not wait) beyond this, so memory stays bounded whatever the log.
const MAX_WAITING: usize = 1 << 16;

/// Regions with an owner, at most (beyond, regions stay unowned: work may
/// then be done twice, never wrongly).
const MAX_REGIONS: usize = 1 << 16;

/// log2 of the size of a region of code addresses: many compilation units
/// of a typical binary. Parsed units are shared, so a unit split between
/// regions costs nothing twice; smaller regions measured no faster
/// (BENCHMARKS.md).
pub const REGION: u32 = 20;

/// Longest single wait for the read-ahead before looking again; a safety
/// net, as every change the writer waits for comes with a wake-up.
const WAIT_SLICE: Duration = Duration::from_millis(50);

/// What the read-ahead did for the writer.
#[derive(Clone, Copy, Debug)]
pub struct Stats {
    /// Answers the writer took.
    pub taken: u64,
    /// Milliseconds the writer spent waiting for them.
    pub waited_ms: u64,
    /// Regions the read-ahead took back from the writer.
    pub taken_back: u64,
}

/// Which kind an answer is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Ahead,
    Writer,
}

/// What a side does about an address it has no answer for (see
/// [`Sharing::begin`]).
pub enum Ticket {
    /// The read-ahead computed it.
    Have(Result<Arc<CodeInfo>, Miss>),
    /// Compute it; if `publish`, hand the answer over with
    /// [`Sharing::publish`].
    Compute { publish: bool },
    /// It is in the writer's region: the read-ahead moves on without it.
    Skip,
}

/// A line position on its own cache line: each side writes one of them on
/// every line with elements.
#[derive(Default)]
#[repr(align(128))]
struct Position(AtomicU64);

#[derive(Default)]
struct Tables {
    /// Published by the read-ahead, not yet taken by the writer, by
    /// module number, address and what was asked.
    answers: HashMap<(u64, u64, CodeWant), Result<Arc<CodeInfo>, Miss>>,
    /// Who computes in each region of each module.
    owners: HashMap<(u64, u64), Side>,
    /// The answer the writer is waiting for, if it is.
    awaited: Option<(u64, u64, CodeWant)>,
    /// The number of each module either side has asked about.
    modules: HashMap<BuildId, u64>,
}

/// The table between the two threads.
#[derive(Default)]
pub struct SharedAnswers {
    tables: Mutex<Tables>,
    published: Condvar,
    /// Line (counted over all inputs) the read-ahead is resolving.
    ahead: Position,
    /// Line the writer is resolving.
    writer: Position,
    /// The read-ahead stopped: nothing more will come.
    ahead_done: AtomicBool,
    /// The writer is waiting (the read-ahead then wakes it when it
    /// publishes the answer awaited, or moves past the writer's line).
    writer_waits: AtomicBool,
    /// The writer had to wait for its last answer from the read-ahead:
    /// every other region the read-ahead meets goes to the writer until it
    /// no longer does.
    writer_hungry: AtomicBool,
    /// The read-ahead is far in front of the writer (see
    /// [`SharedAnswers::set_far_ahead`]): it takes back the writer's regions
    /// it meets.
    far_ahead: AtomicBool,
    /// Regions met while the writer was hungry (every other one is given).
    given: AtomicU64,
    /// Answers taken by the writer, its time spent waiting, and regions the
    /// read-ahead took back (for `SYMFILTER_READ_AHEAD_STATS`).
    taken: AtomicU64,
    waited_us: AtomicU64,
    taken_back: AtomicU64,
}

/// Which side of a [`SharedAnswers`] a symbolizer is on.
pub enum Sharing {
    /// The read-ahead.
    Ahead(Arc<SharedAnswers>),
    /// The writing filter.
    Writer(Arc<SharedAnswers>),
}

impl Sharing {
    /// This side has no code answer for address `addr` of module number
    /// `module`, asked with `want`: what to do.
    pub fn begin(&self, module: u64, addr: u64, want: CodeWant) -> Ticket {
        let (shared, side) = match self {
            Sharing::Ahead(s) => (s, Side::Ahead),
            Sharing::Writer(s) => (s, Side::Writer),
        };
        let key = (module, addr, want);
        let region = (module, addr >> REGION);
        let Some(mut tables) = shared.lock() else {
            return Ticket::Compute { publish: false };
        };
        let mut waited = false;
        loop {
            if side == Side::Writer
                && let Some(answer) = tables.answers.remove(&key)
            {
                shared.taken.fetch_add(1, Ordering::Relaxed);
                if !waited {
                    shared.writer_hungry.store(false, Ordering::Relaxed);
                }
                return Ticket::Have(answer);
            }
            let owner = tables.owners.get(&region).copied();
            let passed = || shared.ahead_done.load(Ordering::Acquire) || shared.ahead_of_writer();
            match (side, owner) {
                (Side::Ahead, Some(Side::Writer)) if !shared.far_ahead.load(Ordering::Relaxed) => {
                    return Ticket::Skip;
                }
                (Side::Ahead, Some(Side::Writer)) => {
                    // Time to spare: the region is the read-ahead's again.
                    tables.owners.insert(region, Side::Ahead);
                    shared.taken_back.fetch_add(1, Ordering::Relaxed);
                    return Ticket::Compute { publish: true };
                }
                (Side::Ahead, None | Some(Side::Ahead))
                    if shared.writer_hungry.load(Ordering::Relaxed)
                        && (owner.is_some() || tables.owners.len() < MAX_REGIONS)
                        && tables
                            .awaited
                            .is_none_or(|(m, a, _)| (m, a >> REGION) != region)
                        && shared.given.fetch_add(1, Ordering::Relaxed) % 2 == 1 =>
                {
                    // The writer is waiting for answers: every other region
                    // met is its own to compute (but the one it waits in),
                    // so both threads work at once.
                    tables.owners.insert(region, Side::Writer);
                    return Ticket::Skip;
                }
                (Side::Ahead, _) => {
                    if owner.is_none() && tables.owners.len() < MAX_REGIONS {
                        tables.owners.insert(region, Side::Ahead);
                    }
                    return Ticket::Compute { publish: true };
                }
                (Side::Writer, Some(Side::Writer)) => return Ticket::Compute { publish: false },
                // The read-ahead went past without it: it will not come.
                (Side::Writer, _) if passed() => return Ticket::Compute { publish: false },
                (Side::Writer, None) => {
                    // The writer caught up: this region is its own now.
                    if tables.owners.len() < MAX_REGIONS {
                        tables.owners.insert(region, Side::Writer);
                    }
                    return Ticket::Compute { publish: false };
                }
                (Side::Writer, _) => {
                    // The read-ahead is on it (or about to be).
                    waited = true;
                    shared.writer_hungry.store(true, Ordering::Relaxed);
                    shared.writer_waits.store(true, Ordering::SeqCst);
                    // Against `at_line`: either the read-ahead sees the flag
                    // (and wakes this wait) or this sees its new line.
                    std::sync::atomic::fence(Ordering::SeqCst);
                    if passed() {
                        shared.writer_waits.store(false, Ordering::Release);
                        return Ticket::Compute { publish: false };
                    }
                    tables.awaited = Some(key);
                    let since = Instant::now();
                    let woken = shared.published.wait_timeout(tables, WAIT_SLICE);
                    let us = since.elapsed().as_micros() as u64;
                    shared.waited_us.fetch_add(us, Ordering::Relaxed);
                    shared.writer_waits.store(false, Ordering::Release);
                    match woken {
                        Ok((t, _)) => {
                            tables = t;
                            tables.awaited = None;
                        }
                        Err(_) => return Ticket::Compute { publish: false },
                    }
                }
            }
        }
    }

    /// Hand an answer the read-ahead computed (for `want`) to the writer.
    pub fn publish(
        &self,
        module: u64,
        addr: u64,
        want: CodeWant,
        answer: Result<Arc<CodeInfo>, Miss>,
    ) {
        let Sharing::Ahead(shared) = self else {
            return;
        };
        if let Some(mut tables) = shared.lock() {
            let key = (module, addr, want);
            if tables.answers.len() < MAX_WAITING {
                tables.answers.insert(key, answer);
            }
            // Under the lock, so a writer about to wait has said what for:
            // a wake-up is a system call and a switch of threads, not worth
            // making for another answer.
            if tables.awaited == Some(key) {
                shared.published.notify_all();
            }
        }
    }
}

/// This side's part in the hand-over, as its symbolizer's memos see it.
impl AnswerSupplier for Sharing {
    /// This side is now resolving `line` (counted over all inputs).
    fn at_line(&self, line: u64) {
        match self {
            Sharing::Ahead(shared) => {
                shared.ahead.0.store(line, Ordering::SeqCst);
                // See the writer's side in `begin`.
                std::sync::atomic::fence(Ordering::SeqCst);
                // The writer waits on its own line: only passing it can
                // end the wait.
                if shared.writer_waits.load(Ordering::SeqCst) && shared.ahead_of_writer() {
                    // Under the lock: the writer is either before its check
                    // of `ahead` (and sees the new line) or waiting.
                    let _tables = shared.lock();
                    shared.published.notify_all();
                }
            }
            Sharing::Writer(shared) => shared.writer.0.store(line, Ordering::Relaxed),
        }
    }

    /// Whether this side looks up data addresses. Data answers are the
    /// writer's own: the first of a module builds the global-variable index
    /// (human and JSON formats), which the writer is better off building
    /// while the read-ahead goes on with code than waiting for while the
    /// read-ahead builds it (BENCHMARKS.md); later ones are binary
    /// searches.
    fn computes_data(&self) -> bool {
        matches!(self, Sharing::Writer(_))
    }

    /// The number module `id` goes by on both sides.
    fn module(&self, id: &BuildId) -> u64 {
        let (Sharing::Ahead(shared) | Sharing::Writer(shared)) = self;
        let Some(mut tables) = shared.lock() else {
            return u64::MAX;
        };
        let next = tables.modules.len() as u64;
        *tables.modules.entry(id.clone()).or_insert(next)
    }

    /// The read-ahead's answer, or `compute`'s (published when this side
    /// is the read-ahead), or none (the read-ahead skips the writer's
    /// regions): see [`Sharing::begin`].
    fn code(
        &self,
        module: u64,
        addr: u64,
        want: CodeWant,
        compute: &dyn Fn() -> Result<Arc<CodeInfo>, Miss>,
    ) -> Option<Result<Arc<CodeInfo>, Miss>> {
        match self.begin(module, addr, want) {
            Ticket::Have(answer) => Some(answer),
            Ticket::Skip => None,
            Ticket::Compute { publish } => {
                let answer = compute();
                if publish {
                    self.publish(module, addr, want, answer.clone());
                }
                Some(answer)
            }
        }
    }
}

impl SharedAnswers {
    fn lock(&self) -> Option<MutexGuard<'_, Tables>> {
        // A poisoned lock means the other thread panicked; answers are then
        // simply not shared.
        self.tables.lock().ok()
    }

    /// Say whether the read-ahead is far in front of the writer (by the
    /// reader's count of input bytes): see the module's documentation.
    pub fn set_far_ahead(&self, far: bool) {
        if self.far_ahead.load(Ordering::Relaxed) != far {
            self.far_ahead.store(far, Ordering::Relaxed);
        }
    }

    /// Whether the read-ahead is past the line the writer is resolving.
    pub fn ahead_of_writer(&self) -> bool {
        self.ahead.0.load(Ordering::Acquire) > self.writer.0.load(Ordering::Relaxed)
    }

    /// The read-ahead has stopped (finished, or failed): the writer stops
    /// waiting for it.
    pub fn ahead_done(&self) {
        self.ahead_done.store(true, Ordering::Release);
        if let Some(_tables) = self.lock() {
            self.published.notify_all();
        }
    }

    /// What the read-ahead did for the writer.
    pub fn stats(&self) -> Stats {
        Stats {
            taken: self.taken.load(Ordering::Relaxed),
            waited_ms: self.waited_us.load(Ordering::Relaxed) / 1000,
            taken_back: self.taken_back.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn have(ticket: Ticket) -> Option<Result<Arc<CodeInfo>, Miss>> {
        match ticket {
            Ticket::Have(a) => Some(a),
            _ => None,
        }
    }

    const W: CodeWant = CodeWant {
        line0_columns: true,
        symbol_when_named: true,
    };

    fn sides() -> (Arc<SharedAnswers>, Sharing, Sharing) {
        let shared = Arc::new(SharedAnswers::default());
        let ahead = Sharing::Ahead(Arc::clone(&shared));
        let writer = Sharing::Writer(Arc::clone(&shared));
        (shared, ahead, writer)
    }

    #[test]
    fn an_answer_computed_ahead_is_taken_once() {
        let (_, ahead, writer) = sides();
        let id = ahead.module(&BuildId(vec![1, 2]));
        ahead.at_line(5);
        assert!(matches!(
            ahead.begin(id, 7, W),
            Ticket::Compute { publish: true }
        ));
        let answer = Ok(Arc::new(CodeInfo::default()));
        ahead.publish(id, 7, W, answer.clone());
        writer.at_line(2);
        // Asked with another want: not that answer (the read-ahead is past
        // line 2, so the writer computes its own).
        let other = CodeWant {
            line0_columns: false,
            ..W
        };
        assert!(matches!(
            writer.begin(id, 7, other),
            Ticket::Compute { publish: false }
        ));
        let got = have(writer.begin(id, 7, W)).unwrap().unwrap();
        assert!(Arc::ptr_eq(&got, answer.as_ref().unwrap()));
        // Taken: the read-ahead is past line 2 and will not bring it again.
        assert!(matches!(
            writer.begin(id, 7, W),
            Ticket::Compute { publish: false }
        ));
        // Another module's address, another kind: not the same answer.
        assert!(matches!(
            writer.begin(writer.module(&BuildId(vec![1])), 7, W),
            Ticket::Compute { .. }
        ));
    }

    #[test]
    fn both_sides_know_a_module_by_one_number() {
        let (_, ahead, writer) = sides();
        let a = ahead.module(&BuildId(vec![1, 2]));
        let b = writer.module(&BuildId(vec![3]));
        assert_ne!(a, b);
        assert_eq!(writer.module(&BuildId(vec![1, 2])), a);
        assert_eq!(ahead.module(&BuildId(vec![3])), b);
    }

    #[test]
    fn the_writer_waits_while_the_read_ahead_may_bring_the_answer() {
        let (shared, ahead, writer) = sides();
        let id = writer.module(&BuildId(vec![9]));
        ahead.at_line(3);
        writer.at_line(3);
        // The read-ahead owns the region of addresses 1 and 2.
        assert!(matches!(ahead.begin(id, 1, W), Ticket::Compute { .. }));
        let publisher = {
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                ahead.publish(id, 1, W, Err::<Arc<CodeInfo>, _>(Miss::NoInfo));
                // Moving on to a later line without publishing address 2
                // releases the writer waiting for it.
                std::thread::sleep(Duration::from_millis(20));
                ahead.at_line(4);
            })
        };
        assert_eq!(have(writer.begin(id, 1, W)), Some(Err(Miss::NoInfo)));
        assert!(matches!(
            writer.begin(id, 2, W),
            Ticket::Compute { publish: false }
        ));
        publisher.join().unwrap();
        assert!(shared.stats().waited_ms >= 30, "the writer waited for both");
        // Once the read-ahead is done, nothing is waited for.
        writer.at_line(10);
        shared.ahead_done();
        assert!(matches!(writer.begin(id, 3, W), Ticket::Compute { .. }));
    }

    #[test]
    fn a_read_ahead_far_in_front_takes_back_the_writers_regions() {
        let (shared, ahead, writer) = sides();
        let id = writer.module(&BuildId(vec![5]));
        writer.at_line(1);
        assert!(matches!(writer.begin(id, 0x10, W), Ticket::Compute { .. }));
        ahead.at_line(2);
        assert!(matches!(ahead.begin(id, 0x20, W), Ticket::Skip));
        shared.set_far_ahead(true);
        assert!(matches!(
            ahead.begin(id, 0x30, W),
            Ticket::Compute { publish: true }
        ));
        assert_eq!(shared.stats().taken_back, 1);
        // The region is the read-ahead's now, also once it is near again:
        // the writer waits for (here: takes) its answers.
        shared.set_far_ahead(false);
        assert!(matches!(
            ahead.begin(id, 0x40, W),
            Ticket::Compute { publish: true }
        ));
        ahead.publish(id, 0x40, W, Err(Miss::NoInfo));
        assert_eq!(have(writer.begin(id, 0x40, W)), Some(Err(Miss::NoInfo)));
    }

    #[test]
    fn a_hungry_writer_gets_every_other_region() {
        let (shared, ahead, writer) = sides();
        let id = writer.module(&BuildId(vec![4]));
        let region = |n: u64| n << REGION;
        // The writer meets a region first: its own, skipped by the
        // read-ahead from then on.
        writer.at_line(1);
        assert!(matches!(
            writer.begin(id, region(0), W),
            Ticket::Compute { .. }
        ));
        ahead.at_line(1);
        assert!(matches!(ahead.begin(id, region(0) + 8, W), Ticket::Skip));
        // Not hungry: new regions are the read-ahead's.
        assert!(matches!(
            ahead.begin(id, region(1), W),
            Ticket::Compute { .. }
        ));
        assert!(matches!(
            ahead.begin(id, region(2), W),
            Ticket::Compute { .. }
        ));
        // Hungry: every other new region goes to the writer.
        shared.writer_hungry.store(true, Ordering::Relaxed);
        let kinds: Vec<bool> = (3..7)
            .map(|n| matches!(ahead.begin(id, region(n), W), Ticket::Skip))
            .collect();
        assert_eq!(kinds, [false, true, false, true]);
        // Regions of the read-ahead's own too, but the one the writer
        // waits in.
        shared.lock().unwrap().awaited = Some((id, region(1) + 8, W));
        let kinds: Vec<bool> = [2, 1, 2, 1]
            .iter()
            .map(|&n| matches!(ahead.begin(id, region(n) + 16, W), Ticket::Skip))
            .collect();
        assert_eq!(kinds, [false, false, true, false]);
        // Data answers are the writer's, wherever they are.
        assert!(!ahead.computes_data());
        assert!(writer.computes_data());
    }
}
