//! `--format=llvm`: byte-for-byte what `llvm-symbolizer --filter-markup`
//! (LLVM 22) writes to stdout, including its module info lines, line
//! elision, `[[[...]]]` reprints, line endings and `--color=always` escape
//! forms; `tests/llvm_diff.rs` checks it against the real tool.
//!
//! Names (modules, symbols, files) are written raw, control characters
//! included, as LLVM writes them: this format's job is LLVM's bytes. The
//! human format escapes them ([`crate::escape`]).

use std::collections::HashSet;
use std::io::{self, Write};
use std::ops::Range;
use std::sync::Arc;

use super::kept::{Made, PerAnswer, Spans, SpansView};
use super::num::Hex;
use super::{ContextEvent, Event, Line, Lookup, Render, Resolved};
use crate::context::{Module, Region};
use crate::demangle;
use crate::markup::{RawElement, Sgr};
use crate::symbols::{BuildId, CodeInfo};

const BLUE: u8 = 4;
const CYAN: u8 = 6;
const GREEN: u8 = 2;
const BAD: &str = "<invalid>";

/// The open `[[[ELF module ...` line.
struct InfoLine {
    module: u64,
    regions: Vec<Region>,
}

pub struct Llvm {
    colors: bool,
    color: Option<u8>,
    bold: bool,
    info: Option<InfoLine>,
    /// Whether the last line seen ended in `\r\n` (for output at EOF).
    last_crlf: bool,
    /// Frames as LLVM prints them, per shared answer.
    kept: PerAnswer<Answer>,
    /// A new answer's frames, made here first (and shown from here the
    /// first time it is asked for).
    made: MadeFrames,
    /// The frames of a failed lookup.
    failed: Answer,
    /// Modules whose file was found unreadable by an element printed
    /// already: LLVM has cached them as bad since (see [`Llvm::bad_module`]).
    bad_modules: HashSet<BuildId>,
    /// The line being rendered (see [`Llvm::buffered`]).
    line_buf: Vec<u8>,
    /// Output after the last line ending written, held until its line
    /// ends: a module's line is finished by the next line, and meanwhile
    /// a diagnostic written to a stream shared with the output (`2>&1`)
    /// must not land inside it, nor, under `--demux`, another process's
    /// line.
    unfinished: Vec<u8>,
    /// Under `--demux`: other processes' lines come between this
    /// printer's, so the colour escapes after a line's end wait for its
    /// next line too (elsewhere they go out with the line they end, and
    /// a diagnostic written meanwhile is not shown in a module line's
    /// colours).
    interleaved: bool,
    /// Where in the line buffer a module line began, if one did.
    head_at: Option<usize>,
}

/// One frame as LLVM's `DILineInfo` holds it, its texts in its
/// [`Answer`]'s buffer (copied there once: the frame holds no shared
/// names, so making and dropping it touches no other thread's counts).
#[derive(Clone)]
struct LFrame {
    function: Range<usize>,
    file: Range<usize>,
    line: u32,
    column: u32,
    /// `FUNCTION FILE:LINE:COLUMN ` as a `bt` frame prints it without
    /// colour; empty for an empty frame.
    body: Range<usize>,
}

impl LFrame {
    fn is_empty(&self) -> bool {
        self.body.is_empty()
    }
}

/// A code answer as LLVM prints it, kept: its frames and their texts in
/// one buffer.
type Answer = Spans<LFrame>;

/// A code answer's frames and their texts, as made.
type MadeFrames = Made<LFrame>;

/// Where a code answer to show is: kept, just made in [`Llvm::made`]
/// (asked for the first time), or that of a failed lookup.
enum Shown {
    Kept(Answer),
    Made,
    Failed,
}

/// A code answer's frames and their texts, as shown.
type View<'a> = SpansView<'a, LFrame>;

impl<'a> View<'a> {
    fn function(&self, f: &LFrame) -> &'a [u8] {
        self.span(&f.function)
    }
    fn file(&self, f: &LFrame) -> &'a [u8] {
        self.span(&f.file)
    }
    fn body(&self, f: &LFrame) -> &'a [u8] {
        self.span(&f.body)
    }
}

