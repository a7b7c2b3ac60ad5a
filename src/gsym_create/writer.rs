//! Records -> GSYM bytes. Builds the same structures `llvm-gsymutil`
//! builds (string table in insertion order, one global file table,
//! per-function line tables and inline trees), prunes them the way
//! `GsymCreator::finalize` does, and encodes version 1 or 2 in either byte
//! order.

use std::collections::HashMap;

use crate::gsym::types::*;

/// Why a GSYM file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("no functions to encode")]
    NoFunctions,
    #[error("address offset size {0} cannot hold an offset of {1:#x} (need a larger size)")]
    OffsetTooSmall(u8, u64),
    #[error("invalid address offset size {0} (use 1, 2, 4 or 8)")]
    BadOffsetSize(u8),
    #[error("base address {0:#x} is above the first function at {1:#x}")]
    BadBase(u64, u64),
    #[error("UUID of {0} bytes does not fit a version 1 header (max 20)")]
    UuidTooLong(usize),
    #[error("{0} exceeds the 32-bit limits of GSYM version 1; write version 2")]
    TooBig(&'static str),
    #[error("functions are not sorted (call finalize first)")]
    Unsorted,
    #[error("too many functions ({0})")]
    TooManyFunctions(usize),
}

/// One line table row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineEntry {
    pub addr: u64,
    pub file: u32,
    pub line: u32,
}

/// One node of an inline tree. The root stands for the function itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct InlineNode {
    /// Sorted, non-overlapping `[start, end)` ranges.
    pub ranges: Vec<(u64, u64)>,
    pub name: u64,
    pub call_file: u32,
    pub call_line: u32,
    pub children: Vec<InlineNode>,
}

impl InlineNode {
    /// True when one of the ranges contains the whole of `[s, e)`.
    pub fn contains_range(&self, s: u64, e: u64) -> bool {
        self.ranges.iter().any(|&(a, b)| a <= s && e <= b)
    }

    /// Inserts a range, merging with overlapping or adjacent ones (LLVM's
    /// `AddressRanges::insert`). Empty ranges are ignored.
    pub fn insert_range(&mut self, s: u64, e: u64) {
        insert_range(&mut self.ranges, s, e);
    }
}

/// Inserts `[s, e)` into sorted disjoint ranges, merging overlaps.
pub fn insert_range(ranges: &mut Vec<(u64, u64)>, s: u64, e: u64) {
    if s >= e {
        return;
    }
    let (mut s, mut e) = (s, e);
    let i = ranges.partition_point(|r| r.1 < s);
    let mut j = i;
    while j < ranges.len() && ranges[j].0 <= e {
        s = s.min(ranges[j].0);
        e = e.max(ranges[j].1);
        j += 1;
    }
    ranges.splice(i..j, [(s, e)]);
}

/// One function: its address range, name, and optional details.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionInfo {
    pub start: u64,
    pub end: u64,
    pub name: u64,
    pub lines: Option<Vec<LineEntry>>,
    pub inline: Option<InlineNode>,
}

impl FunctionInfo {
    pub fn size(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    fn has_rich_info(&self) -> bool {
        self.lines.is_some() || self.inline.is_some()
    }

    fn sort_key(&self) -> (u64, u64, &Option<InlineNode>, &Option<Vec<LineEntry>>) {
        (self.start, self.end, &self.inline, &self.lines)
    }
}

/// Options for [`GsymBuilder::encode`].
#[derive(Clone, Copy, Debug)]
pub struct EncodeOptions {
    pub version: u16,
    pub endian: Endian,
    /// Force this address offset size (must hold every offset).
    pub addr_off_size: Option<u8>,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            version: VERSION_1,
            endian: Endian::Little,
            addr_off_size: None,
        }
    }
}

/// Collects strings, files and functions, then encodes a GSYM file.
pub struct GsymBuilder {
    strtab: Vec<u8>,
    strings: HashMap<Vec<u8>, u64>,
    files: Vec<(u64, u64)>,
    file_index: HashMap<(u64, u64), u32>,
    /// See [`GsymBuilder::unnamed_file`].
    unnamed_file: Option<u32>,
    funcs: Vec<FunctionInfo>,
    uuid: Vec<u8>,
    base_address: Option<u64>,
    /// Executable address ranges (merged) and the section ends inside them.
    text_ranges: Vec<(u64, u64)>,
    section_ranges: Vec<(u64, u64)>,
}

