//! Names and paths shared between answers.
//!
//! A log names the same functions and files over and over, and an address
//! seen for the first time is most often in a function or file seen before.
//! Sources therefore make each name once per module and hand out shared
//! copies: an answer costs a reference count per frame, not an allocation
//! per string.

use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

use rustc_hash::FxHashMap;

/// Text an answer shares with every other answer naming the same thing.
pub type Text = Arc<str>;

/// A function or symbol name as answers carry it: shared like a [`Text`],
/// with room for the forms printers derive from it (its demangled
/// spellings, see [`crate::demangle`], and the full one as a terminal is
/// shown it, see [`crate::escape::demangled_name`]), each made once, on
/// first use, for every answer and every thread that shows the name.
#[derive(Clone)]
pub struct Name(Arc<Named>);

struct Named {
    raw: Box<str>,
    /// `None` when the derived form is the name itself.
    derived: [OnceLock<Option<Text>>; DERIVED],
}

/// Derived forms a [`Name`] has room for.
pub const DERIVED: usize = 3;

impl Name {
    pub fn new(raw: impl Into<Box<str>>) -> Name {
        Name(Arc::new(Named {
            raw: raw.into(),
            derived: Default::default(),
        }))
    }

    /// The name as the source gave it.
    pub fn raw(&self) -> &str {
        &self.0.raw
    }

    /// Derived form number `slot` (below [`DERIVED`]): what `make` gives,
    /// the first time (`None`: the name itself).
    pub fn derived(&self, slot: usize, make: impl FnOnce() -> Option<Text>) -> &str {
        let form = self.0.derived[slot].get_or_init(make);
        form.as_deref().unwrap_or(&self.0.raw)
    }

    /// Derived form `slot`, if made (`Some(None)`: the name itself).
    pub fn made(&self, slot: usize) -> Option<&Option<Text>> {
        self.0.derived[slot].get()
    }

    /// Whether both are one shared name.
    pub fn ptr_eq(a: &Name, b: &Name) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl std::ops::Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0.raw
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Name) -> bool {
        self.0.raw == other.0.raw
    }
}

impl Eq for Name {}

/// By spelling, as `str` hashes: a table of names can be asked with a
/// `&str`.
impl std::hash::Hash for Name {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.raw.hash(state);
    }
}

impl std::borrow::Borrow<str> for Name {
    fn borrow(&self) -> &str {
        &self.0.raw
    }
}

impl std::fmt::Debug for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.0.raw, f)
    }
}

impl From<&str> for Name {
    fn from(raw: &str) -> Name {
        Name::new(raw)
    }
}

impl From<String> for Name {
    fn from(raw: String) -> Name {
        Name::new(raw)
    }
}

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
    names: FxHashMap<(usize, usize), Name>,
    bytes: PhantomData<&'a [u8]>,
}

impl Default for Interner<'_> {
    fn default() -> Self {
        Interner {
            kept: FxHashMap::default(),
            names: FxHashMap::default(),
            bytes: PhantomData,
        }
    }
}

impl<'a> Interner<'a> {
    /// `bytes` as text (invalid UTF-8 replaced, as LLVM prints it).
    pub fn text(&mut self, bytes: &'a [u8]) -> Text {
        interned(&mut self.kept, bytes, |s| Text::from(s))
    }

    /// `bytes` as a [`Name`] (invalid UTF-8 replaced).
    pub fn name(&mut self, bytes: &'a [u8]) -> Name {
        interned(&mut self.names, bytes, |s| Name::from(s))
    }
}

/// The value `table` keeps for the slice `bytes`, made from its text by
/// `make` the first time.
fn interned<T: Clone>(
    table: &mut FxHashMap<(usize, usize), T>,
    bytes: &[u8],
    make: impl FnOnce(&str) -> T,
) -> T {
    let key = (bytes.as_ptr() as usize, bytes.len());
    if let Some(value) = table.get(&key) {
        return value.clone();
    }
    let value = make(&utf8(bytes));
    crate::base::insert_bounded(table, KEPT, key, value.clone());
    value
}

/// `bytes` as text, invalid UTF-8 replaced; borrowed when valid (through
/// `from_utf8`, whose fast path `from_utf8_lossy` lacks).
fn utf8(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// `bytes` as a new [`Text`], invalid UTF-8 replaced.
pub fn lossy(bytes: &[u8]) -> Text {
    Text::from(&*utf8(bytes))
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
        // Names are kept apart from texts, by the same rule.
        let n = interner.name(&data[0..4]);
        assert!(Name::ptr_eq(&n, &interner.name(&data[0..4])));
        assert!(!Name::ptr_eq(&n, &interner.name(&data[5..9])));
        assert_eq!(interner.name(&data[10..12]).raw(), "\u{fffd}x");
    }
}
