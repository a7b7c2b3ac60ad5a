//! Bytes of a Breakpad `.sym` file -> [`Record`]s -> a sorted, searchable
//! [`SymIndex`].
//!
//! [`Records`] is the one reader of the format's records (the store parses
//! with it, and so does `gsym create`): one pass over the lines (`memchr`
//! for line ends, no per-line allocation), names and paths left in the
//! input as [`Span`]s, each line a record or the reason it is corrupt.
//! [`parse`] then counts and skips corrupt lines, as Breakpad's processor
//! does (only a file that does not start with a `MODULE` record is
//! refused), and sorts each table once.

use memchr::memchr;

use super::types::{Func, Inline, Line, ModuleRecord, NO_FILE, Origin, Public, Span};

/// Why a file could not be used at all.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("file too large for a Breakpad symbol file ({0} bytes; the limit is 4 GiB)")]
    TooLarge(usize),
    #[error("not a Breakpad symbol file (no MODULE record on the first line)")]
    NotBreakpad,
}

/// Lines that could not be parsed (the file is still used).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Corruption {
    /// How many lines were skipped.
    pub count: u64,
    /// 1-based number of the first skipped line.
    pub first_line: u64,
    /// What was wrong with it.
    pub first_reason: &'static str,
}

/// A parsed symbol file: every table sorted for binary search.
#[derive(Clone, Debug, Default)]
pub struct SymIndex {
    pub module: ModuleRecord,
    /// `INFO CODE_ID <code id> [<file>]`: for ELF the full build ID in hex.
    pub code_id: Option<Span>,
    /// `FILE` records, sorted by number (first definition wins).
    pub files: Vec<(u32, Span)>,
    /// `INLINE_ORIGIN` records, sorted by number (first definition wins).
    pub origins: Vec<Origin>,
    /// `FUNC` records, sorted by address, non-overlapping, non-empty.
    pub funcs: Vec<Func>,
    pub lines: Vec<Line>,
    /// `PUBLIC` records, sorted by address, one per address.
    pub publics: Vec<Public>,
    pub inlines: Vec<Inline>,
    /// `(address, size)` ranges of the inline records.
    pub inline_ranges: Vec<(u64, u64)>,
    pub corruption: Corruption,
}

/// Space-separated fields of one line (Breakpad splits on spaces only).
struct Fields<'a> {
    line: &'a [u8],
    pos: usize,
}

impl<'a> Fields<'a> {
    fn new(line: &'a [u8], pos: usize) -> Fields<'a> {
        Fields { line, pos }
    }

    fn skip_spaces(&mut self) {
        while self.line.get(self.pos) == Some(&b' ') {
            self.pos += 1;
        }
    }

    /// The next space-delimited token (scanned inline: tokens are short,
    /// a `memchr` call costs more than it saves).
    fn token(&mut self) -> Option<&'a [u8]> {
        self.skip_spaces();
        let start = self.pos;
        while self.line.get(self.pos).is_some_and(|&c| c != b' ') {
            self.pos += 1;
        }
        self.line.get(start..self.pos).filter(|t| !t.is_empty())
    }

    /// The rest of the line after spaces, as (offset in line, length); `None`
    /// when empty.
    fn rest(&mut self) -> Option<(usize, usize)> {
        self.skip_spaces();
        let len = self.line.len().checked_sub(self.pos)?;
        (len > 0).then_some((self.pos, len))
    }

    /// The optional `m` (multiple) field of FUNC and PUBLIC records.
    fn skip_m(&mut self) {
        self.skip_spaces();
        if self.line.get(self.pos..self.pos + 2) == Some(b"m ") {
            self.pos += 2;
        }
    }

    fn at_end(&mut self) -> bool {
        self.skip_spaces();
        self.pos >= self.line.len()
    }

    /// A hex number token (no `0x`), parsed while scanning.
    fn hex(&mut self) -> Option<u64> {
        self.skip_spaces();
        let start = self.pos;
        let mut v: u64 = 0;
        while let Some(&c) = self.line.get(self.pos) {
            if c == b' ' {
                break;
            }
            v = crate::base::hex::push_digit(v, c)?;
            self.pos += 1;
        }
        (self.pos > start).then_some(v)
    }

