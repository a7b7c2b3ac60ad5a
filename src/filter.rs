//! The streaming filter: reads bytes, finds lines with markup, drives the
//! lexer, the context and the symbolizer, and hands each line to a renderer.
//!
//! Plain text is the fast path: the input buffer is searched for `{{{` and
//! ESC with `memmem`/`memchr` (the last hit of each is remembered, so
//! markup-dense input is not rescanned), and every complete line before the
//! next hit is passed to the renderer in one slice, unchanged. Lines among them
//! that may be crash-report frames are first offered to [`crate::crash`]
//! (the hook is in `filter/crash.rs`).
//!
//! Output is flushed whenever the filter is about to block on reading more
//! input, so a line's output appears as soon as the line is complete on a
//! trickling pipe (`tail -f log | symfilter`) while big files still get big
//! writes.
//!
//! Memory is bounded: a line longer than [`Options::max_line`] is passed
//! through unchanged without interpretation (one diagnostic if it held
//! markup); a multi-line `hexdict` is gathered up to
//! [`Options::max_group_lines`] lines / [`Options::max_group_bytes`] bytes,
//! and if it does not close by then its lines are treated as plain lines.

mod demux;
mod dialect;

use std::collections::HashSet;
use std::io::{self, Read, Write};
use std::sync::Arc;

use crate::context::{Context, ContextError, MmapAdded, Module, Region};
use crate::markup::{ESC, Element, Lexer, Node, PcKind, RawElement, parse_element};
use crate::render::{
    self, ContextEvent, Event, Format, HexValue, Line, Lookup, Place, Render, RenderOptions,
    Resolved,
};
use crate::report::{Report, Reporter, Silent};
use crate::symbols::{BuildId, Locator, Symbolizer};

mod crash;
pub use demux::{DEFAULT_MAX_KEYS, DemuxOptions};
pub use dialect::Dialect;

/// Filter settings.
#[derive(Clone, Debug)]
pub struct Options {
    /// Which printer.
    pub format: Format,
    /// How the log is read and resolved (chosen with the printer: see
    /// [`Dialect::usual_for`]).
    pub dialect: Dialect,
    /// Colour output (already decided from `--color`, the terminal and the
    /// environment).
    pub color: bool,
    pub keep_context: bool,
    pub strip_path_prefix: Option<String>,
    /// Human format: no path shortening beyond `strip_path_prefix`.
    pub full_paths: bool,
    /// Print every place tried for each module at its first use.
    pub explain: bool,
    /// Longest line interpreted; longer ones pass through unchanged.
    pub max_line: usize,
    /// Most lines a multi-line hexdict may span.
    pub max_group_lines: usize,
    /// Most bytes a multi-line hexdict may span.
    pub max_group_bytes: usize,
    /// `{{{dumpfile}}}` handling (see [`crate::dumpfile`]).
    pub dumpfile: crate::dumpfile::DumpOptions,
    /// `--demux`: one context per process of an interleaved log.
    pub demux: Option<DemuxOptions>,
    /// Names demangled by this filter and the filters that share the
    /// table (a read-ahead made with a clone of these options).
    pub demangled: crate::demangle::Shared,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            format: Format::Human,
            dialect: Dialect::default(),
            color: false,
            keep_context: false,
            strip_path_prefix: None,
            full_paths: false,
            explain: false,
            max_line: 16 << 20,
            max_group_lines: 256,
            max_group_bytes: 256 << 10,
            dumpfile: crate::dumpfile::DumpOptions::default(),
            demux: None,
            demangled: crate::demangle::Shared::default(),
        }
    }
}

/// What the renderers are told of `opts`.
fn render_options(opts: &Options) -> RenderOptions {
    RenderOptions {
        color: opts.color,
        keep_context: opts.keep_context,
        strip_path_prefix: opts.strip_path_prefix.clone(),
        full_paths: opts.full_paths,
        whole_lines: opts.demux.is_some(),
        demangled: opts.demangled.clone(),
    }
}

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum FilterError {
    #[error("read error: {0}")]
    Read(io::Error),
    #[error("write error: {0}")]
    Write(io::Error),
}

/// Cached position of the next occurrence of a needle in the input buffer.
#[derive(Clone, Copy, Default)]
struct Hit {
    found: Option<usize>,
    scanned_to: usize,
}

