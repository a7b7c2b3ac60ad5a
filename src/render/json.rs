//! `--format=json`: one JSON object per input line (JSON Lines).
//!
//! Schema (version 1). Every input line gives one object; a multi-line
//! `hexdict` group gives one object whose `line` is its first line:
//!
//! ```text
//! {"line": 12, "spans": [SPAN, ...]}
//! ```
//!
//! The spans cover the line in order, without its final line ending. Under
//! `--demux` the line's prefix is not among them: it is `"prefix": "..."`,
//! and `"key": "..."` names the line's process (absent for a line that
//! belongs to none). A SPAN is one of:
//!
//! * `{"text": "..."}`: plain text (invalid UTF-8 replaced by U+FFFD; the
//!   exact bytes are then also given as `"bytes": [n, ...]`).
//! * `{"sgr": "\u001b[31m"}`: a recognised SGR escape.
//! * `{"element": KIND, "raw": "{{{...}}}", ...}`: a markup element. KIND is
//!   `symbol`, `pc`, `bt`, `data`, `hexdict`, `dumpfile`, `reset`, `module`,
//!   `mmap`, `unknown`, or `invalid` (malformed; a diagnostic went to
//!   stderr). Further members by kind:
//!   * `symbol`: `"name"` (raw), `"demangled"`.
//!   * `pc`, `bt`, `data`: `"address"` (as written) and `"adjusted"` (after
//!     return-address adjustment; what is looked up), both `"0x..."` strings;
//!     `bt` adds `"frame"` (number). When a region covers the address:
//!     `"module": {"id": N, "name": "...", "build_id": "hex"}` and
//!     `"offset": "0x..."` (module-relative address). Then
//!     `"status"`: `"ok"`, `"no_region"`, `"no_symbols"` (the module's file
//!     was not found) or `"no_info"` (with `"reason"`).
//!     Code (`pc`, `bt`): `"frames": [{"function", "mangled", "file", "line",
//!     "column", "inlined"}]`, innermost first, `inlined` true for every frame
//!     but the last (the physical function); absent members are null, unknown
//!     line/column are 0. `"symbol": {"name", "mangled", "offset"}` when the
//!     symbol table covers the address.
//!     Data: `"symbol": {"name", "mangled", "offset"}`, `"decl_file"`,
//!     `"decl_line"`.
//!   * `hexdict`: `"values": [{"key", "value", ...as for pc or data}]` for
//!     values that fall in a region.
//!   * `dumpfile`: `"type"`, `"id"`, and `"dumpfile"`: what symfilter made
//!     of the dump (`"kind"`, `"name"`, `"context"` and, the first time a
//!     context is met, `"modules"` with their regions, and
//!     `"sancov"` covered functions, `"xray"` top functions, or `"error"`;
//!     see [`crate::dumpfile`]).
//!   * `module`: `"id"`, `"name"`, `"build_id"`; `mmap`: `"start"`, `"size"`,
//!     `"module"`, `"mode"`, `"offset"`; `reset`: nothing more. A refused
//!     contextual element has `"refused": true`.

//!
//! Members appear in byte order of their names, strings are escaped as
//! `serde_json` escapes them, and there is no whitespace: the output is
//! exactly what serialising a `serde_json::Value` of the same object gives
//! (the tests check this). The objects are written by hand, straight into a
//! buffer: building a `Value` per line cost five times the rest of the
//! filter. Frames are rendered once per shared answer.

use std::io::{self, Write};
use std::sync::Arc;

use super::kept::PerAnswer;
use super::num::Hex;
use super::{ContextEvent, Event, Line, Lookup, Render, Resolved};
use crate::context::Module;
use crate::demangle;
use crate::markup::RawElement;
use crate::symbols::{CodeInfo, SymbolHit};

/// The buffer goes to the writer once it holds this much: the writer's
/// own buffer, which a write this large goes past, uncopied.
const FLUSH_AT: usize = super::OUTPUT_BUFFER;

pub struct Json {
    /// Output not yet handed to the writer.
    buf: Vec<u8>,
    /// Whether objects may wait in `buf` for later lines' (not under
    /// `--demux`, where other renderers write between lines).
    hold: bool,
    kept: Kept,
}

/// What the objects of elements share, made once.
#[derive(Default)]
struct Kept {
    /// Rendered answers, once per shared answer.
    answers: PerAnswer<Rendered>,
    /// The last module written and its `"module"` object: elements mostly
    /// fall in the module the one before fell in.
    module: Option<(Arc<Module>, Box<[u8]>)>,
    /// Where a new answer is rendered before it is kept.
    scratch: Vec<u8>,
}

/// `{"build_id":...,"id":...,"name":...}` for `m`, made again only when
/// it is not the `last` module.
fn module_object<'a>(last: &'a mut Option<(Arc<Module>, Box<[u8]>)>, m: &Arc<Module>) -> &'a [u8] {
    if !last.as_ref().is_some_and(|(k, _)| Arc::ptr_eq(k, m)) {
        let mut b = Vec::new();
        b.extend_from_slice(b"{\"build_id\":");
        build_id(&mut b, &m.build_id.0);
        b.extend_from_slice(b",\"id\":");
        num(&mut b, m.id);
        b.extend_from_slice(b",\"name\":");
        lossy(&mut b, &m.name);
        b.push(b'}');
        *last = Some((Arc::clone(m), b.into_boxed_slice()));
    }
    last.as_ref().map_or(&[], |(_, b)| b)
}

/// A code answer as JSON, but for the symbol's offset (which depends on the
/// address looked up).
struct Rendered {
    /// `[{...}, ...]`, the value of `"frames"`, then, with a symbol,
    /// `{"mangled":...,"name":...,"offset":` (one allocation for both).
    text: Box<[u8]>,
    /// Where the symbol's part of `text` starts.
    frames_end: usize,
    /// The symbol's address, with a symbol.
    symbol: Option<u64>,
}

impl super::kept::Weigh for Rendered {
    fn weigh(&self) -> usize {
        self.text.len()
    }
}

impl Rendered {
    fn frames(&self) -> &[u8] {
        &self.text[..self.frames_end]
    }

    /// The symbol's head and address.
    fn symbol(&self) -> Option<(&[u8], u64)> {
        self.symbol.map(|a| (&self.text[self.frames_end..], a))
    }
}

impl Default for Json {
    fn default() -> Self {
        Json::new()
    }
}

impl Json {
    /// A renderer handing its output to the writer in large pieces.
    pub fn new() -> Json {
        Json {
            kept: Kept::default(),
            buf: Vec::with_capacity(FLUSH_AT + 4096),
            hold: true,
        }
    }

    /// A renderer handing each line's object to the writer once written
    /// (see [`super::RenderOptions::whole_lines`]).
    pub fn whole_lines() -> Json {
        Json {
            hold: false,
            ..Json::new()
        }
    }

    /// Hand the buffer to the writer.
    fn flush_buf(&mut self, out: &mut dyn Write) -> io::Result<()> {
        let r = out.write_all(&self.buf);
        self.buf.clear();
        r
    }

