//! Bytes -> GSYM records. Zero-copy over a borrowed (usually memory-mapped)
//! buffer: opening a file checks the header and where the tables lie; a
//! lookup reads only the address table entries of its binary search, one
//! FunctionInfo, and the strings and files that FunctionInfo names.
//!
//! Every read is bounds-checked; malformed data yields a [`GsymError`],
//! never a panic, and nothing allocates in proportion to a count read from
//! the file.

use std::ops::Range;

use super::types::*;

/// Deepest inline nesting followed before the data is declared malformed
/// (guards the recursion against hostile input).
const MAX_INLINE_DEPTH: u32 = 512;

/// A bounds-checked reader over a byte slice.
#[derive(Clone, Copy)]
pub(crate) struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    endian: Endian,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(data: &'a [u8], endian: Endian) -> Cursor<'a> {
        Cursor {
            data,
            pos: 0,
            endian,
        }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.data.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    pub(crate) fn uint(&mut self, n: usize) -> Option<u64> {
        let b = self.bytes(n)?;
        Some(read_uint(b, self.endian))
    }

    pub(crate) fn u8(&mut self) -> Option<u8> {
        let b = *self.data.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    pub(crate) fn u32(&mut self) -> Option<u32> {
        self.uint(4).map(|v| v as u32)
    }

    pub(crate) fn u64(&mut self) -> Option<u64> {
        self.uint(8)
    }

    pub(crate) fn uleb(&mut self) -> Option<u64> {
        let mut result: u64 = 0;
        let mut shift = 0u32;
        loop {
            let b = self.u8()?;
            if shift < 64 {
                result |= u64::from(b & 0x7f) << shift;
            }
            shift = shift.saturating_add(7);
            if b & 0x80 == 0 {
                return Some(result);
            }
        }
    }

    pub(crate) fn sleb(&mut self) -> Option<i64> {
        let mut result: i64 = 0;
        let mut shift = 0u32;
        let mut b;
        loop {
            b = self.u8()?;
            if shift < 64 {
                result |= i64::from(b & 0x7f) << shift;
            }
            shift = shift.saturating_add(7);
            if b & 0x80 == 0 {
                break;
            }
        }
        if shift < 64 && b & 0x40 != 0 {
            result |= -1i64 << shift;
        }
        Some(result)
    }
}

/// Reads an unsigned integer of `b.len()` (1..=8) bytes.
pub(crate) fn read_uint(b: &[u8], endian: Endian) -> u64 {
    let mut v: u64 = 0;
    match endian {
        Endian::Little => {
            for &x in b.iter().rev() {
                v = (v << 8) | u64::from(x);
            }
        }
        Endian::Big => {
            for &x in b {
                v = (v << 8) | u64::from(x);
            }
        }
    }
    v
}

fn align_to(v: u64, a: u64) -> u64 {
    if a <= 1 {
        return v;
    }
    v.div_ceil(a).saturating_mul(a)
}

fn check_range(
    what: &'static str,
    start: u64,
    size: u64,
    len: usize,
) -> Result<Range<usize>, GsymError> {
    let end = start.checked_add(size);
    match end {
        Some(end) if end <= len as u64 => Ok(start as usize..end as usize),
        _ => Err(GsymError::Truncated {
            what,
            start,
            end: end.unwrap_or(u64::MAX),
            len: len as u64,
        }),
    }
}

/// Where everything lies in a GSYM file: the result of checking the header
/// and the section bounds. Holds no references, so it can live next to the
/// memory map it describes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub endian: Endian,
    pub version: u16,
    pub addr_off_size: u8,
    pub base_address: u64,
    pub num_addrs: u32,
    pub uuid: Range<usize>,
    /// The address offsets table (`num_addrs * addr_off_size` bytes).
    pub addr_offsets: Range<usize>,
    /// The address info offsets table.
    pub addr_info_offsets: Range<usize>,
    /// Size of one address info offset (4 in v1, 8 in v2).
    pub addr_info_size: u8,
    /// Added to every address info offset (0 in v1, the FunctionInfo
    /// section's offset in v2).
    pub info_base: u64,
    /// File entries, after the count.
    pub files: Range<usize>,
    pub num_files: u32,
    /// Size of a string table offset (4 in v1, 8 in v2).
    pub strp_size: u8,
    pub strtab: Range<usize>,
}

impl Layout {
    /// Checks the header and the table bounds of `data`.
    pub fn parse(data: &[u8]) -> Result<Layout, GsymError> {
        if data.len() < 6 {
            return Err(GsymError::Truncated {
                what: "header",
                start: 0,
                end: 6,
                len: data.len() as u64,
            });
        }
        let endian = match read_uint(&data[..4], Endian::Little) as u32 {
            GSYM_MAGIC => Endian::Little,
            m if m == GSYM_MAGIC.swap_bytes() => Endian::Big,
            _ => return Err(GsymError::BadMagic),
        };
        let version = read_uint(&data[4..6], endian) as u16;
        match version {
            VERSION_1 => Self::parse_v1(data, endian),
            VERSION_2 => Self::parse_v2(data, endian),
            v => Err(GsymError::BadVersion(v)),
        }
    }

    /// A cursor at the header's fields after magic and version, for a
    /// header of `size` bytes, and the error of one cut short.
    fn header_fields(
        data: &[u8],
        endian: Endian,
        size: usize,
    ) -> Result<(Cursor<'_>, impl Fn() -> GsymError + Copy), GsymError> {
        let len = data.len();
        check_range("header", 0, size as u64, len)?;
        let bad = move || GsymError::Truncated {
            what: "header",
            start: 0,
            end: size as u64,
            len: len as u64,
        };
        let mut c = Cursor::new(data, endian);
        c.bytes(6).ok_or_else(bad)?;
        Ok((c, bad))
    }

    fn parse_v1(data: &[u8], endian: Endian) -> Result<Layout, GsymError> {
        let len = data.len();
        let (mut c, bad) = Self::header_fields(data, endian, HEADER_V1_SIZE)?;
        let addr_off_size = c.u8().ok_or_else(bad)?;
        let uuid_size = c.u8().ok_or_else(bad)?;
        let base_address = c.u64().ok_or_else(bad)?;
        let num_addrs = c.u32().ok_or_else(bad)?;
        let strtab_offset = c.u32().ok_or_else(bad)?;
        let strtab_size = c.u32().ok_or_else(bad)?;
        if !matches!(addr_off_size, 1 | 2 | 4 | 8) {
            return Err(GsymError::BadAddrOffSize(addr_off_size));
        }
        if usize::from(uuid_size) > MAX_UUID_SIZE {
            return Err(GsymError::BadUuidSize(uuid_size));
        }
        let uuid = 28..28 + usize::from(uuid_size);
        let n = u64::from(num_addrs);
        let mut off = align_to(HEADER_V1_SIZE as u64, u64::from(addr_off_size));
        let addr_offsets = check_range("address table", off, n * u64::from(addr_off_size), len)?;
        off = align_to(addr_offsets.end as u64, 4);
        let addr_info_offsets = check_range("address info offsets", off, n * 4, len)?;
        let count = check_range("file table", addr_info_offsets.end as u64, 4, len)?;
        let num_files = read_uint(&data[count.clone()], endian) as u32;
        let files = check_range(
            "file table",
            count.end as u64,
            u64::from(num_files) * 8,
            len,
        )?;
        let strtab = check_range(
            "string table",
            u64::from(strtab_offset),
            u64::from(strtab_size),
            len,
        )?;
        Ok(Layout {
            endian,
            version: VERSION_1,
            addr_off_size,
            base_address,
            num_addrs,
            uuid,
            addr_offsets,
            addr_info_offsets,
            addr_info_size: 4,
            info_base: 0,
            files,
            num_files,
            strp_size: 4,
            strtab,
        })
    }

    fn parse_v2(data: &[u8], endian: Endian) -> Result<Layout, GsymError> {
        let len = data.len();
        let (mut c, bad) = Self::header_fields(data, endian, HEADER_V2_SIZE)?;
        let addr_off_size = c.u8().ok_or_else(bad)?;
        let encoding = c.u8().ok_or_else(bad)?;
        let base_address = c.u64().ok_or_else(bad)?;
        let num_addrs = c.u32().ok_or_else(bad)?;
        if !(1..=8).contains(&addr_off_size) {
            return Err(GsymError::BadAddrOffSize(addr_off_size));
        }
        if encoding != 0 {
            return Err(GsymError::BadStringEncoding(encoding));
        }
        // The section directory: (type u32, offset u64, size u64) entries
        // up to an EndOfList entry. Later entries of a type win, as in LLVM.
        let mut sections: [Option<(u64, u64)>; 7] = [None; 7];
        loop {
            let start = c.pos() as u64;
            let entry = check_range("section directory", start, GLOBAL_DATA_SIZE as u64, len)
                .map_err(|_| GsymError::UnterminatedDirectory)?;
            let _ = entry;
            let ty = c.u32().ok_or(GsymError::UnterminatedDirectory)?;
            let offset = c.u64().ok_or(GsymError::UnterminatedDirectory)?;
            let size = c.u64().ok_or(GsymError::UnterminatedDirectory)?;
            if ty == global_type::END_OF_LIST {
                break;
            }
            let name = section_name(ty);
            check_range(name, offset, size, len)?;
            if let Some(slot) = sections.get_mut(ty as usize) {
                *slot = Some((offset, size));
            }
        }
        let get = |ty: u32| -> Result<Range<usize>, GsymError> {
            let (o, s) =
                sections[ty as usize].ok_or(GsymError::MissingSection(section_name(ty)))?;
            check_range(section_name(ty), o, s, len)
        };
        let n = u64::from(num_addrs);
        let addr_offsets = get(global_type::ADDR_OFFSETS)?;
        if addr_offsets.len() as u64 != n * u64::from(addr_off_size) {
            return Err(GsymError::SectionSize("AddrOffsets"));
        }
        let addr_info_offsets = get(global_type::ADDR_INFO_OFFSETS)?;
        if addr_info_offsets.len() as u64 != n * 8 {
            return Err(GsymError::SectionSize("AddrInfoOffsets"));
        }
        let strtab = get(global_type::STRING_TABLE)?;
        let file_section = get(global_type::FILE_TABLE)?;
        let function_info = get(global_type::FUNCTION_INFO)?;
        let uuid = match sections[global_type::UUID as usize] {
            Some((o, s)) => check_range("UUID", o, s, len)?,
            None => 0..0,
        };
        if file_section.len() < 4 {
            return Err(GsymError::SectionSize("FileTable"));
        }
        let num_files = read_uint(&data[file_section.start..file_section.start + 4], endian) as u32;
        let files = check_range(
            "file table",
            file_section.start as u64 + 4,
            u64::from(num_files) * 16,
            file_section.end,
        )?;
        Ok(Layout {
            endian,
            version: VERSION_2,
            addr_off_size,
            base_address,
            num_addrs,
            uuid,
            addr_offsets,
            addr_info_offsets,
            addr_info_size: 8,
            info_base: function_info.start as u64,
            files,
            num_files,
            strp_size: 8,
            strtab,
        })
    }
}

fn section_name(ty: u32) -> &'static str {
    match ty {
        global_type::ADDR_OFFSETS => "AddrOffsets",
        global_type::ADDR_INFO_OFFSETS => "AddrInfoOffsets",
        global_type::STRING_TABLE => "StringTable",
        global_type::FILE_TABLE => "FileTable",
        global_type::FUNCTION_INFO => "FunctionInfo",
        global_type::UUID => "UUID",
        _ => "unknown section",
    }
}