    /// A decimal `u32` token, parsed while scanning.
    fn dec(&mut self) -> Option<u32> {
        self.skip_spaces();
        let start = self.pos;
        let mut v: u32 = 0;
        while let Some(&c) = self.line.get(self.pos) {
            if c == b' ' {
                break;
            }
            if !c.is_ascii_digit() {
                return None;
            }
            v = v.checked_mul(10)?.checked_add(u32::from(c - b'0'))?;
            self.pos += 1;
        }
        (self.pos > start).then_some(v)
    }
}

/// An `INLINE_ORIGIN` record before the file's form is known: the name as
/// the current form reads it (all after the number), and, when the next
/// field is a number followed by more, the old form's file and name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OriginRecord {
    pub id: u32,
    name: Span,
    old: Option<(u32, Span)>,
}

impl OriginRecord {
    /// The record as read in a file of `form`. Under the old form a record
    /// without a file number keeps its whole name.
    pub fn origin(&self, form: OriginForm) -> Origin {
        match self.old {
            Some((file, name)) if form == OriginForm::Old => Origin {
                id: self.id,
                name,
                file,
            },
            _ => Origin {
                id: self.id,
                name: self.name,
                file: NO_FILE,
            },
        }
    }
}

/// The form of a file's `INLINE_ORIGIN` records. Older dump_syms wrote
/// `INLINE_ORIGIN <id> <file_id> <name>`, current ones
/// `INLINE_ORIGIN <id> <name>`. Breakpad's processor decides line by line
/// (a number after the id means the old form), which misreads a
/// current-form name that starts with a number and a space. One writer
/// wrote every record of a file, so the form is decided once for the file:
/// the old one when most records have its shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OriginForm {
    Current,
    Old,
}

impl OriginForm {
    /// The form of a file with these records.
    pub fn of<'r>(records: impl IntoIterator<Item = &'r OriginRecord>) -> OriginForm {
        let (mut all, mut old) = (0usize, 0usize);
        for r in records {
            all += 1;
            old += usize::from(r.old.is_some());
        }
        if old * 2 > all {
            OriginForm::Old
        } else {
            OriginForm::Current
        }
    }

    /// The form of the records of a whole file, for readers that need it
    /// before they read the records: its `INLINE_ORIGIN` lines are read as
    /// [`Records`] reads them.
    pub fn of_file(data: &[u8]) -> OriginForm {
        let records: Vec<OriginRecord> = memchr::memchr_iter(b'\n', data)
            .chain(std::iter::once(data.len()))
            .scan(0usize, |start, end| {
                let line_start = *start;
                *start = end + 1;
                Some((line_start, data.get(line_start..end).unwrap_or_default()))
            })
            .filter_map(|(line_start, line)| {
                let line = trim_cr(line);
                line.starts_with(b"INLINE_ORIGIN ")
                    .then(|| origin_record(line, line_start).ok())
                    .flatten()
            })
            .collect();
        OriginForm::of(&records)
    }
}

/// The index being built from the records.
struct Builder {
    idx: SymIndex,
    /// Index in `idx.funcs` of the FUNC that line/INLINE records attach to.
    cur_func: Option<usize>,
    origins: Vec<OriginRecord>,
}

impl Builder {
    fn close_func(&mut self) {
        if let Some(i) = self.cur_func.take() {
            let end_line = len_u32(&self.idx.lines);
            let end_inline = len_u32(&self.idx.inlines);
            if let Some(f) = self.idx.funcs.get_mut(i) {
                f.end_line = end_line;
                f.end_inline = end_inline;
            }
        }
    }

    fn corrupt(&mut self, line_no: u64, reason: &'static str) {
        let c = &mut self.idx.corruption;
        if c.count == 0 {
            c.first_line = line_no;
            c.first_reason = reason;
        }
        c.count += 1;
    }

