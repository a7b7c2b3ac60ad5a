//! The filter on two threads: the front thread reads the log, lexes it,
//! keeps its context and looks addresses up, and the printing thread runs
//! the printers and writes the output. The front's printer is a
//! [`Recorder`]: every call the filter makes of it (and every write and
//! flush of the output, and every diagnostic) is copied into a batch
//! and handed over in order, and the printing thread makes the same calls
//! of the real printer. What the user sees is what one thread would print,
//! byte for byte, in the same writes and flushes, with the diagnostics
//! between them where one thread would give them.
//!
//! Lookups are shared by how far in front the front thread is: while
//! fewer than `EAGER` batches wait for the printer, the front leaves the
//! code lookups of elements it does not remember to the printing thread
//! ([`Filter::defer_lookups`]), which looks them up just before printing;
//! with more waiting, it looks them up itself. So a run of new addresses
//! is looked up on both threads, and the printer never waits long while
//! the front is busy. A unit's parsed DWARF is shared by the two (see
//! [`crate::dwarf`]): what one thread parsed the other finds parsed.
//!
//! Memory is bounded: at most `QUEUE` batches are in flight, each of
//! about `BATCH_BYTES` bytes of the log or `BATCH_ITEMS` calls and
//! events (a longer line, up to the filter's longest, is a batch of its
//! own).

mod record;

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};

use rustc_hash::FxHashMap as HashMap;

use crate::filter::Filter;
use crate::render::{Event, Line, Lookup, Render, Resolved};
use crate::report::{Report, Reporter};
use crate::symbols::{CodeInfo, CodeWant, Deferred, Kept, keep, recall};
use record::{Batch, Call, OwnedReport, PrinterId};

/// Batches in flight, at most: the front waits beyond.
const QUEUE: usize = 16;

/// Batches waiting for the printer under which the front thread leaves
/// lookups to it.
const EAGER: usize = 6;

/// Bytes of a batch past which it is handed over (the filter flushes the
/// output before each read, which hands it over too).
const BATCH_BYTES: usize = 64 << 10;

/// Calls and events of a batch past which it is handed over: a log of
/// short lines dense with elements makes many per byte.
const BATCH_ITEMS: usize = 512;

/// Answers the printing thread remembers before starting over.
const MEMO_MAX: usize = 1 << 12;

/// What the printing thread did.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Batches of calls it printed.
    pub batches: u64,
    /// Lookups the front left to it that it made (not recalled).
    pub lookups: u64,
}

/// The front thread's end of the pipeline.
pub struct Pipeline {
    front: Arc<Front>,
    /// Where progress goes.
    reporter: Arc<dyn Reporter>,
    thread: Option<JoinHandle<Stats>>,
}

/// What the front thread's recorders, output and reporter share.
struct Front {
    state: Mutex<FrontState>,
    /// Batches handed over and not yet printed.
    waiting: Arc<AtomicUsize>,
    /// The printing thread's write error, once it failed.
    failed: Arc<Mutex<Option<io::Error>>>,
    failing: Arc<AtomicBool>,
}

struct FrontState {
    batch: Batch,
    to_printer: Option<SyncSender<Batch>>,
    /// Batches the printer emptied, for reuse.
    spare: Receiver<Batch>,
    next_printer: PrinterId,
}

impl Front {
    fn state(&self) -> MutexGuard<'_, FrontState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The printing thread's failure, if it failed.
    fn failure(&self) -> io::Result<()> {
        if !self.failing.load(Ordering::Relaxed) {
            return Ok(());
        }
        let failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        Err(match &*failed {
            Some(e) => io::Error::new(e.kind(), e.to_string()),
            None => io::Error::other("the printing thread stopped"),
        })
    }

