//! Breakpad `.sym` parse+index time and lookup rate on big real files.
//!
//! The files are not committed: make them with
//! `testdata/breakpad/make-bench-syms.sh` (dump_syms over big binaries with
//! DWARF), or point SYMFILTER_BENCH_SYMS at a folder of `.sym` files.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group};
use symfilter::breakpad::{BreakpadSymbols, parser};

fn sym_files() -> Vec<PathBuf> {
    let dir = std::env::var_os("SYMFILTER_BENCH_SYMS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/breakpad-bench"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "sym"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    if files.is_empty() {
        eprintln!(
            "no .sym files in {}: run testdata/breakpad/make-bench-syms.sh",
            dir.display()
        );
    }
    files
}

fn name(p: &std::path::Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn parse(c: &mut Criterion) {
    let mut g = c.benchmark_group("breakpad_parse");
    g.sample_size(10);
    for path in sym_files() {
        let Ok(data) = std::fs::read(&path) else {
            continue;
        };
        g.throughput(Throughput::Bytes(data.len() as u64));
        g.bench_function(name(&path), |b| {
            b.iter(|| parser::parse(black_box(&data)).map(|i| i.funcs.len()))
        });
    }
    g.finish();
}

/// 100k addresses inside FUNCs (or PUBLIC-only files: after PUBLICs),
/// spread by a fixed LCG so runs are comparable.
fn addresses(syms: &BreakpadSymbols) -> Vec<u64> {
    let idx = syms.index();
    let anchors: Vec<(u64, u64)> = if idx.funcs.is_empty() {
        idx.publics
            .windows(2)
            .map(|w| (w[0].address, w[1].address - w[0].address))
            .collect()
    } else {
        idx.funcs.iter().map(|f| (f.address, f.size)).collect()
    };
    if anchors.is_empty() {
        return Vec::new();
    }
    let mut x: u64 = 0x9e3779b97f4a7c15;
    (0..100_000)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (a, s) = anchors[(x >> 33) as usize % anchors.len()];
            syms.image_base() + a + (x & 0xffff) % s.max(1)
        })
        .collect()
}

/// Lookups per second over [`addresses`].
fn lookup(c: &mut Criterion) {
    let mut g = c.benchmark_group("breakpad_lookup");
    for path in sym_files() {
        let Ok(syms) = BreakpadSymbols::open(&path) else {
            continue;
        };
        let addrs = addresses(&syms);
        if addrs.is_empty() {
            continue;
        }
        g.throughput(Throughput::Elements(addrs.len() as u64));
        g.bench_function(name(&path), |b| {
            b.iter(|| {
                let mut frames = 0usize;
                for &a in &addrs {
                    frames += syms.lookup(a).map_or(0, |i| i.frames.len());
                }
                frames
            })
        });
    }
    g.finish();
}

/// `SYMFILTER_BENCH_MIN=N cargo bench --bench breakpad`: instead of
/// criterion, print the fastest of N runs of each measurement (on a loaded
/// machine the minimum is the figure least disturbed by other processes).
fn min_of_runs(n: usize) {
    for path in sym_files() {
        let Ok(data) = std::fs::read(&path) else {
            continue;
        };
        let best = (0..n)
            .map(|_| {
                let t = Instant::now();
                black_box(parser::parse(black_box(&data)).map(|i| i.funcs.len()).ok());
                t.elapsed()
            })
            .min()
            .unwrap_or_default();
        let mib = data.len() as f64 / (1024.0 * 1024.0);
        println!(
            "parse  {:<28} {:>7.1} MiB {:>8.1} ms {:>7.0} MiB/s",
            name(&path),
            mib,
            best.as_secs_f64() * 1e3,
            mib / best.as_secs_f64()
        );
        let Ok(syms) = BreakpadSymbols::open(&path) else {
            continue;
        };
        let addrs = addresses(&syms);
        let best = (0..n)
            .map(|_| {
                let t = Instant::now();
                for &a in &addrs {
                    black_box(syms.lookup(a));
                }
                t.elapsed()
            })
            .min()
            .unwrap_or_default();
        println!(
            "lookup {:<28} {:>7} addrs {:>7.1} ms {:>7.2} M lookups/s",
            name(&path),
            addrs.len(),
            best.as_secs_f64() * 1e3,
            addrs.len() as f64 / best.as_secs_f64() / 1e6
        );
    }
}

criterion_group!(benches, parse, lookup);

fn main() {
    if let Some(n) = std::env::var("SYMFILTER_BENCH_MIN")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        min_of_runs(n);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
