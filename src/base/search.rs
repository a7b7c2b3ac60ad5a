//! Binary search over sorted lists too large for the processor's caches:
//! line tables, function ranges, symbol tables. A log of scattered
//! addresses sends each search to cold memory, where every step waits for
//! its element to load. Here each step also requests the elements both
//! possible next steps will read, so a step's wait overlaps the next
//! one's (the layout-free variant of the searches measured by Khuong and
//! Morin, "Array layouts for comparison-based searching", 2017). Each
//! step chooses its half with a conditional move, not a branch, so the
//! processor does not guess a half it must then undo.

use std::cmp::Ordering;

use super::prefetch_line;

/// The number of leading elements of `list` for which `before` holds (as
/// [`slice::partition_point`]: `list` must hold every such element before
/// every other).
#[inline]
pub(crate) fn partition_point<T>(list: &[T], before: impl Fn(&T) -> bool) -> usize {
    if list.is_empty() {
        return 0;
    }
    let at = list.as_ptr();
    let mut base = 0;
    let mut len = list.len();
    while len > 1 {
        let half = len / 2;
        let next = (len - half) / 2;
        prefetch_line(at.wrapping_add(base + next));
        prefetch_line(at.wrapping_add(base + half + next));
        base = std::hint::select_unpredictable(before(&list[base + half]), base + half, base);
        len -= half;
    }
    base + usize::from(before(&list[base]))
}

/// The element `place` finds [`Ordering::Equal`], as
/// [`slice::binary_search_by`]: `Ok` with its index, else `Err` with where
/// it would go; `place` tells where an element lies from what is sought
/// (`Less`: before it). Among several equal elements it finds the one the
/// slice method finds (the last), so that a list with duplicates gives the
/// same answers either way.
#[inline]
pub(crate) fn binary_search_by<T>(
    list: &[T],
    place: impl Fn(&T) -> Ordering,
) -> Result<usize, usize> {
    let after = partition_point(list, |e| place(e) != Ordering::Greater);
    match after.checked_sub(1) {
        Some(i) if place(&list[i]) == Ordering::Equal => Ok(i),
        _ => Err(after),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // Sorted or not, with duplicates or not: the same steps as the
        // slice methods, so the same answers.
        #[test]
        fn answers_as_the_slice_methods(
            mut list in proptest::collection::vec(0u32..64, 0..300),
            probe in 0u32..70,
            sorted: bool,
        ) {
            if sorted {
                list.sort_unstable();
            }
            prop_assert_eq!(
                partition_point(&list, |&e| e < probe),
                list.partition_point(|&e| e < probe)
            );
            prop_assert_eq!(
                binary_search_by(&list, |e| e.cmp(&probe)),
                list.binary_search_by(|e| e.cmp(&probe))
            );
        }
    }

    #[test]
    fn every_split_of_every_short_list() {
        for len in 0..40usize {
            let list: Vec<usize> = (0..len).collect();
            for split in 0..=len {
                assert_eq!(partition_point(&list, |&e| e < split), split);
            }
        }
    }
}
