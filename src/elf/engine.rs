//! DWARF lookups from our own lazily built index.
//!
//! addr2line's `Context` starts by reading every unit's abbreviations, root
//! DIE and line-program header (a large share of a one-address lookup on
//! a big binary), and its recursive walk of inlined subroutines
//! needs our nesting guard to walk each unit first. Lookups are answered
//! here instead, from the units the guard's index says cover the address,
//! each unit's functions and line table read on first use and kept, with
//! addr2line's rules step for step: the same units tried in the same order,
//! the same function and inline ranges sorted the same way and searched
//! with the same binary searches (so even overlapping ranges give
//! addr2line's pick), the same line rows and file names, and the guard's
//! refusal of units nested too deeply. No recursion: a hostile nesting
//! depth costs time, not stack.
//!
//! Whatever this module does not follow (split units, supplementary files,
//! any read error, whose message addr2line words) makes it answer
//! [`Unsure`], and the caller asks addr2line.

use std::cell::{OnceCell, RefCell};
use std::cmp::Ordering;
use std::sync::Arc;

use gimli::UnitRef;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::die_walk::DieWalk;
use super::guard::{DepthGuard, MAX_DEPTH};
use super::line_program::{self, Malformed, Outcome, Row};
use crate::symbols::{Frame, Interner, Text};

type R<'a> = gimli::EndianSlice<'a, gimli::RunTimeEndian>;

/// This lookup is addr2line's to make.
#[derive(Debug)]
pub(crate) struct Unsure;

impl From<gimli::Error> for Unsure {
    fn from(_: gimli::Error) -> Self {
        Unsure
    }
}

type Sure<T> = Result<T, Unsure>;

/// What a lookup found.
#[derive(Debug, PartialEq)]
pub(crate) enum Found {
    /// addr2line's `find_frames` answer, innermost frame first, and the
    /// column of the innermost line row (which addr2line drops when the
    /// row's line is 0).
    Frames(Vec<Frame>, u32),
    /// A unit covering the address nests deeper than [`MAX_DEPTH`]: the
    /// guard refuses the address.
    TooDeep,
}

/// The units read so far, by the guard's unit index.
pub(crate) struct Engine<'a> {
    /// Parsed unit headers and root DIEs (`None`: not ours to read).
    units: Vec<OnceCell<Option<Arc<gimli::Unit<R<'a>>>>>>,
    /// Functions and line tables of the units searched.
    searched: Vec<OnceCell<Option<Searched<'a>>>>,
    /// Abbreviation sets by offset: LLVM shares one among the units of an
    /// object file (194 sets for 974 units in ripgrep).
    abbreviations: RefCell<FxHashMap<usize, Arc<gimli::Abbreviations>>>,
    /// The name each abstract origin or specification leads to, by its
    /// `.debug_info` offset: a function inlined in many places is named
    /// once, not at every call site.
    names: RefCell<FxHashMap<usize, Option<R<'a>>>>,
    /// Function names as answers carry them, made once each.
    texts: RefCell<Interner<'a>>,
}

/// Names kept at most; the table is refilled when full.
const NAMES_MAX: usize = 1 << 18;

/// One unit's subprograms, nesting depth, and what lookups have read of it.
struct Searched<'a> {
    unit: Arc<gimli::Unit<R<'a>>>,
    functions: Functions,
    too_deep: bool,
    lines: OnceCell<Option<Lines>>,
    /// Parsed subprograms by index in `functions` (`None`: unsure).
    parsed: RefCell<FxHashMap<usize, Option<Arc<Function<'a>>>>>,
}