    /// The end of a line's object (or of a run of them): hand the buffer
    /// to the writer when it is full, or at once if not holding.
    fn line_done(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if !self.hold || self.buf.len() >= FLUSH_AT {
            self.flush_buf(out)?;
        }
        Ok(())
    }
}

/// JSON escapes as `serde_json` writes them: `\"`, `\\`, the short forms
/// for `\b \t \n \f \r`, `\u00XX` for the other control characters, and
/// nothing else.
const ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0a] = b'n';
    t[0x0c] = b'f';
    t[0x0d] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Non-zero when any of the 8 bytes of `w` needs escaping: a control
/// character, `"` or `\\` (only the high bits may be set, and which of
/// them is not exact).
fn escape_bits(w: u64) -> u64 {
    let has_zero = |x: u64| x.wrapping_sub(LO) & !x;
    let control = w.wrapping_sub(LO * 0x20) & !w;
    let quote = has_zero(w ^ (LO * u64::from(b'"')));
    let backslash = has_zero(w ^ (LO * u64::from(b'\\')));
    (control | quote | backslash) & HI
}

/// Whether any of the 8 bytes of `w` needs escaping (exact: the tests
/// compare with the table byte by byte).
fn word_needs_escape(w: u64) -> bool {
    escape_bits(w) != 0
}

/// A bit for each of the 16 bytes of `block` that a JSON string escapes
/// (a control character, `"` or `\\`) or that is not ASCII.
#[cfg(target_arch = "x86_64")]
fn special16(block: &[u8; 16]) -> u32 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of every x86_64 target, and the load reads the
    // 16 bytes of `block`, unaligned.
    unsafe {
        let v = _mm_loadu_si128(block.as_ptr().cast::<__m128i>());
        // Compared as signed bytes, those from 0x80 up (not ASCII) are
        // below 0x20, with the control characters.
        let below = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        _mm_movemask_epi8(_mm_or_si128(below, _mm_or_si128(quote, backslash))) as u32
    }
}

/// Whether `b` goes into a JSON string as it is: ASCII (so valid UTF-8)
/// with nothing to escape, as most log text is. One pass, 16 bytes at a
/// time, instead of a UTF-8 check and then the escaping scan.
#[cfg(target_arch = "x86_64")]
fn plain_ascii(b: &[u8]) -> bool {
    let clean = |block: &[u8; 16]| special16(block) == 0;
    let blocks = b.chunks_exact(16);
    let rest = blocks.remainder().len();
    if !blocks
        .into_iter()
        .all(|c| <&[u8; 16]>::try_from(c).is_ok_and(clean))
    {
        return false;
    }
    if rest == 0 {
        return true;
    }
    // The last 16 bytes again when there are as many (no copy), else the
    // few there are, padded.
    match b.len().checked_sub(16) {
        Some(start) => <&[u8; 16]>::try_from(&b[start..]).is_ok_and(clean),
        None => {
            let mut last = [b' '; 16];
            last[..b.len()].copy_from_slice(b);
            clean(&last)
        }
    }
}

/// The end of `text`'s first line (the index of its `\n`, else the
/// length), and whether that line goes into a JSON string as it is (see
/// [`plain_ascii`]). One pass finds both: `\n` is one of the bytes a JSON
/// string escapes, so the scan for them stops at the line's end, and plain
/// text is not searched for its line ends first and checked after.
#[cfg(target_arch = "x86_64")]
fn first_line(text: &[u8]) -> (usize, bool) {
    let mut at = 0;
    for block in text.chunks_exact(16) {
        let Ok(block) = <&[u8; 16]>::try_from(block) else {
            break;
        };
        let mask = special16(block);
        if mask != 0 {
            return line_from(text, at + mask.trailing_zeros() as usize);
        }
        at += 16;
    }
    match text[at..].iter().position(|&b| needs_care(b)) {
        Some(i) => line_from(text, at + i),
        None => (text.len(), true),
    }
}

/// [`first_line`] without SIMD.
#[cfg(not(target_arch = "x86_64"))]
fn first_line(text: &[u8]) -> (usize, bool) {
    match text.iter().position(|&b| needs_care(b)) {
        Some(i) => line_from(text, i),
        None => (text.len(), true),
    }
}

/// Whether a JSON string cannot hold byte `b` as it is, or it is not ASCII.
fn needs_care(b: u8) -> bool {
    !b.is_ascii() || ESCAPE[usize::from(b)] != 0
}

/// [`first_line`]'s answer when the first byte needing care is at `at`.
fn line_from(text: &[u8], at: usize) -> (usize, bool) {
    if text[at] == b'\n' {
        return (at, true);
    }
    let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i);
    (end, false)
}

/// Whether `b` goes into a JSON string as it is (see the x86_64 version):
/// 8 bytes at a time.
#[cfg(not(target_arch = "x86_64"))]
fn plain_ascii(b: &[u8]) -> bool {
    let clean = |w: [u8; 8]| {
        let w = u64::from_le_bytes(w);
        (escape_bits(w) | w) & HI == 0
    };
    let mut words = b.chunks_exact(8);
    let mut last = [b' '; 8];
    let rest = words.remainder();
    last[..rest.len()].copy_from_slice(rest);
    words.all(|w| <[u8; 8]>::try_from(w).is_ok_and(clean)) && clean(last)
}

/// `b` escaped (one byte whose table entry is `esc`).
fn escape(buf: &mut Vec<u8>, b: u8, esc: u8) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    if esc == b'u' {
        buf.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            DIGITS[usize::from(b >> 4)],
            DIGITS[usize::from(b & 0xf)],
        ]);
    } else {
        buf.extend_from_slice(&[b'\\', esc]);
    }
}

/// A JSON string.
fn string(buf: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    if plain_ascii(bytes) {
        return quoted(buf, bytes);
    }
    buf.reserve(bytes.len() + 2);
    buf.push(b'"');
    escaped(buf, bytes);
    buf.push(b'"');
}

/// What goes between the quotes of a JSON string of `bytes` (UTF-8).
fn escaped(buf: &mut Vec<u8>, bytes: &[u8]) {
    // Runs of bytes that need no escape are copied whole; words of 8 bytes
    // are checked at once.
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(word) = bytes.get(i..i + 8)
            && let Ok(word) = <[u8; 8]>::try_from(word)
            && !word_needs_escape(u64::from_le_bytes(word))
        {
            i += 8;
            continue;
        }
        let end = bytes.len().min(i + 8);
        for (j, &b) in bytes.iter().enumerate().take(end).skip(i) {
            let esc = ESCAPE[usize::from(b)];
            if esc != 0 {
                buf.extend_from_slice(&bytes[start..j]);
                escape(buf, b, esc);
                start = j + 1;
            }
        }
        i = end;
    }
    buf.extend_from_slice(&bytes[start..]);
}

/// A JSON string of what `value` displays, escaped as it is written (no
/// string made first).
fn display(buf: &mut Vec<u8>, value: &dyn std::fmt::Display) {
    struct Inside<'a>(&'a mut Vec<u8>);
    impl std::fmt::Write for Inside<'_> {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            escaped(self.0, s.as_bytes());
            Ok(())
        }
    }
    buf.push(b'"');
    // Writing to a `Vec` cannot fail.
    let _ = std::fmt::Write::write_fmt(&mut Inside(buf), format_args!("{value}"));
    buf.push(b'"');
}

