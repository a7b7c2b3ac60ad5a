//! The markup lexer: bytes in, typed elements with byte spans out.
//!
//! It knows nothing of ELF, of modules or of output. Two layers:
//!
//! * [`Lexer::tokenize`] splits one line (or one multi-line `hexdict` group)
//!   into [`Node`]s: plain text, ANSI SGR escapes (`ESC[0m`, `ESC[1m`,
//!   `ESC[30m`..`ESC[37m`) and raw elements (`{{{tag:field:...}}}`). Element
//!   finding follows LLVM's rules exactly: the first `{{{`, then the first
//!   `}}}` after it; a body with an empty tag is plain text.
//! * [`parse_element`] turns a raw element into a typed [`Element`] whose
//!   fields are checked as the spec (and LLVM 22) define `%p`, `%i`, `%u`,
//!   `%x` and `%s`, or into a [`MarkupError`] that says what was expected,
//!   what was found, and at which byte.
//!
//! The scans for `{{{`, `}}}` and ESC are `memchr`/`memmem` searches: plain
//! text is never walked byte by byte.

use std::ops::Range;

use memchr::memmem;

use crate::base::BuildId;

/// ANSI escape byte.
pub const ESC: u8 = 0x1b;

/// An SGR code the markup format recognises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sgr {
    /// `ESC[0m`
    Reset,
    /// `ESC[1m`
    Bold,
    /// `ESC[3Nm`, N in 0..=7 (black, red, green, yellow, blue, magenta, cyan, white).
    Color(u8),
}

/// One piece of a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// Plain text: copied through unchanged.
    Text(Range<usize>),
    /// A recognised SGR escape.
    Sgr(Sgr, Range<usize>),
    /// A `{{{...}}}` element; see [`RawElement`].
    Element(RawElement),
}

/// A `{{{tag:fields}}}` element before field checking. All ranges are byte
/// offsets into the line given to [`Lexer::tokenize`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawElement {
    /// The whole element, braces included.
    pub span: Range<usize>,
    /// The tag (never empty; may contain bytes other than `a`-`z`).
    pub tag: Range<usize>,
    /// The fields, split at every `:`; empty fields are kept. Held inline
    /// up to the six of an `mmap` (no allocation per element).
    pub fields: Fields,
}

/// A [`RawElement`]'s field ranges.
pub type Fields = smallvec::SmallVec<[Range<usize>; 6]>;

impl RawElement {
    pub fn tag<'a>(&self, line: &'a [u8]) -> &'a [u8] {
        &line[self.tag.clone()]
    }
    pub fn field<'a>(&self, line: &'a [u8], i: usize) -> &'a [u8] {
        self.fields.get(i).map_or(&[][..], |r| &line[r.clone()])
    }
    pub fn text<'a>(&self, line: &'a [u8]) -> &'a [u8] {
        &line[self.span.clone()]
    }
    /// True when the tag is made only of `a`-`z` (the spec's rule).
    pub fn tag_is_valid(&self, line: &[u8]) -> bool {
        self.tag(line).iter().all(u8::is_ascii_lowercase)
    }
}

/// Splits lines into nodes. Holds the prebuilt `{{{`/`}}}` searchers.
pub struct Lexer {
    open: memmem::Finder<'static>,
    open_rev: memmem::FinderRev<'static>,
    close: memmem::Finder<'static>,
}

impl Default for Lexer {
    fn default() -> Self {
        Lexer::new()
    }
}

impl Lexer {
    pub fn new() -> Lexer {
        Lexer {
            open: memmem::Finder::new(b"{{{"),
            open_rev: memmem::FinderRev::new(b"{{{"),
            close: memmem::Finder::new(b"}}}"),
        }
    }

    /// Offset of the first `{{{` in `hay`.
    pub fn find_open(&self, hay: &[u8]) -> Option<usize> {
        self.open.find(hay)
    }

    /// Offset of the last `{{{` in `hay`.
    pub fn rfind_open(&self, hay: &[u8]) -> Option<usize> {
        self.open_rev.rfind(hay)
    }

    /// Offset of the first `}}}` in `hay`.
    pub fn find_close(&self, hay: &[u8]) -> Option<usize> {
        self.close.find(hay)
    }

    /// Split `line` into nodes, appended to `out` (cleared first). Every
    /// byte of `line` belongs to exactly one node, in order.
    pub fn tokenize(&self, line: &[u8], out: &mut Vec<Node>) {
        out.clear();
        let mut pos = 0;
        while pos < line.len() {
            match self.next_element(line, pos) {
                Some(el) => {
                    split_text(line, pos..el.span.start, out);
                    pos = el.span.end;
                    out.push(Node::Element(el));
                }
                None => {
                    split_text(line, pos..line.len(), out);
                    break;
                }
            }
        }
    }

