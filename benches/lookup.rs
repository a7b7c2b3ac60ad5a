//! Code and data lookups through the ELF/DWARF source.
//!
//! By default over the committed fixtures (testdata/elf/bin); set
//! SYMFILTER_BENCH_FILE to an ELF file with DWARF (for example ripgrep built
//! with debug info) to measure a large binary: 10,000 pseudo-random
//! addresses in its .text, the first pass (cold: units parsed on demand)
//! and repeated passes (warm), and opening it for a single answer.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use object::{Object, ObjectSection};
use symfilter::symbols::{CodeWant, DataWant, SymbolSource};

fn text_addresses(path: &PathBuf, n: usize) -> Vec<u64> {
    let data = std::fs::read(path).expect("read bench file");
    let obj = object::File::parse(&*data).expect("parse bench file");
    let text = obj.section_by_name(".text").expect(".text");
    let (start, size) = (text.address(), text.size().max(1));
    // xorshift: reproducible, no extra dependency.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            start + x % size
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let files: Vec<PathBuf> = match std::env::var_os("SYMFILTER_BENCH_FILE") {
        Some(f) => vec![PathBuf::from(f)],
        None => ["c_O2", "cpp_O2"]
            .iter()
            .map(|n| {
                PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("testdata/elf/bin")
                    .join(n)
            })
            .collect(),
    };
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let addrs = text_addresses(&file, 10_000);
        // What `symfilter lookup --file F ADDR` does: open, one answer.
        c.bench_function(&format!("{name}/open+first-code-lookup"), |b| {
            b.iter(|| {
                let src = symfilter::elf::open_file(&file, &[]).expect("open");
                black_box(src.lookup_code(addrs[0], CodeWant::default()))
            })
        });
        c.bench_function(&format!("{name}/open+10k-code-lookups"), |b| {
            b.iter(|| {
                let src = symfilter::elf::open_file(&file, &[]).expect("open");
                for &a in &addrs {
                    let _ = black_box(src.lookup_code(a, CodeWant::default()));
                }
            })
        });
        let src = symfilter::elf::open_file(&file, &[]).expect("open");
        c.bench_function(&format!("{name}/warm-code-lookup"), |b| {
            let mut i = 0;
            b.iter(|| {
                i = (i + 1) % addrs.len();
                black_box(src.lookup_code(addrs[i], CodeWant::default()))
            })
        });
        c.bench_function(&format!("{name}/warm-data-lookup"), |b| {
            let mut i = 0;
            b.iter(|| {
                i = (i + 1) % addrs.len();
                black_box(src.lookup_data(addrs[i], DataWant::default()))
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
