//! Answers handed from one thread to another: the read-ahead thread (see
//! [`super`]) looks up the addresses a log will ask for before the writing
//! filter gets there and hands over what it found here; the writing
//! filter's memos take an answer from here instead of computing it. Each
//! side is the [`AnswerSupplier`] of its own symbolizer (see
//! [`crate::symbols::Memo`]); the modules' parsed DWARF is shared.
//!
//! Answers travel in the order they were computed, in batches: both sides
//! run the same filter over the same lines, so the writer asks for the
//! answers of a line in the order the read-ahead computed them, and finds
//! the one it wants at the front of what it was handed. The read-ahead
//! gathers [`BATCH`] answers before handing them over under the shared
//! lock (at once when the writer waits), and the writer moves everything
//! handed over to its own queue in one go: a lock per batch on each side,
//! not a shared table probed, filled and emptied by both threads for every
//! answer. An answer of a line the writer has gone past is dropped (the
//! writer remembered it, or computed it).
//!
//! The read-ahead hands over what its memo recalls as well as what it
//! computes, and the writer takes a handed answer before it looks in its
//! own memo ([`AnswerSupplier::ready`]), which then keeps only the answers
//! it got otherwise (it computed them, or waited for them). On a log of
//! scattered addresses the writer's memo would otherwise be probed in
//! vain and filled for every new answer, and recall it later cold; a
//! handed answer comes prefetched (see [`prefetch_next`]).
//!
//! Most of a first lookup's cost is per compilation unit (its line program,
//! its function list), and a side needing a unit the other is parsing
//! waits for it, so the two sides never work in the same stretch of a
//! module's addresses: each region (`1 << REGION` bytes) of a module
//! belongs to one side at a time, from when an address in it is first
//! needed. The read-ahead takes the regions it meets first, computes and
//! hands over in them, and skips the writer's; the writer waits for an
//! answer in a read-ahead region while the read-ahead has not gone past
//! the writer's line. Waiting makes the writer "hungry": while it is,
//! every other region the read-ahead meets (but the one the writer waits
//! in) becomes the writer's (and a new region the writer meets first is
//! its own), so at a stretch of new addresses, the start of a log
//! typically, both threads work on first lookups at once. Once the
//! read-ahead is far in front (more than half of its
//! [`LEAD`](super::LEAD)), it has time to spare and takes back the
//! writer's regions it meets: the writer renders too, and is then the
//! slower of the two. So regions go back and forth with the load, and the
//! two threads stay busy. A unit whose code is spread over several regions
//! (Rust's codegen units) is parsed by the side that needs it first. Once
//! the read-ahead is past the writer's line (or gone), an answer it did
//! not hand over will not come (its module was not found locally, or the
//! writer's memo has forgotten an answer it took), and the writer computes
//! it. Only code answers are handed over: data answers are the writer's
//! own (see [`Sharing::computes_data`]).
//!
//! Where it can, an answer is freed on the thread that made it: with
//! glibc's malloc, a free of another thread's block waits for that
//! thread's arena lock (see [`AnswerSupplier::retire`]). When the
//! read-ahead's memo forgets answers the writer still holds (handed over,
//! not yet written), the read-ahead keeps them until the writer has let go
//! ([`SharedAnswers::published`]) rather than leave the last reference, and
//! the free, to the writer. The writer's forgotten memo tables go to the
//! read-ahead to drop: beside the writer's own answers, they hold the ones
//! it waited for, which the read-ahead made.
//!
//! An answer is handed over for the same question only: it is taken under
//! its module, address and [`CodeWant`]. Modules are known here by a
//! number each side asks for once ([`AnswerSupplier::module`]): a build ID
//! is copied, hashed and compared once per module, not per address. Both
//! sides ask with the same wants (the read-ahead's filter is built from a
//! clone of the writer's options), so in practice every answer can be
//! taken; the want in the key keeps a differing caller from taking an
//! answer to another question.

use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::symbols::{
    AnswerSupplier, BuildId, CodeInfo, CodeTable, CodeWant, Forgotten, Kept, Miss,
};

/// Answers handed over and not yet taken, at most: beyond, the read-ahead
/// drops what it computed (it does not wait), so memory stays bounded
/// whatever the log.
const MAX_WAITING: usize = 1 << 16;

/// Answers the read-ahead gathers before handing them over (it hands them
/// over at once when the writer waits).
const BATCH: usize = 64;

/// Answers the read-ahead publishes between two sweeps of the forgotten
/// answers it keeps for the writer (see [`SharedAnswers::published`]), at
/// least: a sweep reads each one's reference count, cold by then, so
/// there are at least as many publishes between two sweeps as answers
/// kept (some may be kept long, by the writer's printer or memo).
const SWEEP_EVERY: usize = 4096;