impl Default for GsymBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl GsymBuilder {
    pub fn new() -> GsymBuilder {
        let mut b = GsymBuilder {
            strtab: vec![0],
            strings: HashMap::new(),
            files: Vec::new(),
            file_index: HashMap::new(),
            unnamed_file: None,
            funcs: Vec::new(),
            uuid: Vec::new(),
            base_address: None,
            text_ranges: Vec::new(),
            section_ranges: Vec::new(),
        };
        b.insert_file_entry(0, 0);
        b
    }

    pub fn set_uuid(&mut self, uuid: &[u8]) {
        self.uuid = uuid.to_vec();
    }

    pub fn set_base_address(&mut self, base: u64) {
        self.base_address = Some(base);
    }

    /// Declares an executable section; functions must start inside one.
    pub fn add_text_range(&mut self, start: u64, end: u64) {
        insert_range(&mut self.text_ranges, start, end);
        if start < end {
            self.section_ranges.push((start, end));
        }
    }

    pub fn is_valid_text_address(&self, addr: u64) -> bool {
        self.text_ranges.is_empty() || self.text_ranges.iter().any(|&(s, e)| s <= addr && addr < e)
    }

    /// Adds a string (deduplicated); the empty string is offset 0.
    pub fn insert_string(&mut self, s: &[u8]) -> u64 {
        if s.is_empty() {
            return 0;
        }
        if let Some(&off) = self.strings.get(s) {
            return off;
        }
        let off = self.strtab.len() as u64;
        self.strtab.extend_from_slice(s);
        self.strtab.push(0);
        self.strings.insert(s.to_vec(), off);
        off
    }

    fn insert_file_entry(&mut self, dir: u64, base: u64) -> u32 {
        let next = self.files.len() as u32;
        *self.file_index.entry((dir, base)).or_insert_with(|| {
            self.files.push((dir, base));
            next
        })
    }

    /// Adds a file by full path, split into directory and base name the way
    /// LLVM's `sys::path::parent_path`/`filename` split POSIX paths.
    pub fn insert_file(&mut self, path: &str) -> u32 {
        let (dir, base) = split_path(path);
        let d = self.insert_string(dir.as_bytes());
        let b = self.insert_string(base.as_bytes());
        self.insert_file_entry(d, b)
    }

    /// A file without a name for line rows whose file is unknown. Entry 0
    /// is no file at all: LLVM's readers take a row naming it as invalid and
    /// fail the whole lookup, function name included; this one is a second
    /// empty entry, which they print as no location.
    pub fn unnamed_file(&mut self) -> u32 {
        *self.unnamed_file.get_or_insert_with(|| {
            self.files.push((0, 0));
            (self.files.len() - 1) as u32
        })
    }

    pub fn add_function(&mut self, f: FunctionInfo) {
        self.funcs.push(f);
    }

    pub fn num_functions(&self) -> usize {
        self.funcs.len()
    }

    fn string_at(&self, off: u64) -> &[u8] {
        let s = self.strtab.get(off as usize..).unwrap_or(&[]);
        let n = memchr::memchr(0, s).unwrap_or(s.len());
        &s[..n]
    }

    /// Sorts the functions and removes duplicates, as
    /// `GsymCreator::finalize` does; returns how many were pruned.
    pub fn finalize(&mut self) -> usize {
        let before = self.funcs.len();
        let mut funcs = std::mem::take(&mut self.funcs);
        funcs.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        let mut out: Vec<FunctionInfo> = Vec::with_capacity(funcs.len());
        for mut curr in funcs {
            let Some(prev) = out.last_mut() else {
                out.push(curr);
                continue;
            };
            let equal = prev.start == curr.start && prev.end == curr.end;
            let intersects = prev.start < curr.end && curr.start < prev.end;
            if equal {
                if prev.has_rich_info() != curr.has_rich_info() {
                    if should_replace_with_mangled(
                        self.string_at(prev.name),
                        self.string_at(curr.name),
                    ) {
                        curr.name = prev.name;
                    }
                    *prev = curr;
                } else if *prev != curr {
                    *prev = curr;
                }
            } else if intersects {
                out.push(curr);
            } else if prev.size() == 0 && curr.start <= prev.start && prev.start < curr.end {
                *prev = curr;
            } else {
                out.push(curr);
            }
        }
        // Give a size-less last function the rest of its text range.
        if let Some(last) = out.last_mut()
            && last.size() == 0
            && !self.text_ranges.is_empty()
        {
            let s = last.start;
            if let Some(&(_, end)) = self.text_ranges.iter().find(|&&(a, b)| a <= s && s < b) {
                let sect_end = self
                    .section_ranges
                    .iter()
                    .find(|&&(a, b)| a <= s && s < b)
                    .map_or(end, |&(_, b)| b);
                last.end = end.min(sect_end);
            }
        }
        self.funcs = out;
        before - self.funcs.len()
    }

