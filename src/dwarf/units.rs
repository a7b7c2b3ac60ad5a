//! Which units cover an address, and where a `.debug_info` offset lies.
//!
//! One pass over the unit headers reads each unit's address ranges from
//! its root DIE or `.debug_aranges` (cheap), and only for a unit declaring
//! none, from its line program's sequences. Units are tried for an address in
//! the order addr2line tries them (by range end, then unit), so that
//! overlapping units give the same answers. Partial units (dwz) are kept
//! for references into them, without ranges; type units are left out.

use std::sync::Arc;

use gimli::Reader;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::Sure;
use super::functions::RangeAttrs;
use super::line_program::{self, Row, RowSink};
use super::lines::file_parts;
use super::root_abbrev::RootAbbreviations;
use crate::base::search;

use super::Reader as R;

/// Real code nests a few dozen levels (inlining chains, lexical blocks);
/// a unit nested deeper is refused, as LLVM's stack would refuse it.
pub const MAX_DEPTH: isize = 1024;

/// A unit's range, with the lowest begin of it and all after it in
/// search order.
struct EndRange {
    begin: u64,
    end: u64,
    unit: usize,
    min_begin: u64,
}

/// The units of one file's `.debug_info` and the ranges they cover.
pub(crate) struct UnitIndex<'a> {
    debug_info: gimli::DebugInfo<R<'a>>,
    /// Where the compile, skeleton and partial units start, in section
    /// order (their headers are read again when needed: a file of many
    /// tiny units costs a word per unit).
    starts: Vec<usize>,
    /// Sorted by end, then unit.
    by_end: Vec<EndRange>,
    /// `by_end`'s ends alone: the binary search of every lookup reads a
    /// quarter of the bytes.
    ends: Vec<u64>,
    /// The units that declare no ranges, whose ranges (if any) are their
    /// line programs' sequences, ascending.
    undeclared: Vec<usize>,
}

impl<'a> UnitIndex<'a> {
    pub(crate) fn build(dwarf: &gimli::Dwarf<R<'a>>) -> UnitIndex<'a> {
        let mut aranges: Vec<(usize, gimli::DebugArangesOffset<usize>)> = Vec::new();
        let mut arange_headers = dwarf.debug_aranges.headers();
        while let Ok(Some(h)) = arange_headers.next() {
            aranges.push((h.debug_info_offset().0, h.offset()));
        }
        aranges.sort_unstable_by_key(|a| a.0);
        let mut starts = Vec::new();
        let mut by_end = Vec::new();
        let mut undeclared = Vec::new();
        let mut found: Vec<gimli::Range> = Vec::new();
        let mut roots = RootAbbreviations::default();
        let mut iter = dwarf.units();
        // A unit header that cannot be read ends the list, as in gimli.
        while let Ok(Some(header)) = iter.next() {
            match header.type_() {
                gimli::UnitType::Type { .. } | gimli::UnitType::SplitType { .. } => continue,
                gimli::UnitType::Partial => {
                    starts.extend(header.debug_info_offset().map(|o| o.0));
                    continue;
                }
                _ => {}
            }
            let Some(start) = header.debug_info_offset() else {
                continue;
            };
            let unit = starts.len();
            found.clear();
            // Ranges that cannot be read are left out (those of a list
            // read before its error are kept; a line program gives none
            // unless read whole): a broken unit answers nothing rather
            // than claiming every address.
            if let Ok(false) = unit_ranges(dwarf, &mut roots, &header, &aranges, &mut found) {
                undeclared.push(unit);
            }
            by_end.extend(found.iter().filter(|r| r.begin < r.end).map(|r| EndRange {
                begin: r.begin,
                end: r.end,
                unit,
                min_begin: 0,
            }));
            starts.push(start.0);
        }
        // Ranges come in unit order, so a stable sort by end alone orders
        // them by end, then unit; and it runs through the ascending runs
        // that units' ranges mostly come in.
        by_end.sort_by_key(|r| r.end);
        let mut min = u64::MAX;
        for r in by_end.iter_mut().rev() {
            min = min.min(r.begin);
            r.min_begin = min;
        }
        by_end.shrink_to_fit();
        let ends = by_end.iter().map(|r| r.end).collect();
        starts.shrink_to_fit();
        UnitIndex {
            debug_info: dwarf.debug_info,
            starts,
            by_end,
            ends,
            undeclared,
        }
    }

    /// Every range of every unit: (unit, begin, end), in no order.
    pub(crate) fn ranges(&self) -> impl Iterator<Item = (usize, u64, u64)> + '_ {
        self.by_end.iter().map(|r| (r.unit, r.begin, r.end))
    }