/// Forgotten memo tables waiting for the read-ahead to drop them, at most:
/// beyond, the writer drops them itself (the read-ahead looks at each read
/// and every millisecond it waits, so it is inside one long lookup).
const MAX_RETIRED: usize = 2;

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
    /// Tables of answers the writer's memos forgot that the read-ahead
    /// freed.
    pub freed_tables: u64,
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

/// What an answer answers: module number, address, and what was asked.
type Key = (u64, u64, CodeWant);

/// An answer the read-ahead computed on `line`.
struct Entry {
    line: u64,
    key: Key,
    /// Two words, where a [`Miss`] inline would make every entry as large
    /// as its largest variant.
    answer: Result<Arc<CodeInfo>, Box<Miss>>,
}

/// A value on cache lines of its own: each side writes its own often.
#[derive(Default)]
#[repr(align(128))]
struct Own<T>(T);

#[derive(Default)]
struct Tables {
    /// Handed over by the read-ahead, in the order computed, not yet moved
    /// to the writer's queue.
    handed: Vec<Entry>,
    /// Who computes in each region of each module.
    owners: HashMap<(u64, u64), Side>,
    /// The answer the writer is waiting for, if it is.
    awaited: Option<Key>,
    /// The number of each module either side has asked about.
    modules: HashMap<BuildId, u64>,
}

/// The read-ahead's answers not yet handed over, and the line it is on.
#[derive(Default)]
struct Pending {
    entries: Vec<Entry>,
    line: u64,
}

/// The writer's side: answers handed over, in the order computed, and
/// how many it took.
#[derive(Default)]
struct Received {
    entries: VecDeque<Entry>,
    taken: u64,
}

/// The table between the two threads.
#[derive(Default)]
pub struct SharedAnswers {
    tables: Mutex<Tables>,
    /// Wakes the waiting writer: answers were handed over, or the
    /// read-ahead went past its line, or stopped.
    wake_writer: Condvar,
    /// The read-ahead's side: taken by the writer only before it waits.
    pending: Own<Mutex<Pending>>,
    /// The writer's side, on its own cache lines.
    received: Own<Mutex<Received>>,
    /// Line (counted over all inputs) before which the read-ahead has
    /// handed over every answer it computed.
    ahead: Own<AtomicU64>,
    /// Line the writer is resolving.
    writer: Own<AtomicU64>,
    /// The read-ahead stopped: nothing more will come.
    ahead_done: AtomicBool,
    /// The writer is waiting (the read-ahead then hands over what it has
    /// at once, and wakes it).
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
    /// The writer's time spent waiting, and regions the read-ahead took
    /// back (for `SYMFILTER_READ_AHEAD_STATS`, with the answers taken; the
    /// count also tells the writer when its [`Owned`] list is out of date).
    waited_us: AtomicU64,
    taken_back: AtomicU64,
    /// What the writer's memos forgot, for the read-ahead to drop (see
    /// [`AnswerSupplier::retire`]), and whether there is any.
    retired: Mutex<Vec<Forgotten>>,
    has_retired: AtomicBool,
    /// The read-ahead's forgotten answers the writer still held, kept
    /// until it no longer does, then dropped by the read-ahead (only the
    /// read-ahead locks it).
    lingering: Own<Mutex<Lingering>>,
    freed_tables: AtomicU64,
    /// The regions each side knows to be its own, so that it need not
    /// take the shared lock to ask (each side locks only its own).
    ahead_owns: Own<Mutex<Owned>>,
    writer_owns: Own<Mutex<Owned>>,
}

/// The read-ahead's forgotten answers the writer still held.
#[derive(Default)]
struct Lingering {
    answers: Vec<Arc<CodeInfo>>,
    /// Answers published since the last sweep.
    published: usize,
}

/// Regions one side knows it owns. Only the read-ahead changes a region's
/// owner once set (it gives regions to the writer and takes them back; the
/// writer only claims regions no one has): the read-ahead's list is always
/// right, and the writer's is emptied whenever the read-ahead has taken a
/// region back since it was filled. A region given to the writer that its
/// list does not hold yet is asked about under the lock, as before.
#[derive(Default)]
struct Owned {
    regions: rustc_hash::FxHashSet<(u64, u64)>,
    /// The writer's: [`SharedAnswers::taken_back`]'s count when `regions`
    /// was last emptied.
    taken_back: u64,
}

/// Which side of a [`SharedAnswers`] a symbolizer is on.
pub enum Sharing {
    /// The read-ahead.
    Ahead(Arc<SharedAnswers>),
    /// The writing filter.
    Writer(Arc<SharedAnswers>),
}

