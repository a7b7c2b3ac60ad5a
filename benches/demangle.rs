//! Demangling cost per name, without the cache: the 3,000 real C++ symbols
//! of testdata/demangle/itanium.tsv (a sample of libLLVM, libclang-cpp,
//! libstdc++, Boost, ICU and z3), one after another.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use symfilter::demangle::demangle_llvm_uncached;

fn names() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/demangle/itanium.tsv");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

fn bench(c: &mut Criterion) {
    let names = names();
    let mut g = c.benchmark_group("demangle");
    g.throughput(Throughput::Elements(names.len() as u64));
    g.bench_function("itanium_3000_names", |b| {
        b.iter(|| {
            let mut bytes = 0;
            for n in &names {
                bytes += demangle_llvm_uncached(n).len();
            }
            bytes
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
