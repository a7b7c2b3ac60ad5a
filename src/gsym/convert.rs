//! Building GSYM data from an ELF file (DWARF + symbol table, read with
//! gimli and object directly) or from a Breakpad `.sym` file.
//!
//! The DWARF conversion follows what `llvm-gsymutil --convert` does
//! (`DwarfTransformer` + `ObjectFileTransformer`): one FunctionInfo per
//! subprogram range, named by linkage name (or the qualified name for
//! C/C++), a per-function line table cut from the unit's line program,
//! and the tree of inlined subroutines; then every `STT_FUNC` symbol.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use gimli::{AttributeValue, DwAt, EndianSlice, RunTimeEndian, constants};
use object::{Object, ObjectSection, ObjectSegment, SectionKind};

use super::dies::{Dies, Others, R, Tree};
use super::writer::{FunctionInfo, GsymBuilder, InlineNode, LineEntry, insert_range};
use crate::breakpad::parser::{OriginForm, ParseError, Record, Records};
use crate::breakpad::types::{NO_FILE, Span, build_id_prefix};
use crate::elf::symtab::{Table, elf_symbols};
use crate::symbols::BuildId;

/// Why an input could not be converted.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("not an ELF file: {0}")]
    Object(#[from] object::Error),
    #[error("malformed DWARF: {0}")]
    Dwarf(#[from] gimli::Error),
    #[error(transparent)]
    NotBreakpad(#[from] ParseError),
    #[error("line {line}: {reason}")]
    Breakpad { line: u64, reason: &'static str },
}

/// Counts of what a conversion found (printed by `gsym create`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ConvertStats {
    pub from_debug_info: usize,
    pub from_symbols: usize,
    /// Bytes of `.debug_*` sections in the input file (as stored).
    pub dwarf_bytes: u64,
}

/// Reads the .dwo file a skeleton unit names (relative to its compilation
/// directory, else to the input's directory).
fn read_dwo(
    dwarf: &gimli::Dwarf<R<'_>>,
    unit: &gimli::Unit<R<'_>>,
    input_dir: Option<&Path>,
) -> Option<Vec<u8>> {
    let name = dwarf.attr_string(unit, unit.dwo_name().ok()??).ok()?;
    let name = Path::new(std::str::from_utf8(name.slice()).ok()?);
    let mut candidates = Vec::new();
    if let Some(dir) = unit
        .comp_dir
        .and_then(|d| std::str::from_utf8(d.slice()).ok())
    {
        candidates.push(Path::new(dir).join(name));
    }
    candidates.push(name.to_path_buf());
    if let Some(dir) = input_dir {
        candidates.push(dir.join(name));
        if let Some(base) = name.file_name() {
            candidates.push(dir.join(base));
        }
    }
    candidates.into_iter().find_map(|p| std::fs::read(p).ok())
}

fn convert_split_unit<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    skeleton: &gimli::Unit<R<'a>>,
    dwo_id: gimli::DwoId,
    dwo: &'a [u8],
    endian: RunTimeEndian,
    b: &mut GsymBuilder,
) -> Option<()> {
    let obj = object::File::parse(dwo).ok()?;
    let load = |id: gimli::SectionId| -> Result<Cow<'a, [u8]>, gimli::Error> {
        Ok(match id.dwo_name().and_then(|n| obj.section_by_name(n)) {
            Some(s) => s.uncompressed_data().unwrap_or(Cow::Borrowed(&[])),
            None => Cow::Borrowed(&[]),
        })
    };
    let sections = gimli::DwarfSections::load(load).ok()?;
    let mut dwo_dwarf = sections.borrow(|s| EndianSlice::new(s, endian));
    dwo_dwarf.make_dwo(dwarf);
    let mut units = dwo_dwarf.units();
    while let Ok(Some(header)) = units.next() {
        let Ok(mut unit) = dwo_dwarf.unit(header) else {
            continue;
        };
        if unit.dwo_id != Some(dwo_id) {
            continue;
        }
        unit.copy_relocated_attributes(skeleton);
        let arena = typed_arena::Arena::new();
        let others = Others::new(&dwo_dwarf, &arena);
        let _ = convert_unit(&dwo_dwarf, unit, Some(&others), Some((dwarf, skeleton)), b);
        return Some(());
    }
    None
}

/// Fills `b` from an ELF file's DWARF and symbol table. `input_dir` is
/// where split-DWARF `.dwo` files are also looked for.
pub fn from_elf(
    data: &[u8],
    input_dir: Option<&Path>,
    b: &mut GsymBuilder,
) -> Result<ConvertStats, ConvertError> {
    let obj = object::File::parse(data)?;
    if let Ok(Some(id)) = obj.build_id() {
        b.set_uuid(id);
    }
    if let Some(seg) = obj.segments().next() {
        b.set_base_address(seg.address());
    }
    let mut dwarf_bytes = 0;
    for s in obj.sections() {
        if s.name().is_ok_and(|n| n.starts_with(".debug_")) {
            dwarf_bytes += s.size();
        }
        if s.kind() == SectionKind::Text {
            b.add_text_range(s.address(), s.address().saturating_add(s.size()));
        }
    }
    let endian = if obj.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let load = |id: gimli::SectionId| -> Result<Cow<'_, [u8]>, gimli::Error> {
        Ok(match obj.section_by_name(id.name()) {
            Some(s) => s.uncompressed_data().unwrap_or(Cow::Borrowed(&[])),
            None => Cow::Borrowed(&[]),
        })
    };
    let sections = gimli::DwarfSections::load(load)?;
    let dwarf = sections.borrow(|s| EndianSlice::new(s, endian));
    let mut stats = ConvertStats {
        dwarf_bytes,
        ..ConvertStats::default()
    };
    let before = b.num_functions();
    let arena = typed_arena::Arena::new();
    let others = Others::new(&dwarf, &arena);
    let mut units = dwarf.units();
    while let Some(header) = units.next()? {
        let unit = match dwarf.unit(header) {
            Ok(u) => u,
            Err(_) => continue,
        };
        if let gimli::UnitType::Skeleton(dwo_id) = unit.header.type_() {
            // Split DWARF: the functions are in the .dwo file.
            if let Some(dwo) = read_dwo(&dwarf, &unit, input_dir) {
                let _ = convert_split_unit(&dwarf, &unit, dwo_id, &dwo, endian, b);
            }
            continue;
        }
        // A unit that fails half way keeps what it converted.
        let _ = convert_unit(&dwarf, unit, Some(&others), None, b);
    }
    stats.from_debug_info = b.num_functions() - before;
    let before = b.num_functions();
    add_symbols(&obj, b);
    stats.from_symbols = b.num_functions() - before;
    Ok(stats)
}