    /// Add a record. A FUNC or PUBLIC record ends the current FUNC (one
    /// that fails to parse ends it too, but no line or INLINE record is
    /// read after it, so the end is the same when the next one closes it).
    fn add(&mut self, record: Record) {
        match record {
            Record::Func {
                address,
                size,
                name,
            } => {
                self.close_func();
                let first_line = len_u32(&self.idx.lines);
                let first_inline = len_u32(&self.idx.inlines);
                self.idx.funcs.push(Func {
                    address,
                    size,
                    name,
                    first_line,
                    end_line: first_line,
                    first_inline,
                    end_inline: first_inline,
                });
                self.cur_func = Some(self.idx.funcs.len() - 1);
            }
            Record::Public(p) => {
                self.close_func();
                self.idx.publics.push(p);
            }
            Record::Line(l) => self.idx.lines.push(l),
            Record::Inline(i) => self.idx.inlines.push(i),
            Record::File { id, path } => self.idx.files.push((id, path)),
            Record::InlineOrigin(o) => self.origins.push(o),
            Record::CodeId(id) => self.idx.code_id = Some(id),
            Record::Other => {}
        }
    }
}

fn len_u32<T>(v: &[T]) -> u32 {
    // Record counts are bounded by the file size, which is below 4 GiB.
    u32::try_from(v.len()).unwrap_or(u32::MAX)
}

fn span(line_start: usize, off: usize, len: usize) -> Span {
    // Callers guarantee the file is below 4 GiB, so these fit.
    Span {
        start: u32::try_from(line_start + off).unwrap_or(u32::MAX),
        len: u32::try_from(len).unwrap_or(0),
    }
}

/// One record after the `MODULE` line. Names and paths are spans of the
/// file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    /// `INFO CODE_ID <code id> [<file>]`: for ELF the full build ID in hex.
    CodeId(Span),
    File {
        id: u32,
        path: Span,
    },
    Func {
        address: u64,
        size: u64,
        name: Span,
    },
    Public(Public),
    InlineOrigin(OriginRecord),
    /// Its ranges are [`Records::inline_ranges`]`[first_range..end_range]`;
    /// `subtree_end` is not known yet (0).
    Inline(Inline),
    Line(Line),
    /// Records no reader uses: `STACK`, other `INFO`, `MODULE` again.
    Other,
}

/// The records of a `.sym` file, in file order, each with its 1-based line
/// number: a [`Record`], or why the line is corrupt. Line and `INLINE`
/// records belong to the `FUNC` before them; outside one (before the
/// first, after a `PUBLIC` or a `FUNC` that does not parse) they are
/// corrupt, as in Breakpad's processor.
pub struct Records<'a> {
    data: &'a [u8],
    pos: usize,
    line_no: u64,
    module: ModuleRecord,
    in_func: bool,
    inline_ranges: Vec<(u64, u64)>,
}

