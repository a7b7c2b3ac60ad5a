//! Read-ahead: when the log is a regular file, a second thread runs the
//! same filter over the same bytes a little in front of the one that writes
//! the output, with a renderer that prints nothing ([`Discard`]). It does
//! the expensive part of first lookups (parsing units' functions and line
//! programs) while the writing thread renders earlier lines, and hands each
//! answer over (`handover.rs`), which also decides which thread looks up
//! what (by address region, so that the threads mostly parse different
//! units). Each thread's symbolizer sees its side of the hand-over as its
//! [`AnswerSupplier`](crate::symbols::AnswerSupplier).
//!
//! Nothing the user sees depends on it: answers are the same whichever
//! thread computes them, and the writing filter computes any answer that
//! will not come. The read-ahead thread has its own symbolizer and memo,
//! but a module both threads open from the same files is one module (see
//! [`crate::elf`]): what one thread parses of its DWARF, the other finds
//! parsed. It reads the log files by position
//! (`pread`, so a shared standard input's offset is untouched), stays at
//! most [`LEAD`] bytes in front, and stops when the writing side is done.
//!
//! Here are its setup ([`ReadAhead::start`]), its reader and its
//! renderer; the hand-over of answers is in `handover.rs`.

mod handover;

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::Duration;

use crate::filter::{Filter, Options};
use crate::render::{Demangler, Event, Line, Lookup, Render, Resolved};
use crate::report::Silent;
use crate::symbols::Symbolizer;
pub use handover::Stats;
use handover::{SharedAnswers, Sharing};