impl<'a> Engine<'a> {
    pub(crate) fn new(guard: &DepthGuard<'a>) -> Engine<'a> {
        let n = guard.unit_count();
        Engine {
            units: (0..n).map(|_| OnceCell::new()).collect(),
            searched: (0..n).map(|_| OnceCell::new()).collect(),
            abbreviations: RefCell::new(FxHashMap::default()),
            names: RefCell::new(FxHashMap::default()),
            texts: RefCell::default(),
        }
    }

    /// Unit `index`, as addr2line would have it: split units and units
    /// without a root DIE (not in addr2line's list) are not ours.
    fn unit(
        &self,
        dwarf: &gimli::Dwarf<R<'a>>,
        guard: &DepthGuard<'a>,
        index: usize,
    ) -> Sure<Arc<gimli::Unit<R<'a>>>> {
        let unit = self.units.get(index).ok_or(Unsure)?.get_or_init(|| {
            let header = guard.header(index);
            let offset = header.debug_abbrev_offset();
            let mut cache = self.abbreviations.borrow_mut();
            let abbreviations = match cache.get(&offset.0) {
                Some(a) => a.clone(),
                None => {
                    let a = Arc::new(dwarf.debug_abbrev.abbreviations(offset).ok()?);
                    cache.insert(offset.0, a.clone());
                    a
                }
            };
            drop(cache);
            let unit = gimli::Unit::new_with_abbreviations(dwarf, header, abbreviations).ok()?;
            let root = unit.entries_raw(None).ok()?.read_abbreviation().ok()?;
            (unit.dwo_id.is_none() && root.is_some()).then(|| Arc::new(unit))
        });
        unit.clone().ok_or(Unsure)
    }

    fn searched(
        &self,
        dwarf: &gimli::Dwarf<R<'a>>,
        guard: &DepthGuard<'a>,
        index: usize,
    ) -> Sure<&Searched<'a>> {
        let searched = self.searched[index].get_or_init(|| {
            let unit = self.unit(dwarf, guard, index).ok()?;
            let (functions, deepest) = Functions::parse(UnitRef::new(dwarf, &unit)).ok()?;
            Some(Searched {
                unit,
                functions,
                too_deep: deepest > MAX_DEPTH,
                lines: OnceCell::new(),
                parsed: RefCell::new(FxHashMap::default()),
            })
        });
        searched.as_ref().ok_or(Unsure)
    }

    /// The frames for `probe`.
    pub(crate) fn find_frames(
        &self,
        dwarf: &gimli::Dwarf<R<'a>>,
        guard: &DepthGuard<'a>,
        probe: u64,
    ) -> Sure<Found> {
        if dwarf.sup.is_some() {
            return Err(Unsure);
        }
        // Nearly always one unit: no allocation per lookup.
        let mut candidates: SmallVec<[&Searched<'a>; 4]> = SmallVec::new();
        for index in guard.covering(probe).ok_or(Unsure)? {
            let searched = self.searched(dwarf, guard, index)?;
            if !candidates.iter().any(|c| std::ptr::eq(*c, searched)) {
                candidates.push(searched);
            }
        }
        // The guard checks every unit covering the address first.
        if candidates.iter().any(|c| c.too_deep) {
            return Ok(Found::TooDeep);
        }
        for searched in candidates {
            if let Some(found) = self.in_unit(dwarf, guard, searched, probe)? {
                return Ok(found);
            }
        }
        Ok(Found::Frames(Vec::new(), 0))
    }

    /// The frames for `probe` from one unit; `None` when it has neither a
    /// function nor a line row there.
    fn in_unit(
        &self,
        dwarf: &gimli::Dwarf<R<'a>>,
        guard: &DepthGuard<'a>,
        searched: &Searched<'a>,
        probe: u64,
    ) -> Sure<Option<Found>> {
        let unit = UnitRef::new(dwarf, &searched.unit);
        let function = match searched.functions.find(probe) {
            Some(i) => {
                let mut parsed = searched.parsed.borrow_mut();
                let function = parsed.entry(i).or_insert_with(|| {
                    let offset = searched.functions.offsets[i];
                    Function::parse(unit, self, guard, offset)
                        .ok()
                        .map(Arc::new)
                });
                Some(function.clone().ok_or(Unsure)?)
            }
            None => None,
        };
        let lines = match &unit.line_program {
            Some(program) => Some(
                searched
                    .lines
                    .get_or_init(|| Lines::parse(unit, program.clone()).ok())
                    .as_ref()
                    .ok_or(Unsure)?,
            ),
            None => None,
        };
        let row = lines.and_then(|l| l.find(probe));
        if function.is_none() && row.is_none() {
            return Ok(None);
        }
        let file = |index: u64| lines.and_then(|l| l.file(index));
        // The frames allocated once, at their final number.
        let chain = function.as_ref().map(|f| f.inlined_chain(probe));
        let mut frames = Vec::with_capacity(chain.as_ref().map_or(0, |c| c.len()) + 1);
        let mut next = row.map(|r| Frame {
            function: None,
            file: file(r.file_index),
            line: r.line,
            column: if r.line != 0 { r.column } else { 0 },
        });
        let column = row.map_or(0, |r| r.column);
        let (Some(function), Some(chain)) = (&function, chain) else {
            frames.extend(next);
            return Ok(Some(Found::Frames(frames, column)));
        };
        let names = (self, guard);
        let mut texts = self.texts.borrow_mut();
        for inlined in chain.into_iter().rev() {
            let mut frame = next.take().unwrap_or_default();
            frame.function = inlined.name.resolve(unit, &names)?.map(|n| texts.text(n));
            frames.push(frame);
            next = Some(Frame {
                function: None,
                file: inlined.call_file.and_then(|i| file(i.into())),
                line: inlined.call_line,
                column: inlined.call_column,
            });
        }
        let mut frame = next.unwrap_or_default();
        frame.function = function.name.map(|n| texts.text(n));
        frames.push(frame);
        Ok(Some(Found::Frames(frames, column)))
    }
}

