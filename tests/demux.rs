//! `--demux`: the sanitizer reports of testdata/sanitizers (real logs of
//! real binaries, made by make-logs.sh) interleaved line by line at random
//! (fixed seed) under each preset's prefix, then filtered in one pass: each
//! process's output must be, element by element, what its log gives when
//! filtered alone. Also the memory bound on a hostile log with a new key on
//! every line, and that text without markup never changes.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::common;
use proptest::prelude::*;
use std::sync::Arc;
use symfilter::demux::{How, Recognizer};
use symfilter::filter::{DemuxOptions, Dialect, Filter, Options};
use symfilter::render::Format;
use symfilter::report::Silent;
use symfilter::symbols::{Symbolizer, SymbolizerConfig};

fn sanitizers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/sanitizers")
}

/// The processes: each sanitizer log's lines, and a log whose lines hold
/// elements before their contextual elements (which the llvm format
/// applies first).
fn processes() -> Vec<(&'static str, Vec<String>)> {
    let llvm_diff = sanitizers().join("../llvm-diff");
    [
        ("asan_heap_overflow", sanitizers()),
        ("asan_uaf_cpp", sanitizers()),
        ("ubsan", sanitizers()),
        ("lsan", sanitizers()),
        ("context_order", llvm_diff),
    ]
    .into_iter()
    .map(|(name, dir)| {
        let text = std::fs::read_to_string(dir.join(format!("{name}.log"))).expect("log");
        (name, text.lines().map(str::to_string).collect())
    })
    .collect()
}

/// A prefix format: the prefix of line `i` of process `p` (name, pid).
type MakePrefix = fn(&str, u32, usize) -> String;

/// Each preset, the prefix it is tested under, and the `--demux` value.
fn cases() -> Vec<(&'static str, &'static str, MakePrefix)> {
    vec![
        ("syslog", "syslog", |n, pid, i| {
            format!(
                "Nov 25 05:{:02}:{:02} buildhost {n}[{pid}]: ",
                i / 60 % 60,
                i % 60
            )
        }),
        ("auto (syslog)", "auto", |n, pid, i| {
            format!(
                "Nov  5 05:20:{:02}.{:06} buildhost {n}[{pid}]: ",
                i % 60,
                i * 7919 % 1000000
            )
        }),
        ("journald short-iso", "journald", |n, pid, i| {
            format!("2026-11-25T05:20:{:02}+0000 buildhost {n}[{pid}]: ", i % 60)
        }),
        ("logcat threadtime", "logcat", |n, pid, i| {
            let tid = pid + (i % 3) as u32;
            format!("11-25 05:20:01.{:03} {pid:5} {tid:5} E {n}: ", i % 1000)
        }),
        ("auto (logcat brief)", "auto", |n, pid, _| {
            format!("E/{n}({pid:5}): ")
        }),
        ("bracket", "bracket", |_, pid, i| {
            format!("[{pid}:{}] ", pid + (i % 4) as u32)
        }),
        ("auto (bracket)", "auto", |_, pid, _| format!("[{pid}] ")),
        ("fuchsia", "fuchsia", |n, pid, i| {
            format!(
                "[{:05}.{:06}][{pid}][{}][{n}] ",
                i / 100,
                i % 100 * 997,
                pid + 1
            )
        }),
        ("auto (fuchsia)", "auto", |_, pid, i| {
            format!("[{:05}.{:03}][{pid}][{}] ", i / 100, i % 100, pid + 7)
        }),
        (r"regex", r"job=(?<key>[a-z_]+) \| ", |n, _, _| {
            format!("job={n} | ")
        }),
    ]
}

/// The processes' lines interleaved at random, each under its prefix.
fn interleave(procs: &[(&str, Vec<String>)], prefix: MakePrefix, seed: u64) -> String {
    // The same interleaving on every run.
    let mut rng = common::Rng(seed);
    let mut next = vec![0; procs.len()];
    let mut log = String::new();
    let mut i = 0;
    loop {
        let left: Vec<usize> = (0..procs.len())
            .filter(|&p| next[p] < procs[p].1.len())
            .collect();
        if left.is_empty() {
            return log;
        }
        // Runs of one to four lines of a process, as loggers flush them.
        let p = left[rng.below(left.len())];
        for _ in 0..=rng.below(4) {
            let Some(line) = procs[p].1.get(next[p]) else {
                break;
            };
            let pid = 4242 + 1000 * p as u32;
            log.push_str(&prefix(procs[p].0, pid, i));
            log.push_str(line);
            log.push('\n');
            next[p] += 1;
            i += 1;
        }
    }
}

