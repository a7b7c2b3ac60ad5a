//! Renderers: turn a line's resolved events into output bytes.
//!
//! The filter ([`crate::filter`]) lexes a line, applies its contextual
//! elements to the [`crate::context::Context`], resolves presentation
//! elements through the [`crate::symbols::Symbolizer`], and hands the result
//! to a [`Render`] implementation as a list of [`Event`]s (ripgrep's
//! searcher/printer split). Renderers know nothing of file formats, of the
//! context or of the symbolizer; they only print.
//!
//! * [`human`]: the default; readable, aligned, coloured on a terminal.
//! * [`llvm`]: byte-for-byte what `llvm-symbolizer --filter-markup` (LLVM 22)
//!   prints.
//! * [`json`]: one JSON object per input line (schema in [`json`]).

pub mod human;
pub mod json;
pub(crate) mod kept;
pub mod llvm;
mod num;
pub mod paths;

use std::io::{self, Write};
use std::sync::Arc;

use crate::context::{Module, Region};
use crate::dumpfile::DumpReport;
use crate::markup::{HexPair, RawElement, Sgr};
use crate::symbols::{CodeInfo, DataInfo, Miss};

/// One line (or one multi-line `hexdict` group) as the renderer sees it.
pub struct Line<'a> {
    /// The bytes, without the final `\n` (a `\r` before it stays here).
    pub bytes: &'a [u8],
    /// `"\n"`, or `""` for a last line that had none.
    pub ending: &'a [u8],
    /// 1-based number of the (first) line in its input.
    pub number: u64,
    /// Under `--demux`, the line's prefix naming its process (the start of
    /// `bytes`, not among the events): every output line made from this
    /// line starts with it. Empty otherwise.
    pub lead: &'a [u8],
    /// Under `--demux`, the key of the line's process, if it has one.
    pub key: Option<&'a [u8]>,
}

impl Line<'_> {
    /// True when the line ends in `\r\n` (LLVM gives generated lines the
    /// same ending).
    pub fn crlf(&self) -> bool {
        self.bytes.last() == Some(&b'\r')
    }
}

/// Whether the first line of a run of plain text ends in `\r\n` (what a
/// summary written just before it ends with).
fn first_line_crlf(text: &[u8]) -> bool {
    let end = memchr::memchr(b'\n', text).unwrap_or(text.len());
    end > 0 && text[end - 1] == b'\r'
}

/// Where an address fell.
#[derive(Clone, Debug)]
pub struct Place {
    pub module: std::sync::Arc<Module>,
    pub region: Region,
    /// Module-relative address.
    pub rel: u64,
}

/// What the symbol lookup gave.
#[derive(Clone, Debug)]
pub enum Lookup {
    /// No region covers the address.
    NoRegion,
    /// The module's symbols could not be found (the trail is in `--explain`).
    NoSource,
    /// Like `NoSource`, but a file found for the module could not be read
    /// (LLVM prints the first element that needs it raw, then caches the
    /// module as bad: `bt` prints nothing and `data` prints `<invalid>`).
    Unreadable,
    /// The source could not answer.
    Failed(Miss),
    Code(Arc<CodeInfo>),
    Data(Arc<DataInfo>),
    /// Not looked up yet: left to the thread that prints, which looks it
    /// up before a printer sees it (see [`crate::pipeline`]).
    Deferred(crate::symbols::Deferred),
}

/// A resolved address.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The address as written in the element.
    pub addr: u64,
    /// After return-address adjustment; this is what is looked up and shown.
    pub adjusted: u64,
    pub place: Option<Place>,
    pub lookup: Lookup,
}

/// A hexdict value that falls in a region, with what it resolved to.
#[derive(Clone, Debug)]
pub struct HexValue<'a> {
    pub pair: HexPair<'a>,
    pub resolved: Resolved,
}

/// What a contextual element did.
#[derive(Clone, Debug)]
pub enum ContextEvent {
    /// `{{{reset}}}`; `had_state` is false when there was nothing to clear.
    Reset { had_state: bool },
    /// A module was declared.
    Module(Module),
    /// A region was added to a module. `duplicate` when it started where a
    /// size-0 region starts and was not stored (`region` and `module` are
    /// then the kept one's, see [`crate::context::MmapAdded::Duplicate`]).
    Mmap {
        module: Module,
        region: Region,
        duplicate: bool,
    },
    /// The element was refused (bad fields or a state error); a diagnostic
    /// was reported.
    Refused,
}

