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

use std::io::{self, Write};

use super::{ContextEvent, Event, Line, Lookup, Place, Render, RenderOptions, Resolved};
use crate::context::{Module, Region};
use crate::demangle::demangle_full;
use crate::markup::Sgr;
use crate::symbols::{CodeInfo, Frame};

const FUNC: &str = "\x1b[1m";
const LOC: &str = "\x1b[32m";
const RESET: &str = "\x1b[0m";

struct Summary {
    module: Module,
    regions: Vec<Region>,
}

pub struct Human {
    opts: RenderOptions,
    color: Option<u8>,
    bold: bool,
    pending: Option<Summary>,
}

impl Human {
    pub fn new(opts: RenderOptions) -> Human {
        Human {
            opts,
            color: None,
            bold: false,
            pending: None,
        }
    }

    fn flush_summary(&mut self, out: &mut dyn Write, crlf: bool) -> io::Result<()> {
        let Some(s) = self.pending.take() else {
            return Ok(());
        };
        let m = &s.module;
        write!(
            out,
            "[module #{} \"{}\" build-id {}",
            m.id,
            m.name_lossy(),
            m.build_id
        )?;
        let mut regions = s.regions;
        regions.sort_by_key(|r| r.start);
        for (i, r) in regions.iter().enumerate() {
            let sep = if i == 0 { ": " } else { ", " };
            let mode = if r.mode.as_str().is_empty() {
                "-"
            } else {
                r.mode.as_str()
            };
            if r.size == 0 {
                write!(out, "{sep}{:#x} (size 0) {mode}", r.start)?;
            } else {
                write!(out, "{sep}{:#x}-{:#x} {mode}", r.start, r.last())?;
            }
        }
        out.write_all(b"]")?;
        out.write_all(if crlf { b"\r\n" } else { b"\n" })
    }

    fn note_context(
        &mut self,
        out: &mut dyn Write,
        ev: &ContextEvent,
        crlf: bool,
    ) -> io::Result<()> {
        match ev {
            ContextEvent::Module(m) => {
                self.flush_summary(out, crlf)?;
                self.pending = Some(Summary {
                    module: m.clone(),
                    regions: Vec::new(),
                });
            }
            ContextEvent::Mmap {
                duplicate: true, ..
            } => {}
            ContextEvent::Mmap { module, region, .. } => {
                if self.pending.as_ref().map(|s| s.module.id) != Some(module.id) {
                    self.flush_summary(out, crlf)?;
                    self.pending = Some(Summary {
                        module: module.clone(),
                        regions: Vec::new(),
                    });
                }
                if let Some(s) = &mut self.pending {
                    s.regions.push(*region);
                }
            }
            ContextEvent::Reset { had_state } => {
                self.flush_summary(out, crlf)?;
                if *had_state {
                    out.write_all(b"[reset]")?;
                    out.write_all(if crlf { b"\r\n" } else { b"\n" })?;
                }
            }
            ContextEvent::Refused => {}
        }
        Ok(())
    }

    fn paint(&self, out: &mut dyn Write, style: &str, text: &str) -> io::Result<()> {
        if !self.opts.color {
            return out.write_all(text.as_bytes());
        }
        out.write_all(style.as_bytes())?;
        out.write_all(text.as_bytes())?;
        out.write_all(RESET.as_bytes())?;
        if self.bold {
            out.write_all(b"\x1b[1m")?;
        }
        if let Some(c) = self.color {
            write!(out, "\x1b[3{c}m")?;
        }
        Ok(())
    }