/// A JSON string of `b` (invalid UTF-8 replaced by U+FFFD).
fn lossy(buf: &mut Vec<u8>, b: &[u8]) {
    if plain_ascii(b) {
        return quoted(buf, b);
    }
    match std::str::from_utf8(b) {
        Ok(s) => string(buf, s),
        Err(_) => string(buf, &String::from_utf8_lossy(b)),
    }
}

/// A JSON string or `null`.
fn opt_string(buf: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => string(buf, s),
        None => buf.extend_from_slice(b"null"),
    }
}

fn num(buf: &mut Vec<u8>, v: impl itoa::Integer) {
    buf.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// `"0x..."`.
fn hex(buf: &mut Vec<u8>, v: u64) {
    buf.push(b'"');
    buf.extend_from_slice(Hex::new(v, 0).as_bytes());
    buf.push(b'"');
}

fn boolean(buf: &mut Vec<u8>, v: bool) {
    buf.extend_from_slice(if v { b"true" } else { b"false" });
}

/// A build ID as a JSON string of lowercase hex.
fn build_id(buf: &mut Vec<u8>, id: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    buf.push(b'"');
    for &b in id {
        buf.extend_from_slice(&[DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 0xf)]]);
    }
    buf.push(b'"');
}

/// `b` between quotes, when [`plain_ascii`].
fn quoted(buf: &mut Vec<u8>, b: &[u8]) {
    buf.reserve(b.len() + 2);
    buf.push(b'"');
    buf.extend_from_slice(b);
    buf.push(b'"');
}

/// The text span of `t`, when [`plain_ascii`].
fn plain_text_span(buf: &mut Vec<u8>, t: &[u8]) {
    buf.extend_from_slice(b"{\"text\":");
    quoted(buf, t);
    buf.push(b'}');
}

/// A text span: `{"text":...}`, with `"bytes"` first when `t` is not UTF-8.
fn text_span(buf: &mut Vec<u8>, t: &[u8]) {
    if plain_ascii(t) {
        plain_text_span(buf, t);
    } else {
        escaped_text_span(buf, t);
    }
}

/// The text span of `t`, when not [`plain_ascii`] (a caller that already
/// knows this does not check it again).
fn escaped_text_span(buf: &mut Vec<u8>, t: &[u8]) {
    match std::str::from_utf8(t) {
        Ok(s) => {
            buf.extend_from_slice(b"{\"text\":");
            string(buf, s);
        }
        Err(_) => {
            buf.extend_from_slice(b"{\"bytes\":[");
            for (i, &b) in t.iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                num(buf, b);
            }
            buf.extend_from_slice(b"],\"text\":");
            string(buf, &String::from_utf8_lossy(t));
        }
    }
    buf.push(b'}');
}

/// `{"mangled":...,"name":...,"offset":` for a symbol-table hit.
fn symbol_head(buf: &mut Vec<u8>, s: &SymbolHit) {
    buf.extend_from_slice(b"{\"mangled\":");
    string(buf, &s.name);
    buf.extend_from_slice(b",\"name\":");
    string(buf, demangle::full(&s.name));
    buf.extend_from_slice(b",\"offset\":");
}

/// `info` rendered in `b` (a scratch buffer), then kept at its size.
fn render(b: &mut Vec<u8>, info: &CodeInfo) -> Rendered {
    b.clear();
    frames(b, info);
    let frames_end = b.len();
    let symbol = info.symbol.as_ref().map(|s| {
        symbol_head(b, s);
        s.address
    });
    Rendered {
        text: Box::from(&b[..]),
        frames_end,
        symbol,
    }
}

/// The value of `"frames"` for `info`.
fn frames(b: &mut Vec<u8>, info: &CodeInfo) {
    b.push(b'[');
    let n = info.frames.len();
    for (i, f) in info.frames.iter().enumerate() {
        if i > 0 {
            b.push(b',');
        }
        b.extend_from_slice(b"{\"column\":");
        num(b, f.column);
        b.extend_from_slice(b",\"file\":");
        opt_string(b, f.file.as_deref());
        b.extend_from_slice(b",\"function\":");
        opt_string(b, f.function.as_ref().map(demangle::full));
        b.extend_from_slice(b",\"inlined\":");
        boolean(b, i + 1 != n);
        b.extend_from_slice(b",\"line\":");
        num(b, f.line);
        b.extend_from_slice(b",\"mangled\":");
        opt_string(b, f.function.as_deref());
        b.push(b'}');
    }
    b.push(b']');
}