    /// Whether unit `index` declares no ranges (its ranges, if any, are its
    /// line program's sequences).
    pub(crate) fn undeclared(&self, index: usize) -> bool {
        self.undeclared.binary_search(&index).is_ok()
    }

    /// The units whose ranges cover `addr`, by index, in search order (a
    /// unit may come twice).
    pub(crate) fn covering(&self, addr: u64) -> impl Iterator<Item = usize> + '_ {
        // The first range ending after `addr`; none after one whose
        // remaining ranges all begin above it.
        let first = search::partition_point(&self.ends, |&end| end <= addr);
        self.by_end[first..]
            .iter()
            .take_while(move |r| addr >= r.min_begin)
            .filter(move |r| r.begin <= addr && addr < r.end)
            .map(|r| r.unit)
    }

    /// The header of unit `index`.
    pub(crate) fn header(&self, index: usize) -> gimli::Result<gimli::UnitHeader<R<'a>>> {
        let start = self
            .starts
            .get(index)
            .ok_or(gimli::Error::NoEntryAtGivenOffset(index as u64))?;
        self.debug_info
            .header_from_offset(gimli::DebugInfoOffset(*start))
    }

    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }

    /// The unit starting at `offset` in `.debug_info`.
    pub(crate) fn unit_starting_at(&self, offset: usize) -> Option<usize> {
        self.starts.binary_search(&offset).ok()
    }

    /// The unit a `.debug_info` reference lands in: the last one starting
    /// before `offset`.
    pub(crate) fn unit_at(&self, offset: usize) -> Option<usize> {
        match self.starts.binary_search(&offset) {
            Ok(_) | Err(0) => None,
            Err(i) => Some(i - 1),
        }
    }
}

/// Abbreviation sets by offset, parsed once each: units share them (LLVM
/// writes one set per object file, for all the units in it).
#[derive(Default)]
pub(crate) struct AbbreviationSets {
    sets: FxHashMap<usize, Arc<gimli::Abbreviations>>,
}

impl AbbreviationSets {
    /// The unit of `header`, its abbreviations shared with the units
    /// parsed before.
    pub(crate) fn unit<'a>(
        &mut self,
        dwarf: &gimli::Dwarf<R<'a>>,
        header: gimli::UnitHeader<R<'a>>,
    ) -> gimli::Result<gimli::Unit<R<'a>>> {
        let offset = header.debug_abbrev_offset();
        let abbreviations = match self.sets.get(&offset.0) {
            Some(a) => a.clone(),
            None => {
                let a = Arc::new(dwarf.debug_abbrev.abbreviations(offset)?);
                self.sets.insert(offset.0, a.clone());
                a
            }
        };
        gimli::Unit::new_with_abbreviations(dwarf, header, abbreviations)
    }
}

