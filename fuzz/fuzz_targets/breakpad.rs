//! Fuzz the Breakpad `.sym` parser and resolver: any bytes must parse to an
//! index or a typed error, and every lookup must return, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use symfilter::breakpad::{BreakpadSymbols, Bytes};

fuzz_target!(|data: &[u8]| {
    let Ok(mut syms) = BreakpadSymbols::parse(Bytes::Owned(data.to_vec())) else {
        return;
    };
    // A non-PIE module's image base from the log, for files without one.
    if data.len() % 2 == 1 {
        syms.apply_image_base_hint(0x400000);
    }
    let idx = syms.index();
    let base = syms.image_base();
    let mut addrs = vec![0, 1, u64::MAX, base];
    for f in idx.funcs.iter().take(64) {
        addrs.extend([f.address, f.address.wrapping_add(f.size / 2), f.end()]);
    }
    for p in idx.publics.iter().take(64) {
        addrs.extend([p.address, p.address.wrapping_add(1)]);
    }
    for &(a, s) in idx.inline_ranges.iter().take(64) {
        addrs.extend([a, a.wrapping_add(s)]);
    }
    for a in addrs {
        let _ = syms.lookup(a);
        let _ = syms.lookup(a.wrapping_add(base));
    }
    let _ = (syms.debug_id(), syms.debug_file(), syms.code_id());
});