    /// The next element starting at or after `from`, LLVM's way: first `{{{`,
    /// then the first `}}}` after it; bodies with an empty tag are skipped
    /// (they stay text).
    fn next_element(&self, line: &[u8], mut from: usize) -> Option<RawElement> {
        loop {
            let begin = from + find_triple(&line[from..], b'{')?;
            let body_start = begin + 3;
            let close = body_start + find_triple(&line[body_start..], b'}')?;
            let end = close + 3;
            from = end;
            let body = &line[body_start..close];
            let (tag_len, has_colon) = match memchr::memchr(b':', body) {
                Some(i) => (i, true),
                None => (body.len(), false),
            };
            if tag_len == 0 {
                continue;
            }
            let tag = body_start..body_start + tag_len;
            let mut fields = Fields::new();
            if has_colon {
                let mut start = body_start + tag_len + 1;
                loop {
                    match memchr::memchr(b':', &line[start..close]) {
                        Some(i) => {
                            fields.push(start..start + i);
                            start += i + 1;
                        }
                        None => {
                            fields.push(start..close);
                            break;
                        }
                    }
                }
            }
            return Some(RawElement {
                span: begin..end,
                tag,
                fields,
            });
        }
    }
}

/// The first of three `b` in a row in `hay`. A line holds few braces, and
/// on a line this costs less than setting up a substring search.
fn find_triple(hay: &[u8], b: u8) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = memchr::memchr(b, &hay[from..]) {
        let at = from + i;
        match hay.get(at + 1..at + 3) {
            Some(next) if next[0] == b && next[1] == b => return Some(at),
            // Past a brace that is not followed by two more.
            Some(next) if next[0] == b => from = at + 1,
            Some(_) => from = at + 2,
            None => return None,
        }
    }
    None
}

/// Split a text region into plain text and recognised SGR escapes.
fn split_text(line: &[u8], range: Range<usize>, out: &mut Vec<Node>) {
    let mut start = range.start;
    let mut pos = range.start;
    while pos < range.end {
        let Some(i) = memchr::memchr(ESC, &line[pos..range.end]) else {
            break;
        };
        let esc = pos + i;
        match parse_sgr(&line[esc..range.end]) {
            Some((sgr, len)) => {
                if esc > start {
                    out.push(Node::Text(start..esc));
                }
                out.push(Node::Sgr(sgr, esc..esc + len));
                pos = esc + len;
                start = pos;
            }
            None => pos = esc + 1,
        }
    }
    if range.end > start {
        out.push(Node::Text(start..range.end));
    }
}

/// Recognise `ESC[0m`, `ESC[1m`, `ESC[30m`..`ESC[37m` at the start of `s`;
/// returns the code and its length.
pub fn parse_sgr(s: &[u8]) -> Option<(Sgr, usize)> {
    match s {
        [ESC, b'[', b'0', b'm', ..] => Some((Sgr::Reset, 4)),
        [ESC, b'[', b'1', b'm', ..] => Some((Sgr::Bold, 4)),
        [ESC, b'[', b'3', d @ b'0'..=b'7', b'm', ..] => Some((Sgr::Color(d - b'0'), 5)),
        _ => None,
    }
}

/// How a code address was given (`:ra`, `:pc`, or no suffix).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PcKind {
    /// No suffix: the element kind decides (bt: return address, pc: precise).
    Unspecified,
    /// `:ra`: a return address.
    ReturnAddress,
    /// `:pc`: a precise code location.
    Precise,
}

/// mmap permissions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Mode {
    pub read: bool,
    pub write: bool,
    pub exec: bool,
}

impl Mode {
    /// Read and execute: the mode of a code segment.
    pub const RX: Mode = Mode {
        read: true,
        write: false,
        exec: true,
    };

    /// Lowercase letters in `rwx` order, e.g. `"rx"`.
    pub fn as_str(&self) -> &'static str {
        match (self.read, self.write, self.exec) {
            (true, true, true) => "rwx",
            (true, true, false) => "rw",
            (true, false, true) => "rx",
            (true, false, false) => "r",
            (false, true, true) => "wx",
            (false, true, false) => "w",
            (false, false, true) => "x",
            (false, false, false) => "",
        }
    }
}