/// A code answer as an object shows it: as kept, or (asked for the first
/// time) written from the answer itself.
#[derive(Clone, Copy)]
enum Code<'a> {
    Kept(&'a Rendered),
    Once(&'a CodeInfo),
}

impl<'a> Code<'a> {
    fn frames(self, buf: &mut Vec<u8>) {
        match self {
            Code::Kept(r) => buf.extend_from_slice(r.frames()),
            Code::Once(info) => frames(buf, info),
        }
    }

    /// The symbol's head (`"symbol"`'s object but for the offset's value)
    /// and address, with a symbol.
    fn symbol(self) -> Option<(Head<'a>, u64)> {
        match self {
            Code::Kept(r) => r.symbol().map(|(head, addr)| (Head::Kept(head), addr)),
            Code::Once(info) => info.symbol.as_ref().map(Head::of),
        }
    }
}

/// A symbol's head, as kept or to write.
enum Head<'a> {
    Kept(&'a [u8]),
    Of(&'a SymbolHit),
}

impl<'a> Head<'a> {
    /// The head of `s`, and its address.
    fn of(s: &'a SymbolHit) -> (Head<'a>, u64) {
        (Head::Of(s), s.address)
    }

    fn write(self, buf: &mut Vec<u8>) {
        match self {
            Head::Kept(head) => buf.extend_from_slice(head),
            Head::Of(s) => symbol_head(buf, s),
        }
    }
}

/// What comes before and after the resolution members of an object.
#[derive(Default)]
struct Extra<'a> {
    /// `"element"` and `"raw"`.
    element: Option<(&'a str, &'a [u8])>,
    /// `"frame"` of a `bt`.
    frame: Option<u64>,
    /// `"key"` and `"value"` of a hexdict value.
    pair: Option<(&'a [u8], &'a [u8])>,
}

/// An object for a resolved address, its members in name order: address,
/// adjusted, decl_file, decl_line, element, frame, frames, key, module,
/// offset, raw, reason, status, symbol, value.
fn resolved(buf: &mut Vec<u8>, kept: &mut Kept, extra: &Extra<'_>, res: &Resolved) {
    let Kept {
        answers,
        module,
        scratch,
    } = kept;
    // Without a region the address is the module's own (`lookup`).
    let rel = res.place.as_ref().map_or(res.adjusted, |p| p.rel);
    buf.extend_from_slice(b"{\"address\":");
    hex(buf, res.addr);
    buf.extend_from_slice(b",\"adjusted\":");
    hex(buf, res.adjusted);
    if let Lookup::Data(d) = &res.lookup
        && let Some(f) = &d.decl_file
    {
        buf.extend_from_slice(b",\"decl_file\":");
        string(buf, f);
        buf.extend_from_slice(b",\"decl_line\":");
        num(buf, d.decl_line);
    }
    if let Some((kind, _)) = extra.element {
        buf.extend_from_slice(b",\"element\":");
        string(buf, kind);
    }
    if let Some(frame) = extra.frame {
        buf.extend_from_slice(b",\"frame\":");
        num(buf, frame);
    }
    let code = match &res.lookup {
        Lookup::Code(info) => Some(
            match answers.kept_or_make(info, |info| render(scratch, info)) {
                Some(kept) => Code::Kept(kept),
                None => Code::Once(info),
            },
        ),
        _ => None,
    };
    if let Some(code) = code {
        buf.extend_from_slice(b",\"frames\":");
        code.frames(buf);
    }
    if let Some((key, _)) = extra.pair {
        buf.extend_from_slice(b",\"key\":");
        lossy(buf, key);
    }
    if let Some(p) = &res.place {
        buf.extend_from_slice(b",\"module\":");
        buf.extend_from_slice(module_object(module, &p.module));
        buf.extend_from_slice(b",\"offset\":");
        hex(buf, p.rel);
    }
    if let Some((_, raw)) = extra.element {
        buf.extend_from_slice(b",\"raw\":");
        lossy(buf, raw);
    }
    let status: &[u8] = match &res.lookup {
        Lookup::NoRegion => b"no_region",
        Lookup::NoSource | Lookup::Unreadable => b"no_symbols",
        Lookup::Failed(miss) => {
            buf.extend_from_slice(b",\"reason\":");
            display(buf, miss);
            b"no_info"
        }
        Lookup::Code(_) | Lookup::Data(_) => b"ok",
        // Looked up before printing: never here.
        Lookup::Deferred(_) => b"no_info",
    };
    buf.extend_from_slice(b",\"status\":\"");
    buf.extend_from_slice(status);
    buf.push(b'"');
    let symbol = match (&res.lookup, code) {
        (_, Some(code)) => code.symbol(),
        (Lookup::Data(d), None) => d.symbol.as_ref().map(Head::of),
        _ => None,
    };
    if let Some((head, addr)) = symbol {
        buf.extend_from_slice(b",\"symbol\":");
        head.write(buf);
        hex(buf, rel.wrapping_sub(addr));
        buf.push(b'}');
    }
    if let Some((_, value)) = extra.pair {
        buf.extend_from_slice(b",\"value\":");
        lossy(buf, value);
    }
    buf.push(b'}');
}

/// The object `symfilter lookup --format=json` writes for one address of
/// a module (`res.place` is `None`: the address is module-relative), and
/// a line end: the members of a `pc` or `data` object that do not come from
/// markup, in the same vocabulary.
pub fn write_lookup(out: &mut Vec<u8>, res: &Resolved) {
    resolved(out, &mut Kept::default(), &Extra::default(), res);
    out.push(b'\n');
}

/// `"element":KIND,"raw":RAW` (no braces).
fn element_raw(buf: &mut Vec<u8>, kind: &[u8], el: &RawElement, line: &[u8]) {
    buf.extend_from_slice(b"\"element\":");
    lossy(buf, kind);
    buf.extend_from_slice(b",\"raw\":");
    lossy(buf, el.text(line));
}

impl Json {
    /// One span.
    fn span(&mut self, ev: &Event<'_>, line: &[u8]) -> io::Result<()> {
        let buf = &mut self.buf;
        let kept = &mut self.kept;
        let element = |kind: &'static str, el: &RawElement| Extra {
            element: Some((kind, el.text(line))),
            ..Extra::default()
        };
        match ev {
            Event::Text(t) => text_span(buf, t),
            Event::Sgr(_, t) => {
                buf.extend_from_slice(b"{\"sgr\":");
                lossy(buf, t);
                buf.push(b'}');
            }
            Event::Invalid(el) | Event::Unknown(el) => {
                let kind: &[u8] = match ev {
                    Event::Invalid(_) => b"invalid",
                    _ => b"unknown",
                };
                buf.push(b'{');
                element_raw(buf, kind, el, line);
                buf.push(b'}');
            }
            Event::Dumpfile(el, report) => {
                buf.push(b'{');
                if let Some(report) = report {
                    buf.extend_from_slice(b"\"dumpfile\":");
                    serde_json::to_writer(&mut *buf, &report.json()).map_err(io::Error::other)?;
                    buf.push(b',');
                }
                buf.extend_from_slice(b"\"element\":\"dumpfile\",\"id\":");
                lossy(buf, el.field(line, 1));
                buf.extend_from_slice(b",\"raw\":");
                lossy(buf, el.text(line));
                buf.extend_from_slice(b",\"type\":");
                lossy(buf, el.field(line, 0));
                buf.push(b'}');
            }
            Event::Symbol(el, name) => {
                let raw = String::from_utf8_lossy(name);
                buf.extend_from_slice(b"{\"demangled\":");
                string(buf, &demangle::full_str(&raw));
                buf.extend_from_slice(b",\"element\":\"symbol\",\"name\":");
                string(buf, &raw);
                buf.extend_from_slice(b",\"raw\":");
                lossy(buf, el.text(line));
                buf.push(b'}');
            }
            Event::Pc(el, res) => resolved(buf, kept, &element("pc", el), res),
            Event::Bt(el, frame, res) => {
                let extra = Extra {
                    frame: Some(*frame),
                    ..element("bt", el)
                };
                resolved(buf, kept, &extra, res);
            }
            Event::Data(el, res) => resolved(buf, kept, &element("data", el), res),
            Event::Hexdict(el, values) => {
                buf.push(b'{');
                element_raw(buf, b"hexdict", el, line);
                buf.extend_from_slice(b",\"values\":[");
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        buf.push(b',');
                    }
                    let extra = Extra {
                        pair: Some((v.pair.key, v.pair.value_text)),
                        ..Extra::default()
                    };
                    resolved(buf, kept, &extra, &v.resolved);
                }
                buf.extend_from_slice(b"]}");
            }
            Event::Context(el, ce) => {
                let tag = el.tag(line);
                buf.push(b'{');
                match ce {
                    ContextEvent::Refused => {
                        element_raw(buf, tag, el, line);
                        buf.extend_from_slice(b",\"refused\":true");
                    }
                    ContextEvent::Reset { .. } => element_raw(buf, tag, el, line),
                    ContextEvent::Module(md) => {
                        buf.extend_from_slice(b"\"build_id\":");
                        build_id(buf, &md.build_id.0);
                        buf.push(b',');
                        element_raw_split(buf, tag, el, line, |buf| {
                            buf.extend_from_slice(b",\"id\":");
                            num(buf, md.id);
                            buf.extend_from_slice(b",\"name\":");
                            lossy(buf, &md.name);
                        });
                    }
                    ContextEvent::Mmap { region, .. } => {
                        element_raw_split(buf, tag, el, line, |buf| {
                            buf.extend_from_slice(b",\"mode\":");
                            string(buf, region.mode.as_str());
                            buf.extend_from_slice(b",\"module\":");
                            num(buf, region.module);
                            buf.extend_from_slice(b",\"offset\":");
                            hex(buf, region.rel);
                        });
                        buf.extend_from_slice(b",\"size\":");
                        hex(buf, region.size);
                        buf.extend_from_slice(b",\"start\":");
                        hex(buf, region.start);
                    }
                }
                buf.push(b'}');
            }
        }
        Ok(())
    }
}

