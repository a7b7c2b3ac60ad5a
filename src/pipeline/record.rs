//! What the front thread hands the printing thread: each call the filter
//! made of its printer, with the bytes it was given copied into a batch
//! and every borrowed piece turned into a range of them.

use std::ops::Range;
use std::sync::Arc;

use crate::dumpfile::DumpReport;
use crate::markup::{HexPair, RawElement, Sgr};
use crate::render::{ContextEvent, Event, HexValue, Line, Render, Resolved};

/// A printer's number: one per printer the filter made (one, or one per
/// process under `--demux`).
pub(super) type PrinterId = u32;

/// Calls of the printers and of the output, in order, with what they were
/// given.
#[derive(Default)]
pub(super) struct Batch {
    /// Every byte the calls were given.
    pub(super) bytes: Vec<u8>,
    /// The elements the events name.
    pub(super) raws: Vec<RawElement>,
    pub(super) events: Vec<Recorded>,
    pub(super) calls: Vec<Call>,
}

/// One call, on the front thread, of a printer or of the output.
pub(super) enum Call {
    Plain {
        printer: PrinterId,
        text: Range<usize>,
        first_line: u64,
    },
    Line {
        printer: PrinterId,
        line: LineAt,
        /// How many of the batch's events are this line's (they follow the
        /// previous lines' in order).
        events: usize,
    },
    Raw(PrinterId, Range<usize>),
    Idle(PrinterId),
    Pause(PrinterId),
    Finish(PrinterId),
    /// A printer made (under `--demux`, one per process).
    Made(PrinterId, Box<dyn Render>),
    /// A printer dropped.
    Dropped(PrinterId),
    /// Bytes written to the output directly.
    Write(Range<usize>),
    Flush,
    /// A diagnostic, said in its place among the output.
    Report(OwnedReport),
    /// Everything before is written: tell the front thread.
    Signal(std::sync::mpsc::Sender<()>),
}

/// A [`Line`], its pieces as ranges of the batch's bytes.
pub(super) struct LineAt {
    bytes: Range<usize>,
    ending: Range<usize>,
    number: u64,
    lead: Range<usize>,
    key: Option<Range<usize>>,
}

/// An [`Event`], its pieces as ranges of the batch's bytes and numbers of
/// its elements.
pub(super) enum Recorded {
    Text(Range<usize>),
    Sgr(Sgr, Range<usize>),
    Invalid(usize),
    Unknown(usize),
    Context(usize, ContextEvent),
    Symbol(usize, Range<usize>),
    Pc(usize, Resolved),
    Bt(usize, u64, Resolved),
    Data(usize, Resolved),
    Hexdict(usize, Vec<RecordedValue>),
    Dumpfile(usize, Option<Arc<DumpReport>>),
}

/// A [`HexValue`], as [`Recorded`].
pub(super) struct RecordedValue {
    key: Range<usize>,
    value_at: usize,
    value_text: Range<usize>,
    value: u64,
    resolved: Resolved,
}

/// A [`crate::report::Report`] that is not progress, owned.
pub(super) enum OwnedReport {
    Diagnostic {
        input: String,
        line: u64,
        column: usize,
        message: String,
    },
    Warning(String),
    Note(String),
}

impl OwnedReport {
    pub(super) fn of(report: &crate::report::Report<'_>) -> Option<OwnedReport> {
        use crate::report::Report;
        Some(match *report {
            Report::Diagnostic {
                input,
                line,
                column,
                message,
            } => OwnedReport::Diagnostic {
                input: input.to_string(),
                line,
                column,
                message: message.to_string(),
            },
            Report::Warning(w) => OwnedReport::Warning(w.to_string()),
            Report::Note(n) => OwnedReport::Note(n.to_string()),
            Report::Progress(_) => return None,
        })
    }

    pub(super) fn give(&self, reporter: &dyn crate::report::Reporter) {
        use crate::report::Report;
        reporter.report(&match self {
            OwnedReport::Diagnostic {
                input,
                line,
                column,
                message,
            } => Report::Diagnostic {
                input,
                line: *line,
                column: *column,
                message,
            },
            OwnedReport::Warning(w) => Report::Warning(w),
            OwnedReport::Note(n) => Report::Note(n),
        });
    }
}

impl Batch {
    /// Whether nothing is in it.
    pub(super) fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Emptied, its buffers kept.
    pub(super) fn clear(&mut self) {
        self.bytes.clear();
        self.raws.clear();
        self.events.clear();
        self.calls.clear();
    }

    /// `b` copied in.
    pub(super) fn put(&mut self, b: &[u8]) -> Range<usize> {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(b);
        start..self.bytes.len()
    }