/// symfilter over `input` (a file in a temporary directory, so that
/// `{{{dumpfile}}}` sees a regular file), with the sanitizer
/// fixtures' symbols.
fn run(args: &[&str], input: &str) -> (String, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("in.log");
    std::fs::write(&log, input).expect("write log");
    let debug = sanitizers().join("../debug");
    let out = common::command()
        .args([
            "--no-debuginfod",
            "--offline",
            "--color=never",
            "--build-id-dir",
        ])
        .arg(&debug)
        .args(args)
        .arg(&log)
        .output()
        .expect("run symfilter");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8(out.stdout).expect("UTF-8 output"),
        String::from_utf8(out.stderr).expect("UTF-8 stderr"),
    )
}

/// A JSON object without the members that depend on the interleaving.
fn element(mut v: serde_json::Value) -> serde_json::Value {
    let m = v.as_object_mut().expect("an object per line");
    m.remove("line");
    m.remove("key");
    m.remove("prefix");
    v
}

#[test]
fn each_process_gets_its_own_output_under_every_preset() {
    let procs = processes();
    for (seed, (name, how, prefix)) in cases().into_iter().enumerate() {
        let log = interleave(&procs, prefix, 0x5eed + seed as u64);
        let key_of = |p: usize| -> String {
            let line = prefix(procs[p].0, 4242 + 1000 * p as u32, 0);
            let mut r = Recognizer::new(how.parse::<How>().expect("HOW"));
            let found = r.recognise(line.as_bytes()).expect("prefix recognised");
            line[found.key].to_string()
        };
        let keys: Vec<String> = (0..procs.len()).map(key_of).collect();
        let demux = format!("--demux={how}");

        // JSON: one object per line, carrying its key.
        let (out, _) = run(&[&demux, "--format=json"], &log);
        let mut got: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
        for l in out.lines() {
            let v: serde_json::Value = serde_json::from_str(l).expect("JSON line");
            let key = v["key"].as_str().expect("every line has a key").to_string();
            got.entry(key).or_default().push(element(v));
        }
        for (p, (proc_name, lines)) in procs.iter().enumerate() {
            let alone = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
            let (want, _) = run(&["--format=json"], &alone);
            let want: Vec<serde_json::Value> = want
                .lines()
                .map(|l| element(serde_json::from_str(l).expect("JSON line")))
                .collect();
            let got = got.get(&keys[p]).map_or(&[][..], Vec::as_slice);
            assert_eq!(got.len(), want.len(), "{name}: {proc_name}: JSON objects");
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{name}: {proc_name}: JSON object {i}");
            }
        }

        // Human and llvm: every output line starts with a prefix of its
        // process; without it, the lines are those of the process alone.
        for format in ["human", "llvm"] {
            let (out, _) = run(&[&demux, &format!("--format={format}")], &log);
            let mut got: BTreeMap<String, Vec<&str>> = BTreeMap::new();
            let mut r = Recognizer::new(how.parse::<How>().expect("HOW"));
            for l in out.lines() {
                let found = r
                    .recognise(l.as_bytes())
                    .unwrap_or_else(|| panic!("{name} ({format}): no prefix on {l:?}"));
                got.entry(l[found.key].to_string())
                    .or_default()
                    .push(&l[found.lead..]);
            }
            for (p, (proc_name, lines)) in procs.iter().enumerate() {
                let alone = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
                let (want, _) = run(&[&format!("--format={format}")], &alone);
                let want: Vec<&str> = want.lines().collect();
                let got = got.get(&keys[p]).map_or(&[][..], Vec::as_slice);
                assert_eq!(
                    got.len(),
                    want.len(),
                    "{name} ({format}): {proc_name}: lines"
                );
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(g, w, "{name} ({format}): {proc_name}: line {i}");
                }
            }
        }
    }
}

/// Without --demux the same log mixes the processes' module tables: the
/// test above would fail (so it can fail).
#[test]
fn without_demux_the_processes_are_mixed_up() {
    let procs = processes();
    let (_, _, prefix) = cases()[0];
    let log = interleave(&procs, prefix, 0x5eed);
    let (mixed, _) = run(&["--format=json"], &log);
    let (demuxed, _) = run(&["--demux", "--format=json"], &log);
    let frames = |out: &str| -> Vec<serde_json::Value> {
        out.lines()
            .flat_map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("JSON");
                v["spans"].as_array().cloned().unwrap_or_default()
            })
            .filter(|s| s["element"] == "bt")
            .map(|s| s["frames"].clone())
            .collect()
    };
    let (a, b) = (frames(&mixed), frames(&demuxed));
    assert_eq!(a.len(), b.len());
    assert!(a.iter().zip(&b).filter(|(x, y)| x != y).count() > 5);
}

