//! The one demangling service of the program, full (human) and
//! LLVM-compatible, with a cache per thread and, for the threads of one
//! filter run, a [`Shared`] table.
//!
//! * [`demangle_llvm`]: what `llvm::demangle` (LLVM 22) prints. Itanium C++
//!   names (`_Z`, `__Z`, `___Z..._block_invoke`, each also with one more
//!   leading underscore or a leading dot) go through our own demangler
//!   ([`itanium`]), whose output is byte-identical to LLVM's; Rust v0
//!   (`_R`) is demangled without crate disambiguators; Rust legacy names are
//!   Itanium names to LLVM, so `$LT$..$GT$`, `..` and `::h<hash>` stay;
//!   Microsoft C++ names (`?...`, and RTTI type names `.?A...`) go through
//!   our own Microsoft demangler ([`msvc`]), whose output is byte-identical
//!   to LLVM's.
//! * [`demangle_full`]: what a person wants to read: the same, except that
//!   Rust legacy names are fully decoded (`$LT$` -> `<`, `..` -> `::`) and
//!   lose their `::h<hash>`.
//!
//! Names without a mangling prefix (`f`, `Pi`, `main`) come back as they
//! are, as does a name that is not a valid mangling. Output is bounded: a
//! demangling longer than [`MAX_DEMANGLED`] bytes (a hostile name can
//! expand exponentially) is replaced by the raw name.

mod itanium;
mod msvc;

use std::fmt::Write;
use std::sync::{Arc, Mutex};

use crate::base::insert_bounded;
use crate::symbols::Text;

/// Longest demangled name we accept before falling back to the raw name.
pub const MAX_DEMANGLED: usize = 64 * 1024;

/// Names remembered per thread and style before the table is refilled:
/// logs name the same functions again and again, and demangling costs more
/// than the rest of rendering a frame.
const MAX_REMEMBERED: usize = 1 << 15;

/// Demangled names by raw name. A remembered name is handed out shared: a
/// hit costs a hash and a reference count, not a copy. A thread's table and
/// the [`Shared`] one share their keys, and a name that demangles to itself
/// is its own value.
type Remembered = rustc_hash::FxHashMap<Text, Text>;

/// Demangled names by the address of a shared name (a [`Text`] answers
/// hand out for every frame of a function): a hit hashes one word and
/// reads nothing of the name. Each entry keeps its name, so the address is
/// not reused while the entry lives.
type ByAddress = rustc_hash::FxHashMap<usize, (Text, Text)>;

thread_local! {
    /// For names spelled out (`&str`): the free functions, markup names.
    static REMEMBERED: std::cell::RefCell<[Remembered; 2]> = std::cell::RefCell::default();
    /// For shared names, through a [`Shared`] table.
    static BY_ADDRESS: std::cell::RefCell<[ByAddress; 2]> = std::cell::RefCell::default();
}

/// Names demangled by any of the threads that hold it, asked when a
/// thread's own table misses: the filter's read-ahead demangles the names
/// in the answers it hands over (see [`crate::render::Discard`]), so the
/// writing thread finds them done. Clones share one table. A shared name
/// is its own key: it is not copied.
#[derive(Clone, Default)]
pub struct Shared(Arc<Mutex<[Remembered; 2]>>);

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Shared(..)")
    }
}

impl Shared {
    /// [`demangle_full`] of a shared name, through this table.
    pub fn full(&self, name: &Text) -> Text {
        self.by_address(FULL, name, full_uncached)
    }

    /// [`demangle_llvm`] of a shared name, through this table.
    pub fn llvm(&self, name: &Text) -> Text {
        self.by_address(LLVM, name, llvm_uncached)
    }

    /// [`demangle_full`] of a name the log spells out, through this table.
    pub fn full_str(&self, name: &str) -> Text {
        remembered(FULL, name, full_uncached, Some(self))
    }

    /// [`demangle_llvm`] of a name the log spells out, through this table.
    pub fn llvm_str(&self, name: &str) -> Text {
        remembered(LLVM, name, llvm_uncached, Some(self))
    }

    fn by_address(&self, style: usize, name: &Text, demangle: fn(&str) -> String) -> Text {
        let key = Arc::as_ptr(name).cast::<u8>() as usize;
        BY_ADDRESS.with(|tables| {
            let mut tables = tables.borrow_mut();
            let table = &mut tables[style];
            if let Some((_, hit)) = table.get(&key) {
                return Text::clone(hit);
            }
            let (_, out) = self.get(style, name, || Text::clone(name), demangle);
            insert_bounded(
                table,
                MAX_REMEMBERED,
                key,
                (Text::clone(name), Text::clone(&out)),
            );
            out
        })
    }

    /// `name` demangled and the table's key for it, from the table when it
    /// is there; else the key is `key()` (a shared name itself, or a copy
    /// of a spelled-out one).
    fn get(
        &self,
        style: usize,
        name: &str,
        key: impl FnOnce() -> Text,
        demangle: fn(&str) -> String,
    ) -> (Text, Text) {
        // Demangling cannot panic with the lock held: a poisoned table is
        // still a table of finished entries.
        let lock = || self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((key, hit)) = lock()[style].get_key_value(name) {
            return (Text::clone(key), Text::clone(hit));
        }
        let key = key();
        let out = made(&key, demangle);
        insert_bounded(
            &mut lock()[style],
            MAX_REMEMBERED,
            Text::clone(&key),
            Text::clone(&out),
        );
        (key, out)
    }

