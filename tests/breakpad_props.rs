//! Properties of the `.sym` parser and resolver:
//! - lookups over a random well-formed file agree with a naive model of
//!   Breakpad's processor (linear scans, no index), whatever the record
//!   order in the file;
//! - arbitrary bytes, and random damage to a real dump_syms file, never
//!   panic (the same harness as fuzz/fuzz_targets/breakpad.rs).

use std::fmt::Write;
use std::path::Path;

use proptest::prelude::*;
use symfilter::breakpad::{BreakpadSymbols, Bytes};

#[derive(Clone, Debug)]
struct Func {
    addr: u64,
    size: u64,
    /// (offset from addr, size, line, file)
    lines: Vec<(u64, u64, u32, u32)>,
}

#[derive(Clone, Debug)]
struct Model {
    funcs: Vec<Func>,
    publics: Vec<u64>,
    files: u32,
}

/// Non-overlapping functions (gaps and sizes drawn at random), each with
/// non-overlapping lines inside it, and PUBLICs anywhere.
fn model() -> impl Strategy<Value = Model> {
    let func = (
        0u64..64,
        1u64..64,
        prop::collection::vec((0u64..8, 1u64..8, 0u32..500, 0u32..4), 0..6),
    );
    (
        prop::collection::vec(func, 0..20),
        prop::collection::vec(0u64..3000, 0..20),
    )
        .prop_map(|(raw, publics)| {
            let mut at = 0x100;
            let mut funcs = Vec::new();
            for (gap, size, lines) in raw {
                let addr = at + gap;
                let mut off = 0;
                let mut ls = Vec::new();
                for (g, s, line, file) in lines {
                    let start = off + g;
                    if start + s > size {
                        break;
                    }
                    ls.push((start, s, line, file));
                    off = start + s;
                }
                funcs.push(Func {
                    addr,
                    size,
                    lines: ls,
                });
                at = addr + size;
            }
            let mut publics = publics;
            publics.sort();
            publics.dedup();
            Model {
                funcs,
                publics,
                files: 4,
            }
        })
}

fn render(m: &Model, order: &[usize]) -> String {
    let mut s = String::from("MODULE Linux x86_64 0123 test\n");
    for f in 0..m.files {
        let _ = writeln!(s, "FILE {f} /src/f{f}.c");
    }
    // Records in a shuffled order: the parser must sort.
    for &i in order {
        if let Some(f) = m.funcs.get(i) {
            let _ = writeln!(s, "FUNC {:x} {:x} 0 fn{i}", f.addr, f.size);
            for &(o, sz, line, file) in f.lines.iter().rev() {
                let _ = writeln!(s, "{:x} {sz:x} {line} {file}", f.addr + o);
            }
        }
    }
    for p in &m.publics {
        let _ = writeln!(s, "PUBLIC {p:x} 0 pub{p:x}");
    }
    s
}

/// What the processor answers: (name, file, line).
fn naive(m: &Model, addr: u64) -> Option<(String, Option<String>, u32)> {
    for (i, f) in m.funcs.iter().enumerate() {
        if addr >= f.addr && addr < f.addr + f.size {
            let line = f
                .lines
                .iter()
                .find(|l| addr >= f.addr + l.0 && addr < f.addr + l.0 + l.1);
            return Some((
                format!("fn{i}"),
                line.map(|l| format!("/src/f{}.c", l.3)),
                line.map_or(0, |l| l.2),
            ));
        }
    }
    let p = m.publics.iter().rev().find(|&&p| p <= addr)?;
    // No FUNC may start between the PUBLIC and the address.
    if m.funcs.iter().any(|f| f.addr >= *p && f.addr <= addr) {
        return None;
    }
    Some((format!("pub{p:x}"), None, 0))
}

fn check_no_panic(data: &[u8]) {
    let Ok(syms) = BreakpadSymbols::parse(Bytes::Owned(data.to_vec())) else {
        return;
    };
    let idx = syms.index();
    let mut addrs = vec![0, 1, u64::MAX];
    for f in &idx.funcs {
        addrs.extend([f.address, f.address.wrapping_add(f.size / 2), f.end()]);
    }
    for p in &idx.publics {
        addrs.push(p.address.wrapping_add(1));
    }
    for &(a, _) in &idx.inline_ranges {
        addrs.push(a);
    }
    for a in addrs {
        let _ = syms.lookup(a);
    }
}

proptest! {
    #[test]
    fn lookups_match_the_processor_model(m in model(), seed in any::<u64>()) {
        let mut order: Vec<usize> = (0..m.funcs.len()).collect();
        // Deterministic shuffle from the seed.
        let mut x = seed | 1;
        for i in (1..order.len()).rev() {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            order.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let text = render(&m, &order);
        let syms = BreakpadSymbols::parse(Bytes::Owned(text.into_bytes())).unwrap();
        prop_assert_eq!(syms.corruption().count, 0);
        let end = m.funcs.last().map_or(0x100, |f| f.addr + f.size) + 64;
        for addr in 0..end.max(3100) {
            let want = naive(&m, addr);
            let got = syms.lookup(addr).map(|info| match info.frames.first() {
                Some(f) => (
                    f.function.as_deref().unwrap_or_default().to_owned(),
                    f.file.as_deref().map(str::to_owned),
                    f.line,
                ),
                None => (
                    info.symbol.map(|s| s.name.to_string()).unwrap_or_default(),
                    None,
                    0,
                ),
            });
            prop_assert_eq!(got, want, "address {:#x}", addr);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..2000)) {
        check_no_panic(&data);
        let mut with_header = b"MODULE Linux x86_64 ID m\n".to_vec();
        with_header.extend_from_slice(&data);
        check_no_panic(&with_header);
    }

    #[test]
    fn damaged_dump_syms_output_never_panics(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..40),
        cut in any::<prop::sample::Index>(),
        old_forms in any::<bool>(),
    ) {
        let breakpad = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/breakpad");
        let path = if old_forms {
            breakpad.join("old-forms/inline-O2.sym")
        } else {
            let store = breakpad.join("store/inline-O2");
            let dir = std::fs::read_dir(&store).unwrap().next().unwrap().unwrap().path();
            dir.join("inline-O2.sym")
        };
        let mut data = std::fs::read(path).unwrap();
        for (at, byte) in edits {
            let i = at.index(data.len());
            data[i] = byte;
        }
        data.truncate(cut.index(data.len() + 1));
        check_no_panic(&data);
    }
}

#[test]
fn inline_records_with_bad_nesting_do_not_panic() {
    let text = "MODULE Linux x86_64 ID m\nINLINE_ORIGIN 0 a\nFUNC 100 50 0 f\n\
INLINE 3 1 0 0 100 10\nINLINE 0 1 9 7 100 10\nINLINE 1 2 0 0 ffffffffffffffff 10\n\
INLINE 0 1 0 0 1g0\nINLINE 0 1 0 0\n100 50 1 0\n";
    let syms = BreakpadSymbols::parse(Bytes::Owned(text.as_bytes().to_vec())).unwrap();
    assert_eq!(syms.corruption().count, 2);
    let info = syms.lookup(0x101).unwrap();
    // Depth 0 (origin 7 is unknown, call file 9 too), no depth 1 covering
    // 0x101, the orphan depth-3 record is never reached.
    assert_eq!(info.frames.len(), 2);
    assert_eq!(info.frames[0].function, None);
    assert_eq!(info.frames[1].function.as_deref(), Some("f"));
    assert_eq!(info.frames[1].file, None);
}
