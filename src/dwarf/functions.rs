//! A unit's functions: the address ranges of its subprograms, and for the
//! one a lookup lands in, its inlined subroutines and their names.
//!
//! Ranges are read, sorted and searched as addr2line does (the same types
//! sorted from the same order, the same binary searches, so even
//! overlapping ranges give the same pick), and names follow the same
//! precedence and link limit. Nothing recurses: a hostile nesting depth
//! costs time, not stack. Following addr2line's design (Apache-2.0 OR
//! MIT); no code is copied.

use std::cmp::Ordering;
use std::sync::OnceLock;

use gimli::UnitRef;
use smallvec::SmallVec;

use super::die_walk::{DieWalk, Raw};
use super::lookup::{NAMES_MAX, Names, Within};
use super::ranges::{all_narrow, each_range, place};
use super::{Error, Sure};
use crate::base::{lock, search};
use crate::symbols::Name;

use super::Reader as R;

/// An abbreviation code with no declaration, where a DIE must be.
const NO_ENTRY: Error = Error::Malformed("DIE without abbreviation");

/// A DIE's address ranges as addr2line reads them (a unit's root's too).
#[derive(Default)]
pub(crate) struct RangeAttrs {
    low_pc: Option<u64>,
    high_pc: Option<u64>,
    size: Option<u64>,
    ranges_offset: Option<gimli::RangeListsOffset<usize>>,
}

