//! GSYM functions from an ELF file's DWARF and symbol table.
//!
//! The conversion follows what `llvm-gsymutil --convert` does
//! (`DwarfTransformer` + `ObjectFileTransformer`): one FunctionInfo per
//! subprogram range, named by linkage name (or the qualified name for
//! C/C++), a per-function line table cut from the unit's line program,
//! and the tree of inlined subroutines; then every `STT_FUNC` symbol.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use gimli::{AttributeValue, DwAt, EndianSlice, constants};
use object::{Object, ObjectSection, ObjectSegment, SectionKind};

use super::dies::{Dies, Others, R, Tree};
use super::writer::{FunctionInfo, GsymBuilder, InlineNode, LineEntry, insert_range};
use super::{ConvertError, ConvertStats};
use crate::base::Stash;
use crate::dwarf::{DwarfIndex, SplitFiles};
use crate::elf::symtab::{Table, elf_symbols};
use crate::elf::{dwo_dwarf, dwo_paths, endian_of};

/// `.dwo` files where the skeleton names them (see [`dwo_paths`]; the
/// input's folder is where the module's files are), read into `arena`
/// and loaded as the ELF source loads them.
struct DwoFiles<'d> {
    input_dir: Option<&'d Path>,
    arena: &'d Stash<Vec<u8>>,
}

impl<'d> SplitFiles<'d> for DwoFiles<'d> {
    fn offer(
        &self,
        name: &[u8],
        comp_dir: Option<&[u8]>,
        take: &mut dyn FnMut(gimli::Dwarf<R<'d>>) -> bool,
    ) {
        for path in dwo_paths(name, comp_dir, self.input_dir) {
            let Ok(bytes) = std::fs::read(path) else {
                continue;
            };
            let bytes: &'d [u8] = self.arena.put(bytes);
            let Ok(obj) = object::File::parse(bytes) else {
                continue;
            };
            if let Some(dwarf) = dwo_dwarf(self.arena, &obj)
                && take(dwarf)
            {
                return;
            }
        }
    }
}

/// The DWARF sections of `obj` (decompressed where they are compressed)
/// under the names `name` gives them; a missing or unreadable section is
/// empty.
fn dwarf_sections<'d>(
    obj: &object::File<'d>,
    name: impl Fn(gimli::SectionId) -> Option<&'static str>,
) -> gimli::Result<gimli::DwarfSections<Cow<'d, [u8]>>> {
    gimli::DwarfSections::load(|id| -> gimli::Result<Cow<'d, [u8]>> {
        Ok(match name(id).and_then(|n| obj.section_by_name(n)) {
            Some(s) => s.uncompressed_data().unwrap_or(Cow::Borrowed(&[])),
            None => Cow::Borrowed(&[]),
        })
    })
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
    let endian = endian_of(&obj);
    let sections = dwarf_sections(&obj, |id| Some(id.name()))?;
    let dwarf = sections.borrow(|s| EndianSlice::new(s, endian));
    let mut stats = ConvertStats {
        dwarf_bytes,
        ..ConvertStats::default()
    };
    let before = b.num_functions();
    let index = DwarfIndex::new(dwarf, None);
    let dwo_bytes = Stash::default();
    let files = DwoFiles {
        input_dir,
        arena: &dwo_bytes,
    };
    let arena = typed_arena::Arena::new();
    let others = Others::new(index.dwarf(), &arena);
    for code in index.code_units(&files) {
        let f = code.functions;
        let Ok(unit) =
            gimli::Unit::new_with_abbreviations(f.dwarf, f.header, f.abbreviations.clone())
        else {
            continue;
        };
        // A unit that fails half way keeps what it converted.
        if code.is_split() {
            let mut unit = unit;
            unit.copy_relocated_attributes(code.lines.unit);
            let arena = typed_arena::Arena::new();
            let others = Others::new(f.dwarf, &arena);
            let skeleton = (code.lines.dwarf, code.lines.unit);
            let _ = convert_unit(f.dwarf, unit, Some(&others), Some(skeleton), b);
        } else if code.lines.dwo_id.is_none() {
            let _ = convert_unit(f.dwarf, unit, Some(&others), None, b);
        }
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