/// The frames LLVM's symbolizer would give for `info`, made in `made`:
/// DWARF frames innermost first (one empty frame when none), the outermost
/// one named from the symbol table when a symbol covers the address.
fn llvm_frames(made: &mut MadeFrames, info: &CodeInfo) {
    let MadeFrames {
        frames,
        text: scratch,
    } = made;
    scratch.clear();
    frames.clear();
    let last = info.frames.len().saturating_sub(1);
    let frame = |i: usize| {
        let (mut function, mut file, line, column) = match info.frames.get(i) {
            Some(f) => (
                match (&info.symbol, i == last) {
                    // Named from the symbol below.
                    (Some(_), true) => None,
                    _ => f.function.as_ref().map(demangle::llvm),
                },
                f.file.as_ref(),
                f.line,
                f.column,
            ),
            None => (None, None, 0, 0),
        };
        if i == last
            && let Some(sym) = &info.symbol
        {
            function = Some(demangle::llvm(&sym.name));
            if file.is_none_or(|f| &**f == BAD) {
                file = sym.file.as_ref().or(file);
            }
        }
        let function = function.unwrap_or(BAD);
        let file = file.map_or(BAD, |f| &**f);
        let empty = function == BAD && file == BAD && line == 0 && column == 0;
        let start = scratch.len();
        let function = push_span(scratch, function);
        let mut num = itoa::Buffer::new();
        let file = if empty {
            push_span(scratch, file)
        } else {
            scratch.push(b' ');
            let file = push_span(scratch, file);
            scratch.push(b':');
            scratch.extend_from_slice(num.format(line).as_bytes());
            scratch.push(b':');
            scratch.extend_from_slice(num.format(column).as_bytes());
            scratch.push(b' ');
            file
        };
        LFrame {
            body: if empty {
                start..start
            } else {
                start..scratch.len()
            },
            function,
            file,
            line,
            column,
        }
    };
    frames.extend((0..info.frames.len().max(1)).map(frame));
}

/// Where `text` lands when appended to `buf`.
fn push_span(buf: &mut Vec<u8>, text: &str) -> Range<usize> {
    let at = buf.len();
    buf.extend_from_slice(text.as_bytes());
    at..buf.len()
}

/// Write the escape that sets colour `c` (a digit), bold or not.
fn sgr_color(out: &mut Vec<u8>, c: u8, bold: bool) {
    out.extend_from_slice(if bold { b"\x1b[0;1;3" } else { b"\x1b[0;3" });
    out.extend_from_slice(itoa::Buffer::new().format(c).as_bytes());
    out.push(b'm');
}

impl Llvm {
    pub fn new(colors: bool) -> Llvm {
        Llvm {
            colors,
            color: None,
            bold: false,
            info: None,
            last_crlf: false,
            kept: PerAnswer::default(),
            bad_modules: HashSet::new(),
            line_buf: Vec::new(),
            unfinished: Vec::new(),
            interleaved: false,
            head_at: None,
            // What a lookup that found nothing gives: one empty frame.
            failed: {
                let mut made = MadeFrames::default();
                llvm_frames(&mut made, &CodeInfo::default());
                made.kept()
            },
            made: MadeFrames::default(),
        }
    }

    /// A printer among others on one output (under `--demux`): the
    /// escapes after a line's end wait with the unfinished line for this
    /// printer's next line.
    pub fn interleaved(mut self) -> Llvm {
        self.interleaved = true;
        self
    }

    /// For a lookup whose module file is unreadable: whether LLVM has
    /// already cached the module as bad. The first element that needs it
    /// gets the error (and prints raw); later ones get an empty answer. Only
    /// elements that are printed count: LLVM looks nothing up for the
    /// elements of a line it elides.
    fn bad_module(&mut self, res: &Resolved) -> bool {
        match (&res.lookup, &res.place) {
            (Lookup::Unreadable, Some(place)) => {
                !self.bad_modules.insert(place.module.build_id.clone())
            }
            _ => false,
        }
    }

    /// [`llvm_frames`] for `info`: kept from the third time it is asked
    /// for (see [`PerAnswer::kept_or_made`]).
    fn frames(&mut self, info: &Arc<CodeInfo>) -> Shown {
        match self.kept.kept_or_made(info, &mut self.made, llvm_frames) {
            Some(answer) => Shown::Kept(answer),
            None => Shown::Made,
        }
    }