impl RangeAttrs {
    /// Take `attr` if it is a range attribute.
    pub(crate) fn read<'a>(
        &mut self,
        unit: UnitRef<'_, R<'a>>,
        attr: &gimli::Attribute<R<'a>>,
    ) -> Sure<()> {
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

    /// [`Self::read`] for a value the fast walk read: false where gimli
    /// must read it (a `DW_AT_ranges` in a form other than `sec_offset` and
    /// `rnglistx`: gimli may read a data form as a section offset).
    fn take(&mut self, unit: UnitRef<'_, R<'_>>, name: gimli::DwAt, raw: Raw) -> Sure<bool> {
        use gimli::AttributeValue as V;
        let index = |i: u64| usize::try_from(i).map_err(|_| Error::Malformed("index"));
        match (name, raw) {
            (gimli::DW_AT_low_pc, Raw::Addr(a)) => self.low_pc = Some(a),
            (gimli::DW_AT_low_pc, Raw::AddrIndex(i)) => {
                self.low_pc = Some(unit.address(gimli::DebugAddrIndex(index(i)?))?)
            }
            (gimli::DW_AT_high_pc, Raw::Addr(a)) => self.high_pc = Some(a),
            (gimli::DW_AT_high_pc, Raw::AddrIndex(i)) => {
                self.high_pc = Some(unit.address(gimli::DebugAddrIndex(index(i)?))?)
            }
            // gimli's `udata_value`, as `Attribute::value` takes it.
            (gimli::DW_AT_high_pc, Raw::Data(size)) => self.size = Some(size),
            (gimli::DW_AT_high_pc, Raw::Sdata(size)) if size >= 0 => self.size = Some(size as u64),
            (gimli::DW_AT_ranges, Raw::SecOffset(o)) => {
                let raw = gimli::RawRangeListsOffset(index(o)?);
                self.ranges_offset = unit.attr_ranges_offset(V::RangeListsRef(raw))?;
            }
            (gimli::DW_AT_ranges, Raw::RngListIndex(i)) => {
                let i = gimli::DebugRngListsIndex(index(i)?);
                self.ranges_offset = unit.attr_ranges_offset(V::DebugRngListsIndex(i))?;
            }
            (gimli::DW_AT_ranges, _) => return Ok(false),
            _ => {}
        }
        Ok(true)
    }

    /// Whether a range list (`DW_AT_ranges`) gives the ranges.
    pub(crate) fn has_list(&self) -> bool {
        self.ranges_offset.is_some()
    }

    /// Call `f` with each non-empty range; false if there were none.
    pub(crate) fn each(
        &self,
        unit: UnitRef<'_, R<'_>>,
        mut f: impl FnMut(gimli::Range),
    ) -> Sure<bool> {
        let mut any = false;
        let mut add = |r: gimli::Range| {
            if r.begin < r.end {
                f(r);
                any = true;
            }
        };
        if let Some(offset) = self.ranges_offset {
            each_range(unit.dwarf, unit.unit, offset, add)?;
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
pub(crate) struct Functions {
    pub offsets: Vec<gimli::UnitOffset<usize>>,
    addresses: Vec<FunctionAddress>,
}

impl Functions {
    /// The unit's subprograms, and the depth of its deepest DIE children
    /// (as [`MAX_DEPTH`](super::units::MAX_DEPTH) counts it).
    pub(crate) fn parse(unit: UnitRef<'_, R<'_>>) -> Sure<(Functions, isize)> {
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
            let abbrev = entries.read_abbreviation()?.ok_or(NO_ENTRY)?;
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
            return Err(Error::Malformed("DIE tree"));
        }
        let deepest = walk.deepest();
        addresses.sort_unstable_by_key(|x| x.range.begin);
        // Kept for the run: no room to spare.
        offsets.shrink_to_fit();
        addresses.shrink_to_fit();
        Ok((Functions { offsets, addresses }, deepest))
    }

    /// The index of the subprogram covering `probe`.
    pub(crate) fn find(&self, probe: u64) -> Option<usize> {
        let i = search::binary_search_by(&self.addresses, |a| {
            place(a.range.begin, a.range.end, probe)
        })
        .ok()?;
        Some(self.addresses[i].function)
    }
}

/// A `DW_TAG_inlined_subroutine`: where it was called, and where its name
/// is. A function holds many inlined calls and a lookup meets few of them:
/// the name is read when a lookup first lands in one, and kept here for the
/// next (the function is in hand: no table to search, no lock to take).
pub(crate) struct Inlined {
    /// Where its name is: the unit offset its one `DW_AT_abstract_origin`
    /// points to, with [`LINK`] set, when that link alone names it (most
    /// inlined calls; the name is then the link's, shared by every call of
    /// the same function); else the DIE's own offset, read for the name.
    name_at: u32,
    /// [`NO_FILE`] for none (wider indexes name no file a unit can have).
    call_file: u32,
    pub call_line: u32,
    pub call_column: u32,
    /// Its name, once a lookup has landed in it.
    named: OnceLock<Option<Name>>,
}

/// Set in [`Inlined::name_at`] when it is the abstract origin's offset.
/// DIE offsets must lie below it (units below 2 GiB); an origin at or
/// above it is read through the DIE instead.
const LINK: u32 = 1 << 31;

/// [`Inlined::call_file`] when there is none.
const NO_FILE: u32 = u32::MAX;

impl Inlined {
    /// The inlined call whose DIE is at `die`, before its attributes.
    fn at(die: gimli::UnitOffset<usize>) -> Sure<Inlined> {
        Ok(Inlined {
            name_at: u32::try_from(die.0)
                .ok()
                .filter(|d| d & LINK == 0)
                .ok_or(Error::Malformed("unit size"))?,
            call_file: NO_FILE,
            call_line: 0,
            call_column: 0,
            named: OnceLock::new(),
        })
    }

    pub(crate) fn name<'a>(
        &self,
        unit: UnitRef<'_, R<'a>>,
        names: &Names<'_, 'a>,
    ) -> Sure<Option<Name>> {
        if let Some(name) = self.named.get() {
            return Ok(name.clone());
        }
        let at = gimli::UnitOffset((self.name_at & !LINK) as usize);
        let name = if self.name_at & LINK != 0 {
            followed_name(unit, names, gimli::AttributeValue::UnitRef(at))?
        } else {
            die_name(unit, names, at)?.name
        };
        Ok(self.named.get_or_init(|| name).clone())
    }

    /// The index of the file it was called from.
    pub(crate) fn call_file(&self) -> Option<u32> {
        (self.call_file != NO_FILE).then_some(self.call_file)
    }
}

/// A DIE read by [`die_name`].
struct NamedDie<'u, 'a> {
    name: Option<Name>,
    /// The entries after its attributes.
    entries: gimli::EntriesRaw<'u, R<'a>>,
    /// Its depth among them.
    depth: isize,
}

/// The DIE at `offset`, with its name.
fn die_name<'u, 'a>(
    unit: UnitRef<'u, R<'a>>,
    names: &Names<'_, 'a>,
    offset: gimli::UnitOffset<usize>,
) -> Sure<NamedDie<'u, 'a>> {
    let mut entries = unit.entries_raw(Some(offset))?;
    let depth = entries.next_depth();
    let abbrev = entries.read_abbreviation()?.ok_or(NO_ENTRY)?;
    let mut name = DieName::None;
    for spec in abbrev.attributes() {
        let attr = entries.read_attribute(*spec)?;
        name.take(unit, names, &attr)?;
    }
    Ok(NamedDie {
        name: name.resolve(unit, names)?,
        entries,
        depth,
    })
}

/// The name of a subprogram or inlined subroutine as its attributes give
/// it: its linkage name wins; its plain name, or the name its abstract
/// origin or specification leads to, only while it has none. The link is
/// followed once all attributes are read, unless a later one settles it.
pub(crate) enum DieName<'a> {
    None,
    Name(&'a [u8]),
    /// A name a link led to.
    Linked(Name),
    /// The name the link leads to; else the plain name that came after it.
    Link(Link, Option<&'a [u8]>),
}

/// Where a `DW_AT_abstract_origin` or `DW_AT_specification` points.
#[derive(Clone, Copy)]
pub(crate) enum Link {
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
        names: &Names<'_, 'a>,
        attr: &gimli::Attribute<R<'a>>,
    ) -> Sure<()> {
        use DieName::{Link as Linking, Linked, Name, None as Nothing};
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
                Linking(link, None) => {
                    *self = Linking(link, unit.attr_string(attr.value()).ok().map(|n| n.slice()));
                }
                _ => {}
            },
            gimli::DW_AT_abstract_origin | gimli::DW_AT_specification => {
                // A second link counts only when the first leads nowhere.
                if let Linking(first, None) = *self {
                    *self = match linked_name(unit, names, first.value())? {
                        Some(n) => Linked(n),
                        None => Nothing,
                    };
                }
                if let Nothing = *self {
                    *self = match Link::of(&attr.value()) {
                        Some(link) => Linking(link, None),
                        None => match linked_name(unit, names, attr.value())? {
                            Some(n) => Linked(n),
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
    pub(crate) fn resolve(
        self,
        unit: UnitRef<'_, R<'a>>,
        names: &Names<'_, 'a>,
    ) -> Sure<Option<Name>> {
        Ok(match self {
            DieName::None => None,
            DieName::Name(n) => Some(names.name(n)),
            DieName::Linked(n) => Some(n),
            DieName::Link(link, then) => match linked_name(unit, names, link.value())? {
                Some(n) => Some(n),
                None => then.map(|n| names.name(n)),
            },
        })
    }
}

/// One range of an inlined subroutine; addr2line's `InlinedFunctionAddress`.
struct InlinedFunctionAddress {
    range: gimli::Range,
    call_depth: u32,
    function: u32,
}

/// An [`InlinedFunctionAddress`] as it is kept when all of its function's
/// ranges lie within 4 GiB above the lowest (any real program's): offsets
/// from that base, two thirds of the room, for every inlined range of
/// every function a lookup has read.
struct NearAddress {
    begin: u32,
    end: u32,
    call_depth: u32,
    function: u32,
}

/// A function's inlined ranges, sorted by call depth, then range start, as
/// addr2line sorts them.
enum Addresses {
    Near {
        base: u64,
        ranges: Box<[NearAddress]>,
    },
    Far(Box<[InlinedFunctionAddress]>),
}

impl Addresses {
    /// The ranges of `gathered`, sorted as addr2line sorts them;
    /// `gathered` is left empty (its room kept).
    fn new(gathered: &mut Vec<InlinedFunctionAddress>) -> Addresses {
        // One integer compared for the pair: the same comparisons, so the
        // same order, ties included.
        gathered
            .sort_unstable_by_key(|a| u128::from(a.call_depth) << 64 | u128::from(a.range.begin));
        let base = gathered.iter().map(|a| a.range.begin).min().unwrap_or(0);
        let near = all_narrow(gathered, |a| {
            Some(NearAddress {
                begin: u32::try_from(a.range.begin - base).ok()?,
                end: u32::try_from(a.range.end.checked_sub(base)?).ok()?,
                call_depth: a.call_depth,
                function: a.function,
            })
        });
        match near {
            Some(ranges) => {
                gathered.clear();
                Addresses::Near { base, ranges }
            }
            None => Addresses::Far(gathered.drain(..).collect()),
        }
    }
}

/// The subprogram holding the address, with its inlined subroutines.
pub(crate) struct Function {
    /// As answers carry it, made when the function is parsed.
    pub name: Option<Name>,
    inlined: Box<[Inlined]>,
    addresses: Addresses,
}

/// Where a function's inlined calls are gathered while it is parsed, kept
/// from one parse to the next: each function's lists are then made once,
/// at their size.
#[derive(Default)]
pub(crate) struct Gathered {
    inlined: Vec<Inlined>,
    addresses: Vec<InlinedFunctionAddress>,
    /// The DIE depth of each enclosing inlined subroutine.
    open: Vec<isize>,
}

/// Name lookups through `DW_AT_abstract_origin`/`DW_AT_specification`
/// follow at most this many links (addr2line's limit).
const NAME_LINKS: usize = 16;

impl Function {
    pub(crate) fn parse<'a>(
        unit: UnitRef<'_, R<'a>>,
        names: &Names<'_, 'a>,
        offset: gimli::UnitOffset<usize>,
        gathered: &mut Gathered,
    ) -> Sure<Function> {
        Function::parse_with(unit, names, offset, gathered, true)
    }

    /// [`Self::parse`], with the fast walk or (`fast` false) gimli alone.
    pub(crate) fn parse_with<'a>(
        unit: UnitRef<'_, R<'a>>,
        names: &Names<'_, 'a>,
        offset: gimli::UnitOffset<usize>,
        gathered: &mut Gathered,
        fast: bool,
    ) -> Sure<Function> {
        let NamedDie {
            name,
            mut entries,
            depth,
        } = die_name(unit, names, offset)?;
        // The fast walk steps over the DIEs that are not inlined calls and
        // reads the attributes of those that are; where it cannot, gimli
        // reads the whole subtree again.
        gathered.clear();
        if !(fast
            && gathered.walk_children(unit, entries.next_offset(), entries.next_depth() > depth)?)
        {
            gathered.clear();
            gathered.children(unit, &mut entries, depth)?;
        }
        Ok(Function {
            name,
            inlined: gathered.inlined.drain(..).collect(),
            addresses: Addresses::new(&mut gathered.addresses),
        })
    }
}

#[cfg(test)]
impl Function {
    /// Everything parsed, as text to compare.
    pub(crate) fn dump(&self) -> String {
        let inlined: Vec<_> = self
            .inlined
            .iter()
            .map(|i| (i.name_at, i.call_file, i.call_line, i.call_column))
            .collect();
        let addresses: Vec<_> = match &self.addresses {
            Addresses::Near { base, ranges } => ranges
                .iter()
                .map(|a| {
                    (
                        base + u64::from(a.begin),
                        base + u64::from(a.end),
                        a.call_depth,
                        a.function,
                    )
                })
                .collect(),
            Addresses::Far(ranges) => ranges
                .iter()
                .map(|a| (a.range.begin, a.range.end, a.call_depth, a.function))
                .collect(),
        };
        format!("{:?} {inlined:?} {addresses:?}", self.name)
    }
}

impl Function {
    /// The inlined subroutines covering `probe`, outermost first: one
    /// binary search per call depth, each after the previous hit.
    pub(crate) fn inlined_chain(&self, probe: u64) -> SmallVec<[&Inlined; 16]> {
        match &self.addresses {
            Addresses::Near { base, ranges } => {
                // Every range begins at or above the base.
                let probe = probe.checked_sub(*base);
                self.chain(ranges, |a| {
                    let at = probe.map_or(Ordering::Greater, |p| {
                        place(a.begin.into(), a.end.into(), p)
                    });
                    (a.call_depth, at, a.function)
                })
            }
            Addresses::Far(ranges) => self.chain(ranges, |a| {
                let at = place(a.range.begin, a.range.end, probe);
                (a.call_depth, at, a.function)
            }),
        }
    }

    /// [`Self::inlined_chain`] over `ranges`, each seen by `seen` as its
    /// call depth, where it lies from the probe, and its inlined call.
    fn chain<'f, A>(
        &'f self,
        ranges: &[A],
        seen: impl Fn(&A) -> (u32, Ordering, u32),
    ) -> SmallVec<[&'f Inlined; 16]> {
        let mut chain = SmallVec::new();
        let mut rest = ranges;
        loop {
            let Ok(depth) = u32::try_from(chain.len()) else {
                return chain;
            };
            let found = search::binary_search_by(rest, |a| {
                let (call_depth, at, _) = seen(a);
                if call_depth != depth {
                    call_depth.cmp(&depth)
                } else {
                    at
                }
            });
            let Ok(i) = found else { return chain };
            chain.push(&self.inlined[seen(&rest[i]).2 as usize]);
            rest = &rest[i + 1..];
        }
    }
}

/// An inlined call's attributes as [`Gathered::inlined`] takes them, from
/// the values the fast walk reads (see [`Raw`]).
struct InlinedAttrs {
    ranges: RangeAttrs,
    inlined: Inlined,
    origin: Option<u32>,
    naming: usize,
    /// What went wrong first: an error, or `None` where gimli must read the
    /// DIE (a value the fast walk does not read as gimli does).
    failed: Option<Option<Error>>,
}

impl InlinedAttrs {
    fn new(die: gimli::UnitOffset<usize>) -> Sure<InlinedAttrs> {
        Ok(InlinedAttrs {
            ranges: RangeAttrs::default(),
            inlined: Inlined::at(die)?,
            origin: None,
            naming: 0,
            failed: None,
        })
    }

    /// One attribute the fast walk read.
    fn take(&mut self, unit: UnitRef<'_, R<'_>>, name: gimli::DwAt, raw: Raw) {
        if self.failed.is_some() {
            return;
        }
        match name {
            gimli::DW_AT_low_pc | gimli::DW_AT_high_pc | gimli::DW_AT_ranges => {
                match self.ranges.take(unit, name, raw) {
                    Ok(true) => {}
                    Ok(false) => self.failed = Some(None),
                    Err(e) => self.failed = Some(Some(e)),
                }
            }
            _ => self.take_call(unit.header.version(), name, raw),
        }
    }

    /// One attribute of the call's name and place (not its ranges), as
    /// gimli's `Attribute::value` and `udata_value` take it.
    fn take_call(&mut self, version: u16, name: gimli::DwAt, raw: Raw) {
        let udata = match raw {
            Raw::Data(v) => Some(v),
            Raw::Sdata(v) => u64::try_from(v).ok(),
            _ => None,
        };
        match name {
            gimli::DW_AT_linkage_name
            | gimli::DW_AT_MIPS_linkage_name
            | gimli::DW_AT_name
            | gimli::DW_AT_specification => self.naming += 1,
            gimli::DW_AT_abstract_origin => {
                self.naming += 1;
                if let Raw::Ref(o) = raw {
                    // No DIE lies at offset 0: such a link is read through
                    // the DIE, as every other odd one.
                    self.origin = u32::try_from(o).ok().filter(|&o| o != 0 && o & LINK == 0);
                }
            }
            gimli::DW_AT_call_file => {
                // DWARF 5 numbers files from 0; before, 0 means none.
                if let Some(i) = udata
                    && (i > 0 || version >= 5)
                {
                    self.inlined.call_file = u32::try_from(i).unwrap_or(NO_FILE);
                }
            }
            gimli::DW_AT_call_line => self.inlined.call_line = udata.unwrap_or(0) as u32,
            gimli::DW_AT_call_column => self.inlined.call_column = udata.unwrap_or(0) as u32,
            _ => {}
        }
    }
}

impl Gathered {
    fn clear(&mut self) {
        self.inlined.clear();
        self.addresses.clear();
        self.open.clear();
    }

    /// [`Self::children`] by the fast walk, the children starting at
    /// `first` (when `has_children`); false where the walk could not read
    /// them all as gimli does.
    fn walk_children<'a>(
        &mut self,
        unit: UnitRef<'_, R<'a>>,
        first: gimli::UnitOffset<usize>,
        has_children: bool,
    ) -> Sure<bool> {
        if !has_children {
            return Ok(true);
        }
        let header = &unit.header;
        let Ok(input) = header.range_from(first..) else {
            return Ok(false);
        };
        let mut walk = DieWalk::subtree(header, &unit.abbreviations, input.slice(), first.0, |a| {
            matches!(
                a.tag(),
                gimli::DW_TAG_subprogram | gimli::DW_TAG_inlined_subroutine
            )
        });
        // The depth of a nested subprogram whose DIEs are stepped over.
        let mut nested = None;
        while let Some(die) = walk.next_die() {
            if let Some(d) = nested {
                if die.depth > d {
                    continue;
                }
                nested = None;
            }
            while self.open.last().is_some_and(|&d| die.depth <= d) {
                self.open.pop();
            }
            if !die.wanted {
                continue;
            }
            let Some(abbrev) = unit.abbreviations.get(die.code) else {
                return Ok(false);
            };
            if abbrev.tag() == gimli::DW_TAG_subprogram {
                nested = Some(die.depth);
                continue;
            }
            let mut attrs = InlinedAttrs::new(gimli::UnitOffset(die.offset))?;
            if !walk.attributes(&die, abbrev, |name, raw| attrs.take(unit, name, raw)) {
                return Ok(false);
            }
            match attrs.failed {
                None => {}
                Some(None) => return Ok(false),
                Some(Some(e)) => return Err(e),
            }
            let call_depth = self.open.len();
            self.push(unit, attrs, call_depth)?;
            self.open.push(die.depth);
        }
        Ok(walk.closed() && !walk.failed())
    }

    /// The subprogram's descendants, depth first, without recursion.
    /// Nested subprograms are skipped with all they hold.
    fn children<'a>(
        &mut self,
        unit: UnitRef<'_, R<'a>>,
        entries: &mut gimli::EntriesRaw<'_, R<'a>>,
        depth: isize,
    ) -> Sure<()> {
        loop {
            let offset_depth = entries.next_depth();
            if offset_depth <= depth {
                return Ok(());
            }
            while self.open.last().is_some_and(|&d| offset_depth <= d) {
                self.open.pop();
            }
            let die = entries.next_offset();
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
                    self.inlined(unit, die, entries, abbrev, self.open.len())?;
                    self.open.push(offset_depth);
                }
                _ => entries.skip_attributes(abbrev.attributes())?,
            }
        }
    }

    fn inlined<'a>(
        &mut self,
        unit: UnitRef<'_, R<'a>>,
        die: gimli::UnitOffset<usize>,
        entries: &mut gimli::EntriesRaw<'_, R<'a>>,
        abbrev: &gimli::Abbreviation,
        call_depth: usize,
    ) -> Sure<()> {
        let mut attrs = InlinedAttrs::new(die)?;
        for spec in abbrev.attributes() {
            let attr = entries.read_attribute(*spec)?;
            attrs.ranges.read(unit, &attr)?;
            attrs.take_call(
                unit.header.version(),
                attr.name(),
                Raw::of(&attr.raw_value()),
            );
        }
        self.push(unit, attrs, call_depth)
    }

    /// The inlined call `attrs` read, at `call_depth`, with its ranges.
    fn push(
        &mut self,
        unit: UnitRef<'_, R<'_>>,
        attrs: InlinedAttrs,
        call_depth: usize,
    ) -> Sure<()> {
        let InlinedAttrs {
            ranges,
            mut inlined,
            origin,
            naming,
            ..
        } = attrs;
        // The name comes from the link alone when it is the only attribute
        // that names (see `DieName::take`).
        if let (1, Some(origin)) = (naming, origin) {
            inlined.name_at = origin | LINK;
        }
        // Depth is bounded before; a unit cannot hold 2^32 DIEs.
        let too_many = |_| Error::Malformed("DIE tree");
        let call_depth = u32::try_from(call_depth).map_err(too_many)?;
        let function = u32::try_from(self.inlined.len()).map_err(too_many)?;
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
}