#[cfg(test)]
impl UnitIndex<'_> {
    /// The `.debug_info` offsets of the units covering `addr`.
    fn candidates(&self, addr: u64) -> Vec<usize> {
        let mut out: Vec<usize> = self.covering(addr).map(|u| self.starts[u]).collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Add the ranges a unit declares to `out`, by addr2line's preference:
/// `DW_AT_ranges` of the root DIE, else its `.debug_aranges` entries, else
/// the root's low/high pc, each attribute taken as addr2line takes it;
/// where it declares none, its line program's sequences. Reads only the
/// root DIE's attributes. Whether the unit declares ranges; an error means
/// the ranges are unknown.
fn unit_ranges<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    roots: &mut RootAbbreviations,
    header: &gimli::UnitHeader<R<'a>>,
    aranges: &[(usize, gimli::DebugArangesOffset<usize>)],
    out: &mut Vec<gimli::Range>,
) -> Sure<bool> {
    use gimli::AttributeValue as V;
    let abbreviations = roots.get(dwarf, header)?;
    let mut low = None;
    let mut range_attrs: SmallVec<[gimli::Attribute<R<'a>>; 4]> = SmallVec::new();
    let mut stmt_list = None;
    let mut addr_base = None;
    let mut rnglists_base = None;
    let mut str_offsets_base = None;
    {
        let mut entries = header.entries_raw(&abbreviations, None)?;
        // No root DIE: addr2line skips the unit.
        let Some(abbrev) = entries.read_abbreviation()? else {
            return Ok(true);
        };
        for spec in abbrev.attributes() {
            let attr = entries.read_attribute(*spec)?;
            match attr.name() {
                gimli::DW_AT_low_pc => {
                    low = Some(attr.value());
                    range_attrs.push(attr);
                }
                gimli::DW_AT_high_pc | gimli::DW_AT_ranges => range_attrs.push(attr),
                gimli::DW_AT_stmt_list => {
                    if let V::DebugLineRef(o) = attr.value() {
                        stmt_list = Some(o);
                    }
                }
                gimli::DW_AT_addr_base | gimli::DW_AT_GNU_addr_base => {
                    if let V::DebugAddrBase(b) = attr.value() {
                        addr_base = Some(b);
                    }
                }
                gimli::DW_AT_rnglists_base | gimli::DW_AT_GNU_ranges_base => {
                    if let V::DebugRngListsBase(b) = attr.value() {
                        rnglists_base = Some(b);
                    }
                }
                gimli::DW_AT_str_offsets_base => {
                    if let V::DebugStrOffsetsBase(b) = attr.value() {
                        str_offsets_base = Some(b);
                    }
                }
                _ => {}
            }
        }
    }
    // A unit without its line program, enough to read ranges and addresses
    // the way gimli's own `Unit::new` sets them up.
    let encoding = header.encoding();
    let mut unit = gimli::Unit {
        header: *header,
        abbreviations,
        name: None,
        comp_dir: None,
        low_pc: 0,
        str_offsets_base: str_offsets_base.unwrap_or_else(|| {
            gimli::DebugStrOffsetsBase::default_for_encoding_and_file(encoding, dwarf.file_type)
        }),
        addr_base: addr_base.unwrap_or(gimli::DebugAddrBase(0)),
        loclists_base: gimli::DebugLocListsBase::default_for_encoding_and_file(
            encoding,
            dwarf.file_type,
        ),
        rnglists_base: rnglists_base.unwrap_or_else(|| {
            gimli::DebugRngListsBase::default_for_encoding_and_file(encoding, dwarf.file_type)
        }),
        line_program: None,
        dwo_id: None,
    };
    // The base of range lists: the last low pc of any form, as in gimli.
    if let Some(v) = low
        && let Some(low) = dwarf.attr_address(&unit, v)?
    {
        unit.low_pc = low;
    }
    // The range attributes once every base is known, as addr2line reads
    // them from a whole unit.
    let unit_ref = gimli::UnitRef::new(dwarf, &unit);
    let mut attrs = RangeAttrs::default();
    for attr in &range_attrs {
        attrs.read(unit_ref, attr)?;
    }
    let mut declared = false;
    if attrs.has_list() {
        declared = attrs.each(unit_ref, |r| out.push(r))?;
    } else {
        if let Some(offset) = header.debug_info_offset() {
            let first = aranges.partition_point(|a| a.0 < offset.0);
            for (_, set) in aranges[first..].iter().take_while(|a| a.0 == offset.0) {
                let mut entries = dwarf.debug_aranges.header(*set)?.entries();
                // An entry that cannot be read is skipped, as addr2line
                // skips it (an address overflow); gimli ends the list on
                // the others.
                while let Some(e) = entries.next().transpose() {
                    if let Ok(e) = e
                        && e.length() != 0
                    {
                        declared = true;
                        out.push(e.range());
                    }
                }
            }
        }
        if !declared {
            declared = attrs.each(unit_ref, |r| out.push(r))?;
        }
    }
    if !declared && let Some(offset) = stmt_list {
        line_ranges(unit_ref, offset, out);
    }
    Ok(declared)
}

/// A line program's sequences (from the first row to the end), as
/// addr2line takes a unit's ranges when it declares none: none at all
/// where the program cannot be read to its end, or a file name in it
/// cannot be read.
fn line_ranges<'a>(
    unit: gimli::UnitRef<'_, R<'a>>,
    offset: gimli::DebugLineOffset<usize>,
    out: &mut Vec<gimli::Range>,
) {
    if program_is_empty(unit.dwarf, offset) {
        return;
    }
    let Ok(program) = unit
        .dwarf
        .debug_line
        .program(offset, unit.header.address_size(), None, None)
    else {
        return;
    };
    let before = out.len();
    let mut sequences = Sequences {
        start: None,
        out,
        before,
    };
    let read = line_program::read_all(&program, &mut sequences, |header| {
        Ok(names_read(unit, header))
    });
    if !matches!(read, Ok(true)) {
        out.truncate(before);
    }
}

