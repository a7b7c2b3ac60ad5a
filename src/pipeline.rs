//! Rendering on a second thread.
//!
//! The filter's work splits in two halves of similar cost: scanning,
//! lexing and resolving (which must see the lines in order, with the
//! context state machine and the symbolizer), and rendering and writing
//! (which must also keep the order). They run on two threads: the filter
//! turns each line into an owned [`Job`] (bytes copied into a [`Batch`],
//! elements by index, answers shared), and the render thread plays the jobs
//! through the [`Render`] implementation in order. Renderers see the same
//! borrowed [`Event`]s either way.
//!
//! Batches travel through a bounded channel, so memory stays bounded when
//! the output is slower than the input. A write error ends the render
//! thread; the filter sees it at its next hand-over and stops.

use std::io::{self, Write};
use std::ops::Range;
use std::sync::mpsc::Receiver;

use crate::markup::{HexPair, Node, RawElement, Sgr};
use crate::render::{ContextEvent, Event, HexValue, Line, Render, Resolved};

/// Batches in flight between the threads (each at most a read chunk).
pub(crate) const BATCHES_IN_FLIGHT: usize = 4;
/// A batch is handed over once it holds this many bytes.
pub(crate) const BATCH_BYTES: usize = 128 << 10;

/// Lines and their jobs, handed over together.
#[derive(Default)]
pub(crate) struct Batch {
    pub bytes: Vec<u8>,
    pub jobs: Vec<Job>,
}

impl Batch {
    /// Copy `b` in; its range in [`Batch::bytes`].
    pub fn keep(&mut self, b: &[u8]) -> Range<usize> {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(b);
        start..self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }
}

/// One call into the renderer (or the writer), in output order.
pub(crate) enum Job {
    /// [`Render::plain`].
    Plain { text: Range<usize>, first_line: u64 },
    /// [`Render::raw`].
    Raw(Range<usize>),
    /// [`Render::dumpfile_note`].
    Note(serde_json::Value),
    /// [`Render::line`], then the dumpfile lines that follow it.
    Line(LineJob),
    /// Write out everything so far (the filter is about to block).
    Flush,
    /// [`Render::idle`], then as [`Job::Flush`]: the filter is about to read
    /// more input.
    Idle,
}

pub(crate) struct LineJob {
    pub bytes: Range<usize>,
    pub ending: &'static [u8],
    pub number: u64,
    pub nodes: Vec<Node>,
    pub events: Vec<OwnedEvent>,
    /// Dumpfile summary lines printed after the line.
    pub after: String,
}

/// An [`Event`] that owns its data: slices become ranges in the line, and
/// elements indices into the line's nodes.
pub(crate) enum OwnedEvent {
    Text(Range<usize>),
    Sgr(Sgr, Range<usize>),
    Invalid(usize),
    Unknown(usize),
    Context(usize, ContextEvent),
    Symbol(usize, Range<usize>),
    Pc(usize, Resolved),
    Bt(usize, u64, Resolved),
    Data(usize, Resolved),
    Hexdict(usize, Vec<OwnedHexValue>),
    Dumpfile(usize),
}

pub(crate) struct OwnedHexValue {
    key: Range<usize>,
    value_at: usize,
    value_text: Range<usize>,
    value: u64,
    resolved: Resolved,
}

/// Where `part` lies in `line` (it was cut from it; anything else gives an
/// empty range rather than a wrong one).
fn range_in(line: &[u8], part: &[u8]) -> Range<usize> {
    let start = (part.as_ptr() as usize).wrapping_sub(line.as_ptr() as usize);
    match start.checked_add(part.len()) {
        Some(end) if end <= line.len() => start..end,
        _ => 0..0,
    }
}