/// Lines without a prefix go to the shared default context, except under
/// journald, where they continue the last process's record.
#[test]
fn unkeyed_lines() {
    let log = "[7] {{{module:0:a:elf:abcd}}}\n\
               [7] {{{mmap:0x1000:0x1000:load:0:rx:0x0}}}\n\
               {{{pc:0x1010}}}\n\
               [7] {{{pc:0x1010}}}\n";
    let (out, err) = run(&["--demux"], log);
    // Process 7's summary is written when its run of contextual lines
    // ends: at its next line.
    assert_eq!(
        out,
        "{{{pc:0x1010}}}\n\
         [7] [module #0 \"a\" build-id abcd: 0x1000-0x1fff rx]\n\
         [7] a+0x10\n"
    );
    assert!(
        err.contains("in.log:3:7: no mmap covers address 0x1010"),
        "{err}"
    );
    let log = "Nov 25 05:20:01 h a[7]: {{{module:0:a:elf:abcd}}}\n\
               Nov 25 05:20:01 h a[7]: {{{mmap:0x1000:0x1000:load:0:rx:0x0}}}\n\
               \x20   {{{pc:0x1010}}}\n";
    let (out, _) = run(&["--demux=journald", "--format=json"], log);
    let last: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(last["key"], "h a[7]");
    assert_eq!(last["spans"][1]["module"]["name"], "a");
}

/// A process evicted to make room (more than --demux-keys at once) writes
/// out what it held, and comes back with an empty context and one
/// diagnostic.
#[test]
fn evicted_process_comes_back_empty() {
    let log = "[1] {{{module:0:a:elf:abcd}}}\n\
               [1] {{{mmap:0x1000:0x1000:load:0:rx:0x0}}}\n\
               [2] {{{module:0:b:elf:abcd}}}\n\
               [3] x\n\
               [1] {{{pc:0x1010}}}\n\
               [1] {{{pc:0x1010}}}\n";
    let (out, err) = run(&["--demux", "--demux-keys=2"], log);
    assert_eq!(
        out,
        "[1] [module #0 \"a\" build-id abcd: 0x1000-0x1fff rx]\n\
         [3] x\n\
         [2] [module #0 \"b\" build-id abcd]\n\
         [1] {{{pc:0x1010}}}\n\
         [1] {{{pc:0x1010}}}\n"
    );
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[0].ends_with(
            "in.log:5:1: process \"1\" comes back after its context was dropped \
             (more than 2 processes at once; see --demux-keys): it starts with an empty context"
        ),
        "{err}"
    );
    // And one each for the addresses no mmap of its new context covers.
    assert_eq!(lines.len(), 3, "{err}");
}