/// ELF `STT_FUNC` symbols from `.symtab`, as LLVM's ObjectFileTransformer
/// adds them.
fn add_symbols(obj: &object::File<'_>, b: &mut GsymBuilder) {
    for sym in elf_symbols(obj, Table::Static) {
        if sym.kind != object::elf::STT_FUNC || !b.is_valid_text_address(sym.value) {
            continue;
        }
        let Some(name) = sym.name() else {
            continue;
        };
        let name = b.insert_string(name);
        b.add_function(FunctionInfo {
            start: sym.value,
            end: sym.value.saturating_add(sym.size),
            name,
            lines: None,
            inline: None,
        });
    }
}

/// One line program's rows, grouped into sequences the way LLVM's
/// `DWARFDebugLine::LineTable` keeps them.
#[derive(Default)]
struct Lines {
    /// (address, file, line, end_sequence)
    rows: Vec<(u64, u64, u32, bool)>,
    /// (low_pc, high_pc, first row, one past the end_sequence row)
    seqs: Vec<(u64, u64, usize, usize)>,
}

impl Lines {
    fn load(unit: &gimli::Unit<R<'_>>) -> Option<Lines> {
        let program = unit.line_program.clone()?;
        let mut rows_iter = program.rows();
        let mut lines = Lines::default();
        let mut seq_start = 0usize;
        while let Ok(Some((_, row))) = rows_iter.next_row() {
            let line = row.line().map_or(0, |l| l.get() as u32);
            lines
                .rows
                .push((row.address(), row.file_index(), line, row.end_sequence()));
            if row.end_sequence() {
                let low = lines.rows[seq_start].0;
                let high = row.address();
                let end = lines.rows.len();
                if low < high {
                    lines.seqs.push((low, high, seq_start, end));
                }
                seq_start = end;
            }
        }
        lines.seqs.sort_by_key(|s| s.1);
        Some(lines)
    }

    /// The last row in the sequence whose address is <= `addr`.
    fn find_row_in_seq(&self, seq: (u64, u64, usize, usize), addr: u64) -> Option<usize> {
        let (low, high, first, last) = seq;
        if !(low <= addr && addr < high) {
            return None;
        }
        // upper_bound over rows [first+1, last-1), minus one.
        let rows = &self.rows[first + 1..last.saturating_sub(1).max(first + 1)];
        let ub = rows.partition_point(|r| r.0 <= addr);
        Some(first + ub)
    }

    /// LLVM's `lookupAddressRange`: the row indexes covering
    /// `[addr, addr + size)`.
    fn lookup_range(&self, addr: u64, size: u64) -> Option<Vec<usize>> {
        let end = addr.saturating_add(size);
        let mut pos = self.seqs.partition_point(|s| s.1 <= addr);
        let start_pos = pos;
        let s = self.seqs.get(pos)?;
        if !(s.0 <= addr && addr < s.1) {
            return None;
        }
        let mut out = Vec::new();
        while let Some(&seq) = self.seqs.get(pos) {
            if seq.0 >= end {
                break;
            }
            let first = if pos == start_pos {
                self.find_row_in_seq(seq, addr)?
            } else {
                seq.2
            };
            let last = self
                .find_row_in_seq(seq, end.saturating_sub(1))
                .unwrap_or(seq.3.saturating_sub(1));
            out.extend(first..=last);
            pos += 1;
        }
        Some(out)
    }
}

struct UnitCtx<'d, 'o, 'a> {
    dwarf: &'d gimli::Dwarf<R<'a>>,
    tree: Tree<'a>,
    others: Option<&'d Others<'o, 'a>>,
    /// Where the line table and compilation directory come from for split
    /// DWARF: the skeleton unit in the executable (else the unit itself).
    ldwarf: &'d gimli::Dwarf<R<'a>>,
    skeleton: Option<&'d gimli::Unit<R<'a>>>,
    lines: Option<Lines>,
    /// DWARF file index -> GSYM file index.
    file_cache: HashMap<u64, u32>,
}

/// The unit that holds the line table for a unit's DIEs.
type LineSource<'d, 'a> = (&'d gimli::Dwarf<R<'a>>, &'d gimli::Unit<R<'a>>);

fn convert_unit<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    unit: gimli::Unit<R<'a>>,
    others: Option<&Others<'_, 'a>>,
    skeleton: Option<LineSource<'_, 'a>>,
    b: &mut GsymBuilder,
) -> Result<(), gimli::Error> {
    let (mut tree, result) = Tree::build(unit);
    if let Some((_, lunit)) = skeleton {
        // Like LLVM, the language comes from the skeleton's unit DIE.
        let mut c = lunit.entries();
        tree.language = match c.next_dfs() {
            Ok(Some(root)) => match root.attr_value(constants::DW_AT_language) {
                Some(AttributeValue::Language(l)) => l.0,
                _ => 0,
            },
            _ => 0,
        };
    }
    let lines = Lines::load(skeleton.map_or(&tree.unit, |(_, u)| u));
    let mut ctx = UnitCtx {
        dwarf,
        tree,
        others,
        ldwarf: skeleton.map_or(dwarf, |(d, _)| d),
        skeleton: skeleton.map(|(_, u)| u),
        lines,
        file_cache: HashMap::new(),
    };
    for i in 0..ctx.tree.nodes.len() {
        if ctx.tree.nodes[i].tag == constants::DW_TAG_subprogram {
            ctx.handle_subprogram(i, b);
        }
    }
    result
}