    /// The frames of `shown`.
    fn view<'a>(&'a self, shown: &'a Shown) -> View<'a> {
        match shown {
            Shown::Kept(answer) => answer.view(),
            Shown::Made => self.made.view(),
            Shown::Failed => self.failed.view(),
        }
    }

    fn ending(crlf: bool) -> &'static [u8] {
        if crlf { b"\r\n" } else { b"\n" }
    }

    fn highlight(&self, out: &mut Vec<u8>) -> io::Result<()> {
        if !self.colors {
            return Ok(());
        }
        let c = if self.color == Some(BLUE) { CYAN } else { BLUE };
        sgr_color(out, c, self.bold);
        Ok(())
    }

    fn value(&self, out: &mut Vec<u8>, v: &[u8]) -> io::Result<()> {
        if self.colors {
            sgr_color(out, GREEN, self.bold);
        }
        out.write_all(v)?;
        self.highlight(out)
    }

    fn restore(&self, out: &mut Vec<u8>) -> io::Result<()> {
        if !self.colors {
            return Ok(());
        }
        match self.color {
            Some(c) => {
                sgr_color(out, c, self.bold);
                Ok(())
            }
            None => {
                out.write_all(b"\x1b[0m")?;
                if self.bold {
                    out.write_all(b"\x1b[1m")?;
                }
                Ok(())
            }
        }
    }

    fn reset_color(&mut self, out: &mut Vec<u8>) -> io::Result<()> {
        if self.color.is_none() && !self.bold {
            return Ok(());
        }
        self.color = None;
        self.bold = false;
        if self.colors {
            out.write_all(b"\x1b[0m")?;
        }
        Ok(())
    }

    fn begin_info(&mut self, out: &mut Vec<u8>, m: &Module) -> io::Result<()> {
        self.head_at = Some(out.len());
        self.highlight(out)?;
        out.write_all(b"[[[ELF module")?;
        self.value(out, format!(" #{:#x} ", m.id).as_bytes())?;
        out.write_all(b"\"")?;
        self.value(out, &m.name)?;
        out.write_all(b"\"")?;
        self.info = Some(InfoLine {
            module: m.id,
            regions: Vec::new(),
        });
        Ok(())
    }

    fn end_info(&mut self, out: &mut Vec<u8>, crlf: bool) -> io::Result<()> {
        let Some(mut info) = self.info.take() else {
            return Ok(());
        };
        info.regions.sort_by_key(|r| r.start);
        let first = info.regions.first().map(|r| r.start);
        for r in &info.regions {
            // LLVM compares with the first entry by identity; a duplicate
            // size-0 mmap is the same entry listed twice.
            out.write_all(if Some(r.start) == first { b" [" } else { b",[" })?;
            self.value(out, format!("{:#x}", r.start).as_bytes())?;
            out.write_all(b"-")?;
            self.value(out, format!("{:#x}", r.last()).as_bytes())?;
            out.write_all(b"](")?;
            self.value(out, r.mode.as_str().as_bytes())?;
            out.write_all(b")")?;
        }
        out.write_all(b"]]]")?;
        out.write_all(Self::ending(crlf))?;
        self.restore(out)
    }

    /// Ends the open module line, then starts `line` anew: its lead and
    /// the nodes of `events` (those before a context element, or all of a
    /// line that has none).
    fn lead_and_nodes(
        &mut self,
        out: &mut Vec<u8>,
        crlf: bool,
        line: &Line<'_>,
        events: &[Event<'_>],
    ) -> io::Result<()> {
        self.end_info(out, crlf)?;
        out.write_all(line.lead)?;
        for ev in events {
            self.node(out, line, ev)?;
        }
        Ok(())
    }

    fn raw_element(&self, out: &mut Vec<u8>, line: &[u8], el: &RawElement) -> io::Result<()> {
        self.highlight(out)?;
        out.write_all(b"[[[")?;
        self.value(out, el.tag(line))?;
        for f in &el.fields {
            out.write_all(b":")?;
            self.value(out, &line[f.clone()])?;
        }
        out.write_all(b"]]]")?;
        self.restore(out)
    }

    /// Print a node of a line known not to be contextual (`filterNode`).
    fn node(&mut self, out: &mut Vec<u8>, line: &Line<'_>, ev: &Event<'_>) -> io::Result<()> {
        let bytes = line.bytes;
        match ev {
            Event::Text(t) => out.write_all(t),
            Event::Sgr(sgr, _) => self.sgr(out, *sgr),
            // LLVM knows neither dumpfile nor hexdict: it prints them back
            // whatever their fields.
            Event::Invalid(el) if matches!(el.tag(bytes), b"dumpfile" | b"hexdict") => {
                out.write_all(el.text(bytes))
            }
            Event::Invalid(_) | Event::Context(..) => Ok(()),
            Event::Unknown(el) | Event::Dumpfile(el, _) | Event::Hexdict(el, _) => {
                out.write_all(el.text(bytes))
            }
            Event::Symbol(_, name) => {
                self.highlight(out)?;
                match std::str::from_utf8(name) {
                    Ok(name) => out.write_all(demangle::llvm_str(name).as_bytes())?,
                    Err(_) => out.write_all(name)?,
                }
                self.restore(out)
            }
            Event::Pc(el, res) => self.pc(out, bytes, el, res),
            Event::Bt(el, frame, res) => self.bt(out, line, el, *frame, res),
            Event::Data(el, res) => self.data(out, bytes, el, res),
        }
    }

    fn sgr(&mut self, out: &mut Vec<u8>, sgr: Sgr) -> io::Result<()> {
        match sgr {
            Sgr::Reset => self.reset_color(out),
            Sgr::Bold => {
                self.bold = true;
                if self.colors {
                    out.write_all(b"\x1b[1m")?;
                }
                Ok(())
            }
            Sgr::Color(c) => {
                self.color = Some(c);
                if self.colors {
                    sgr_color(out, c, false);
                }
                Ok(())
            }
        }
    }

    fn pc(
        &mut self,
        out: &mut Vec<u8>,
        line: &[u8],
        el: &RawElement,
        res: &Resolved,
    ) -> io::Result<()> {
        self.bad_module(res);
        let info = match &res.lookup {
            Lookup::Code(info) => info,
            _ => return self.raw_element(out, line, el),
        };
        let shown = self.frames(info);
        let answer = self.view(&shown);
        let frames = answer.frames;
        let (Some(inner), Some(outer)) = (frames.first(), frames.last()) else {
            return self.raw_element(out, line, el);
        };
        if inner.is_empty() && outer.is_empty() {
            return self.raw_element(out, line, el);
        }
        // LLVM's line lookup gives a symbol's `STT_FILE` name only where no
        // unit claims the address (its inlining lookup, `bt`'s, gives it
        // wherever the debug info names no file).
        let file = if info.claimed {
            BAD.as_bytes()
        } else {
            answer.file(inner)
        };
        self.highlight(out)?;
        self.value(out, answer.function(outer))?;
        out.write_all(b"[")?;
        self.value(out, file)?;
        out.write_all(b":")?;
        self.value(out, itoa::Buffer::new().format(inner.line).as_bytes())?;
        out.write_all(b"]")?;
        self.restore(out)
    }

    fn bt(
        &mut self,
        out: &mut Vec<u8>,
        line: &Line<'_>,
        el: &RawElement,
        frame: u64,
        res: &Resolved,
    ) -> io::Result<()> {
        let (place, shown) = match (&res.place, &res.lookup) {
            (Some(place), Lookup::Code(info)) => (place, self.frames(info)),
            (Some(place), Lookup::Failed(_)) => (place, Shown::Failed),
            // A module cached as bad gives no frames at all.
            (Some(_), Lookup::Unreadable) if self.bad_module(res) => {
                self.highlight(out)?;
                return self.restore(out);
            }
            _ => return self.raw_element(out, line.bytes, el),
        };
        let answer = self.view(&shown);
        let frames = answer.frames;
        self.highlight(out)?;
        // `{:>6}` of `#N`, with only the number highlighted.
        let digits = frame.checked_ilog10().unwrap_or(0) as usize + 1;
        let pad = 5usize.saturating_sub(digits);
        let n = frames.len();
        let mut num = itoa::Buffer::new();
        let mut addr = [b' '; 20];
        addr[1..19].copy_from_slice(Hex::new(res.adjusted, 18).as_bytes());
        let rel = Hex::new(place.rel, 0);
        if !self.colors {
            // The same bytes as below; what all frames share is written
            // once and copied from the first frame's line.
            let (mut head, mut tail) = (0..0, 0..0);
            for (i, f) in frames.iter().enumerate() {
                if i == 0 {
                    let at = out.len();
                    out.extend_from_slice(&b"     "[..pad]);
                    out.push(b'#');
                    out.extend_from_slice(num.format(frame).as_bytes());
                    head = at..out.len();
                } else {
                    out.extend_from_within(head.clone());
                }
                if i == n - 1 {
                    out.extend_from_slice(b"   ");
                } else {
                    out.push(b'.');
                    let k = num.format(i + 1).as_bytes();
                    out.extend_from_slice(k);
                    if k.len() < 2 {
                        out.push(b' ');
                    }
                }
                out.extend_from_slice(&addr);
                out.extend_from_slice(answer.body(f));
                if i == 0 {
                    let at = out.len();
                    out.push(b'(');
                    out.extend_from_slice(&place.module.name);
                    out.push(b'+');
                    out.extend_from_slice(rel.as_bytes());
                    out.push(b')');
                    tail = at..out.len();
                } else {
                    out.extend_from_within(tail.clone());
                }
                if i != n - 1 {
                    out.extend_from_slice(Self::ending(line.crlf()));
                    out.extend_from_slice(line.lead);
                }
            }
            return Ok(());
        }
        for (i, f) in frames.iter().enumerate() {
            out.write_all(&b"     "[..pad])?;
            out.write_all(b"#")?;
            self.value(out, num.format(frame).as_bytes())?;
            if i == n - 1 {
                out.write_all(b"   ")?;
            } else {
                out.write_all(b".")?;
                // `{:<2}`
                let k = num.format(i + 1).as_bytes();
                if k.len() < 2 {
                    let mut padded = [b' '; 2];
                    padded[..k.len()].copy_from_slice(k);
                    self.value(out, &padded)?;
                } else {
                    self.value(out, k)?;
                }
            }
            self.value(out, &addr)?;
            if !self.colors {
                out.write_all(answer.body(f))?;
            } else if !f.is_empty() {
                self.value(out, answer.function(f))?;
                out.write_all(b" ")?;
                self.value(out, answer.file(f))?;
                out.write_all(b":")?;
                self.value(out, num.format(f.line).as_bytes())?;
                out.write_all(b":")?;
                self.value(out, num.format(f.column).as_bytes())?;
                out.write_all(b" ")?;
            }
            out.write_all(b"(")?;
            self.value(out, &place.module.name)?;
            out.write_all(b"+")?;
            self.value(out, rel.as_bytes())?;
            out.write_all(b")")?;
            if i != n - 1 {
                out.write_all(Self::ending(line.crlf()))?;
                out.write_all(line.lead)?;
            }
        }
        self.restore(out)
    }

    fn data(
        &mut self,
        out: &mut Vec<u8>,
        line: &[u8],
        el: &RawElement,
        res: &Resolved,
    ) -> io::Result<()> {
        let name = match &res.lookup {
            Lookup::Data(d) => d.symbol.as_ref().map_or(BAD, |s| demangle::llvm(&s.name)),
            Lookup::Failed(_) => BAD,
            Lookup::Unreadable if self.bad_module(res) => BAD,
            _ => return self.raw_element(out, line, el),
        };
        self.highlight(out)?;
        out.write_all(name.as_bytes())?;
        self.restore(out)
    }
}