    /// Start address of the first function (after [`finalize`](Self::finalize)).
    pub fn first_address(&self) -> Option<u64> {
        self.funcs.first().map(|f| f.start)
    }

    /// The base address the offsets are relative to.
    pub fn base_address(&self) -> Option<u64> {
        self.base_address
            .or_else(|| self.funcs.first().map(|f| f.start))
    }

    /// Encodes the (finalized) functions.
    pub fn encode(&self, opts: &EncodeOptions) -> Result<Vec<u8>, WriteError> {
        let Some(first) = self.funcs.first() else {
            return Err(WriteError::NoFunctions);
        };
        if self.funcs.len() > u32::MAX as usize {
            return Err(WriteError::TooManyFunctions(self.funcs.len()));
        }
        let base = self.base_address().unwrap_or(first.start);
        let lowest = self
            .funcs
            .iter()
            .map(|f| f.start)
            .min()
            .unwrap_or(first.start);
        if base > lowest {
            return Err(WriteError::BadBase(base, lowest));
        }
        if self.funcs.windows(2).any(|w| w[0].start > w[1].start) {
            return Err(WriteError::Unsorted);
        }
        let max_off = self.funcs.iter().map(|f| f.start - base).max().unwrap_or(0);
        let needed = match max_off {
            0..=0xff => 1,
            0x100..=0xffff => 2,
            0x1_0000..=0xffff_ffff => 4,
            _ => 8,
        };
        let aos = match opts.addr_off_size {
            None => needed,
            Some(s @ (1 | 2 | 4 | 8)) => {
                if s < needed {
                    return Err(WriteError::OffsetTooSmall(s, max_off));
                }
                s
            }
            Some(s) => return Err(WriteError::BadOffsetSize(s)),
        };
        match opts.version {
            VERSION_2 => self.encode_v2(opts.endian, aos, base),
            _ => self.encode_v1(opts.endian, aos, base),
        }
    }

    fn encode_v1(&self, endian: Endian, aos: u8, base: u64) -> Result<Vec<u8>, WriteError> {
        if self.uuid.len() > MAX_UUID_SIZE {
            return Err(WriteError::UuidTooLong(self.uuid.len()));
        }
        let mut w = Writer::new(endian);
        w.u32(GSYM_MAGIC);
        w.u16(VERSION_1);
        w.u8(aos);
        w.u8(self.uuid.len() as u8);
        w.u64(base);
        w.u32(self.funcs.len() as u32);
        let strtab_fixup = w.len();
        w.u32(0);
        w.u32(0);
        let mut uuid = [0u8; MAX_UUID_SIZE];
        uuid[..self.uuid.len()].copy_from_slice(&self.uuid);
        w.bytes(&uuid);
        self.write_addr_offsets(&mut w, aos, base);
        w.align(4);
        let info_fixup = w.len();
        for _ in &self.funcs {
            w.u32(0);
        }
        self.write_file_table(&mut w, 4);
        let strtab_off = w.len();
        w.bytes(&self.strtab);
        if w.len() > u32::MAX as usize || self.strtab.len() > u32::MAX as usize {
            return Err(WriteError::TooBig("string table"));
        }
        let mut offsets = Vec::with_capacity(self.funcs.len());
        for f in &self.funcs {
            offsets.push(self.write_function(&mut w, f, 4)?);
        }
        w.fixup_u32(strtab_fixup, strtab_off as u32);
        w.fixup_u32(strtab_fixup + 4, self.strtab.len() as u32);
        for (i, off) in offsets.into_iter().enumerate() {
            let off = u32::try_from(off).map_err(|_| WriteError::TooBig("address info offset"))?;
            w.fixup_u32(info_fixup + 4 * i, off);
        }
        Ok(w.buf)
    }