/// A file index attribute's value (gimli normalizes it to `FileIndex`).
fn file_index(v: AttributeValue<R<'_>>) -> Option<u64> {
    match v {
        AttributeValue::FileIndex(i) => Some(i),
        v => v.udata_value(),
    }
}

fn is_absolute(p: &[u8]) -> bool {
    p.first() == Some(&b'/')
        || p.first() == Some(&b'\\')
        || (p.len() >= 3
            && p[0].is_ascii_alphabetic()
            && p[1] == b':'
            && (p[2] == b'\\' || p[2] == b'/'))
}

/// LLVM's `sys::path::append` for one component (POSIX style).
fn path_append(path: &mut Vec<u8>, comp: &[u8]) {
    if path.last() == Some(&b'/') {
        let n = comp.iter().take_while(|&&c| c == b'/').count();
        path.extend_from_slice(&comp[n..]);
        return;
    }
    let comp_has_sep = comp.first() == Some(&b'/');
    if !comp_has_sep && !path.is_empty() {
        path.push(b'/');
    }
    path.extend_from_slice(comp);
}

impl<'o, 'a> UnitCtx<'_, 'o, 'a> {
    fn dies(&self) -> Dies<'_, 'o, 'a> {
        Dies {
            dwarf: self.dwarf,
            here: &self.tree,
            others: self.others,
        }
    }

    fn attr(&self, node: usize, at: DwAt) -> Option<AttributeValue<R<'a>>> {
        self.tree.attr(node, at)
    }

    /// LLVM's `findRecursively` (see [`Dies::find_recursively`]).
    fn find_recursively(&self, node: usize, names: &[DwAt]) -> Option<AttributeValue<R<'a>>> {
        self.dies()
            .find_recursively((&self.tree, node), names)
            .map(|(_, v)| v)
    }

    fn qualified_name(&self, node: usize, b: &mut GsymBuilder) -> Option<u64> {
        self.dies()
            .qualified_name(node)
            .map(|n| b.insert_string(&n))
    }

    fn lunit(&self) -> &gimli::Unit<R<'a>> {
        self.skeleton.unwrap_or(&self.tree.unit)
    }

    fn lstring(&self, v: AttributeValue<R<'a>>) -> Option<&'a [u8]> {
        self.ldwarf
            .attr_string(self.lunit(), v)
            .ok()
            .map(|s| s.slice())
    }

    /// Full path of a line-table file index, as LLVM's
    /// `getFileNameByIndex(..., AbsoluteFilePath)` builds it.
    fn file_path(&self, index: u64) -> Option<Vec<u8>> {
        let program = self.lunit().line_program.as_ref()?;
        let header = program.header();
        let version = header.version();
        let entry = if version >= 5 {
            header.file_names().get(usize::try_from(index).ok()?)?
        } else {
            if index == 0 {
                return None;
            }
            header.file_names().get(usize::try_from(index - 1).ok()?)?
        };
        let name = self.lstring(entry.path_name())?;
        if is_absolute(name) {
            return Some(name.to_vec());
        }
        let dir_index = entry.directory_index();
        let dirs = header.include_directories();
        let include_dir: &[u8] = if version >= 5 {
            let d = dirs.get(usize::try_from(dir_index).ok()?)?;
            self.lstring(*d)?
        } else if dir_index > 0 && dir_index as usize <= dirs.len() {
            self.lstring(dirs[dir_index as usize - 1]).unwrap_or(&[])
        } else {
            &[]
        };
        let mut path = Vec::new();
        if !is_absolute(include_dir) {
            let comp_dir = self.lunit().comp_dir.map(|s| s.slice()).unwrap_or(&[]);
            if !comp_dir.is_empty() {
                path_append(&mut path, comp_dir);
            }
        }
        path_append(&mut path, include_dir);
        path_append(&mut path, name);
        Some(path)
    }

    /// LLVM's `DWARFToGSYMFileIndex`: `None` for an index past the file
    /// table, 0 for a file whose path cannot be built.
    fn gsym_file(&mut self, index: u64, b: &mut GsymBuilder) -> Option<u32> {
        let program = self.lunit().line_program.as_ref()?;
        self.lines.as_ref()?;
        if index > program.header().file_names().len() as u64 {
            return None;
        }
        if let Some(&f) = self.file_cache.get(&index) {
            return Some(f);
        }
        let f = match self.file_path(index) {
            Some(p) => b.insert_file(&String::from_utf8_lossy(&p)),
            None => 0,
        };
        self.file_cache.insert(index, f);
        Some(f)
    }

    fn ranges(&self, node: usize) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let Some(n) = self.tree.nodes.get(node) else {
            return out;
        };
        let mut low = None;
        let mut high = None;
        let mut size = None;
        for a in &n.attrs {
            match a.name() {
                constants::DW_AT_low_pc => {
                    low = self
                        .dwarf
                        .attr_address(&self.tree.unit, a.value())
                        .ok()
                        .flatten()
                }
                constants::DW_AT_high_pc => match a.value() {
                    AttributeValue::Udata(v) => size = Some(v),
                    v => high = self.dwarf.attr_address(&self.tree.unit, v).ok().flatten(),
                },
                constants::DW_AT_ranges => {
                    if let Ok(Some(mut list)) = self.dwarf.attr_ranges(&self.tree.unit, a.value()) {
                        while let Ok(Some(r)) = list.next() {
                            out.push((r.begin, r.end));
                            if out.len() > 1 << 20 {
                                break;
                            }
                        }
                        return out;
                    }
                }
                _ => {}
            }
        }
        if let Some(l) = low {
            if let Some(s) = size {
                out.push((l, l.wrapping_add(s)));
            } else if let Some(h) = high {
                out.push((l, h));
            }
        }
        out
    }

    fn has_inline_info(&self, node: usize, depth: u32) -> bool {
        let Some(n) = self.tree.nodes.get(node) else {
            return false;
        };
        match n.tag {
            constants::DW_TAG_inlined_subroutine => return true,
            constants::DW_TAG_subprogram if depth > 0 => return false,
            _ => {}
        }
        if depth > 512 {
            return false;
        }
        n.children
            .iter()
            .any(|&c| self.has_inline_info(c, depth + 1))
    }

    fn parse_inline(
        &mut self,
        node: usize,
        depth: u32,
        parent: &mut InlineNode,
        b: &mut GsymBuilder,
    ) {
        if depth > 512 || !self.has_inline_info(node, depth) {
            return;
        }
        let tag = self.tree.nodes[node].tag;
        if tag == constants::DW_TAG_inlined_subroutine {
            let mut ii = InlineNode::default();
            let mut all = Vec::new();
            for (s, e) in self.ranges(node) {
                insert_range(&mut all, s, e);
            }
            for &(s, e) in &all {
                if parent.contains_range(s, e) {
                    ii.insert_range(s, e);
                }
            }
            if ii.ranges.is_empty() {
                return;
            }
            if let Some(name) = self.qualified_name(node, b) {
                ii.name = name;
            }
            let call_file = self
                .find_recursively(node, &[constants::DW_AT_call_file])
                .and_then(file_index)
                .unwrap_or(u64::from(u32::MAX));
            // An invalid call file drops the entry and its children.
            let Some(call_file) = self.gsym_file(call_file, b) else {
                return;
            };
            ii.call_file = call_file;
            ii.call_line = self
                .attr(node, constants::DW_AT_call_line)
                .and_then(|v| v.udata_value())
                .unwrap_or(0) as u32;
            let children = self.tree.nodes[node].children.clone();
            for c in children {
                self.parse_inline(c, depth + 1, &mut ii, b);
            }
            parent.children.push(ii);
            return;
        }
        if tag == constants::DW_TAG_subprogram || tag == constants::DW_TAG_lexical_block {
            let children = self.tree.nodes[node].children.clone();
            for c in children {
                self.parse_inline(c, depth + 1, parent, b);
            }
        }
    }

    fn line_table(&mut self, node: usize, f: &mut FunctionInfo, b: &mut GsymBuilder) {
        let Some(rows) = self
            .lines
            .as_ref()
            .and_then(|l| l.lookup_range(f.start, f.end - f.start))
        else {
            // No rows: fall back to the declaration's file and line.
            let file = self
                .find_recursively(node, &[constants::DW_AT_decl_file])
                .and_then(file_index)
                .and_then(|i| self.file_path(i));
            let line = self
                .find_recursively(node, &[constants::DW_AT_decl_line])
                .and_then(|v| v.udata_value());
            if let (Some(path), Some(line)) = (file, line) {
                let file = b.insert_file(&String::from_utf8_lossy(&path));
                f.lines = Some(vec![LineEntry {
                    addr: f.start,
                    file,
                    line: line as u32,
                }]);
            }
            return;
        };
        let mut out: Vec<LineEntry> = Vec::new();
        let mut prev_addr: Option<u64> = None;
        let first_index = rows.first().copied();
        for ri in rows {
            let Some(&(addr, file, line, end_seq)) =
                self.lines.as_ref().and_then(|l| l.rows.get(ri))
            else {
                continue;
            };
            let Some(file_idx) = self.gsym_file(file, b) else {
                continue;
            };
            let mut row_addr = addr;
            if !(f.start <= row_addr && row_addr < f.end) {
                if row_addr < f.start {
                    row_addr = f.start;
                } else {
                    continue;
                }
            }
            let le = LineEntry {
                addr: row_addr,
                file: file_idx,
                line,
            };
            if Some(ri) != first_index && prev_addr.is_some_and(|p| addr < p) {
                break;
            }
            if out
                .last()
                .is_some_and(|l| l.file == file_idx && l.line == line)
            {
                continue;
            }
            if end_seq {
                prev_addr = None;
            } else {
                out.push(le);
                prev_addr = Some(addr);
            }
        }
        if !out.is_empty() {
            f.lines = Some(out);
        }
    }

    fn handle_subprogram(&mut self, node: usize, b: &mut GsymBuilder) {
        let ranges = self.ranges(node);
        if ranges.is_empty() {
            return;
        }
        let Some(name) = self.qualified_name(node, b) else {
            return;
        };
        let highest = if self.tree.unit.encoding().address_size == 4 {
            u64::from(u32::MAX)
        } else {
            u64::MAX
        };
        for (low, high) in ranges {
            if low >= high || low == highest || !b.is_valid_text_address(low) {
                break;
            }
            let mut f = FunctionInfo {
                start: low,
                end: high,
                name,
                lines: None,
                inline: None,
            };
            if self.lines.is_some() {
                self.line_table(node, &mut f, b);
            }
            if self.has_inline_info(node, 0) {
                let mut root = InlineNode {
                    name,
                    ..InlineNode::default()
                };
                root.insert_range(low, high);
                self.parse_inline(node, 0, &mut root, b);
                if !root.children.is_empty() {
                    f.inline = Some(root);
                }
            }
            b.add_function(f);
        }
    }
}

