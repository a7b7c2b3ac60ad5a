//! `--format=human` (the default): readable output.
//!
//! * Lines holding only contextual elements are replaced by one summary per
//!   module, printed when the module's run of contextual lines ends:
//!   `[module #0 "app" build-id 1731..cc35: 0x200000-0x200fff r, 0x201000-0x201fff rx]`.
//!   `--keep-context` prints the raw lines as well. A contextual element on a
//!   line with other text is left in place, as is a refused one.
//! * `bt` gives one line per frame and per inlined frame, `#N.K` innermost
//!   first and `#N` for the physical frame, with fixed-width frame and
//!   address columns: `#1    0x00000000002011ff in main src/app.c:12:3 (app+0x11ff)`.
//! * `pc` gives `function at file:line:column`, followed by the functions it
//!   is inlined into; `data` the global with `+offset`; `symbol` the
//!   demangled name; `hexdict` is kept as is with one line below it per
//!   value that falls in a mapped region.
//! * Whatever cannot be symbolized falls back step by step: symbol table
//!   (`function+0xoffset`), then `module+0xoffset`, then the element as
//!   written.
//! * Colour (only when enabled): function names bold, source locations
//!   green; SGR escapes from the input pass through and their state is
//!   restored after each coloured piece. With colour off they are removed.
//! * Source paths are shortened ([`super::paths`] has the rules) unless
//!   `--full-paths`: `..` removed, toolchain roots written as `<rust>`,
//!   `<cargo>`, `<cargo-git>` (stated in a `[<rust> = /rustc/...]` line
//!   before first use), and the frames of one backtrace shown relative to
//!   their common directory, stated once above it:
//!   `[paths relative to /home/me/proj/]` (only when that makes the
//!   backtrace shorter). After `+0x` offsets modules are named by their base
//!   name unless two modules share it.
//!
//! A backtrace is the run of consecutive lines holding `bt` elements (a
//! frame number not above the previous one starts a new one). Its lines are
//! held until it ends (another line, the end of input, or the filter about
//! to read from an input that may wait: [`Render::idle`]) or reaches
//! [`BLOCK_MAX`] bytes, then written. Once a part of a backtrace has been written with a common
//! directory, the rest of it keeps that directory.

mod dump;
mod names;
mod summary;

use names::{BaseName, base_name};
use summary::Summary;

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::kept::{Made, PerAnswer, Spans, SpansView};
use super::num::Hex;
use super::paths::{self, Class, Token};
use super::{ContextEvent, Event, Line, Lookup, Place, Render, RenderOptions, Resolved};
use crate::markup::Sgr;
use crate::symbols::{CodeInfo, Frame, Name, SymbolHit, Text};
use crate::{demangle, escape};

/// Most bytes of a backtrace held before a part of it is written.
pub const BLOCK_MAX: usize = 64 << 10;

/// Length of `[paths relative to ]`.
const LEGEND_TEXT: usize = 20;

/// Written when a backtrace with relative paths directly follows a stated
/// directory (or goes on after one).
const AS_GIVEN: &str = "[paths as in the debug info]";

const FUNC: &str = "\x1b[1m";
const LOC: &str = "\x1b[32m";
const RESET: &str = "\x1b[0m";

/// What the reader has been told about paths, and the project paths of the
/// text being rendered.
#[derive(Default)]
struct PathState {
    /// What each token was last stated to stand for.
    stated: [Option<String>; 3],
    /// Tokens to state before the text being rendered.
    new_tokens: Vec<Token>,
    /// Tokens the text being rendered shortens paths with (stated before
    /// it, or earlier): one of them cannot stand for another root in the
    /// same text.
    used_tokens: Vec<Token>,
    /// Record the project paths written (backtrace lines only).
    record: bool,
    /// `(start, len)` of each project path in the buffer being written.
    spans: Vec<(usize, usize)>,
}

/// The backtrace being held.
#[derive(Default)]
struct Block {
    /// Its rendered lines not yet written.
    buf: Vec<u8>,
    /// Lead and leading white space of its first held line (the legend gets
    /// it too).
    indent: Vec<u8>,
    crlf: bool,
    /// Frame number of the last `bt` element.
    last_frame: Option<u64>,
    /// The common directory, once one has been stated.
    prefix: Option<Vec<u8>>,
    /// The buffer of the last common directory, for the next one.
    spare: Vec<u8>,
    /// A relative path (from the debug info) was seen: no common directory.
    relative: bool,
    /// The last thing written was a backtrace with a stated directory: a
    /// relative path right after it would read as relative to it.
    legend_active: bool,
}