/// Whether every file name of `header` (with its directory) can be read
/// ([`file_parts`], the strings a lookup makes paths of), as addr2line
/// reads them all before it takes a line table.
fn names_read<'a>(
    unit: gimli::UnitRef<'_, R<'a>>,
    header: &gimli::LineProgramHeader<R<'a>>,
) -> bool {
    let readable = |file: &gimli::FileEntry<R<'a>>| file_parts(unit, file, header).is_ok();
    header.file(0).is_none_or(readable) && (1..).map_while(|i| header.file(i)).all(readable)
}

/// Sequences from rows: each from its first row to its end, added to
/// `out` after its first `before` ranges.
struct Sequences<'o> {
    start: Option<u64>,
    out: &'o mut Vec<gimli::Range>,
    before: usize,
}

impl RowSink for Sequences<'_> {
    fn take(&mut self, row: Row) {
        if row.end_sequence {
            if let Some(begin) = self.start.take() {
                self.out.push(gimli::Range {
                    begin,
                    end: row.address,
                });
            }
        } else if self.start.is_none() {
            self.start = Some(row.address);
        }
    }

    fn restart(&mut self) {
        self.out.truncate(self.before);
        self.start = None;
    }
}

/// Whether the line program at `offset` has no opcodes after its header
/// (so no rows), read from the lengths alone: most units of a Rust binary
/// hold types only, and their headers (file tables) need not be parsed.
/// False when unsure.
fn program_is_empty(dwarf: &gimli::Dwarf<R<'_>>, offset: gimli::DebugLineOffset<usize>) -> bool {
    let mut input = *gimli::Section::reader(&dwarf.debug_line);
    let mut read = || -> gimli::Result<bool> {
        input.skip(offset.0)?;
        let (length, format) = input.read_initial_length()?;
        let mut rest = input.split(length)?;
        let version = rest.read_u16()?;
        if !(2..=5).contains(&version) {
            return Ok(false);
        }
        if version >= 5 {
            // address_size, segment_selector_size
            rest.skip(2)?;
        }
        let header_length = rest.read_length(format)?;
        Ok(rest.len() == header_length)
    };
    read().unwrap_or(false)
}

/// The deepest nesting seen, stopping early once past `limit`.
#[cfg(test)]
fn max_depth<T: Reader>(
    header: &gimli::UnitHeader<T>,
    abbrevs: &gimli::Abbreviations,
    limit: isize,
) -> isize {
    let Ok(input) = header.range_from(gimli::UnitOffset(header.header_size())..) else {
        return 0;
    };
    let Ok(bytes) = input.to_slice() else {
        return 0;
    };
    let mut walk = super::die_walk::DieWalk::new(header, abbrevs, &bytes, |_| false);
    let mut deepest: isize = 0;
    while walk.next_die().is_some() {
        deepest = deepest.max(walk.depth());
        if deepest > limit {
            return deepest;
        }
    }
    deepest.max(walk.depth())
}