    /// The table's [`demangle_full`] entry for `name`, if it has one.
    #[cfg(test)]
    pub(crate) fn has_full(&self, name: &str) -> Option<String> {
        let tables = self.0.lock().unwrap_or_else(|e| e.into_inner());
        tables[FULL].get(name).map(|s| s.to_string())
    }
}

/// Index of each style's table.
const FULL: usize = 0;
const LLVM: usize = 1;

fn remembered(
    style: usize,
    name: &str,
    demangle: fn(&str) -> String,
    shared: Option<&Shared>,
) -> Text {
    REMEMBERED.with(|tables| {
        let mut tables = tables.borrow_mut();
        let table = &mut tables[style];
        if let Some(hit) = table.get(name) {
            return Text::clone(hit);
        }
        let (key, out) = match shared {
            Some(shared) => shared.get(style, name, || Text::from(name), demangle),
            None => {
                let key = Text::from(name);
                let out = made(&key, demangle);
                (key, out)
            }
        };
        insert_bounded(table, MAX_REMEMBERED, Text::clone(&key), Text::clone(&out));
        out
    })
}

/// `name` demangled: `name` itself when demangling leaves it as it is (a
/// C name, a name that is no mangling).
fn made(name: &Text, demangle: fn(&str) -> String) -> Text {
    let out = demangle(name);
    if out == **name {
        Text::clone(name)
    } else {
        Text::from(out)
    }
}

/// Demangle for people (see the module docs).
pub fn demangle_full(name: &str) -> String {
    remembered(FULL, name, full_uncached, None).to_string()
}

/// Demangle as `llvm::demangle` does (see the module docs).
pub fn demangle_llvm(name: &str) -> String {
    remembered(LLVM, name, llvm_uncached, None).to_string()
}

/// [`demangle_llvm`] without the cache: what a name costs the first time
/// (for benchmarks).
#[doc(hidden)]
pub fn demangle_llvm_uncached(name: &str) -> String {
    llvm_uncached(name)
}

fn full_uncached(name: &str) -> String {
    if is_rust(name)
        && let Some(s) = rust(name)
    {
        return s;
    }
    llvm_uncached(name)
}