/// Where names are looked up: the engine's units and the guard's index.
type Names<'e, 'g, 'a> = (&'e Engine<'a>, &'g DepthGuard<'a>);

/// A DIE's address ranges as addr2line reads them.
#[derive(Default)]
struct RangeAttrs {
    low_pc: Option<u64>,
    high_pc: Option<u64>,
    size: Option<u64>,
    ranges_offset: Option<gimli::RangeListsOffset<usize>>,
}

impl RangeAttrs {
    /// Take `attr` if it is a range attribute.
    fn read<'a>(&mut self, unit: UnitRef<'_, R<'a>>, attr: &gimli::Attribute<R<'a>>) -> Sure<()> {
        use gimli::AttributeValue as V;
        // Most attributes are not ranges: name first (the value is
        // normalised on every call).
        if !matches!(
            attr.name(),
            gimli::DW_AT_low_pc | gimli::DW_AT_high_pc | gimli::DW_AT_ranges
        ) {
            return Ok(());
        }
        match (attr.name(), attr.value()) {
            (gimli::DW_AT_low_pc, V::Addr(a)) => self.low_pc = Some(a),
            (gimli::DW_AT_low_pc, V::DebugAddrIndex(i)) => self.low_pc = Some(unit.address(i)?),
            (gimli::DW_AT_high_pc, V::Addr(a)) => self.high_pc = Some(a),
            (gimli::DW_AT_high_pc, V::DebugAddrIndex(i)) => self.high_pc = Some(unit.address(i)?),
            (gimli::DW_AT_high_pc, V::Udata(size)) => self.size = Some(size),
            (gimli::DW_AT_ranges, v) => self.ranges_offset = unit.attr_ranges_offset(v)?,
            _ => {}
        }
        Ok(())
    }

    /// Call `f` with each non-empty range; false if there were none.
    fn each(&self, unit: UnitRef<'_, R<'_>>, mut f: impl FnMut(gimli::Range)) -> Sure<bool> {
        let mut any = false;
        let mut add = |r: gimli::Range| {
            if r.begin < r.end {
                f(r);
                any = true;
            }
        };
        if let Some(offset) = self.ranges_offset {
            let mut list = unit.ranges(offset)?;
            while let Some(r) = list.next()? {
                add(r);
            }
        } else if let (Some(begin), Some(end)) = (self.low_pc, self.high_pc) {
            add(gimli::Range { begin, end });
        } else if let (Some(begin), Some(size)) = (self.low_pc, self.size) {
            // A tombstone begin wraps and is dropped as empty.
            add(gimli::Range {
                begin,
                end: begin.wrapping_add(size),
            });
        }
        Ok(any)
    }
}

/// One address range of a subprogram. Field for field addr2line's
/// `FunctionAddress`: the same type sorted from the same order comes out in
/// the same order, ties included.
struct FunctionAddress {
    range: gimli::Range,
    function: usize,
}

/// The unit's subprograms with code.
struct Functions {
    offsets: Vec<gimli::UnitOffset<usize>>,
    addresses: Vec<FunctionAddress>,
}

