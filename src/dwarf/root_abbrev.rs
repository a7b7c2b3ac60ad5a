//! The abbreviation of each unit's root DIE, without parsing whole sets.
//!
//! Knowing a unit's address ranges takes only its root DIE, but gimli parses
//! a unit's whole abbreviation set first. LLVM writes one set per object
//! file, shared by all the units in it (each of rustc's codegen units), with
//! the root's declaration far down the set: parsing every set costs a
//! one-address lookup dearly, and rescanning a set from its start for each
//! unit costs more. Each set here is scanned once, no further than the
//! furthest root code asked for, remembering where each declaration lies.

use std::sync::Arc;

use gimli::Reader;
use rustc_hash::FxHashMap;

use super::input::Input;

use super::Reader as R;

/// Where each declaration of one set lies, as far as it has been scanned.
#[derive(Default)]
struct Set {
    /// Byte ranges of the declarations of codes 1, 2, 3... in
    /// `.debug_abbrev`, while the set numbers them so (LLVM and GCC do)...
    dense: Vec<(usize, usize)>,
    /// ...and of the rest by code.
    found: FxHashMap<u64, (usize, usize)>,
    /// Where scanning goes on: the offset of the next declaration.
    next: Option<usize>,
    /// The set's end (its null code) was reached, or it declares a code
    /// twice.
    done: bool,
    /// Sets of one made so far, by code: the units of one object file
    /// mostly share their root's declaration.
    made: FxHashMap<u64, Arc<gimli::Abbreviations>>,
}

/// Root-DIE abbreviations by unit, sets scanned incrementally.
#[derive(Default)]
pub(crate) struct RootAbbreviations {
    sets: FxHashMap<usize, Set>,
}

impl RootAbbreviations {
    /// The abbreviation of `header`'s root DIE, as a set of one. A code the
    /// set does not declare is left to gimli's own parse of the whole set
    /// (which says what is wrong).
    pub(crate) fn get<'a>(
        &mut self,
        dwarf: &gimli::Dwarf<R<'a>>,
        header: &gimli::UnitHeader<R<'a>>,
    ) -> gimli::Result<Arc<gimli::Abbreviations>> {
        let mut first = header.range_from(gimli::UnitOffset(header.header_size())..)?;
        let code = first.read_uleb128()?;
        let section = *gimli::Section::reader(&dwarf.debug_abbrev);
        let offset = header.debug_abbrev_offset().0;
        let set = self.sets.entry(offset).or_default();
        if let Some(made) = set.made.get(&code) {
            return Ok(made.clone());
        }
        let range = match set.lookup(code) {
            Some(range) => Some(range),
            None => set.scan_to(section, offset, code)?,
        };
        let Some((start, end)) = range else {
            return dwarf.abbreviations(header);
        };
        let mut one = section.slice()[start..end].to_vec();
        one.push(0);
        let abbrevs = gimli::DebugAbbrev::new(&one, section.endian())
            .abbreviations(gimli::DebugAbbrevOffset(0))?;
        let abbrevs = Arc::new(abbrevs);
        set.made.insert(code, abbrevs.clone());
        Ok(abbrevs)
    }
}

impl Set {
    fn lookup(&self, code: u64) -> Option<(usize, usize)> {
        let dense = usize::try_from(code)
            .ok()?
            .checked_sub(1)
            .and_then(|i| self.dense.get(i));
        dense.or_else(|| self.found.get(&code)).copied()
    }

    /// Note where `code`'s declaration lies; false if it was seen before.
    fn note(&mut self, code: u64, range: (usize, usize)) -> bool {
        if self.found.is_empty() && code == self.dense.len() as u64 + 1 {
            self.dense.push(range);
            return true;
        }
        self.lookup(code).is_none() && self.found.insert(code, range).is_none()
    }