/// Drop the lingering answers the writer no longer holds (on the
/// read-ahead's thread, which made them).
fn sweep(lingering: &mut Lingering) {
    lingering.answers.retain(|a| Arc::strong_count(a) > 1);
    lingering.published = 0;
}

/// Set `flag` to `value`, writing only when that changes it: each flag is
/// read by the other thread for every answer, and a write takes its cache
/// line from that thread's core.
fn set(flag: &AtomicBool, value: bool) {
    if flag.load(Ordering::Relaxed) != value {
        flag.store(value, Ordering::Relaxed);
    }
}

impl Received {
    /// The answer for `key` of line `line`, taken out (and counted);
    /// answers of earlier lines are dropped on the way.
    fn take(&mut self, line: u64, key: Key) -> Option<Kept<CodeInfo>> {
        let answer = take_entry(&mut self.entries, line, key)?;
        self.taken += 1;
        Some(answer)
    }
}

/// [`Received::take`] from `received`, uncounted.
fn take_entry(received: &mut VecDeque<Entry>, line: u64, key: Key) -> Option<Kept<CodeInfo>> {
    while received.front().is_some_and(|e| e.line < line) {
        received.pop_front();
    }
    let i = received
        .iter()
        .take_while(|e| e.line == line)
        .position(|e| e.key == key)?;
    let taken = received.remove(i).map(|e| e.answer);
    prefetch_next(received);
    taken
}

/// Starts loading what the writer reads of the next three answers it
/// takes, written by the read-ahead on another core and cold here: the
/// third answer itself (and its reference counts, which the writer's memo
/// writes when it keeps the answer), the names and files of the second
/// (whose answer the last take loaded), and the texts of the next one's
/// names (whose names it loaded). Each take goes one level of pointers
/// further, so what is read has arrived by then.
fn prefetch_next(received: &VecDeque<Entry>) {
    let answer = |i: usize| received.get(i).and_then(|e| e.answer.as_ref().ok());
    if let Some(a) = answer(2) {
        crate::base::prefetch_counts(Arc::as_ptr(a));
        crate::base::prefetch_lines(Arc::as_ptr(a), 2);
    }
    if let Some(a) = answer(1) {
        a.prefetch_names();
    }
    if let Some(a) = answer(0) {
        a.prefetch_texts();
    }
}

impl Sharing {
    /// This side has no code answer for address `addr` of module number
    /// `module`, asked with `want`: what to do.
    pub fn begin(&self, module: u64, addr: u64, want: CodeWant) -> Ticket {
        let key = (module, addr, want);
        match self {
            Sharing::Ahead(shared) => shared.ahead_begin(key),
            Sharing::Writer(shared) => shared.writer_begin(key),
        }
    }

    /// Hand an answer the read-ahead computed or recalled (for `want`) to
    /// the writer, in the form a memo keeps it.
    pub fn publish(&self, module: u64, addr: u64, want: CodeWant, answer: Kept<CodeInfo>) {
        let Sharing::Ahead(shared) = self else {
            return;
        };
        let Ok(mut pending) = shared.pending.0.lock() else {
            return;
        };
        let entry = Entry {
            line: pending.line,
            key: (module, addr, want),
            answer,
        };
        pending.entries.push(entry);
        if pending.entries.len() >= BATCH || shared.writer_waits.load(Ordering::SeqCst) {
            shared.hand_over(&mut pending);
        }
        drop(pending);
        shared.published();
    }
}

/// This side's part in the hand-over, as its symbolizer's memos see it.
impl AnswerSupplier for Sharing {
    /// This side is now resolving `line` (counted over all inputs).
    fn at_line(&self, line: u64) {
        match self {
            Sharing::Ahead(shared) => {
                let Ok(mut pending) = shared.pending.0.lock() else {
                    return;
                };
                pending.line = line;
                // The writer waits on its own line: only answers, or
                // passing it, can end the wait.
                if shared.writer_waits.load(Ordering::SeqCst) || pending.entries.len() >= BATCH {
                    shared.hand_over(&mut pending);
                } else if pending.entries.is_empty() {
                    shared.ahead.0.store(line, Ordering::Release);
                }
            }
            Sharing::Writer(shared) => shared.writer.0.store(line, Ordering::Relaxed),
        }
    }

    /// The writer takes an answer handed over for its line before looking
    /// in its memo: answers the read-ahead found in its own memo are handed
    /// over too, so the writer's memo keeps only what the writer computes.
    fn ready(&self, module: u64, addr: u64, want: CodeWant) -> Option<Kept<CodeInfo>> {
        let Sharing::Writer(shared) = self else {
            return None;
        };
        let line = shared.writer.0.load(Ordering::Relaxed);
        let answer = shared
            .received
            .0
            .lock()
            .ok()?
            .take(line, (module, addr, want))?;
        set(&shared.writer_hungry, false);
        Some(answer)
    }

