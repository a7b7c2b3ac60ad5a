//! A guard against hostile DIE nesting.
//!
//! addr2line parses inlined subroutines recursively, one stack frame per
//! nesting level: 20 KB of nested `DW_TAG_inlined_subroutine` DIEs
//! overflow an 8 MB stack and abort the process. Before addr2line first
//! touches a unit, we walk that unit's DIEs iteratively (once, cached) and
//! refuse units nested deeper than [`MAX_DEPTH`]; addresses in them get
//! symbol-table answers only, with a reason.

use std::cell::OnceCell;

use gimli::Reader;

type R<'a> = gimli::EndianSlice<'a, gimli::RunTimeEndian>;

/// Real code nests a few dozen levels (inlining chains, lexical blocks);
/// 1024 levels of addr2line recursion stay well inside a 2 MB thread stack.
pub(crate) const MAX_DEPTH: isize = 1024;

struct UnitRange {
    begin: u64,
    end: u64,
    unit: usize,
}

pub(crate) struct DepthGuard<'a> {
    headers: Vec<gimli::UnitHeader<R<'a>>>,
    /// Sorted by `begin`.
    ranges: Vec<UnitRange>,
    /// `max_end[i]`: the largest `end` among `ranges[..=i]`.
    max_end: Vec<u64>,
    /// Units without address ranges: candidates for every address.
    rangeless: Vec<usize>,
    checked: Vec<OnceCell<bool>>,
}

impl<'a> DepthGuard<'a> {
    pub(crate) fn new(dwarf: &gimli::Dwarf<R<'a>>) -> DepthGuard<'a> {
        let mut headers = Vec::new();
        let mut ranges = Vec::new();
        let mut rangeless = Vec::new();
        let mut iter = dwarf.units();
        while let Ok(Some(header)) = iter.next() {
            let index = headers.len();
            let mut any = false;
            if let Ok(unit) = dwarf.unit(header)
                && let Ok(mut rs) = dwarf.unit_ranges(&unit)
            {
                while let Ok(Some(r)) = rs.next() {
                    if r.begin < r.end {
                        any = true;
                        ranges.push(UnitRange {
                            begin: r.begin,
                            end: r.end,
                            unit: index,
                        });
                    }
                }
            }
            if !any {
                rangeless.push(index);
            }
            headers.push(header);
        }
        ranges.sort_by_key(|r| r.begin);
        let mut max_end = Vec::with_capacity(ranges.len());
        let mut m = 0;
        for r in &ranges {
            m = m.max(r.end);
            max_end.push(m);
        }
        let mut checked = Vec::new();
        checked.resize_with(headers.len(), OnceCell::new);
        DepthGuard {
            headers,
            ranges,
            max_end,
            rangeless,
            checked,
        }
    }

    /// False when a unit that may cover `addr` nests too deeply.
    pub(crate) fn address_ok(&self, dwarf: &gimli::Dwarf<R<'a>>, addr: u64) -> bool {
        let mut i = self.ranges.partition_point(|r| r.begin <= addr);
        while i > 0 {
            i -= 1;
            if self.max_end[i] <= addr {
                break;
            }
            if self.ranges[i].end > addr && !self.unit_ok(dwarf, self.ranges[i].unit) {
                return false;
            }
        }
        self.rangeless.iter().all(|&u| self.unit_ok(dwarf, u))
    }

    fn unit_ok(&self, dwarf: &gimli::Dwarf<R<'a>>, index: usize) -> bool {
        *self.checked[index].get_or_init(|| match dwarf.unit(self.headers[index]) {
            Ok(unit) => unit_depth_ok(&unit),
            // addr2line cannot parse it either, so it will not recurse into it.
            Err(_) => true,
        })
    }
}

/// Walk a unit's DIEs without recursion; false if nested deeper than
/// [`MAX_DEPTH`]. Parse errors end the walk: the parser that comes after
/// us stops at the same place.
pub(crate) fn unit_depth_ok<T: Reader>(unit: &gimli::Unit<T>) -> bool {
    let Ok(mut entries) = unit.entries_raw(None) else {
        return true;
    };
    while !entries.is_empty() {
        if entries.next_depth() > MAX_DEPTH {
            return false;
        }
        match entries.read_abbreviation() {
            Ok(Some(abbrev)) => {
                if entries.skip_attributes(abbrev.attributes()).is_err() {
                    return true;
                }
            }
            Ok(None) => {}
            Err(_) => return true,
        }
    }
    true
}
