//! The addresses the debug info claims for its units, as LLVM's symbolizer
//! decides whether it has a unit for an address: every entry of each
//! `.debug_aranges` set, and for a unit no set names, the ranges its root
//! DIE declares. LLVM's aranges include global variables, so data can be
//! claimed too. Where a unit is claimed, LLVM's line lookup (`{{{pc}}}`)
//! answers from the debug info even when it finds nothing there, and so
//! never shows a local symbol's `STT_FILE` name.
//!
//! Lookups find their unit by addr2line's preference instead (see
//! [`super::units`]), which reads a unit's own ranges before its aranges;
//! this index serves only that one question, and is built on its first use.

use super::Reader as R;
use super::units::UnitIndex;
use crate::base::search;

/// Claimed ranges, sorted and merged.
pub(crate) struct Claims {
    ranges: Vec<(u64, u64)>,
}

impl Claims {
    pub(crate) fn build(dwarf: &gimli::Dwarf<R<'_>>, units: &UnitIndex<'_>) -> Claims {
        let mut ranges = Vec::new();
        let mut named = vec![false; units.len()];
        let mut sets = dwarf.debug_aranges.headers();
        // A set that cannot be read ends the list, as it ends LLVM's.
        while let Ok(Some(set)) = sets.next() {
            let Some(unit) = units.unit_starting_at(set.debug_info_offset().0) else {
                continue;
            };
            named[unit] = true;
            let mut entries = set.entries();
            while let Ok(Some(e)) = entries.next() {
                let r = e.range();
                if r.begin < r.end {
                    ranges.push((r.begin, r.end));
                }
            }
        }
        ranges.extend(
            units
                .ranges()
                .filter(|&(unit, _, _)| !named[unit] && !units.undeclared(unit))
                .map(|(_, begin, end)| (begin, end)),
        );
        ranges.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
        for (begin, end) in ranges {
            match merged.last_mut() {
                Some(last) if begin <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((begin, end)),
            }
        }
        merged.shrink_to_fit();
        Claims { ranges: merged }
    }

    /// Whether a unit is claimed at `addr`.
    pub(crate) fn covers(&self, addr: u64) -> bool {
        let after = search::partition_point(&self.ranges, |r| r.0 <= addr);
        after
            .checked_sub(1)
            .is_some_and(|i| addr < self.ranges[i].1)
    }
}