/// `"element":KIND`, then what `between` writes, then `,"raw":RAW`.
fn element_raw_split(
    buf: &mut Vec<u8>,
    kind: &[u8],
    el: &RawElement,
    line: &[u8],
    between: impl FnOnce(&mut Vec<u8>),
) {
    buf.extend_from_slice(b"\"element\":");
    lossy(buf, kind);
    between(buf);
    buf.extend_from_slice(b",\"raw\":");
    lossy(buf, el.text(line));
}

impl Render for Json {
    fn plain(&mut self, out: &mut dyn Write, text: &[u8], first_line: u64) -> io::Result<()> {
        let mut n = itoa::Buffer::new();
        let mut number = first_line;
        let mut rest = text;
        // A last line without `\n` is a line too (never given, but kept as
        // before).
        while !rest.is_empty() {
            let (end, plain) = self::first_line(rest);
            let l = &rest[..end];
            rest = rest.get(end + 1..).unwrap_or_default();
            self.buf.extend_from_slice(b"{\"line\":");
            self.buf.extend_from_slice(n.format(number).as_bytes());
            self.buf.extend_from_slice(b",\"spans\":[");
            if plain {
                plain_text_span(&mut self.buf, l);
            } else {
                escaped_text_span(&mut self.buf, l);
            }
            self.buf.extend_from_slice(b"]}\n");
            number = number.wrapping_add(1);
            if self.buf.len() >= FLUSH_AT {
                self.flush_buf(out)?;
            }
        }
        self.line_done(out)
    }

    fn line(
        &mut self,
        out: &mut dyn Write,
        line: &Line<'_>,
        events: &[Event<'_>],
    ) -> io::Result<()> {
        self.buf.push(b'{');
        if let Some(key) = line.key {
            self.buf.extend_from_slice(b"\"key\":");
            lossy(&mut self.buf, key);
            self.buf.push(b',');
        }
        self.buf.extend_from_slice(b"\"line\":");
        num(&mut self.buf, line.number);
        if !line.lead.is_empty() {
            self.buf.extend_from_slice(b",\"prefix\":");
            lossy(&mut self.buf, line.lead);
        }
        self.buf.extend_from_slice(b",\"spans\":[");
        for (i, ev) in events.iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            self.span(ev, line.bytes)?;
        }
        self.buf.extend_from_slice(b"]}\n");
        self.line_done(out)
    }

    fn raw(&mut self, out: &mut dyn Write, bytes: &[u8]) -> io::Result<()> {
        self.buf.extend_from_slice(b"{\"partial\":true,\"spans\":[");
        text_span(&mut self.buf, bytes);
        self.buf.extend_from_slice(b"]}\n");
        self.line_done(out)
    }

    fn idle(&mut self, out: &mut dyn Write) -> io::Result<()> {
        self.flush_buf(out)
    }

    fn pause(&mut self, out: &mut dyn Write) -> io::Result<()> {
        self.flush_buf(out)
    }

