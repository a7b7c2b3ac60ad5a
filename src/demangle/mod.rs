//! The one demangling service of the program, full (human) and
//! LLVM-compatible. A name an answer carries ([`Name`]) keeps its
//! demangled forms, made once for every thread that shows it; a name
//! spelled out (in markup, say) goes through a cache per thread.
//!
//! * [`demangle_llvm`]: what `llvm::demangle` (LLVM 22) prints. Itanium C++
//!   names (`_Z`, `__Z`, `___Z..._block_invoke`, each also with one more
//!   leading underscore or a leading dot) go through our own demangler
//!   (`itanium/`), whose output is byte-identical to LLVM's; Rust v0
//!   (`_R`) is demangled without crate disambiguators; Rust legacy names are
//!   Itanium names to LLVM, so `$LT$..$GT$`, `..` and `::h<hash>` stay;
//!   Microsoft C++ names (`?...`, and RTTI type names `.?A...`) go through
//!   our own Microsoft demangler (`msvc/`), whose output is byte-identical
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

use crate::base::insert_bounded;
use crate::symbols::{Name, Text};

/// Longest demangled name we accept before falling back to the raw name.
pub const MAX_DEMANGLED: usize = 64 * 1024;

/// Names remembered per thread and style before the table is refilled:
/// logs name the same functions again and again, and demangling costs more
/// than the rest of rendering a frame.
const MAX_REMEMBERED: usize = 1 << 15;

/// Demangled names by raw name. A remembered name is handed out shared: a
/// hit costs a hash and a reference count, not a copy. A name that
/// demangles to itself is its own value.
type Remembered = rustc_hash::FxHashMap<Text, Text>;

/// Names answers carry whose demangled form (of one style) is made, by
/// spelling: another name of the same spelling (from the symbol table and
/// the DWARF, say) takes the form made for the first.
type Spelled = rustc_hash::FxHashMap<Name, ()>;

thread_local! {
    /// For names spelled out (`&str`).
    static REMEMBERED: std::cell::RefCell<[Remembered; 2]> = std::cell::RefCell::default();
    /// For names answers carry.
    static SPELLED: std::cell::RefCell<[Spelled; 2]> = std::cell::RefCell::default();
}

/// [`demangle_full`] of a name an answer carries, made once per name.
pub fn full(name: &Name) -> &str {
    name.derived(FULL, || form(FULL, name, full_uncached))
}

/// [`demangle_llvm`] of a name an answer carries, made once per name.
pub fn llvm(name: &Name) -> &str {
    name.derived(LLVM, || form(LLVM, name, llvm_uncached))
}

/// The demangled form of `name` (`None`: the name itself), taken from a
/// name of the same spelling this thread has made it for, else made.
fn form(style: usize, name: &Name, demangle: fn(&str) -> String) -> Option<Text> {
    SPELLED.with(|tables| {
        let mut tables = tables.borrow_mut();
        let table = &mut tables[style];
        let raw = name.raw();
        if let Some(made) = table
            .get_key_value(raw)
            .and_then(|(seen, _)| seen.made(style))
        {
            return made.clone();
        }
        let out = demangle(raw);
        let form = (out != raw).then(|| Text::from(out));
        insert_bounded(table, MAX_REMEMBERED, name.clone(), ());
        form
    })
}

/// [`demangle_full`] of a name spelled out, through this thread's cache.
pub fn full_str(name: &str) -> Text {
    remembered(FULL, name, full_uncached)
}

/// [`demangle_llvm`] of a name spelled out, through this thread's cache.
pub fn llvm_str(name: &str) -> Text {
    remembered(LLVM, name, llvm_uncached)
}

/// Index of each style's table, and of its form in a [`Name`].
pub(crate) const FULL: usize = 0;
pub(crate) const LLVM: usize = 1;

fn remembered(style: usize, name: &str, demangle: fn(&str) -> String) -> Text {
    REMEMBERED.with(|tables| {
        let mut tables = tables.borrow_mut();
        let table = &mut tables[style];
        if let Some(hit) = table.get(name) {
            return Text::clone(hit);
        }
        let key = Text::from(name);
        let out = demangle(name);
        let out = if out == name {
            Text::clone(&key)
        } else {
            Text::from(out)
        };
        insert_bounded(table, MAX_REMEMBERED, key, Text::clone(&out));
        out
    })
}

/// Demangle for people (see the module docs).
pub fn demangle_full(name: &str) -> String {
    full_str(name).to_string()
}

/// Demangle as `llvm::demangle` does (see the module docs).
pub fn demangle_llvm(name: &str) -> String {
    llvm_str(name).to_string()
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
    fn a_name_demangled_on_one_thread_is_kept_for_the_others() {
        let name = Name::from("_ZN4test13one_thread_ok17h0123456789abcdefE");
        let other = name.clone();
        let made = std::thread::spawn(move || full(&other).as_ptr() as usize)
            .join()
            .unwrap();
        // The same bytes: made once, on the other thread.
        assert_eq!(full(&name).as_ptr() as usize, made);
        assert_eq!(full(&name), "test::one_thread_ok");
        assert_eq!(llvm(&name), "test::one_thread_ok::h0123456789abcdef");
    }

    #[test]
    fn names_of_one_spelling_share_one_demangling() {
        let raw = "_ZN4test7spelled17h0123456789abcdefE";
        let (a, b) = (Name::from(raw), Name::from(raw));
        assert!(!Name::ptr_eq(&a, &b));
        assert_eq!(full(&a).as_ptr(), full(&b).as_ptr());
        assert_eq!(full(&b), "test::spelled");
        // Each style its own.
        assert_eq!(llvm(&b), "test::spelled::h0123456789abcdef");
    }

    #[test]
    fn a_name_that_demangles_to_itself_is_not_copied() {
        let main = Name::from("main");
        assert_eq!(full(&main).as_ptr(), main.raw().as_ptr());
        assert_eq!(llvm(&main).as_ptr(), main.raw().as_ptr());
        let spelled = full_str("main");
        assert!(std::sync::Arc::ptr_eq(&spelled, &full_str("main")));
        assert_eq!(&*full_str("_ZN4test1a17h0123456789abcdefE"), "test::a");
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
    fn full_is_for_people() {
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
