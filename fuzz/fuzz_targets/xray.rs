//! Fuzz the XRay FDR decoder and every report built on it (account, stack,
//! conversion): no input may panic, hang or allocate without bound.
//!
//! fuzz/Cargo.toml:
//!   [[bin]]
//!   name = "xray"
//!   path = "fuzz_targets/xray.rs"
//!   test = false
//!   doc = false
//!   bench = false
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    symfilter::xray::exercise(data);
});