    /// Record `call` (made with `state`'s batch by `make`).
    fn record(&self, make: impl FnOnce(&mut Batch)) -> io::Result<()> {
        self.failure()?;
        let mut state = self.state();
        make(&mut state.batch);
        if state.batch.bytes.len() >= BATCH_BYTES
            || state.batch.calls.len() + state.batch.events.len() >= BATCH_ITEMS
        {
            self.hand_over(&mut state)?;
        }
        Ok(())
    }

    /// Hand the batch to the printing thread (waiting while the queue is
    /// full).
    fn hand_over(&self, state: &mut FrontState) -> io::Result<()> {
        if state.batch.is_empty() {
            return Ok(());
        }
        let next = state.spare.try_recv().unwrap_or_default();
        let batch = std::mem::replace(&mut state.batch, next);
        let Some(to) = &state.to_printer else {
            return Err(io::Error::other("the printing thread stopped"));
        };
        self.waiting.fetch_add(1, Ordering::Relaxed);
        if to.send(batch).is_err() {
            self.failure()?;
            return Err(io::Error::other("the printing thread stopped"));
        }
        Ok(())
    }
}

impl Pipeline {
    /// Start the printing thread, which writes to what `output` makes
    /// (on that thread) and gives diagnostics to `reporter` in their place
    /// among the output.
    pub fn start(
        output: impl FnOnce() -> Box<dyn Write> + Send + 'static,
        reporter: Arc<dyn Reporter>,
    ) -> io::Result<Pipeline> {
        let (to_printer, batches) = sync_channel::<Batch>(QUEUE);
        let (to_front, spare) = std::sync::mpsc::channel::<Batch>();
        let waiting = Arc::new(AtomicUsize::new(0));
        let failed = Arc::new(Mutex::new(None));
        let failing = Arc::new(AtomicBool::new(false));
        let printer = Printer {
            printers: HashMap::default(),
            memo: HashMap::default(),
            reporter: Arc::clone(&reporter),
            waiting: Arc::clone(&waiting),
            stats: Stats::default(),
        };
        let (fail, failing_too) = (Arc::clone(&failed), Arc::clone(&failing));
        let thread = thread::Builder::new()
            .name("printer".into())
            .spawn(move || {
                crate::base::heap::advise_this_thread();
                let mut out = output();
                printer.run(&mut *out, batches, to_front, &fail, &failing_too)
            })?;
        Ok(Pipeline {
            front: Arc::new(Front {
                state: Mutex::new(FrontState {
                    batch: Batch::default(),
                    to_printer: Some(to_printer),
                    spare,
                    next_printer: 0,
                }),
                waiting,
                failed,
                failing,
            }),
            reporter,
            thread: Some(thread),
        })
    }

    /// Make `filter` print through this pipeline: its printers run on the
    /// printing thread, and it leaves lookups to that thread while the
    /// thread has little to do.
    pub fn attach(&self, filter: &mut Filter) {
        let front = Arc::clone(&self.front);
        filter.print_through(move |render| Box::new(Recorder::new(&front, render)));
        let waiting = Arc::clone(&self.front.waiting);
        filter.defer_lookups(move || waiting.load(Ordering::Relaxed) < EAGER);
    }

    /// The output to give the filter: writes and flushes reach the real
    /// output in their place.
    pub fn output(&self) -> Output {
        Output(Arc::clone(&self.front))
    }

    /// A reporter saying each report in its place among the output.
    pub fn reporter(&self) -> Arc<dyn Reporter> {
        Arc::new(InPlace {
            front: Arc::clone(&self.front),
            progress: Arc::clone(&self.reporter),
        })
    }

    /// Hand over what is left, wait for the printing thread to write it,
    /// and give its write error if it had one.
    pub fn finish(mut self) -> io::Result<Stats> {
        {
            let mut state = self.front.state();
            let _ = self.front.hand_over(&mut state);
            state.to_printer = None;
        }
        let stats = match self.thread.take().map(JoinHandle::join) {
            Some(Ok(stats)) => stats,
            _ => Stats::default(),
        };
        self.front.failure().map(|()| stats)
    }

