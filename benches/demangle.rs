//! Demangling cost per name, without the cache: the 3,000 real C++ symbols
//! of testdata/demangle/itanium.tsv (a sample of libLLVM, libclang-cpp,
//! libstdc++, Boost, ICU and z3), and the 2,000 Microsoft-mangled symbols
//! of testdata/demangle/msvc.tsv (C++ compiled for Windows), one after
//! another.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use symfilter::demangle::demangle_llvm_uncached;

fn names(file: &str) -> Vec<String> {
    let path = format!("{}/testdata/demangle/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("demangle");
    for (id, file) in [
        ("itanium_3000_names", "itanium.tsv"),
        ("msvc_2000_names", "msvc.tsv"),
    ] {
        let names = names(file);
        g.throughput(Throughput::Elements(names.len() as u64));
        g.bench_function(id, |b| {
            b.iter(|| {
                let mut bytes = 0;
                for n in &names {
                    bytes += demangle_llvm_uncached(n).len();
                }
                bytes
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