impl Functions {
    /// The unit's subprograms, and the depth of its deepest DIE children
    /// (as the guard measures it).
    fn parse(unit: UnitRef<'_, R<'_>>) -> Sure<(Functions, isize)> {
        let mut offsets = Vec::new();
        let mut addresses = Vec::new();
        let header = &unit.header;
        let input = header.range_from(gimli::UnitOffset(header.header_size())..)?;
        // Most DIEs are not subprograms with code: the fast walk steps over
        // them, gimli reads the few wanted. A subprogram whose abbreviation
        // has no address attribute (a declaration) has no ranges to read.
        let mut walk = DieWalk::new(header, &unit.abbreviations, input.slice(), |abbrev| {
            abbrev.tag() == gimli::DW_TAG_subprogram
                && abbrev.attributes().iter().any(|spec| {
                    matches!(
                        spec.name(),
                        gimli::DW_AT_low_pc | gimli::DW_AT_high_pc | gimli::DW_AT_ranges
                    )
                })
        });
        while let Some(die) = walk.next_wanted() {
            let offset = gimli::UnitOffset(die.offset);
            let mut entries = unit.entries_raw(Some(offset))?;
            let abbrev = entries.read_abbreviation()?.ok_or(Unsure)?;
            let mut ranges = RangeAttrs::default();
            for spec in abbrev.attributes() {
                let attr = entries.read_attribute(*spec)?;
                ranges.read(unit, &attr)?;
            }
            let function = offsets.len();
            if ranges.each(unit, |range| {
                addresses.push(FunctionAddress { range, function })
            })? {
                offsets.push(offset);
            }
        }
        // gimli would have failed where the walk stopped.
        if walk.failed() {
            return Err(Unsure);
        }
        let deepest = walk.deepest();
        addresses.sort_unstable_by_key(|x| x.range.begin);
        // Kept for the run: no room to spare.
        offsets.shrink_to_fit();
        addresses.shrink_to_fit();
        Ok((Functions { offsets, addresses }, deepest))
    }

    /// The index of the subprogram covering `probe`.
    fn find(&self, probe: u64) -> Option<usize> {
        let i = self
            .addresses
            .binary_search_by(|a| {
                if probe < a.range.begin {
                    Ordering::Greater
                } else if probe >= a.range.end {
                    Ordering::Less
                } else {
                    Ordering::Equal
                }
            })
            .ok()?;
        Some(self.addresses[i].function)
    }
}

/// A `DW_TAG_inlined_subroutine`: its name and where it was called.
struct Inlined<'a> {
    name: DieName<'a>,
    /// Wider indexes name no file a unit can have.
    call_file: Option<u32>,
    call_line: u32,
    call_column: u32,
}