pub struct Human {
    opts: RenderOptions,
    color: Option<u8>,
    bold: bool,
    pending: Option<Summary>,
    st: PathState,
    block: Block,
    /// Reused buffer for a line that is not part of a backtrace.
    scratch: Vec<u8>,
    /// Module names shown by their last component after `+0x...` offsets:
    /// base name -> who uses it. Cleared by `reset`.
    short_names: HashMap<Vec<u8>, BaseName>,
    /// Module IDs shown by base name, sorted (looked up per frame).
    short_ids: Vec<u64>,
    /// Frames as shown, per shared answer.
    kept: RefCell<PerAnswer<ShownAnswer>>,
    /// A new answer's frames as shown, made here first (and shown from
    /// here the first time it is asked for).
    made: RefCell<MadeShown>,
    /// Source paths normalised, by path.
    normalised: RefCell<PathCache>,
}

/// What a frame shows that does not depend on the line it is on, made once
/// per answer (its function is shown from the answer's frame: see
/// [`function_shown`]).
#[derive(Clone)]
struct Shown {
    /// The source path normalised and its class (see [`PathCache`]); `None`
    /// when the options alone decide how it is shown ([`Human::fixed_path`]).
    path: Option<Arc<Normalised>>,
    /// `PATH:LINE:COLUMN` as [`Human::location`] writes it once the path's
    /// toolchain root is stated, and the length of `PATH` in it (see
    /// [`Human::frame_location`]).
    located: Option<Located>,
}

/// Where a frame's `PATH:LINE:COLUMN` is in [`ShownAnswer::located`], and
/// the length of its `PATH`.
type Located = (std::ops::Range<usize>, usize);

/// The frames of an answer as shown, and their location texts in one
/// buffer.
type ShownAnswer = Spans<Shown>;

/// A new answer's frames as shown and their location texts, as made.
type MadeShown = Made<Shown>;

/// A code answer's frames as shown: kept, or just made in [`Human::made`]
/// (asked for the first time).
enum ShownFrames<'a> {
    Kept(ShownAnswer),
    Made(std::cell::Ref<'a, MadeShown>),
}

impl ShownFrames<'_> {
    fn view(&self) -> SpansView<'_, Shown> {
        match self {
            ShownFrames::Kept(answer) => answer.view(),
            ShownFrames::Made(made) => made.view(),
        }
    }

    fn frames(&self) -> &[Shown] {
        self.view().frames
    }

    /// The location text of `located` and the length of its path.
    fn located(&self, (range, path_len): &Located) -> (&[u8], usize) {
        (self.view().span(range), *path_len)
    }
}

/// A frame's function as shown: demangled, control characters escaped,
/// `??` when unknown.
fn function_shown(frame: &Frame) -> &str {
    frame.function.as_ref().map_or("??", escape::demangled_name)
}

type Normalised = (Box<[u8]>, Class);

/// Most source paths kept normalised; the table is refilled when full.
const PATHS_MAX: usize = 1 << 12;

/// Source paths normalised (see [`paths::Normalizer`]) and classified, by
/// the path as the debug info gives it: the frames of many answers share a
/// few files, and normalising and classifying one (a walk over its
/// components, three substring searches) costs more than the rest of
/// printing it.
#[derive(Default)]
struct PathCache {
    map: FxHashMap<Box<str>, Arc<Normalised>>,
    /// The same by the shared text of an answer's path (where it lies: a
    /// source makes each file's path once), kept with it so that the
    /// address is not reused: most frames are shown without escaping or
    /// hashing their path.
    by_text: FxHashMap<usize, (Text, Arc<Normalised>)>,
    normalizer: paths::Normalizer,
}

impl PathCache {
    fn get(&mut self, p: &str) -> Arc<Normalised> {
        if let Some(n) = self.map.get(p) {
            return Arc::clone(n);
        }
        let mut v = Vec::with_capacity(p.len());
        self.normalizer.push(&mut v, p);
        let class = paths::classify(&v);
        let n = Arc::new((v.into_boxed_slice(), class));
        crate::base::insert_bounded(&mut self.map, PATHS_MAX, p.into(), Arc::clone(&n));
        n
    }

    /// [`Self::get`] of the path `t` with its control characters escaped.
    fn get_text(&mut self, t: &Text) -> Arc<Normalised> {
        let key = t.as_ptr() as usize;
        if let Some((_, n)) = self.by_text.get(&key) {
            return Arc::clone(n);
        }
        let n = self.get(&crate::escape::controls(t));
        let kept = (Text::clone(t), Arc::clone(&n));
        crate::base::insert_bounded(&mut self.by_text, PATHS_MAX, key, kept);
        n
    }
}

