//! A fast walk over a unit's DIEs, for passes that look at few of them.
//!
//! gimli reads each attribute to skip it. Here each abbreviation is turned
//! once into steps: one add over the attributes of abbreviations whose
//! forms all have fixed sizes (most DIEs), else a short list of runs and
//! variable-size forms. A unit's functions are indexed with it (measuring
//! its nesting depth on the way) and the global-variable index finds
//! variables with it; either reads the few DIEs it wants with gimli. A
//! function's subtree is walked for its inlined calls, whose attributes the
//! walk reads itself (see [`Raw`]): they are most of what a function holds.

use gimli::{Endianity, Reader, ReaderOffset};

/// Size of an attribute form when it is fixed (as gimli's own table).
#[allow(non_upper_case_globals)]
fn form_size(form: gimli::DwForm, encoding: gimli::Encoding) -> Option<usize> {
    use gimli::constants::*;
    Some(match form {
        DW_FORM_addr => usize::from(encoding.address_size),
        DW_FORM_implicit_const | DW_FORM_flag_present => 0,
        DW_FORM_data1 | DW_FORM_flag | DW_FORM_strx1 | DW_FORM_ref1 | DW_FORM_addrx1 => 1,
        DW_FORM_data2 | DW_FORM_ref2 | DW_FORM_addrx2 | DW_FORM_strx2 => 2,
        DW_FORM_addrx3 | DW_FORM_strx3 => 3,
        DW_FORM_data4 | DW_FORM_ref_sup4 | DW_FORM_ref4 | DW_FORM_strx4 | DW_FORM_addrx4 => 4,
        DW_FORM_data8 | DW_FORM_ref8 | DW_FORM_ref_sig8 | DW_FORM_ref_sup8 => 8,
        DW_FORM_data16 => 16,
        DW_FORM_sec_offset | DW_FORM_GNU_ref_alt | DW_FORM_strp | DW_FORM_strp_sup
        | DW_FORM_GNU_strp_alt | DW_FORM_line_strp => usize::from(encoding.format.word_size()),
        DW_FORM_ref_addr if encoding.version == 2 => usize::from(encoding.address_size),
        DW_FORM_ref_addr => usize::from(encoding.format.word_size()),
        _ => return None,
    })
}

/// How to step over one DIE's attributes: runs of fixed-size forms merged,
/// the common variable-size forms sorted by how they are skipped.
#[derive(Clone, Copy)]
enum Step {
    Fixed(usize),
    /// A LEB128 number.
    Leb,
    /// A block whose length is a ULEB128 (`block`, `exprloc`).
    LebBlock,
    /// A NUL-terminated string.
    Str,
    /// Any other form (blocks with fixed-size lengths, `indirect`).
    Variable(gimli::DwForm),
}

/// The step for a form that has no fixed size.
#[allow(non_upper_case_globals)]
fn variable_step(form: gimli::DwForm) -> Step {
    use gimli::constants::*;
    match form {
        DW_FORM_udata
        | DW_FORM_sdata
        | DW_FORM_ref_udata
        | DW_FORM_strx
        | DW_FORM_GNU_str_index
        | DW_FORM_addrx
        | DW_FORM_GNU_addr_index
        | DW_FORM_loclistx
        | DW_FORM_rnglistx => Step::Leb,
        DW_FORM_block | DW_FORM_exprloc => Step::LebBlock,
        DW_FORM_string => Step::Str,
        _ => Step::Variable(form),
    }
}

/// The steps over one abbreviation's attributes.
fn steps_for(abbrev: &gimli::Abbreviation, encoding: gimli::Encoding, steps: &mut Vec<Step>) {
    let mut run = 0usize;
    for spec in abbrev.attributes() {
        match form_size(spec.form(), encoding) {
            Some(n) => run += n,
            None => {
                if run > 0 {
                    steps.push(Step::Fixed(run));
                    run = 0;
                }
                steps.push(variable_step(spec.form()));
            }
        }
    }
    if run > 0 {
        steps.push(Step::Fixed(run));
    }
}

/// Codes below this are cached in a table; others looked up each time.
const DENSE_CODES: u64 = 1 << 14;

/// What the walk knows about an abbreviation code.
#[derive(Clone, Copy, Default)]
struct Entry {
    kind: Kind,
    has_children: bool,
    /// The walk's caller wants DIEs of this abbreviation.
    wanted: bool,
    /// [`Kind::Fixed`]: the size of the attributes; [`Kind::Steps`]: where
    /// its steps start in the step table.
    at: u32,
    /// [`Kind::Steps`]: how many.
    len: u32,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum Kind {
    #[default]
    Unknown,
    Fixed,
    Steps,
}

/// A cursor over a unit's DIE bytes.
struct Walk<'d> {
    data: &'d [u8],
    pos: usize,
    big_endian: bool,
}