/// A file entry: string table offsets of the directory and base name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileEntry {
    pub dir: u64,
    pub base: u64,
}

/// A parsed FunctionInfo (for dumps and tests; lookups don't build these).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionRecord {
    pub start: u64,
    pub size: u64,
    pub name: u64,
    /// (address, file index, line)
    pub lines: Option<Vec<(u64, u32, u32)>>,
    pub has_inline: bool,
}

/// A GSYM file's bytes together with their layout.
#[derive(Clone, Copy)]
pub struct GsymView<'a> {
    data: &'a [u8],
    layout: &'a Layout,
}

impl<'a> GsymView<'a> {
    pub fn new(data: &'a [u8], layout: &'a Layout) -> GsymView<'a> {
        GsymView { data, layout }
    }

    pub fn layout(&self) -> &'a Layout {
        self.layout
    }

    pub fn uuid(&self) -> &'a [u8] {
        self.data.get(self.layout.uuid.clone()).unwrap_or(&[])
    }

    pub fn num_addresses(&self) -> usize {
        self.layout.num_addrs as usize
    }

    fn addr_offset(&self, i: usize) -> u64 {
        let size = usize::from(self.layout.addr_off_size);
        let start = self.layout.addr_offsets.start + i * size;
        // In bounds: Layout checked the table holds num_addrs entries.
        match self.data.get(start..start + size) {
            Some(b) => read_uint(b, self.layout.endian),
            None => u64::MAX,
        }
    }

    /// The start address of the `i`th function.
    pub fn address(&self, i: usize) -> Option<u64> {
        if i >= self.num_addresses() {
            return None;
        }
        Some(self.layout.base_address.wrapping_add(self.addr_offset(i)))
    }

    fn info_offset(&self, i: usize) -> Result<u64, GsymError> {
        let size = usize::from(self.layout.addr_info_size);
        let start = self.layout.addr_info_offsets.start + i * size;
        let b = self
            .data
            .get(start..start + size)
            .ok_or(GsymError::BadInfoOffset(start as u64))?;
        let rel = read_uint(b, self.layout.endian);
        Ok(rel.wrapping_add(self.layout.info_base))
    }

    /// The bytes of the `i`th FunctionInfo (to the end of the file).
    fn info_data(&self, i: usize) -> Result<&'a [u8], GsymError> {
        let off = self.info_offset(i)?;
        if off >= self.data.len() as u64 {
            return Err(GsymError::BadInfoOffset(off));
        }
        Ok(&self.data[off as usize..])
    }

    /// The NUL-terminated string at `off` in the string table (empty when
    /// out of range, as LLVM does).
    pub fn string(&self, off: u64) -> &'a [u8] {
        let tab = match self.data.get(self.layout.strtab.clone()) {
            Some(t) => t,
            None => return &[],
        };
        if off >= tab.len() as u64 {
            return &[];
        }
        let s = &tab[off as usize..];
        match memchr::memchr(0, s) {
            Some(n) => &s[..n],
            None => s,
        }
    }

    pub fn string_lossy(&self, off: u64) -> String {
        String::from_utf8_lossy(self.string(off)).into_owned()
    }

    pub fn num_files(&self) -> u32 {
        self.layout.num_files
    }

    pub fn file(&self, idx: u64) -> Option<FileEntry> {
        if idx >= u64::from(self.layout.num_files) {
            return None;
        }
        let sz = usize::from(self.layout.strp_size);
        let start = self.layout.files.start + idx as usize * 2 * sz;
        let mut c = Cursor::new(self.data.get(start..start + 2 * sz)?, self.layout.endian);
        Some(FileEntry {
            dir: c.uint(sz)?,
            base: c.uint(sz)?,
        })
    }

    /// Index of the first function whose start is the greatest start
    /// address <= `addr` (LLVM's `getAddressIndex`).
    fn address_index(&self, addr: u64) -> Option<usize> {
        let base = self.layout.base_address;
        if addr < base {
            return None;
        }
        let off = addr - base;
        let n = self.num_addresses();
        // upper_bound: first index whose offset > off.
        let (mut lo, mut hi) = (0usize, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.addr_offset(mid) <= off {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo == 0 {
            return None;
        }
        let mut i = lo - 1;
        let v = self.addr_offset(i);
        while i > 0 && self.addr_offset(i - 1) == v {
            i -= 1;
        }
        Some(i)
    }

    /// Finds the FunctionInfo containing `addr`: (its data, start address).
    fn function_data_for(&self, addr: u64) -> Result<(&'a [u8], u64), GsymError> {
        let first = self.address_index(addr).ok_or(GsymError::NotFound(addr))?;
        let first_start = self.address(first).ok_or(GsymError::NotFound(addr))?;
        for i in first..self.num_addresses() {
            let start = self.address(i).ok_or(GsymError::NotFound(addr))?;
            if start != first_start {
                break;
            }
            let data = self.info_data(i)?;
            let size = Cursor::new(data, self.layout.endian)
                .u32()
                .ok_or(GsymError::FunctionTruncated)?;
            if size == 0 || addr.wrapping_sub(start) < u64::from(size) {
                return Ok((data, start));
            }
        }
        Err(GsymError::NotFound(addr))
    }

    /// Reads the head of a FunctionInfo: its size and name offset.
    fn function_head(&self, c: &mut Cursor<'a>) -> Result<(u32, u64), GsymError> {
        let size = c.u32().ok_or(GsymError::FunctionTruncated)?;
        let name = c
            .uint(usize::from(self.layout.strp_size))
            .ok_or(GsymError::FunctionTruncated)?;
        Ok((size, name))
    }

    /// Looks up `addr` the way `llvm-gsymutil --address` does.
    pub fn lookup(&self, addr: u64) -> Result<LookupResult, GsymError> {
        let (data, start) = self.function_data_for(addr)?;
        self.lookup_in(data, start, addr, true)
    }

    /// Like [`lookup`](Self::lookup) but reads only the function's name and
    /// range (no line table, no inline info).
    pub fn lookup_symbol(&self, addr: u64) -> Result<LookupResult, GsymError> {
        let (data, start) = self.function_data_for(addr)?;
        self.lookup_in(data, start, addr, false)
    }

    fn lookup_in(
        &self,
        data: &'a [u8],
        start: u64,
        addr: u64,
        details: bool,
    ) -> Result<LookupResult, GsymError> {
        let endian = self.layout.endian;
        let mut c = Cursor::new(data, endian);
        let (size, name) = self.function_head(&mut c)?;
        if size > 0 && addr.wrapping_sub(start) >= u64::from(size) {
            return Err(GsymError::NotFound(addr));
        }
        if name == 0 {
            return Err(GsymError::ZeroName);
        }
        let func_name = self.string_lossy(name);
        let mut result = LookupResult {
            address: addr,
            func_start: start,
            func_size: u64::from(size),
            func_name: func_name.clone(),
            locations: Vec::new(),
        };
        let mut first = SourceLocation {
            name: func_name,
            offset: addr.wrapping_sub(start),
            ..SourceLocation::default()
        };
        if !details {
            result.locations.push(first);
            return Ok(result);
        }
        let mut line_entry = None;
        let mut inline_data = None;
        for_each_chunk(&mut c, |ty, chunk| {
            match ty {
                info_type::LINE_TABLE => {
                    line_entry = Some(line_table_lookup(chunk, endian, start, addr)?);
                }
                info_type::INLINE_INFO => inline_data = Some(chunk),
                _ => {}
            }
            Ok(())
        })?;
        let Some((_, file, line)) = line_entry else {
            result.locations.push(first);
            return Ok(result);
        };
        let fe = self
            .file(u64::from(file))
            .ok_or(GsymError::BadFile(u64::from(file)))?;
        first.dir = self.string_lossy(fe.dir);
        first.base = self.string_lossy(fe.base);
        first.line = line;
        result.locations.push(first);
        if let Some(inline) = inline_data {
            let mut c = Cursor::new(inline, endian);
            self.inline_lookup(&mut c, start, addr, &mut result.locations, 0)?;
        }
        Ok(result)
    }

    /// LLVM's InlineInfo lookup helper: returns `true` when the node was
    /// a terminator or contained `addr` (stop scanning siblings), `false`
    /// when it was skipped.
    fn inline_lookup(
        &self,
        c: &mut Cursor<'a>,
        base: u64,
        addr: u64,
        locs: &mut Vec<SourceLocation>,
        depth: u32,
    ) -> Result<bool, GsymError> {
        if depth > MAX_INLINE_DEPTH {
            return Err(GsymError::BadInlineInfo("nested too deeply"));
        }
        let trunc = GsymError::BadInlineInfo("truncated");
        let (ranges_nonempty, contains, first_start) = decode_ranges(c, base, addr)?;
        if !ranges_nonempty {
            return Ok(true);
        }
        if !contains {
            self.skip_inline(c, depth)?;
            return Ok(false);
        }
        let has_children = c.u8().ok_or(trunc.clone())? != 0;
        let name = c
            .uint(usize::from(self.layout.strp_size))
            .ok_or(trunc.clone())?;
        let call_file = c.uleb().ok_or(trunc.clone())? as u32;
        let call_line = c.uleb().ok_or(trunc)? as u32;
        if has_children {
            while !self.inline_lookup(c, first_start, addr, locs, depth + 1)? {}
        }
        let fe = self
            .file(u64::from(call_file))
            .ok_or(GsymError::BadFile(u64::from(call_file)))?;
        if fe.dir != 0 || fe.base != 0 {
            let Some(back) = locs.last_mut() else {
                return Ok(true);
            };
            let caller = SourceLocation {
                name: std::mem::replace(&mut back.name, self.string_lossy(name)),
                offset: std::mem::replace(&mut back.offset, addr.wrapping_sub(first_start)),
                dir: self.string_lossy(fe.dir),
                base: self.string_lossy(fe.base),
                line: call_line,
            };
            locs.push(caller);
        }
        Ok(true)
    }

    /// Skips the rest of an InlineInfo node whose ranges were read.
    fn skip_inline(&self, c: &mut Cursor<'a>, depth: u32) -> Result<(), GsymError> {
        if depth > MAX_INLINE_DEPTH {
            return Err(GsymError::BadInlineInfo("nested too deeply"));
        }
        let trunc = GsymError::BadInlineInfo("truncated");
        let has_children = c.u8().ok_or(trunc.clone())? != 0;
        c.bytes(usize::from(self.layout.strp_size))
            .ok_or(trunc.clone())?;
        c.uleb().ok_or(trunc.clone())?;
        c.uleb().ok_or(trunc.clone())?;
        if has_children {
            loop {
                let n = c.uleb().ok_or(trunc.clone())?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    c.uleb().ok_or(trunc.clone())?;
                    c.uleb().ok_or(trunc.clone())?;
                }
                self.skip_inline(c, depth + 1)?;
            }
        }
        Ok(())
    }

    /// Decodes the whole `i`th FunctionInfo's name, range and line table.
    pub fn function_at(&self, i: usize) -> Result<FunctionRecord, GsymError> {
        let start = self.address(i).ok_or(GsymError::BadInfoOffset(i as u64))?;
        let data = self.info_data(i)?;
        let endian = self.layout.endian;
        let mut c = Cursor::new(data, endian);
        let (size, name) = self.function_head(&mut c)?;
        let mut rec = FunctionRecord {
            start,
            size: u64::from(size),
            name,
            lines: None,
            has_inline: false,
        };
        for_each_chunk(&mut c, |ty, chunk| {
            match ty {
                info_type::LINE_TABLE => {
                    let mut rows = Vec::new();
                    parse_line_table(chunk, endian, start, |row| {
                        rows.push(row);
                        true
                    })?;
                    rec.lines = Some(rows);
                }
                info_type::INLINE_INFO => rec.has_inline = true,
                _ => {}
            }
            Ok(())
        })?;
        Ok(rec)
    }
}

