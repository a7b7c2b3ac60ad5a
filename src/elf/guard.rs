//! A guard against hostile DIE nesting.
//!
//! addr2line parses inlined subroutines recursively, one stack frame per
//! nesting level: 20 KB of nested `DW_TAG_inlined_subroutine` DIEs
//! overflow an 8 MB stack and abort the process. Before addr2line first
//! touches a unit, we walk that unit's DIEs iteratively (once, cached) and
//! refuse units nested deeper than [`MAX_DEPTH`]; addresses in them get
//! symbol-table answers only, with a reason.
//!
//! Which units addr2line may search for an address is decided by their
//! address ranges. One pass over the unit headers, before addr2line's
//! `Context` is made, reads each unit's ranges as addr2line does: from its
//! root DIE or `.debug_aranges` (cheap), and only for a unit declaring
//! none, from its line program's sequences. Those last ranges are handed to
//! addr2line as extra `.debug_aranges` sets, so it does not read those
//! line programs again. A unit whose ranges cannot be read is taken to
//! cover every address. Only the units covering an address asked for are
//! walked.

use std::cell::{Cell, OnceCell, RefCell};

use gimli::{Endianity, Reader};

use super::die_walk::DieWalk;
use super::root_abbrev::RootAbbreviations;

type R<'a> = gimli::EndianSlice<'a, gimli::RunTimeEndian>;

/// Where the `.debug_aranges` sets written by [`DepthGuard::build`] put
/// units that have no code at all: `[NO_CODE, NO_CODE + 1)`, an address
/// never asked (lookups at or above it are answered without DWARF). The
/// two addresses above it are tombstones that gimli skips in aranges.
pub(crate) const NO_CODE: u64 = u64::MAX - 2;

/// Real code nests a few dozen levels (inlining chains, lexical blocks);
/// 1024 levels of addr2line recursion stay well inside a 2 MB thread stack.
pub(crate) const MAX_DEPTH: isize = 1024;

struct UnitRange {
    begin: u64,
    end: u64,
    unit: usize,
}

/// A unit range in addr2line's search order, with the lowest begin of it
/// and all after it.
struct EndRange {
    begin: u64,
    end: u64,
    unit: usize,
    min_begin: u64,
}

/// Refuses addresses in units nested too deeply.
pub(crate) struct DepthGuard<'a> {
    index: Index<'a>,
}

/// Lookups answered by a pass over the unsorted ranges before they are
/// sorted (a pass costs about a twentieth of the sort).
const SCANS: u32 = 8;

/// Every unit addr2line may search, with the ranges it may search it for.
struct Index<'a> {
    headers: Vec<gimli::UnitHeader<R<'a>>>,
    /// Sorted by `begin` once `max_end` is set.
    ranges: RefCell<Vec<UnitRange>>,
    /// `max_end[i]`: the largest `end` among `ranges[..=i]`.
    max_end: OnceCell<Vec<u64>>,
    scans: Cell<u32>,
    /// The ranges sorted by end, for [`DepthGuard::covering`].
    by_end: OnceCell<Vec<EndRange>>,
    checked: Vec<OnceCell<bool>>,
    /// The file has partial units (which addr2line indexes for references
    /// and this index leaves out).
    partial: bool,
    /// Every unit's ranges were read without error. Otherwise addr2line
    /// may fail to set up or skip units; the engine leaves lookups to it.
    clean: bool,
}

impl<'a> DepthGuard<'a> {
    /// Read the unit ranges, before addr2line's `Context` is made. Returned
    /// with the guard: `.debug_aranges` sets (in `dwarf`'s byte order) for
    /// the units that declare no ranges: the sequences of their
    /// line programs, exactly the ranges addr2line would take from them, or
    /// when there are none (units holding only types, most of a Rust
    /// binary's), `[NO_CODE, NO_CODE + 1)`. Appended to `.debug_aranges`,
    /// they spare addr2line parsing those line programs and naming all
    /// their files up front (a fifth of a one-address run on ripgrep);
    /// it parses them when an address falls in one.
    pub(crate) fn build(dwarf: &gimli::Dwarf<R<'a>>) -> (DepthGuard<'a>, Vec<u8>) {
        let mut aranges = Vec::new();
        let index = Index::build(dwarf, &mut aranges);
        (DepthGuard { index }, aranges)
    }

