//! Heap allocations per element of the filter, on issue 14's two log
//! shapes, in each output format.
//!
//! A counting global allocator around the system one; the filter runs in
//! this process (one thread, as `--no-read-ahead`) over a log made here
//! from an ELF file's symbol table: 85% plain lines, the rest `bt`/`pc`/
//! `data` elements, a fresh context every fifth of the log.
//! - repetitive: code addresses from a pool of 5,000 (fewer in a small
//!   file), so later contexts mostly repeat answers;
//! - diverse: every code address drawn afresh, 60% in 256 hot functions,
//!   40% in any function.
//!
//! Reported per element: allocations (and bytes) in the first context
//! (cold: units parsed, names demangled) and in the later ones (new
//! addresses still come); then the allocations made when the last
//! context's lines are filtered again (every address looked up: the
//! steady state, which allocates nothing; `tests/allocs.rs` holds it to
//! that) and the number of elements among them. By default over the
//! committed fixture `testdata/elf/bin/cpp_O2` and 100,000 lines; set
//! SYMFILTER_BENCH_FILE to a large ELF file with DWARF (ripgrep, as
//! `scripts/bench-shapes.sh` builds it) and SYMFILTER_BENCH_LINES to
//! measure at scale. SYMFILTER_BENCH_TRACE prints where each allocation
//! of the repeated lines comes from (`=later`: of the later contexts).
//!
//! usage: cargo bench --bench allocs

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use object::{Object, ObjectSegment, ObjectSymbol, SegmentFlags, SymbolKind};
use symfilter::render::Format;

#[path = "../tests/support/in_tree.rs"]
mod in_tree;

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
/// SYMFILTER_BENCH_TRACE set: where each allocation of the repeated run
/// comes from is printed (`=later`: of the later contexts) to find them;
/// the counts then include the tracer's own.
static TRACING: AtomicBool = AtomicBool::new(false);

thread_local! {
    static IN_TRACE: Cell<bool> = const { Cell::new(false) };
}

fn count(size: usize) {
    ALLOCS.fetch_add(1, Relaxed);
    BYTES.fetch_add(size as u64, Relaxed);
    if TRACING.load(Relaxed) && !IN_TRACE.get() {
        IN_TRACE.set(true);
        eprintln!(
            "allocation of {size} B:\n{}",
            std::backtrace::Backtrace::force_capture()
        );
        IN_TRACE.set(false);
    }
}

// SAFETY: every call is passed to the system allocator unchanged; the
// counters are only read.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
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

/// xorshift: reproducible, no extra dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// What the log is made from.
struct Binary {
    name: String,
    build_id: String,
    /// (address, size) of functions and of data objects.
    funcs: Vec<(u64, u64)>,
    objs: Vec<(u64, u64)>,
    /// `mmap` elements' fields relative to the load base: start, size, mode.
    loads: Vec<(u64, u64, String)>,
}