impl Hit {
    fn next(
        &mut self,
        len: usize,
        pos: usize,
        end: usize,
        find: impl Fn(usize) -> Option<usize>,
    ) -> Option<usize> {
        if let Some(f) = self.found {
            if f >= pos {
                return Some(f);
            }
            self.scanned_to = pos;
        }
        let from = pos.max(self.scanned_to.saturating_sub(len - 1));
        if from >= end {
            self.found = None;
            self.scanned_to = end;
            return None;
        }
        self.found = find(from).map(|i| from + i);
        self.scanned_to = end;
        self.found
    }

    fn shift(&mut self, d: usize) {
        self.found = self.found.and_then(|f| f.checked_sub(d));
        self.scanned_to = self.scanned_to.saturating_sub(d);
    }
}

/// The symbolizing filter. Build it once; call [`Filter::run`] for each
/// input in order (context carries over, as if the inputs were
/// concatenated), then [`Filter::finish`].
pub struct Filter {
    opts: Options,
    lexer: Lexer,
    context: Context,
    symbolizer: Symbolizer,
    render: Box<dyn Render>,
    /// Reads of the input never wait (a regular file): the renderer is not
    /// asked to write out what it holds at read boundaries.
    never_blocks: bool,
    /// Where diagnostics and `--explain` notes go.
    reporter: Arc<dyn Reporter>,
    /// Number of diagnostics reported.
    diagnostics: u64,
    nodes: Vec<Node>,
    explained: HashSet<BuildId>,
    input: String,
    /// Location of the element being resolved (for diagnostics).
    at: (u64, usize),
    dumps: crate::dumpfile::Dumps,
    /// A read-ahead filter (see [`crate::readahead`]): looks addresses up
    /// and nothing else (no output, no diagnostics, no dumpfiles).
    looks_ahead: bool,
    /// Lines in the inputs before this one.
    lines_before: u64,
    crash: crash::CrashState,
    /// Offsets of the `\n`s inside the line being handled (a hexdict
    /// group's): element positions are located from them.
    breaks: Vec<usize>,
    /// "No symbols" diagnostics given, and those left out past
    /// [`MAX_MISSING_REPORTS`] (said at the end).
    missing_reports: (u64, u64),
    /// `--demux`: the other processes' state (see [`demux`]).
    demux: Option<Box<demux::Demux>>,
}

/// Most "no symbols for module" diagnostics: a log may name a million
/// missing modules.
pub const MAX_MISSING_REPORTS: u64 = 100;

impl Filter {
    /// A filter reporting diagnostics to `reporter`.
    pub fn new(opts: Options, symbolizer: Symbolizer, reporter: Arc<dyn Reporter>) -> Filter {
        let render = render::renderer(opts.format, &render_options(&opts));
        Filter {
            lexer: Lexer::new(),
            context: Context::new(),
            symbolizer,
            render,
            never_blocks: false,
            reporter,
            diagnostics: 0,
            nodes: Vec::new(),
            explained: HashSet::new(),
            input: String::from("<stdin>"),
            at: (0, 0),
            dumps: crate::dumpfile::Dumps::new(opts.dumpfile.clone()),
            looks_ahead: false,
            lines_before: 0,
            crash: crash::CrashState::default(),
            breaks: Vec::new(),
            missing_reports: (0, 0),
            demux: opts.demux.as_ref().map(|d| Box::new(demux::Demux::new(d))),
            opts,
        }
    }

    /// A filter that runs ahead of one built with the same `opts`, to look
    /// up what it will ask for (see [`crate::readahead`]): the same lexing,
    /// context and lookups, a renderer that writes nothing, no diagnostics,
    /// no dumpfiles.
    pub fn read_ahead(mut opts: Options, symbolizer: Symbolizer) -> Filter {
        // Nothing here may reach a file or a terminal.
        opts.explain = false;
        opts.dumpfile = crate::dumpfile::DumpOptions::default();
        let mut filter = Filter::new(opts, symbolizer, Arc::new(Silent));
        filter.render = Box::new(crate::readahead::Discard::like(
            filter.render.as_ref(),
            filter.opts.demangled.clone(),
        ));
        filter.never_blocks = true;
        filter.looks_ahead = true;
        filter
    }

    /// Say whether the next inputs are regular files, whose reads never
    /// wait. Then output held back by the renderer (a backtrace) is not
    /// written out early at read boundaries, and the output does not depend
    /// on read sizes. Default false (pipes, terminals: output stays live).
    pub fn set_input_never_blocks(&mut self, yes: bool) {
        self.never_blocks = yes || self.looks_ahead;
    }