impl Walk<'_> {
    #[inline(always)]
    fn steps(&mut self, steps: &[Step], encoding: gimli::Encoding) -> bool {
        for step in steps {
            let ok = match *step {
                Step::Fixed(n) => self.skip(n),
                Step::Leb => self.skip_leb(),
                Step::LebBlock => match self.uleb().map(usize::try_from) {
                    Some(Ok(n)) => self.skip(n),
                    _ => false,
                },
                Step::Str => match memchr::memchr(0, &self.data[self.pos.min(self.data.len())..]) {
                    Some(n) => self.skip(n + 1),
                    None => false,
                },
                Step::Variable(form) => self.variable(form, encoding),
            };
            if !ok {
                return false;
            }
        }
        true
    }

    /// Step over a LEB128 number of any length, unread (as gimli's
    /// `skip_leb128`).
    #[inline]
    fn skip_leb(&mut self) -> bool {
        while let Some(&byte) = self.data.get(self.pos) {
            self.pos += 1;
            if byte & 0x80 == 0 {
                return true;
            }
        }
        false
    }

    #[inline]
    fn skip(&mut self, n: usize) -> bool {
        match self.pos.checked_add(n) {
            Some(end) if end <= self.data.len() => {
                self.pos = end;
                true
            }
            _ => false,
        }
    }

    fn fixed(&mut self, n: usize) -> Option<u64> {
        let bytes = self.data.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        let mut v = 0u64;
        if self.big_endian {
            for &b in bytes {
                v = v << 8 | u64::from(b);
            }
        } else {
            for &b in bytes.iter().rev() {
                v = v << 8 | u64::from(b);
            }
        }
        Some(v)
    }

    /// An unsigned LEB128 number as gimli reads it: `None` where gimli
    /// fails (a tenth byte other than 0 or 1, or the bytes ending).
    fn uleb(&mut self) -> Option<u64> {
        let mut result = 0u64;
        let mut shift = 0u32;
        loop {
            let byte = *self.data.get(self.pos)?;
            self.pos += 1;
            if shift == 63 {
                return (byte <= 1).then_some(result | u64::from(byte) << 63);
            }
            result |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(result);
            }
            shift += 7;
        }
    }

    /// A signed LEB128 number as gimli reads it (`None` where it fails).
    fn sleb(&mut self) -> Option<i64> {
        let mut result = 0i64;
        let mut shift = 0u32;
        loop {
            let byte = *self.data.get(self.pos)?;
            self.pos += 1;
            if shift == 63 && byte != 0x00 && byte != 0x7f {
                return None;
            }
            result |= i64::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                if shift < 64 && byte & 0x40 != 0 {
                    result |= !0 << shift;
                }
                return Some(result);
            }
        }
    }

    /// The value of one attribute (see [`Raw`]); `None` where gimli may
    /// read it otherwise.
    #[allow(non_upper_case_globals)]
    fn raw(
        &mut self,
        spec: &gimli::AttributeSpecification,
        encoding: gimli::Encoding,
    ) -> Option<Raw> {
        use gimli::constants::*;
        Some(match spec.form() {
            DW_FORM_addr => match encoding.address_size {
                n @ (1 | 2 | 4 | 8) => Raw::Addr(self.fixed(usize::from(n))?),
                _ => return None,
            },
            DW_FORM_addrx | DW_FORM_GNU_addr_index => Raw::AddrIndex(self.uleb()?),
            DW_FORM_addrx1 => Raw::AddrIndex(self.fixed(1)?),
            DW_FORM_addrx2 => Raw::AddrIndex(self.fixed(2)?),
            DW_FORM_addrx3 => Raw::AddrIndex(self.fixed(3)?),
            DW_FORM_addrx4 => Raw::AddrIndex(self.fixed(4)?),
            DW_FORM_data1 => Raw::Data(self.fixed(1)?),
            DW_FORM_data2 => Raw::Data(self.fixed(2)?),
            DW_FORM_data4 => Raw::Data(self.fixed(4)?),
            DW_FORM_data8 => Raw::Data(self.fixed(8)?),
            DW_FORM_udata => Raw::Data(self.uleb()?),
            DW_FORM_sdata => Raw::Sdata(self.sleb()?),
            DW_FORM_implicit_const => Raw::Sdata(spec.implicit_const_value()?),
            DW_FORM_sec_offset => {
                Raw::SecOffset(self.fixed(usize::from(encoding.format.word_size()))?)
            }
            DW_FORM_rnglistx => Raw::RngListIndex(self.uleb()?),
            DW_FORM_ref1 => Raw::Ref(self.fixed(1)?),
            DW_FORM_ref2 => Raw::Ref(self.fixed(2)?),
            DW_FORM_ref4 => Raw::Ref(self.fixed(4)?),
            DW_FORM_ref8 => Raw::Ref(self.fixed(8)?),
            DW_FORM_ref_udata => Raw::Ref(self.uleb()?),
            DW_FORM_indirect => return None,
            form => {
                let stepped = match (form_size(form, encoding), variable_step(form)) {
                    (Some(n), _) => self.skip(n),
                    // gimli reads these numbers (`strx`, `loclistx`), not
                    // only steps over them.
                    (None, Step::Leb) => self.uleb().is_some(),
                    (None, _) => self.variable(form, encoding),
                };
                if !stepped {
                    return None;
                }
                Raw::Other
            }
        })
    }

    /// Step over a form [`variable_step`] has no step of its own for:
    /// fixed-length blocks, and `indirect`, whose form is in the data.
    #[allow(non_upper_case_globals)]
    fn variable(&mut self, mut form: gimli::DwForm, encoding: gimli::Encoding) -> bool {
        use gimli::constants::*;
        while form == DW_FORM_indirect {
            match self.uleb().and_then(|f| u16::try_from(f).ok()) {
                Some(f) => form = gimli::DwForm(f),
                None => return false,
            }
        }
        if let Some(n) = form_size(form, encoding) {
            return self.skip(n);
        }
        let len = match variable_step(form) {
            Step::Variable(DW_FORM_block1) => self.fixed(1),
            Step::Variable(DW_FORM_block2) => self.fixed(2),
            Step::Variable(DW_FORM_block4) => self.fixed(4),
            Step::Variable(_) => None,
            step => return self.steps(&[step], encoding),
        };
        match len.and_then(|n| usize::try_from(n).ok()) {
            Some(n) => self.skip(n),
            None => false,
        }
    }
}