impl<'a> Records<'a> {
    /// The reader of `data`, past its `MODULE` line (the first non-empty
    /// one).
    pub fn new(data: &'a [u8]) -> Result<Records<'a>, ParseError> {
        if u32::try_from(data.len()).is_err() {
            return Err(ParseError::TooLarge(data.len()));
        }
        let mut records = Records {
            data,
            pos: 0,
            line_no: 0,
            module: ModuleRecord::default(),
            in_func: false,
            inline_ranges: Vec::new(),
        };
        let (line_start, line) = records.next_line().ok_or(ParseError::NotBreakpad)?;
        records.module = parse_module(line, line_start).ok_or(ParseError::NotBreakpad)?;
        Ok(records)
    }

    /// The `MODULE` record.
    pub fn module(&self) -> ModuleRecord {
        self.module
    }

    /// The `(address, size)` ranges of the `INLINE` records read so far.
    pub fn inline_ranges(&self) -> &[(u64, u64)] {
        &self.inline_ranges
    }

    /// The next non-empty line (without its line end) and where it starts.
    fn next_line(&mut self) -> Option<(usize, &'a [u8])> {
        loop {
            let rest = self.data.get(self.pos..).filter(|r| !r.is_empty())?;
            let len = memchr(b'\n', rest).unwrap_or(rest.len());
            let line_start = self.pos;
            self.pos += len + 1;
            self.line_no += 1;
            let line = trim_cr(&rest[..len]);
            if !line.is_empty() {
                return Some((line_start, line));
            }
        }
    }

    /// One record after the MODULE line.
    fn record(&mut self, line: &[u8], line_start: usize) -> Result<Record, &'static str> {
        match line.first() {
            Some(b'F') if line.starts_with(b"FUNC ") => {
                self.in_func = false;
                let mut f = Fields::new(line, 5);
                f.skip_m();
                let address = f.hex().ok_or("bad FUNC address")?;
                let size = f.hex().ok_or("bad FUNC size")?;
                f.hex().ok_or("bad FUNC parameter size")?;
                let (off, len) = f.rest().ok_or("FUNC without a name")?;
                self.in_func = true;
                Ok(Record::Func {
                    address,
                    size,
                    name: span(line_start, off, len),
                })
            }
            Some(b'F') if line.starts_with(b"FILE ") => {
                let mut f = Fields::new(line, 5);
                let id = f.dec().ok_or("bad FILE number")?;
                let (off, len) = f.rest().ok_or("FILE without a path")?;
                Ok(Record::File {
                    id,
                    path: span(line_start, off, len),
                })
            }
            Some(b'P') if line.starts_with(b"PUBLIC ") => {
                self.in_func = false;
                let mut f = Fields::new(line, 7);
                f.skip_m();
                let address = f.hex().ok_or("bad PUBLIC address")?;
                f.hex().ok_or("bad PUBLIC parameter size")?;
                let (off, len) = f.rest().ok_or("PUBLIC without a name")?;
                Ok(Record::Public(Public {
                    address,
                    name: span(line_start, off, len),
                }))
            }
            Some(b'S') if line.starts_with(b"STACK ") => Ok(Record::Other),
            Some(b'I') if line.starts_with(b"INLINE_ORIGIN ") => {
                origin_record(line, line_start).map(Record::InlineOrigin)
            }
            Some(b'I') if line.starts_with(b"INLINE ") => {
                if !self.in_func {
                    return Err("INLINE record outside a FUNC");
                }
                // The current form has a call-site file field, the old one
                // not: with the address/size pairs, the current form has an
                // even number of fields, the old one an odd number (as
                // Breakpad's processor tells them apart). Current files need
                // no count: a line is counted only when it does not read as
                // the current form.
                let ranges = &mut self.inline_ranges;
                let rec = match parse_inline(line, true, ranges) {
                    Ok(rec) => rec,
                    Err(e) => {
                        let mut fields = Fields::new(line, 7);
                        let mut count = 0usize;
                        while fields.token().is_some() {
                            count += 1;
                        }
                        if count.is_multiple_of(2) {
                            return Err(e);
                        }
                        parse_inline(line, false, ranges)?
                    }
                };
                Ok(Record::Inline(rec))
            }
            Some(b'I') if line.starts_with(b"INFO ") => {
                let mut f = Fields::new(line, 5);
                if f.token() == Some(b"CODE_ID") {
                    f.skip_spaces();
                    let off = f.pos;
                    if let Some(t) = f.token() {
                        return Ok(Record::CodeId(span(line_start, off, t.len())));
                    }
                }
                Ok(Record::Other)
            }
            Some(b'M') if line.starts_with(b"MODULE ") => Ok(Record::Other),
            _ => {
                if !self.in_func {
                    return Err("line record outside a FUNC");
                }
                let mut f = Fields::new(line, 0);
                let address = f.hex().ok_or("bad line record address")?;
                let size = f.hex().ok_or("bad line record size")?;
                let line_num = f.dec().ok_or("bad line record line number")?;
                let file = f.dec().ok_or("bad line record file number")?;
                if !f.at_end() {
                    return Err("trailing fields in line record");
                }
                Ok(Record::Line(Line {
                    address,
                    size,
                    line: line_num,
                    file,
                }))
            }
        }
    }
}

