//! XRay FDR decode + account throughput on a synthetic version-5 trace built
//! in memory (nested calls, recursion, tail exits, two threads). For the
//! whole-process comparison with `llvm-xray account` on a real 100 MB trace
//! see testdata/xray/make-big-trace.sh.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use symfilter::xray::Trace;
use symfilter::xray::account::{AccountOptions, Accountant};

fn meta(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut r = vec![(kind << 1) | 1];
    r.extend_from_slice(body);
    r.resize(16, 0);
    r
}

fn func(action: u32, id: u32, delta: u32) -> [u8; 8] {
    let mut r = [0u8; 8];
    r[..4].copy_from_slice(&((id << 4) | (action << 1)).to_le_bytes());
    r[4..].copy_from_slice(&delta.to_le_bytes());
    r
}

/// A v5 trace of about `size` bytes in 64 KiB buffers alternating between
/// two threads.
fn synthetic(size: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(size + 65536);
    out.extend_from_slice(&5u16.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&1_000_000_000u64.to_le_bytes());
    out.resize(32, 0);
    let mut n = 0u32;
    while out.len() < size {
        let tid = 100 + n % 2;
        let mut buf = Vec::with_capacity(65536);
        buf.extend(meta(0, &tid.to_le_bytes()));
        buf.extend(meta(4, &[0; 12]));
        buf.extend(meta(9, &42u32.to_le_bytes()));
        let mut cpu = vec![0u8, 0];
        cpu.extend_from_slice(&(u64::from(n) * 1_000_000).to_le_bytes());
        buf.extend(meta(2, &cpu));
        while buf.len() + 8 * 12 < 65536 {
            // main -> work -> fib(3 levels) ; tail-calling helper.
            buf.extend(func(0, 1, 5));
            buf.extend(func(0, 2, 7));
            buf.extend(func(0, 3, 3));
            buf.extend(func(0, 3, 3));
            buf.extend(func(1, 3, 11));
            buf.extend(func(1, 3, 13));
            buf.extend(func(0, 4, 2));
            buf.extend(func(2, 4, 4));
            buf.extend(func(0, 5, 1));
            buf.extend(func(1, 5, 6));
            buf.extend(func(1, 2, 9));
            buf.extend(func(1, 1, 8));
        }
        out.extend(meta(7, &(buf.len() as u64).to_le_bytes()));
        out.extend(buf);
        n += 1;
    }
    out
}

fn bench(c: &mut Criterion) {
    let data = synthetic(32 << 20);
    let mut g = c.benchmark_group("xray");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.sample_size(10);
    g.bench_function("decode", |b| {
        b.iter(|| {
            let trace = Trace::parse(&data).expect("trace");
            let mut n = 0u64;
            trace.for_each_event(|_, _| n += 1, |_| {});
            n
        })
    });
    g.bench_function("decode+account", |b| {
        b.iter(|| {
            let trace = Trace::parse(&data).expect("trace");
            let acc = Accountant::run(&trace, AccountOptions::default());
            acc.total_rows().len()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