/// [`followed_name`], remembered by the `.debug_info` offset the chain
/// starts at (where the same start always leads to the same name).
fn linked_name<'a>(
    unit: UnitRef<'_, R<'a>>,
    names: &Names<'_, 'a>,
    value: gimli::AttributeValue<R<'a>>,
) -> Sure<Option<Name>> {
    let start = match value {
        gimli::AttributeValue::UnitRef(offset) => {
            offset.to_debug_info_offset(&unit.header).map(|o| o.0)
        }
        gimli::AttributeValue::DebugInfoRef(offset) => Some(offset.0),
        _ => None,
    };
    let Some(start) = start else {
        return followed_name(unit, names, value);
    };
    let key = (names.within.tag(), start);
    if let Some(name) = lock(&names.engine.names).get(&key) {
        return Ok(name.clone());
    }
    let name = followed_name(unit, names, value)?;
    let mut kept = lock(&names.engine.names);
    crate::base::insert_bounded(&mut kept, NAMES_MAX, key, name.clone());
    Ok(name)
}

/// [`name_attr`] from the start of a chain of links, as answers carry it.
fn followed_name<'a>(
    unit: UnitRef<'_, R<'a>>,
    names: &Names<'_, 'a>,
    value: gimli::AttributeValue<R<'a>>,
) -> Sure<Option<Name>> {
    Ok(name_attr(unit, names, value, NAME_LINKS)?.map(|n| names.name(n.slice())))
}