/// Walks the chunks after a FunctionInfo's head, calling `chunk` with each
/// one's type and bytes, up to the EndOfList chunk.
fn for_each_chunk<'a>(
    c: &mut Cursor<'a>,
    mut chunk: impl FnMut(u32, &'a [u8]) -> Result<(), GsymError>,
) -> Result<(), GsymError> {
    loop {
        let ty = c.u32().ok_or(GsymError::FunctionTruncated)?;
        let len = c.u32().ok_or(GsymError::FunctionTruncated)?;
        let bytes = c.bytes(len as usize).ok_or(GsymError::FunctionTruncated)?;
        if ty == info_type::END_OF_LIST {
            return Ok(());
        }
        chunk(ty, bytes)?;
    }
}

/// Reads an address range list; returns (any non-empty range, whether one
/// contains `addr`, lowest start of the non-empty ranges).
fn decode_ranges(c: &mut Cursor<'_>, base: u64, addr: u64) -> Result<(bool, bool, u64), GsymError> {
    let trunc = GsymError::BadInlineInfo("truncated ranges");
    let n = c.uleb().ok_or(trunc.clone())?;
    let mut any = false;
    let mut contains = false;
    let mut first = u64::MAX;
    for _ in 0..n {
        let off = c.uleb().ok_or(trunc.clone())?;
        let size = c.uleb().ok_or(trunc.clone())?;
        if size == 0 {
            continue;
        }
        let start = base.wrapping_add(off);
        any = true;
        first = first.min(start);
        if addr.wrapping_sub(start) < size && addr >= start {
            contains = true;
        }
    }
    Ok((any, contains, first))
}

