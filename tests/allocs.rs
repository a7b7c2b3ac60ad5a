//! The steady state allocates nothing: once every address of a log has
//! been looked up, filtering its lines again costs no heap allocation, in
//! any output format. A counting global allocator (this binary's own, so
//! the other tests do not run under it) counts the allocations of the
//! test's thread while a run is measured.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write;
use std::path::Path;

use symfilter::render::Format;

#[path = "support/in_tree.rs"]
mod in_tree;

struct Counting;

thread_local! {
    /// Allocations of this thread, while `Some`.
    static COUNT: Cell<Option<u64>> = const { Cell::new(None) };
}

fn count() {
    // A thread being torn down has no counter left: not counted.
    let _ = COUNT.try_with(|c| c.set(c.get().map(|n| n + 1)));
}

// SAFETY: every call is passed to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by this thread in `f`.
fn allocations(f: impl FnOnce()) -> u64 {
    COUNT.set(Some(0));
    f();
    COUNT.replace(None).unwrap_or(0)
}

const BASE: u64 = 0x7f00_0000_0000;

/// The fixture's context lines, and lines of elements: every code address
/// of its differential test as `bt` and `pc` (with inlined frames, symbol
/// table answers and addresses with no answer among them), its data
/// addresses, symbols, and lines of many elements.
fn log(build_id: &str) -> (Vec<u8>, Vec<u8>) {
    let expected = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/elf/expected");
    let addrs = |name: &str| -> Vec<u64> {
        std::fs::read_to_string(expected.join(name))
            .expect("fixture addresses")
            .lines()
            .map(|l| u64::from_str_radix(l.trim_start_matches("0x"), 16).expect("hex"))
            .collect()
    };
    let mut head = Vec::new();
    writeln!(head, "{{{{{{reset}}}}}}").unwrap();
    writeln!(head, "{{{{{{module:0:cpp_O2:elf:{build_id}}}}}}}").unwrap();
    for (start, size, mode) in [
        (0, 0x1000, "r"),
        (0x1000, 0x1000, "rx"),
        (0x2000, 0x1000, "r"),
        (0x3000, 0x2000, "rw"),
    ] {
        let at = BASE + start;
        writeln!(
            head,
            "{{{{{{mmap:{at:#x}:{size:#x}:load:0:{mode}:{start:#x}}}}}}}"
        )
        .unwrap();
    }
    let mut body = Vec::new();
    let code = addrs("cpp_O2.addrs");
    for (i, a) in code.iter().enumerate() {
        writeln!(body, "  {{{{{{bt:{}:{:#x}:ra}}}}}}", i % 8, BASE + a + 1).unwrap();
        writeln!(body, "fault at {{{{{{pc:{:#x}}}}}}} here", BASE + a).unwrap();
    }
    for a in addrs("cpp_O2.data.addrs") {
        writeln!(body, "object {{{{{{data:{:#x}}}}}}}", BASE + a).unwrap();
    }
    body.extend_from_slice(b"call {{{symbol:_ZN7Mangled4NameEv}}} and {{{symbol:main}}}\n");
    body.extend_from_slice(b"\x1b[31mred\x1b[0m plain {{{symbol:main}}}\n");
    for w in code.windows(3).step_by(7) {
        writeln!(
            body,
            "{{{{{{pc:{:#x}}}}}}} {{{{{{pc:{:#x}}}}}}} {{{{{{data:{:#x}}}}}}} {{{{{{pc:{:#x}}}}}}} end",
            BASE + w[0],
            BASE + w[1],
            BASE + 0x4000,
            BASE + w[2]
        )
        .unwrap();
    }
    // An address no region covers.
    body.extend_from_slice(b"{{{pc:0x10}}}\n");
    (head, body)
}

#[test]
fn repeated_elements_allocate_nothing() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/elf/bin/cpp_O2");
    let build_id = in_tree::build_id(&std::fs::read(&file).expect("fixture"));
    let tree = in_tree::tree(&file, &build_id);
    let (head, body) = log(&build_id);

    let mut failures = Vec::new();
    for (format, color) in [
        (Format::Human, false),
        (Format::Human, true),
        (Format::Llvm, false),
        (Format::Llvm, true),
        (Format::Json, false),
    ] {
        let mut filter = in_tree::filter(tree.path(), format, color);
        let mut out = std::io::sink();
        // Everything looked up and shown three times: printers keep what
        // they make of an answer from its third showing, and buffers
        // reach their size.
        for text in [&head, &body, &body, &body] {
            filter.run("log", &text[..], &mut out).expect("filter");
        }
        let n = allocations(|| filter.run("log", &body[..], &mut out).expect("filter"));
        if n != 0 {
            failures.push(format!("{format:?} (colour {color}): {n} allocations"));
        }
        filter.finish(&mut out).expect("finish");
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