    /// False when a unit that may cover `addr` nests too deeply.
    pub(crate) fn address_ok(&self, dwarf: &gimli::Dwarf<R<'a>>, addr: u64) -> bool {
        let index = &self.index;
        if index.max_end.get().is_none() && index.scans.get() < SCANS {
            index.scans.set(index.scans.get() + 1);
            return index
                .ranges
                .borrow()
                .iter()
                .all(|r| !(r.begin <= addr && addr < r.end) || index.unit_ok(dwarf, r.unit));
        }
        let max_end = index.max_end.get_or_init(|| {
            let mut ranges = index.ranges.borrow_mut();
            ranges.sort_unstable_by_key(|r| r.begin);
            let mut m = 0;
            ranges
                .iter()
                .map(|r| {
                    m = m.max(r.end);
                    m
                })
                .collect()
        });
        let ranges = index.ranges.borrow();
        let mut i = ranges.partition_point(|r| r.begin <= addr);
        while i > 0 {
            i -= 1;
            if max_end[i] <= addr {
                break;
            }
            if ranges[i].end > addr && !index.unit_ok(dwarf, ranges[i].unit) {
                return false;
            }
        }
        true
    }
}

impl<'a> DepthGuard<'a> {
    /// The units whose ranges cover `addr`, by index, in the order
    /// addr2line's `find_frames` tries them (by range end, then unit; a
    /// unit may come twice). `None` when the index is not addr2line's: some
    /// ranges could not be read.
    pub(crate) fn covering(&self, addr: u64) -> Option<impl Iterator<Item = usize> + '_> {
        let index = &self.index;
        if !index.clean {
            return None;
        }
        let by_end = index.by_end.get_or_init(|| {
            let mut by_end: Vec<EndRange> = index
                .ranges
                .borrow()
                .iter()
                .map(|r| EndRange {
                    begin: r.begin,
                    end: r.end,
                    unit: r.unit,
                    min_begin: 0,
                })
                .collect();
            by_end.sort_unstable_by_key(|r| (r.end, r.unit));
            let mut min = u64::MAX;
            for r in by_end.iter_mut().rev() {
                min = min.min(r.begin);
                r.min_begin = min;
            }
            by_end
        });
        // The first range ending after `addr`; none after one whose
        // remaining ranges all begin above it.
        let first = by_end.partition_point(|r| r.end <= addr);
        Some(
            by_end[first..]
                .iter()
                .take_while(move |r| addr >= r.min_begin)
                .filter(move |r| r.begin <= addr && addr < r.end)
                .map(|r| r.unit),
        )
    }

    /// The header of unit `index` (as [`Self::covering`] numbers them).
    pub(crate) fn header(&self, index: usize) -> gimli::UnitHeader<R<'a>> {
        self.index.headers[index]
    }

    pub(crate) fn unit_count(&self) -> usize {
        self.index.headers.len()
    }

    /// The unit addr2line takes a `.debug_info` reference into: the last
    /// one starting before `offset`. `None` where its list of units may
    /// differ from this index's, or it would refuse the reference.
    pub(crate) fn unit_at(&self, offset: usize) -> Option<usize> {
        let index = &self.index;
        if !index.clean || index.partial {
            return None;
        }
        let start = |h: &gimli::UnitHeader<R<'a>>| h.debug_info_offset().map_or(0, |o| o.0);
        match index.headers.binary_search_by_key(&offset, start) {
            Ok(_) | Err(0) => None,
            Err(i) => Some(i - 1),
        }
    }
}