/// A Rust legacy (`_ZN...17h<hash>E`) or v0 (`_R`) name, with at most one
/// extra leading underscore (as Mach-O adds).
fn is_rust(name: &str) -> bool {
    ["_ZN", "__ZN", "_R", "__R"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// As `llvm::demangle`: Itanium (`_Z`, `__Z`, `___Z`), Rust v0 (`_R`), each
/// also with one more leading underscore, then Microsoft (`?`); anything
/// else as it is.
fn llvm_uncached(name: &str) -> String {
    if let Some(s) = non_microsoft(name) {
        return s;
    }
    // LLVM retries without one leading underscore, then without the
    // allowance for a leading dot.
    if let Some(rest) = name.strip_prefix('_')
        && let Some(s) = non_microsoft_no_dot(rest)
    {
        return s;
    }
    if let Some(s) = msvc::demangle(name, MAX_DEMANGLED) {
        return s;
    }
    name.to_string()
}

fn non_microsoft(name: &str) -> Option<String> {
    // A leading dot (as in `._Z3foov`, a PowerPC function descriptor) is
    // kept in front of the demangled name.
    if let Some(rest) = name.strip_prefix('.') {
        return non_microsoft_no_dot(rest).map(|s| format!(".{s}"));
    }
    non_microsoft_no_dot(name)
}

fn non_microsoft_no_dot(name: &str) -> Option<String> {
    if name.starts_with("_Z") || name.starts_with("__Z") || name.starts_with("___Z") {
        itanium::demangle(name, MAX_DEMANGLED)
    } else if name.starts_with("_R") {
        rust(name)
    } else {
        None
    }
}

fn rust(name: &str) -> Option<String> {
    // v0 names never contain '.'; LLVM shows what follows one (`.llvm.123`,
    // `.0`) in parentheses, as it does for Itanium clones. (Legacy `_ZN`
    // names do hold '.'; rustc-demangle reads their suffixes itself.)
    let split = if name.starts_with("_R") {
        name.find('.')
    } else {
        None
    };
    let (base, suffix) = match split {
        Some(i) => name.split_at(i),
        None => (name, ""),
    };
    let d = rustc_demangle::try_demangle(base).ok()?;
    // Room for the usual demangling (shorter than the name): no growing.
    let mut out = String::with_capacity(name.len());
    let mut w = Bounded(&mut out);
    write!(w, "{d:#}").ok()?;
    if !suffix.is_empty() {
        write!(w, " ({suffix})").ok()?;
    }
    Some(out)
}

/// A `fmt::Write` that fails once the output passes [`MAX_DEMANGLED`].
struct Bounded<'a>(&'a mut String);

impl std::fmt::Write for Bounded<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        if self.0.len() + s.len() > MAX_DEMANGLED {
            return Err(std::fmt::Error);
        }
        self.0.push_str(s);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_demangled_on_one_thread_is_shared_with_the_others() {
        let name = "_ZN4test13one_thread_ok17h0123456789abcdefE";
        let shared = Shared::default();
        let other = shared.clone();
        std::thread::spawn(move || other.full(&Text::from(name)))
            .join()
            .unwrap();
        assert_eq!(
            shared.has_full(name).as_deref(),
            Some("test::one_thread_ok")
        );
        // Another run's table, and the free functions, have none of it.
        demangle_full(name);
        assert_eq!(Shared::default().has_full(name), None);
    }

    #[test]
    fn shared_names_are_remembered_by_address_and_kept() {
        let shared = Shared::default();
        let a = Text::from("_ZN4test1a17h0123456789abcdefE");
        let first = shared.full(&a);
        assert_eq!(&*first, "test::a");
        assert!(Arc::ptr_eq(&first, &shared.full(&a)));
        // The shared table's key is the name itself, not a copy.
        assert_eq!(Arc::strong_count(&a), 3);
        // The tables keep the name: a new one cannot take its address.
        drop(a);
        for name in [
            "_ZN4test1b17h0123456789abcdefE",
            "_ZN4test1c17h0123456789abcdefE",
        ] {
            let demangled = shared.llvm(&Text::from(name));
            assert_eq!(&*demangled, demangle_llvm(name));
        }
        // A name that demangles to itself is its own value.
        let main = Text::from("main");
        assert!(Arc::ptr_eq(&shared.full(&main), &main));
        assert_eq!(
            &*shared.full_str("_ZN4test1a17h0123456789abcdefE"),
            "test::a"
        );
    }

    #[test]
    fn llvm_shows_rust_v0_suffixes() {
        assert_eq!(
            demangle_llvm("_RNvNtCsjrHSEGnQ3l9_3std3imp13NEED_ALTSTACK.0"),
            "std::imp::NEED_ALTSTACK (.0)"
        );
    }

    #[test]
    fn full_decodes_rust_legacy_with_dots() {
        assert_eq!(
            demangle_full(
                "_ZN54_$LT$u32$u20$as$u20$core..iter..traits..accum..Sum$GT$3sum17hb8f2b167ba718cd5E"
            ),
            "<u32 as core::iter::traits::accum::Sum>::sum"
        );
    }

    #[test]
    fn llvm_compatible() {
        assert_eq!(
            demangle_llvm("_ZN4core3fmt5write17h0123456789abcdefE"),
            "core::fmt::write::h0123456789abcdef"
        );
        assert_eq!(demangle_llvm("_RNvCs1234_7mycrate3foo"), "mycrate::foo");
        assert_eq!(demangle_llvm("_Z3foov.cold"), "foo() (.cold)");
        assert_eq!(demangle_llvm("__Z3foov"), "foo()");
        assert_eq!(
            demangle_llvm("_ZN3foo3barEv.cold.1"),
            "foo::bar() (.cold.1)"
        );
        assert_eq!(
            demangle_llvm("_ZN12_GLOBAL__N_11fEv"),
            "(anonymous namespace)::f()"
        );
        assert_eq!(
            demangle_llvm("_ZN5alloc3vec12Vec$LT$T$GT$4push17h0123456789abcdefE"),
            "alloc::vec::Vec$LT$T$GT$::push::h0123456789abcdef"
        );
        assert_eq!(
            demangle_llvm(
                "_ZN54_$LT$u32$u20$as$u20$core..iter..traits..accum..Sum$GT$3sum28_$u7b$$u7b$closure$u7d$$u7d$17hb8f2b167ba718cd5E"
            ),
            "_$LT$u32$u20$as$u20$core..iter..traits..accum..Sum$GT$::sum::_$u7b$$u7b$closure$u7d$$u7d$::hb8f2b167ba718cd5"
        );
        assert_eq!(
            demangle_llvm("_ZNSt6vectorIiSaIiEED2Ev"),
            "std::vector<int, std::allocator<int>>::~vector()"
        );
        assert_eq!(demangle_llvm("foobar"), "foobar");
        assert_eq!(demangle_llvm("_D3foo3barFZv"), "_D3foo3barFZv");
        assert_eq!(demangle_llvm("_Zinvalid"), "_Zinvalid");
        assert_eq!(demangle_llvm(""), "");
    }

    #[test]
    fn full() {
        assert_eq!(
            demangle_full("_ZN4core3fmt5write17h0123456789abcdefE"),
            "core::fmt::write"
        );
        assert_eq!(
            demangle_full("_ZN5alloc3vec12Vec$LT$T$GT$4push17h0123456789abcdefE"),
            "alloc::vec::Vec<T>::push"
        );
        assert_eq!(demangle_full("_RNvCs1234_7mycrate3foo"), "mycrate::foo");
        assert_eq!(demangle_full("_ZN7Mangled4NameEv"), "Mangled::Name()");
        assert_eq!(demangle_full("main"), "main");
    }
}