/// The name of a subprogram or inlined subroutine as its attributes give
/// it: its linkage name wins; its plain name, or the name its abstract
/// origin or specification leads to, only while it has none. The link is
/// kept, and followed only when asked (an inlined call's, when a lookup
/// lands in it: a function holds many inlined calls, and a lookup meets
/// few of them).
#[derive(Clone, Copy)]
enum DieName<'a> {
    None,
    Name(&'a [u8]),
    /// The name the link leads to; else the plain name that came after it.
    Link(Link, Option<&'a [u8]>),
}

/// Where a `DW_AT_abstract_origin` or `DW_AT_specification` points.
#[derive(Clone, Copy)]
enum Link {
    Unit(gimli::UnitOffset<usize>),
    Info(gimli::DebugInfoOffset<usize>),
}

impl Link {
    fn of(value: &gimli::AttributeValue<R<'_>>) -> Option<Link> {
        match *value {
            gimli::AttributeValue::UnitRef(o) => Some(Link::Unit(o)),
            gimli::AttributeValue::DebugInfoRef(o) => Some(Link::Info(o)),
            _ => None,
        }
    }

    fn value<'a>(self) -> gimli::AttributeValue<R<'a>> {
        match self {
            Link::Unit(o) => gimli::AttributeValue::UnitRef(o),
            Link::Info(o) => gimli::AttributeValue::DebugInfoRef(o),
        }
    }
}

impl<'a> DieName<'a> {
    /// Take `attr` into the name, leaving links unfollowed where that gives
    /// the same name as following them at once.
    fn take(
        &mut self,
        unit: UnitRef<'_, R<'a>>,
        names: &Names<'_, '_, 'a>,
        attr: &gimli::Attribute<R<'a>>,
    ) -> Sure<()> {
        use DieName::{Link as Linked, Name, None as Nothing};
        match attr.name() {
            gimli::DW_AT_linkage_name | gimli::DW_AT_MIPS_linkage_name => {
                if let Ok(n) = unit.attr_string(attr.value()) {
                    *self = Name(n.slice());
                }
            }
            gimli::DW_AT_name => match *self {
                Nothing => {
                    if let Ok(n) = unit.attr_string(attr.value()) {
                        *self = Name(n.slice());
                    }
                }
                Linked(link, None) => {
                    *self = Linked(link, unit.attr_string(attr.value()).ok().map(|n| n.slice()));
                }
                _ => {}
            },
            gimli::DW_AT_abstract_origin | gimli::DW_AT_specification => {
                // A second link counts only when the first leads nowhere.
                if let Linked(first, None) = *self {
                    *self = match linked_name(unit, names, first.value())? {
                        Some(n) => Name(n.slice()),
                        None => Nothing,
                    };
                }
                if let Nothing = *self {
                    *self = match Link::of(&attr.value()) {
                        Some(link) => Linked(link, None),
                        None => match linked_name(unit, names, attr.value())? {
                            Some(n) => Name(n.slice()),
                            None => Nothing,
                        },
                    };
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The name, following the link if there is one.
    fn resolve(
        self,
        unit: UnitRef<'_, R<'a>>,
        names: &Names<'_, '_, 'a>,
    ) -> Sure<Option<&'a [u8]>> {
        match self {
            DieName::None => Ok(None),
            DieName::Name(n) => Ok(Some(n)),
            DieName::Link(link, then) => Ok(linked_name(unit, names, link.value())?
                .map(|n| n.slice())
                .or(then)),
        }
    }
}

/// One range of an inlined subroutine; addr2line's `InlinedFunctionAddress`.
struct InlinedFunctionAddress {
    range: gimli::Range,
    call_depth: u32,
    function: u32,
}

/// The subprogram holding the address, with its inlined subroutines.
struct Function<'a> {
    name: Option<&'a [u8]>,
    inlined: Vec<Inlined<'a>>,
    /// Sorted by call depth, then range start, as addr2line sorts them.
    addresses: Vec<InlinedFunctionAddress>,
}

/// Name lookups through `DW_AT_abstract_origin`/`DW_AT_specification`
/// follow at most this many links (addr2line's limit).
const NAME_LINKS: usize = 16;

impl<'a> Function<'a> {
    fn parse(
        unit: UnitRef<'_, R<'a>>,
        engine: &Engine<'a>,
        guard: &DepthGuard<'a>,
        offset: gimli::UnitOffset<usize>,
    ) -> Sure<Function<'a>> {
        let names = (engine, guard);
        let names = &names;
        let mut entries = unit.entries_raw(Some(offset))?;
        let depth = entries.next_depth();
        let abbrev = entries.read_abbreviation()?.ok_or(Unsure)?;
        let mut name = DieName::None;
        for spec in abbrev.attributes() {
            let attr = entries.read_attribute(*spec)?;
            name.take(unit, names, &attr)?;
        }
        let mut function = Function {
            name: name.resolve(unit, names)?,
            inlined: Vec::new(),
            addresses: Vec::new(),
        };
        function.parse_children(unit, names, &mut entries, depth)?;
        function.addresses.sort_unstable_by(|a, b| {
            a.call_depth
                .cmp(&b.call_depth)
                .then(a.range.begin.cmp(&b.range.begin))
        });
        function.inlined.shrink_to_fit();
        function.addresses.shrink_to_fit();
        Ok(function)
    }

    /// The subprogram's descendants, depth first, without recursion:
    /// `open` holds the DIE depth of each enclosing inlined subroutine.
    /// Nested subprograms are skipped with all they hold.
    fn parse_children(
        &mut self,
        unit: UnitRef<'_, R<'a>>,
        names: &Names<'_, '_, 'a>,
        entries: &mut gimli::EntriesRaw<'_, R<'a>>,
        depth: isize,
    ) -> Sure<()> {
        let mut open: Vec<isize> = Vec::new();
        loop {
            let offset_depth = entries.next_depth();
            if offset_depth <= depth {
                return Ok(());
            }
            while open.last().is_some_and(|&d| offset_depth <= d) {
                open.pop();
            }
            let Some(abbrev) = entries.read_abbreviation()? else {
                continue;
            };
            match abbrev.tag() {
                gimli::DW_TAG_subprogram => {
                    entries.skip_attributes(abbrev.attributes())?;
                    while entries.next_depth() > offset_depth {
                        if let Some(abbrev) = entries.read_abbreviation()? {
                            entries.skip_attributes(abbrev.attributes())?;
                        }
                    }
                }
                gimli::DW_TAG_inlined_subroutine => {
                    self.parse_inlined(unit, names, entries, abbrev, open.len())?;
                    open.push(offset_depth);
                }
                _ => entries.skip_attributes(abbrev.attributes())?,
            }
        }
    }

    fn parse_inlined(
        &mut self,
        unit: UnitRef<'_, R<'a>>,
        names: &Names<'_, '_, 'a>,
        entries: &mut gimli::EntriesRaw<'_, R<'a>>,
        abbrev: &gimli::Abbreviation,
        call_depth: usize,
    ) -> Sure<()> {
        let mut ranges = RangeAttrs::default();
        let mut inlined = Inlined {
            name: DieName::None,
            call_file: None,
            call_line: 0,
            call_column: 0,
        };
        for spec in abbrev.attributes() {
            let attr = entries.read_attribute(*spec)?;
            ranges.read(unit, &attr)?;
            inlined.name.take(unit, names, &attr)?;
            match attr.name() {
                gimli::DW_AT_call_file => {
                    // DWARF 5 numbers files from 0; before, 0 means none.
                    if let gimli::AttributeValue::FileIndex(i) = attr.value()
                        && (i > 0 || unit.header.version() >= 5)
                    {
                        inlined.call_file = u32::try_from(i).ok();
                    }
                }
                gimli::DW_AT_call_line => {
                    inlined.call_line = attr.udata_value().unwrap_or(0) as u32;
                }
                gimli::DW_AT_call_column => {
                    inlined.call_column = attr.udata_value().unwrap_or(0) as u32;
                }
                _ => {}
            }
        }
        // The guard bounds the depth; a unit cannot hold 2^32 DIEs.
        let call_depth = u32::try_from(call_depth).map_err(|_| Unsure)?;
        let function = u32::try_from(self.inlined.len()).map_err(|_| Unsure)?;
        self.inlined.push(inlined);
        let addresses = &mut self.addresses;
        ranges.each(unit, |range| {
            addresses.push(InlinedFunctionAddress {
                range,
                call_depth,
                function,
            })
        })?;
        Ok(())
    }

    /// The inlined subroutines covering `probe`, outermost first: one
    /// binary search per call depth, each after the previous hit.
    fn inlined_chain(&self, probe: u64) -> SmallVec<[&Inlined<'a>; 16]> {
        let mut chain = SmallVec::new();
        let mut rest = &self.addresses[..];
        loop {
            let Ok(depth) = u32::try_from(chain.len()) else {
                return chain;
            };
            let found = rest.binary_search_by(|a| {
                if a.call_depth != depth {
                    a.call_depth.cmp(&depth)
                } else if a.range.begin > probe {
                    Ordering::Greater
                } else if a.range.end <= probe {
                    Ordering::Less
                } else {
                    Ordering::Equal
                }
            });
            let Ok(i) = found else { return chain };
            chain.push(&self.inlined[rest[i].function as usize]);
            rest = &rest[i + 1..];
        }
    }
}

/// [`name_attr`] from the start of a chain of links, remembered by the
/// `.debug_info` offset it starts at (where the same start always leads to
/// the same name).
fn linked_name<'a>(
    unit: UnitRef<'_, R<'a>>,
    names: &Names<'_, '_, 'a>,
    value: gimli::AttributeValue<R<'a>>,
) -> Sure<Option<R<'a>>> {
    let start = match value {
        gimli::AttributeValue::UnitRef(offset) => {
            offset.to_debug_info_offset(&unit.header).map(|o| o.0)
        }
        gimli::AttributeValue::DebugInfoRef(offset) => Some(offset.0),
        _ => None,
    };
    let Some(start) = start else {
        return name_attr(unit, names, value, NAME_LINKS);
    };
    let engine = names.0;
    if let Some(&name) = engine.names.borrow().get(&start) {
        return Ok(name);
    }
    let name = name_attr(unit, names, value, NAME_LINKS)?;
    let mut kept = engine.names.borrow_mut();
    if kept.len() >= NAMES_MAX {
        kept.clear();
    }
    kept.insert(start, name);
    Ok(name)
}