    fn finish(&mut self, out: &mut dyn Write) -> io::Result<()> {
        self.flush_buf(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{Module, Region};
    use crate::dumpfile::DumpReport;
    use crate::markup::{HexPair, Lexer, Mode, Node, Sgr};
    use crate::render::kept::MAX_KEPT;
    use crate::render::{HexValue, Place};
    use crate::symbols::{BuildId, DataInfo, Frame, Miss};
    use proptest::prelude::*;
    use std::sync::Arc;

    /// The renderer as it was first written: a `serde_json::Value` per
    /// line. The hand-written one must give the same bytes.
    mod oracle {
        use super::super::{ContextEvent, Event, Lookup, Resolved};
        use crate::demangle::demangle_full;
        use crate::markup::RawElement;
        use serde_json::{Map, Value, json};

        fn hex(v: u64) -> String {
            format!("{v:#x}")
        }

        pub fn text_span(t: &[u8]) -> Value {
            match std::str::from_utf8(t) {
                Ok(s) => json!({ "text": s }),
                Err(_) => json!({ "text": String::from_utf8_lossy(t), "bytes": t }),
            }
        }

        fn lossy(b: &[u8]) -> String {
            String::from_utf8_lossy(b).into_owned()
        }

        fn element(kind: &str, el: &RawElement, line: &[u8]) -> Map<String, Value> {
            let mut m = Map::new();
            m.insert("element".into(), kind.into());
            m.insert("raw".into(), lossy(el.text(line)).into());
            m
        }

        fn name_pair(raw: &str) -> (Value, Value) {
            (demangle_full(raw).into(), raw.into())
        }

        fn resolved(m: &mut Map<String, Value>, res: &Resolved) {
            m.insert("address".into(), hex(res.addr).into());
            m.insert("adjusted".into(), hex(res.adjusted).into());
            if let Some(p) = &res.place {
                m.insert(
                    "module".into(),
                    json!({
                        "id": p.module.id,
                        "name": p.module.name_lossy(),
                        "build_id": p.module.build_id.to_hex(),
                    }),
                );
                m.insert("offset".into(), hex(p.rel).into());
            }
            // Without a region the address is the module's own (`lookup`).
            let rel = res.place.as_ref().map_or(res.adjusted, |p| p.rel);
            let status = match &res.lookup {
                Lookup::NoRegion => "no_region",
                Lookup::NoSource | Lookup::Unreadable => "no_symbols",
                Lookup::Deferred(_) => unreachable!("looked up before printing"),
                Lookup::Failed(miss) => {
                    m.insert("reason".into(), miss.to_string().into());
                    "no_info"
                }
                Lookup::Code(info) => {
                    let n = info.frames.len();
                    let frames: Vec<Value> = info
                        .frames
                        .iter()
                        .enumerate()
                        .map(|(i, f)| {
                            let (function, mangled) = match &f.function {
                                Some(raw) => name_pair(raw),
                                None => (Value::Null, Value::Null),
                            };
                            json!({
                                "function": function,
                                "mangled": mangled,
                                "file": f.file,
                                "line": f.line,
                                "column": f.column,
                                "inlined": i + 1 != n,
                            })
                        })
                        .collect();
                    m.insert("frames".into(), frames.into());
                    if let Some(s) = &info.symbol {
                        let (name, mangled) = name_pair(&s.name);
                        m.insert(
                            "symbol".into(),
                            json!({"name": name, "mangled": mangled, "offset": hex(rel.wrapping_sub(s.address))}),
                        );
                    }
                    "ok"
                }
                Lookup::Data(d) => {
                    if let Some(s) = &d.symbol {
                        let (name, mangled) = name_pair(&s.name);
                        m.insert(
                            "symbol".into(),
                            json!({"name": name, "mangled": mangled, "offset": hex(rel.wrapping_sub(s.address))}),
                        );
                    }
                    if let Some(f) = &d.decl_file {
                        m.insert("decl_file".into(), (**f).into());
                        m.insert("decl_line".into(), d.decl_line.into());
                    }
                    "ok"
                }
            };
            m.insert("status".into(), status.into());
        }

        pub fn span(ev: &Event<'_>, line: &[u8]) -> Value {
            let m = match ev {
                Event::Text(t) => return text_span(t),
                Event::Sgr(_, t) => return json!({ "sgr": lossy(t) }),
                Event::Invalid(el) => element("invalid", el, line),
                Event::Unknown(el) => element("unknown", el, line),
                Event::Dumpfile(el, report) => {
                    let mut m = element("dumpfile", el, line);
                    if let Some(report) = report {
                        m.insert("dumpfile".into(), report.json());
                    }
                    m.insert("type".into(), lossy(el.field(line, 0)).into());
                    m.insert("id".into(), lossy(el.field(line, 1)).into());
                    m
                }
                Event::Symbol(el, name) => {
                    let mut m = element("symbol", el, line);
                    let raw = lossy(name);
                    m.insert("demangled".into(), demangle_full(&raw).into());
                    m.insert("name".into(), raw.into());
                    m
                }
                Event::Pc(el, res) => {
                    let mut m = element("pc", el, line);
                    resolved(&mut m, res);
                    m
                }
                Event::Bt(el, frame, res) => {
                    let mut m = element("bt", el, line);
                    m.insert("frame".into(), (*frame).into());
                    resolved(&mut m, res);
                    m
                }
                Event::Data(el, res) => {
                    let mut m = element("data", el, line);
                    resolved(&mut m, res);
                    m
                }
                Event::Hexdict(el, values) => {
                    let mut m = element("hexdict", el, line);
                    let vals: Vec<Value> = values
                        .iter()
                        .map(|v| {
                            let mut vm = Map::new();
                            vm.insert("key".into(), lossy(v.pair.key).into());
                            vm.insert("value".into(), lossy(v.pair.value_text).into());
                            resolved(&mut vm, &v.resolved);
                            Value::Object(vm)
                        })
                        .collect();
                    m.insert("values".into(), vals.into());
                    m
                }
                Event::Context(el, ce) => {
                    let tag = lossy(el.tag(line));
                    let mut m = element(&tag, el, line);
                    match ce {
                        ContextEvent::Refused => {
                            m.insert("refused".into(), true.into());
                        }
                        ContextEvent::Reset { .. } => {}
                        ContextEvent::Module(md) => {
                            m.insert("id".into(), md.id.into());
                            m.insert("name".into(), md.name_lossy().into());
                            m.insert("build_id".into(), md.build_id.to_hex().into());
                        }
                        ContextEvent::Mmap { region, .. } => {
                            m.insert("start".into(), hex(region.start).into());
                            m.insert("size".into(), hex(region.size).into());
                            m.insert("module".into(), region.module.into());
                            m.insert("mode".into(), region.mode.as_str().into());
                            m.insert("offset".into(), hex(region.rel).into());
                        }
                    }
                    m
                }
            };
            Value::Object(m)
        }

        fn obj(v: &Value) -> Vec<u8> {
            let mut b = serde_json::to_vec(v).expect("serialise");
            b.push(b'\n');
            b
        }

        /// `Render::line`.
        pub fn line(number: u64, bytes: &[u8], events: &[Event<'_>]) -> Vec<u8> {
            let spans: Vec<Value> = events.iter().map(|e| span(e, bytes)).collect();
            obj(&json!({ "line": number, "spans": spans }))
        }

        pub fn plain(text: &[u8], first_line: u64) -> Vec<u8> {
            let mut out = Vec::new();
            for (n, l) in (first_line..).zip(text.split_inclusive(|&b| b == b'\n')) {
                let l = l.strip_suffix(b"\n").unwrap_or(l);
                out.extend(obj(&json!({ "line": n, "spans": [text_span(l)] })));
            }
            out
        }

        pub fn raw(bytes: &[u8]) -> Vec<u8> {
            obj(&json!({ "spans": [text_span(bytes)], "partial": true }))
        }
    }

    /// A renderer writing each object as it is done, as the oracle does.
    fn json() -> Json {
        Json::whole_lines()
    }

    fn render_line(r: &mut Json, number: u64, bytes: &[u8], events: &[Event<'_>]) -> Vec<u8> {
        let mut out = Vec::new();
        let line = Line {
            bytes,
            ending: b"\n",
            number,
            lead: b"",
            key: None,
        };
        r.line(&mut out, &line, events).expect("render");
        out
    }

    fn elements(line: &[u8]) -> Vec<RawElement> {
        let mut nodes = Vec::new();
        Lexer::new().tokenize(line, &mut nodes);
        nodes
            .into_iter()
            .filter_map(|n| match n {
                Node::Element(e) => Some(e),
                _ => None,
            })
            .collect()
    }

    fn module(id: u64, name: &[u8]) -> Arc<Module> {
        Arc::new(Module {
            id,
            name: name.to_vec(),
            build_id: BuildId(vec![0xab, 0x01, 0xff, 0x00]),
        })
    }

    fn region(module: u64) -> Region {
        Region {
            start: 0x5555_0000,
            size: 0x2000,
            module,
            mode: Mode::RX,
            rel: 0x1000,
        }
    }

    fn frame(function: Option<&str>, file: Option<&str>, line: u32, column: u32) -> Frame {
        Frame {
            function: function.map(crate::symbols::Name::from),
            file: file.map(crate::symbols::Text::from),
            line,
            column,
        }
    }

    fn hit(name: &str, address: u64) -> crate::symbols::SymbolHit {
        crate::symbols::SymbolHit {
            name: name.into(),
            address,
            size: 0x10,
            file: None,
        }
    }

    /// Every kind of answer, with and without a place.
    fn answers() -> Vec<Resolved> {
        let code = Arc::new(CodeInfo {
            frames: smallvec::smallvec![
                frame(
                    Some("_ZN2ns5innerIiEEvT_"),
                    Some("/src/a \"b\"\\c.h"),
                    12,
                    3,
                ),
                frame(None, None, 0, 0),
                frame(
                    Some("_ZN4core3fmt5write17h0123456789abcdefE"),
                    Some("/src/\u{1}\u{7f}é.rs"),
                    7,
                    0,
                ),
                frame(Some("main"), Some("/src/main.c"), 40, 5),
            ],
            symbol: Some(hit("main", 0x1100)),
            ..CodeInfo::default()
        });
        let bare = Arc::new(CodeInfo {
            frames: Default::default(),
            symbol: Some(hit("_ZN3fooEv", 0x1300)),
            ..CodeInfo::default()
        });
        let empty = Arc::new(CodeInfo::default());
        let data = Arc::new(DataInfo {
            symbol: Some(hit("_ZN2ns7counterE", 0x2000)),
            decl_file: Some("/src/g\tlobals.c".into()),
            decl_line: 9,
        });
        let data_bare = Arc::new(DataInfo::default());
        let lookups = vec![
            Lookup::NoRegion,
            Lookup::NoSource,
            Lookup::Unreadable,
            Lookup::Failed(Miss::NoInfo),
            Lookup::Failed(Miss::Unreadable {
                path: "/x/\u{0}y".into(),
                reason: "bad \"ELF\"".into(),
            }),
            Lookup::Code(Arc::clone(&code)),
            Lookup::Code(bare),
            Lookup::Code(empty),
            Lookup::Data(data),
            Lookup::Data(data_bare),
            // The same answer again at another address: its cached frames
            // with a new symbol offset.
            Lookup::Code(code),
        ];
        let mut out = Vec::new();
        for (i, lookup) in lookups.into_iter().enumerate() {
            let i = i as u64;
            for place in [false, true] {
                let place = place.then(|| Place {
                    module: module(i, b"lib\xffx\"y\".so"),
                    region: region(i),
                    rel: 0x1000 + i * 0x100 + 4,
                });
                out.push(Resolved {
                    addr: 0x5555_1000 + i,
                    adjusted: 0x5555_0fff + i,
                    place,
                    lookup: lookup.clone(),
                });
            }
        }
        out
    }

    #[test]
    fn every_shape_as_the_value_renderer() {
        let line: &[u8] = b"t\xff\"\x01 {{{pc:0x10}}}{{{bt:3:0x20:ra}}}{{{data:0x30}}}\
            {{{hexdict:\n  k\xfe: 0x40\n  q: 0x50\n}}}{{{symbol:_ZN3fooC2Ev}}}\
            {{{symbol:\xff_Z}}}{{{dumpfile:sancov:a\\b\x02}}}{{{dumpfile:xray:c}}}\
            {{{mmap:0x1000:0x2000:load:0:rx:0x0}}}{{{module:0:n:elf:ab}}}{{{reset}}}\
            {{{FOO:\x1b}}}{{{zz:1}}}{{{module:x\x7f}}}";
        let els = elements(line);
        assert_eq!(els.len(), 14);
        let mut events = vec![
            Event::Text(&line[..5]),
            Event::Text(b""),
            Event::Sgr(Sgr::Color(1), b"\x1b[31m"),
            Event::Sgr(Sgr::Reset, b"\x1b[\xff"),
        ];
        for res in answers() {
            events.push(Event::Pc(&els[0], res.clone()));
            events.push(Event::Bt(&els[1], u64::MAX, res.clone()));
            events.push(Event::Data(&els[2], res));
        }
        let values: Vec<HexValue<'_>> = answers()
            .into_iter()
            .map(|resolved| HexValue {
                pair: HexPair {
                    key: b"k\xfe\"",
                    value_at: 0,
                    value_text: b"0x40\t",
                    value: 0x40,
                },
                resolved,
            })
            .collect();
        events.push(Event::Hexdict(&els[3], values));
        events.push(Event::Hexdict(&els[3], vec![]));
        events.push(Event::Symbol(&els[4], b"_ZN3fooC2Ev"));
        events.push(Event::Symbol(&els[5], b"\xff_Z\"\n"));
        let (sancov, xray) = dump_reports();
        events.push(Event::Dumpfile(&els[6], Some(sancov)));
        events.push(Event::Dumpfile(&els[7], Some(xray)));
        let md = module(7, b"n\x00\xc3");
        events.push(Event::Context(
            &els[8],
            ContextEvent::Mmap {
                module: (*md).clone(),
                region: region(7),
                duplicate: false,
            },
        ));
        events.push(Event::Context(&els[9], ContextEvent::Module((*md).clone())));
        events.push(Event::Context(
            &els[10],
            ContextEvent::Reset { had_state: true },
        ));
        events.push(Event::Context(&els[13], ContextEvent::Refused));
        events.push(Event::Invalid(&els[11]));
        events.push(Event::Unknown(&els[12]));
        events.push(Event::Invalid(&els[13]));

        // Each line twice: each answer is shown first from itself, then
        // from the value made to keep (its second element), then as kept.
        let mut r = json();
        for number in [1, u64::MAX] {
            let got = render_line(&mut r, number, line, &events);
            let want = oracle::line(number, line, &events);
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&want)
            );
            assert_eq!(got, want);
        }
        // Dumps the printer is not given a report for.
        let bare: Vec<Event<'_>> = events
            .iter()
            .map(|e| match e {
                Event::Dumpfile(el, _) => Event::Dumpfile(el, None),
                e => e.clone(),
            })
            .collect();
        assert_eq!(
            render_line(&mut r, 4, line, &bare),
            oracle::line(4, line, &bare)
        );
        assert_eq!(render_line(&mut r, 5, b"", &[]), oracle::line(5, b"", &[]));
    }

    /// A sancov report with a described context and names to escape, and
    /// an XRay dump that could not be read.
    fn dump_reports() -> (Arc<DumpReport>, Arc<DumpReport>) {
        use crate::dumpfile::{
            Content, ContextShown, Coverage, Described, DescribedModule, DumpError,
        };
        let sancov = DumpReport {
            kind: b"sancov".to_vec(),
            name: b"a\\b\x02".to_vec(),
            context: Some(ContextShown {
                number: 1,
                empty: false,
                described: Some(Described {
                    modules: vec![DescribedModule {
                        module: (*module(7, b"n\x00\xc3")).clone(),
                        regions: vec![region(7)],
                        regions_omitted: 2,
                    }],
                    modules_omitted: 3,
                }),
            }),
            content: Content::Sancov(Ok(Coverage {
                pcs: 3,
                bits: 64,
                unresolved: 1,
                functions: [("f\u{1}\"".to_string(), 2)].into_iter().collect(),
            })),
        };
        let xray = DumpReport {
            kind: b"xray".to_vec(),
            name: b"c".to_vec(),
            context: None,
            content: Content::Xray(Err(DumpError::NotATrace {
                path: "d/c\u{7f}".into(),
            })),
        };
        (Arc::new(sancov), Arc::new(xray))
    }

    #[test]
    fn kept_answers_are_bounded_and_refilled() {
        let line: &[u8] = b"{{{pc:0x10}}}";
        let els = elements(line);
        let mut r = json();
        for i in 0..(MAX_KEPT as u64 + 5) {
            let info = Arc::new(CodeInfo {
                frames: smallvec::smallvec![frame(Some("f"), Some("/a.c"), i as u32, 1)],
                symbol: Some(hit("f", i)),
                ..CodeInfo::default()
            });
            let res = Resolved {
                addr: i,
                adjusted: i,
                place: Some(Place {
                    module: module(0, b"m"),
                    region: region(0),
                    rel: 0x1000 + i,
                }),
                lookup: Lookup::Code(info),
            };
            let events = [Event::Pc(&els[0], res)];
            assert_eq!(
                render_line(&mut r, i, line, &events),
                oracle::line(i, line, &events)
            );
            assert!(r.kept.answers.len() <= MAX_KEPT);
        }
    }

    #[test]
    fn plain_and_raw_as_the_value_renderer() {
        let text: &[u8] =
            b"a\n\n\xff\xfe\"\\\x00\x1f\x7f\r\n\xe2\x82\n\xf0\x9f\x98\x80 \t\x08\x0c\n";
        let mut r = json();
        let mut out = Vec::new();
        r.plain(&mut out, text, 41).expect("plain");
        assert_eq!(out, oracle::plain(text, 41));
        // More than one buffer's worth.
        let big: Vec<u8> = text
            .iter()
            .copied()
            .cycle()
            .take(FLUSH_AT * 3 + 7)
            .collect();
        let big = &big[..=big.iter().rposition(|&b| b == b'\n').unwrap_or(0)];
        let mut out = Vec::new();
        r.plain(&mut out, big, 1).expect("plain");
        assert_eq!(out, oracle::plain(big, 1));
        // No final newline (the filter never gives one, but it is kept).
        for t in [&b"a\nb\"\xff"[..], b"\n", b"", b"z"] {
            let mut out = Vec::new();
            r.plain(&mut out, t, 7).expect("plain");
            assert_eq!(out, oracle::plain(t, 7));
        }
        let mut out = Vec::new();
        r.raw(&mut out, b"x\xc3(\"").expect("raw");
        assert_eq!(out, oracle::raw(b"x\xc3(\""));
    }

    /// Records every piece handed to it.
    #[derive(Default)]
    struct Pieces(Vec<Vec<u8>>);

    impl Write for Pieces {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.push(b.to_vec());
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A holding renderer writes the same bytes as one writing each line
    /// at once, in pieces of at least [`FLUSH_AT`] bytes but for what
    /// `idle`, `pause` and `finish` hand over.
    #[test]
    fn held_output_goes_out_whole_in_large_pieces() {
        let mut held = Json::new();
        let mut now = json();
        let (mut pieces, mut expected) = (Pieces::default(), Vec::new());
        let mut released = 0;
        for i in 0..3000u64 {
            let text = format!(
                "line {i} \"quoted\" \x01 {}\n",
                "x".repeat(i as usize % 200)
            );
            let events = [Event::Text(text.as_bytes())];
            let line = Line {
                bytes: text.as_bytes(),
                ending: b"\n",
                number: i,
                lead: b"",
                key: None,
            };
            let step = |r: &mut Json, out: &mut dyn Write| match i % 3 {
                0 => r.plain(out, text.as_bytes(), i),
                1 => r.line(out, &line, &events),
                _ => r.raw(out, text.as_bytes()),
            };
            step(&mut held, &mut pieces).expect("held");
            step(&mut now, &mut expected).expect("at once");
            let written: usize = pieces.0.iter().map(Vec::len).sum();
            assert!(expected.len() - written < FLUSH_AT, "at {i}");
            match i {
                1000 => held.idle(&mut pieces).expect("idle"),
                2000 => held.pause(&mut pieces).expect("pause"),
                _ => continue,
            }
            released += 1;
            assert_eq!(pieces.0.concat(), expected, "at {i}");
        }
        held.finish(&mut pieces).expect("finish");
        assert_eq!(pieces.0.concat(), expected);
        let small = pieces.0.iter().filter(|p| p.len() < FLUSH_AT).count();
        assert!(small <= released + 1, "{small} small pieces");
        assert!(pieces.0.len() > 3, "{} pieces", pieces.0.len());
    }

    #[test]
    fn word_check_is_exact() {
        for b in 0..=255u8 {
            for at in 0..8 {
                let mut w = *b"abcdefgh";
                w[at] = b;
                assert_eq!(
                    word_needs_escape(u64::from_le_bytes(w)),
                    ESCAPE[usize::from(b)] != 0,
                    "{b:#x} at {at}"
                );
            }
        }
        // Next to bytes that borrow or carry.
        for w in [
            [0x80u8, 0x1f, 0xff, 0, 0x21, 0x23, 0x5b, 0x5d],
            [0xff; 8],
            [0x20; 8],
        ] {
            let want = w.iter().any(|&b| ESCAPE[usize::from(b)] != 0);
            assert_eq!(word_needs_escape(u64::from_le_bytes(w)), want, "{w:?}");
        }
    }

    #[test]
    fn plain_ascii_checks_every_byte_of_every_length() {
        for len in 1..50 {
            let mut b = vec![b'a'; len];
            assert!(plain_ascii(&b));
            for at in 0..len {
                for c in 0..=255u8 {
                    b[at] = c;
                    let want = c.is_ascii() && ESCAPE[usize::from(c)] == 0;
                    assert_eq!(plain_ascii(&b), want, "{len} {at} {c:#x}");
                }
                b[at] = b'a';
            }
        }
    }

    #[test]
    fn first_line_checks_every_byte_of_every_length() {
        // Each byte at each place of lines of every length around the
        // 16-byte blocks, alone and followed by another line.
        for len in 1..50 {
            for tail in [&b""[..], b"\nnext \" line\n"] {
                let mut text = vec![b'a'; len];
                text.extend_from_slice(tail);
                for at in 0..len {
                    for c in 0..=255u8 {
                        text[at] = c;
                        let end = text.iter().position(|&b| b == b'\n').unwrap_or(text.len());
                        let plain = text[..end]
                            .iter()
                            .all(|&b| b.is_ascii() && ESCAPE[usize::from(b)] == 0);
                        assert_eq!(first_line(&text), (end, plain), "{len} {at} {c:#x}");
                    }
                    text[at] = b'a';
                }
            }
        }
    }

    proptest! {
        #[test]
        fn words_checked_exactly(w: [u8; 8]) {
            let want = w.iter().any(|&b| ESCAPE[usize::from(b)] != 0);
            prop_assert_eq!(word_needs_escape(u64::from_le_bytes(w)), want);
        }

        #[test]
        fn plain_ascii_is_exact(b in proptest::collection::vec(prop_oneof![0x20u8..0x7f, any::<u8>()], 0..40)) {
            let want = b.iter().all(|&c| c.is_ascii() && ESCAPE[usize::from(c)] == 0);
            prop_assert_eq!(plain_ascii(&b), want);
        }

        #[test]
        fn mixed_strings_escape_as_serde_json(s in "[a-z\"\\\\\u{0}-\u{1f}\u{7f}é€😀 ]{0,40}") {
            let mut ours = Vec::new();
            string(&mut ours, &s);
            prop_assert_eq!(ours, serde_json::to_vec(&s).unwrap_or_default());
        }

        #[test]
        fn strings_escape_as_serde_json(s in any::<String>(), ctl in proptest::collection::vec(0u8..0x80, 0..40)) {
            for s in [s, String::from_utf8(ctl).unwrap_or_default()] {
                let mut ours = Vec::new();
                string(&mut ours, &s);
                prop_assert_eq!(ours, serde_json::to_vec(&s).unwrap_or_default());
            }
        }

        #[test]
        fn plain_lines_as_the_value_renderer(
            t in proptest::collection::vec(prop_oneof![Just(b'\n'), 0x20u8..0x7f, any::<u8>()], 0..200),
        ) {
            let mut out = Vec::new();
            prop_assert!(json().plain(&mut out, &t, 3).is_ok());
            prop_assert_eq!(out, oracle::plain(&t, 3));
        }

        #[test]
        fn text_spans_as_serde_json(t in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut ours = Vec::new();
            text_span(&mut ours, &t);
            prop_assert_eq!(ours, serde_json::to_vec(&oracle::text_span(&t)).unwrap_or_default());
            let mut r = json();
            let mut out = Vec::new();
            prop_assert!(r.raw(&mut out, &t).is_ok());
            prop_assert_eq!(out, oracle::raw(&t));
        }
    }
}