    /// Number of diagnostics so far.
    pub fn diagnostics(&self) -> u64 {
        self.diagnostics
    }

    /// Filter one input. `input` names it in diagnostics (a path or
    /// `<stdin>`).
    pub fn run(
        &mut self,
        input: &str,
        mut reader: impl Read,
        out: &mut dyn Write,
    ) -> Result<(), FilterError> {
        self.input = input.to_string();
        let mut st = Scan {
            line: 1,
            ..Scan::default()
        };
        let result = self.scan(&mut reader, out, &mut st);
        self.lines_before += st.line - 1;
        result
    }

    fn scan(
        &mut self,
        reader: &mut impl Read,
        out: &mut dyn Write,
        st: &mut Scan,
    ) -> Result<(), FilterError> {
        let chunk = (256 << 10).min(self.opts.max_line.max(16));
        let mut buf = vec![0u8; chunk];
        loop {
            self.process(&buf, st, out)?;
            if st.eof {
                break;
            }
            if st.pos > 0 {
                buf.copy_within(st.pos..st.end, 0);
                st.end -= st.pos;
                st.open.shift(st.pos);
                st.esc.shift(st.pos);
                st.nl.shift(st.pos);
                st.pos = 0;
            }
            if st.end == buf.len() {
                if buf.len() < self.opts.max_line {
                    let n = (buf.len() * 2).min(self.opts.max_line.max(16));
                    buf.resize(n, 0);
                } else {
                    // An over-long line: pass what we have through untouched
                    // and the rest of the line after it.
                    let data = &buf[..st.end];
                    if self.lexer.find_open(data).is_some() || memchr::memchr(ESC, data).is_some() {
                        let line = st.line;
                        self.diagnose(
                            line,
                            1,
                            &format!(
                                "line longer than {} bytes: passed through without symbolizing",
                                self.opts.max_line
                            ),
                        );
                    }
                    self.render.raw(out, data).map_err(FilterError::Write)?;
                    st.long_line = true;
                    st.end = 0;
                    st.open = Hit::default();
                    st.esc = Hit::default();
                    st.nl = Hit::default();
                    continue;
                }
            }
            // About to read, which may block: the renderer writes out what
            // it holds back (Render::idle), then everything is flushed.
            if !self.never_blocks {
                self.idle_all(out).map_err(FilterError::Write)?;
            }
            out.flush().map_err(FilterError::Write)?;
            let n = loop {
                match reader.read(&mut buf[st.end..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        // Keep what was read so far.
                        st.eof = true;
                        self.process(&buf, st, out)?;
                        return Err(FilterError::Read(e));
                    }
                }
            };
            if n == 0 {
                st.eof = true;
            } else {
                st.end += n;
            }
        }
        Ok(())
    }

    /// End of all inputs: close what is open (pending summaries, colour).
    pub fn finish(&mut self, out: &mut dyn Write) -> Result<(), FilterError> {
        let left_out = std::mem::take(&mut self.missing_reports.1);
        if left_out > 0 {
            self.reporter.report(&Report::Warning(&format!(
                "{left_out} more modules without symbols were not reported (the first {MAX_MISSING_REPORTS} were)"
            )));
        }
        self.finish_all(out).map_err(FilterError::Write)?;
        out.flush().map_err(FilterError::Write)
    }