/// One Breakpad `INLINE` record.
struct InlineRec {
    level: u32,
    call_line: u32,
    /// The call site's file; `None` in the old form, which does not name
    /// it (see [`old_form_call_file`]).
    call_file: Option<u32>,
    name: u64,
    /// The file of the inlined function itself (old `INLINE_ORIGIN` form
    /// only): the call file of the records nested in this one.
    origin_file: u32,
    ranges: Vec<(u64, u64)>,
}

/// The file of a FUNC's own code, where its old-form depth-0 `INLINE`
/// records were called from, as the Breakpad resolver finds it
/// (`breakpad::resolver`): of its line records, sorted by address, without
/// empty and overlapping ones, the first of the first 16 that no inline
/// range covers (looking at 256 ranges at most), else the first.
///
/// `lines` are the FUNC's line records as read, `sizes` their sizes.
fn old_form_call_file(lines: &[LineEntry], sizes: &[u64], recs: &[InlineRec]) -> u32 {
    // (address, size, file)
    let mut sorted: Vec<(u64, u64, u32)> = lines
        .iter()
        .zip(sizes)
        .map(|(l, &size)| (l.addr, size, l.file))
        .collect();
    sorted.sort_by_key(|l| l.0);
    let mut kept: Vec<(u64, u64, u32)> = Vec::new();
    let mut kept_end = 0u64;
    for l in sorted {
        if l.1 == 0 || (!kept.is_empty() && l.0 < kept_end) {
            continue;
        }
        kept_end = l.0.saturating_add(l.1);
        kept.push(l);
    }
    let ranges = recs.iter().flat_map(|r| r.ranges.iter());
    let own = kept
        .iter()
        .take(16)
        .find(|l| !ranges.clone().take(256).any(|&(s, e)| s <= l.0 && l.0 < e));
    own.or(kept.first()).map_or(0, |l| l.2)
}