#[cfg(test)]
impl<'a> DepthGuard<'a> {
    /// The offsets of the units that may cover `addr`.
    fn candidates(&self, addr: u64) -> Vec<usize> {
        let index = &self.index;
        let mut out: Vec<usize> = index
            .ranges
            .borrow()
            .iter()
            .filter(|r| r.begin <= addr && addr < r.end)
            .filter_map(|r| Some(index.headers[r.unit].debug_info_offset()?.0))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

impl<'a> Index<'a> {
    /// Unit address ranges as addr2line finds them: `DW_AT_ranges`, else
    /// `.debug_aranges`, else low/high pc, else the line program's
    /// sequences (cheaper than walking such a unit: they hold types).
    /// `.debug_aranges` sets for the units ranged by their line programs
    /// are written to `extra`.
    fn build(dwarf: &gimli::Dwarf<R<'a>>, extra: &mut Vec<u8>) -> Index<'a> {
        // (unit offset, set offset), read for the units that need them.
        let mut aranges: Vec<(usize, gimli::DebugArangesOffset<usize>)> = Vec::new();
        let mut arange_headers = dwarf.debug_aranges.headers();
        // An unreadable header makes addr2line give up on the whole file.
        let mut clean = true;
        loop {
            match arange_headers.next() {
                Ok(Some(h)) => aranges.push((h.debug_info_offset().0, h.offset())),
                Ok(None) => break,
                Err(_) => {
                    clean = false;
                    break;
                }
            }
        }
        aranges.sort_unstable_by_key(|a| a.0);
        let big_endian = gimli::Section::reader(&dwarf.debug_info)
            .endian()
            .is_big_endian();
        let mut headers = Vec::new();
        let mut checked = Vec::new();
        let mut ranges = Vec::new();
        let mut found: Vec<gimli::Range> = Vec::new();
        let mut partial = false;
        let mut roots = RootAbbreviations::default();
        let mut iter = dwarf.units();
        loop {
            let header = match iter.next() {
                Ok(Some(header)) => header,
                Ok(None) => break,
                Err(_) => {
                    clean = false;
                    break;
                }
            };
            // Type and partial units have no ranges: addr2line searches
            // neither (it reads names from them, never their children).
            partial |= header.type_() == gimli::UnitType::Partial;
            if matches!(
                header.type_(),
                gimli::UnitType::Type { .. }
                    | gimli::UnitType::SplitType { .. }
                    | gimli::UnitType::Partial
            ) {
                continue;
            }
            let index = headers.len();
            found.clear();
            let everything = match unit_ranges(dwarf, &mut roots, &header, &aranges, &mut found) {
                Ok(Declared::Yes) => false,
                Ok(Declared::No {
                    stmt_list,
                    ranges_attr,
                }) => match stmt_list.map(|o| line_ranges(dwarf, &header, o, &mut found)) {
                    Some(Ok(())) => {
                        // (With DW_AT_ranges, addr2line does not read aranges.)
                        if !ranges_attr {
                            write_aranges(extra, big_endian, &header, &found);
                        }
                        false
                    }
                    Some(Err(_)) => true,
                    None => false,
                },
                Err(_) => true,
            };
            if everything {
                clean = false;
                found.push(gimli::Range {
                    begin: 0,
                    end: u64::MAX,
                });
            }
            ranges.extend(found.iter().filter(|r| r.begin < r.end).map(|r| UnitRange {
                begin: r.begin,
                end: r.end,
                unit: index,
            }));
            headers.push(header);
            checked.push(OnceCell::new());
        }
        Index {
            headers,
            ranges: RefCell::new(ranges),
            max_end: OnceCell::new(),
            scans: Cell::new(0),
            by_end: OnceCell::new(),
            checked,
            partial,
            clean,
        }
    }

    fn unit_ok(&self, dwarf: &gimli::Dwarf<R<'a>>, index: usize) -> bool {
        *self.checked[index].get_or_init(|| depth_ok_or_unreadable(dwarf, &self.headers[index]))
    }
}

fn depth_ok_or_unreadable<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    header: &gimli::UnitHeader<R<'a>>,
) -> bool {
    match dwarf.abbreviations(header) {
        Ok(abbrevs) => depth_ok(header, &abbrevs),
        // addr2line cannot parse it either, so it will not recurse into it.
        Err(_) => true,
    }
}

/// Whether a unit declares address ranges.
enum Declared {
    Yes,
    No {
        /// Its line program, if any.
        stmt_list: Option<gimli::DebugLineOffset<usize>>,
        /// Whether it has `DW_AT_ranges` (an empty list).
        ranges_attr: bool,
    },
}

/// Add the ranges a unit declares to `out`, by addr2line's preference:
/// `DW_AT_ranges` of the root DIE, else its `.debug_aranges` entries, else
/// the root's low/high pc. Reads only the root DIE's attributes. An error
/// means the ranges are unknown.
fn unit_ranges<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    roots: &mut RootAbbreviations,
    header: &gimli::UnitHeader<R<'a>>,
    aranges: &[(usize, gimli::DebugArangesOffset<usize>)],
    out: &mut Vec<gimli::Range>,
) -> gimli::Result<Declared> {
    use gimli::AttributeValue as V;
    let abbreviations = roots.get(dwarf, header)?;
    let mut low = None;
    let mut high = None;
    let mut ranges = None;
    let mut stmt_list = None;
    let mut addr_base = None;
    let mut rnglists_base = None;
    {
        let mut entries = header.entries_raw(&abbreviations, None)?;
        // No root DIE: addr2line skips the unit.
        let Some(abbrev) = entries.read_abbreviation()? else {
            return Ok(Declared::Yes);
        };
        for spec in abbrev.attributes() {
            let attr = entries.read_attribute(*spec)?;
            match attr.name() {
                gimli::DW_AT_low_pc => low = Some(attr.value()),
                gimli::DW_AT_high_pc => high = Some(attr.value()),
                gimli::DW_AT_ranges => ranges = Some(attr.value()),
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
        str_offsets_base: gimli::DebugStrOffsetsBase::default_for_encoding_and_file(
            encoding,
            dwarf.file_type,
        ),
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
    let low = match low {
        Some(v) => dwarf.attr_address(&unit, v)?,
        None => None,
    };
    unit.low_pc = low.unwrap_or(0);
    let mut declared = false;
    let ranges_offset = match ranges {
        Some(v) => dwarf.attr_ranges_offset(&unit, v)?,
        None => None,
    };
    if let Some(offset) = ranges_offset {
        let mut list = dwarf.ranges(&unit, offset)?;
        while let Some(r) = list.next()? {
            declared |= r.begin < r.end;
            out.push(r);
        }
    } else {
        if let Some(offset) = header.debug_info_offset() {
            let first = aranges.partition_point(|a| a.0 < offset.0);
            for (_, set) in aranges[first..].iter().take_while(|a| a.0 == offset.0) {
                let mut entries = dwarf.debug_aranges.header(*set)?.entries();
                // addr2line skips bad entries and reads on: an error here
                // makes the unit cover everything.
                while let Some(e) = entries.next()? {
                    declared |= e.length() != 0;
                    out.push(e.range());
                }
            }
        }
        if !declared && let Some(begin) = low {
            let end = match high {
                Some(V::Udata(size)) => Some(begin.wrapping_add(size)),
                Some(v) => dwarf.attr_address(&unit, v)?,
                None => None,
            };
            if let Some(end) = end {
                declared |= begin < end;
                out.push(gimli::Range { begin, end });
            }
        }
    }
    Ok(if declared {
        Declared::Yes
    } else {
        Declared::No {
            stmt_list,
            ranges_attr: ranges_offset.is_some(),
        }
    })
}

/// Append one `.debug_aranges` set (version 2) for `header`'s unit holding
/// the non-empty `ranges`, or `[NO_CODE, NO_CODE + 1)` when there are none
/// (64-bit addresses only). Nothing for address sizes other than 4 and 8.
fn write_aranges(
    out: &mut Vec<u8>,
    big: bool,
    header: &gimli::UnitHeader<R<'_>>,
    ranges: &[gimli::Range],
) {
    let Some(offset) = header.debug_info_offset() else {
        return;
    };
    let encoding = header.encoding();
    let size = usize::from(encoding.address_size);
    let parked = [gimli::Range {
        begin: NO_CODE,
        end: NO_CODE + 1,
    }];
    let ranges = match ranges.iter().any(|r| r.begin < r.end) {
        true if size == 4 || size == 8 => ranges,
        false if size == 8 => &parked[..],
        _ => return,
    };
    // A range gimli would not read back as it is (a tombstone start, past
    // the address size): leave that unit to addr2line's own line parse.
    let max = if size == 8 {
        u64::MAX
    } else {
        u64::from(u32::MAX)
    };
    if ranges
        .iter()
        .any(|r| r.begin < r.end && (r.begin >= max - 1 || r.end > max))
    {
        return;
    }
    let Ok(offset) = u64::try_from(offset.0) else {
        return;
    };
    // 64-bit DWARF only when the unit's offset needs it.
    let dwarf64 = offset > u64::from(u32::MAX - 0x10);
    let tuples = ranges
        .iter()
        .filter(|r| r.begin < r.end)
        .map(|r| (r.begin, r.end - r.begin));
    write_set(out, big, dwarf64, offset, encoding.address_size, tuples);
}

/// Append one `.debug_aranges` set (version 2, no segments) holding
/// `tuples` (address, length) and its terminator.
fn write_set(
    out: &mut Vec<u8>,
    big: bool,
    dwarf64: bool,
    unit_offset: u64,
    address_size: u8,
    tuples: impl Iterator<Item = (u64, u64)> + Clone,
) {
    let size = usize::from(address_size);
    if !matches!(size, 1 | 2 | 4 | 8) {
        return;
    }
    let put = |out: &mut Vec<u8>, v: u64, n: usize| {
        if big {
            out.extend_from_slice(&v.to_be_bytes()[8 - n..]);
        } else {
            out.extend_from_slice(&v.to_le_bytes()[..n]);
        }
    };
    let (length_size, word) = if dwarf64 { (12, 8) } else { (4, 4) };
    let header_len = length_size + 2 + word + 2;
    let padding = (2 * size - header_len % (2 * size)) % (2 * size);
    let count = tuples.clone().count() + 1;
    let Some(total) = count
        .checked_mul(2 * size)
        .and_then(|t| t.checked_add(header_len + padding))
    else {
        return;
    };
    let length = (total - length_size) as u64;
    if dwarf64 {
        put(out, 0xffff_ffff, 4);
        put(out, length, 8);
    } else {
        let Ok(length) = u32::try_from(length) else {
            return;
        };
        put(out, u64::from(length), 4);
    }
    put(out, 2, 2);
    put(out, unit_offset, word);
    out.push(address_size);
    out.push(0);
    out.resize(out.len() + padding, 0);
    for (address, length) in tuples {
        put(out, address, size);
        put(out, length, size);
    }
    put(out, 0, size);
    put(out, 0, size);
}

/// Consecutive `(0, 0)` tuples in one `.debug_aranges` set past which the
/// section is rewritten without them.
const ZERO_RUN: usize = 32;

/// gimli reads a `(0, 0)` tuple in the middle of an aranges set (a
/// terminator written too early) by calling itself for the next one: a few
/// MB of them overflow the stack, in addr2line's `Context` as in the guard.
/// They mean nothing, so when a set holds a long run of them the section
/// is rewritten without any (each set keeping one terminator). `None` when
/// there is nothing to remove (checked first by a pass looking for a run
/// of zero bytes, the common case). A set that cannot be read ends the rewrite:
/// the rest is kept as it is, as gimli would see it.
pub(crate) fn clean_aranges(section: &[u8], big: bool) -> Option<Vec<u8>> {
    // A long run (the thousands that hurt) holds many aligned zero words;
    // 64 in a row start the real check.
    let mut zero_words = 0;
    section
        .chunks_exact(8)
        .any(|w| {
            zero_words = if w == [0; 8] { zero_words + 1 } else { 0 };
            zero_words >= 64
        })
        .then_some(())?;
    let endian = if big {
        gimli::RunTimeEndian::Big
    } else {
        gimli::RunTimeEndian::Little
    };
    let mut input = gimli::EndianSlice::new(section, endian);
    let mut out = Vec::with_capacity(section.len() / 4);
    let mut changed = false;
    while !input.is_empty() {
        let start = section.len() - input.len();
        match read_set(&mut input) {
            Ok(Some(set)) => {
                changed |= set.zero_run > ZERO_RUN;
                write_set(
                    &mut out,
                    big,
                    set.dwarf64,
                    set.unit_offset,
                    set.address_size,
                    set.tuples.into_iter(),
                );
            }
            _ => {
                out.extend_from_slice(&section[start..]);
                break;
            }
        }
    }
    changed.then_some(out)
}

/// One `.debug_aranges` set, its `(0, 0)` tuples left out.
struct ArangeSet {
    dwarf64: bool,
    unit_offset: u64,
    address_size: u8,
    tuples: Vec<(u64, u64)>,
    /// The longest run of `(0, 0)` tuples.
    zero_run: usize,
}

/// Read one set as gimli does; `None` for one gimli would refuse.
fn read_set(input: &mut R<'_>) -> gimli::Result<Option<ArangeSet>> {
    use gimli::ReaderOffset as _;
    let (length, format) = input.read_initial_length()?;
    let mut rest = input.split(length)?;
    let version = rest.read_u16()?;
    let unit_offset = rest.read_offset(format)?.into_u64();
    let address_size = rest.read_u8()?;
    let segment_size = rest.read_u8()?;
    if !(version == 2 || version == 3)
        || segment_size != 0
        || !matches!(address_size, 1 | 2 | 4 | 8)
    {
        return Ok(None);
    }
    let header_length = format.initial_length_size() + 2 + format.word_size() + 2;
    let tuple = 2 * address_size;
    rest.skip(usize::from((tuple - header_length % tuple) % tuple))?;
    let mut tuples = Vec::new();
    let (mut run, mut zero_run) = (0, 0);
    while rest.len() >= usize::from(tuple) {
        let address = rest.read_address(address_size)?;
        let length = rest.read_address(address_size)?;
        if address == 0 && length == 0 {
            run += 1;
            zero_run = zero_run.max(run);
        } else {
            run = 0;
            tuples.push((address, length));
        }
    }
    Ok(Some(ArangeSet {
        dwarf64: format == gimli::Format::Dwarf64,
        unit_offset,
        address_size,
        tuples,
        zero_run,
    }))
}

/// A line program's sequences (from the first row to the end), as
/// addr2line takes a unit's ranges when it declares none.
fn line_ranges<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    header: &gimli::UnitHeader<R<'a>>,
    offset: gimli::DebugLineOffset<usize>,
    out: &mut Vec<gimli::Range>,
) -> gimli::Result<()> {
    if program_is_empty(dwarf, offset) {
        return Ok(());
    }
    let program = dwarf
        .debug_line
        .program(offset, header.address_size(), None, None)?;
    let mut rows = program.rows();
    let mut start = None;
    while let Some((_, row)) = rows.next_row()? {
        if row.end_sequence() {
            if let Some(begin) = start.take() {
                out.push(gimli::Range {
                    begin,
                    end: row.address(),
                });
            }
        } else if start.is_none() {
            start = Some(row.address());
        }
    }
    Ok(())
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

/// Walk a unit's DIEs without recursion; false if nested deeper than
/// [`MAX_DEPTH`]. Parse errors end the walk: the parser that comes after
/// us stops at the same place.
pub(crate) fn unit_depth_ok<T: Reader>(unit: &gimli::Unit<T>) -> bool {
    depth_ok(&unit.header, &unit.abbreviations)
}

/// The walk itself, over the raw DIE bytes. Abbreviations whose attributes
/// all have fixed-size forms (most DIEs) are stepped over with one add;
/// the others follow a per-abbreviation step list.
pub(crate) fn depth_ok<T: Reader>(
    header: &gimli::UnitHeader<T>,
    abbrevs: &gimli::Abbreviations,
) -> bool {
    max_depth(header, abbrevs, MAX_DEPTH) <= MAX_DEPTH
}

/// The deepest nesting seen, stopping early once past `limit`.
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
    let mut walk = DieWalk::new(header, abbrevs, &bytes, |_| false);
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
    use object::{Object, ObjectSection};

    fn check_file(path: &std::path::Path, dwo: bool) -> usize {
        let data = std::fs::read(path).unwrap();
        let obj = object::File::parse(&*data).unwrap();
        let dwarf = load_sections(&obj, dwo);
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

    /// Load a file's DWARF sections (unrelocated, as the tests need).
    fn load_sections<'d>(obj: &object::File<'d>, dwo: bool) -> gimli::Dwarf<R<'d>> {
        let load = |id: gimli::SectionId| -> Result<R<'d>, gimli::Error> {
            let name = if dwo {
                id.dwo_name().unwrap_or("")
            } else {
                id.name()
            };
            let bytes = obj
                .section_by_name(name)
                .and_then(|s| s.data().ok())
                .unwrap_or(&[]);
            Ok(gimli::EndianSlice::new(bytes, gimli::RunTimeEndian::Little))
        };
        gimli::Dwarf::load(load).unwrap()
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

    /// Everything `find_frames` says about an address, comparable.
    type Answer = Vec<(Option<Vec<u8>>, Option<String>, Option<u32>, Option<u32>)>;

    fn answer(ctx: &addr2line::Context<R<'_>>, addr: u64) -> Answer {
        let found = without_loading(ctx.find_frames(addr));
        let mut out = Vec::new();
        if let Ok(mut frames) = found {
            while let Ok(Some(f)) = frames.next() {
                out.push((
                    f.function.map(|n| n.name.slice().to_vec()),
                    f.location.as_ref().and_then(|l| l.file.map(str::to_owned)),
                    f.location.as_ref().and_then(|l| l.line),
                    f.location.as_ref().and_then(|l| l.column),
                ));
            }
        }
        out
    }

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
        out.retain(|&a| a < NO_CODE);
        out.sort_unstable();
        out.dedup();
        // A sample of big files (SYMFILTER_TEST_DWARF_FILE).
        let step = out.len() / 20_000 + 1;
        out.into_iter().step_by(step).collect()
    }

    /// On real files: addr2line over the extra aranges answers exactly as
    /// over the file's own, and every unit it answers from is one the
    /// guard checks.
    #[test]
    fn guard_ranges_cover_what_addr2line_searches() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files: Vec<std::path::PathBuf> = [
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
        ]
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
        let mut asked = 0;
        let mut found = 0;
        let mut parked = 0;
        for path in &files {
            let data = std::fs::read(path).unwrap();
            let obj = object::File::parse(&*data).unwrap();
            let plain = load_sections(&obj, false);
            let (guard, extra) = DepthGuard::build(&plain);
            let mut sections = gimli::Section::reader(&plain.debug_aranges).to_vec();
            sections.extend_from_slice(&extra);
            let mut fed = load_sections(&obj, false);
            fed.debug_aranges =
                gimli::EndianSlice::new(&sections[..], gimli::RunTimeEndian::Little).into();
            // The extra sets read back: one per unit they were written for.
            let mut sets = fed.debug_aranges.headers();
            let mut n = 0;
            while let Some(h) = sets.next().unwrap() {
                let mut entries = h.entries();
                while let Some(e) = entries.next().unwrap() {
                    parked += usize::from(e.range().begin == NO_CODE);
                }
                n += 1;
            }
            assert!(n >= 1 || extra.is_empty(), "{}", path.display());
            let reference = addr2line::Context::from_dwarf(load_sections(&obj, false)).unwrap();
            let ctx = addr2line::Context::from_dwarf(fed).unwrap();
            for addr in addresses(&plain) {
                assert!(guard.address_ok(&plain, addr));
                let want = answer(&reference, addr);
                assert_eq!(answer(&ctx, addr), want, "{} {addr:#x}", path.display());
                asked += 1;
                let unit = without_loading(reference.find_dwarf_and_unit(addr));
                if let Some(unit) = unit
                    && unit.header.debug_info_offset().is_some()
                {
                    found += 1;
                    let offset = unit.header.debug_info_offset().unwrap().0;
                    assert!(
                        guard.candidates(addr).contains(&offset),
                        "{} {addr:#x}: unit {offset:#x} not guarded",
                        path.display()
                    );
                }
            }
        }
        assert!(asked > 1000 && found > 500, "{asked} {found}");
        // The Rust fixtures have units with types only.
        assert!(parked > 0);
    }