/// A checked element. Byte-string fields borrow from the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Element<'a> {
    /// `{{{symbol:%s}}}`; the name may be empty.
    Symbol { name: &'a [u8] },
    /// `{{{pc:%p[:ra|:pc]}}}`
    Pc { addr: u64, kind: PcKind },
    /// `{{{data:%p}}}`
    Data { addr: u64 },
    /// `{{{bt:%u:%p[:ra|:pc]}}}`
    Bt { frame: u64, addr: u64, kind: PcKind },
    /// `{{{hexdict:...}}}`: key/value pairs (values parsed where they parse).
    Hexdict { pairs: Vec<HexPair<'a>> },
    /// `{{{dumpfile:%s:%s}}}`
    Dumpfile { kind: &'a [u8], id: &'a [u8] },
    /// `{{{reset}}}`
    Reset,
    /// `{{{module:%i:%s:elf:%x}}}`
    Module {
        id: u64,
        name: &'a [u8],
        build_id: BuildId,
    },
    /// `{{{mmap:%p:%i:load:%i:%s:%p}}}`
    Mmap {
        start: u64,
        size: u64,
        module: u64,
        mode: Mode,
        rel: u64,
    },
    /// A lowercase tag this version does not know.
    Unknown,
}

impl Element<'_> {
    /// Contextual elements (`reset`, `module`, `mmap`) change state and are
    /// not themselves presented.
    pub fn is_contextual(&self) -> bool {
        matches!(
            self,
            Element::Reset | Element::Module { .. } | Element::Mmap { .. }
        )
    }
}

/// One `KEY: VALUE` pair of a hexdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HexPair<'a> {
    pub key: &'a [u8],
    /// Byte offset of the value in the line/group.
    pub value_at: usize,
    pub value_text: &'a [u8],
    pub value: u64,
}

/// What went wrong with an element: a message and the byte offset (in the
/// line) it points at.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct MarkupError {
    pub at: usize,
    pub message: String,
}

fn err(at: usize, message: String) -> MarkupError {
    MarkupError { at, message }
}

fn show(b: &[u8]) -> String {
    const MAX: usize = 40;
    let s = String::from_utf8_lossy(&b[..b.len().min(MAX)]);
    let mut out: String = s.escape_debug().collect();
    if b.len() > MAX {
        out.push_str("...");
    }
    out
}

fn type_err(line: &[u8], r: &Range<usize>, what: &str) -> MarkupError {
    let found = &line[r.clone()];
    let found = if found.is_empty() {
        "nothing".to_string()
    } else {
        format!("'{}'", show(found))
    };
    err(r.start, format!("expected {what}, found {found}"))
}

fn check_at_least(el: &RawElement, tag: &str, n: usize) -> Result<(), MarkupError> {
    if el.fields.len() < n {
        return Err(err(
            el.tag.end,
            format!(
                "expected at least {n} field(s) in '{tag}', found {}",
                el.fields.len()
            ),
        ));
    }
    Ok(())
}

/// Fewer fields than `tag` takes (see [`fields_taken`]) is an error.
#[inline(always)]
fn check_fields(el: &RawElement, tag: &str) -> Result<(), MarkupError> {
    match fields_taken(tag.as_bytes()) {
        Some((most, true)) => check_at_least(el, tag, most - 1),
        Some((most, false)) => check_exactly(el, tag, most),
        None => Ok(()),
    }
}

fn check_exactly(el: &RawElement, tag: &str, n: usize) -> Result<(), MarkupError> {
    if el.fields.len() < n {
        return Err(err(
            el.tag.end,
            format!(
                "expected {n} field(s) in '{tag}', found {}",
                el.fields.len()
            ),
        ));
    }
    Ok(())
}

/// How many fields an element of `tag` takes at most, and whether one
/// fewer may be given (`pc` and `bt` take an optional type): `None` for an
/// element that takes a body (`hexdict`) or an unknown tag. What
/// [`parse_element`] requires and [`surplus_fields`] warns about.
/// Inlined so that the checks of [`parse_element`], which name their tag,
/// fold to the counts.
#[inline(always)]
fn fields_taken(tag: &[u8]) -> Option<(usize, bool)> {
    match tag {
        b"reset" => Some((0, false)),
        b"symbol" | b"data" => Some((1, false)),
        b"dumpfile" => Some((2, false)),
        b"pc" => Some((2, true)),
        b"bt" => Some((3, true)),
        b"module" => Some((4, false)),
        b"mmap" => Some((6, false)),
        _ => None,
    }
}

/// A warning for an element with more fields than its tag takes: the
/// element is still read, from the fields it takes, and the rest are
/// ignored (as LLVM 22 reads it, which warns at the same place: the end of
/// the tag).
pub fn surplus_fields(line: &[u8], el: &RawElement) -> Option<MarkupError> {
    let (most, optional) = fields_taken(el.tag(line))?;
    let found = el.fields.len();
    if found <= most {
        return None;
    }
    let tag = String::from_utf8_lossy(el.tag(line));
    let expected = if optional { "at most " } else { "" };
    Some(err(
        el.tag.end,
        format!(
            "expected {expected}{most} field(s) in '{tag}', found {found}; extra fields are ignored"
        ),
    ))
}