    fn encode_v2(&self, endian: Endian, aos: u8, base: u64) -> Result<Vec<u8>, WriteError> {
        // Function infos first, into their own buffer, to learn offsets.
        let mut fw = Writer::new(endian);
        let mut rel = Vec::with_capacity(self.funcs.len());
        for f in &self.funcs {
            rel.push(self.write_function(&mut fw, f, 8)? as u64);
        }
        let n = self.funcs.len() as u64;
        let has_uuid = !self.uuid.is_empty();
        let entries = 5 + u64::from(has_uuid) + 1;
        let mut cur = HEADER_V2_SIZE as u64 + entries * GLOBAL_DATA_SIZE as u64;
        let uuid_off = cur;
        if has_uuid {
            cur += self.uuid.len() as u64;
        }
        cur = cur.next_multiple_of(u64::from(aos));
        let addr_off = cur;
        cur += n * u64::from(aos);
        cur = cur.next_multiple_of(8);
        let info_off = cur;
        cur += n * 8;
        cur = cur.next_multiple_of(4);
        let file_off = cur;
        let file_size = 4 + self.files.len() as u64 * 16;
        cur += file_size;
        let str_off = cur;
        cur += self.strtab.len() as u64;
        cur = cur.next_multiple_of(4);
        let fi_off = cur;

        let mut w = Writer::new(endian);
        w.u32(GSYM_MAGIC);
        w.u16(VERSION_2);
        w.u8(aos);
        w.u8(0);
        w.u64(base);
        w.u32(n as u32);
        let entry = |w: &mut Writer, ty: u32, off: u64, size: u64| {
            w.u32(ty);
            w.u64(off);
            w.u64(size);
        };
        if has_uuid {
            entry(&mut w, global_type::UUID, uuid_off, self.uuid.len() as u64);
        }
        entry(
            &mut w,
            global_type::ADDR_OFFSETS,
            addr_off,
            n * u64::from(aos),
        );
        entry(&mut w, global_type::ADDR_INFO_OFFSETS, info_off, n * 8);
        entry(&mut w, global_type::FILE_TABLE, file_off, file_size);
        entry(
            &mut w,
            global_type::STRING_TABLE,
            str_off,
            self.strtab.len() as u64,
        );
        entry(
            &mut w,
            global_type::FUNCTION_INFO,
            fi_off,
            fw.buf.len() as u64,
        );
        entry(&mut w, global_type::END_OF_LIST, 0, 0);
        if has_uuid {
            w.bytes(&self.uuid);
        }
        self.write_addr_offsets(&mut w, aos, base);
        w.align(8);
        for r in rel {
            w.u64(r);
        }
        w.align(4);
        self.write_file_table(&mut w, 8);
        w.bytes(&self.strtab);
        w.align(4);
        debug_assert_eq!(w.len() as u64, fi_off);
        w.bytes(&fw.buf);
        Ok(w.buf)
    }

    fn write_addr_offsets(&self, w: &mut Writer, aos: u8, base: u64) {
        w.align(usize::from(aos));
        for f in &self.funcs {
            w.uint(f.start - base, usize::from(aos));
        }
    }

    fn write_file_table(&self, w: &mut Writer, strp: usize) {
        w.u32(self.files.len() as u32);
        for &(d, b) in &self.files {
            w.uint(d, strp);
            w.uint(b, strp);
        }
    }

    /// Writes one FunctionInfo, 4-aligned; returns its offset.
    fn write_function(
        &self,
        w: &mut Writer,
        f: &FunctionInfo,
        strp: usize,
    ) -> Result<usize, WriteError> {
        w.align(4);
        let off = w.len();
        let size = u32::try_from(f.size()).map_err(|_| WriteError::TooBig("function size"))?;
        w.u32(size);
        w.uint(f.name, strp);
        if let Some(lines) = f.lines.as_ref().filter(|l| !l.is_empty()) {
            w.u32(info_type::LINE_TABLE);
            let at = w.len();
            w.u32(0);
            encode_line_table(w, lines, f.start);
            let len = w.len() - at - 4;
            w.fixup_u32(at, len as u32);
        }
        if let Some(inline) = &f.inline {
            w.u32(info_type::INLINE_INFO);
            let at = w.len();
            w.u32(0);
            encode_inline(w, inline, f.start, strp);
            let len = w.len() - at - 4;
            w.fixup_u32(at, len as u32);
        }
        w.u32(info_type::END_OF_LIST);
        w.u32(0);
        Ok(off)
    }
}

