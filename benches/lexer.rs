//! Throughput of the markup lexer and of the whole filter loop.
//!
//! * `scan/plain`: the filter on plain text (no markup): the memchr/memmem
//!   fast path plus pass-through. Target: >= 1 GB/s.
//! * `scan/dense`: the filter on markup-dense text (every line has
//!   elements), human and llvm formats.
//! * `tokenize/dense`: the lexer alone on markup-dense lines.

use std::hint::black_box;
use std::io;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::sync::Arc;
use symfilter::filter::{Dialect, Filter, Options};
use symfilter::markup::{Lexer, Node, parse_element};
use symfilter::render::Format;
use symfilter::report::Silent;
use symfilter::symbols::{Symbolizer, SymbolizerConfig};

fn plain_text(size: usize) -> Vec<u8> {
    let lines: [&[u8]; 4] = [
        b"2024-05-01T12:00:00.123Z INFO  server: accepted connection from 10.0.0.12:53422 (worker 3)\n",
        b"2024-05-01T12:00:00.124Z DEBUG request: GET /api/v1/items?limit=50 {\"user\": 42} took 1.2ms\n",
        b"2024-05-01T12:00:00.130Z WARN  cache: miss ratio 0.31 above threshold 0.25\n",
        b"short line\n",
    ];
    let mut v = Vec::with_capacity(size + 128);
    let mut i = 0;
    while v.len() < size {
        v.extend_from_slice(lines[i % 4]);
        i += 1;
    }
    v
}

fn dense_text(size: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(size + 256);
    v.extend_from_slice(b"{{{reset}}}\n{{{module:0:app:elf:1731f0c2cc35aa00}}}\n");
    v.extend_from_slice(b"{{{mmap:0x200000:0x100000:load:0:rx:0x0}}}\n");
    let mut i = 0u64;
    while v.len() < size {
        let line = format!(
            "   {{{{{{bt:{}:0x{:x}:ra}}}}}} \x1b[31mframe\x1b[0m {{{{{{data:0x{:x}}}}}}}\n",
            i % 64,
            0x200000 + (i * 0x1234) % 0x100000,
            0x200000 + (i * 0x777) % 0x100000
        );
        v.extend_from_slice(line.as_bytes());
        i += 1;
    }
    v
}

fn run_filter(input: &[u8], format: Format) -> usize {
    let opts = Options {
        format,
        dialect: Dialect::usual_for(format),
        ..Options::default()
    };
    let mut f = Filter::new(
        opts,
        Symbolizer::new(SymbolizerConfig::default()),
        Arc::new(Silent),
    );
    let mut out = io::sink();
    f.run("<bench>", input, &mut out).expect("run");
    f.finish(&mut out).expect("finish");
    input.len()
}

fn bench(c: &mut Criterion) {
    let plain = plain_text(16 << 20);
    let dense = dense_text(4 << 20);

    let mut g = c.benchmark_group("scan");
    g.sample_size(20);
    g.throughput(Throughput::Bytes(plain.len() as u64));
    g.bench_function("plain", |b| {
        b.iter(|| run_filter(black_box(&plain), Format::Human))
    });
    g.throughput(Throughput::Bytes(dense.len() as u64));
    g.bench_function("dense/human", |b| {
        b.iter(|| run_filter(black_box(&dense), Format::Human))
    });
    g.bench_function("dense/llvm", |b| {
        b.iter(|| run_filter(black_box(&dense), Format::Llvm))
    });
    g.finish();

    let lexer = Lexer::new();
    let lines: Vec<&[u8]> = dense.split(|&b| b == b'\n').collect();
    let mut g = c.benchmark_group("tokenize");
    g.throughput(Throughput::Bytes(dense.len() as u64));
    g.sample_size(20);
    g.bench_function("dense", |b| {
        let mut nodes = Vec::new();
        b.iter(|| {
            let mut n = 0;
            for line in &lines {
                lexer.tokenize(line, &mut nodes);
                for node in &nodes {
                    if let Node::Element(raw) = node {
                        n += usize::from(parse_element(line, raw).is_ok());
                    }
                }
            }
            black_box(n)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