impl Render for Llvm {
    fn plain(&mut self, out: &mut dyn Write, text: &[u8], _first_line: u64) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        if self.info.is_some() || self.color.is_some() || self.bold {
            let crlf = super::first_line_crlf(text);
            self.buffered(out, |me, buf| {
                me.reset_color(buf)?;
                me.end_info(buf, crlf)
            })?;
        }
        self.last_crlf = text.len() >= 2 && text[text.len() - 2] == b'\r';
        self.write_held(out)?;
        out.write_all(text)
    }

    fn line(
        &mut self,
        out: &mut dyn Write,
        line: &Line<'_>,
        events: &[Event<'_>],
    ) -> io::Result<()> {
        self.buffered(out, |me, buf| me.render_line(buf, line, events))
    }

    /// An over-long line is plain text to LLVM (which has no limit): it
    /// ends the open module line first. Its ending is not known yet: the
    /// module line gets the one of the last line seen.
    fn raw(&mut self, out: &mut dyn Write, bytes: &[u8]) -> io::Result<()> {
        if self.info.is_some() || self.color.is_some() || self.bold {
            let crlf = self.last_crlf;
            self.buffered(out, |me, buf| {
                me.reset_color(buf)?;
                me.end_info(buf, crlf)
            })?;
        }
        self.write_held(out)?;
        out.write_all(bytes)
    }

    fn finish(&mut self, out: &mut dyn Write) -> io::Result<()> {
        let crlf = self.last_crlf;
        self.buffered(out, |me, buf| {
            me.end_info(buf, crlf)?;
            me.reset_color(buf)
        })?;
        self.write_held(out)
    }
}