/// LLVM's `shouldReplaceWithMangledName`: keep a symbol-table name when it
/// is the mangled form of the debug-info name.
fn should_replace_with_mangled(alternate: &[u8], current: &[u8]) -> bool {
    let mangled = |s: &[u8]| s.starts_with(b"_Z") || s.starts_with(b"$s") || s.starts_with(b"$S");
    if current.is_empty() && !alternate.is_empty() {
        return true;
    }
    if mangled(current) || !mangled(alternate) {
        return false;
    }
    let mut token = current.len().to_string().into_bytes();
    token.extend_from_slice(current);
    memchr::memmem::find(alternate, &token).is_some()
}

/// Splits a POSIX path into (parent, file name) like LLVM's
/// `sys::path::parent_path` / `filename`.
pub fn split_path(path: &str) -> (&str, &str) {
    match path.rfind('/') {
        None => ("", path),
        Some(i) => {
            let base = &path[i + 1..];
            let mut dir = &path[..i];
            // parent_path keeps the root "/" and drops trailing separators.
            while dir.len() > 1 && dir.ends_with('/') {
                dir = &dir[..dir.len() - 1];
            }
            if dir.is_empty() && path.starts_with('/') {
                dir = "/";
            }
            (dir, if base.is_empty() { "." } else { base })
        }
    }
}

/// Encodes a line table exactly as LLVM's `LineTable::encode` does.
fn encode_line_table(w: &mut Writer, lines: &[LineEntry], base: u64) {
    const MAX_LINE_RANGE: i64 = 14;
    let mut min_delta = i64::MAX;
    let mut max_delta = i64::MIN;
    // (delta, count), sorted by delta.
    let mut deltas: Vec<(i64, u32)> = Vec::new();
    if lines.len() == 1 {
        min_delta = 0;
        max_delta = 0;
    } else {
        let mut prev_line = 1i64;
        for (i, e) in lines.iter().enumerate() {
            if i > 0 {
                let d = i64::from(e.line) - prev_line;
                match deltas.binary_search_by(|x| x.0.cmp(&d)) {
                    Ok(p) => deltas[p].1 += 1,
                    Err(p) => deltas.insert(p, (d, 1)),
                }
                min_delta = min_delta.min(d);
                max_delta = max_delta.max(d);
            }
            prev_line = i64::from(e.line);
        }
    }
    if max_delta.wrapping_sub(min_delta) > MAX_LINE_RANGE {
        let (mut best_i, mut best_end, mut best_count) = (0usize, 0usize, 0u32);
        for i in 0..deltas.len() {
            let first = deltas[i].0;
            let mut count = 0u32;
            let mut j = i;
            while j < deltas.len() {
                if deltas[j].0 - first > MAX_LINE_RANGE {
                    break;
                }
                count += deltas[j].1;
                j += 1;
            }
            if count > best_count {
                best_i = i;
                best_end = j - 1;
                best_count = count;
            }
        }
        min_delta = deltas[best_i].0;
        max_delta = deltas[best_end].0;
    }
    if min_delta == max_delta && min_delta > 0 && min_delta < MAX_LINE_RANGE {
        min_delta = 0;
    }
    let first_line = lines.first().map_or(0, |e| e.line);
    w.sleb(min_delta);
    w.sleb(max_delta);
    w.uleb(u64::from(first_line));
    let (mut paddr, mut pfile, mut pline) = (base, 1u32, first_line);
    let range = max_delta - min_delta + 1;
    for e in lines {
        let addr_delta = e.addr.wrapping_sub(paddr);
        let line_delta = i64::from(e.line) - i64::from(pline);
        if e.file != pfile {
            w.u8(line_op::SET_FILE);
            w.uleb(u64::from(e.file));
        }
        let special = if line_delta >= min_delta && line_delta <= max_delta {
            let adjusted = (line_delta - min_delta) as i128 + addr_delta as i128 * range as i128;
            let op = adjusted + i128::from(line_op::FIRST_SPECIAL);
            (0..=255).contains(&op).then_some(op as u8)
        } else {
            None
        };
        match special {
            Some(op) => w.u8(op),
            None => {
                if line_delta != 0 {
                    w.u8(line_op::ADVANCE_LINE);
                    w.sleb(line_delta);
                }
                w.u8(line_op::ADVANCE_PC);
                w.uleb(addr_delta);
            }
        }
        (paddr, pfile, pline) = (e.addr, e.file, e.line);
    }
    w.u8(line_op::END_SEQUENCE);
}