/// Deepest Breakpad inline nesting level kept.
const MAX_BREAKPAD_INLINE_LEVEL: u32 = 256;

/// Builds a function's inline tree from its `INLINE` records: each range
/// hangs under the most recent node one level up that contains it.
///
/// An old-form record (no call-site file) was called from its parent's
/// body: the parent's own file (old `INLINE_ORIGIN` form), or `own_file`
/// for the function itself.
fn breakpad_inline_tree(f: &FunctionInfo, recs: &[InlineRec], own_file: u32) -> Option<InlineNode> {
    if recs.is_empty() || f.start >= f.end {
        return None;
    }
    // Flat nodes: (level, node, parent, file of the node's own code).
    // Index 0 is the function itself.
    let mut nodes: Vec<(i64, InlineNode, usize, u32)> = vec![(
        -1,
        InlineNode {
            ranges: vec![(f.start, f.end)],
            name: f.name,
            ..InlineNode::default()
        },
        0,
        own_file,
    )];
    // Parents first: a range may belong to a parent listed after it.
    let mut order: Vec<&InlineRec> = recs.iter().collect();
    order.sort_by_key(|r| r.level);
    for r in order {
        let mut by_parent: Vec<(usize, Vec<(u64, u64)>)> = Vec::new();
        for &(s, e) in &r.ranges {
            let want = i64::from(r.level) - 1;
            let parent = nodes
                .iter()
                .rposition(|(l, n, _, _)| *l == want && n.contains_range(s, e))
                .or_else(|| nodes.iter().rposition(|(l, _, _, _)| *l == want))
                .unwrap_or(0);
            match by_parent.iter_mut().find(|(p, _)| *p == parent) {
                Some((_, v)) => insert_range(v, s, e),
                None => {
                    let mut v = Vec::new();
                    insert_range(&mut v, s, e);
                    by_parent.push((parent, v));
                }
            }
        }
        // An empty range list would read back as the end of the siblings.
        for (parent, ranges) in by_parent.into_iter().filter(|(_, r)| !r.is_empty()) {
            let call_file = r
                .call_file
                .unwrap_or_else(|| nodes.get(parent).map_or(0, |n| n.3));
            nodes.push((
                i64::from(r.level),
                InlineNode {
                    ranges,
                    name: r.name,
                    call_file,
                    call_line: r.call_line,
                    children: Vec::new(),
                },
                parent,
                r.origin_file,
            ));
        }
    }
    // Attach children to parents, deepest first so each parent receives
    // its complete subtree (children always come after their parent);
    // siblings end up in address order.
    let mut slots: Vec<Option<InlineNode>> =
        nodes.iter().map(|(_, n, _, _)| Some(n.clone())).collect();
    for i in (1..nodes.len()).rev() {
        let parent = nodes[i].2;
        if let Some(mut child) = slots[i].take()
            && let Some(Some(p)) = slots.get_mut(parent)
        {
            child
                .children
                .sort_by_key(|c| c.ranges.first().map_or(0, |r| r.0));
            p.children.push(child);
        }
    }
    let mut root = slots.into_iter().next().flatten()?;
    root.children
        .sort_by_key(|c| c.ranges.first().map_or(0, |r| r.0));
    (!root.children.is_empty()).then_some(root)
}