/// The name an `DW_AT_abstract_origin`/`DW_AT_specification` leads to.
pub(crate) fn name_attr<'a>(
    unit: UnitRef<'_, R<'a>>,
    names: &Names<'_, 'a>,
    value: gimli::AttributeValue<R<'a>>,
    links: usize,
) -> Sure<Option<R<'a>>> {
    if links == 0 {
        return Ok(None);
    }
    match value {
        gimli::AttributeValue::UnitRef(offset) => name_entry(unit, names, offset, links),
        // In another unit of the same file, or in the supplementary file.
        gimli::AttributeValue::DebugInfoRef(target) => names.other_unit(unit, target, links),
        gimli::AttributeValue::DebugInfoRefSup(target) if names.engine.has_sup() => {
            let names = Names {
                within: Within::Sup,
                ..*names
            };
            names.other_unit(unit, target, links)
        }
        _ => Ok(None),
    }
}

pub(crate) fn name_entry<'a>(
    unit: UnitRef<'_, R<'a>>,
    names: &Names<'_, 'a>,
    offset: gimli::UnitOffset<usize>,
    links: usize,
) -> Sure<Option<R<'a>>> {
    let mut entries = unit.entries_raw(Some(offset))?;
    let abbrev = entries.read_abbreviation()?.ok_or(NO_ENTRY)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Inlined ranges by call depth, then start, as addr2line sorts them.
    fn ranges(base: u64) -> Vec<InlinedFunctionAddress> {
        [
            (0x10, 0x40, 0, 0),
            (0x50, 0x60, 0, 1),
            (0x18, 0x20, 1, 2),
            (0x20, 0x30, 1, 3),
            (0x55, 0x58, 1, 5),
            (0x22, 0x24, 2, 4),
        ]
        .into_iter()
        .map(
            |(begin, end, call_depth, function)| InlinedFunctionAddress {
                range: gimli::Range {
                    begin: base + begin,
                    end: base + end,
                },
                call_depth,
                function,
            },
        )
        .collect()
    }

    fn function(addresses: Addresses) -> Function {
        let inlined = (0..6)
            .map(|die| Inlined {
                name_at: die,
                call_file: NO_FILE,
                call_line: 0,
                call_column: 0,
                named: OnceLock::new(),
            })
            .collect();
        Function {
            name: None,
            inlined,
            addresses,
        }
    }

    /// A parsed function keeps one of these per inlined call for the run,
    /// its name included: the name's room is paid for by packing the two
    /// places a name can be read from into one field.
    #[test]
    fn an_inlined_call_takes_32_bytes() {
        assert_eq!(std::mem::size_of::<Inlined>(), 32);
    }

    fn chain(f: &Function, probe: u64) -> Vec<u32> {
        f.inlined_chain(probe).iter().map(|i| i.name_at).collect()
    }

    /// Ranges kept as offsets answer as the full ranges do, below the base
    /// included; a function whose ranges spread over more than 4 GiB keeps
    /// them whole.
    #[test]
    fn near_and_far_ranges_give_the_same_chains() {
        let base = 0x40_0000;
        let near = function(Addresses::new(&mut ranges(base)));
        assert!(matches!(near.addresses, Addresses::Near { .. }));
        let far = function(Addresses::Far(ranges(base).into_iter().collect()));
        for probe in (0..0x70).map(|p| base + p).chain([0, base - 1, u64::MAX]) {
            assert_eq!(chain(&near, probe), chain(&far, probe), "at {probe:#x}");
        }
        assert_eq!(chain(&near, base + 0x23), [0, 3, 4]);
        assert_eq!(chain(&near, base + 0x56), [1, 5]);
        let mut spread = ranges(base);
        spread.push(InlinedFunctionAddress {
            range: gimli::Range {
                begin: base + (1 << 33),
                end: base + (1 << 33) + 1,
            },
            call_depth: 3,
            function: 0,
        });
        assert!(matches!(Addresses::new(&mut spread), Addresses::Far(_)));
        assert!(spread.is_empty());
    }
}