/// The name an `DW_AT_abstract_origin`/`DW_AT_specification` leads to.
fn name_attr<'a>(
    unit: UnitRef<'_, R<'a>>,
    names: &Names<'_, '_, 'a>,
    value: gimli::AttributeValue<R<'a>>,
    links: usize,
) -> Sure<Option<R<'a>>> {
    if links == 0 {
        return Ok(None);
    }
    match value {
        gimli::AttributeValue::UnitRef(offset) => name_entry(unit, names, offset, links),
        // In another unit or file: addr2line finds those units in its index.
        gimli::AttributeValue::DebugInfoRef(target) => {
            let (engine, guard) = *names;
            let index = guard.unit_at(target.0).ok_or(Unsure)?;
            let other = engine.unit(unit.dwarf, guard, index)?;
            let offset = target.to_unit_offset(&other.header).ok_or(Unsure)?;
            name_entry(UnitRef::new(unit.dwarf, &other), names, offset, links)
        }
        gimli::AttributeValue::DebugInfoRefSup(_) if unit.dwarf.sup.is_some() => Err(Unsure),
        _ => Ok(None),
    }
}

fn name_entry<'a>(
    unit: UnitRef<'_, R<'a>>,
    names: &Names<'_, '_, 'a>,
    offset: gimli::UnitOffset<usize>,
    links: usize,
) -> Sure<Option<R<'a>>> {
    let mut entries = unit.entries_raw(Some(offset))?;
    let abbrev = entries.read_abbreviation()?.ok_or(Unsure)?;
    let mut name = None;
    let mut next = None;
    for spec in abbrev.attributes() {
        let attr = entries.read_attribute(*spec)?;
        match attr.name() {
            gimli::DW_AT_linkage_name | gimli::DW_AT_MIPS_linkage_name => {
                if let Ok(n) = unit.attr_string(attr.value()) {
                    return Ok(Some(n));
                }
            }
            gimli::DW_AT_name => {
                if let Ok(n) = unit.attr_string(attr.value()) {
                    name = Some(n);
                }
            }
            gimli::DW_AT_abstract_origin | gimli::DW_AT_specification => next = Some(attr.value()),
            _ => {}
        }
    }
    match (name, next) {
        (Some(n), _) => Ok(Some(n)),
        (None, Some(next)) => name_attr(unit, names, next, links - 1),
        (None, None) => Ok(None),
    }
}