    /// Process everything complete in `buf[st.pos..st.end]` (and, at EOF,
    /// everything).
    fn process(
        &mut self,
        buf: &[u8],
        st: &mut Scan,
        out: &mut dyn Write,
    ) -> Result<(), FilterError> {
        let w = FilterError::Write;
        while st.pos < st.end {
            let end = st.end;
            if st.long_line {
                let rest = &buf[st.pos..end];
                match memchr::memchr(b'\n', rest) {
                    Some(i) => {
                        self.render.raw(out, &rest[..=i]).map_err(w)?;
                        st.pos += i + 1;
                        st.line += 1;
                        st.long_line = false;
                        continue;
                    }
                    None => {
                        self.render.raw(out, rest).map_err(w)?;
                        st.pos = end;
                        return Ok(());
                    }
                }
            }
            let lexer = &self.lexer;
            let pos = st.pos;
            let open = st
                .open
                .next(3, pos, end, |from| lexer.find_open(&buf[from..end]));
            let esc = st
                .esc
                .next(1, pos, end, |from| memchr::memchr(ESC, &buf[from..end]));
            let special = match (open, esc) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let Some(s) = special else {
                // No markup in the rest: pass complete lines through.
                let rest = &buf[pos..end];
                let first_nl = st
                    .nl
                    .next(1, pos, end, |from| memchr::memchr(b'\n', &buf[from..end]));
                if first_nl.is_some()
                    && let Some(nl) = memchr::memrchr(b'\n', rest)
                {
                    let text = &rest[..=nl];
                    self.plain(out, text, st.line).map_err(w)?;
                    st.line += count_lines(text);
                    st.pos += nl + 1;
                }
                if st.eof && st.pos < end {
                    let line = &buf[st.pos..end];
                    self.unended_line(line, st.line, out).map_err(w)?;
                    st.pos = end;
                }
                return Ok(());
            };
            let line_start = memchr::memrchr(b'\n', &buf[pos..s]).map_or(pos, |i| pos + i + 1);
            if line_start > pos {
                let text = &buf[pos..line_start];
                self.plain(out, text, st.line).map_err(w)?;
                st.line += count_lines(text);
                st.pos = line_start;
            }
            let ls = st.pos;
            let le = match st
                .nl
                .next(1, s, end, |from| memchr::memchr(b'\n', &buf[from..end]))
            {
                Some(i) => i,
                None if st.eof => end,
                None => return Ok(()),
            };
            // A multi-line hexdict?
            let mut group_end = None;
            // Under --demux the lines of a dump may be another process's.
            if self.opts.dialect.multiline_hexdict
                && self.demux.is_none()
                && opens_multiline(&self.lexer, &buf[ls..le])
                && le < end
            {
                // The dump ends at the first `}}}`; a `{{{` before it means
                // it never closed (its lines are then plain lines).
                let next_open = self.lexer.find_open(&buf[le..end]).map(|o| le + o);
                let search_end = next_open.unwrap_or(end);
                match self.lexer.find_close(&buf[le..search_end]) {
                    None if next_open.is_some() => {}
                    Some(c) => {
                        let close = le + c;
                        let ge = match memchr::memchr(b'\n', &buf[close..end]) {
                            Some(i) => Some(close + i),
                            None if st.eof => Some(end),
                            None => None,
                        };
                        match ge {
                            Some(ge) => {
                                let lines = count_lines(&buf[ls..ge]);
                                if lines < self.opts.max_group_lines as u64
                                    && ge - ls <= self.opts.max_group_bytes
                                {
                                    group_end = Some(ge);
                                }
                            }
                            None => {
                                if end - ls <= self.opts.max_group_bytes {
                                    return Ok(());
                                }
                            }
                        }
                    }
                    None => {
                        let lines = count_lines(&buf[ls..end]);
                        if !st.eof
                            && end - ls <= self.opts.max_group_bytes
                            && lines < self.opts.max_group_lines as u64
                        {
                            return Ok(());
                        }
                    }
                }
            }
            let le = group_end.unwrap_or(le);
            let ending: &[u8] = if le < end { b"\n" } else { b"" };
            let number = st.line;
            self.line(&buf[ls..le], ending, number, out).map_err(w)?;
            st.line += count_lines(&buf[ls..le]) + 1;
            st.pos = (le + 1).min(end);
        }
        Ok(())
    }