impl Human {
    pub fn new(opts: RenderOptions) -> Human {
        Human {
            opts,
            color: None,
            bold: false,
            pending: None,
            st: PathState::default(),
            block: Block::default(),
            scratch: Vec::new(),
            short_names: HashMap::new(),
            short_ids: Vec::new(),
            kept: RefCell::default(),
            made: RefCell::default(),
            normalised: RefCell::default(),
        }
    }

    /// Each frame's normalised path and location text: kept from the
    /// third time `info` is asked for (see [`PerAnswer::kept_or_made`]).
    fn shown(&self, info: &Arc<CodeInfo>) -> ShownFrames<'_> {
        let kept =
            self.kept
                .borrow_mut()
                .kept_or_made(info, &mut self.made.borrow_mut(), |made, info| {
                    self.make_shown(made, info)
                });
        match kept {
            Some(answer) => ShownFrames::Kept(answer),
            None => ShownFrames::Made(self.made.borrow()),
        }
    }

    /// Each frame of `info` as shown, made in `made`.
    fn make_shown(&self, made: &mut MadeShown, info: &CodeInfo) {
        let mut normalised = self.normalised.borrow_mut();
        let MadeShown { frames, text } = made;
        frames.clear();
        text.clear();
        frames.extend(info.frames.iter().map(|f| {
            let Some(file) = f.file.as_ref() else {
                return Shown {
                    path: None,
                    located: None,
                };
            };
            let start = text.len();
            // Escaped only where the options may show it as it is.
            let escaped = self
                .paths_may_be_fixed()
                .then(|| crate::escape::controls(file));
            let path = match escaped.as_deref().and_then(|p| self.fixed_path(p)) {
                Some(fixed) => {
                    text.extend_from_slice(fixed.as_bytes());
                    None
                }
                None => {
                    let normal = normalised.get_text(file);
                    push_shortened(text, &normal);
                    Some(normal)
                }
            };
            let path_len = text.len() - start;
            push_line_column(text, f.line, f.column);
            Shown {
                path,
                located: Some((start..text.len(), path_len)),
            }
        }));
    }

    /// Whether [`Self::fixed_path`] may show a path.
    fn paths_may_be_fixed(&self) -> bool {
        self.opts.strip_path_prefix.is_some() || self.opts.full_paths
    }

    /// Path `p` as the options alone have it shown, when they do: under
    /// the `--strip-path-prefix`, or `--full-paths`.
    fn fixed_path<'a>(&self, p: &'a str) -> Option<&'a str> {
        if let Some(prefix) = &self.opts.strip_path_prefix
            && let Some(rest) = paths::strip_user_prefix(p, prefix)
        {
            return Some(rest);
        }
        self.opts.full_paths.then_some(p)
    }

    /// Write a source path the way the options ask (see [`paths`]).
    fn put_path(&self, st: &mut PathState, out: &mut Vec<u8>, p: &str) {
        if let Some(fixed) = self.fixed_path(p) {
            out.extend_from_slice(fixed.as_bytes());
            return;
        }
        let normal = self.normalised.borrow_mut().get(p);
        if self.note_path(st, &normal, out.len()) {
            push_shortened(out, &normal);
        } else {
            out.extend_from_slice(&normal.0);
        }
    }

    /// What writing normalised path `normal` at `at` in the buffer tells the
    /// reader: its toolchain root is stated (before the text), a project
    /// path's span is recorded. False when the same token already shortens
    /// a path under another root in this text: the path is then written in
    /// full.
    fn note_path(&self, st: &mut PathState, (bytes, class): &Normalised, at: usize) -> bool {
        match *class {
            Class::Token { token, root } => {
                let root_text = &bytes[..root];
                let slot = &mut st.stated[token.index()];
                if slot.as_deref().map(str::as_bytes) != Some(root_text) {
                    if st.used_tokens.contains(&token) {
                        return false;
                    }
                    *slot = Some(String::from_utf8_lossy(root_text).into_owned());
                    st.new_tokens.push(token);
                }
                if !st.used_tokens.contains(&token) {
                    st.used_tokens.push(token);
                }
            }
            Class::Project if st.record && self.opts.strip_path_prefix.is_none() => {
                st.spans.push((at, bytes.len()));
            }
            _ => {}
        }
        true
    }

    /// `[paths relative to P; <rust> = R]`, when there is anything to say.
    fn legend(
        st: &mut PathState,
        out: &mut dyn Write,
        indent: &[u8],
        prefix: Option<&[u8]>,
        crlf: bool,
    ) -> io::Result<()> {
        st.used_tokens.clear();
        if prefix.is_none() && st.new_tokens.is_empty() {
            return Ok(());
        }
        out.write_all(indent)?;
        out.write_all(b"[")?;
        let mut sep = "";
        if let Some(p) = prefix {
            out.write_all(b"paths relative to ")?;
            out.write_all(p)?;
            sep = "; ";
        }
        for t in Token::ALL {
            if !st.new_tokens.contains(&t) {
                continue;
            }
            let root = st.stated[t.index()].as_deref().unwrap_or_default();
            write!(out, "{sep}{} = {root}", t.text())?;
            sep = "; ";
        }
        st.new_tokens.clear();
        out.write_all(b"]")?;
        out.write_all(if crlf { b"\r\n" } else { b"\n" })
    }

    /// The backtrace is over and something else follows.
    fn end_backtrace(&mut self, out: &mut dyn Write) -> io::Result<()> {
        self.flush_block(out, true)?;
        self.block.legend_active = false;
        Ok(())
    }

    /// Write out the held backtrace lines; `end` when the backtrace is over.
    fn flush_block(&mut self, out: &mut dyn Write, end: bool) -> io::Result<()> {
        let b = &mut self.block;
        if !b.buf.is_empty() {
            let spans = &self.st.spans;
            let mut newly = false;
            if b.prefix.is_none()
                && !b.relative
                && let Some(&(first, _)) = spans.first()
            {
                let n = paths::common_dir(spans.iter().map(|&(a, l)| &b.buf[a..a + l]));
                let legend = b.indent.len() + LEGEND_TEXT + n + if b.crlf { 2 } else { 1 };
                if paths::worth_stating(spans.len(), n, legend) {
                    let mut prefix = std::mem::take(&mut b.spare);
                    prefix.clear();
                    prefix.extend_from_slice(&b.buf[first..first + n]);
                    b.prefix = Some(prefix);
                    newly = true;
                }
            }
            let prefix = b.prefix.as_deref();
            if prefix.is_none() && b.relative && b.legend_active {
                out.write_all(&b.indent)?;
                out.write_all(AS_GIVEN.as_bytes())?;
                out.write_all(if b.crlf { b"\r\n" } else { b"\n" })?;
                b.legend_active = false;
            }
            b.legend_active |= newly;
            Self::legend(
                &mut self.st,
                out,
                &b.indent,
                if newly { prefix } else { None },
                b.crlf,
            )?;
            let mut pos = 0;
            if let Some(pre) = prefix {
                for &(a, l) in &self.st.spans {
                    let s = &b.buf[a..a + l];
                    if s.len() > pre.len() && s.starts_with(pre) {
                        out.write_all(&b.buf[pos..a])?;
                        pos = a + pre.len();
                    }
                }
            }
            out.write_all(&b.buf[pos..])?;
            b.buf.clear();
            self.st.spans.clear();
        }
        if end {
            if let Some(prefix) = b.prefix.take() {
                b.spare = prefix;
            }
            b.last_frame = None;
            b.relative = false;
        }
        Ok(())
    }

    /// Write a name from the log or the debug info (control characters
    /// escaped), in `style` when colour is on.
    fn paint(&self, out: &mut Vec<u8>, style: &str, text: &str) {
        self.paint_with(out, style, &crate::escape::controls(text), &[]);
    }

    /// [`Human::paint`] of the demangled `name+0xoffset`, the offset of
    /// `rel` in `sym` (`name` alone at offset 0), written in place.
    fn paint_offset(&self, out: &mut Vec<u8>, style: &str, name: &Name, rel: u64, sym: &SymbolHit) {
        let name = escape::demangled_name(name);
        match rel.wrapping_sub(sym.address) {
            0 => self.paint_with(out, style, name, &[]),
            offset => {
                let mut suffix = [0u8; 19];
                let hex = Hex::new(offset, 0);
                let hex = hex.as_bytes();
                suffix[0] = b'+';
                suffix[1..=hex.len()].copy_from_slice(hex);
                self.paint_with(out, style, name, &suffix[..=hex.len()]);
            }
        }
    }

    /// [`Human::paint`] of `text` followed by `suffix`, both with their
    /// control characters escaped already.
    fn paint_with(&self, out: &mut Vec<u8>, style: &str, text: &str, suffix: &[u8]) {
        if self.opts.color {
            out.extend_from_slice(style.as_bytes());
        }
        out.extend_from_slice(text.as_bytes());
        out.extend_from_slice(suffix);
        if self.opts.color {
            self.restore(out);
        }
    }

    /// End a coloured piece: reset, then the input's own SGR state again.
    fn restore(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(RESET.as_bytes());
        if self.bold {
            out.extend_from_slice(b"\x1b[1m");
        }
        if let Some(c) = self.color {
            // Writing to a Vec cannot fail.
            let _ = write!(out, "\x1b[3{c}m");
        }
    }

    /// `file:line:column` (what is known of it), green with colour.
    fn location(&self, st: &mut PathState, out: &mut Vec<u8>, file: &str, line: u32, column: u32) {
        let file = &*crate::escape::controls(file);
        if self.opts.color {
            out.extend_from_slice(LOC.as_bytes());
        }
        self.put_path(st, out, file);
        push_line_column(out, line, column);
        if self.opts.color {
            self.restore(out);
        }
    }

    /// [`Human::location`] of a frame, from its [`Shown::located`] text
    /// (`located`, with `path_len` bytes of path): a frame's location is
    /// written for every line that shows it, and copying it whole costs
    /// less than putting it together.
    fn frame_location(
        &self,
        st: &mut PathState,
        out: &mut Vec<u8>,
        normal: Option<&Normalised>,
        (located, path_len): (&[u8], usize),
    ) {
        if self.opts.color {
            out.extend_from_slice(LOC.as_bytes());
        }
        match normal {
            Some(normal) if !self.note_path(st, normal, out.len()) => {
                out.extend_from_slice(&normal.0);
                out.extend_from_slice(&located[path_len..]);
            }
            _ => out.extend_from_slice(located),
        }
        if self.opts.color {
            self.restore(out);
        }
    }

    /// Paint `function+0xoff` from the symbol table, if `info` has a
    /// symbol; else `fallback`, if any. True when something was painted.
    fn paint_symbol(
        &self,
        out: &mut Vec<u8>,
        info: &CodeInfo,
        rel: u64,
        fallback: Option<&str>,
    ) -> bool {
        match (&info.symbol, fallback) {
            (Some(sym), _) => {
                self.paint_offset(out, FUNC, &sym.name, rel, sym);
                true
            }
            (None, Some(text)) => {
                self.paint(out, FUNC, text);
                true
            }
            (None, None) => false,
        }
    }

    /// `module+0xoffset`, the module by its base name when that is
    /// unambiguous (its summary line gives the full name).
    fn module_offset(&self, out: &mut Vec<u8>, place: &Place) -> io::Result<()> {
        let name = &place.module.name;
        let shown = if self.short_ids.binary_search(&place.module.id).is_ok() {
            base_name(name)
        } else {
            &name[..]
        };
        if shown.is_ascii() && !shown.iter().any(u8::is_ascii_control) {
            out.extend_from_slice(shown);
        } else {
            out.extend_from_slice(crate::escape::bytes(shown).as_bytes());
        }
        out.push(b'+');
        out.extend_from_slice(Hex::new(place.rel, 0).as_bytes());
        Ok(())
    }

    /// One-line description of a code address (pc, hexdict).
    fn code_text(
        &self,
        st: &mut PathState,
        out: &mut Vec<u8>,
        res: &Resolved,
        place: &Place,
    ) -> io::Result<()> {
        match &res.lookup {
            Lookup::Code(info) if !info.frames.is_empty() => {
                let shown = self.shown(info);
                for (i, (f, sh)) in info.frames.iter().zip(shown.frames()).enumerate() {
                    if i > 0 {
                        out.extend_from_slice(b", inlined into ");
                    }
                    if i == info.frames.len() - 1 && f.function.is_none() {
                        self.paint_symbol(out, info, place.rel, Some("??"));
                    } else {
                        self.paint_with(out, FUNC, function_shown(f), &[]);
                    }
                    if let Some(located) = &sh.located {
                        out.extend_from_slice(b" at ");
                        let located = shown.located(located);
                        self.frame_location(st, out, sh.path.as_deref(), located);
                    }
                }
            }
            Lookup::Code(info) if info.symbol.is_some() => {
                self.paint_symbol(out, info, place.rel, None);
                out.extend_from_slice(b" (");
                self.module_offset(out, place)?;
                out.push(b')');
            }
            _ => self.module_offset(out, place)?,
        }
        Ok(())
    }

    fn data_text(
        &self,
        st: &mut PathState,
        out: &mut Vec<u8>,
        res: &Resolved,
        place: &Place,
    ) -> io::Result<()> {
        if let Lookup::Data(d) = &res.lookup
            && let Some(sym) = &d.symbol
        {
            self.paint_offset(out, FUNC, &sym.name, place.rel, sym);
            if let Some(file) = &d.decl_file {
                out.extend_from_slice(b" at ");
                self.location(st, out, file, d.decl_line, 0);
            }
            return Ok(());
        }
        self.module_offset(out, place)
    }

    #[allow(clippy::too_many_arguments)]
    fn bt(
        &self,
        st: &mut PathState,
        out: &mut Vec<u8>,
        line: &Line<'_>,
        prefix: &[u8],
        frame: u64,
        res: &Resolved,
        place: &Place,
    ) -> io::Result<()> {
        let (frames, kept): (&[Frame], _) = match &res.lookup {
            Lookup::Code(info) => (&info.frames, Some(self.shown(info))),
            _ => (&[], None),
        };
        let shown: &[Shown] = kept.as_ref().map_or(&[], |k| k.frames());
        let n = frames.len().max(1);
        let addr = Hex::new(res.adjusted, 18);
        let mut frame_num = itoa::Buffer::new();
        let frame_text = frame_num.format(frame).as_bytes();
        let mut num = itoa::Buffer::new();
        let ending: &[u8] = if line.crlf() { b"\r\n" } else { b"\n" };
        // Under --demux the text before the element starts with the lead,
        // which every frame's line repeats.
        let before = prefix.strip_prefix(line.lead).unwrap_or(prefix);
        let indent = if before.iter().all(u8::is_ascii_whitespace) {
            prefix
        } else {
            line.lead
        };
        // ` (module+0xoffset)`, the same for every frame: written for the
        // first one and copied for the others.
        let mut tail = 0..0;
        for i in 0..n {
            if i > 0 {
                out.extend_from_slice(ending);
                out.extend_from_slice(indent);
            }
            // `{label:<6} ` with label `#N` or `#N.K`.
            let label_start = out.len();
            out.push(b'#');
            out.extend_from_slice(frame_text);
            if i != n - 1 {
                out.push(b'.');
                out.extend_from_slice(num.format(i + 1).as_bytes());
            }
            let width = out.len() - label_start;
            out.extend_from_slice(&b"      "[..6usize.saturating_sub(width)]);
            out.push(b' ');
            out.extend_from_slice(addr.as_bytes());
            match frames.get(i) {
                Some(f) => {
                    out.extend_from_slice(b" in ");
                    if i == n - 1 && f.function.is_none() {
                        match &res.lookup {
                            Lookup::Code(info) => {
                                self.paint_symbol(out, info, place.rel, Some("??"));
                            }
                            _ => self.paint(out, FUNC, "??"),
                        }
                    } else {
                        self.paint_with(out, FUNC, function_shown(f), &[]);
                    }
                    if let Some(sh) = shown.get(i)
                        && let Some(located) = &sh.located
                        && let Some(kept) = &kept
                    {
                        let located = kept.located(located);
                        out.push(b' ');
                        self.frame_location(st, out, sh.path.as_deref(), located);
                    }
                }
                None => {
                    if let Lookup::Code(info) = &res.lookup
                        && info.symbol.is_some()
                    {
                        out.extend_from_slice(b" in ");
                        self.paint_symbol(out, info, place.rel, None);
                    }
                }
            }
            if i == 0 {
                let at = out.len();
                out.extend_from_slice(b" (");
                self.module_offset(out, place)?;
                out.push(b')');
                tail = at..out.len();
            } else {
                out.extend_from_within(tail.clone());
            }
        }
        Ok(())
    }

    /// Render the line's events (and the hexdict notes after it) into `out`.
    fn render_line(
        &mut self,
        st: &mut PathState,
        out: &mut Vec<u8>,
        line: &Line<'_>,
        events: &[Event<'_>],
    ) -> io::Result<()> {
        let crlf = line.crlf();
        let bytes = line.bytes;
        let mut notes: Vec<Vec<u8>> = Vec::new();
        let (mut scanned, mut line_start) = (0, 0);
        out.extend_from_slice(line.lead);
        for ev in events {
            match ev {
                Event::Text(t) => out.extend_from_slice(t),
                Event::Sgr(sgr, text) => {
                    match sgr {
                        Sgr::Reset => {
                            self.color = None;
                            self.bold = false;
                        }
                        Sgr::Bold => self.bold = true,
                        Sgr::Color(c) => self.color = Some(*c),
                    }
                    if self.opts.color {
                        out.extend_from_slice(text);
                    }
                }
                Event::Invalid(el) | Event::Unknown(el) | Event::Dumpfile(el, _) => {
                    out.extend_from_slice(el.text(bytes))
                }
                Event::Context(el, _) => out.extend_from_slice(el.text(bytes)),
                Event::Symbol(_, name) => match std::str::from_utf8(name) {
                    Ok(name) => {
                        let name = demangle::full_str(name);
                        self.paint(out, FUNC, &name)
                    }
                    Err(_) => crate::escape::push_bytes(out, name),
                },
                Event::Pc(el, res) => match &res.place {
                    Some(place) => self.code_text(st, out, res, place)?,
                    None => out.extend_from_slice(el.text(bytes)),
                },
                Event::Data(el, res) => match &res.place {
                    Some(place) => self.data_text(st, out, res, place)?,
                    None => out.extend_from_slice(el.text(bytes)),
                },
                Event::Bt(el, frame, res) => match &res.place {
                    Some(place) => {
                        // The start of the element's line, searched from
                        // the previous element on (a line may hold many).
                        let from = scanned.min(el.span.start);
                        if let Some(i) = memchr::memrchr(b'\n', &bytes[from..el.span.start]) {
                            line_start = from + i + 1;
                        }
                        scanned = el.span.start;
                        let prefix = &bytes[line_start..el.span.start];
                        self.bt(st, out, line, prefix, *frame, res, place)?;
                    }
                    None => out.extend_from_slice(el.text(bytes)),
                },
                Event::Hexdict(el, values) => {
                    out.extend_from_slice(el.text(bytes));
                    for v in values {
                        let Some(place) = &v.resolved.place else {
                            continue;
                        };
                        let mut note = line.lead.to_vec();
                        write!(
                            note,
                            "  {}: {:#x} = ",
                            crate::escape::bytes(v.pair.key),
                            v.pair.value
                        )?;
                        match v.resolved.lookup {
                            Lookup::Data(_) => self.data_text(st, &mut note, &v.resolved, place)?,
                            _ => self.code_text(st, &mut note, &v.resolved, place)?,
                        }
                        notes.push(note);
                    }
                }
            }
        }
        out.extend_from_slice(line.ending);
        if !notes.is_empty() {
            if line.ending.is_empty() {
                out.push(b'\n');
            }
            for n in notes {
                out.extend_from_slice(&n);
                out.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
            }
        }
        Ok(())
    }

    /// A backtrace line: held in the block.
    fn bt_line(
        &mut self,
        out: &mut dyn Write,
        line: &Line<'_>,
        events: &[Event<'_>],
    ) -> io::Result<()> {
        let mut frames = events.iter().filter_map(|e| match e {
            Event::Bt(_, n, _) => Some(*n),
            _ => None,
        });
        let first = frames.next().unwrap_or(0);
        let last = frames.next_back().unwrap_or(first);
        let relative = !self.opts.full_paths && has_relative_path(events);
        let restart = self.block.last_frame.is_some_and(|l| first <= l);
        if restart || (relative && self.block.prefix.is_some()) {
            self.flush_block(out, true)?;
        }
        if self.block.buf.is_empty() {
            self.block.indent.clear();
            let body = &line.bytes[line.lead.len()..];
            let ws = body
                .iter()
                .take_while(|b| **b == b' ' || **b == b'\t')
                .count();
            self.block.indent.extend_from_slice(line.lead);
            self.block.indent.extend_from_slice(&body[..ws]);
            self.block.crlf = line.crlf();
        }
        self.block.last_frame = Some(last);
        self.block.relative |= relative;
        let mut buf = std::mem::take(&mut self.block.buf);
        let mut st = std::mem::take(&mut self.st);
        st.record = true;
        let result = self.render_line(&mut st, &mut buf, line, events);
        st.record = false;
        self.block.buf = buf;
        self.st = st;
        result?;
        if self.block.buf.len() >= BLOCK_MAX {
            self.flush_block(out, false)?;
        }
        Ok(())
    }
}

/// A normalised path as written once its toolchain root, if any, has been
/// stated: the root replaced by its token.
fn push_shortened(out: &mut Vec<u8>, (bytes, class): &Normalised) {
    match *class {
        Class::Token { token, root } => {
            out.extend_from_slice(token.text().as_bytes());
            out.extend_from_slice(&bytes[root..]);
        }
        _ => out.extend_from_slice(bytes),
    }
}

/// `:line:column` after a path (what is known of them: 0 is unknown).
fn push_line_column(out: &mut Vec<u8>, line: u32, column: u32) {
    if line != 0 {
        let mut num = itoa::Buffer::new();
        out.push(b':');
        out.extend_from_slice(num.format(line).as_bytes());
        if column != 0 {
            out.push(b':');
            out.extend_from_slice(num.format(column).as_bytes());
        }
    }
}

fn is_blank(ev: &Event<'_>) -> bool {
    match ev {
        Event::Text(t) => t.iter().all(u8::is_ascii_whitespace),
        Event::Sgr(..) => true,
        _ => false,
    }
}

/// Whether a line belongs to a backtrace: it has a `bt` element and nothing
/// that writes more than the line (contextual summaries, hexdict notes,
/// dumpfile reports).
fn is_bt_line(events: &[Event<'_>]) -> bool {
    let mut bt = false;
    for ev in events {
        match ev {
            Event::Bt(..) => bt = true,
            Event::Context(..) | Event::Hexdict(..) | Event::Dumpfile(..) => return false,
            _ => {}
        }
    }
    bt
}

/// Whether a line's symbolized source paths include a relative one.
fn has_relative_path(events: &[Event<'_>]) -> bool {
    let rel = |f: &Option<Text>| {
        f.as_deref()
            .is_some_and(|f| !paths::is_absolute(f.as_bytes()))
    };
    events.iter().any(|ev| match ev {
        Event::Bt(_, _, res) | Event::Pc(_, res) => match &res.lookup {
            Lookup::Code(info) => info.frames.iter().any(|f| rel(&f.file)),
            _ => false,
        },
        Event::Data(_, res) => match &res.lookup {
            Lookup::Data(d) => rel(&d.decl_file),
            _ => false,
        },
        _ => false,
    })
}

impl Render for Human {
    fn plain(&mut self, out: &mut dyn Write, text: &[u8], _first_line: u64) -> io::Result<()> {
        self.end_backtrace(out)?;
        if self.pending.is_some() {
            let crlf = super::first_line_crlf(text);
            self.flush_summary(out, crlf)?;
        }
        self.color = None;
        self.bold = false;
        out.write_all(text)
    }

    fn line(
        &mut self,
        out: &mut dyn Write,
        line: &Line<'_>,
        events: &[Event<'_>],
    ) -> io::Result<()> {
        let crlf = line.crlf();
        self.color = None;
        self.bold = false;
        if is_bt_line(events) {
            self.flush_summary(out, crlf)?;
            return self.bt_line(out, line, events);
        }
        self.end_backtrace(out)?;
        let has_context = events.iter().any(|e| matches!(e, Event::Context(..)));
        let refused = events
            .iter()
            .any(|e| matches!(e, Event::Context(_, ContextEvent::Refused)));
        let context_only = has_context
            && events
                .iter()
                .all(|e| matches!(e, Event::Context(..)) || is_blank(e));
        if context_only && !refused {
            if self.opts.keep_context {
                out.write_all(line.bytes)?;
                out.write_all(line.ending)?;
            }
            for ev in events {
                if let Event::Context(_, ce) = ev {
                    self.note_context(out, ce, line)?;
                }
            }
            return Ok(());
        }
        if !has_context {
            self.flush_summary(out, crlf)?;
        }
        let mut buf = std::mem::take(&mut self.scratch);
        let mut st = std::mem::take(&mut self.st);
        buf.clear();
        let result = self.render_line(&mut st, &mut buf, line, events);
        let result = result
            .and_then(|()| Self::legend(&mut st, out, line.lead, None, crlf))
            .and_then(|()| out.write_all(&buf));
        self.scratch = buf;
        self.st = st;
        result?;
        // Contextual elements left in place on a line with other text still
        // count: their summary follows.
        for ev in events {
            if let Event::Context(_, ce) = ev {
                self.note_context(out, ce, line)?;
            }
        }
        let mut after = String::new();
        for ev in events {
            if let Event::Dumpfile(_, Some(report)) = ev {
                dump::text(&mut after, report);
            }
        }
        if !after.is_empty() {
            dump::write_after(out, line, &after)?;
        }
        Ok(())
    }

    fn raw(&mut self, out: &mut dyn Write, bytes: &[u8]) -> io::Result<()> {
        self.end_backtrace(out)?;
        // An over-long line ends a context run like any other line.
        if self.pending.is_some() {
            self.flush_summary(out, super::first_line_crlf(bytes))?;
        }
        out.write_all(bytes)
    }

    fn idle(&mut self, out: &mut dyn Write) -> io::Result<()> {
        self.flush_block(out, false)
    }

    fn finish(&mut self, out: &mut dyn Write) -> io::Result<()> {
        self.end_backtrace(out)?;
        self.flush_summary(out, false)
    }
}

#[cfg(test)]
mod tests {
    use super::push_line_column;

    #[test]
    fn line_and_column_follow_a_path_when_known() {
        let cases = [
            (0, 5, ""),
            (12, 0, ":12"),
            (12, 34, ":12:34"),
            (u32::MAX, u32::MAX, ":4294967295:4294967295"),
        ];
        for (line, column, want) in cases {
            let mut out = b"a.rs".to_vec();
            push_line_column(&mut out, line, column);
            assert_eq!(out, [b"a.rs", want.as_bytes()].concat(), "{line} {column}");
        }
    }
}