/// Fills `b` from a Breakpad `.sym` file: FUNC records with their line
/// and INLINE records, and PUBLIC records. The UUID is the code ID (the
/// full build ID) when present, else the debug ID turned back into the
/// build ID's first 16 bytes.
///
/// The records are read by the store's reader ([`Records`]), in both forms
/// dump_syms has written for inlining: the older
/// `INLINE_ORIGIN <id> <file> <name>` and `INLINE` without the call-site
/// file, whose call file is then found as the Breakpad resolver finds it;
/// an old-form file gives the GSYM of its current-form original. Where the
/// store skips a corrupt line, a conversion refuses the file naming the
/// line; it keeps every record, and adds names and files to the GSYM
/// string and file tables in file order (which fixes the output bytes).
///
/// Breakpad addresses are relative to the module's lowest load address;
/// `image_base` (the first `PT_LOAD`'s `p_vaddr`, 0 for PIE and shared
/// objects) is added to give the ELF virtual addresses lookups use.
pub fn from_breakpad(
    text: &[u8],
    image_base: u64,
    b: &mut GsymBuilder,
) -> Result<ConvertStats, ConvertError> {
    let form = OriginForm::of_file(text);
    let mut records = Records::new(text)?;
    let lossy = |span: Span| String::from_utf8_lossy(span.bytes(text));
    let mut files: HashMap<u32, u32> = HashMap::new();
    // Name, and the file of the inlined function (old form; a FILE number).
    let mut origins: HashMap<u32, (u64, u32)> = HashMap::new();
    // Each FUNC with its INLINE records and the sizes of its line records.
    let mut funcs: Vec<(FunctionInfo, Vec<InlineRec>, Vec<u64>)> = Vec::new();
    let mut publics: Vec<(u64, u64)> = Vec::new();
    let uuid = build_id_prefix(records.module().debug_id.bytes(text));
    let mut code_id: Option<Vec<u8>> = None;
    let mut stats = ConvertStats::default();
    while let Some((line, record)) = records.next() {
        let record = record.map_err(|reason| ConvertError::Breakpad { line, reason })?;
        match record {
            Record::CodeId(id) => code_id = BuildId::from_hex(&lossy(id)).map(|b| b.0),
            Record::File { id, path } => {
                let idx = b.insert_file(&lossy(path));
                files.insert(id, idx);
            }
            Record::InlineOrigin(rec) => {
                let origin = rec.origin(form);
                let name = b.insert_string(lossy(origin.name).as_bytes());
                origins.insert(origin.id, (name, origin.file));
            }
            Record::Func {
                address,
                size,
                name,
            } => {
                let start = address.wrapping_add(image_base);
                let f = FunctionInfo {
                    start,
                    end: start.saturating_add(size),
                    name: b.insert_string(lossy(name).as_bytes()),
                    lines: None,
                    inline: None,
                };
                funcs.push((f, Vec::new(), Vec::new()));
            }
            Record::Inline(rec) => {
                if rec.depth > MAX_BREAKPAD_INLINE_LEVEL {
                    continue;
                }
                let ranges = records
                    .inline_ranges()
                    .get(rec.first_range as usize..rec.end_range as usize)
                    .unwrap_or_default()
                    .iter()
                    .map(|&(a, n)| {
                        let a = a.wrapping_add(image_base);
                        (a, a.saturating_add(n))
                    })
                    .collect();
                if let Some((_, recs, _)) = funcs.last_mut() {
                    let file = |n: u32| match n {
                        NO_FILE => 0,
                        n => files.get(&n).copied().unwrap_or(0),
                    };
                    let (name, origin_file) =
                        origins.get(&rec.origin).copied().unwrap_or((0, NO_FILE));
                    recs.push(InlineRec {
                        level: rec.depth,
                        call_line: rec.call_line,
                        call_file: rec.has_call_file.then(|| file(rec.call_file)),
                        name,
                        origin_file: file(origin_file),
                        ranges,
                    });
                }
            }
            Record::Public(p) => {
                let name = b.insert_string(lossy(p.name).as_bytes());
                publics.push((p.address.wrapping_add(image_base), name));
            }
            Record::Line(l) => {
                if let Some((f, _, sizes)) = funcs.last_mut() {
                    // Breakpad answers with the line and no file name.
                    let file = match files.get(&l.file) {
                        Some(&f) => f,
                        None => b.unnamed_file(),
                    };
                    sizes.push(l.size);
                    f.lines.get_or_insert_with(Vec::new).push(LineEntry {
                        addr: l.address.wrapping_add(image_base),
                        file,
                        line: l.line,
                    });
                }
            }
            Record::Other => {}
        }
    }
    if let Some(id) = code_id.or(uuid) {
        b.set_uuid(&id);
    }
    let funcs_ranges: Vec<(u64, u64)> = funcs.iter().map(|(f, ..)| (f.start, f.end)).collect();
    for (mut f, recs, sizes) in funcs {
        // Before the lines are cut to the function and merged.
        let own_file = if recs.iter().any(|r| r.call_file.is_none()) {
            old_form_call_file(f.lines.as_deref().unwrap_or_default(), &sizes, &recs)
        } else {
            0
        };
        if let Some(lines) = f.lines.as_mut() {
            lines.sort_by_key(|l| l.addr);
            lines.retain(|l| f.start <= l.addr && l.addr < f.end);
            lines.dedup_by(|b, a| a.file == b.file && a.line == b.line);
            if lines.is_empty() {
                f.lines = None;
            }
        }
        f.inline = breakpad_inline_tree(&f, &recs, own_file);
        b.add_function(f);
        stats.from_debug_info += 1;
    }
    // Breakpad takes a PUBLIC only where no FUNC covers the address.
    let mut covered: Vec<(u64, u64)> = funcs_ranges;
    covered.sort_unstable();
    let mut reach = 0;
    for r in &mut covered {
        reach = reach.max(r.1);
        r.1 = reach;
    }
    let in_func = |a: u64| {
        let i = covered.partition_point(|r| r.0 <= a);
        i > 0 && a < covered[i - 1].1
    };
    for (addr, name) in publics {
        if in_func(addr) {
            continue;
        }
        b.add_function(FunctionInfo {
            start: addr,
            end: addr,
            name,
            lines: None,
            inline: None,
        });
        stats.from_symbols += 1;
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gsym::parser::{GsymView, Layout};

    use crate::gsym::writer::EncodeOptions;

    const SYM: &str = "MODULE Linux x86_64 0A0162BCF65D8ACC5BE5FE9C025165F60 t\n\
        INFO CODE_ID BC62010A5DF6CC8A5BE5FE9C025165F67F1BDDD6\n\
        FILE 0 /src/a.c\n\
        FILE 1 /src/b.h\n\
        INLINE_ORIGIN 0 inner\n\
        INLINE_ORIGIN 1 empty\n\
        FUNC 1000 40 0 outer_fn\n\
        INLINE 0 7 0 1 1008 0\n\
        INLINE 0 9 0 0 1010 10\n\
        1000 10 5 0\n\
        1010 10 20 1\n\
        1020 20 10 0\n\
        PUBLIC 2000 0 after\n";

    fn lookup(addr: u64) -> Vec<(String, String, u32)> {
        lookup_in(SYM, addr)
    }

    fn convert(sym: &str) -> Vec<u8> {
        let mut b = GsymBuilder::new();
        from_breakpad(sym.as_bytes(), 0x40_0000, &mut b).unwrap();
        b.finalize();
        b.encode(&EncodeOptions::default()).unwrap()
    }

    fn lookup_in(sym: &str, addr: u64) -> Vec<(String, String, u32)> {
        let mut b = GsymBuilder::new();
        from_breakpad(sym.as_bytes(), 0x40_0000, &mut b).unwrap();
        b.finalize();
        let bytes = b.encode(&EncodeOptions::default()).unwrap();
        let layout = Layout::parse(&bytes).unwrap();
        assert_eq!(
            GsymView::new(&bytes, &layout).uuid(),
            BuildId::from_hex("bc62010a5df6cc8a5be5fe9c025165f67f1bddd6")
                .unwrap()
                .0
        );
        let r = GsymView::new(&bytes, &layout).lookup(addr).unwrap();
        r.locations
            .into_iter()
            .map(|l| (l.name.clone(), l.path().unwrap_or_default(), l.line))
            .collect()
    }

    #[test]
    fn breakpad_records_become_functions_lines_and_inlines() {
        let s = |n: &str, f: &str, l| (n.to_string(), f.to_string(), l);
        assert_eq!(lookup(0x40_1004), vec![s("outer_fn", "/src/a.c", 5)]);
        // The zero-size INLINE is dropped; its sibling still works.
        assert_eq!(
            lookup(0x40_1014),
            vec![s("inner", "/src/b.h", 20), s("outer_fn", "/src/a.c", 9)]
        );
        assert_eq!(lookup(0x40_1030), vec![s("outer_fn", "/src/a.c", 10)]);
        assert_eq!(lookup(0x40_2004)[0].0, "after");
    }

    #[test]
    fn breakpad_errors_name_the_line() {
        let mut b = GsymBuilder::new();
        let e =
            from_breakpad(b"MODULE Linux x86_64 00 t\nFUNC zz 10 0 f\n", 0, &mut b).unwrap_err();
        assert_eq!(e.to_string(), "line 2: bad FUNC address");
    }

    /// [`SYM`] in the old record forms, with a nested inline record: the
    /// call file of a depth-0 record is the function's own (the first line
    /// record no inline range covers), that of a deeper one the file its
    /// parent's origin names.
    const NESTED: &str = "MODULE Linux x86_64 0A0162BCF65D8ACC5BE5FE9C025165F60 t\n\
        INFO CODE_ID BC62010A5DF6CC8A5BE5FE9C025165F67F1BDDD6\n\
        FILE 0 /src/a.c\n\
        FILE 1 /src/b.h\n\
        FILE 2 /src/c.h\n\
        INLINE_ORIGIN 0 inner\n\
        INLINE_ORIGIN 1 deeper\n\
        FUNC 1000 40 0 outer_fn\n\
        INLINE 0 9 0 0 1010 10\n\
        INLINE 1 4 1 1 1014 4\n\
        1010 4 20 1\n\
        1014 4 30 2\n\
        1018 8 21 1\n\
        1000 10 5 0\n\
        1020 20 10 0\n";

    const NESTED_OLD: &str = "MODULE Linux x86_64 0A0162BCF65D8ACC5BE5FE9C025165F60 t\n\
        INFO CODE_ID BC62010A5DF6CC8A5BE5FE9C025165F67F1BDDD6\n\
        FILE 0 /src/a.c\n\
        FILE 1 /src/b.h\n\
        FILE 2 /src/c.h\n\
        INLINE_ORIGIN 0 1 inner\n\
        INLINE_ORIGIN 1 2 deeper\n\
        FUNC 1000 40 0 outer_fn\n\
        INLINE 0 9 0 1010 10\n\
        INLINE 1 4 1 1014 4\n\
        1010 4 20 1\n\
        1014 4 30 2\n\
        1018 8 21 1\n\
        1000 10 5 0\n\
        1020 20 10 0\n";

    #[test]
    fn old_record_forms_give_the_current_forms_gsym() {
        let s = |n: &str, f: &str, l| (n.to_string(), f.to_string(), l);
        assert_eq!(
            lookup_in(NESTED_OLD, 0x40_1015),
            vec![
                s("deeper", "/src/c.h", 30),
                s("inner", "/src/b.h", 4),
                s("outer_fn", "/src/a.c", 9)
            ]
        );
        assert!(convert(NESTED_OLD) == convert(NESTED));
        // Only the INLINE records in the old form, or only the origins.
        let half = NESTED.replace("INLINE 0 9 0 0 ", "INLINE 0 9 0 ");
        assert!(convert(&half) == convert(NESTED));
        let half = NESTED_OLD.replace("INLINE 0 9 0 ", "INLINE 0 9 0 0 ");
        assert!(convert(&half) == convert(NESTED));
    }

    #[test]
    fn origin_form_is_decided_for_the_whole_file() {
        // Current form, one name that starts with a number and a space:
        // the name stays whole.
        let sym = SYM.replace("INLINE_ORIGIN 0 inner", "INLINE_ORIGIN 0 2 inner");
        assert_eq!(lookup_in(&sym, 0x40_1014)[0].0, "2 inner");
        // Old form (two of three), one origin without a file number: its
        // name stays whole.
        let sym = NESTED_OLD.replace(
            "INLINE_ORIGIN 1 2 deeper\n",
            "INLINE_ORIGIN 1 deeper\nINLINE_ORIGIN 2 0 unused\n",
        );
        let frames = lookup_in(&sym, 0x40_1015);
        assert_eq!(frames[0].0, "deeper", "{frames:?}");
        assert_eq!(frames.len(), 3);
        // A tie is the current form: `1 inner` is then a name, the origins
        // name no files, and GSYM lookups skip call sites without a file
        // (as LLVM's do).
        let sym = NESTED_OLD.replace("INLINE_ORIGIN 1 2 deeper", "INLINE_ORIGIN 1 deeper");
        let frames = lookup_in(&sym, 0x40_1015);
        assert_eq!(frames[0].0, "1 inner", "{frames:?}");
        // `-1` names no file, as an unknown file number does.
        let none = NESTED_OLD.replace("INLINE_ORIGIN 0 1 inner", "INLINE_ORIGIN 0 -1 inner");
        let unknown = NESTED_OLD.replace("INLINE_ORIGIN 0 1 inner", "INLINE_ORIGIN 0 7 inner");
        assert!(convert(&none) == convert(&unknown));
        assert!(convert(&none) != convert(NESTED_OLD));
    }

    #[test]
    fn short_inline_records_are_refused() {
        // (`INLINE 0 9 0 0 1010`, a current-form record without its last
        // size, reads as an old-form one, as in Breakpad's processor.)
        for (rec, reason) in [
            ("INLINE 0 9 0 1010", "INLINE record without ranges"),
            ("INLINE 0 9 0", "INLINE record without ranges"),
            ("INLINE 0 9", "bad INLINE call file"),
        ] {
            let sym = NESTED.replace("INLINE 0 9 0 0 1010 10", rec);
            let mut b = GsymBuilder::new();
            let e = from_breakpad(sym.as_bytes(), 0, &mut b).unwrap_err();
            assert_eq!(e.to_string(), format!("line 9: {reason}"), "{rec}");
        }
    }

    /// A conversion refuses a file at the first line the store skips as
    /// corrupt, for the store's reason.
    #[test]
    fn refuses_what_the_store_skips() {
        for (from, to) in [
            ("FUNC 1000 40 0 outer_fn", "FUNC 1000 40 0"),
            ("FILE 2 /src/c.h", "FILE two /src/c.h"),
            ("1014 4 30 2", "1014 4 30 2 9"),
            ("INLINE 1 4 1 1 1014 4", "INLINE 1 4 1 1 1014 zz"),
            ("INLINE_ORIGIN 1 deeper", "INLINE_ORIGIN x deeper"),
            ("1020 20 10 0", "1020 20 10 0\nPUBLIC 2000 0 p\n2000 4 1 0"),
        ] {
            let sym = NESTED.replace(from, to);
            assert_ne!(sym, NESTED);
            let store = crate::breakpad::parser::parse(sym.as_bytes()).unwrap();
            let c = store.corruption;
            assert!(c.count > 0, "{to}");
            let mut b = GsymBuilder::new();
            let e = from_breakpad(sym.as_bytes(), 0, &mut b).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("line {}: {}", c.first_line, c.first_reason)
            );
        }
    }

    proptest::proptest! {
        /// Hostile mixtures of the record forms: never a panic, and what
        /// converts encodes and reads back.
        #[test]
        fn mixed_record_forms_never_panic(
            recs in proptest::collection::vec(
                (0u64..4, 0u64..300, proptest::option::of(0u64..5), 0u64..4,
                 proptest::collection::vec((0x0fe0u64..0x1060, 0u64..0x40), 1..4)),
                0..12),
            origins in proptest::collection::vec((0u64..4, proptest::option::of(-1i64..5)), 0..6),
            lines in proptest::collection::vec((0x0ff0u64..0x1050, 0u64..0x20, 0u32..50, 0u64..5), 0..20),
        ) {
            let mut sym = String::from(
                "MODULE Linux x86_64 0A0162BCF65D8ACC5BE5FE9C025165F60 t\n\
                 FILE 0 /src/a.c\nFILE 1 /src/b.h\nFILE 2 /src/c.h\n",
            );
            for (id, file) in &origins {
                match file {
                    Some(f) => sym.push_str(&format!("INLINE_ORIGIN {id} {f} o{id}\n")),
                    None => sym.push_str(&format!("INLINE_ORIGIN {id} o{id}\n")),
                }
            }
            sym.push_str("FUNC 1000 40 0 f\n");
            for (level, line, file, origin, ranges) in &recs {
                let mut r = format!("INLINE {level} {line} ");
                if let Some(file) = file {
                    r.push_str(&format!("{file} "));
                }
                r.push_str(&origin.to_string());
                for (a, n) in ranges {
                    r.push_str(&format!(" {a:x} {n:x}"));
                }
                sym.push_str(&r);
                sym.push('\n');
            }
            for (a, n, l, f) in &lines {
                sym.push_str(&format!("{a:x} {n:x} {l} {f}\n"));
            }
            let mut b = GsymBuilder::new();
            if from_breakpad(sym.as_bytes(), 0, &mut b).is_ok() {
                b.finalize();
                let bytes = b.encode(&EncodeOptions::default());
                proptest::prop_assert!(bytes.is_ok());
                let bytes = bytes.unwrap_or_default();
                let layout = Layout::parse(&bytes);
                proptest::prop_assert!(layout.is_ok());
                if let Ok(layout) = layout {
                    for a in (0xfe0..0x1060).step_by(3) {
                        let _ = GsymView::new(&bytes, &layout).lookup(a);
                    }
                }
            }
        }
    }
}