    /// Lex, apply and resolve one line (or hexdict group), then render it.
    fn line(
        &mut self,
        bytes: &[u8],
        ending: &[u8],
        number: u64,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let (lead, key) = self.select_process(bytes, number, out)?;
        let current = match key {
            demux::Key::Current => self.current_key(),
            _ => Vec::new(),
        };
        self.symbolizer.at_line(self.lines_before + number);
        self.breaks.clear();
        self.breaks.extend(memchr::memchr_iter(b'\n', bytes));
        let mut nodes = std::mem::take(&mut self.nodes);
        self.lexer.tokenize(bytes, &mut nodes);
        // The lead is text at the start of the line, given to the renderer
        // apart.
        let lead = match nodes.first() {
            Some(Node::Text(r)) if r.start == 0 => lead.min(r.end),
            _ => 0,
        };
        // Most lines hold a few nodes: no allocation for them.
        let mut events: smallvec::SmallVec<[Event<'_>; 4]> = smallvec::SmallVec::new();
        let stop_after_context = self.opts.dialect.context_ends_line;
        for node in &nodes {
            match node {
                Node::Text(r) if r.start < lead => {
                    if r.end > lead {
                        events.push(Event::Text(&bytes[lead..r.end]));
                    }
                }
                Node::Text(r) => events.push(Event::Text(&bytes[r.clone()])),
                Node::Sgr(sgr, r) => events.push(Event::Sgr(*sgr, &bytes[r.clone()])),
                Node::Element(raw) => {
                    let ev = self.element(bytes, number, raw, out);
                    let contextual = matches!(ev, Event::Context(..));
                    events.push(ev);
                    if contextual && stop_after_context {
                        break;
                    }
                }
            }
        }
        if self.demux.is_some() && events.is_empty() {
            // As a line without markup is given alone.
            events.push(Event::Text(&bytes[lead..lead]));
        }
        let line = Line {
            bytes,
            ending,
            number,
            lead: &bytes[..lead],
            key: demux::key_bytes(&key, bytes, &current),
        };
        let result = self.render.line(out, &line, &events);
        drop(events);
        self.nodes = nodes;
        if let demux::Key::Current = key {
            self.restore_key(current);
        }
        result
    }

    fn report(&mut self, bytes: &[u8], number: u64, at: usize, msg: &str) {
        let (line, col) = locate(&self.breaks, bytes, number, at);
        self.diagnose(line, col, msg);
    }

    /// Report a problem at `line`:`column` of the current input.
    fn diagnose(&mut self, line: u64, column: usize, message: &str) {
        self.diagnostics += 1;
        self.reporter.report(&Report::Diagnostic {
            input: &self.input,
            line,
            column,
            message,
        });
    }

    fn element<'a>(
        &mut self,
        bytes: &'a [u8],
        number: u64,
        raw: &'a RawElement,
        out: &mut dyn Write,
    ) -> Event<'a> {
        let tag = raw.tag(bytes);
        let contextual = matches!(tag, b"reset" | b"module" | b"mmap");
        let llvm_read = match self.opts.dialect.llvm_fields {
            true => crate::markup::llvm_reading(bytes, raw),
            false => None,
        };
        let el = match parse_element(bytes, llvm_read.as_ref().unwrap_or(raw)) {
            Ok(el) => el,
            Err(e) => {
                self.report(bytes, number, e.at, &e.message);
                return if contextual {
                    Event::Context(raw, ContextEvent::Refused)
                } else {
                    Event::Invalid(raw)
                };
            }
        };
        match el {
            Element::Reset => {
                let had_state = self.context.reset();
                Event::Context(raw, ContextEvent::Reset { had_state })
            }
            Element::Module { id, name, build_id } => {
                let module = Module {
                    id,
                    name: name.to_vec(),
                    build_id,
                };
                match self.context.add_module(module) {
                    Ok(m) => Event::Context(raw, ContextEvent::Module(m.clone())),
                    Err(e) => {
                        self.report(bytes, number, raw.fields[0].start, &e.to_string());
                        Event::Context(raw, ContextEvent::Refused)
                    }
                }
            }
            Element::Mmap {
                start,
                size,
                module,
                mode,
                rel,
            } => {
                let region = Region {
                    start,
                    size,
                    module,
                    mode,
                    rel,
                };
                match self.context.add_mmap(region) {
                    Ok(added) => {
                        let (region, duplicate) = match added {
                            MmapAdded::Stored(r) => (r, false),
                            MmapAdded::Duplicate(r) => (r, true),
                        };
                        // Find (and fetch) the module's files in the background.
                        if let Some(m) = self.context.module(module)
                            && !self.looks_ahead
                        {
                            let context = &self.context;
                            self.symbolizer.prefetch(&m.build_id, || context.key_of(m));
                        }
                        match self.context.module(module) {
                            Some(m) => Event::Context(
                                raw,
                                ContextEvent::Mmap {
                                    module: m.clone(),
                                    region,
                                    duplicate,
                                },
                            ),
                            None => Event::Context(raw, ContextEvent::Refused),
                        }
                    }
                    Err(e) => {
                        let field = match e {
                            ContextError::UnknownModule(_) => 3,
                            _ => 0,
                        };
                        self.report(bytes, number, raw.fields[field].start, &e.to_string());
                        Event::Context(raw, ContextEvent::Refused)
                    }
                }
            }
            Element::Symbol { name } => Event::Symbol(raw, name),
            Element::Pc { addr, kind } => {
                self.flush_before_first_open(addr, out);
                self.at = locate(&self.breaks, bytes, number, raw.fields[0].start);
                let res = self.resolve_code(addr, kind, false);
                self.report_unresolved(bytes, number, raw.fields[0].start, &res);
                Event::Pc(raw, res)
            }
            Element::Bt { frame, addr, kind } => {
                self.flush_before_first_open(addr, out);
                self.at = locate(&self.breaks, bytes, number, raw.fields[1].start);
                let res = self.resolve_code(addr, kind, true);
                self.report_unresolved(bytes, number, raw.fields[1].start, &res);
                Event::Bt(raw, frame, res)
            }
            Element::Data { addr } => {
                self.flush_before_first_open(addr, out);
                self.at = locate(&self.breaks, bytes, number, raw.fields[0].start);
                let res = self.resolve_data(addr);
                self.report_unresolved(bytes, number, raw.fields[0].start, &res);
                Event::Data(raw, res)
            }
            Element::Hexdict { pairs } => {
                let mut values = Vec::new();
                for pair in pairs {
                    self.at = locate(&self.breaks, bytes, number, pair.value_at);
                    let exec = match self.context.lookup(pair.value) {
                        Some(loc) => loc.region.mode.exec,
                        None => continue,
                    };
                    let resolved = if exec {
                        self.resolve_code(pair.value, PcKind::Precise, false)
                    } else {
                        self.resolve_data(pair.value)
                    };
                    values.push(HexValue { pair, resolved });
                }
                Event::Hexdict(raw, values)
            }
            Element::Dumpfile { kind, id } => {
                let report = self.dumpfile(bytes, number, raw, kind, id);
                Event::Dumpfile(raw, report.map(Arc::new))
            }
            Element::Unknown => Event::Unknown(raw),
        }
    }

    /// Hand a dumpfile element to [`crate::dumpfile`]: what became of it,
    /// for the printer.
    fn dumpfile(
        &mut self,
        bytes: &[u8],
        number: u64,
        raw: &RawElement,
        kind: &[u8],
        id: &[u8],
    ) -> Option<crate::dumpfile::DumpReport> {
        use crate::dumpfile::Want;
        if self.looks_ahead {
            return None;
        }
        let want = match self.opts.format {
            Format::Human => Want::Text,
            Format::Json => Want::Json,
            Format::Llvm => Want::Nothing,
        };
        if want == Want::Nothing && !self.dumps.reporting() {
            return None;
        }
        let (line, col) = locate(&self.breaks, bytes, number, raw.fields[1].start);
        let dump = crate::dumpfile::Dump {
            kind,
            name: id,
            input: &self.input,
            line,
        };
        let outcome = self
            .dumps
            .handle(&dump, &self.context, &mut self.symbolizer, want);
        for msg in &outcome.diagnostics {
            self.diagnose(line, col, msg);
        }
        outcome.report
    }

    fn report_unresolved(&mut self, bytes: &[u8], number: u64, at: usize, res: &Resolved) {
        if let Lookup::NoRegion = res.lookup {
            let msg = if res.adjusted != res.addr {
                format!(
                    "no mmap covers address {:#x} (return address {:#x} minus {})",
                    res.adjusted,
                    res.addr,
                    res.addr.wrapping_sub(res.adjusted)
                )
            } else {
                format!("no mmap covers address {:#x}", res.addr)
            };
            self.report(bytes, number, at, &msg);
        }
    }

    /// Opening a module may take long (a debuginfod download): write out
    /// what earlier lines produced first, so a reader sees them meanwhile.
    /// A write error shows up again at the next write and is handled there.
    fn flush_before_first_open(&mut self, addr: u64, out: &mut dyn Write) {
        if let Some(loc) = self.context.lookup(addr)
            && !self.symbolizer.is_opened(&loc.module.build_id)
        {
            let _ = out.flush();
        }
    }

    /// Find the place of `addr` and open its module's source, reporting a
    /// missing module once per build ID.
    fn place(&mut self, addr: u64) -> Option<Place> {
        let loc = self.context.lookup(addr)?;
        Some(Place {
            module: std::sync::Arc::clone(loc.module),
            region: *loc.region,
            rel: loc.rel,
        })
    }

    fn with_source<T>(
        &mut self,
        module: &Module,
        f: impl FnOnce(&crate::symbols::Memo) -> T,
    ) -> Option<T> {
        let explain = self.opts.explain;
        let context = &self.context;
        let opened = self
            .symbolizer
            .open_with(&module.build_id, || context.key_of(module));
        let first = opened.first_time;
        let (result, miss_trail_len, warnings) = match opened.source {
            Ok(src) => {
                let warnings = if first { src.warnings() } else { Vec::new() };
                (Some(f(src)), None, warnings)
            }
            Err(trail) => (None, Some(trail.len()), Vec::new()),
        };
        if first {
            // Problems the source found in its data but got past (e.g.
            // corrupt Breakpad records): once per module.
            let (line, col) = self.at;
            for w in &warnings {
                self.diagnose(line, col, w);
            }
            if self.explained.len() >= 1 << 14 {
                self.explained.clear();
            }
            if explain && self.explained.insert(module.build_id.clone()) {
                self.explain(module);
            }
            if miss_trail_len.is_some() && self.missing_reports.0 >= MAX_MISSING_REPORTS {
                self.missing_reports.1 += 1;
                self.diagnostics += 1;
            } else if let Some(n) = miss_trail_len {
                self.missing_reports.0 += 1;
                let how = if n == 0 {
                    "no symbol source is configured (see --build-id-dir, --symbol-path)".to_string()
                } else {
                    format!("{n} place(s) tried; --explain lists them")
                };
                let (line, col) = self.at;
                self.diagnose(
                    line,
                    col,
                    &format!(
                        "no symbols for module {} (build ID {}): {how}",
                        self.module_label(module),
                        module.build_id
                    ),
                );
            }
        }
        // A symbol file truncated by another process while mapped reads as
        // zeros from then on (see `mapped`): say which, where it was seen.
        for path in crate::mapped::take_faults() {
            let (line, col) = self.at;
            self.diagnose(line, col, &crate::mapped::fault_message(&path));
        }
        result
    }

    /// Why `module` has no source: none found, or the file LLVM would have
    /// read for it could not be read. LLVM reads the first
    /// `DIR/.build-id/xx/rest.debug` that exists and looks nowhere else; a
    /// valid object there with another build ID is used, not refused.
    fn no_source(&self, module: &Module) -> Lookup {
        use crate::symbols::Miss;
        let llvm_file = self.symbolizer.trail(&module.build_id).and_then(|trail| {
            trail.iter().find(|a| {
                matches!(a.provider, Locator::BuildIdDir | Locator::SystemDebugDir)
                    && a.place.ends_with(".debug")
                    && a.place.contains("/.build-id/")
                    && !matches!(a.failure, Some(Miss::NotFound))
            })
        });
        match llvm_file.and_then(|a| a.failure.as_ref()) {
            Some(Miss::Unreadable { .. }) => Lookup::Unreadable,
            _ => Lookup::NoSource,
        }
    }

    /// `#ID "NAME"`; a crash frame's module has no ID (`"NAME"`).
    fn module_label(&self, module: &Module) -> String {
        if self.crash.opening {
            format!("\"{}\"", module.name_lossy())
        } else {
            format!("#{} \"{}\"", module.id, module.name_lossy())
        }
    }

    fn explain(&mut self, module: &Module) {
        let mut lines = vec![format!(
            "explain: module {} build ID {}:",
            self.module_label(module),
            module.build_id
        )];
        match self.symbolizer.trail(&module.build_id) {
            Some(trail) if !trail.is_empty() => {
                for a in trail {
                    let what = match (&a.failure, a.note) {
                        (None, Some(note)) => format!("found; {note}"),
                        (None, None) => "found".to_string(),
                        // These name their file: the place, printed already.
                        (
                            Some(crate::symbols::Miss::BuildIdMismatch {
                                path,
                                found,
                                expected,
                            }),
                            _,
                        ) if *path == a.place => {
                            format!("build ID is {found}, expected {expected}")
                        }
                        (Some(crate::symbols::Miss::Unreadable { path, reason }), _)
                            if *path == a.place =>
                        {
                            reason.clone()
                        }
                        (Some(m), _) => m.to_string(),
                    };
                    lines.push(format!("  [{}] {}: {}", a.provider, a.place, what));
                }
            }
            _ => lines.push("  no symbol source is configured".to_string()),
        }
        for l in lines {
            self.reporter.report(&Report::Note(&l));
        }
    }

    fn resolve_code(&mut self, addr: u64, kind: PcKind, default_ra: bool) -> Resolved {
        let ra = match kind {
            PcKind::ReturnAddress => true,
            PcKind::Precise => false,
            PcKind::Unspecified => default_ra,
        };
        let mut adjusted = if ra { addr.wrapping_sub(1) } else { addr };
        // Fixed-width ISAs step back a whole instruction; the source knows
        // its architecture (LLVM always steps back one byte).
        let step_back = ra && self.opts.dialect.instruction_step;
        let mut place = self.place(adjusted);
        // `Some` once the source was asked about `place` (`Some(None)`: there
        // is none).
        let mut answer = None;
        if let Some(p) = &place {
            let rel = p.rel;
            // One opening of the source for the step and the lookup, unless
            // the step is not one byte (then the address moves).
            let first = self.with_source(&p.module, |src| {
                let step = if step_back {
                    src.return_address_step()
                } else {
                    1
                };
                (step <= 1).then(|| src.lookup_code(rel)).ok_or(step)
            });
            match first {
                Some(Err(step)) => {
                    adjusted = addr.wrapping_sub(step);
                    place = self.place(adjusted);
                }
                Some(Ok(found)) => answer = Some(Some(found)),
                None => answer = Some(None),
            }
        }
        let Some(place) = place else {
            return Resolved {
                addr,
                adjusted,
                place: None,
                lookup: Lookup::NoRegion,
            };
        };
        let rel = place.rel;
        let answer = match answer {
            Some(answer) => answer,
            None => self.with_source(&place.module, |src| src.lookup_code(rel)),
        };
        let lookup = match answer {
            None => self.no_source(&place.module),
            Some(Ok(info)) => Lookup::Code(info),
            Some(Err(miss)) => Lookup::Failed(miss),
        };
        Resolved {
            addr,
            adjusted,
            place: Some(place),
            lookup,
        }
    }

    fn resolve_data(&mut self, addr: u64) -> Resolved {
        let Some(place) = self.place(addr) else {
            return Resolved {
                addr,
                adjusted: addr,
                place: None,
                lookup: Lookup::NoRegion,
            };
        };
        let rel = place.rel;
        let lookup = match self.with_source(&place.module, |src| src.lookup_data(rel)) {
            None => self.no_source(&place.module),
            Some(Ok(info)) => Lookup::Data(info),
            Some(Err(miss)) => Lookup::Failed(miss),
        };
        Resolved {
            addr,
            adjusted: addr,
            place: Some(place),
            lookup,
        }
    }
}