fn encode_inline(w: &mut Writer, node: &InlineNode, base: u64, strp: usize) {
    w.uleb(node.ranges.len() as u64);
    for &(s, e) in &node.ranges {
        w.uleb(s.wrapping_sub(base));
        w.uleb(e - s);
    }
    let has_children = !node.children.is_empty();
    w.u8(u8::from(has_children));
    w.uint(node.name, strp);
    w.uleb(u64::from(node.call_file));
    w.uleb(u64::from(node.call_line));
    if has_children {
        let child_base = node.ranges.first().map_or(base, |r| r.0);
        for c in &node.children {
            encode_inline(w, c, child_base, strp);
        }
        w.uleb(0);
    }
}

/// A growable output buffer in one byte order.
struct Writer {
    buf: Vec<u8>,
    endian: Endian,
}

impl Writer {
    fn new(endian: Endian) -> Writer {
        Writer {
            buf: Vec::new(),
            endian,
        }
    }

    fn len(&self) -> usize {
        self.buf.len()
    }

    fn uint(&mut self, v: u64, n: usize) {
        let le = v.to_le_bytes();
        match self.endian {
            Endian::Little => self.buf.extend_from_slice(&le[..n]),
            Endian::Big => self.buf.extend(le[..n].iter().rev()),
        }
    }

    fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.uint(u64::from(v), 2);
    }
    fn u32(&mut self, v: u32) {
        self.uint(u64::from(v), 4);
    }
    fn u64(&mut self, v: u64) {
        self.uint(v, 8);
    }
    fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    fn align(&mut self, a: usize) {
        if a > 1 {
            let n = self.buf.len().next_multiple_of(a);
            self.buf.resize(n, 0);
        }
    }

    fn fixup_u32(&mut self, at: usize, v: u32) {
        let b = match self.endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        };
        if let Some(dst) = self.buf.get_mut(at..at + 4) {
            dst.copy_from_slice(&b);
        }
    }

    fn uleb(&mut self, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.buf.push(b);
                return;
            }
            self.buf.push(b | 0x80);
        }
    }

    fn sleb(&mut self, mut v: i64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            let done = (v == 0 && b & 0x40 == 0) || (v == -1 && b & 0x40 != 0);
            if done {
                self.buf.push(b);
                return;
            }
            self.buf.push(b | 0x80);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge() {
        let mut r = Vec::new();
        insert_range(&mut r, 10, 20);
        insert_range(&mut r, 30, 40);
        insert_range(&mut r, 20, 30);
        insert_range(&mut r, 5, 5);
        assert_eq!(r, vec![(10, 40)]);
        insert_range(&mut r, 0, 2);
        assert_eq!(r, vec![(0, 2), (10, 40)]);
    }

    #[test]
    fn paths_split_like_llvm() {
        assert_eq!(split_path("/a/b/c.c"), ("/a/b", "c.c"));
        assert_eq!(split_path("/c.c"), ("/", "c.c"));
        assert_eq!(split_path("c.c"), ("", "c.c"));
        assert_eq!(split_path("a//c.c"), ("a", "c.c"));
    }

    #[test]
    fn mangled_name_replacement() {
        assert!(should_replace_with_mangled(b"_ZN3foo3barEv", b"bar"));
        assert!(!should_replace_with_mangled(b"_ZN3foo3barEv", b"baz"));
        assert!(!should_replace_with_mangled(b"bar", b"_Z3barv"));
    }
}
