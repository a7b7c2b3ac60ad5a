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
//!
//! Here: the filter's options and state, and each line's lexing, context
//! and rendering. Apart: the byte scanner (`filter/scan.rs`), resolving
//! addresses and opening modules (`filter/resolve.rs`), the llvm dialect's
//! rules (`filter/dialect.rs`) and its order within a contextual line
//! (`filter/context_line.rs`), crash frames (`filter/crash.rs`) and
//! `--demux` (`filter/demux.rs`).

mod context_line;
mod demux;
mod dialect;
mod resolve;
mod scan;

use scan::Scan;

use std::collections::HashSet;
use std::io::{self, Read, Write};
use std::sync::Arc;

use crate::context::{Context, ContextError, MmapAdded, Module, Region};
use crate::markup::{Element, Lexer, Node, PcKind, RawElement, parse_element};
use crate::render::{self, ContextEvent, Event, Format, HexValue, Line, Render, RenderOptions};
use crate::report::{Report, Reporter};
use crate::symbols::{BuildId, ModuleKey, Symbolizer};

mod crash;
pub use demux::{DEFAULT_MAX_KEYS, DemuxOptions};
pub use dialect::{Dialect, Wants};

/// Filter settings.
#[derive(Clone, Debug)]
pub struct Options {
    /// Which printer.
    pub format: Format,
    /// How the log is read and resolved (chosen with the printer: see
    /// [`Dialect::usual_for`]).
    pub dialect: Dialect,
    /// What every lookup asks its source for (chosen with the printer: see
    /// [`Wants::usual_for`]; the default asks for everything).
    pub wants: Wants,
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
    /// `{{{dumpfile}}}` handling (see [`crate::dumpfile`]); `None` leaves
    /// dumpfile elements alone (no file is read, no report made).
    pub dumpfile: Option<crate::dumpfile::DumpOptions>,
    /// `--demux`: one context per process of an interleaved log.
    pub demux: Option<DemuxOptions>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            format: Format::Human,
            dialect: Dialect::default(),
            wants: Wants::everything(),
            color: false,
            keep_context: false,
            strip_path_prefix: None,
            full_paths: false,
            explain: false,
            max_line: 16 << 20,
            max_group_lines: 256,
            max_group_bytes: 256 << 10,
            dumpfile: Some(crate::dumpfile::DumpOptions::default()),
            demux: None,
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
    /// The read buffer, kept from one input to the next.
    read_buf: Vec<u8>,
    /// Location of the element being resolved (for diagnostics).
    at: (u64, usize),
    /// `None` when dumpfile elements are left alone.
    dumps: Option<crate::dumpfile::Dumps>,
    /// What each printer made for the format is handed to (see
    /// [`Filter::print_through`]).
    wrap: Option<Wrap>,
    /// Lines in the inputs before this one.
    lines_before: u64,
    crash: crash::CrashState,
    /// The event list of [`Filter::line`], kept empty between lines.
    events: Vec<Event<'static>>,
    /// A diagnostic's text being made (see [`Filter::report_unresolved`]).
    message: String,
    /// Offsets of the `\n`s inside the line being handled (a hexdict
    /// group's): element positions are located from them.
    breaks: Vec<usize>,
    /// "No symbols" diagnostics given, and those left out past
    /// [`MAX_MISSING_REPORTS`] (said at the end).
    missing_reports: (u64, u64),
    /// `--demux`: the other processes' state (see [`demux`]).
    demux: Option<Box<demux::Demux>>,
    /// The module whose symbols were last found (see
    /// [`Filter::flush_before_first_open`]).
    opened: Option<Arc<Module>>,
    /// Whether an element's code lookup is to be left to the thread that
    /// prints, when the answer is not remembered (see
    /// [`Filter::defer_lookups`]).
    defer: Option<Box<dyn Fn() -> bool + Send>>,
    /// Under [`Dialect::context_first`]: the module whose
    /// `[[[ELF module` line LLVM holds open (see `filter/context_line.rs`).
    module_line: Option<u64>,
    /// Set while an element LLVM never shows is read: nothing is said of it.
    quiet: bool,
}

/// Most "no symbols for module" diagnostics: a log may name a million
/// missing modules.
pub const MAX_MISSING_REPORTS: u64 = 100;