    /// `piece` as a range of the batch: inside the line copied at `at`
    /// when it is a piece of `line`, else copied in.
    fn piece(&mut self, line: &[u8], at: usize, piece: &[u8]) -> Range<usize> {
        let (l, p) = (line.as_ptr() as usize, piece.as_ptr() as usize);
        if p >= l && p + piece.len() <= l + line.len() {
            let start = at + (p - l);
            return start..start + piece.len();
        }
        self.put(piece)
    }

    /// The call `printer.line(line, events)`.
    pub(super) fn line(
        &mut self,
        printer: PrinterId,
        line: &Line<'_>,
        events: &mut Vec<Event<'_>>,
    ) {
        let bytes = self.put(line.bytes);
        let at = bytes.start;
        let ending = self.put(line.ending);
        let lead = self.piece(line.bytes, at, line.lead);
        let key = line.key.map(|k| self.piece(line.bytes, at, k));
        let count = events.len();
        for event in events.drain(..) {
            let raw = |batch: &mut Batch, raw: &RawElement| {
                batch.raws.push(raw.clone());
                batch.raws.len() - 1
            };
            let recorded = match event {
                Event::Text(t) => Recorded::Text(self.piece(line.bytes, at, t)),
                Event::Sgr(sgr, t) => Recorded::Sgr(sgr, self.piece(line.bytes, at, t)),
                Event::Invalid(r) => Recorded::Invalid(raw(self, r)),
                Event::Unknown(r) => Recorded::Unknown(raw(self, r)),
                Event::Context(r, c) => Recorded::Context(raw(self, r), c),
                Event::Symbol(r, name) => {
                    let r = raw(self, r);
                    Recorded::Symbol(r, self.piece(line.bytes, at, name))
                }
                Event::Pc(r, res) => Recorded::Pc(raw(self, r), res),
                Event::Bt(r, n, res) => Recorded::Bt(raw(self, r), n, res),
                Event::Data(r, res) => Recorded::Data(raw(self, r), res),
                Event::Hexdict(r, values) => {
                    let r = raw(self, r);
                    let values = values
                        .into_iter()
                        .map(|v| RecordedValue {
                            key: self.piece(line.bytes, at, v.pair.key),
                            value_at: v.pair.value_at,
                            value_text: self.piece(line.bytes, at, v.pair.value_text),
                            value: v.pair.value,
                            resolved: v.resolved,
                        })
                        .collect();
                    Recorded::Hexdict(r, values)
                }
                Event::Dumpfile(r, report) => Recorded::Dumpfile(raw(self, r), report),
            };
            self.events.push(recorded);
        }
        self.calls.push(Call::Line {
            printer,
            line: LineAt {
                bytes,
                ending,
                number: line.number,
                lead,
                key,
            },
            events: count,
        });
    }
}

/// A recorded line's events, borrowing `bytes` and `raws`, each answer
/// passed through `complete` first.
pub(super) fn events<'a>(
    bytes: &'a [u8],
    raws: &'a [RawElement],
    recorded: impl Iterator<Item = Recorded>,
    list: &mut Vec<Event<'a>>,
    complete: &mut impl FnMut(Resolved) -> Resolved,
) {
    for r in recorded {
        let b = |r: &Range<usize>| &bytes[r.clone()];
        list.push(match r {
            Recorded::Text(t) => Event::Text(b(&t)),
            Recorded::Sgr(sgr, t) => Event::Sgr(sgr, b(&t)),
            Recorded::Invalid(i) => Event::Invalid(&raws[i]),
            Recorded::Unknown(i) => Event::Unknown(&raws[i]),
            Recorded::Context(i, c) => Event::Context(&raws[i], c),
            Recorded::Symbol(i, name) => Event::Symbol(&raws[i], b(&name)),
            Recorded::Pc(i, res) => Event::Pc(&raws[i], complete(res)),
            Recorded::Bt(i, n, res) => Event::Bt(&raws[i], n, complete(res)),
            Recorded::Data(i, res) => Event::Data(&raws[i], complete(res)),
            Recorded::Hexdict(i, values) => Event::Hexdict(
                &raws[i],
                values
                    .into_iter()
                    .map(|v| HexValue {
                        pair: HexPair {
                            key: b(&v.key),
                            value_at: v.value_at,
                            value_text: b(&v.value_text),
                            value: v.value,
                        },
                        resolved: complete(v.resolved),
                    })
                    .collect(),
            ),
            Recorded::Dumpfile(i, report) => Event::Dumpfile(&raws[i], report),
        });
    }
}

impl LineAt {
    /// The line, borrowing `bytes`.
    pub(super) fn line<'a>(&self, bytes: &'a [u8]) -> Line<'a> {
        Line {
            bytes: &bytes[self.bytes.clone()],
            ending: &bytes[self.ending.clone()],
            number: self.number,
            lead: &bytes[self.lead.clone()],
            key: self.key.clone().map(|k| &bytes[k]),
        }
    }
}