/// Runs the line table state machine, calling `row` for each pushed row
/// (address, file, line) until it returns false.
pub(crate) fn parse_line_table(
    data: &[u8],
    endian: Endian,
    base: u64,
    mut row: impl FnMut((u64, u32, u32)) -> bool,
) -> Result<(), GsymError> {
    let mut c = Cursor::new(data, endian);
    let min_delta = c
        .sleb()
        .ok_or(GsymError::BadLineTable("missing MinDelta"))?;
    let max_delta = c
        .sleb()
        .ok_or(GsymError::BadLineTable("missing MaxDelta"))?;
    let line_range = max_delta.wrapping_sub(min_delta).wrapping_add(1);
    let first_line = c
        .uleb()
        .ok_or(GsymError::BadLineTable("missing FirstLine"))? as u32;
    let (mut addr, mut file, mut line) = (base, 1u32, first_line);
    loop {
        let op = c
            .u8()
            .ok_or(GsymError::BadLineTable("EOF found before EndSequence"))?;
        match op {
            line_op::END_SEQUENCE => return Ok(()),
            line_op::SET_FILE => {
                file = c.uleb().ok_or(GsymError::BadLineTable("EOF in SetFile"))? as u32;
            }
            line_op::ADVANCE_PC => {
                addr = addr.wrapping_add(
                    c.uleb()
                        .ok_or(GsymError::BadLineTable("EOF in AdvancePC"))?,
                );
                if !row((addr, file, line)) {
                    return Ok(());
                }
            }
            line_op::ADVANCE_LINE => {
                let d = c
                    .sleb()
                    .ok_or(GsymError::BadLineTable("EOF in AdvanceLine"))?;
                line = (i64::from(line).wrapping_add(d)) as u32;
            }
            _ => {
                if line_range <= 0 {
                    return Err(GsymError::BadLineTable("invalid line delta range"));
                }
                let adjusted = i64::from(op - line_op::FIRST_SPECIAL);
                let line_delta = min_delta.wrapping_add(adjusted % line_range);
                let addr_delta = (adjusted / line_range) as u64;
                line = (i64::from(line).wrapping_add(line_delta)) as u32;
                addr = addr.wrapping_add(addr_delta);
                if !row((addr, file, line)) {
                    return Ok(());
                }
            }
        }
    }
}