/// One piece of a line, in order.
#[derive(Clone, Debug)]
pub enum Event<'a> {
    /// Plain text.
    Text(&'a [u8]),
    /// A recognised SGR escape (`text` is its bytes).
    Sgr(Sgr, &'a [u8]),
    /// A malformed presentation or unknown-tag element (diagnostic reported).
    Invalid(&'a RawElement),
    /// An element with a lowercase tag this version does not know.
    Unknown(&'a RawElement),
    /// A contextual element.
    Context(&'a RawElement, ContextEvent),
    /// `{{{symbol:NAME}}}`
    Symbol(&'a RawElement, &'a [u8]),
    /// `{{{pc}}}`
    Pc(&'a RawElement, Resolved),
    /// `{{{bt}}}`
    Bt(&'a RawElement, u64, Resolved),
    /// `{{{data}}}`
    Data(&'a RawElement, Resolved),
    /// `{{{hexdict}}}` with its values that fall in a region.
    Hexdict(&'a RawElement, Vec<HexValue<'a>>),
    /// `{{{dumpfile:TYPE:ID}}}`, with what became of the dump when the
    /// printer shows it (see [`crate::dumpfile`]).
    Dumpfile(&'a RawElement, Option<Arc<DumpReport>>),
}

/// A printer. The filter calls `plain` for runs of complete lines that hold
/// no markup and no escape (the fast path), `line` for every other line,
/// `raw` for bytes of an over-long line passed through untouched, and
/// `finish` at the end of all input.
pub trait Render: Send {
    /// Complete lines (each ending in `\n`) with no `{{{` and no ESC.
    /// `first_line` is the number of the first of them.
    fn plain(&mut self, out: &mut dyn Write, text: &[u8], first_line: u64) -> io::Result<()>;
    /// A line with markup or escapes, as events.
    fn line(
        &mut self,
        out: &mut dyn Write,
        line: &Line<'_>,
        events: &[Event<'_>],
    ) -> io::Result<()>;
    /// Bytes passed through without interpretation (over-long lines).
    /// [`Render::line`], with the events to keep: a printer that hands
    /// them on moves them out instead of copying them. The list is left
    /// empty.
    fn line_taking(
        &mut self,
        out: &mut dyn Write,
        line: &Line<'_>,
        events: &mut Vec<Event<'_>>,
    ) -> io::Result<()> {
        let result = self.line(out, line, events);
        events.clear();
        result
    }
    fn raw(&mut self, out: &mut dyn Write, bytes: &[u8]) -> io::Result<()> {
        out.write_all(bytes)
    }
    /// The filter is about to read more input (which may block): write out
    /// whatever is being held back, so output stays live.
    fn idle(&mut self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }
    /// The filter is about to wait in the middle of its input (opening a
    /// module, which may mean a download): write out what is held back
    /// for speed alone, keeping what later lines may change.
    fn pause(&mut self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }
    /// End of all input.
    fn finish(&mut self, out: &mut dyn Write) -> io::Result<()>;
}

/// Which renderer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// Readable: contextual lines summarised, elements symbolized.
    #[default]
    Human,
    /// Exactly what `llvm-symbolizer --filter-markup` (LLVM 22) prints.
    Llvm,
    /// One JSON object per input line.
    Json,
}

/// Options every renderer may look at.
#[derive(Clone, Debug, Default)]
pub struct RenderOptions {
    pub color: bool,
    pub keep_context: bool,
    pub strip_path_prefix: Option<String>,
    /// Human format: show source paths exactly as the debug info gives them
    /// (no common-directory or toolchain shortening; `strip_path_prefix`
    /// still applies).
    pub full_paths: bool,
    /// Other printers' lines come between this one's (under `--demux`):
    /// JSON hands each line's output to the writer as soon as it is whole
    /// (it otherwise holds whole lines back, to hand them over in large
    /// pieces), and the llvm format holds the escapes after a line's end
    /// with the unfinished line it always holds.
    pub whole_lines: bool,
}

/// The size of the buffer a renderer's output should be written through.
/// A renderer that holds its output back (JSON) hands it over in pieces at
/// least this large, which such a buffer passes on without copying them.
pub const OUTPUT_BUFFER: usize = 64 << 10;

/// Build the renderer for `format`.
pub fn renderer(format: Format, opts: &RenderOptions) -> Box<dyn Render> {
    match format {
        Format::Human => Box::new(human::Human::new(opts.clone())),
        Format::Llvm if opts.whole_lines => Box::new(llvm::Llvm::new(opts.color).interleaved()),
        Format::Llvm => Box::new(llvm::Llvm::new(opts.color)),
        Format::Json if opts.whole_lines => Box::new(json::Json::whole_lines()),
        Format::Json => Box::new(json::Json::new()),
    }
}