impl Llvm {
    /// Write what is held of an unfinished line (bytes given to the writer
    /// directly continue it).
    fn write_held(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if self.unfinished.is_empty() {
            return Ok(());
        }
        let written = out.write_all(&self.unfinished);
        self.unfinished.clear();
        written
    }

    /// Render into the line buffer with `f`, then write it out in one
    /// piece: a `bt` line is a dozen small pieces per frame, and appending
    /// to a `Vec` costs far less than a call through `dyn Write` each.
    fn buffered(
        &mut self,
        out: &mut dyn Write,
        f: impl FnOnce(&mut Self, &mut Vec<u8>) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut buf = std::mem::take(&mut self.line_buf);
        buf.clear();
        let result = f(self, &mut buf);
        let head_at = self.head_at.take();
        let held = &mut self.unfinished;
        let written = if held.is_empty() && buf.last() == Some(&b'\n') {
            out.write_all(&buf)
        } else {
            held.extend_from_slice(&buf);
            let lines_end = memchr::memrchr(b'\n', held).map_or(0, |i| i + 1);
            // Alone on the output, a module line begun here is held from
            // its start: the escapes before it (what ends the line before)
            // go out now.
            let whole = match head_at {
                Some(at) if !self.interleaved => held.len() - buf.len() + at,
                _ => lines_end,
            };
            let written = out.write_all(&held[..whole]);
            held.drain(..whole);
            written
        };
        // A huge line's buffer is not kept.
        if buf.capacity() <= 1 << 20 {
            self.line_buf = buf;
        }
        result.and(written)
    }

