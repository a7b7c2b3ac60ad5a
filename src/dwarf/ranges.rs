//! Address ranges as the index searches and keeps them: where a range lies
//! from an address (the comparison every binary search over ranges uses,
//! addr2line's), and lists kept as narrow offsets when all of them fit.

use std::cmp::Ordering;

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