/// See [`Filter::print_through`].
type Wrap = Box<dyn Fn(Box<dyn Render>) -> Box<dyn Render> + Send>;

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
            read_buf: Vec::new(),
            at: (0, 0),
            dumps: opts.dumpfile.clone().map(crate::dumpfile::Dumps::new),
            wrap: None,
            lines_before: 0,
            crash: crash::CrashState::default(),
            breaks: Vec::new(),
            events: Vec::new(),
            message: String::new(),
            missing_reports: (0, 0),
            demux: opts.demux.as_ref().map(|d| Box::new(demux::Demux::new(d))),
            opened: None,
            defer: None,
            module_line: None,
            quiet: false,
            opts,
        }
    }

    /// Leave the code lookups of `pc` and `bt` elements whose answers are
    /// not remembered to the printer whenever `now` says so:
    /// their answers reach it as [`Lookup::Deferred`](render::Lookup),
    /// for it to look up (see [`crate::pipeline`]).
    pub fn defer_lookups(&mut self, now: impl Fn() -> bool + Send + 'static) {
        self.defer = Some(Box::new(now));
    }

    /// Print through `wrap`: every printer made for the format (one, or
    /// one per process with `--demux`) is handed to `wrap`, and the printer
    /// it returns prints instead.
    pub fn print_through(
        &mut self,
        wrap: impl Fn(Box<dyn Render>) -> Box<dyn Render> + Send + 'static,
    ) {
        self.wrap = Some(Box::new(wrap));
        self.render = self.make_render();
    }

    /// Say whether the next inputs are regular files, whose reads never
    /// wait. Then output held back by the renderer (a backtrace) is not
    /// written out early at read boundaries, and the output does not depend
    /// on read sizes. Default false (pipes, terminals: output stays live).
    pub fn set_input_never_blocks(&mut self, yes: bool) {
        self.never_blocks = yes;
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
        self.input.clear();
        self.input.push_str(input);
        let mut st = Scan::at_line(1);
        let result = self.scan(&mut reader, out, &mut st);
        self.lines_before += st.line - 1;
        result
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
        // The last line's list, emptied: no allocation per line.
        let mut events = crate::base::recycle(std::mem::take(&mut self.events));
        let stop_after_context = self.opts.dialect.context_ends_line;
        let context_first = self.opts.dialect.context_first;
        let mut first = match context_first {
            true => self.context_first(bytes, number, &nodes, out),
            false => None,
        };
        for (i, node) in nodes.iter().enumerate() {
            match node {
                Node::Text(r) if r.start < lead => {
                    if r.end > lead {
                        events.push(Event::Text(&bytes[lead..r.end]));
                    }
                }
                Node::Text(r) => events.push(Event::Text(&bytes[r.clone()])),
                Node::Sgr(sgr, r) => events.push(Event::Sgr(*sgr, &bytes[r.clone()])),
                Node::Element(raw) => {
                    let ev = match &mut first {
                        Some(f) if f.at == i && f.event.is_some() => f.event.take(),
                        // A tag LLVM cannot read is diagnosed wherever it is.
                        Some(f) if i < f.at && f.quiet_before && raw.tag_is_valid(bytes) => {
                            self.quiet = true;
                            let ev = self.element(bytes, number, raw, out);
                            self.quiet = false;
                            Some(ev)
                        }
                        _ => None,
                    };
                    let ev = ev.unwrap_or_else(|| self.element(bytes, number, raw, out));
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
        if context_first {
            self.note_module_line(&events);
        }
        let result = self.render.line_taking(out, &line, &mut events);
        self.events = crate::base::recycle(events);
        self.nodes = nodes;
        if let demux::Key::Current = key {
            self.restore_key(current);
        }
        result
    }

    fn report(&mut self, bytes: &[u8], number: u64, at: usize, msg: &str) {
        if self.quiet {
            return;
        }
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
        let contextual = is_contextual(tag);
        let llvm_read = match self.opts.dialect.llvm_fields {
            true => crate::markup::llvm_reading(bytes, raw),
            false => None,
        };
        let el = match parse_element(bytes, llvm_read.as_ref().unwrap_or(raw)) {
            Ok(el) => {
                if let Some(w) = crate::markup::surplus_fields(bytes, raw) {
                    self.report(bytes, number, w.at, &w.message);
                }
                el
            }
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
                        // A region not stored is the kept one's, of its module.
                        if let Some(m) = self.context.module(region.module) {
                            let context = &self.context;
                            self.symbolizer
                                .prefetch(&m.build_id, || ModuleKey::of(context, m));
                        }
                        match self.context.module(region.module) {
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
                self.at = locate(&self.breaks, bytes, number, raw.fields[0].start);
                let res = self.resolve_code(addr, kind, false, Some(out));
                self.report_unresolved(bytes, number, raw.fields[0].start, &res);
                Event::Pc(raw, res)
            }
            Element::Bt { frame, addr, kind } => {
                self.at = locate(&self.breaks, bytes, number, raw.fields[1].start);
                let res = self.resolve_code(addr, kind, true, Some(out));
                self.report_unresolved(bytes, number, raw.fields[1].start, &res);
                Event::Bt(raw, frame, res)
            }
            Element::Data { addr } => {
                self.at = locate(&self.breaks, bytes, number, raw.fields[0].start);
                let res = self.resolve_data(addr, Some(out));
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
                        self.resolve_code(pair.value, PcKind::Precise, false, None)
                    } else {
                        self.resolve_data(pair.value, None)
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
        let dumps = self.dumps.as_mut()?;
        let want = match self.opts.format {
            Format::Human => Want::Text,
            Format::Json => Want::Json,
            Format::Llvm => Want::Nothing,
        };
        if want == Want::Nothing && !dumps.reporting() {
            return None;
        }
        let (line, col) = locate(&self.breaks, bytes, number, raw.fields[1].start);
        let dump = crate::dumpfile::Dump {
            kind,
            name: id,
            input: &self.input,
            line,
        };
        let outcome = dumps.handle(
            &dump,
            &self.context,
            &mut self.symbolizer,
            self.opts.wants.code,
            want,
        );
        for msg in &outcome.diagnostics {
            self.diagnose(line, col, msg);
        }
        outcome.report
    }
}

/// Whether `tag` names a contextual element.
fn is_contextual(tag: &[u8]) -> bool {
    matches!(tag, b"reset" | b"module" | b"mmap")
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
