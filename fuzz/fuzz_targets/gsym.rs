//! Fuzz the GSYM reader (any bytes: header, section directory, tables,
//! FunctionInfo, line tables, inline trees) and the Breakpad -> GSYM
//! writer path (text starting with "MODULE"), whose output must read back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use symfilter::gsym_create::from_breakpad;
use symfilter::gsym::parser::{GsymView, Layout};
use symfilter::gsym::types::{Endian, VERSION_1, VERSION_2};
use symfilter::gsym_create::writer::{EncodeOptions, GsymBuilder};

fn exercise(data: &[u8]) {
    let Ok(layout) = Layout::parse(data) else {
        return;
    };
    let view = GsymView::new(data, &layout);
    let n = view.num_addresses().min(256);
    for i in 0..n {
        if let Some(a) = view.address(i) {
            for d in [0u64, 1, 7, 64] {
                let _ = view.lookup(a.wrapping_add(d));
                let _ = view.lookup_symbol(a.wrapping_add(d));
            }
        }
        let _ = view.function_at(i);
    }
    for off in 0..16u64 {
        let _ = view.string(off);
        let _ = view.file(off);
    }
    let _ = view.lookup(0);
    let _ = view.lookup(u64::MAX);
}

fuzz_target!(|data: &[u8]| {
    exercise(data);
    if data.starts_with(b"MODULE ") {
        let mut b = GsymBuilder::new();
        if from_breakpad(data, 0, &mut b).is_ok() {
            b.finalize();
            for (version, endian) in [(VERSION_1, Endian::Little), (VERSION_2, Endian::Big)] {
                let opts = EncodeOptions { version, endian, addr_off_size: None };
                if let Ok(bytes) = b.encode(&opts) {
                    assert!(Layout::parse(&bytes).is_ok(), "writer output must parse");
                    exercise(&bytes);
                }
            }
        }
    }
});
