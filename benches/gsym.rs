//! GSYM lookups per second: a small real file (llvm-gsymutil's conversion of
//! a C++ fixture) and a large synthetic one (100k functions with line tables
//! and inline trees) built with symfilter's writer, in both byte orders and
//! both versions.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use symfilter::gsym::parser::{GsymView, Layout};
use symfilter::gsym::types::{Endian, VERSION_1, VERSION_2};
use symfilter::gsym_create::writer::{
    EncodeOptions, FunctionInfo, GsymBuilder, InlineNode, LineEntry,
};

const N_FUNCS: u64 = 100_000;

fn synthetic() -> GsymBuilder {
    let mut b = GsymBuilder::new();
    let files: Vec<u32> = (0..200)
        .map(|i| b.insert_file(&format!("/src/dir{}/file{i}.cc", i % 17)))
        .collect();
    for i in 0..N_FUNCS {
        let start = 0x10_0000 + i * 0x80;
        let name = b.insert_string(format!("_ZN4bench8function{i}Ev").as_bytes());
        let file = files[(i % 200) as usize];
        let lines = (0..12)
            .map(|k| LineEntry {
                addr: start + k * 8,
                file,
                line: 10 + (i as u32 % 500) + k as u32 * 3 % 7,
            })
            .collect();
        let inline = (i % 4 == 0).then(|| InlineNode {
            ranges: vec![(start, start + 0x60)],
            name,
            children: vec![InlineNode {
                ranges: vec![(start + 0x10, start + 0x30)],
                name: b.insert_string(b"_ZN4bench6helperEv"),
                call_file: file,
                call_line: 42,
                children: vec![],
            }],
            ..InlineNode::default()
        });
        b.add_function(FunctionInfo {
            start,
            end: start + 0x60,
            name,
            lines: Some(lines),
            inline,
        });
    }
    b.finalize();
    b
}

/// Addresses spread over the whole range (a cheap LCG, fixed seed).
fn addresses(lo: u64, hi: u64, n: usize) -> Vec<u64> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            lo + (x >> 11) % (hi - lo)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("gsym_lookup");
    let addrs_n = 4096;

    let small =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/gsym/app_cpp_O2.gsym"))
            .unwrap();
    let layout = Layout::parse(&small).unwrap();
    let view = GsymView::new(&small, &layout);
    let addrs = addresses(0x1100, 0x1ab4, addrs_n);
    g.throughput(Throughput::Elements(addrs_n as u64));
    g.bench_function("small_cpp_v1", |bench| {
        bench.iter(|| {
            for &a in &addrs {
                let _ = black_box(view.lookup(black_box(a)));
            }
        })
    });

    let b = synthetic();
    let addrs = addresses(0x10_0000, 0x10_0000 + N_FUNCS * 0x80, addrs_n);
    for (name, version, endian) in [
        ("large_v1_le", VERSION_1, Endian::Little),
        ("large_v1_be", VERSION_1, Endian::Big),
        ("large_v2_le", VERSION_2, Endian::Little),
    ] {
        let bytes = b
            .encode(&EncodeOptions {
                version,
                endian,
                addr_off_size: None,
            })
            .unwrap();
        let layout = Layout::parse(&bytes).unwrap();
        let view = GsymView::new(&bytes, &layout);
        g.bench_function(name, |bench| {
            bench.iter(|| {
                for &a in &addrs {
                    let _ = black_box(view.lookup(black_box(a)));
                }
            })
        });
    }
    g.bench_function("large_v1_symbol_only", |bench| {
        let bytes = b.encode(&EncodeOptions::default()).unwrap();
        let layout = Layout::parse(&bytes).unwrap();
        let view = GsymView::new(&bytes, &layout);
        bench.iter(|| {
            for &a in &addrs {
                let _ = black_box(view.lookup_symbol(black_box(a)));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