impl Iterator for Records<'_> {
    type Item = (u64, Result<Record, &'static str>);

    fn next(&mut self) -> Option<Self::Item> {
        // Line records are most of the lines worth parsing: read them
        // straight off the buffer when they have dump_syms' exact shape.
        let rest = self.data.get(self.pos..).unwrap_or_default();
        if self.in_func
            && rest
                .first()
                .is_some_and(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
            && let Some((l, used)) = fast_line_record(rest)
        {
            self.pos += used;
            self.line_no += 1;
            return Some((self.line_no, Ok(Record::Line(l))));
        }
        let (line_start, line) = self.next_line()?;
        Some((self.line_no, self.record(line, line_start)))
    }
}

/// Parse a whole symbol file.
pub fn parse(data: &[u8]) -> Result<SymIndex, ParseError> {
    let mut records = Records::new(data)?;
    let mut b = Builder {
        idx: SymIndex {
            module: records.module(),
            ..SymIndex::default()
        },
        cur_func: None,
        origins: Vec::new(),
    };
    for (line_no, record) in &mut records {
        match record {
            Ok(record) => b.add(record),
            Err(reason) => b.corrupt(line_no, reason),
        }
    }
    b.close_func();
    let mut idx = b.idx;
    let form = OriginForm::of(&b.origins);
    idx.origins = b.origins.iter().map(|r| r.origin(form)).collect();
    idx.inline_ranges = records.inline_ranges;
    finish(&mut idx);
    Ok(idx)
}

fn trim_cr(mut line: &[u8]) -> &[u8] {
    while let [head @ .., b'\r'] = line {
        line = head;
    }
    line
}

/// `INLINE_ORIGIN <id> <rest>`, read both ways (see [`OriginForm`]).
fn origin_record(line: &[u8], line_start: usize) -> Result<OriginRecord, &'static str> {
    let mut f = Fields::new(line, 14);
    let id = f.dec().ok_or("bad INLINE_ORIGIN number")?;
    let (off, len) = f.rest().ok_or("INLINE_ORIGIN without a name")?;
    let name = span(line_start, off, len);
    let old = f
        .token()
        .and_then(file_number)
        .and_then(|file| f.rest().map(|(o, l)| (file, span(line_start, o, l))));
    Ok(OriginRecord { id, name, old })
}

/// `-1` or a decimal `u32` (a file number field of `INLINE` and old
/// `INLINE_ORIGIN` records; `-1` names no file).
fn file_number(tok: &[u8]) -> Option<u32> {
    if tok == b"-1" {
        return Some(NO_FILE);
    }
    let mut i = 0;
    let v = scan_dec(tok, &mut i)?;
    (i == tok.len()).then_some(v)
}

/// An `INLINE` record in the current form (`has_call_file`) or the old
/// one, its ranges appended to `ranges` (left as they were on error).
fn parse_inline(
    line: &[u8],
    has_call_file: bool,
    ranges: &mut Vec<(u64, u64)>,
) -> Result<Inline, &'static str> {
    let mut f = Fields::new(line, 7);
    let depth = f.dec().ok_or("bad INLINE depth")?;
    let call_line = f.dec().ok_or("bad INLINE call line")?;
    let call_file = if has_call_file {
        f.token()
            .and_then(file_number)
            .ok_or("bad INLINE call file")?
    } else {
        NO_FILE
    };
    let origin = f.dec().ok_or("bad INLINE origin")?;
    let first_range = len_u32(ranges);
    while !f.at_end() {
        match (f.hex(), f.hex()) {
            (Some(a), Some(s)) => ranges.push((a, s)),
            _ => {
                ranges.truncate(first_range as usize);
                return Err("bad INLINE range");
            }
        }
    }
    let end_range = len_u32(ranges);
    if end_range == first_range {
        return Err("INLINE record without ranges");
    }
    Ok(Inline {
        depth,
        call_line,
        call_file,
        has_call_file,
        origin,
        first_range,
        end_range,
        subtree_end: 0,
    })
}

fn scan_hex(s: &[u8], i: &mut usize) -> Option<u64> {
    let start = *i;
    let mut v: u64 = 0;
    while let Some(d) = s.get(*i).and_then(|&c| crate::base::hex::digit(c)) {
        v = crate::base::hex::push_value(v, d)?;
        *i += 1;
    }
    (*i > start).then_some(v)
}

fn scan_dec(s: &[u8], i: &mut usize) -> Option<u32> {
    let start = *i;
    let mut v: u32 = 0;
    while let Some(&c) = s.get(*i).filter(|c| c.is_ascii_digit()) {
        v = v.checked_mul(10)?.checked_add(u32::from(c - b'0'))?;
        *i += 1;
    }
    (*i > start).then_some(v)
}

fn expect(s: &[u8], i: &mut usize, b: u8) -> Option<()> {
    (s.get(*i) == Some(&b)).then(|| *i += 1)
}