    /// Scan on until `code`'s declaration; `None` if the set ends first.
    fn scan_to(
        &mut self,
        section: R<'_>,
        offset: usize,
        code: u64,
    ) -> gimli::Result<Option<(usize, usize)>> {
        if self.done {
            return Ok(None);
        }
        let start = self.next.unwrap_or(offset);
        let mut input = Input {
            bytes: section.slice(),
            pos: start,
        };
        // Input fails where gimli's reader would; which error it is does
        // not matter (the unit's ranges are then unknown).
        let bad = |_| gimli::Error::BadUnsignedLeb128;
        loop {
            let at = input.pos;
            let this = input.uleb().map_err(bad)?;
            if this == 0 {
                self.done = true;
                return Ok(None);
            }
            input.uleb().map_err(bad)?; // tag
            input.u8().map_err(bad)?; // children
            loop {
                // Most attributes are two one-byte numbers.
                if let Some(&[name, form]) = input.bytes.get(input.pos..input.pos + 2)
                    && (name | form) & 0x80 == 0
                    && name | form != 0
                    && u16::from(form) != gimli::DW_FORM_implicit_const.0
                {
                    input.pos += 2;
                    continue;
                }
                let name = input.uleb().map_err(bad)?;
                let form = input.uleb().map_err(bad)?;
                if form == u64::from(gimli::DW_FORM_implicit_const.0) {
                    input.sleb().map_err(bad)?;
                }
                if name == 0 && form == 0 {
                    break;
                }
            }
            let end = input.pos;
            self.next = Some(end);
            // gimli refuses a set declaring a code twice: leave every
            // further question about this set to it.
            if !self.note(this, (at, end)) {
                self.dense.clear();
                self.found.clear();
                self.made.clear();
                self.done = true;
                return Ok(None);
            }
            if this == code {
                return Ok(Some((at, end)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `Set::scan_to` read with gimli's reader: the reference.
    fn scan_with_gimli(
        set: &mut Set,
        section: R<'_>,
        offset: usize,
        code: u64,
    ) -> gimli::Result<Option<(usize, usize)>> {
        if set.done {
            return Ok(None);
        }
        let mut input = section;
        input.skip(set.next.unwrap_or(offset))?;
        let base = section.len();
        loop {
            let at = base - input.len();
            let this = input.read_uleb128()?;
            if this == 0 {
                set.done = true;
                return Ok(None);
            }
            input.read_uleb128()?;
            input.read_u8()?;
            loop {
                let name = input.read_uleb128()?;
                let form = input.read_uleb128()?;
                if form == u64::from(gimli::DW_FORM_implicit_const.0) {
                    input.read_sleb128()?;
                }
                if name == 0 && form == 0 {
                    break;
                }
            }
            let end = base - input.len();
            set.next = Some(end);
            if !set.note(this, (at, end)) {
                set.dense.clear();
                set.found.clear();
                set.done = true;
                return Ok(None);
            }
            if this == code {
                return Ok(Some((at, end)));
            }
        }
    }

    /// A set found to declare a code twice is left to gimli, which refuses
    /// it, even for a code whose set of one was made before.
    #[test]
    fn a_set_declaring_a_code_twice_is_refused_after_all() {
        // Codes 1 and 3: a compile unit without attributes; code 2 twice.
        let abbrev = [
            1, 0x11, 0, 0, 0, 2, 0x2e, 0, 0, 0, 2, 0x2e, 0, 0, 0, 3, 0x11, 0, 0, 0, 0,
        ];
        // Three DWARF 4 units whose roots use codes 1, 3 and 1.
        let mut info = Vec::new();
        for code in [1u8, 3, 1] {
            info.extend_from_slice(&8u32.to_le_bytes());
            info.extend_from_slice(&4u16.to_le_bytes());
            info.extend_from_slice(&0u32.to_le_bytes());
            info.extend([8, code]);
        }
        let le = gimli::RunTimeEndian::Little;
        let dwarf = gimli::Dwarf {
            debug_abbrev: gimli::DebugAbbrev::new(&abbrev, le),
            debug_info: gimli::DebugInfo::new(&info, le),
            ..Default::default()
        };
        let mut units = dwarf.units();
        let mut roots = RootAbbreviations::default();
        let mut got = Vec::new();
        while let Some(header) = units.next().unwrap() {
            got.push(roots.get(&dwarf, &header).is_ok());
        }
        assert_eq!(got, [true, false, false]);
        // gimli refuses the set as a whole.
        let header = dwarf.units().next().unwrap().unwrap();
        assert!(dwarf.abbreviations(&header).is_err());
    }

    fn uleb(mut v: u64, out: &mut Vec<u8>) {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// Asked in any order, the scan finds what a scan with gimli's
        /// reader finds, fails where it fails, and stops where it stops.
        #[test]
        fn scans_find_what_gimlis_reader_finds(
            decls in prop::collection::vec(
                (
                    1u64..12,
                    prop_oneof![0u64..0x80, 0x80u64..0x5000],
                    prop::collection::vec(
                        (
                            prop_oneof![4 => 1u64..0x80, 1 => 0x80u64..0x3000, 1 => Just(0u64)],
                            prop_oneof![4 => 1u64..0x30, 1 => Just(0x21u64), 1 => Just(0u64)],
                            any::<i16>(),
                        ),
                        0..6,
                    ),
                ),
                0..10,
            ),
            end in prop_oneof![Just(Vec::from([0u8])), prop::collection::vec(any::<u8>(), 0..3)],
            asked in prop::collection::vec(1u64..12, 1..6),
        ) {
            let mut section = Vec::new();
            for (code, tag, attrs) in &decls {
                uleb(*code, &mut section);
                uleb(*tag, &mut section);
                section.push(1);
                for &(name, form, constant) in attrs {
                    uleb(name, &mut section);
                    uleb(form, &mut section);
                    if form == 0x21 {
                        section.push((constant & 0x3f) as u8);
                    }
                }
                section.extend([0, 0]);
            }
            section.extend(end);
            let reader = gimli::EndianSlice::new(&section[..], gimli::RunTimeEndian::Little);
            let (mut set, mut reference) = (Set::default(), Set::default());
            for code in asked {
                let ours = match set.lookup(code) {
                    Some(range) => Ok(Some(range)),
                    None => set.scan_to(reader, 0, code),
                };
                let theirs = match reference.lookup(code) {
                    Some(range) => Ok(Some(range)),
                    None => scan_with_gimli(&mut reference, reader, 0, code),
                };
                prop_assert_eq!(ours.ok(), theirs.ok());
                prop_assert_eq!((set.next, set.done), (reference.next, reference.done));
            }
        }
    }
}