#[derive(Default)]
struct Scan {
    pos: usize,
    end: usize,
    eof: bool,
    long_line: bool,
    /// Number of the line at `pos`.
    line: u64,
    open: Hit,
    esc: Hit,
    /// Next `\n`: a long line arriving in small reads is not rescanned.
    nl: Hit,
}

/// Line and 1-based byte column of offset `at` in `bytes` (a line, or a
/// hexdict group, that starts at line `number` and has its `\n`s at
/// `breaks`): a binary search, as a line may hold many elements.
fn locate(breaks: &[usize], bytes: &[u8], number: u64, at: usize) -> (u64, usize) {
    let at = at.min(bytes.len());
    let extra = breaks.partition_point(|&b| b < at);
    let start = extra.checked_sub(1).map_or(0, |i| breaks[i] + 1);
    (number + extra as u64, at - start + 1)
}

/// Number of `\n` bytes (SIMD count: this runs over every byte of plain
/// text).
fn count_lines(b: &[u8]) -> u64 {
    bytecount::count(b, b'\n') as u64
}

/// LLVM's rule for the start of a multi-line element: the last `{{{` on the
/// line, no `}}}` after it, and the tag before the first `:` is `hexdict`.
fn opens_multiline(lexer: &Lexer, line: &[u8]) -> bool {
    // Most markup lines end with an element: a `{{{` before their last
    // `}}}` cannot be the start of a dump (nor overlap it).
    if line.ends_with(b"}}}") {
        return false;
    }
    let Some(begin) = lexer.rfind_open(line) else {
        return false;
    };
    let after = &line[begin + 3..];
    if lexer.find_close(after).is_some() {
        return false;
    }
    match memchr::memchr(b':', after) {
        Some(i) => &after[..i] == b"hexdict",
        None => false,
    }
}