/// The element as LLVM 22 reads it, when that differs from the spec's
/// reading: LLVM reads the type field of a `pc` or `bt` only when it is the
/// last field; with a field after it the type is ignored (not even checked)
/// and the element's default applies (`bt` steps back, `pc` does not).
pub fn llvm_reading(line: &[u8], el: &RawElement) -> Option<RawElement> {
    let typed = match el.tag(line) {
        b"pc" => 1,
        b"bt" => 2,
        _ => return None,
    };
    if el.fields.len() <= typed + 1 {
        return None;
    }
    let mut read = el.clone();
    read.fields.truncate(typed);
    Some(read)
}

/// Check a raw element's fields and build the typed element. Extra trailing
/// fields are accepted and ignored. A tag that is not all `a`-`z` is an
/// error; an unknown lowercase tag is [`Element::Unknown`].
pub fn parse_element<'a>(line: &'a [u8], el: &RawElement) -> Result<Element<'a>, MarkupError> {
    let tag = el.tag(line);
    if !el.tag_is_valid(line) {
        return Err(err(
            el.tag.start,
            format!("expected a tag of lowercase letters, found '{}'", show(tag)),
        ));
    }
    let f = |i: usize| -> &'a [u8] { el.field(line, i) };
    let r = |i: usize| -> &Range<usize> { &el.fields[i] };
    match tag {
        b"symbol" => {
            check_fields(el, "symbol")?;
            Ok(Element::Symbol { name: f(0) })
        }
        b"pc" => {
            check_fields(el, "pc")?;
            let addr = parse_addr(f(0)).ok_or_else(|| type_err(line, r(0), "address"))?;
            let kind = if el.fields.len() >= 2 {
                parse_pc_kind(f(1)).ok_or_else(|| type_err(line, r(1), "'ra' or 'pc'"))?
            } else {
                PcKind::Unspecified
            };
            Ok(Element::Pc { addr, kind })
        }
        b"data" => {
            check_fields(el, "data")?;
            let addr = parse_addr(f(0)).ok_or_else(|| type_err(line, r(0), "address"))?;
            Ok(Element::Data { addr })
        }
        b"bt" => {
            check_fields(el, "bt")?;
            let frame =
                parse_dec(f(0)).ok_or_else(|| type_err(line, r(0), "decimal frame number"))?;
            let addr = parse_addr(f(1)).ok_or_else(|| type_err(line, r(1), "address"))?;
            let kind = if el.fields.len() >= 3 {
                parse_pc_kind(f(2)).ok_or_else(|| type_err(line, r(2), "'ra' or 'pc'"))?
            } else {
                PcKind::Unspecified
            };
            Ok(Element::Bt { frame, addr, kind })
        }
        b"hexdict" => {
            check_at_least(el, "hexdict", 1)?;
            let body_start = el.fields[0].start;
            let body_end = el.span.end - 3;
            Ok(Element::Hexdict {
                pairs: parse_hexdict(line, body_start..body_end),
            })
        }
        b"dumpfile" => {
            check_fields(el, "dumpfile")?;
            Ok(Element::Dumpfile {
                kind: f(0),
                id: f(1),
            })
        }
        b"reset" => Ok(Element::Reset),
        b"module" => {
            check_at_least(el, "module", 3)?;
            let id = parse_int(f(0)).ok_or_else(|| type_err(line, r(0), "module ID"))?;
            if f(2) != b"elf" {
                return Err(type_err(line, r(2), "module type 'elf'"));
            }
            check_fields(el, "module")?;
            let build_id = parse_build_id(f(3)).ok_or_else(|| type_err(line, r(3), "build ID"))?;
            Ok(Element::Module {
                id,
                name: f(1),
                build_id,
            })
        }
        b"mmap" => {
            check_at_least(el, "mmap", 3)?;
            let start = parse_addr(f(0)).ok_or_else(|| type_err(line, r(0), "address"))?;
            let size = parse_int(f(1)).ok_or_else(|| type_err(line, r(1), "size"))?;
            if f(2) != b"load" {
                return Err(type_err(line, r(2), "mmap type 'load'"));
            }
            check_fields(el, "mmap")?;
            let module = parse_int(f(3)).ok_or_else(|| type_err(line, r(3), "module ID"))?;
            let mode = parse_mode(f(4))
                .ok_or_else(|| type_err(line, r(4), "mode (r, w, x in that order)"))?;
            let rel = parse_addr(f(5)).ok_or_else(|| type_err(line, r(5), "address"))?;
            Ok(Element::Mmap {
                start,
                size,
                module,
                mode,
                rel,
            })
        }
        _ => Ok(Element::Unknown),
    }
}

/// `%p`: one or more `0` digits alone, or lowercase `0x` followed by hex
/// digits (either case, any count) that fit in 64 bits (LLVM's rule).
pub fn parse_addr(s: &[u8]) -> Option<u64> {
    if !s.is_empty() && s.iter().all(|&c| c == b'0') {
        return Some(0);
    }
    let digits = s.strip_prefix(b"0x")?;
    parse_radix(digits, 16)
}

