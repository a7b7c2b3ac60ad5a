//! An append-only store threads share: a value put in stays at its place
//! until the store is dropped, so a reference to it lives as long as the
//! store (decompressed sections and mapped `.dwo` files, which parsed
//! DWARF borrows while other threads add more).

use std::sync::{Arc, Mutex};

/// Values kept until the store is dropped. Each lives in its own shared
/// allocation, which a later push never moves.
pub(crate) struct Stash<T> {
    kept: Mutex<Vec<Arc<T>>>,
}

impl<T> Default for Stash<T> {
    fn default() -> Self {
        Stash {
            kept: Mutex::new(Vec::new()),
        }
    }
}

impl<T> Stash<T> {
    /// Keep `value`; the reference lives as long as the store.
    pub(crate) fn put(&self, value: T) -> &T {
        self.put_shared(Arc::new(value))
    }

    /// Keep `value` (shared with its other owners) for as long as the
    /// store lives.
    pub(crate) fn put_shared(&self, value: Arc<T>) -> &T {
        let at = Arc::as_ptr(&value);
        super::lock(&self.kept).push(value);
        // SAFETY: `at` points into the allocation of an `Arc` the store now
        // owns. Nothing removes it from the list before the store is
        // dropped, and moving an `Arc` (as the list grows) leaves its
        // allocation in place, so the value is valid and unchanged for the
        // lifetime of `&self`. Only shared references are ever made to it.
        unsafe { &*at }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_stay_in_place_while_more_are_put() {
        let stash = Stash::default();
        let first: &Vec<u8> = stash.put(vec![1, 2, 3]);
        let others: Vec<&Vec<u8>> = (0..1000u32).map(|i| stash.put(vec![i as u8])).collect();
        assert_eq!(first, &[1, 2, 3]);
        assert!(others.iter().enumerate().all(|(i, v)| v[0] == i as u8));
        let shared = Arc::new(vec![9u8]);
        let kept = stash.put_shared(Arc::clone(&shared));
        drop(shared);
        assert_eq!(kept, &[9]);
    }

    #[test]
    fn threads_put_at_once() {
        let stash: Stash<u64> = Stash::default();
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let stash = &stash;
                s.spawn(move || {
                    for i in 0..1000 {
                        assert_eq!(*stash.put(t * 1000 + i), t * 1000 + i);
                    }
                });
            }
        });
        assert_eq!(super::super::lock(&stash.kept).len(), 4000);
    }
}
