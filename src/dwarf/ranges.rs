//! Address ranges as the index reads, searches and keeps them: range lists
//! read as gimli reads them, where a range lies from an address (the
//! comparison every binary search over ranges uses, addr2line's), and lists
//! kept as narrow offsets when all of them fit.

use std::cmp::Ordering;

use gimli::Endianity;

use super::input::Input;

use super::Reader as R;

/// Call `f` with each range of the list at `offset`, the ranges gimli's
/// `Dwarf::ranges` yields, then its error if it has one. A DWARF 2-4
/// list (`.debug_ranges`, pairs of addresses) is read here: indexing a
/// file reads every unit's list, and gimli's generic reader took most of
/// that time. DWARF 5 lists go to gimli.
pub(crate) fn each_range<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    unit: &gimli::Unit<R<'a>>,
    offset: gimli::RangeListsOffset<usize>,
    mut f: impl FnMut(gimli::Range),
) -> gimli::Result<()> {
    let encoding = unit.encoding();
    if encoding.version <= 4 && matches!(encoding.address_size, 1 | 2 | 4 | 8) {
        let section = *gimli::Section::reader(dwarf.ranges.debug_ranges());
        let big_endian = gimli::Reader::endian(&section).is_big_endian();
        let read = pairs(
            section.slice(),
            offset.0,
            encoding.address_size,
            big_endian,
            unit.low_pc,
            &mut f,
        );
        if read.is_some() {
            return Ok(());
        }
        // The same ranges came before the error: gimli says which it is.
        let mut list = dwarf.ranges(unit, offset)?;
        while list.next()?.is_some() {}
        return Ok(());
    }
    let mut list = dwarf.ranges(unit, offset)?;
    while let Some(r) = list.next()? {
        f(r);
    }
    Ok(())
}

/// A `.debug_ranges` list by gimli's rules: a pair of zeros ends it, a
/// begin of all ones sets the base address, and a range is dropped when
/// its base or begin is a tombstone (-2 or -1) or it is empty or reversed.
/// `None` where gimli fails (the list runs past the section).
fn pairs(
    section: &[u8],
    offset: usize,
    address_size: u8,
    big_endian: bool,
    mut base: u64,
    f: &mut impl FnMut(gimli::Range),
) -> Option<()> {
    if offset > section.len() {
        return None;
    }
    let size = usize::from(address_size);
    let ones = !0u64 >> (64 - 8 * size);
    let tombstone = ones - 1;
    let mut input = Input {
        bytes: section,
        pos: offset,
    };
    while input.pos < section.len() {
        let begin = input.fixed(size, big_endian).ok()?;
        let end = input.fixed(size, big_endian).ok()?;
        if begin == 0 && end == 0 {
            break;
        }
        if begin == ones {
            base = end;
            continue;
        }
        if base >= tombstone {
            continue;
        }
        let begin = base.wrapping_add(begin) & ones;
        let end = base.wrapping_add(end) & ones;
        if begin < tombstone && begin < end {
            f(gimli::Range { begin, end });
        }
    }
    Some(())
}

/// Where the half-open range `begin..end` lies from `probe`: above it,
/// below it, or on it (for `binary_search_by`).
pub(crate) fn place(begin: u64, end: u64, probe: u64) -> Ordering {
    if begin > probe {
        Ordering::Greater
    } else if end <= probe {
        Ordering::Less
    } else {
        Ordering::Equal
    }
}

/// `items` each made narrow by `narrow`, in one list of the right size;
/// `None` as soon as one does not fit.
pub(crate) fn all_narrow<T, U>(items: &[T], narrow: impl Fn(&T) -> Option<U>) -> Option<Box<[U]>> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        out.push(narrow(item)?);
    }
    Some(out.into_boxed_slice())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// gimli's ranges of the list at `offset`, and whether it failed.
    fn gimli_ranges(
        section: &[u8],
        offset: usize,
        address_size: u8,
        big_endian: bool,
        base: u64,
    ) -> (Vec<gimli::Range>, bool) {
        let endian = if big_endian {
            gimli::RunTimeEndian::Big
        } else {
            gimli::RunTimeEndian::Little
        };
        let lists = gimli::RangeLists::new(
            gimli::DebugRanges::new(section, endian),
            gimli::DebugRngLists::new(&[], endian),
        );
        let encoding = gimli::Encoding {
            format: gimli::Format::Dwarf32,
            version: 4,
            address_size,
        };
        let addr = gimli::DebugAddr::from(gimli::EndianSlice::new(&[], endian));
        let mut out = Vec::new();
        let Ok(mut list) = lists.ranges(
            gimli::RangeListsOffset(offset),
            encoding,
            base,
            &addr,
            gimli::DebugAddrBase(0),
        ) else {
            return (out, true);
        };
        loop {
            match list.next() {
                Ok(Some(r)) => out.push(r),
                Ok(None) => return (out, false),
                Err(_) => return (out, true),
            }
        }
    }

    fn ours(
        section: &[u8],
        offset: usize,
        address_size: u8,
        big_endian: bool,
        base: u64,
    ) -> (Vec<gimli::Range>, bool) {
        let mut out = Vec::new();
        let read = pairs(section, offset, address_size, big_endian, base, &mut |r| {
            out.push(r)
        });
        (out, read.is_none())
    }

    /// A value worth writing: the ones every rule tests for, and others.
    fn value() -> impl Strategy<Value = u64> {
        prop_oneof![
            Just(0u64),
            Just(1),
            Just(u64::MAX),
            Just(u64::MAX - 1),
            Just(u64::MAX - 2),
            Just(0xffff_ffff),
            Just(0xffff_fffe),
            Just(0xffff),
            Just(0xfffe),
            Just(0xff),
            Just(0xfe),
            0u64..0x100,
            any::<u64>(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn pairs_are_gimlis_ranges(
            size in prop::sample::select(vec![1u8, 2, 4, 8]),
            big_endian in any::<bool>(),
            base in value(),
            entries in prop::collection::vec((value(), value()), 0..8),
            tail in prop::collection::vec(any::<u8>(), 0..10),
            offset in 0usize..40,
        ) {
            let mut section = Vec::new();
            let n = usize::from(size);
            for (begin, end) in entries {
                for v in [begin, end] {
                    if big_endian {
                        section.extend_from_slice(&v.to_be_bytes()[8 - n..]);
                    } else {
                        section.extend_from_slice(&v.to_le_bytes()[..n]);
                    }
                }
            }
            section.extend(tail);
            // Mostly from the start, sometimes anywhere, past the end too.
            let offset = offset.saturating_sub(20);
            prop_assert_eq!(
                ours(&section, offset, size, big_endian, base),
                gimli_ranges(&section, offset, size, big_endian, base)
            );
        }
    }

    #[test]
    fn ranges_are_placed_half_open() {
        assert_eq!(place(0x10, 0x20, 0x0f), Ordering::Greater);
        assert_eq!(place(0x10, 0x20, 0x10), Ordering::Equal);
        assert_eq!(place(0x10, 0x20, 0x1f), Ordering::Equal);
        assert_eq!(place(0x10, 0x20, 0x20), Ordering::Less);
        // An empty range holds nothing.
        assert_eq!(place(0x10, 0x10, 0x10), Ordering::Less);
    }

    #[test]
    fn a_list_is_narrow_only_when_all_of_it_fits() {
        let small = |v: &u64| u32::try_from(*v).ok();
        assert_eq!(all_narrow(&[1, 2], small).as_deref(), Some(&[1, 2][..]));
        assert_eq!(all_narrow(&[1, u64::MAX], small), None);
    }
}