/// `address size line file\n` with single spaces, at the start of `s`:
/// the record and the bytes it takes (line end included). `None` for any
/// other shape; the general path then parses (or rejects) the line.
fn fast_line_record(s: &[u8]) -> Option<(Line, usize)> {
    let mut i = 0;
    let address = scan_hex(s, &mut i)?;
    expect(s, &mut i, b' ')?;
    let size = scan_hex(s, &mut i)?;
    expect(s, &mut i, b' ')?;
    let line = scan_dec(s, &mut i)?;
    expect(s, &mut i, b' ')?;
    let file = scan_dec(s, &mut i)?;
    match s.get(i) {
        None => {}
        Some(b'\n') => i += 1,
        Some(b'\r') if s.get(i + 1) == Some(&b'\n') => i += 2,
        Some(_) => return None,
    }
    let rec = Line {
        address,
        size,
        line,
        file,
    };
    Some((rec, i))
}

fn parse_module(line: &[u8], line_start: usize) -> Option<ModuleRecord> {
    let body = line.strip_prefix(b"MODULE ")?;
    let base = line.len() - body.len();
    let mut f = Fields::new(line, base);
    let mut tok = || {
        f.skip_spaces();
        let off = f.pos;
        let t = f.token()?;
        Some(span(line_start, off, t.len()))
    };
    let os = tok()?;
    let arch = tok()?;
    let debug_id = tok()?;
    let (off, len) = f.rest()?;
    Some(ModuleRecord {
        os,
        arch,
        debug_id,
        debug_file: span(line_start, off, len),
    })
}