/// A line-table row; addr2line's `LineRow`.
#[derive(Clone, Copy)]
struct LineRow {
    address: u64,
    file_index: u64,
    line: u32,
    column: u32,
}

/// addr2line's `LineSequence`.
struct LineSequence {
    start: u64,
    end: u64,
    rows: Box<[LineRow]>,
}

/// Sequences as the rows of a line program make them (addr2line's way).
#[derive(Default)]
struct Table {
    sequences: Vec<LineSequence>,
    /// Rows of the sequence being read.
    current: Vec<LineRow>,
}

impl Table {
    fn take(&mut self, row: Row) {
        if row.end_sequence {
            if let Some(start) = self.current.first().map(|r| r.address) {
                let end = row.address;
                // One allocation of the right size; `current` keeps its room.
                let rows: Box<[LineRow]> = self.current.as_slice().into();
                self.current.clear();
                if start < end {
                    self.sequences.push(LineSequence { start, end, rows });
                }
            }
            return;
        }
        let next = LineRow {
            address: row.address,
            file_index: row.file,
            line: row.line as u32,
            column: row.column as u32,
        };
        // A row at the same address replaces the one before.
        match self.current.last_mut() {
            Some(last) if last.address == next.address => *last = next,
            _ => self.current.push(next),
        }
    }
}

/// The unit's line table and file names, as addr2line keeps them.
struct Lines {
    files: Vec<Text>,
    sequences: Vec<LineSequence>,
}