/// The row covering `addr`: the last row whose address is <= `addr`.
fn line_table_lookup(
    data: &[u8],
    endian: Endian,
    base: u64,
    addr: u64,
) -> Result<(u64, u32, u32), GsymError> {
    let mut found = None;
    parse_line_table(data, endian, base, |r| {
        if addr < r.0 {
            return false;
        }
        found = Some(r);
        true
    })?;
    match found {
        // LLVM treats a row with file 0 as "not found".
        Some(r) if r.1 != 0 => Ok(r),
        _ => Err(GsymError::NotInLineTable(addr)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leb128() {
        let d = [0xe5, 0x8e, 0x26, 0x7f, 0x80, 0x7f];
        let mut c = Cursor::new(&d, Endian::Little);
        assert_eq!(c.uleb(), Some(624485));
        assert_eq!(c.sleb(), Some(-1));
        assert_eq!(c.sleb(), Some(-128));
        assert_eq!(c.uleb(), None);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert_eq!(
            Layout::parse(b"GS"),
            Err(GsymError::Truncated {
                what: "header",
                start: 0,
                end: 6,
                len: 2
            })
        );
        assert_eq!(
            Layout::parse(b"XXXXXXXXXXXXXXXXXXXXXXXXXXX"),
            Err(GsymError::BadMagic)
        );
        let mut v1 = vec![0u8; 48];
        v1[..4].copy_from_slice(&GSYM_MAGIC.to_le_bytes());
        v1[4] = 9;
        assert_eq!(Layout::parse(&v1), Err(GsymError::BadVersion(9)));
    }
}
