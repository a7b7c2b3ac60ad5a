//! The demangler on arbitrary names: never a panic, bounded output, and a
//! name it cannot read comes back unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use symfilter::demangle::{MAX_DEMANGLED, demangle_full, demangle_llvm};

fuzz_target!(|data: &[u8]| {
    let Ok(name) = std::str::from_utf8(data) else {
        return;
    };
    // Seed the interesting prefixes so the fuzzer does not have to find them.
    for prefix in ["", "_Z", "_ZN", "___Z", "?", "??$", "??_"] {
        let name = format!("{prefix}{name}");
        for out in [demangle_llvm(&name), demangle_full(&name)] {
            assert!(out == name || out.len() <= MAX_DEMANGLED + 1);
        }
    }
});