impl Lines {
    fn parse<'a>(
        unit: UnitRef<'_, R<'a>>,
        program: gimli::IncompleteLineProgram<R<'a>>,
    ) -> Sure<Lines> {
        let mut table = Table::default();
        let mut gimli_rows;
        let header = match line_program::rows(program.header(), |row| table.take(row)) {
            Err(Malformed) => return Err(Unsure),
            Ok(Outcome::Done) => program.header(),
            // It adds files to the header: gimli's rows, with gimli's header.
            Ok(Outcome::NotHandled) => {
                table = Table::default();
                gimli_rows = program.clone().rows();
                while let Some((_, row)) = gimli_rows.next_row()? {
                    table.take(Row::of(row));
                }
                gimli_rows.header()
            }
        };
        let mut sequences = table.sequences;
        sequences.sort_unstable_by_key(|s| s.start);
        let mut files = Vec::new();
        match header.file(0) {
            Some(file) => files.push(file_path(unit, file, header)?.into()),
            // DWARF 4 and older number files from 1.
            None => files.push(Text::from("")),
        }
        let mut index = 1;
        while let Some(file) = header.file(index) {
            files.push(file_path(unit, file, header)?.into());
            index += 1;
        }
        files.shrink_to_fit();
        sequences.shrink_to_fit();
        Ok(Lines { files, sequences })
    }

    fn file(&self, index: u64) -> Option<Text> {
        self.files.get(usize::try_from(index).ok()?).cloned()
    }

    /// The row covering `probe`.
    fn find(&self, probe: u64) -> Option<LineRow> {
        let s = self
            .sequences
            .binary_search_by(|s| {
                if probe < s.start {
                    Ordering::Greater
                } else if probe >= s.end {
                    Ordering::Less
                } else {
                    Ordering::Equal
                }
            })
            .ok()?;
        let rows = &self.sequences[s].rows;
        match rows.binary_search_by(|r| r.address.cmp(&probe)) {
            Ok(i) => Some(rows[i]),
            Err(0) => None,
            Err(i) => Some(rows[i - 1]),
        }
    }
}

/// A file entry's path: the unit's directory, the entry's directory (index
/// 0 is the unit's own) and its name, each absolute part replacing what
/// came before (addr2line's rendering, for the same strings).
pub(super) fn file_path<'a>(
    unit: UnitRef<'_, R<'a>>,
    file: &gimli::FileEntry<R<'a>>,
    header: &gimli::LineProgramHeader<R<'a>>,
) -> Sure<String> {
    let mut path = match &unit.comp_dir {
        Some(dir) => dir.to_string_lossy().into_owned(),
        None => String::new(),
    };
    if file.directory_index() != 0
        && let Some(dir) = file.directory(header)
    {
        push_path(&mut path, &unit.attr_string(dir)?.to_string_lossy());
    }
    push_path(
        &mut path,
        &unit.attr_string(file.path_name())?.to_string_lossy(),
    );
    Ok(path)
}

fn push_path(path: &mut String, part: &str) {
    let unix_root = |p: &str| p.starts_with('/') || p.get(1..3) == Some(":/");
    let windows_root = |p: &str| p.starts_with('\\') || p.get(1..3) == Some(":\\");
    if unix_root(part) || windows_root(part) {
        *path = part.to_owned();
        return;
    }
    let separator = if windows_root(path) { '\\' } else { '/' };
    if !path.is_empty() && !path.ends_with(separator) {
        path.push(separator);
    }
    path.push_str(part);
}

#[cfg(test)]
mod tests {
    use super::push_path;

    /// addr2line's joining rule: an absolute part (either style) replaces
    /// the path; otherwise the path's own style's separator joins them.
    #[test]
    fn paths_join_in_the_style_of_the_directory() {
        let join = |dir: &str, part: &str| {
            let mut path = dir.to_owned();
            push_path(&mut path, part);
            path
        };
        assert_eq!(join("/src", "a.c"), "/src/a.c");
        assert_eq!(join("/src/", "a.c"), "/src/a.c");
        assert_eq!(join("", "a.c"), "a.c");
        assert_eq!(join("/src", "/abs/a.c"), "/abs/a.c");
        assert_eq!(join("C:\\src", "a.c"), "C:\\src\\a.c");
        assert_eq!(join("C:\\src\\", "a.c"), "C:\\src\\a.c");
        assert_eq!(join("\\\\server\\share", "a.c"), "\\\\server\\share\\a.c");
        assert_eq!(join("C:/src", "a.c"), "C:/src/a.c");
        assert_eq!(join("/src", "D:\\x\\a.c"), "D:\\x\\a.c");
        assert_eq!(join("C:\\src", "E:/y/a.c"), "E:/y/a.c");
    }
}