/// One DIE met by [`DieWalk`] (its attributes already stepped over).
#[derive(Clone, Copy)]
pub(crate) struct Die {
    /// Offset in the unit.
    pub offset: usize,
    /// Its depth: the root's children (a subtree's top DIEs) at 1.
    pub depth: isize,
    /// Its abbreviation code.
    pub code: u64,
    /// Whether the walk's `want` picked its abbreviation.
    pub wanted: bool,
}

/// An attribute value as [`DieWalk::attributes`] reads it: the forms of
/// addresses, numbers, references and offsets, each read as gimli's
/// `parse_attribute` reads it. Other forms are stepped over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Raw {
    /// `addr`.
    Addr(u64),
    /// `addrx`, `addrx1`-`addrx4`, `GNU_addr_index`.
    AddrIndex(u64),
    /// `data1`-`data8`, `udata`. (gimli reads `data4` and `data8` of some
    /// attributes, `DW_AT_ranges` among them, as section offsets.)
    Data(u64),
    /// `sdata`, `implicit_const`.
    Sdata(i64),
    /// `sec_offset`.
    SecOffset(u64),
    /// `rnglistx`.
    RngListIndex(u64),
    /// `ref1`-`ref8`, `ref_udata`: an offset in the unit.
    Ref(u64),
    /// Any other form.
    Other,
}

impl Raw {
    /// A value gimli read, as the walk reads it.
    pub(crate) fn of<T: Reader<Offset = usize>>(value: &gimli::AttributeValue<T>) -> Raw {
        use gimli::AttributeValue as V;
        match *value {
            V::Addr(a) => Raw::Addr(a),
            V::DebugAddrIndex(i) => Raw::AddrIndex(i.0 as u64),
            V::Data1(v) => Raw::Data(v.into()),
            V::Data2(v) => Raw::Data(v.into()),
            V::Data4(v) => Raw::Data(v.into()),
            V::Data8(v) | V::Udata(v) => Raw::Data(v),
            V::Sdata(v) => Raw::Sdata(v),
            V::SecOffset(o) => Raw::SecOffset(o as u64),
            V::DebugRngListsIndex(i) => Raw::RngListIndex(i.0 as u64),
            V::UnitRef(o) => Raw::Ref(o.0 as u64),
            _ => Raw::Other,
        }
    }
}