    /// 20,000 nested DIEs in a unit ranged by its line program, by
    /// `.debug_aranges` or by `DW_AT_ranges` (testdata/latency/build.sh):
    /// refused where the unit has code, symbol-table answers, no crash.
    #[test]
    fn hostile_nesting_is_refused_however_the_unit_is_ranged() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/latency/bin");
        for name in ["deep_lines", "deep_aranges", "deep_ranges"] {
            let path = dir.join(name);
            let data = std::fs::read(&path).unwrap();
            let obj = object::File::parse(&*data).unwrap();
            let dwarf = load_sections(&obj, false);
            let (guard, _) = DepthGuard::build(&dwarf);
            // `outer` is at 0x1140, `_start` at 0x1040 (outside every
            // range); asked enough times to use the sorted ranges too.
            for _ in 0..SCANS {
                assert!(!guard.address_ok(&dwarf, 0x1150), "{name}");
                assert!(guard.address_ok(&dwarf, 0x1040), "{name}");
            }
            assert!(guard.index.max_end.get().is_some());
            let source = crate::elf::open_file(&path, &[]).unwrap();
            let info =
                crate::symbols::SymbolSource::lookup_code(&source, 0x1150, Default::default())
                    .unwrap();
            assert!(info.frames.is_empty(), "{name}");
            assert_eq!(&*info.symbol.unwrap().name, "outer", "{name}");
        }
    }

    /// A set with 200,000 `(0, 0)` tuples before its one entry: read as is,
    /// gimli recurses once per tuple and overflows the stack.
    #[test]
    fn long_runs_of_zero_aranges_tuples_are_dropped() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/latency/bin/deep_aranges");
        let data = std::fs::read(path).unwrap();
        let obj = object::File::parse(&*data).unwrap();
        let original = obj
            .section_by_name(".debug_aranges")
            .unwrap()
            .data()
            .unwrap();
        assert!(clean_aranges(original, false).is_none());
        let zeros = 200_000;
        let mut set = Vec::new();
        set.extend_from_slice(&2u16.to_le_bytes());
        set.extend_from_slice(&0u32.to_le_bytes());
        set.extend_from_slice(&[8, 0, 0, 0, 0, 0]);
        set.resize(set.len() + 16 * zeros, 0);
        for v in [0x1140u64, 0x20, 0, 0] {
            set.extend_from_slice(&v.to_le_bytes());
        }
        let mut hostile = (set.len() as u32).to_le_bytes().to_vec();
        hostile.extend_from_slice(&set);
        let clean = clean_aranges(&hostile, false).unwrap();
        let le = gimli::RunTimeEndian::Little;
        let mut headers = gimli::DebugAranges::new(&clean[..], le).headers();
        let header = headers.next().unwrap().unwrap();
        let entries: Vec<_> = header.entries().map(|e| e.unwrap().range()).collect();
        assert_eq!(
            entries,
            [gimli::Range {
                begin: 0x1140,
                end: 0x1160
            }]
        );
        assert!(headers.next().unwrap().is_none());
        // The guard and addr2line over it: refused, no crash.
        let mut dwarf = load_sections(&obj, false);
        dwarf.debug_aranges = gimli::EndianSlice::new(&clean[..], le).into();
        let (guard, _) = DepthGuard::build(&dwarf);
        assert!(!guard.address_ok(&dwarf, 0x1150));
        assert!(addr2line::Context::from_dwarf(dwarf).is_ok());
    }

    #[test]
    fn fast_walk_agrees_with_gimli() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/elf/bin");
        let mut units = 0;
        for name in [
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
            "dwz_other",
            "dwz_common.debug",
        ] {
            units += check_file(&dir.join(name), false);
        }
        units += check_file(&dir.join("split_dwo.dwo"), true);
        // The fixtures of the other engineers, when present (C, C++, Rust).
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
        assert!(!depth_ok(&header, &abbrevs));
        assert_eq!(max_depth(&header, &abbrevs, isize::MAX), 20_002);
    }
}