impl OwnedEvent {
    /// `ev` was made from `line`; `node` is the index of its element.
    pub fn new(ev: Event<'_>, line: &[u8], node: usize) -> OwnedEvent {
        match ev {
            Event::Text(t) => OwnedEvent::Text(range_in(line, t)),
            Event::Sgr(s, t) => OwnedEvent::Sgr(s, range_in(line, t)),
            Event::Invalid(_) => OwnedEvent::Invalid(node),
            Event::Unknown(_) => OwnedEvent::Unknown(node),
            Event::Context(_, c) => OwnedEvent::Context(node, c),
            Event::Symbol(_, name) => OwnedEvent::Symbol(node, range_in(line, name)),
            Event::Pc(_, r) => OwnedEvent::Pc(node, r),
            Event::Bt(_, n, r) => OwnedEvent::Bt(node, n, r),
            Event::Data(_, r) => OwnedEvent::Data(node, r),
            Event::Hexdict(_, values) => OwnedEvent::Hexdict(
                node,
                values
                    .into_iter()
                    .map(|v| OwnedHexValue {
                        key: range_in(line, v.pair.key),
                        value_at: v.pair.value_at,
                        value_text: range_in(line, v.pair.value_text),
                        value: v.pair.value,
                        resolved: v.resolved,
                    })
                    .collect(),
            ),
            Event::Dumpfile(_) => OwnedEvent::Dumpfile(node),
        }
    }

    /// The event again, borrowing from the line and its nodes. `None` only
    /// if `node` is not an element (it always is).
    fn event<'a>(&'a self, line: &'a [u8], nodes: &'a [Node]) -> Option<Event<'a>> {
        let el = |i: usize| -> Option<&'a RawElement> {
            match nodes.get(i)? {
                Node::Element(raw) => Some(raw),
                _ => None,
            }
        };
        let text = |r: &Range<usize>| line.get(r.clone()).unwrap_or_default();
        Some(match self {
            OwnedEvent::Text(r) => Event::Text(text(r)),
            OwnedEvent::Sgr(s, r) => Event::Sgr(*s, text(r)),
            OwnedEvent::Invalid(i) => Event::Invalid(el(*i)?),
            OwnedEvent::Unknown(i) => Event::Unknown(el(*i)?),
            OwnedEvent::Context(i, c) => Event::Context(el(*i)?, c.clone()),
            OwnedEvent::Symbol(i, r) => Event::Symbol(el(*i)?, text(r)),
            OwnedEvent::Pc(i, r) => Event::Pc(el(*i)?, r.clone()),
            OwnedEvent::Bt(i, n, r) => Event::Bt(el(*i)?, *n, r.clone()),
            OwnedEvent::Data(i, r) => Event::Data(el(*i)?, r.clone()),
            OwnedEvent::Hexdict(i, values) => Event::Hexdict(
                el(*i)?,
                values
                    .iter()
                    .map(|v| HexValue {
                        pair: HexPair {
                            key: text(&v.key),
                            value_at: v.value_at,
                            value_text: text(&v.value_text),
                            value: v.value,
                        },
                        resolved: v.resolved.clone(),
                    })
                    .collect(),
            ),
            OwnedEvent::Dumpfile(i) => Event::Dumpfile(el(*i)?),
        })
    }
}

/// The render thread: play every batch's jobs in order until the filter
/// hangs up or a write fails.
pub(crate) fn play_all(
    render: &mut dyn Render,
    out: &mut dyn Write,
    batches: Receiver<Batch>,
) -> io::Result<()> {
    for batch in batches {
        let Batch { bytes, jobs } = batch;
        for job in jobs {
            play(render, out, &bytes, job)?;
        }
    }
    Ok(())
}

fn play(render: &mut dyn Render, out: &mut dyn Write, bytes: &[u8], job: Job) -> io::Result<()> {
    let get = |r: Range<usize>| bytes.get(r).unwrap_or_default();
    match job {
        Job::Plain { text, first_line } => render.plain(out, get(text), first_line),
        Job::Raw(r) => render.raw(out, get(r)),
        Job::Note(v) => {
            render.dumpfile_note(v);
            Ok(())
        }
        Job::Flush => out.flush(),
        Job::Idle => {
            render.idle(out)?;
            out.flush()
        }
        Job::Line(l) => {
            let line_bytes = get(l.bytes.clone());
            let events: Vec<Event<'_>> = l
                .events
                .iter()
                .filter_map(|e| e.event(line_bytes, &l.nodes))
                .collect();
            let line = Line {
                bytes: line_bytes,
                ending: l.ending,
                number: l.number,
            };
            render.line(out, &line, &events)?;
            if !l.after.is_empty() {
                crate::dumpfile::write_after(out, &line, &l.after)?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_of_parts() {
        let line = b"abc{{{pc:0x1}}}def";
        assert_eq!(range_in(line, &line[3..15]), 3..15);
        assert_eq!(range_in(line, &line[18..]), 18..18);
        // Not a part of the line: empty, never out of bounds.
        assert_eq!(range_in(line, b"elsewhere"), 0..0);
    }
}
