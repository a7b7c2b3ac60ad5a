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

type R<'a> = gimli::EndianSlice<'a, gimli::RunTimeEndian>;

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
        Ok(Arc::new(abbrevs))
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
        let mut input = section;
        input.skip(start)?;
        let base = section.len();
        loop {
            let at = base - input.len();
            let this = input.read_uleb128()?;
            if this == 0 {
                self.done = true;
                return Ok(None);
            }
            input.read_uleb128()?; // tag
            input.read_u8()?; // children
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
            self.next = Some(end);
            // gimli refuses a set declaring a code twice: leave every
            // further question about this set to it.
            if !self.note(this, (at, end)) {
                self.dense.clear();
                self.found.clear();
                self.done = true;
                return Ok(None);
            }
            if this == code {
                return Ok(Some((at, end)));
            }
        }
    }
}