/// The DIEs of one unit, in order, without recursion. Ends at the unit's
/// end or at bytes it cannot read (an unknown code, a truncated form): the
/// parser that comes after stops at the same place.
pub(crate) struct DieWalk<'d, 'a> {
    walk: Walk<'d>,
    /// Unit offset of `walk.data[0]`.
    base: usize,
    abbrevs: &'a gimli::Abbreviations,
    encoding: gimli::Encoding,
    /// Indexed by code (below DENSE_CODES); steps of all codes in one table.
    entries: Vec<Entry>,
    steps: Vec<Step>,
    scratch: Vec<Step>,
    /// Depth of the next DIE (the root's children are at 1).
    depth: isize,
    /// The greatest `depth` so far.
    deepest: isize,
    /// The walk stopped at bytes it could not read.
    failed: bool,
    /// A [`subtree`](Self::subtree) walk: it ends at the null entry that
    /// closes its top level, and the bytes ending first is a failure.
    subtree: bool,
    /// The subtree's closing null entry was read.
    closed: bool,
    /// Which abbreviations [`Self::next_wanted`] stops at.
    want: fn(&gimli::Abbreviation) -> bool,
}

impl<'d, 'a> DieWalk<'d, 'a> {
    pub(crate) fn new<T: Reader>(
        header: &gimli::UnitHeader<T>,
        abbrevs: &'a gimli::Abbreviations,
        bytes: &'d [u8],
        want: fn(&gimli::Abbreviation) -> bool,
    ) -> DieWalk<'d, 'a> {
        DieWalk {
            walk: Walk {
                data: bytes,
                pos: 0,
                big_endian: header
                    .range_from(gimli::UnitOffset(header.header_size())..)
                    .is_ok_and(|r| r.endian().is_big_endian()),
            },
            base: header.header_size().into_u64() as usize,
            abbrevs,
            encoding: header.encoding(),
            entries: vec![Entry::default(); 128],
            steps: Vec::new(),
            scratch: Vec::new(),
            depth: 0,
            deepest: 0,
            failed: false,
            subtree: false,
            closed: false,
            want,
        }
    }

    /// The DIEs below one DIE with children: `bytes` start at its first
    /// child, which lies at `offset` in the unit. The walk ends after the
    /// null entry that closes the children (see [`Self::closed`]).
    pub(crate) fn subtree<T: Reader>(
        header: &gimli::UnitHeader<T>,
        abbrevs: &'a gimli::Abbreviations,
        bytes: &'d [u8],
        offset: usize,
        want: fn(&gimli::Abbreviation) -> bool,
    ) -> DieWalk<'d, 'a> {
        let mut walk = DieWalk::new(header, abbrevs, bytes, want);
        walk.base = offset;
        walk.depth = 1;
        walk.subtree = true;
        walk
    }

    /// Whether a [`subtree`](Self::subtree) walk read the null entry that
    /// closes the subtree (else it ended where it could not read on).
    pub(crate) fn closed(&self) -> bool {
        self.closed
    }

    /// Each attribute of `die` (met by this walk, of abbreviation
    /// `abbrev`) in order, given to `each`; false where gimli may read them
    /// otherwise (a form read through `DW_FORM_indirect`, an LEB128 number
    /// gimli rejects, bytes that end first, an address size gimli does not
    /// read), and the caller reads them with gimli instead.
    pub(crate) fn attributes(
        &self,
        die: &Die,
        abbrev: &gimli::Abbreviation,
        mut each: impl FnMut(gimli::DwAt, Raw),
    ) -> bool {
        let Some(pos) = die.offset.checked_sub(self.base) else {
            return false;
        };
        let mut walk = Walk {
            data: self.walk.data,
            pos,
            big_endian: self.walk.big_endian,
        };
        if walk.uleb() != Some(die.code) {
            return false;
        }
        for spec in abbrev.attributes() {
            match walk.raw(spec, self.encoding) {
                Some(raw) => each(spec.name(), raw),
                None => return false,
            }
        }
        true
    }

    /// The depth of the next DIE: after a DIE with children, the depth of
    /// its children.
    #[cfg(test)]
    pub(crate) fn depth(&self) -> isize {
        self.depth
    }

    /// The greatest [`depth`](Self::depth) so far: the depth of the most
    /// deeply nested children met.
    pub(crate) fn deepest(&self) -> isize {
        self.deepest
    }

    /// Whether the walk stopped at bytes it could not read (rather than at
    /// the unit's end).
    pub(crate) fn failed(&self) -> bool {
        self.failed
    }