    /// Wait until everything recorded so far is written out (and flushed):
    /// for a message the caller writes itself, after the output before
    /// it.
    pub fn wait_written(&self) -> io::Result<()> {
        let (done, written) = std::sync::mpsc::channel();
        {
            let mut state = self.front.state();
            state.batch.calls.push(Call::Flush);
            state.batch.calls.push(Call::Signal(done));
            self.front.hand_over(&mut state)?;
        }
        let _ = written.recv();
        self.front.failure()
    }
}

/// The filter's output on the front thread (see [`Pipeline::output`]).
pub struct Output(Arc<Front>);

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.record(|b| {
            let r = b.put(buf);
            b.calls.push(Call::Write(r));
        })?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.failure()?;
        let mut state = self.0.state();
        state.batch.calls.push(Call::Flush);
        self.0.hand_over(&mut state)
    }
}

/// See [`Pipeline::reporter`].
struct InPlace {
    front: Arc<Front>,
    /// Where progress goes (at once: it is about now).
    progress: Arc<dyn Reporter>,
}

impl Reporter for InPlace {
    fn report(&self, report: &Report<'_>) {
        match OwnedReport::of(report) {
            Some(owned) => {
                let _ = self.front.record(|b| b.calls.push(Call::Report(owned)));
            }
            None => self.progress.report(report),
        }
    }

    fn wants_progress(&self) -> bool {
        self.progress.wants_progress()
    }
}

/// A printer on the front thread: records each call for the printing
/// thread's real printer.
pub struct Recorder {
    front: Arc<Front>,
    id: PrinterId,
}

impl Recorder {
    fn new(front: &Arc<Front>, render: Box<dyn Render>) -> Recorder {
        let id = {
            let mut state = front.state();
            let id = state.next_printer;
            state.next_printer = id.wrapping_add(1);
            state.batch.calls.push(Call::Made(id, render));
            id
        };
        Recorder {
            front: Arc::clone(front),
            id,
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let id = self.id;
        let _ = self.front.record(|b| b.calls.push(Call::Dropped(id)));
    }
}

impl Render for Recorder {
    fn plain(&mut self, _: &mut dyn Write, text: &[u8], first_line: u64) -> io::Result<()> {
        let printer = self.id;
        self.front.record(|b| {
            let text = b.put(text);
            b.calls.push(Call::Plain {
                printer,
                text,
                first_line,
            });
        })
    }

    fn line(
        &mut self,
        out: &mut dyn Write,
        line: &Line<'_>,
        events: &[Event<'_>],
    ) -> io::Result<()> {
        self.line_taking(out, line, &mut events.to_vec())
    }

    fn line_taking(
        &mut self,
        _: &mut dyn Write,
        line: &Line<'_>,
        events: &mut Vec<Event<'_>>,
    ) -> io::Result<()> {
        let printer = self.id;
        self.front.record(|b| b.line(printer, line, events))
    }

    fn raw(&mut self, _: &mut dyn Write, bytes: &[u8]) -> io::Result<()> {
        let printer = self.id;
        self.front.record(|b| {
            let r = b.put(bytes);
            b.calls.push(Call::Raw(printer, r));
        })
    }

    fn idle(&mut self, _: &mut dyn Write) -> io::Result<()> {
        let printer = self.id;
        self.front.record(|b| b.calls.push(Call::Idle(printer)))
    }

    fn pause(&mut self, _: &mut dyn Write) -> io::Result<()> {
        let printer = self.id;
        self.front.record(|b| b.calls.push(Call::Pause(printer)))
    }

    fn finish(&mut self, _: &mut dyn Write) -> io::Result<()> {
        let printer = self.id;
        self.front.record(|b| b.calls.push(Call::Finish(printer)))
    }
}

/// Answers to deferred lookups, by [`Deferred::key`], each kept with its
/// lookup: the source it holds stays alive while its answer is here, so
/// its address (in the key) cannot be another source's meanwhile.
type Answers = HashMap<(usize, u64, CodeWant), (Deferred, Kept<CodeInfo>)>;

/// The printing thread.
struct Printer {
    printers: HashMap<PrinterId, Box<dyn Render>>,
    memo: Answers,
    reporter: Arc<dyn Reporter>,
    waiting: Arc<AtomicUsize>,
    stats: Stats,
}

impl Printer {
    fn run(
        mut self,
        out: &mut dyn Write,
        batches: Receiver<Batch>,
        spare: std::sync::mpsc::Sender<Batch>,
        failed: &Mutex<Option<io::Error>>,
        failing: &AtomicBool,
    ) -> Stats {
        let mut list: Vec<Event<'static>> = Vec::new();
        for mut batch in batches {
            self.stats.batches += 1;
            if !failing.load(Ordering::Relaxed)
                && let Err(e) = self.replay(&mut batch, out, &mut list)
            {
                *failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                failing.store(true, Ordering::Relaxed);
            }
            batch.clear();
            self.waiting.fetch_sub(1, Ordering::Relaxed);
            let _ = spare.send(batch);
        }
        self.stats
    }