/// `%i`: decimal, `0x`/`0X` hex, leading-`0` octal (LLVM also takes `0b`
/// binary and `0o` octal).
pub fn parse_int(s: &[u8]) -> Option<u64> {
    let (digits, radix) = match s {
        [b'0', b'x' | b'X', rest @ ..] => (rest, 16),
        [b'0', b'b' | b'B', rest @ ..] => (rest, 2),
        [b'0', b'o' | b'O', rest @ ..] => (rest, 8),
        [b'0', rest @ ..] if !rest.is_empty() => (rest, 8),
        _ => (s, 10),
    };
    parse_radix(digits, radix)
}

/// `%u`: decimal digits only (leading zeros allowed).
pub fn parse_dec(s: &[u8]) -> Option<u64> {
    parse_radix(s, 10)
}

fn parse_radix(s: &[u8], radix: u32) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    if radix == 16 {
        return parse_hex(s);
    }
    let mut v: u64 = 0;
    for &c in s {
        let d = (c as char).to_digit(radix)?;
        v = v.checked_mul(u64::from(radix))?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// [`parse_radix`] in base 16, written out: every address of a log goes
/// through it.
fn parse_hex(s: &[u8]) -> Option<u64> {
    s.iter()
        .try_fold(0, |v, &c| crate::base::hex::push_digit(v, c))
}

/// `%x`: hex bytes; an odd count reads as if it had a leading `0` (LLVM).
pub fn parse_build_id(s: &[u8]) -> Option<BuildId> {
    std::str::from_utf8(s).ok().and_then(BuildId::from_hex)
}

/// mmap mode: optional r, w, x in that order, either case, at least one.
pub fn parse_mode(s: &[u8]) -> Option<Mode> {
    let mut mode = Mode::default();
    let mut rest = s;
    if let [b'r' | b'R', tail @ ..] = rest {
        mode.read = true;
        rest = tail;
    }
    if let [b'w' | b'W', tail @ ..] = rest {
        mode.write = true;
        rest = tail;
    }
    if let [b'x' | b'X', tail @ ..] = rest {
        mode.exec = true;
        rest = tail;
    }
    if !rest.is_empty() || s.is_empty() {
        return None;
    }
    Some(mode)
}

/// `ra` or `pc` (case-sensitive).
pub fn parse_pc_kind(s: &[u8]) -> Option<PcKind> {
    match s {
        b"ra" => Some(PcKind::ReturnAddress),
        b"pc" => Some(PcKind::Precise),
        _ => None,
    }
}

/// Parse a hexdict body: whitespace-separated `KEY:VALUE` pairs where the
/// value is one or more `0`s or `0x` + hex digits. Pairs whose value does not
/// parse are skipped. A key may be followed by whitespace before the value
/// (the spec's example aligns values in columns).
fn parse_hexdict<'a>(line: &'a [u8], body: Range<usize>) -> Vec<HexPair<'a>> {
    let mut pairs = Vec::new();
    let text = &line[body.clone()];
    let mut words = Vec::new();
    let mut i = 0;
    while i < text.len() {
        while i < text.len() && text[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        while i < text.len() && !text[i].is_ascii_whitespace() {
            i += 1;
        }
        if i > start {
            words.push(start..i);
        }
    }
    let mut k = 0;
    while k < words.len() {
        let w = &text[words[k].clone()];
        // "KEY:VALUE" in one word, or "KEY:" then "VALUE".
        if let Some(colon) = memchr::memchr(b':', w) {
            let key = &w[..colon];
            let (value_text, value_at) = if colon + 1 < w.len() {
                (&w[colon + 1..], words[k].start + colon + 1)
            } else if k + 1 < words.len() {
                k += 1;
                (&text[words[k].clone()], words[k].start)
            } else {
                break;
            };
            if let Some(value) = parse_addr(value_text) {
                pairs.push(HexPair {
                    key,
                    value_at: body.start + value_at,
                    value_text: &line
                        [body.start + value_at..body.start + value_at + value_text.len()],
                    value,
                });
            }
        }
        k += 1;
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(line: &[u8]) -> Vec<Node> {
        let mut out = Vec::new();
        Lexer::new().tokenize(line, &mut out);
        out
    }

    fn el(line: &[u8]) -> Result<Element<'_>, MarkupError> {
        let ns = nodes(line);
        let raw = ns
            .iter()
            .find_map(|n| match n {
                Node::Element(e) => Some(e.clone()),
                _ => None,
            })
            .expect("an element");
        parse_element(line, &raw)
    }

    /// [`surplus_fields`] of the first element of `line`, as (column from
    /// 1, message).
    fn surplus(line: &[u8]) -> Option<(usize, String)> {
        let raw = nodes(line).into_iter().find_map(|n| match n {
            Node::Element(e) => Some(e),
            _ => None,
        })?;
        surplus_fields(line, &raw).map(|e| (e.at + 1, e.message))
    }

    #[test]
    fn surplus_fields_are_named_where_llvm_names_them() {
        let cases: [(&[u8], usize, &str); 8] = [
            (
                b"{{{reset:}}}",
                9,
                "expected 0 field(s) in 'reset', found 1",
            ),
            (
                b"x {{{symbol:a:b}}}",
                12,
                "expected 1 field(s) in 'symbol', found 2",
            ),
            (
                b"{{{data:0x1:}}}",
                8,
                "expected 1 field(s) in 'data', found 2",
            ),
            (
                b"{{{dumpfile:a:b:c}}}",
                12,
                "expected 2 field(s) in 'dumpfile', found 3",
            ),
            (
                b"{{{pc:0x9:ra:x}}}",
                6,
                "expected at most 2 field(s) in 'pc', found 3",
            ),
            (
                b"{{{bt:0:0x9:pc::}}}",
                6,
                "expected at most 3 field(s) in 'bt', found 5",
            ),
            (
                b"{{{module:0:a:elf:ab:}}}",
                10,
                "expected 4 field(s) in 'module', found 5",
            ),
            (
                b"{{{mmap:0:1:load:0:r:0:x}}}",
                8,
                "expected 6 field(s) in 'mmap', found 7",
            ),
        ];
        for (line, column, message) in cases {
            let what = String::from_utf8_lossy(line);
            let (c, m) = surplus(line).unwrap_or_else(|| panic!("no warning for {what}"));
            assert_eq!(
                (c, m),
                (column, format!("{message}; extra fields are ignored")),
                "{what}"
            );
        }
        // As many fields as taken (or fewer: an error elsewhere), a body,
        // and unknown tags: nothing to say.
        for line in [
            &b"{{{reset}}}"[..],
            b"{{{pc:0x1:ra}}}",
            b"{{{bt:0:0x1}}}",
            b"{{{symbol}}}",
            b"{{{module:0:a:elf:ab}}}",
            b"{{{hexdict:A: 0x1 B: 0x2}}}",
            b"{{{foo:a:b:c:d:e:f:g}}}",
        ] {
            assert_eq!(surplus(line), None, "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn triples_are_found_as_a_substring_search_finds_them() {
        // Every string of up to 9 bytes over `{` and `x`.
        for len in 0..=9 {
            for bits in 0u32..1 << len {
                let hay: Vec<u8> = (0..len)
                    .map(|i| if bits >> i & 1 == 1 { b'{' } else { b'x' })
                    .collect();
                assert_eq!(
                    find_triple(&hay, b'{'),
                    memchr::memmem::find(&hay, b"{{{"),
                    "{}",
                    String::from_utf8_lossy(&hay)
                );
            }
        }
    }

    #[test]
    fn hex_digits_read_as_the_standard_library_reads_them() {
        let cases: &[&[u8]] = &[
            b"0",
            b"1f",
            b"DEADbeef",
            b"ffffffffffffffff",
            b"10000000000000000",
            b"0000000000000000000000ffffffffffffffff",
            b"00000000000000000000001ffffffffffffffff",
            b"fffffffffffffff0",
            b"12g4",
            b"-1",
            b"+1",
            b" 1",
            b"0x1",
        ];
        for &s in cases {
            let std = std::str::from_utf8(s)
                .ok()
                .filter(|t| !t.starts_with('+'))
                .and_then(|t| u64::from_str_radix(t, 16).ok());
            assert_eq!(parse_radix(s, 16), std, "{}", String::from_utf8_lossy(s));
        }
    }

    #[test]
    fn text_only() {
        assert_eq!(nodes(b"hello world"), vec![Node::Text(0..11)]);
        assert_eq!(nodes(b""), vec![]);
    }

    #[test]
    fn element_spans_and_fields() {
        let line = b"a {{{pc:0x10:ra}}} b";
        let ns = nodes(line);
        assert_eq!(ns.len(), 3);
        assert_eq!(ns[0], Node::Text(0..2));
        let Node::Element(e) = &ns[1] else {
            panic!("element expected")
        };
        assert_eq!(e.text(line), b"{{{pc:0x10:ra}}}");
        assert_eq!(e.tag(line), b"pc");
        assert_eq!(e.field(line, 0), b"0x10");
        assert_eq!(e.field(line, 1), b"ra");
        assert_eq!(ns[2], Node::Text(18..20));
    }

    #[test]
    fn llvm_element_boundaries() {
        // First {{{, then the first }}} after it.
        let line = b"{{{a{{{symbol:x}}}";
        let ns = nodes(line);
        let Node::Element(e) = &ns[0] else {
            panic!("element expected")
        };
        assert_eq!(e.tag(line), b"a{{{symbol");
        assert!(!e.tag_is_valid(line));
        let line = b"{{{symbol:a}}b}}}";
        let ns = nodes(line);
        let Node::Element(e) = &ns[0] else {
            panic!("element expected")
        };
        assert_eq!(e.field(line, 0), b"a}}b");
    }

    #[test]
    fn empty_tag_is_text() {
        let line = b"{{{}}}{{{:x}}}{{{reset}}}";
        let ns = nodes(line);
        assert_eq!(ns[0], Node::Text(0..14));
        assert!(matches!(&ns[1], Node::Element(e) if e.tag(line) == b"reset"));
    }

    #[test]
    fn empty_fields_kept() {
        let line = b"{{{x:}}}";
        let Node::Element(e) = &nodes(line)[0] else {
            panic!()
        };
        assert_eq!(e.fields.len(), 1);
        let line = b"{{{x}}}";
        let Node::Element(e) = &nodes(line)[0] else {
            panic!()
        };
        assert_eq!(e.fields.len(), 0);
        let line = b"{{{x:a::b:}}}";
        let Node::Element(e) = &nodes(line)[0] else {
            panic!()
        };
        let f: Vec<&[u8]> = (0..e.fields.len()).map(|i| e.field(line, i)).collect();
        assert_eq!(f, vec![&b"a"[..], b"", b"b", b""]);
    }

    #[test]
    fn unclosed_is_text() {
        assert_eq!(nodes(b"x {{{pc:0x1"), vec![Node::Text(0..11)]);
    }

    #[test]
    fn sgr_split() {
        let line = b"\x1b[31mred\x1b[0m \x1b[1;31mx\x1b[37m\x1b[38m";
        let ns = nodes(line);
        assert_eq!(
            ns,
            vec![
                Node::Sgr(Sgr::Color(1), 0..5),
                Node::Text(5..8),
                Node::Sgr(Sgr::Reset, 8..12),
                Node::Text(12..21),
                Node::Sgr(Sgr::Color(7), 21..26),
                Node::Text(26..31),
            ]
        );
        // Escapes inside elements are not interpreted.
        let line = b"{{{symbol:\x1b[1m}}}";
        assert_eq!(nodes(line).len(), 1);
    }

    #[test]
    fn addresses() {
        assert_eq!(parse_addr(b"0"), Some(0));
        assert_eq!(parse_addr(b"0000"), Some(0));
        assert_eq!(parse_addr(b"0x12345678"), Some(0x1234_5678));
        assert_eq!(parse_addr(b"0xABcd"), Some(0xabcd));
        assert_eq!(parse_addr(b"0x123"), Some(0x123));
        assert_eq!(parse_addr(b"0xffffffffffffffff"), Some(u64::MAX));
        assert_eq!(parse_addr(b"0x10000000000000000"), None);
        assert_eq!(parse_addr(b"0X10"), None);
        assert_eq!(parse_addr(b"42"), None);
        assert_eq!(parse_addr(b"0x"), None);
        assert_eq!(parse_addr(b""), None);
        assert_eq!(parse_addr(b"0x1 "), None);
        assert_eq!(parse_addr(b"0x-1"), None);
    }

    #[test]
    fn integers() {
        assert_eq!(parse_int(b"0"), Some(0));
        assert_eq!(parse_int(b"42"), Some(42));
        assert_eq!(parse_int(b"0x2a"), Some(42));
        assert_eq!(parse_int(b"0X2A"), Some(42));
        assert_eq!(parse_int(b"052"), Some(42));
        assert_eq!(parse_int(b"0b101"), Some(5));
        assert_eq!(parse_int(b"0o17"), Some(15));
        assert_eq!(parse_int(b"079"), None);
        assert_eq!(parse_int(b"-1"), None);
        assert_eq!(parse_int(b"0xfg"), None);
        assert_eq!(parse_int(b"0x"), None);
        assert_eq!(parse_int(b""), None);
        assert_eq!(parse_int(b"18446744073709551616"), None);
        assert_eq!(parse_dec(b"007"), Some(7));
        assert_eq!(parse_dec(b"0x10"), None);
        assert_eq!(parse_dec(b"+1"), None);
        assert_eq!(parse_dec(b""), None);
    }

    #[test]
    fn build_ids_and_modes() {
        assert_eq!(
            parse_build_id(b"abc").map(|b| b.to_hex()),
            Some("0abc".into())
        );
        assert_eq!(
            parse_build_id(b"ABCD").map(|b| b.to_hex()),
            Some("abcd".into())
        );
        assert_eq!(parse_build_id(b""), None);
        assert_eq!(parse_build_id(b"0xab"), None);
        assert_eq!(parse_mode(b"rx").map(|m| m.as_str()), Some("rx"));
        assert_eq!(parse_mode(b"RWX").map(|m| m.as_str()), Some("rwx"));
        assert_eq!(parse_mode(b"w").map(|m| m.as_str()), Some("w"));
        assert_eq!(parse_mode(b""), None);
        assert_eq!(parse_mode(b"wr"), None);
        assert_eq!(parse_mode(b"rr"), None);
        assert_eq!(parse_mode(b"g"), None);
        assert_eq!(parse_pc_kind(b"RA"), None);
    }

    #[test]
    fn typed_elements() {
        assert_eq!(
            el(b"{{{bt:1:0xffffffff9abcdef0:ra}}}"),
            Ok(Element::Bt {
                frame: 1,
                addr: 0xffff_ffff_9abc_def0,
                kind: PcKind::ReturnAddress
            })
        );
        assert_eq!(
            el(b"{{{pc:0x12345678}}}"),
            Ok(Element::Pc {
                addr: 0x1234_5678,
                kind: PcKind::Unspecified
            })
        );
        assert_eq!(
            el(b"{{{data:0x10:extra}}}"),
            Ok(Element::Data { addr: 0x10 })
        );
        assert_eq!(el(b"{{{reset}}}"), Ok(Element::Reset));
        assert_eq!(el(b"{{{reset:x}}}"), Ok(Element::Reset));
        assert_eq!(
            el(b"{{{symbol:_ZN7Mangled4NameEv}}}"),
            Ok(Element::Symbol {
                name: b"_ZN7Mangled4NameEv"
            })
        );
        assert_eq!(
            el(b"{{{module:1:libc.so:elf:83238ab56ba10497}}}"),
            Ok(Element::Module {
                id: 1,
                name: b"libc.so",
                build_id: BuildId(vec![0x83, 0x23, 0x8a, 0xb5, 0x6b, 0xa1, 0x04, 0x97]),
            })
        );
        assert_eq!(
            el(b"{{{mmap:0x7acba69d5000:0x5a000:load:1:rx:0x1000}}}"),
            Ok(Element::Mmap {
                start: 0x7acb_a69d_5000,
                size: 0x5a000,
                module: 1,
                mode: Mode {
                    read: true,
                    write: false,
                    exec: true
                },
                rel: 0x1000
            })
        );
        assert_eq!(
            el(b"{{{dumpfile:sancov:sancov.8675}}}"),
            Ok(Element::Dumpfile {
                kind: b"sancov",
                id: b"sancov.8675"
            })
        );
        assert_eq!(el(b"{{{foo:a:b}}}"), Ok(Element::Unknown));
    }

    #[test]
    fn element_errors() {
        let e = el(b"xx{{{pc:0x1:RA}}}").unwrap_err();
        assert_eq!(e.at, 12);
        assert_eq!(e.message, "expected 'ra' or 'pc', found 'RA'");
        let e = el(b"{{{bt:0x1:0x2}}}").unwrap_err();
        assert_eq!(e.at, 6);
        let e = el(b"{{{bt:1}}}").unwrap_err();
        assert_eq!(e.at, 5);
        assert_eq!(e.message, "expected at least 2 field(s) in 'bt', found 1");
        let e = el(b"{{{module:3:d.o:foo}}}").unwrap_err();
        assert_eq!(e.message, "expected module type 'elf', found 'foo'");
        let e = el(b"{{{module:3:d.o:elf}}}").unwrap_err();
        assert_eq!(e.message, "expected 4 field(s) in 'module', found 3");
        let e = el(b"{{{mmap:0x1000:0x10:load:0:g:0}}}").unwrap_err();
        assert!(e.message.starts_with("expected mode"));
        let e = el(b"{{{UP}}}").unwrap_err();
        assert_eq!(e.at, 3);
        let e = el(b"{{{symbol}}}").unwrap_err();
        assert_eq!(e.message, "expected 1 field(s) in 'symbol', found 0");
        let e = el(b"{{{data:}}}").unwrap_err();
        assert_eq!(e.message, "expected address, found nothing");
    }

    #[test]
    fn hexdict_pairs() {
        let line =
            b"{{{hexdict:\n  CS:                   0 RIP:     0x6ee17076fb80 R8:0x10 X:zz\n}}}";
        let Ok(Element::Hexdict { pairs }) = el(line) else {
            panic!("hexdict expected")
        };
        let got: Vec<(&[u8], u64)> = pairs.iter().map(|p| (p.key, p.value)).collect();
        assert_eq!(
            got,
            vec![(&b"CS"[..], 0), (b"RIP", 0x6ee1_7076_fb80), (b"R8", 0x10)]
        );
        assert_eq!(
            &line[pairs[1].value_at..pairs[1].value_at + 14],
            b"0x6ee17076fb80"
        );
    }
}
