//! Names and paths shared between answers.
//!
//! A log names the same functions and files over and over, and an address
//! seen for the first time is most often in a function or file seen before.
//! Sources therefore make each name once per module and hand out shared
//! copies: an answer costs a reference count per frame, not an allocation
//! per string.

use std::marker::PhantomData;
use std::sync::Arc;

use rustc_hash::FxHashMap;

/// Text an answer shares with every other answer naming the same thing.
pub type Text = Arc<str>;

/// Texts kept at most; the table is emptied when full, so a module with
/// endless distinct names cannot grow memory without bound (answers keep
/// their own references).
const KEPT: usize = 1 << 16;

/// The [`Text`] of byte strings borrowed from a mapped file, made once per
/// string. Keyed by where the bytes lie, not by what they say: the same
/// `.debug_str` or `.strtab` entry is always the same slice, so a lookup
/// costs one hash of two words. The lifetime ties every key to bytes that
/// outlive the table.
pub struct Interner<'a> {
    kept: FxHashMap<(usize, usize), Text>,
    bytes: PhantomData<&'a [u8]>,
}

impl Default for Interner<'_> {
    fn default() -> Self {
        Interner {
            kept: FxHashMap::default(),
            bytes: PhantomData,
        }
    }
}

impl<'a> Interner<'a> {
    /// `bytes` as text (invalid UTF-8 replaced, as LLVM prints it).
    pub fn text(&mut self, bytes: &'a [u8]) -> Text {
        let key = (bytes.as_ptr() as usize, bytes.len());
        if let Some(text) = self.kept.get(&key) {
            return text.clone();
        }
        let text = lossy(bytes);
        crate::base::insert_bounded(&mut self.kept, KEPT, key, text.clone());
        text
    }
}

/// `bytes` as a new [`Text`], invalid UTF-8 replaced.
pub fn lossy(bytes: &[u8]) -> Text {
    match std::str::from_utf8(bytes) {
        Ok(s) => Arc::from(s),
        Err(_) => Arc::from(String::from_utf8_lossy(bytes).as_ref()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_slice_gives_the_same_text() {
        let data = b"main\0main\0\xffx".to_vec();
        let mut interner = Interner::default();
        let a = interner.text(&data[0..4]);
        let b = interner.text(&data[0..4]);
        assert!(Arc::ptr_eq(&a, &b));
        // Equal bytes elsewhere are another entry, with equal text.
        let c = interner.text(&data[5..9]);
        assert_eq!(a, c);
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(&*interner.text(&data[10..12]), "\u{fffd}x");
    }
}
