//! Microsoft C++ names (`?draw@Widget@gfx@@QEBAHH@Z`), demangled by the
//! `msvc-demangler` crate in its LLVM style, with the few special names
//! that LLVM 22 spells differently rewritten to LLVM's spelling.
//!
//! The crate recurses once per nesting level of the name, so it runs on a
//! thread of its own with a stack sized for the longest name MSVC itself
//! emits ([`MAX_MANGLED`]; longer names are hashed by the compiler): a
//! hostile name cannot overflow the caller's stack. The crate can also
//! panic on hostile names (arithmetic overflow in debug builds, found by
//! fuzzing): such a panic ends only that thread, the name is "not
//! demangled", and the panic hook keeps quiet about it (see [`quiet`]).

use msvc_demangler::DemangleFlags;
use std::sync::Once;

/// MSVC's own limit on a mangled name's length.
const MAX_MANGLED: usize = 4096;

/// Enough for [`MAX_MANGLED`] bytes of the deepest nesting, with room to
/// spare; only the pages used are ever touched.
const STACK: usize = 64 << 20;

/// `name` demangled as LLVM's Microsoft demangler prints it, or `None`.
pub fn demangle(name: &str, limit: usize) -> Option<String> {
    if !name.starts_with('?') || name.len() > MAX_MANGLED {
        return None;
    }
    quiet();
    let out = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name(THREAD.into())
            .stack_size(STACK)
            .spawn_scoped(scope, || {
                msvc_demangler::demangle(name, DemangleFlags::llvm()).ok()
            })
            .ok()?
            .join()
            .ok()?
    })?;
    let out = llvm_spelling(name, out)?;
    (out.len() <= limit).then_some(out)
}

const THREAD: &str = "msvc-demangle";

/// Install, once, a panic hook that says nothing for panics on the
/// demangling thread (the name is then printed as it is) and hands every
/// other panic to the hook that was there before.
fn quiet() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() != Some(THREAD) {
                previous(info);
            }
        }));
    });
}

/// The crate's text for the special members and tables, in LLVM 22's
/// words.
fn llvm_spelling(name: &str, out: String) -> Option<String> {
    // Dynamic initializers and atexit destructors of a variable:
    // LLVM: "void __cdecl `dynamic initializer for 'x''(void)".
    for (code, what) in [
        ("??__E", "dynamic initializer"),
        ("??__F", "dynamic atexit destructor"),
    ] {
        if name.starts_with(code) {
            let marker = format!("::`{what}'(");
            let at = out.find(&marker)?;
            let head = &out[..at];
            let var_start = head.rfind(' ').map_or(0, |i| i + 1);
            let (prefix, var) = head.split_at(var_start);
            let rest = &out[at + marker.len() - 1..];
            return Some(format!("{prefix}`{what} for '{var}''{rest}"));
        }
    }
    // RTTI type descriptors: LLVM writes "struct A `RTTI Type Descriptor'".
    if name.starts_with("??_R0") {
        return Some(out.replacen("::`RTTI Type Descriptor'", " `RTTI Type Descriptor'", 1));
    }
    let out = out
        .replace("`vbtable'{for `'}}", "`vbtable'")
        .replace("`vftable'{for `'}}", "`vftable'")
        .replace("deleting destructor'", "deleting dtor'")
        .replace("`vbase destructor'", "`vbase dtor'");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_and_bounds() {
        assert_eq!(
            demangle("?draw@Widget@gfx@@QEBAHH@Z", 1000).as_deref(),
            Some("public: int __cdecl gfx::Widget::draw(int) const")
        );
        assert_eq!(demangle("?draw@Widget@gfx@@QEBAHH@Z", 10), None);
        assert_eq!(demangle("_?x@@3HA", 1000), None);
        let deep = format!("?x@@3{}HA", "PEA".repeat(1300));
        assert!(demangle(&deep, usize::MAX).is_some());
        let too_long = format!("?x@@3{}HA", "PEA".repeat(100_000));
        assert_eq!(demangle(&too_long, usize::MAX), None);
    }

    /// Found by fuzzing: the crate overflows an `i32` reading this guard
    /// number (a panic in debug builds).
    #[test]
    fn a_panic_in_the_crate_is_a_name_not_demangled() {
        assert_eq!(demangle("?$TSS777777777777777777", 1000), None);
    }
}