    /// The next DIE whose abbreviation `want` picked (the loop kept here,
    /// where the step tables stay in registers).
    pub(crate) fn next_wanted(&mut self) -> Option<Die> {
        loop {
            let die = self.next_die()?;
            if die.wanted {
                return Some(die);
            }
        }
    }

    #[cold]
    fn fail(&mut self) -> Option<Die> {
        self.failed = true;
        None
    }

    /// The next DIE (null entries are taken in passing).
    #[inline(always)]
    pub(crate) fn next_die(&mut self) -> Option<Die> {
        let walk = &mut self.walk;
        loop {
            let offset = self.base + walk.pos;
            let Some(&first) = walk.data.get(walk.pos) else {
                // A subtree's bytes end only after its closing entry.
                if self.subtree {
                    self.failed = true;
                }
                return None;
            };
            let code = if first < 0x80 {
                walk.pos += 1;
                u64::from(first)
            } else {
                match walk.uleb() {
                    Some(code) => code,
                    None => return self.fail(),
                }
            };
            if code == 0 {
                self.depth -= 1;
                if self.subtree && self.depth == 0 {
                    self.closed = true;
                    return None;
                }
                continue;
            }
            let depth = self.depth;
            let mut entry = self.entries.get(code as usize).copied().unwrap_or_default();
            if entry.kind == Kind::Unknown {
                let Some(abbrev) = self.abbrevs.get(code) else {
                    return self.fail();
                };
                self.scratch.clear();
                steps_for(abbrev, self.encoding, &mut self.scratch);
                entry.has_children = abbrev.has_children();
                entry.wanted = (self.want)(abbrev);
                match (self.scratch.as_slice(), u32::try_from(self.steps.len())) {
                    ([], _) => entry.kind = Kind::Fixed,
                    (&[Step::Fixed(n)], _) if u32::try_from(n).is_ok() => {
                        entry.kind = Kind::Fixed;
                        entry.at = n as u32;
                    }
                    (_, Ok(at)) if code < DENSE_CODES => {
                        entry.kind = Kind::Steps;
                        entry.at = at;
                        entry.len = self.scratch.len() as u32;
                        self.steps.extend_from_slice(&self.scratch);
                    }
                    // Rare: huge codes are re-read each time.
                    _ => {
                        if entry.has_children {
                            self.depth += 1;
                            self.deepest = self.deepest.max(self.depth);
                        }
                        if !walk.steps(&self.scratch, self.encoding) {
                            return self.fail();
                        }
                        return Some(Die {
                            offset,
                            depth,
                            code,
                            wanted: entry.wanted,
                        });
                    }
                }
                if code < DENSE_CODES {
                    let c = code as usize;
                    if self.entries.len() <= c {
                        self.entries.resize(c + 1, Entry::default());
                    }
                    self.entries[c] = entry;
                }
            }
            // Counted before the attributes: a DIE whose attributes cannot
            // be read still opens its level.
            if entry.has_children {
                self.depth += 1;
                self.deepest = self.deepest.max(self.depth);
            }
            let ok = match entry.kind {
                Kind::Fixed => walk.skip(entry.at as usize),
                _ => {
                    let at = entry.at as usize;
                    match self.steps.get(at..at + entry.len as usize) {
                        Some(s) => walk.steps(s, self.encoding),
                        None => false,
                    }
                }
            };
            if !ok {
                return self.fail();
            }
            return Some(Die {
                offset,
                depth,
                code,
                wanted: entry.wanted,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn walk(data: &[u8]) -> Walk<'_> {
        Walk {
            data,
            pos: 0,
            big_endian: false,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5000))]

        /// LEB128 numbers are read, and rejected, as gimli reads them.
        #[test]
        fn leb128_is_read_as_gimli_reads_it(
            bytes in proptest::collection::vec(prop_oneof![Just(0x80u8), Just(0xffu8), Just(0x7fu8), any::<u8>()], 0..13),
        ) {
            let mut slice = gimli::EndianSlice::new(&bytes, gimli::LittleEndian);
            let theirs = gimli::leb128::read::unsigned(&mut slice).ok();
            let mut ours = walk(&bytes);
            prop_assert_eq!(ours.uleb(), theirs);
            if theirs.is_some() {
                prop_assert_eq!(ours.pos, bytes.len() - slice.len());
            }
            let mut slice = gimli::EndianSlice::new(&bytes, gimli::LittleEndian);
            let theirs = gimli::leb128::read::signed(&mut slice).ok();
            let mut ours = walk(&bytes);
            prop_assert_eq!(ours.sleb(), theirs);
            if theirs.is_some() {
                prop_assert_eq!(ours.pos, bytes.len() - slice.len());
            }
        }
    }
}