    /// The read-ahead hands over what it found in its memo as well: the
    /// writer does not keep what it was handed.
    fn recalled(&self, module: u64, addr: u64, want: CodeWant, answer: &Kept<CodeInfo>) {
        if let Sharing::Ahead(_) = self {
            self.publish(module, addr, want, answer.clone());
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

    /// The writer's forgotten answers go to the read-ahead, unless it has
    /// stopped or has not taken the last ones; the read-ahead's own linger
    /// while the writer holds them.
    fn retire(&self, forgotten: Forgotten) {
        match self {
            Sharing::Writer(shared) if !shared.ahead_done.load(Ordering::Acquire) => {
                shared.retire(forgotten);
            }
            Sharing::Ahead(shared) => shared.linger(*forgotten),
            Sharing::Writer(_) => drop(forgotten),
        }
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

    /// The read-ahead's answer, or `compute`'s (handed over when this side
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
                    self.publish(module, addr, want, answer.clone().map_err(Box::new));
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

    /// The read-ahead's [`Sharing::begin`]: whose region `key` is in.
    fn ahead_begin(&self, key: Key) -> Ticket {
        let (module, addr, _) = key;
        let region = (module, addr >> REGION);
        let Ok(mut owns) = self.ahead_owns.0.lock() else {
            return Ticket::Compute { publish: false };
        };
        // A hungry writer may be given this region: asked under the lock.
        if !self.writer_hungry.load(Ordering::Relaxed) && owns.regions.contains(&region) {
            return Ticket::Compute { publish: true };
        }
        let Some(mut tables) = self.lock() else {
            return Ticket::Compute { publish: false };
        };
        let owner = tables.owners.get(&region).copied();
        match owner {
            Some(Side::Writer) if !self.far_ahead.load(Ordering::Relaxed) => Ticket::Skip,
            Some(Side::Writer) => {
                // Time to spare: the region is the read-ahead's again.
                tables.owners.insert(region, Side::Ahead);
                owns.regions.insert(region);
                self.taken_back.fetch_add(1, Ordering::Relaxed);
                Ticket::Compute { publish: true }
            }
            _ if self.writer_hungry.load(Ordering::Relaxed)
                && (owner.is_some() || tables.owners.len() < MAX_REGIONS)
                && tables
                    .awaited
                    .is_none_or(|(m, a, _)| (m, a >> REGION) != region)
                && self.given.fetch_add(1, Ordering::Relaxed) % 2 == 1 =>
            {
                // The writer is waiting for answers: every other region
                // met is its own to compute (but the one it waits in), so
                // both threads work at once.
                tables.owners.insert(region, Side::Writer);
                owns.regions.remove(&region);
                Ticket::Skip
            }
            _ => {
                if owner.is_none() && tables.owners.len() < MAX_REGIONS {
                    tables.owners.insert(region, Side::Ahead);
                    owns.regions.insert(region);
                }
                Ticket::Compute { publish: true }
            }
        }
    }

    /// The writer's [`Sharing::begin`]: the answer handed over, or whether
    /// to compute it here, once the read-ahead cannot bring it.
    fn writer_begin(&self, key: Key) -> Ticket {
        let (module, addr, _) = key;
        let line = self.writer.0.load(Ordering::Relaxed);
        let Ok(mut received) = self.received.0.lock() else {
            return Ticket::Compute { publish: false };
        };
        let have = |answer: Kept<CodeInfo>| Ticket::Have(answer.map_err(|m| *m));
        if let Some(answer) = received.take(line, key) {
            set(&self.writer_hungry, false);
            return have(answer);
        }
        let region = (module, addr >> REGION);
        let Ok(mut owns) = self.writer_owns.0.lock() else {
            return Ticket::Compute { publish: false };
        };
        let taken_back = self.taken_back.load(Ordering::Relaxed);
        if owns.taken_back != taken_back {
            owns.regions.clear();
            owns.taken_back = taken_back;
        }
        if owns.regions.contains(&region) {
            return Ticket::Compute { publish: false };
        }
        let Some(mut tables) = self.lock() else {
            return Ticket::Compute { publish: false };
        };
        let passed = || self.ahead_done.load(Ordering::Acquire) || self.ahead_of_writer();
        let (mut peeked, mut waited) = (false, false);
        loop {
            received.entries.extend(tables.handed.drain(..));
            if let Some(answer) = received.take(line, key) {
                if !waited {
                    set(&self.writer_hungry, false);
                }
                return have(answer);
            }
            match tables.owners.get(&region) {
                Some(Side::Writer) => {
                    owns.regions.insert(region);
                    return Ticket::Compute { publish: false };
                }
                // The read-ahead went past without it: it will not come.
                _ if passed() => return Ticket::Compute { publish: false },
                None => {
                    // The writer caught up: this region is its own now.
                    if tables.owners.len() < MAX_REGIONS {
                        tables.owners.insert(region, Side::Writer);
                        owns.regions.insert(region);
                    }
                    return Ticket::Compute { publish: false };
                }
                Some(Side::Ahead) => {}
            }
            // The read-ahead is on it (or about to be). What it holds back
            // is taken first (in the order of its locks: pending, then
            // tables); only then does the writer wait, and from then on the
            // read-ahead hands over each answer as it comes, and wakes it.
            if peeked {
                waited = true;
                set(&self.writer_hungry, true);
                self.writer_waits.store(true, Ordering::SeqCst);
            }
            peeked = true;
            drop(tables);
            let pending = self.pending.0.lock();
            tables = match self.lock() {
                Some(t) => t,
                None => {
                    self.writer_waits.store(false, Ordering::Release);
                    return Ticket::Compute { publish: false };
                }
            };
            received.entries.extend(tables.handed.drain(..));
            if let Ok(mut pending) = pending {
                received.entries.extend(pending.entries.drain(..));
                self.ahead.0.store(pending.line, Ordering::SeqCst);
            }
            if let Some(answer) = received.take(line, key) {
                self.writer_waits.store(false, Ordering::Release);
                if !waited {
                    set(&self.writer_hungry, false);
                }
                return have(answer);
            }
            if passed() {
                self.writer_waits.store(false, Ordering::Release);
                return Ticket::Compute { publish: false };
            }
            if !waited {
                continue;
            }
            tables.awaited = Some(key);
            let since = Instant::now();
            let woken = self.wake_writer.wait_timeout(tables, WAIT_SLICE);
            let us = since.elapsed().as_micros() as u64;
            self.waited_us.fetch_add(us, Ordering::Relaxed);
            self.writer_waits.store(false, Ordering::Release);
            match woken {
                Ok((t, _)) => {
                    tables = t;
                    tables.awaited = None;
                }
                Err(_) => return Ticket::Compute { publish: false },
            }
        }
    }

    /// Hand the read-ahead's pending answers over, and wake the writer if
    /// it waits.
    fn hand_over(&self, pending: &mut Pending) {
        let Some(mut tables) = self.lock() else {
            pending.entries.clear();
            return;
        };
        if tables.handed.len() >= MAX_WAITING / 2 {
            // The writer has not asked for a while: what is behind its
            // line will not be asked for.
            let writer = self.writer.0.load(Ordering::Relaxed);
            let behind = tables.handed.partition_point(|e| e.line < writer);
            tables.handed.drain(..behind);
        }
        if tables.handed.len() + pending.entries.len() <= MAX_WAITING {
            tables.handed.append(&mut pending.entries);
        } else {
            pending.entries.clear();
        }
        self.ahead.0.store(pending.line, Ordering::SeqCst);
        if self.writer_waits.load(Ordering::SeqCst) {
            self.wake_writer.notify_all();
        }
    }

    /// Keep `forgotten` for the read-ahead to drop, or drop it here when
    /// [`MAX_RETIRED`] wait already.
    fn retire(&self, forgotten: Forgotten) {
        let Ok(mut retired) = self.retired.lock() else {
            return;
        };
        if retired.len() < MAX_RETIRED {
            retired.push(forgotten);
            self.has_retired.store(true, Ordering::Release);
        } else {
            drop(retired);
            drop(forgotten);
        }
    }

    /// Drop what the read-ahead's memo forgot, but for the answers the
    /// writer still holds: those are kept until a sweep finds the writer
    /// done with them. Most are let go within the read-ahead's
    /// [`LEAD`](super::LEAD); the writer's printer and memo keep some for
    /// long (see [`SWEEP_EVERY`]).
    fn linger(&self, forgotten: CodeTable) {
        let Ok(mut lingering) = self.lingering.0.lock() else {
            return;
        };
        sweep(&mut lingering);
        for (_, kept) in forgotten {
            if let Ok(answer) = kept
                && Arc::strong_count(&answer) > 1
            {
                lingering.answers.push(answer);
            }
        }
    }

    /// The read-ahead published an answer: sweep its lingering answers
    /// every [`SWEEP_EVERY`] answers, or as many as linger.
    fn published(&self) {
        if let Ok(mut lingering) = self.lingering.0.lock() {
            lingering.published += 1;
            if lingering.published >= SWEEP_EVERY.max(lingering.answers.len()) {
                sweep(&mut lingering);
            }
        }
    }

    /// Drop what the writer's memos forgot (the read-ahead calls this as
    /// it reads on).
    pub fn drop_retired(&self) {
        if !self.has_retired.load(Ordering::Acquire) {
            return;
        }
        let taken = match self.retired.lock() {
            Ok(mut retired) => {
                self.has_retired.store(false, Ordering::Release);
                std::mem::take(&mut *retired)
            }
            Err(_) => return,
        };
        self.freed_tables
            .fetch_add(taken.len() as u64, Ordering::Relaxed);
        drop(taken);
    }

    /// Hand over what the read-ahead holds back (it is about to wait for
    /// the writer, or has stopped).
    pub fn flush(&self) {
        if let Ok(mut pending) = self.pending.0.lock()
            && !pending.entries.is_empty()
        {
            self.hand_over(&mut pending);
        }
    }

    /// Say whether the read-ahead is far in front of the writer (by the
    /// reader's count of input bytes): see the module's documentation.
    pub fn set_far_ahead(&self, far: bool) {
        set(&self.far_ahead, far);
    }

    /// Whether the read-ahead is past the line the writer is resolving.
    pub fn ahead_of_writer(&self) -> bool {
        self.ahead.0.load(Ordering::Acquire) > self.writer.0.load(Ordering::Relaxed)
    }

    /// The read-ahead has stopped (finished, or failed): the writer stops
    /// waiting for it.
    pub fn ahead_done(&self) {
        self.flush();
        self.ahead_done.store(true, Ordering::Release);
        if let Some(_tables) = self.lock() {
            self.wake_writer.notify_all();
        }
    }

    /// What the read-ahead did for the writer.
    pub fn stats(&self) -> Stats {
        Stats {
            taken: self.received.0.lock().map_or(0, |r| r.taken),
            waited_ms: self.waited_us.load(Ordering::Relaxed) / 1000,
            taken_back: self.taken_back.load(Ordering::Relaxed),
            freed_tables: self.freed_tables.load(Ordering::Relaxed),
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
    fn an_answer_computed_ahead_is_taken_once_on_its_line() {
        let (_, ahead, writer) = sides();
        let id = ahead.module(&BuildId(vec![1, 2]));
        ahead.at_line(5);
        assert!(matches!(
            ahead.begin(id, 7, W),
            Ticket::Compute { publish: true }
        ));
        let answer = Ok(Arc::new(CodeInfo::default()));
        ahead.publish(id, 7, W, answer.clone());
        // Held back (less than a batch) while the read-ahead goes on.
        ahead.at_line(6);
        writer.at_line(5);
        // Asked with another want: not that answer. The writer takes what
        // the read-ahead held back, finds it past line 5, and computes its
        // own.
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
        // Taken: the read-ahead is past line 5 and will not bring it again.
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

    /// A memo's forgotten table holding `answer`.
    fn table_of(answer: &Arc<CodeInfo>) -> Forgotten {
        let mut table = CodeTable::default();
        table.insert((1, W), Ok(Arc::clone(answer)));
        Box::new(table)
    }

    #[test]
    fn the_writers_forgotten_answers_are_dropped_by_the_read_ahead() {
        let (shared, _, writer) = sides();
        let answer = Arc::new(CodeInfo::default());
        let held = || Arc::strong_count(&answer) - 1;
        // The writer's wait for the read-ahead, up to MAX_RETIRED.
        for _ in 0..MAX_RETIRED + 1 {
            writer.retire(table_of(&answer));
        }
        assert_eq!(held(), MAX_RETIRED);
        shared.drop_retired();
        assert_eq!(held(), 0);
        assert_eq!(shared.stats().freed_tables, MAX_RETIRED as u64);
        // Once the read-ahead has stopped, the writer drops its own.
        shared.ahead_done();
        writer.retire(table_of(&answer));
        assert_eq!(held(), 0);
    }

    #[test]
    fn the_read_ahead_frees_what_it_forgot_once_the_writer_lets_go() {
        let (shared, ahead, _) = sides();
        let id = ahead.module(&BuildId(vec![4]));
        let alone = Arc::new(CodeInfo::default());
        let alone_gone = Arc::downgrade(&alone);
        // Handed over, and still held by the writer.
        let written = Arc::new(CodeInfo::default());
        let written_gone = Arc::downgrade(&written);
        let mut table = CodeTable::default();
        table.insert((1, W), Ok(alone));
        table.insert((2, W), Ok(Arc::clone(&written)));
        table.insert((3, W), Err(Box::new(Miss::NoInfo)));
        ahead.retire(Box::new(table));
        // Held by nobody else: dropped at once.
        assert!(alone_gone.upgrade().is_none());
        // The writer's drop is not the last one: the read-ahead keeps it.
        drop(written);
        assert!(written_gone.upgrade().is_some());
        // Dropped by the read-ahead's next sweep, after SWEEP_EVERY answers.
        ahead.at_line(1);
        for a in 0..SWEEP_EVERY as u64 - 1 {
            ahead.publish(id, a, W, Err(Box::new(Miss::NoInfo)));
        }
        assert!(written_gone.upgrade().is_some());
        ahead.publish(id, u64::MAX, W, Err(Box::new(Miss::NoInfo)));
        assert!(written_gone.upgrade().is_none());
        // A later forgotten table sweeps too.
        let again = Arc::new(CodeInfo::default());
        let again_gone = Arc::downgrade(&again);
        ahead.retire(table_of(&again));
        drop(again);
        assert!(again_gone.upgrade().is_some());
        shared.ahead_done();
        ahead.retire(Box::default());
        assert!(again_gone.upgrade().is_none());
    }

    #[test]
    fn a_sweep_waits_for_as_many_answers_as_linger() {
        let (_, ahead, _) = sides();
        let id = ahead.module(&BuildId(vec![6]));
        let n = SWEEP_EVERY as u64 + 10;
        // The writer holds all of them (its printer may keep them long).
        let held: Vec<Arc<CodeInfo>> = (0..n).map(|_| Arc::new(CodeInfo::default())).collect();
        let mut table = CodeTable::default();
        for (a, answer) in (0..n).zip(&held) {
            table.insert((a, W), Ok(Arc::clone(answer)));
        }
        ahead.retire(Box::new(table));
        let first = Arc::downgrade(&held[0]);
        drop(held);
        ahead.at_line(1);
        for a in 0..n - 1 {
            ahead.publish(id, a, W, Err(Box::new(Miss::NoInfo)));
        }
        assert!(first.upgrade().is_some());
        ahead.publish(id, n, W, Err(Box::new(Miss::NoInfo)));
        assert!(first.upgrade().is_none());
    }

    #[test]
    fn answers_go_over_in_batches_and_are_dropped_once_passed() {
        let (shared, ahead, writer) = sides();
        let id = ahead.module(&BuildId(vec![3]));
        let line = |a: u64| 10 + a / 2;
        for a in 0..BATCH as u64 {
            ahead.at_line(line(a));
            assert!(matches!(ahead.begin(id, a, W), Ticket::Compute { .. }));
            let handed = shared.lock().unwrap().handed.len();
            // Nothing is handed over before a batch is full.
            assert_eq!(handed, 0, "handed over before answer {a}");
            ahead.publish(id, a, W, Err(Box::new(Miss::NoInfo)));
        }
        assert_eq!(shared.lock().unwrap().handed.len(), BATCH);
        // The writer takes the answers of its line, in any order, and
        // drops those of lines it went past without asking.
        writer.at_line(line(20));
        assert!(have(writer.begin(id, 21, W)).is_some());
        assert!(have(writer.begin(id, 20, W)).is_some());
        assert_eq!(shared.received.0.lock().unwrap().entries.len(), BATCH - 22);
        // Not asked for on its line: gone once the writer is past it.
        writer.at_line(line(24));
        assert!(have(writer.begin(id, 24, W)).is_some());
        assert!(matches!(
            writer.begin(id, 22, W),
            Ticket::Compute { publish: false }
        ));
        assert_eq!(shared.stats().taken, 3);
    }

    /// Both sides over the same questions, on two threads, with the read-
    /// ahead remembering some answers (and so not handing them over) and
    /// both waiting on each other: every answer the writer gets is the one
    /// to its question, and nothing is waited for forever.
    #[test]
    fn the_writer_gets_the_answer_to_each_question_from_either_side() {
        let (shared, ahead, writer) = sides();
        let id = ahead.module(&BuildId(vec![7]));
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        // Lines of 0-3 addresses in 4 regions, from a pool small enough to
        // repeat.
        let questions: Arc<Vec<(u64, Vec<u64>)>> = Arc::new(
            (1..=20_000)
                .map(|line| {
                    let n = next() % 4;
                    let addrs = (0..n)
                        .map(|_| ((next() % 4) << REGION) + next() % 300)
                        .collect();
                    (line, addrs)
                })
                .collect(),
        );
        let answer = |addr: u64| {
            Ok(Arc::new(CodeInfo {
                frames: smallvec::smallvec![crate::symbols::Frame {
                    line: addr as u32,
                    column: (addr >> REGION) as u32,
                    ..Default::default()
                }],
                symbol: None,
                ..Default::default()
            }))
        };
        // Two regions the read-ahead's, one the writer's, one for whoever
        // comes first.
        for region in [0, 1] {
            assert!(matches!(
                ahead.begin(id, region << REGION, W),
                Ticket::Compute { .. }
            ));
        }
        assert!(matches!(
            writer.begin(id, 2 << REGION, W),
            Ticket::Compute { .. }
        ));
        let behind = {
            let questions = Arc::clone(&questions);
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || {
                let mut remembered = std::collections::HashSet::new();
                for (line, addrs) in questions.iter() {
                    ahead.at_line(*line);
                    for &addr in addrs {
                        if remembered.contains(&addr) {
                            continue;
                        }
                        if ahead.code(id, addr, W, &|| answer(addr)).is_some() {
                            remembered.insert(addr);
                        }
                        if remembered.len() > 100 {
                            remembered.clear();
                        }
                    }
                }
                shared.ahead_done();
            })
        };
        for (line, addrs) in questions.iter() {
            writer.at_line(*line);
            for &addr in addrs {
                let got = writer.code(id, addr, W, &|| answer(addr));
                let frame = &got.unwrap().unwrap().frames[0];
                assert_eq!(
                    (frame.line, frame.column),
                    (addr as u32, (addr >> REGION) as u32)
                );
            }
        }
        behind.join().unwrap();
        assert!(shared.stats().taken > 0, "nothing was handed over");
    }

    /// Counts the lookups it answers.
    struct Counting(Arc<std::sync::atomic::AtomicU32>);

    impl crate::symbols::SymbolSource for Counting {
        fn origin(&self) -> String {
            "counting".into()
        }
        fn lookup_code(&self, addr: u64, _: CodeWant) -> Result<CodeInfo, Miss> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Ok(CodeInfo {
                frames: smallvec::smallvec![crate::symbols::Frame {
                    line: addr as u32,
                    ..Default::default()
                }],
                ..Default::default()
            })
        }
        fn lookup_data(
            &self,
            _: u64,
            _: crate::symbols::DataWant,
        ) -> Result<crate::symbols::DataInfo, Miss> {
            Err(Miss::NoInfo)
        }
    }

    /// What the read-ahead's memo recalls is handed over as what it
    /// computes: the writer takes each answer from the read-ahead, the
    /// first time and again, and computes none.
    #[test]
    fn the_read_ahead_hands_over_what_its_memo_recalls() {
        use crate::symbols::Memo;
        use std::sync::atomic::AtomicU32;
        let (shared, ahead, writer) = sides();
        let (ahead, writer) = (Arc::new(ahead), Arc::new(writer));
        let memo = |side: &Arc<Sharing>| {
            let count = Arc::new(AtomicU32::new(0));
            let mut memo = Memo::new(Box::new(Counting(Arc::clone(&count))));
            memo.supplied_by(
                BuildId(vec![5]),
                Arc::clone(side) as Arc<dyn AnswerSupplier>,
            );
            (memo, count)
        };
        let ((ahead_memo, ahead_count), (writer_memo, writer_count)) =
            (memo(&ahead), memo(&writer));
        let lines = [(1, 7), (2, 8), (3, 7), (4, 7)];
        for (line, addr) in lines {
            ahead.at_line(line);
            ahead_memo.lookup_code(addr, W).unwrap();
        }
        // Two lookups, then two recalls, all handed over.
        assert_eq!(ahead_count.load(Ordering::Relaxed), 2);
        let mut first = None;
        for (line, addr) in lines {
            writer.at_line(line);
            let got = writer_memo.lookup_code(addr, W).unwrap();
            assert_eq!(got.frames[0].line, addr as u32);
            if addr == 7 {
                let first = first.get_or_insert_with(|| Arc::clone(&got));
                assert!(Arc::ptr_eq(first, &got), "line {line}");
            }
        }
        assert_eq!(writer_count.load(Ordering::Relaxed), 0);
        assert_eq!(shared.stats().taken, 4);
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
                ahead.publish(id, 1, W, Err(Box::new(Miss::NoInfo)));
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
        ahead.publish(id, 0x40, W, Err(Box::new(Miss::NoInfo)));
        writer.at_line(2);
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
        // Once the writer is no longer hungry, what it was given stays its
        // own, and the read-ahead's own regions stay the read-ahead's.
        shared.writer_hungry.store(false, Ordering::Relaxed);
        let kinds: Vec<bool> = [2, 3, 4, 5, 6]
            .iter()
            .map(|&n| matches!(ahead.begin(id, region(n) + 24, W), Ticket::Skip))
            .collect();
        assert_eq!(kinds, [true, false, true, false, true]);
        // Data answers are the writer's, wherever they are.
        assert!(!ahead.computes_data());
        assert!(writer.computes_data());
    }
}