    fn path<'a>(&self, p: &'a str) -> &'a str {
        if let Some(prefix) = &self.opts.strip_path_prefix
            && let Some(rest) = p.strip_prefix(prefix.as_str())
        {
            return rest.trim_start_matches('/');
        }
        p
    }

    fn location(&self, f: &Frame) -> Option<String> {
        let file = f.file.as_deref()?;
        let mut s = self.path(file).to_string();
        if f.line != 0 {
            s.push_str(&format!(":{}", f.line));
            if f.column != 0 {
                s.push_str(&format!(":{}", f.column));
            }
        }
        Some(s)
    }

    fn function_of(f: &Frame) -> String {
        f.function
            .as_deref()
            .map_or_else(|| "??".to_string(), demangle_full)
    }

    /// `function+0xoff` from the symbol table, if any.
    fn symbol_offset(info: &CodeInfo, rel: u64) -> Option<String> {
        let sym = info.symbol.as_ref()?;
        let name = demangle_full(&sym.name);
        let off = rel.wrapping_sub(sym.address);
        Some(if off == 0 {
            name
        } else {
            format!("{name}+{off:#x}")
        })
    }

    fn module_offset(place: &Place) -> String {
        format!("{}+{:#x}", place.module.name_lossy(), place.rel)
    }

    /// One-line description of a code address (pc, hexdict).
    fn code_text(&self, out: &mut dyn Write, res: &Resolved, place: &Place) -> io::Result<bool> {
        match &res.lookup {
            Lookup::Code(info) if !info.frames.is_empty() => {
                for (i, f) in info.frames.iter().enumerate() {
                    if i > 0 {
                        out.write_all(b", inlined into ")?;
                    }
                    let name = if i == info.frames.len() - 1 && f.function.is_none() {
                        Self::symbol_offset(info, place.rel).unwrap_or_else(|| "??".into())
                    } else {
                        Self::function_of(f)
                    };
                    self.paint(out, FUNC, &name)?;
                    if let Some(loc) = self.location(f) {
                        out.write_all(b" at ")?;
                        self.paint(out, LOC, &loc)?;
                    }
                }
                Ok(true)
            }
            Lookup::Code(info) if info.symbol.is_some() => {
                let s = Self::symbol_offset(info, place.rel).unwrap_or_default();
                self.paint(out, FUNC, &s)?;
                write!(out, " ({})", Self::module_offset(place))?;
                Ok(true)
            }
            _ => {
                out.write_all(Self::module_offset(place).as_bytes())?;
                Ok(true)
            }
        }
    }

    fn data_text(&self, out: &mut dyn Write, res: &Resolved, place: &Place) -> io::Result<()> {
        if let Lookup::Data(d) = &res.lookup
            && let Some(sym) = &d.symbol
        {
            let name = demangle_full(&sym.name);
            let off = place.rel.wrapping_sub(sym.address);
            let s = if off == 0 {
                name
            } else {
                format!("{name}+{off:#x}")
            };
            self.paint(out, FUNC, &s)?;
            if let Some(file) = &d.decl_file {
                let loc = if d.decl_line != 0 {
                    format!("{}:{}", self.path(file), d.decl_line)
                } else {
                    self.path(file).to_string()
                };
                out.write_all(b" at ")?;
                self.paint(out, LOC, &loc)?;
            }
            return Ok(());
        }
        out.write_all(Self::module_offset(place).as_bytes())
    }

    fn bt(
        &self,
        out: &mut dyn Write,
        line: &Line<'_>,
        prefix: &[u8],
        frame: u64,
        res: &Resolved,
        place: &Place,
    ) -> io::Result<()> {
        let frames: &[Frame] = match &res.lookup {
            Lookup::Code(info) => &info.frames,
            _ => &[],
        };
        let n = frames.len().max(1);
        for i in 0..n {
            if i > 0 {
                out.write_all(if line.crlf() { b"\r\n" } else { b"\n" })?;
                if prefix.iter().all(u8::is_ascii_whitespace) {
                    out.write_all(prefix)?;
                }
            }
            let label = if i == n - 1 {
                format!("#{frame}")
            } else {
                format!("#{frame}.{}", i + 1)
            };
            write!(out, "{label:<6} {:#018x}", res.adjusted)?;
            match frames.get(i) {
                Some(f) => {
                    out.write_all(b" in ")?;
                    let name = if i == n - 1 && f.function.is_none() {
                        match &res.lookup {
                            Lookup::Code(info) => {
                                Self::symbol_offset(info, place.rel).unwrap_or_else(|| "??".into())
                            }
                            _ => "??".into(),
                        }
                    } else {
                        Self::function_of(f)
                    };
                    self.paint(out, FUNC, &name)?;
                    if let Some(loc) = self.location(f) {
                        out.write_all(b" ")?;
                        self.paint(out, LOC, &loc)?;
                    }
                }
                None => {
                    if let Lookup::Code(info) = &res.lookup
                        && let Some(s) = Self::symbol_offset(info, place.rel)
                    {
                        out.write_all(b" in ")?;
                        self.paint(out, FUNC, &s)?;
                    }
                }
            }
            write!(out, " ({})", Self::module_offset(place))?;
        }
        Ok(())
    }
}