/// How far the read-ahead may run in front of the writing filter, in input
/// bytes: far enough to stay ahead through a stretch of new addresses,
/// near enough that what it hands over is taken soon.
pub const LEAD: u64 = 8 << 20;

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
    answers: Arc<SharedAnswers>,
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
            // The writer's forgotten answers, dropped on the thread that
            // made most of them (also while waiting for the writer).
            self.shared.drop_retired();
            if self.progress.stop.load(Ordering::Relaxed) {
                return Ok(0);
            }
            // Never held back while not past the writer's line: the writer
            // may be waiting for an answer from here.
            let ahead = self.before + self.at;
            let writer = self.progress.read.load(Ordering::Relaxed);
            self.shared.set_far_ahead(ahead > writer + LEAD / 2);
            if ahead <= writer + LEAD || !self.shared.ahead_of_writer() {
                break;
            }
            // Far enough in front: what is held back is handed over first.
            self.shared.flush();
            thread::sleep(Duration::from_millis(1));
        }
        let n = self.file.read_at(buf, self.start + self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

impl ReadAhead {
    /// Start a read-ahead for the writing filter that will be built with
    /// `opts` and `writer` (which from now on takes answers from it), over
    /// `inputs` in order, on its own thread. `behind` is the read-ahead's
    /// own symbolizer over the same local sources (no network: a download
    /// is the writing side's to make and report). The files must be
    /// regular files holding what the writing filter will read, in the
    /// same order. The read-ahead's filter is built from a clone of `opts`:
    /// it asks every lookup with the writer's wants ([`Options::wants`]),
    /// so the answers it hands over are to the writer's questions.
    pub fn start(
        opts: &Options,
        writer: &mut Symbolizer,
        mut behind: Symbolizer,
        inputs: Vec<ReadFrom>,
    ) -> io::Result<ReadAhead> {
        let answers = Arc::new(SharedAnswers::default());
        behind.supplied_by(Arc::new(Sharing::Ahead(Arc::clone(&answers))));
        let mut filter = looking_ahead(opts.clone(), behind);
        let progress = Arc::new(Progress::default());
        let shared = Arc::clone(&progress);
        let on_failure = Arc::clone(&answers);
        let handed = Arc::clone(&answers);
        let spawned = thread::Builder::new()
            .name("read-ahead".into())
            .spawn(move || {
                // However the thread ends (a panic included), the writer
                // stops waiting for it.
                let _done = Done(Arc::clone(&answers));
                crate::base::heap::advise_this_thread();
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
        writer.supplied_by(Arc::new(Sharing::Writer(Arc::clone(&handed))));
        Ok(ReadAhead {
            progress,
            answers: handed,
        })
    }

    /// What the read-ahead did for the writer.
    pub fn stats(&self) -> Stats {
        self.answers.stats()
    }
}

/// The read-ahead's filter, over `symbolizer` with the writer's `opts`:
/// the same lexing, context and lookups, a renderer that writes nothing,
/// no diagnostics, no dumpfiles, no background searches.
fn looking_ahead(mut opts: Options, mut symbolizer: Symbolizer) -> Filter {
    // Nothing here may reach a file or a terminal.
    opts.explain = false;
    opts.dumpfile = None;
    symbolizer.search_in_background(false);
    let mut filter = Filter::new(opts, symbolizer, Arc::new(Silent));
    filter.print_through(|render| Box::new(Discard::like(render.as_ref())));
    filter.set_input_never_blocks(true);
    filter
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

/// The read-ahead filter's renderer: writes nothing, and demangles the
/// names of each code answer as the writing filter's renderer will.
pub struct Discard {
    /// The real renderer's demangler: the names of each code answer are
    /// demangled here once, on the read-ahead thread, and kept in the
    /// names, where the writing thread's renderer finds them (see
    /// [`crate::demangle`]).
    demangle: Option<Demangler>,
}

impl Discard {
    /// A renderer demangling as `render` does.
    pub fn like(render: &dyn Render) -> Discard {
        Discard {
            demangle: render.demangler(),
        }
    }

    fn warm(&mut self, resolved: &Resolved) {
        let (Some(demangle), Lookup::Code(info)) = (self.demangle, &resolved.lookup) else {
            return;
        };
        for name in info.names() {
            demangle(name);
        }
    }
}

impl Render for Discard {
    fn plain(&mut self, _: &mut dyn Write, _: &[u8], _: u64) -> io::Result<()> {
        Ok(())
    }
    fn line(&mut self, _: &mut dyn Write, _: &Line<'_>, events: &[Event<'_>]) -> io::Result<()> {
        for event in events {
            match event {
                Event::Pc(_, resolved) | Event::Bt(_, _, resolved) => self.warm(resolved),
                Event::Hexdict(_, values) => values.iter().for_each(|v| self.warm(&v.resolved)),
                _ => {}
            }
        }
        Ok(())
    }
    fn raw(&mut self, _: &mut dyn Write, _: &[u8]) -> io::Result<()> {
        Ok(())
    }
    fn finish(&mut self, _: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markup::RawElement;
    use crate::render::{Format, RenderOptions, renderer};
    use crate::symbols::{CodeInfo, Frame};

    /// The read-ahead's renderer demangles the names in code answers, as
    /// the real renderer would, into the names all threads share.
    #[test]
    fn discard_demangles_code_answers_for_the_writer() {
        let name = "_ZN4test14warmed_by_read5ahead17h0123456789abcdefE";
        let info = CodeInfo {
            frames: smallvec::smallvec![Frame {
                function: Some(name.into()),
                ..Frame::default()
            }],
            symbol: None,
            ..CodeInfo::default()
        };
        let resolved = Resolved {
            addr: 1,
            adjusted: 1,
            place: None,
            lookup: Lookup::Code(Arc::new(info)),
        };
        let raw = RawElement {
            span: 0..0,
            tag: 0..0,
            fields: Default::default(),
        };
        let line = Line {
            bytes: b"",
            ending: b"\n",
            number: 1,
            lead: b"",
            key: None,
        };
        let opts = RenderOptions::default();
        let llvm = renderer(Format::Llvm, &opts);
        let mut discard = Discard::like(llvm.as_ref());
        discard
            .line(&mut io::sink(), &line, &[Event::Pc(&raw, resolved.clone())])
            .unwrap();
        let Lookup::Code(info) = &resolved.lookup else {
            unreachable!()
        };
        let name = info.frames[0].function.as_ref().unwrap();
        // The llvm renderer's demangling is not the human one's.
        assert!(name.made(crate::demangle::LLVM).is_some());
        assert!(name.made(crate::demangle::FULL).is_none());
        let human = renderer(Format::Human, &opts);
        let mut discard = Discard::like(human.as_ref());
        discard
            .line(&mut io::sink(), &line, &[Event::Pc(&raw, resolved.clone())])
            .unwrap();
        assert!(name.made(crate::demangle::FULL).is_some());
        assert_eq!(crate::demangle::full(name), "test::warmed_by_read::ahead");
    }
}
