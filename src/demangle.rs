//! Demangling, full (human) and LLVM-compatible.
//!
//! * [`demangle_full`]: what a person wants to read. Rust legacy symbols are
//!   fully decoded (`$LT$` -> `<`, `..` -> `::`) and lose their `::h<hash>`;
//!   Rust v0 and Itanium C++ are demangled; anything else comes back as is.
//! * [`demangle_llvm`]: what `llvm::demangle` prints. Rust legacy names go
//!   through the Itanium demangler, so `$LT$..$GT$`, `..` and `::h<hash>`
//!   stay; Rust v0 is demangled without crate disambiguators; Itanium names
//!   with one or three leading underscores (`_Z`, `___Z`, or `__Z` after
//!   dropping one) are demangled, with clone suffixes shown as ` (.cold)`.
//!
//! Output is bounded: a demangling longer than [`MAX_DEMANGLED`] bytes (a
//! hostile name can expand exponentially) is replaced by the raw name.

use std::fmt::Write;

/// Longest demangled name we accept before falling back to the raw name.
pub const MAX_DEMANGLED: usize = 64 * 1024;

/// Demangle for people (see the module docs).
pub fn demangle_full(name: &str) -> String {
    if name.is_empty() {
        return String::new();
    }
    if let Some(s) = rust(name) {
        return s;
    }
    if let Some(s) = itanium(name) {
        return s;
    }
    name.to_string()
}

/// Demangle as `llvm::demangle` does (see the module docs).
pub fn demangle_llvm(name: &str) -> String {
    if let Some(s) = non_microsoft(name) {
        return s;
    }
    if let Some(rest) = name.strip_prefix('_')
        && let Some(s) = non_microsoft(rest)
    {
        return s;
    }
    name.to_string()
}

fn non_microsoft(name: &str) -> Option<String> {
    if name.starts_with("_Z") || name.starts_with("___Z") {
        itanium(name)
    } else if name.starts_with("_R") {
        rust(name)
    } else {
        None
    }
}

fn rust(name: &str) -> Option<String> {
    let d = rustc_demangle::try_demangle(name).ok()?;
    let mut out = String::new();
    let mut w = Bounded(&mut out);
    write!(w, "{d:#}").ok()?;
    Some(out)
}

fn itanium(name: &str) -> Option<String> {
    // Itanium names never contain '.'; what follows one is a clone suffix
    // (`.cold`, `.isra.0`), shown as LLVM does: ` (.cold)`.
    let (base, suffix) = match name.find('.') {
        Some(i) => name.split_at(i),
        None => (name, ""),
    };
    let sym = cpp_demangle::Symbol::new(base.as_bytes()).ok()?;
    let opts = cpp_demangle::DemangleOptions::new();
    let mut out = String::new();
    let mut w = Bounded(&mut out);
    sym.structured_demangle(&mut FmtSink(&mut w), &opts).ok()?;
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

struct FmtSink<'a, 'b>(&'a mut Bounded<'b>);

impl cpp_demangle::DemangleWrite for FmtSink<'_, '_> {
    fn write_string(&mut self, s: &str) -> std::fmt::Result {
        self.0.write_str(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