/// A hostile log with a new key on every line: memory stays bounded
/// (the child runs under an address-space limit it exceeds, and aborts,
/// when every key's state is kept: `--demux-keys=1000000`).
#[test]
fn new_key_on_every_line_stays_bounded() {
    const LINES: u32 = 150_000;
    let mut cmd = common::command();
    // 200,000 KiB of address space.
    common::limit(&mut cmd, None, Some(200_000 << 10));
    let mut child = cmd
        .args([
            "--demux",
            "--no-debuginfod",
            "--offline",
            "--demux-keys=1000",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run symfilter");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || -> io::Result<()> {
        let mut w = io::BufWriter::new(&mut stdin);
        for i in 1..=LINES {
            writeln!(w, "[{i}] {{{{{{module:0:m{i}:elf:abcd}}}}}}")?;
        }
        w.flush()
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer").expect("write input");
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // Nothing lost: every process's summary, each with its prefix.
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    assert_eq!(text.lines().count(), LINES as usize);
    assert!(text.lines().all(|l| l.starts_with('[')));
    assert!(text.ends_with(&format!(
        "[{LINES}] [module #0 \"m{LINES}\" build-id abcd]\n"
    )));
}

fn filter_in_process(input: &[u8], format: Format, how: &str) -> Vec<u8> {
    let opts = Options {
        format,
        dialect: Dialect::usual_for(format),
        demux: Some(DemuxOptions {
            how: how.parse().expect("HOW"),
            max_keys: 3,
        }),
        ..Options::default()
    };
    let mut f = Filter::new(
        opts,
        Symbolizer::new(SymbolizerConfig::default()),
        Arc::new(Silent),
    );
    let mut out = Vec::new();
    f.run("<test>", input, &mut out).expect("run");
    f.finish(&mut out).expect("finish");
    out
}

fn line_text() -> impl Strategy<Value = Vec<u8>> {
    // Any bytes but a line end, ESC or `{` (so no markup), with the
    // characters prefixes are made of made likely.
    let byte = prop_oneof![
        4 => any::<u8>().prop_filter("no markup", |b| !matches!(b, b'\n' | 0x1b | b'{')),
        2 => Just(b' '),
        2 => Just(b'['),
        2 => Just(b']'),
        2 => Just(b':'),
        2 => prop::sample::select(b"0123456789".to_vec()),
        1 => Just(b'\r'),
    ];
    prop::collection::vec(byte, 0..40)
}

proptest! {
    /// Interleaving with --demux never changes a byte of text without
    /// markup, whatever the prefixes (recognised or not, keys evicted or
    /// not).
    #[test]
    fn text_without_markup_is_unchanged(
        lines in prop::collection::vec(
            (prop::option::of(0u32..6), line_text(), any::<bool>()), 0..30),
        how in prop::sample::select(vec!["auto", "syslog", "bracket", "fuchsia", "logcat"]),
    ) {
        let mut input = Vec::new();
        for (key, text, newline) in &lines {
            if let Some(k) = key {
                input.extend_from_slice(format!("[{}] ", k + 1).as_bytes());
            }
            input.extend_from_slice(text);
            if *newline {
                input.push(b'\n');
            }
        }
        for format in [Format::Human, Format::Llvm] {
            let out = filter_in_process(&input, format, how);
            let expect = if format == Format::Llvm && !input.is_empty() && !input.ends_with(b"\n") {
                // LLVM ends every line it filters with a line ending.
                [&input[..], b"\n"].concat()
            } else {
                input.clone()
            };
            prop_assert_eq!(&out, &expect, "{:?}", format);
        }
    }
}

/// In the llvm format, the elements before an mmap that extends the
/// module line LLVM holds open are never shown, so nothing is said of
/// them; each process holds its own open line, whatever other processes
/// write between its lines.
#[test]
fn each_process_holds_its_own_open_module_line() {
    let log = "[1] {{{module:0:a:elf:abcd}}}\n\
               [1] {{{mmap:0x1000:0x1000:load:0:r:0x0}}}\n\
               [2] {{{module:0:b:elf:abcd}}}\n\
               [2] {{{module:1:c:elf:abcd}}}\n\
               [2] {{{mmap:0x5000:0x1000:load:1:r:0x0}}}\n\
               [1] {{{pc:0x9991}}} {{{mmap:0x2000:0x1000:load:0:rx:0x1000}}}\n\
               [2] {{{pc:0x9992}}} {{{mmap:0x6000:0x1000:load:1:rx:0x1000}}}\n\
               [1] {{{pc:0x9993}}} {{{mmap:0x3000:0x1000:load:0:rw:0x2000}}}\n\
               [2] x\n\
               [2] {{{pc:0x9994}}} {{{mmap:0x7000:0x1000:load:1:rw:0x2000}}}\n";
    let (out, err) = run(&["--demux", "--format=llvm"], log);
    assert_eq!(
        out,
        "[2] [[[ELF module #0x0 \"b\"; BuildID=abcd]]]\n\
         [2] [[[ELF module #0x1 \"c\"; BuildID=abcd [0x5000-0x5fff](r),[0x6000-0x6fff](rx)]]]\n\
         [2] x\n\
         [1] [[[ELF module #0x0 \"a\"; BuildID=abcd \
         [0x1000-0x1fff](r),[0x2000-0x2fff](rx),[0x3000-0x3fff](rw)]]]\n\
         [2] [[[pc:0x9994]]] [[[ELF module #0x1 \"c\"; adds [0x7000-0x7fff](rw)]]]\n"
    );
    // As LLVM gives each process's lines alone: only the last pc is
    // shown, since process 2's module line closed at its text.
    let diagnosed: Vec<&str> = err.lines().filter(|l| l.contains("0x999")).collect();
    assert_eq!(diagnosed.len(), 1, "{err}");
    assert!(diagnosed[0].contains("in.log:10:"), "{err}");
}