/// Sort the tables and drop what the processor would refuse to store
/// (empty and overlapping ranges).
fn finish(idx: &mut SymIndex) {
    // Each function's lines: sorted, non-empty, non-overlapping. Functions
    // are still in file order here, so their line ranges are ascending and
    // disjoint, and the table is compacted in place.
    let mut w = 0usize;
    for f in &mut idx.funcs {
        let (first, end) = (f.first_line as usize, f.end_line as usize);
        if let Some(slice) = idx.lines.get_mut(first..end)
            && !slice.is_sorted_by_key(|l| l.address)
        {
            slice.sort_by_key(|l| l.address);
        }
        let start = w;
        let mut kept_end = 0u64;
        for r in first..end {
            let Some(l) = idx.lines.get(r).copied() else {
                break;
            };
            if l.size == 0 || (w > start && l.address < kept_end) {
                continue;
            }
            kept_end = l.address.saturating_add(l.size);
            if let Some(slot) = idx.lines.get_mut(w) {
                *slot = l;
            }
            w += 1;
        }
        f.first_line = u32::try_from(start).unwrap_or(u32::MAX);
        f.end_line = u32::try_from(w).unwrap_or(u32::MAX);
    }
    idx.lines.truncate(w);
    idx.lines.shrink_to_fit();

    // Each inline record's subtree: the following records deeper than it.
    let mut open: Vec<usize> = Vec::new();
    for f in &idx.funcs {
        let (start, end) = (f.first_inline as usize, f.end_inline as usize);
        for i in start..end {
            let depth = idx.inlines.get(i).map_or(0, |r| r.depth);
            while let Some(&top) = open.last() {
                if idx.inlines.get(top).is_some_and(|r| r.depth >= depth) {
                    if let Some(r) = idx.inlines.get_mut(top) {
                        r.subtree_end = u32::try_from(i).unwrap_or(u32::MAX);
                    }
                    open.pop();
                } else {
                    break;
                }
            }
            open.push(i);
        }
        for top in open.drain(..) {
            if let Some(r) = idx.inlines.get_mut(top) {
                r.subtree_end = f.end_inline;
            }
        }
    }

    idx.funcs.retain(|f| f.size > 0);
    if !idx.funcs.is_sorted_by_key(|f| f.address) {
        idx.funcs.sort_by_key(|f| f.address);
    }
    let mut end = 0u64;
    let mut first = true;
    idx.funcs.retain(|f| {
        let keep = first || f.address >= end;
        if keep {
            end = f.end();
            first = false;
        }
        keep
    });

    if !idx.publics.is_sorted_by_key(|p| p.address) {
        idx.publics.sort_by_key(|p| p.address);
    }
    idx.publics.dedup_by_key(|p| p.address);

    if !idx.files.is_sorted_by_key(|e| e.0) {
        idx.files.sort_by_key(|e| e.0);
    }
    idx.files.dedup_by_key(|e| e.0);
    if !idx.origins.is_sorted_by_key(|o| o.id) {
        idx.origins.sort_by_key(|o| o.id);
    }
    idx.origins.dedup_by_key(|o| o.id);
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 demo\n\
INFO CODE_ID 67452301AB89EFCD demo\n\
FILE 0 /src/a.c\n\
FILE 1 /src/b.h\n\
INLINE_ORIGIN 0 helper(int)\n\
FUNC m 1000 30 0 main\n\
INLINE 0 12 0 0 1008 8 1020 4\n\
1000 8 10 0\n\
1008 8 3 1\n\
1010 20 14 0\n\
FUNC 1040 10 0 other\n\
1040 10 20 0\n\
PUBLIC 2000 0 asm_entry\n\
STACK CFI INIT 1000 30 .cfa: $rsp 8 +\n";

    #[test]
    fn parses_every_record_kind() {
        let data = SAMPLE.as_bytes();
        let idx = parse(data).unwrap();
        assert_eq!(idx.module.debug_file.text(data), "demo");
        assert_eq!(
            idx.module.debug_id.text(data),
            "0123456789ABCDEF0123456789ABCDEF0"
        );
        assert_eq!(idx.code_id.unwrap().text(data), "67452301AB89EFCD");
        assert_eq!(idx.files.len(), 2);
        assert_eq!(idx.origins[0].name.text(data), "helper(int)");
        assert_eq!(idx.funcs.len(), 2);
        assert_eq!(idx.funcs[0].name.text(data), "main");
        assert_eq!((idx.funcs[0].first_line, idx.funcs[0].end_line), (0, 3));
        assert_eq!(idx.inlines.len(), 1);
        assert_eq!(idx.inline_ranges, vec![(0x1008, 8), (0x1020, 4)]);
        assert_eq!(idx.publics[0].name.text(data), "asm_entry");
        assert_eq!(idx.corruption.count, 0);
    }

    #[test]
    fn hex_scans_stop_at_the_first_other_byte() {
        let scan = |s: &[u8]| {
            let mut i = 0;
            (scan_hex(s, &mut i), i)
        };
        assert_eq!(scan(b"1f0A 8"), (Some(0x1f0a), 4));
        assert_eq!(scan(b"ffffffffffffffff\n"), (Some(u64::MAX), 16));
        assert_eq!(scan(b"000000000000000000001"), (Some(1), 21));
        assert_eq!(scan(b"10000000000000000").0, None);
        assert_eq!(scan(b" 1"), (None, 0));
        assert_eq!(scan(b"g"), (None, 0));
        assert_eq!(scan(b""), (None, 0));
    }

    #[test]
    fn counts_corrupt_lines_and_keeps_going() {
        let text = "MODULE Linux x86_64 ID demo\r\nFUNC zz 10 0 bad\r\n1000 8 10 0\r\n\
FUNC 2000 10 0 good\r\n2000 10 7 0\r\nFILE x y\r\n";
        let idx = parse(text.as_bytes()).unwrap();
        assert_eq!(idx.funcs.len(), 1);
        assert_eq!(idx.lines.len(), 1);
        assert_eq!(idx.corruption.count, 3);
        assert_eq!(idx.corruption.first_line, 2);
        assert_eq!(idx.corruption.first_reason, "bad FUNC address");
    }

    #[test]
    fn line_records_in_odd_shapes_parse_like_exact_ones() {
        // Exact shape (fast path), CRLF, double space, trailing space, last
        // line without newline (general path).
        let text = "MODULE a b ID m\nFUNC 1000 50 0 f\n1000 8 10 0\n1008 8 11 1\r\n\
1010  8 12 0\n1018 8 13 0 \n1020 8 14 0\n1028 8 15 0 7\n1030 8 99999999999 0\n1038 8 16 2";
        let idx = parse(text.as_bytes()).unwrap();
        let lines: Vec<(u64, u32, u32)> = idx
            .lines
            .iter()
            .map(|l| (l.address, l.line, l.file))
            .collect();
        assert_eq!(
            lines,
            vec![
                (0x1000, 10, 0),
                (0x1008, 11, 1),
                (0x1010, 12, 0),
                (0x1018, 13, 0),
                (0x1020, 14, 0),
                (0x1038, 16, 2)
            ]
        );
        assert_eq!(idx.corruption.count, 2);
        assert_eq!(idx.corruption.first_line, 8);
    }

    fn origins(text: &str) -> Vec<(u32, String, u32)> {
        let idx = parse(text.as_bytes()).unwrap();
        idx.origins
            .iter()
            .map(|o| (o.id, o.name.text(text.as_bytes()), o.file))
            .collect()
    }

    #[test]
    fn inline_origin_forms_are_decided_for_the_whole_file() {
        // Old form: `<id> <file_id> <name>`, file -1 allowed; a record
        // without a file id keeps its whole name.
        let old = "MODULE a b ID m\nINLINE_ORIGIN 0 1 ns::f(int)\n\
INLINE_ORIGIN 1 -1 artificial thunk\nINLINE_ORIGIN 2 0 2 words\nINLINE_ORIGIN 3 g\n";
        assert_eq!(
            origins(old),
            vec![
                (0, "ns::f(int)".to_string(), 1),
                (1, "artificial thunk".to_string(), NO_FILE),
                (2, "2 words".to_string(), 0),
                (3, "g".to_string(), NO_FILE),
            ]
        );
        // Current form: a name that starts with a number and a space stays
        // whole (Breakpad's line-by-line rule would cut it); so does an
        // all-digit name.
        let new = "MODULE a b ID m\nINLINE_ORIGIN 0 ns::f(int)\n\
INLINE_ORIGIN 1 42 is the answer\nINLINE_ORIGIN 2 7\nINLINE_ORIGIN 3 operator new\n";
        assert_eq!(
            origins(new),
            vec![
                (0, "ns::f(int)".to_string(), NO_FILE),
                (1, "42 is the answer".to_string(), NO_FILE),
                (2, "7".to_string(), NO_FILE),
                (3, "operator new".to_string(), NO_FILE),
            ]
        );
        assert_eq!(parse(new.as_bytes()).unwrap().corruption.count, 0);
    }

    #[test]
    fn inline_forms_are_told_apart_by_their_field_count() {
        let text = "MODULE a b ID m\nFUNC 0 100 0 f\n\
INLINE 0 12 3 5 10 8\nINLINE 1 13 6 10 4 20 4\nINLINE 0 14 -1 7 40 8\n\
INLINE 0 15 8 50\nINLINE 0 16\nINLINE 0 17 x 9 60 8\n";
        let idx = parse(text.as_bytes()).unwrap();
        let got: Vec<(u32, u32, u32, bool, u32)> = idx
            .inlines
            .iter()
            .map(|i| (i.depth, i.call_line, i.call_file, i.has_call_file, i.origin))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 12, 3, true, 5),
                (1, 13, NO_FILE, false, 6),
                (0, 14, NO_FILE, true, 7),
            ]
        );
        assert_eq!(
            idx.inline_ranges,
            vec![(0x10, 8), (0x10, 4), (0x20, 4), (0x40, 8)]
        );
        assert_eq!(idx.corruption.count, 3);
        assert_eq!(idx.corruption.first_reason, "INLINE record without ranges");
    }

    #[test]
    fn refuses_non_breakpad_files() {
        assert_eq!(parse(b"").unwrap_err(), ParseError::NotBreakpad);
        assert_eq!(parse(b"\x7fELF...").unwrap_err(), ParseError::NotBreakpad);
        assert_eq!(
            parse(b"MODULE Linux\n").unwrap_err(),
            ParseError::NotBreakpad
        );
    }

    #[test]
    fn drops_overlapping_functions_and_lines() {
        let text = "MODULE a b ID m\nFUNC 100 50 0 f\n100 10 1 0\n108 10 2 0\n\
FUNC 120 10 0 g\nFUNC 0 0 0 empty\n";
        let idx = parse(text.as_bytes()).unwrap();
        assert_eq!(idx.funcs.len(), 1);
        assert_eq!(idx.lines.len(), 1);
    }

    #[test]
    fn numbers_overflow_is_corruption_not_panic() {
        let text = "MODULE a b ID m\nFUNC 1ffffffffffffffff 1 0 f\nFILE 99999999999 x\n";
        let idx = parse(text.as_bytes()).unwrap();
        assert_eq!(idx.funcs.len(), 0);
        assert_eq!(idx.corruption.count, 2);
    }
}