impl Binary {
    fn read(path: &Path) -> Binary {
        let data = std::fs::read(path).expect("read bench file");
        let obj = object::File::parse(&*data).expect("parse bench file");
        let mut funcs = Vec::new();
        let mut objs = Vec::new();
        for s in obj.symbols().filter(|s| s.is_definition() && s.size() > 0) {
            match s.kind() {
                SymbolKind::Text => funcs.push((s.address(), s.size())),
                SymbolKind::Data => objs.push((s.address(), s.size())),
                _ => {}
            }
        }
        funcs.sort_unstable();
        funcs.dedup();
        objs.sort_unstable();
        objs.dedup();
        if objs.is_empty() {
            objs = funcs.iter().take(10).copied().collect();
        }
        let loads = obj
            .segments()
            .filter_map(|seg| {
                let SegmentFlags::Elf { p_type, p_flags } = seg.flags() else {
                    return None;
                };
                if p_type != object::elf::PT_LOAD {
                    return None;
                }
                let mode: String = [(4, 'r'), (2, 'w'), (1, 'x')]
                    .iter()
                    .filter(|&&(bit, _)| p_flags.0 & bit != 0)
                    .map(|&(_, c)| c)
                    .collect();
                let start = seg.address() & !0xfff;
                let end = (seg.address() + seg.size() + 0xfff) & !0xfff;
                Some((start, end - start, mode))
            })
            .collect();
        Binary {
            name: path.file_name().unwrap().to_string_lossy().into_owned(),
            build_id: in_tree::build_id(&data),
            funcs,
            objs,
            loads,
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Repetitive,
    Diverse,
}

/// One context of the log: its `reset`/`module`/`mmap` lines, the lines
/// after them, and the number of `bt`/`pc`/`data` elements among those.
struct Part {
    head: Vec<u8>,
    body: Vec<u8>,
    elements: u64,
}

/// The log as contexts.
fn make_log(bin: &Binary, shape: Shape, lines: usize) -> Vec<Part> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let funcs = &bin.funcs;
    // An address inside one of `among`, past its first byte.
    let inside = |rng: &mut Rng, among: &[(u64, u64)]| {
        let (a, s) = among[rng.below(among.len())];
        a + 1 + rng.below(s.max(2) as usize - 1) as u64
    };
    let pool: Vec<u64> = (0..5000.min(funcs.len()))
        .map(|_| inside(&mut rng, funcs))
        .collect();
    let hot: Vec<(u64, u64)> = (0..256).map(|_| funcs[rng.below(funcs.len())]).collect();
    let words = [
        "request", "served", "in", "12ms", "from", "cache", "shard", "worker",
    ];
    let per_context = (lines / 5).max(1);
    let mut base = 0x5555_5555_4000u64;
    let mut contexts = Vec::new();
    for i in 0..lines {
        if i % per_context == 0 {
            base += 0x100_0000;
            let mut log = Vec::new();
            writeln!(log, "{{{{{{reset}}}}}}").unwrap();
            writeln!(
                log,
                "{{{{{{module:0:{}:elf:{}}}}}}}",
                bin.name, bin.build_id
            )
            .unwrap();
            for (start, size, mode) in &bin.loads {
                let at = base + start;
                writeln!(
                    log,
                    "{{{{{{mmap:{at:#x}:{size:#x}:load:0:{mode}:{start:#x}}}}}}}"
                )
                .unwrap();
            }
            contexts.push(Part {
                head: log,
                body: Vec::new(),
                elements: 0,
            });
        }
        let Part {
            body: log,
            elements,
            ..
        } = contexts.last_mut().unwrap();
        let r = rng.below(100);
        if r < 85 {
            write!(log, "[{i:07}]").unwrap();
            for _ in 0..4 + rng.below(12) {
                write!(log, " {}", words[rng.below(words.len())]).unwrap();
            }
            log.push(b'\n');
            continue;
        }
        *elements += 1;
        if r >= 98 {
            let a = inside(&mut rng, &bin.objs) - 1;
            writeln!(log, "object {{{{{{data:{:#x}}}}}}}", base + a).unwrap();
            continue;
        }
        let a = match shape {
            Shape::Repetitive => pool[rng.below(pool.len())],
            Shape::Diverse if rng.below(10) < 6 => inside(&mut rng, &hot),
            Shape::Diverse => inside(&mut rng, funcs),
        };
        if r < 95 {
            writeln!(log, "   {{{{{{bt:{}:{:#x}:ra}}}}}}", i % 20, base + a).unwrap();
        } else {
            writeln!(log, "fault at {{{{{{pc:{:#x}}}}}}}", base + a).unwrap();
        }
    }
    contexts
}

/// (allocations, bytes) so far.
fn counters() -> (u64, u64) {
    (ALLOCS.load(Relaxed), BYTES.load(Relaxed))
}

fn main() {
    let file = std::env::var_os("SYMFILTER_BENCH_FILE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/elf/bin/cpp_O2")
        });
    let file = std::fs::canonicalize(&file).expect("bench file");
    let lines: usize = std::env::var("SYMFILTER_BENCH_LINES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let bin = Binary::read(&file);
    // A build-ID tree holding only the bench file.
    let tree = in_tree::tree(&file, &bin.build_id);
    println!(
        "{} ({} functions), {lines} lines; heap allocations (bytes) per element",
        file.display(),
        bin.funcs.len()
    );
    println!(
        "{:<12} {:<6} {:>22} {:>22} {:>16}",
        "shape", "format", "first context", "later contexts", "repeated"
    );
    for (shape, shape_name) in [
        (Shape::Repetitive, "repetitive"),
        (Shape::Diverse, "diverse"),
    ] {
        let contexts = make_log(&bin, shape, lines);
        for (format, format_name) in [
            (Format::Human, "human"),
            (Format::Llvm, "llvm"),
            (Format::Json, "json"),
        ] {
            let mut filter = in_tree::filter(tree.path(), format, false);
            let mut out = std::io::sink();
            // (allocations, bytes, elements) of the first context and of the rest.
            let mut cold = (0, 0, 0);
            let mut warm = (0, 0, 0);
            let mut run = |text: &[u8], elements: u64, sum: &mut (u64, u64, u64)| {
                let (a0, b0) = counters();
                filter.run("bench", text, &mut out).expect("filter");
                let (a1, b1) = counters();
                *sum = (sum.0 + a1 - a0, sum.1 + b1 - b0, sum.2 + elements);
            };
            let trace = std::env::var("SYMFILTER_BENCH_TRACE").ok();
            for (i, part) in contexts.iter().enumerate() {
                let sum = if i == 0 { &mut cold } else { &mut warm };
                TRACING.store(i > 0 && trace.as_deref() == Some("later"), Relaxed);
                run(&part.head, 0, sum);
                run(&part.body, part.elements, sum);
            }
            // The last context's lines again: every address was looked up.
            let mut again = (0, 0, 0);
            let last = contexts.last().expect("a context");
            TRACING.store(trace.is_some_and(|t| t != "later"), Relaxed);
            run(&last.body, last.elements, &mut again);
            TRACING.store(false, Relaxed);
            filter.finish(&mut out).expect("finish");
            let per = |(a, b, n): (u64, u64, u64)| {
                let n = n.max(1) as f64;
                format!("{:.2} ({:.0} B)", a as f64 / n, b as f64 / n)
            };
            println!(
                "{shape_name:<12} {format_name:<6} {:>22} {:>22} {:>16}",
                per(cold),
                per(warm),
                format!("{} / {}", again.0, again.2)
            );
        }
    }
}