/// The deepest nesting by gimli's own entry reader (the reference for tests).
#[cfg(test)]
fn max_depth_slow<T: Reader>(unit: &gimli::Unit<T>) -> isize {
    let Ok(mut entries) = unit.entries_raw(None) else {
        return 0;
    };
    let mut deepest = 0;
    while !entries.is_empty() {
        match entries.read_abbreviation() {
            Ok(Some(abbrev)) => {
                // The depth of the children of this entry.
                if abbrev.has_children() {
                    deepest = deepest.max(entries.next_depth());
                }
                if entries.skip_attributes(abbrev.attributes()).is_err() {
                    return deepest;
                }
            }
            Ok(None) => {}
            Err(_) => return deepest,
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dwarf::tests::{read, sections};
    use object::{Object, ObjectSection};

    fn check_file(path: &std::path::Path, dwo: bool) -> usize {
        let obj = object::File::parse(read(path).unwrap()).unwrap();
        let dwarf = sections(&obj, dwo);
        let mut units = dwarf.units();
        let mut n = 0;
        while let Some(header) = units.next().unwrap() {
            let unit = dwarf.unit(header).unwrap();
            let fast = max_depth(&unit.header, &unit.abbreviations, isize::MAX);
            assert_eq!(fast, max_depth_slow(&unit), "{} unit {n}", path.display());
            n += 1;
        }
        n
    }

    /// The result of an addr2line lookup that asks to load split units,
    /// with every such request answered "not found": the tests compare the
    /// guard with what a file's own sections say.
    fn without_loading<L: addr2line::LookupContinuation>(
        mut lookup: addr2line::LookupResult<L>,
    ) -> L::Output {
        loop {
            match lookup {
                addr2line::LookupResult::Output(r) => return r,
                addr2line::LookupResult::Load { continuation, .. } => {
                    lookup = continuation.resume(None)
                }
            }
        }
    }

    /// The fixtures of `testdata/elf/bin` with code and DWARF.
    const ELF_FIXTURES: [&str; 11] = [
        "c_O0",
        "c_O2",
        "c_nopie",
        "c_dwarf4",
        "c_gcc",
        "cpp_O2",
        "cpp_gmlt",
        "libprog.so",
        "c_stripped.debug",
        "split_dwo",
        "dwz_prog",
    ];

    /// Addresses worth asking about in a file: every line-table row, one
    /// before and after, and each unit's range ends.
    fn addresses(dwarf: &gimli::Dwarf<R<'_>>) -> Vec<u64> {
        let mut out = Vec::new();
        let mut units = dwarf.units();
        while let Ok(Some(header)) = units.next() {
            let Ok(unit) = dwarf.unit(header) else {
                continue;
            };
            if let Ok(mut ranges) = dwarf.unit_ranges(&unit) {
                while let Ok(Some(r)) = ranges.next() {
                    out.extend([r.begin, r.end.wrapping_sub(1), r.end]);
                }
            }
            if let Some(program) = unit.line_program.clone() {
                let mut rows = program.rows();
                while let Ok(Some((_, row))) = rows.next_row() {
                    let a = row.address();
                    out.extend([a.wrapping_sub(1), a, a + 1]);
                }
            }
        }
        // addr2line probes `[addr, addr + 1)`.
        out.retain(|&a| a < u64::MAX);
        out.sort_unstable();
        out.dedup();
        // A sample of big files (SYMFILTER_TEST_DWARF_FILE).
        let step = out.len() / 20_000 + 1;
        out.into_iter().step_by(step).collect()
    }

    /// On real files: every unit addr2line answers from is one the index
    /// gives for the address.
    #[test]
    fn index_covers_the_units_addr2line_searches() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files: Vec<std::path::PathBuf> = ELF_FIXTURES
            .iter()
            .map(|n| root.join("testdata/elf/bin").join(n))
            .collect();
        files.push(root.join("testdata/latency/bin/types_only"));
        if let Ok(entries) = std::fs::read_dir(root.join("testdata/bin")) {
            files.extend(entries.flatten().map(|e| e.path()));
        }
        if let Some(extra) = std::env::var_os("SYMFILTER_TEST_DWARF_FILE") {
            files.push(extra.into());
        }
        let (mut asked, mut found) = (0, 0);
        for path in &files {
            let obj = object::File::parse(read(path).unwrap()).unwrap();
            let dwarf = sections(&obj, false);
            let index = UnitIndex::build(&dwarf);
            let reference = addr2line::Context::from_dwarf(sections(&obj, false)).unwrap();
            for addr in addresses(&dwarf) {
                asked += 1;
                let unit = without_loading(reference.find_dwarf_and_unit(addr));
                if let Some(unit) = unit
                    && let Some(offset) = unit.header.debug_info_offset()
                {
                    found += 1;
                    assert!(
                        index.candidates(addr).contains(&offset.0),
                        "{} {addr:#x}: unit {:#x} not in the index",
                        path.display(),
                        offset.0
                    );
                }
            }
        }
        assert!(asked > 1000 && found > 500, "{asked} {found}");
    }

    /// An `.debug_aranges` entry whose end overflows is skipped and the
    /// entries after it still range the unit, as in addr2line.
    #[test]
    fn an_overflowing_arange_is_skipped() {
        let le = gimli::RunTimeEndian::Little;
        // One DWARF 4 unit whose root (code 1, a compile unit) has no attributes.
        let info: &'static [u8] = &[8, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8, 1];
        let abbrev: &'static [u8] = &[1, 0x11, 0, 0, 0, 0];
        let mut aranges = Vec::new();
        for (address, length) in [(u64::MAX - 0x20, 0x100u64), (0x1000, 0x10), (0, 0)] {
            aranges.extend_from_slice(&address.to_le_bytes());
            aranges.extend_from_slice(&length.to_le_bytes());
        }
        let mut section = Vec::new();
        section.extend_from_slice(&((2 + 4 + 2 + 4 + aranges.len()) as u32).to_le_bytes());
        section.extend_from_slice(&2u16.to_le_bytes());
        section.extend_from_slice(&0u32.to_le_bytes());
        section.extend([8, 0, 0, 0, 0, 0]);
        section.extend(aranges);
        let section: &'static [u8] = Box::leak(section.into_boxed_slice());
        let dwarf = gimli::Dwarf {
            debug_info: gimli::DebugInfo::new(info, le),
            debug_abbrev: gimli::DebugAbbrev::new(abbrev, le),
            debug_aranges: gimli::DebugAranges::new(section, le),
            ..Default::default()
        };
        // addr2line 0.27's `ResUnits::parse` reads on past an entry that
        // fails (its unit ranges are not public to compare with).
        let index = UnitIndex::build(&dwarf);
        assert_eq!(index.candidates(0x1008), [0]);
        assert!(index.candidates(0x1010).is_empty());
    }

    /// The index of one DWARF 4 unit whose root has only a
    /// `DW_AT_stmt_list` of 0, over `line` and `line_str`.
    fn ranged_by_line_program(line: &[u8], line_str: &[u8]) -> UnitIndex<'static> {
        let le = gimli::RunTimeEndian::Little;
        let leak = |b: &[u8]| -> &'static [u8] { Box::leak(b.to_vec().into_boxed_slice()) };
        let info = [12u8, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8, 1, 0, 0, 0, 0];
        // Code 1: a compile unit with DW_AT_stmt_list as a section offset.
        let abbrev = [1u8, 0x11, 0, 0x10, 0x17, 0, 0, 0];
        let dwarf = gimli::Dwarf {
            debug_info: gimli::DebugInfo::new(leak(&info), le),
            debug_abbrev: gimli::DebugAbbrev::new(leak(&abbrev), le),
            debug_line: gimli::DebugLine::new(leak(line), le),
            debug_line_str: gimli::DebugLineStr::new(leak(line_str), le),
            ..Default::default()
        };
        UnitIndex::build(&dwarf)
    }

    /// A line program: `header` (after `header_length`) and `program`.
    fn line_program(version: u16, header: &[u8], program: &[u8]) -> Vec<u8> {
        let prefix: &[u8] = if version >= 5 { &[8, 0] } else { &[] };
        let length = 2 + prefix.len() + 4 + header.len() + program.len();
        let mut l = Vec::new();
        l.extend_from_slice(&(length as u32).to_le_bytes());
        l.extend_from_slice(&version.to_le_bytes());
        l.extend_from_slice(prefix);
        l.extend_from_slice(&(header.len() as u32).to_le_bytes());
        l.extend_from_slice(header);
        l.extend_from_slice(program);
        l
    }

    /// Two sequences: 0x1000-0x1010, then 0x2000 opened and not ended.
    fn two_sequences() -> Vec<u8> {
        let mut program = vec![0, 9, 2];
        program.extend_from_slice(&0x1000u64.to_le_bytes());
        program.extend([1, 2, 0x10, 0, 1, 1]); // copy, advance_pc 16, end_sequence
        program.extend([0, 9, 2]);
        program.extend_from_slice(&0x2000u64.to_le_bytes());
        program.push(1);
        program
    }

    /// The fields every header here starts with, up to the opcode lengths.
    fn header_start() -> Vec<u8> {
        let mut header = vec![1, 1, 1, (-5i8) as u8, 14, 13];
        header.extend([0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1]);
        header
    }

    /// A unit ranged by its line program gets no ranges where the
    /// program fails after a whole sequence, as addr2line, which reads
    /// the whole table first, gets none.
    #[test]
    fn a_line_program_that_fails_ranges_nothing() {
        let mut header = header_start();
        header.push(0); // no directories
        header.extend(b"a.c\0\0\0\0\0");
        let program = two_sequences();
        let whole = ranged_by_line_program(&line_program(4, &header, &program), &[]);
        assert_eq!(whole.candidates(0x1008), [0]);
        assert!(whole.candidates(0x2000).is_empty());
        // The second sequence's set_address cut short.
        let cut = &program[..program.len() - 6];
        let cut = ranged_by_line_program(&line_program(4, &header, cut), &[]);
        assert!(cut.candidates(0x1008).is_empty());
    }

    /// Nor where a file name cannot be read (a `.debug_line_str` offset
    /// past its end), as addr2line renders every name first.
    #[test]
    fn a_line_program_naming_an_unreadable_file_ranges_nothing() {
        let names = |offset: u32| {
            let mut header = header_start();
            // Directories: DW_LNCT_path as a string; one, "/d".
            header.extend([1, 1, 0x08, 1]);
            header.extend(b"/d\0");
            // Files: DW_LNCT_path as line_strp, DW_LNCT_directory_index as udata.
            header.extend([2, 1, 0x1f, 2, 0x0f, 1]);
            header.extend_from_slice(&offset.to_le_bytes());
            header.push(0);
            line_program(5, &header, &two_sequences())
        };
        let readable = ranged_by_line_program(&names(0), b"a.c\0");
        assert_eq!(readable.candidates(0x1008), [0]);
        let unreadable = ranged_by_line_program(&names(100), b"a.c\0");
        assert!(unreadable.candidates(0x1008).is_empty());
    }

    /// 20,000 nested DIEs in a unit ranged by its line program, by
    /// `.debug_aranges` or by `DW_AT_ranges` (testdata/latency/build.sh):
    /// refused where the unit has code, symbol-table answers, no crash.
    #[test]
    fn hostile_nesting_is_refused_however_the_unit_is_ranged() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/latency/bin");
        for name in ["deep_lines", "deep_aranges", "deep_ranges"] {
            let path = dir.join(name);
            let obj = object::File::parse(read(&path).unwrap()).unwrap();
            let dwarf = sections(&obj, false);
            // `outer` is at 0x1140, `_start` at 0x1040 (outside every
            // range).
            let index = UnitIndex::build(&dwarf);
            assert!(!index.candidates(0x1150).is_empty(), "{name}");
            assert!(index.candidates(0x1040).is_empty(), "{name}");
            let source = crate::elf::open_file(&path, &[]).unwrap();
            let want = Default::default();
            let info = crate::symbols::SymbolSource::lookup_code(&source, 0x1150, want).unwrap();
            assert!(info.frames.is_empty(), "{name}");
            assert_eq!(&*info.symbol.unwrap().name, "outer", "{name}");
        }
    }

    #[test]
    fn fast_walk_agrees_with_gimli() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/elf/bin");
        let mut units = 0;
        for name in ELF_FIXTURES
            .iter()
            .chain(&["dwz_other", "dwz_common.debug"])
        {
            units += check_file(&dir.join(name), false);
        }
        units += check_file(&dir.join("split_dwo.dwo"), true);
        // The shared fixtures (C, C++, Rust).
        let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bin");
        if let Ok(entries) = std::fs::read_dir(shared) {
            for e in entries.flatten() {
                units += check_file(&e.path(), false);
            }
        }
        // Any other file (e.g. a large Rust binary) to compare on.
        if let Some(extra) = std::env::var_os("SYMFILTER_TEST_DWARF_FILE") {
            units += check_file(std::path::Path::new(&extra), false);
        }
        assert!(units >= 14, "{units}");
        // The hostile fixture is deep.
        let data = std::fs::read(dir.join("deep_dies")).unwrap();
        let obj = object::File::parse(&*data).unwrap();
        let info = obj.section_by_name(".debug_info").unwrap().data().unwrap();
        let abbrev = obj
            .section_by_name(".debug_abbrev")
            .unwrap()
            .data()
            .unwrap();
        let le = gimli::RunTimeEndian::Little;
        let info = gimli::DebugInfo::new(info, le);
        let abbrev = gimli::DebugAbbrev::new(abbrev, le);
        let header = info.units().next().unwrap().unwrap();
        let abbrevs = header.abbreviations(&abbrev).unwrap();
        assert_eq!(max_depth(&header, &abbrevs, isize::MAX), 20_002);
    }
}