    fn render_line(
        &mut self,
        out: &mut Vec<u8>,
        line: &Line<'_>,
        events: &[Event<'_>],
    ) -> io::Result<()> {
        let crlf = line.crlf();
        self.last_crlf = crlf;
        self.reset_color(out)?;
        for (i, ev) in events.iter().enumerate() {
            let Event::Context(el, ce) = ev else {
                continue;
            };
            let deferred = &events[..i];
            match ce {
                ContextEvent::Refused => {}
                ContextEvent::Reset { had_state } => {
                    if *had_state {
                        self.lead_and_nodes(out, crlf, line, deferred)?;
                        self.raw_element(out, line.bytes, el)?;
                        out.write_all(Self::ending(crlf))?;
                    }
                }
                ContextEvent::Module(m) => {
                    self.lead_and_nodes(out, crlf, line, deferred)?;
                    self.begin_info(out, m)?;
                    out.write_all(b"; BuildID=")?;
                    self.value(out, m.build_id.to_hex().as_bytes())?;
                }
                ContextEvent::Mmap { module, region, .. } => {
                    if self.info.as_ref().map(|i| i.module) != Some(module.id) {
                        self.lead_and_nodes(out, crlf, line, deferred)?;
                        self.begin_info(out, module)?;
                        out.write_all(b"; adds")?;
                    }
                    if let Some(info) = &mut self.info {
                        info.regions.push(*region);
                    }
                }
            }
            return Ok(());
        }
        self.lead_and_nodes(out, crlf, line, events)?;
        out.write_all(b"\n")
    }
}