fn is_blank(ev: &Event<'_>) -> bool {
    match ev {
        Event::Text(t) => t.iter().all(u8::is_ascii_whitespace),
        Event::Sgr(..) => true,
        _ => false,
    }
}

impl Render for Human {
    fn plain(&mut self, out: &mut dyn Write, text: &[u8], _first_line: u64) -> io::Result<()> {
        if self.pending.is_some() {
            let first_end = memchr::memchr(b'\n', text).unwrap_or(text.len());
            let crlf = first_end > 0 && text[first_end - 1] == b'\r';
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
                    self.note_context(out, ce, crlf)?;
                }
            }
            return Ok(());
        }
        if !has_context {
            self.flush_summary(out, crlf)?;
        }
        let bytes = line.bytes;
        let mut notes: Vec<Vec<u8>> = Vec::new();
        for ev in events {
            match ev {
                Event::Text(t) => out.write_all(t)?,
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
                        out.write_all(text)?;
                    }
                }
                Event::Invalid(el) | Event::Unknown(el) | Event::Dumpfile(el) => {
                    out.write_all(el.text(bytes))?
                }
                Event::Context(el, _) => out.write_all(el.text(bytes))?,
                Event::Symbol(_, name) => match std::str::from_utf8(name) {
                    Ok(name) => self.paint(out, FUNC, &demangle_full(name))?,
                    Err(_) => out.write_all(name)?,
                },
                Event::Pc(el, res) => match &res.place {
                    Some(place) => {
                        self.code_text(out, res, place)?;
                    }
                    None => out.write_all(el.text(bytes))?,
                },
                Event::Data(el, res) => match &res.place {
                    Some(place) => self.data_text(out, res, place)?,
                    None => out.write_all(el.text(bytes))?,
                },
                Event::Bt(el, frame, res) => match &res.place {
                    Some(place) => {
                        let start =
                            memchr::memrchr(b'\n', &bytes[..el.span.start]).map_or(0, |i| i + 1);
                        let prefix = &bytes[start..el.span.start];
                        self.bt(out, line, prefix, *frame, res, place)?;
                    }
                    None => out.write_all(el.text(bytes))?,
                },
                Event::Hexdict(el, values) => {
                    out.write_all(el.text(bytes))?;
                    for v in values {
                        let Some(place) = &v.resolved.place else {
                            continue;
                        };
                        let mut note = Vec::new();
                        write!(
                            note,
                            "  {}: {:#x} = ",
                            String::from_utf8_lossy(v.pair.key),
                            v.pair.value
                        )?;
                        match v.resolved.lookup {
                            Lookup::Data(_) => self.data_text(&mut note, &v.resolved, place)?,
                            _ => {
                                self.code_text(&mut note, &v.resolved, place)?;
                            }
                        }
                        notes.push(note);
                    }
                }
            }
        }
        out.write_all(line.ending)?;
        if !notes.is_empty() {
            if line.ending.is_empty() {
                out.write_all(b"\n")?;
            }
            for n in notes {
                out.write_all(&n)?;
                out.write_all(if crlf { b"\r\n" } else { b"\n" })?;
            }
        }
        // Contextual elements left in place on a line with other text still
        // count: their summary follows.
        for ev in events {
            if let Event::Context(_, ce) = ev {
                self.note_context(out, ce, crlf)?;
            }
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut dyn Write) -> io::Result<()> {
        self.flush_summary(out, false)
    }
}