    fn replay(
        &mut self,
        batch: &mut Batch,
        out: &mut dyn Write,
        spare: &mut Vec<Event<'static>>,
    ) -> io::Result<()> {
        let Batch {
            bytes,
            raws,
            events,
            calls,
        } = batch;
        let mut recorded = events.drain(..);
        let mut list = crate::base::recycle(std::mem::take(spare));
        for call in calls.drain(..) {
            match call {
                Call::Plain {
                    printer,
                    text,
                    first_line,
                } => self
                    .printer(printer)?
                    .plain(out, &bytes[text], first_line)?,
                Call::Line {
                    printer,
                    line,
                    events,
                } => {
                    list.clear();
                    let (memo, lookups) = (&mut self.memo, &mut self.stats.lookups);
                    record::events(
                        bytes,
                        raws,
                        recorded.by_ref().take(events),
                        &mut list,
                        &mut |res| complete(memo, lookups, res),
                    );
                    self.printer(printer)?.line(out, &line.line(bytes), &list)?;
                }
                Call::Raw(printer, r) => self.printer(printer)?.raw(out, &bytes[r])?,
                Call::Idle(printer) => self.printer(printer)?.idle(out)?,
                Call::Pause(printer) => self.printer(printer)?.pause(out)?,
                Call::Finish(printer) => self.printer(printer)?.finish(out)?,
                Call::Made(printer, render) => {
                    self.printers.insert(printer, render);
                }
                Call::Dropped(printer) => {
                    self.printers.remove(&printer);
                }
                Call::Write(r) => out.write_all(&bytes[r])?,
                Call::Flush => out.flush()?,
                Call::Report(report) => report.give(&*self.reporter),
                Call::Signal(done) => {
                    let _ = done.send(());
                }
            }
        }
        list.clear();
        *spare = crate::base::recycle(list);
        Ok(())
    }

    fn printer(&mut self, id: PrinterId) -> io::Result<&mut Box<dyn Render>> {
        self.printers
            .get_mut(&id)
            .ok_or_else(|| io::Error::other("no such printer"))
    }
}

/// `res` with a deferred lookup made (or recalled from `memo`).
fn complete(memo: &mut Answers, lookups: &mut u64, mut res: Resolved) -> Resolved {
    let deferred = match std::mem::replace(&mut res.lookup, Lookup::NoRegion) {
        Lookup::Deferred(deferred) => deferred,
        other => {
            res.lookup = other;
            return res;
        }
    };
    let key = deferred.key();
    let answer = match memo.get(&key) {
        Some((_, kept)) => recall(kept),
        None => {
            *lookups += 1;
            let answer = deferred.lookup();
            crate::base::insert_bounded(memo, MEMO_MAX, key, (deferred, keep(&answer)));
            answer
        }
    };
    res.lookup = answer.map_or_else(Lookup::Failed, Lookup::Code);
    res
}
