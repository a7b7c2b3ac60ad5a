//! The neutral base every layer stands on: build IDs and hexadecimal
//! numbers, file paths from bytes, the one memory-mapped file type, huge
//! pages for a thread's heap, cache-line prefetches, binary searches that
//! prefetch, lists kept empty for reuse, caches bounded by emptying, and
//! what threads share: a lock that outlives a panic and an append-only
//! store.
//! It knows nothing of markup, symbol sources or output formats, so the
//! lexer and the context can use it without reaching into either.

mod build_id;
pub mod heap;
pub(crate) mod hex;
pub mod mapped;
mod path;
pub(crate) mod search;
mod stash;

pub use build_id::BuildId;
pub(crate) use path::bytes_to_path;
pub(crate) use stash::Stash;

/// Starts loading the cache line that holds `p`, without waiting for it:
/// a hint to the processor, which reads nothing and accepts any address.
#[inline(always)]
pub(crate) fn prefetch_line<T: ?Sized>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The prefetch instruction for `HINT`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn prefetch<const HINT: i32>(p: *const u8) {
    // SAFETY: a prefetch neither reads nor writes memory and cannot fault,
    // whatever the address.
    unsafe { std::arch::x86_64::_mm_prefetch::<HINT>(p.cast::<i8>()) }
}

/// `list` emptied, as a list of another element type, in the same
/// allocation when the two types have the same layout (as one type of two
/// lifetimes does: a list of borrowed values kept from one use to the
/// next); collecting an empty list in place reuses it.
pub(crate) fn recycle<T, U>(mut list: Vec<T>) -> Vec<U> {
    list.clear();
    list.into_iter()
        .map(|_| -> U { unreachable!("the list is empty") })
        .collect()
}

/// Inserts into a cache of at most `max` entries, emptying it first when
/// it is full: every entry can be made again, and a log of endless new
/// keys cannot grow the cache without bound. The caches that use it keep
/// names, paths and answers a log names over and over, so a full one is
/// refilled at once by what the log names now.
pub(crate) fn insert_bounded<K, V, S>(
    table: &mut std::collections::HashMap<K, V, S>,
    max: usize,
    key: K,
    value: V,
) where
    K: std::hash::Hash + Eq,
    S: std::hash::BuildHasher,
{
    if table.len() >= max {
        table.clear();
    }
    table.insert(key, value);
}

/// Insert a weak reference to `value` under `key` into a table of values
/// shared while alive (mappings and modules, by identity), dropping the
/// entries of values gone each time the table's size reaches a power of
/// two: a run opening thousands of files pays a constant cost per insert,
/// not a pass over the table.
pub(crate) fn insert_weak<K, V, S>(
    table: &mut std::collections::HashMap<K, std::sync::Weak<V>, S>,
    key: K,
    value: &std::sync::Arc<V>,
) where
    K: std::hash::Hash + Eq,
    S: std::hash::BuildHasher,
{
    if table.len().is_power_of_two() {
        table.retain(|_, v| v.strong_count() > 0);
    }
    table.insert(key, std::sync::Arc::downgrade(value));
}

/// The guard of `mutex`, also when a thread panicked holding it: every
/// value kept behind these locks (caches, tables of parsed data) is whole
/// between two statements, so a panic elsewhere leaves nothing torn.
pub(crate) fn lock<T: ?Sized>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_weak_table_keeps_about_the_values_alive() {
        let mut table = std::collections::HashMap::new();
        let alive: Vec<std::sync::Arc<u32>> = (0..10).map(std::sync::Arc::new).collect();
        for (k, v) in alive.iter().enumerate() {
            insert_weak(&mut table, k, v);
        }
        for k in 10..10_000 {
            insert_weak(&mut table, k, &std::sync::Arc::new(0));
        }
        // Dead entries go at each power of two: the table stays within
        // twice its live entries, and the live ones stay.
        assert!(table.len() <= 16, "{}", table.len());
        assert!((0..10).all(|k| table[&k].upgrade().as_deref() == Some(&(k as u32))));
    }

    #[test]
    fn a_full_cache_is_emptied_before_an_insert() {
        let mut table = std::collections::HashMap::new();
        for k in 0..3 {
            insert_bounded(&mut table, 3, k, k);
        }
        assert_eq!(table.len(), 3);
        // A fourth key finds the table full: it starts again.
        insert_bounded(&mut table, 3, 7, 7);
        assert_eq!(table.len(), 1);
        assert_eq!(table.get(&7), Some(&7));
    }
}
