//! `--format=human` path shortening: a real ASan report of a program built as
//! if in /home/dev/projects/widget (testdata/human, written by its
//! make-fixture.sh), and the rules one by one through the library with a
//! scripted symbol source.

use crate::common;
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use symfilter::filter::{Filter, Options};
use symfilter::render::Format;
use symfilter::report::Silent;
use symfilter::symbols::{
    Attempt, BuildId, CodeInfo, CodeWant, DataInfo, DataWant, Frame, Locator, Miss, ModuleKey,
    Provider, SymbolHit, SymbolSource, Symbolizer, SymbolizerConfig,
};

// ---- The real fixture, through the binary --------------------------------

fn widget(args: &[&str]) -> (String, String) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/human");
    let empty = tempfile::tempdir().expect("tempdir");
    let out = common::command()
        .current_dir(&dir)
        .env_remove("DEBUGINFOD_URLS")
        .arg("--build-id-dir")
        .arg(empty.path())
        .args(["--symbol-path", "bin", "--no-debuginfod", "--offline", "-q"])
        .arg("--no-default-paths")
        .args(["--color=never"])
        .args(args)
        .arg("widget.log")
        .output()
        .expect("run symfilter");
    assert!(out.status.success());
    (
        String::from_utf8(out.stdout).expect("utf8"),
        String::from_utf8(out.stderr).expect("utf8"),
    )
}

fn expected(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/human")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn widget_report_goldens() {
    for (args, file) in [
        (&[][..], "widget.human"),
        (&["--full-paths"][..], "widget.full.human"),
        (
            &["--strip-path-prefix", "/home/dev/projects/widget/app"][..],
            "widget.strip.human",
        ),
    ] {
        let (out, err) = widget(args);
        let want = expected(file);
        assert!(out == want, "{file}:\n--- got\n{out}\n--- want\n{want}");
        assert_eq!(err, "");
    }
}

/// The shortened report is the full one with the common directory stated
/// once per backtrace and removed from its paths, and module names cut to
/// their base names: nothing else differs.
#[test]
fn widget_shortening_is_only_a_prefix_and_base_names() {
    let (short, _) = widget(&[]);
    let (full, _) = widget(&["--full-paths"]);
    let prefix = "/home/dev/projects/widget/";
    let legend = format!("[paths relative to {prefix}]");
    assert_eq!(short.matches(&legend).count(), 4, "{short}");
    let kept: Vec<&str> = short.lines().filter(|l| *l != legend).collect();
    let full: Vec<&str> = full.lines().collect();
    assert_eq!(kept.len(), full.len());
    for (s, f) in kept.iter().zip(&full) {
        let f = f
            .replace(prefix, "")
            .replace("/opt/widget/bin/widget+", "widget+")
            .replace("/lib/x86_64-linux-gnu/libc.so.6+", "libc.so.6+")
            .replace(
                "/usr/lib/llvm-22/lib/clang/22/lib/linux/libclang_rt.asan-x86_64.so+",
                "libclang_rt.asan-x86_64.so+",
            );
        assert_eq!(*s, f);
    }
}

// ---- The rules, through the library --------------------------------------

struct Source(BTreeMap<u64, CodeInfo>);

impl SymbolSource for Source {
    fn origin(&self) -> String {
        "/scripted/app.debug".into()
    }
    fn lookup_code(&self, addr: u64, _: CodeWant) -> Result<CodeInfo, Miss> {
        self.0.get(&addr).cloned().ok_or(Miss::NoInfo)
    }
    fn lookup_data(&self, addr: u64, _: DataWant) -> Result<DataInfo, Miss> {
        let info = self.0.get(&addr).ok_or(Miss::NoInfo)?;
        let frame = info.frames.first().ok_or(Miss::NoInfo)?;
        Ok(DataInfo {
            symbol: Some(SymbolHit {
                name: "g_var".into(),
                address: addr,
                size: 8,
                file: None,
            }),
            decl_file: frame.file.clone(),
            decl_line: frame.line,
        })
    }
}

struct Scripted(BTreeMap<u64, CodeInfo>);

impl Provider for Scripted {
    fn name(&self) -> Locator {
        Locator::Custom("scripted")
    }
    fn find(&self, key: &ModuleKey, trail: &mut Vec<Attempt>) -> Option<Box<dyn SymbolSource>> {
        let found = key.build_id == BuildId::from_hex("aa01").expect("hex");
        trail.push(Attempt::new(
            Locator::Custom("scripted"),
            "/scripted",
            (!found).then_some(Miss::NotFound),
        ));
        found.then(|| Box::new(Source(self.0.clone())) as Box<dyn SymbolSource>)
    }
}

const HOME: &str = "/home/u/work/proj/";
const RUSTC: &str = "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860";
const CARGO: &str = "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f";

/// Files by module-relative address: `0x100 * (i + 1)` is `FILES[i]`, one
/// frame `f<i>` at line `i + 1`; 0x2000 has two inlined frames.
const FILES: &[&str] = &[
    "/home/u/work/proj/src/main.rs",     // 0x100
    "/home/u/work/proj/src/net/conn.rs", // 0x200
    "/home/u/work/proj/lib/util.rs",     // 0x300
    "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/rt.rs", // 0x400
    "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde-1.0.200/src/de.rs", // 0x500
    "/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/bits/stl_vector.h", // 0x600
    "relative/dir/file.c",               // 0x700
    "/src/a.c",                          // 0x800
    "/src/b.c",                          // 0x900
    "C:\\work\\proj\\src\\main.cpp",     // 0xa00
    "C:\\work\\proj\\src\\util\\str.cpp", // 0xb00
    "/rustc/0123456789abcdef0123456789abcdef01234567/library/core/src/ops.rs", // 0xc00
    "/srv/other/x.c",                    // 0xd00
    "/home/u/work/proj/src/é/ü.rs",      // 0xe00
];

fn table() -> BTreeMap<u64, CodeInfo> {
    let mut t = BTreeMap::new();
    for (i, file) in FILES.iter().enumerate() {
        t.insert(
            0x100 * (i as u64 + 1),
            CodeInfo {
                frames: vec![Frame {
                    function: Some(format!("f{i}").into()),
                    file: Some((*file).into()),
                    line: i as u32 + 1,
                    column: 0,
                }]
                .into(),
                symbol: None,
                claimed: false,
                shown: Default::default(),
            },
        );
    }
    t.insert(
        0x2000,
        CodeInfo {
            frames: vec![
                Frame {
                    function: Some("inner".into()),
                    file: Some(format!("{HOME}src/inner.rs").into()),
                    line: 7,
                    column: 3,
                },
                Frame {
                    function: Some("outer".into()),
                    file: Some(format!("{HOME}src/outer.rs").into()),
                    line: 9,
                    column: 0,
                },
            ]
            .into(),
            symbol: None,
            claimed: false,
            shown: Default::default(),
        },
    );
    t
}

const CONTEXT: &str = "{{{module:0:/opt/app/bin/app:elf:aa01}}}\n\
{{{mmap:0x10000:0x10000:load:0:rx:0x0}}}\n";

/// A bt line for relative address `rel` (precise: no return-address step).
fn bt(frame: u64, rel: u64) -> String {
    format!("{{{{{{bt:{frame}:{:#x}:pc}}}}}}\n", 0x10000 + rel)
}

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().expect("lock")).into_owned()
    }
}

/// Hands out the given pieces one per read, noting how much output there
/// was when each read was asked for. Output is written by the filter's
/// render thread: read `n` first waits (up to 20 s) for the output to end
/// with `until[n]`, if given.
struct Pieces {
    pieces: Vec<Vec<u8>>,
    next: usize,
    out: Shared,
    seen: Arc<Mutex<Vec<String>>>,
    until: Vec<Option<String>>,
}

impl Read for Pieces {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.seen.lock().expect("lock").len();
        if let Some(Some(want)) = self.until.get(n) {
            let start = std::time::Instant::now();
            while !self.out.text().ends_with(want.as_str())
                && start.elapsed() < std::time::Duration::from_secs(20)
            {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
        self.seen.lock().expect("lock").push(self.out.text());
        let Some(p) = self.pieces.get_mut(self.next) else {
            return Ok(0);
        };
        let n = p.len().min(buf.len());
        buf[..n].copy_from_slice(&p[..n]);
        p.drain(..n);
        if p.is_empty() {
            self.next += 1;
        }
        Ok(n)
    }
}

fn opts() -> Options {
    Options {
        format: Format::Human,
        ..Options::default()
    }
}

/// Run `pieces` (one per read) after the context; the output without the
/// module summary, and what had been written before each read.
fn run_pieces(opts: Options, pieces: &[&str]) -> (String, Vec<String>) {
    run_pieces_until(opts, pieces, Vec::new())
}

fn run_pieces_until(
    opts: Options,
    pieces: &[&str],
    until: Vec<Option<String>>,
) -> (String, Vec<String>) {
    let config = SymbolizerConfig {
        providers: vec![Box::new(Scripted(table()))],
    };
    let mut f = Filter::new(opts, Symbolizer::new(config), Arc::new(Silent));
    let out = Shared::default();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut all = vec![CONTEXT.as_bytes().to_vec()];
    all.extend(pieces.iter().map(|p| p.as_bytes().to_vec()));
    let reader = Pieces {
        pieces: all,
        next: 0,
        out: out.clone(),
        seen: Arc::clone(&seen),
        until,
    };
    let mut w = out.clone();
    f.run("t.log", reader, &mut w).expect("run");
    f.finish(&mut w).expect("finish");
    let text = out.text();
    let body = text
        .split_once('\n')
        .map(|(first, rest)| {
            assert!(first.starts_with("[module #0"), "{text}");
            rest.to_string()
        })
        .unwrap_or(text.clone());
    let seen = seen.lock().expect("lock").clone();
    (body, seen)
}

fn run(opts: Options, input: &str) -> String {
    run_pieces(opts, &[input]).0
}

#[test]
fn backtrace_relative_to_common_directory() {
    let input = format!(
        "crash:\n  {}  {}  {}  {}after\n",
        bt(0, 0x100),
        bt(1, 0x200),
        bt(2, 0x300),
        bt(3, 0x2000)
    );
    assert_eq!(
        run(opts(), &input),
        "crash:\n\
         \x20 [paths relative to /home/u/work/proj/]\n\
         \x20 #0     0x0000000000010100 in f0 src/main.rs:1 (app+0x100)\n\
         \x20 #1     0x0000000000010200 in f1 src/net/conn.rs:2 (app+0x200)\n\
         \x20 #2     0x0000000000010300 in f2 lib/util.rs:3 (app+0x300)\n\
         \x20 #3.1   0x0000000000012000 in inner src/inner.rs:7:3 (app+0x2000)\n\
         \x20 #3     0x0000000000012000 in outer src/outer.rs:9 (app+0x2000)\n\
         after\n"
    );
}

#[test]
fn each_backtrace_states_its_directory() {
    // A frame number not above the last one starts a new backtrace.
    let input = [
        bt(0, 0x100),
        bt(1, 0x200),
        bt(0, 0x200),
        bt(1, 0x300),
        bt(2, 0x2000),
        "--\n".into(),
        bt(0, 0x100),
        bt(1, 0x200),
    ]
    .concat();
    assert_eq!(
        run(opts(), &input),
        "[paths relative to /home/u/work/proj/src/]\n\
         #0     0x0000000000010100 in f0 main.rs:1 (app+0x100)\n\
         #1     0x0000000000010200 in f1 net/conn.rs:2 (app+0x200)\n\
         [paths relative to /home/u/work/proj/]\n\
         #0     0x0000000000010200 in f1 src/net/conn.rs:2 (app+0x200)\n\
         #1     0x0000000000010300 in f2 lib/util.rs:3 (app+0x300)\n\
         #2.1   0x0000000000012000 in inner src/inner.rs:7:3 (app+0x2000)\n\
         #2     0x0000000000012000 in outer src/outer.rs:9 (app+0x2000)\n\
         --\n\
         [paths relative to /home/u/work/proj/src/]\n\
         #0     0x0000000000010100 in f0 main.rs:1 (app+0x100)\n\
         #1     0x0000000000010200 in f1 net/conn.rs:2 (app+0x200)\n"
    );
}

#[test]
fn not_shortened_when_it_would_not_pay() {
    // One frame; a short common directory; no common directory.
    for input in [
        bt(0, 0x100),
        [bt(0, 0x800), bt(1, 0x900)].concat(),
        [bt(0, 0x100), bt(1, 0xd00)].concat(),
    ] {
        let out = run(opts(), &input);
        assert!(!out.contains("[paths"), "{out}");
        assert!(
            !out.contains("in f0 src/") && !out.contains("in f7 a.c"),
            "{out}"
        );
    }
    // Six frames under /src/ do pay.
    let input: String = (0..6).map(|i| bt(i, 0x800 + (i % 2) * 0x100)).collect();
    let out = run(opts(), &input);
    assert!(out.starts_with("[paths relative to /src/]\n"), "{out}");
    assert!(
        out.contains(" in f7 a.c:8 ") && out.contains(" in f8 b.c:9 "),
        "{out}"
    );
}

#[test]
fn system_and_toolchain_paths() {
    let input = [
        bt(0, 0x100),
        bt(1, 0x600),
        bt(2, 0x400),
        bt(3, 0x500),
        bt(4, 0x200),
    ]
    .concat();
    let want = format!(
        "[paths relative to /home/u/work/proj/src/; <rust> = {RUSTC}; <cargo> = {CARGO}]\n\
         #0     0x0000000000010100 in f0 main.rs:1 (app+0x100)\n\
         #1     0x0000000000010600 in f5 /usr/include/c++/12/bits/stl_vector.h:6 (app+0x600)\n\
         #2     0x0000000000010400 in f3 <rust>/library/std/src/rt.rs:4 (app+0x400)\n\
         #3     0x0000000000010500 in f4 <cargo>/serde-1.0.200/src/de.rs:5 (app+0x500)\n\
         #4     0x0000000000010200 in f1 net/conn.rs:2 (app+0x200)\n"
    );
    assert_eq!(run(opts(), &input), want);
}

#[test]
fn tokens_are_stated_once_and_again_when_they_change() {
    let input = format!(
        "a {{{{{{pc:0x10400}}}}}}\n{}b {{{{{{pc:0x10c00}}}}}} {{{{{{pc:0x10400}}}}}}\n\
         c {{{{{{pc:0x10400}}}}}}\n{{{{{{reset}}}}}}\n{CONTEXT}d {{{{{{pc:0x10400}}}}}}\n",
        bt(0, 0x400)
    );
    let out = run(opts(), &input);
    let other = "/rustc/0123456789abcdef0123456789abcdef01234567";
    let want = format!(
        "[<rust> = {RUSTC}]\n\
         a f3 at <rust>/library/std/src/rt.rs:4\n\
         #0     0x0000000000010400 in f3 <rust>/library/std/src/rt.rs:4 (app+0x400)\n\
         [<rust> = {other}]\n\
         b f11 at <rust>/library/core/src/ops.rs:12 \
         f3 at {RUSTC}/library/std/src/rt.rs:4\n\
         [<rust> = {RUSTC}]\n\
         c f3 at <rust>/library/std/src/rt.rs:4\n\
         [reset]\n\
         [module #0 \"/opt/app/bin/app\" build-id aa01: 0x10000-0x1ffff rx]\n\
         [<rust> = {RUSTC}]\n\
         d f3 at <rust>/library/std/src/rt.rs:4\n"
    );
    assert_eq!(out, want);
}

#[test]
fn a_token_stands_for_one_root_in_a_line() {
    // The second path cannot use the token the first one relies on: it is
    // written whole, every time (the token is not stated again for it,
    // which would make the first path read wrong): from the answer the
    // first time, then from the value made to keep it, then as kept.
    let out = run(opts(), &"b {{{pc:0x10c00}}} {{{pc:0x10400}}}\n".repeat(3));
    let other = "/rustc/0123456789abcdef0123456789abcdef01234567";
    let line = format!(
        "b f11 at <rust>/library/core/src/ops.rs:12 f3 at {RUSTC}/library/std/src/rt.rs:4\n"
    );
    assert_eq!(out, format!("[<rust> = {other}]\n{}", line.repeat(3)));
}

#[test]
fn relative_paths_turn_shortening_off() {
    let input = [bt(0, 0x100), bt(1, 0x700), bt(2, 0x200)].concat();
    let out = run(opts(), &input);
    assert_eq!(
        out,
        "#0     0x0000000000010100 in f0 /home/u/work/proj/src/main.rs:1 (app+0x100)\n\
         #1     0x0000000000010700 in f6 relative/dir/file.c:7 (app+0x700)\n\
         #2     0x0000000000010200 in f1 /home/u/work/proj/src/net/conn.rs:2 (app+0x200)\n"
    );
}

#[test]
fn windows_and_non_ascii_paths() {
    let out = run(opts(), &[bt(0, 0xa00), bt(1, 0xb00), bt(2, 0xa00)].concat());
    assert_eq!(
        out,
        "[paths relative to C:\\work\\proj\\src\\]\n\
         #0     0x0000000000010a00 in f9 main.cpp:10 (app+0xa00)\n\
         #1     0x0000000000010b00 in f10 util\\str.cpp:11 (app+0xb00)\n\
         #2     0x0000000000010a00 in f9 main.cpp:10 (app+0xa00)\n"
    );
    let out = run(opts(), &[bt(0, 0xe00), bt(1, 0x100)].concat());
    assert_eq!(
        out,
        "[paths relative to /home/u/work/proj/src/]\n\
         #0     0x0000000000010e00 in f13 é/ü.rs:14 (app+0xe00)\n\
         #1     0x0000000000010100 in f0 main.rs:1 (app+0x100)\n"
    );
}

#[test]
fn full_paths_and_strip_prefix() {
    let input = [bt(0, 0x100), bt(1, 0x400), bt(2, 0x600)].concat();
    let full = Options {
        full_paths: true,
        ..opts()
    };
    let files: Vec<&str> = [0, 3, 5].iter().map(|&i| FILES[i]).collect();
    assert_eq!(
        run(full, &input),
        format!(
            "#0     0x0000000000010100 in f0 {}:1 (/opt/app/bin/app+0x100)\n\
             #1     0x0000000000010400 in f3 {}:4 (/opt/app/bin/app+0x400)\n\
             #2     0x0000000000010600 in f5 {}:6 (/opt/app/bin/app+0x600)\n",
            files[0], files[1], files[2]
        )
    );
    // The user's prefix wins: no common directory of our own; toolchain
    // roots are still written as tokens.
    let strip = Options {
        strip_path_prefix: Some("/home/u/work".into()),
        ..opts()
    };
    let input = [bt(0, 0x100), bt(1, 0x200), bt(2, 0x400), bt(3, 0xd00)].concat();
    assert_eq!(
        run(strip.clone(), &input),
        format!(
            "[<rust> = {RUSTC}]\n\
             #0     0x0000000000010100 in f0 proj/src/main.rs:1 (app+0x100)\n\
             #1     0x0000000000010200 in f1 proj/src/net/conn.rs:2 (app+0x200)\n\
             #2     0x0000000000010400 in f3 <rust>/library/std/src/rt.rs:4 (app+0x400)\n\
             #3     0x0000000000010d00 in f12 /srv/other/x.c:13 (app+0xd00)\n"
        )
    );
    // Both: the prefix is still stripped.
    let both = Options {
        full_paths: true,
        ..strip
    };
    let out = run(both, &bt(0, 0x100));
    assert!(
        out.contains(" in f0 proj/src/main.rs:1 (/opt/app/bin/app+0x100)"),
        "{out}"
    );
}

#[test]
fn pc_data_and_hexdict_lines() {
    // Outside backtraces only the per-path rules apply.
    let input = "pc {{{pc:0x10100}}} {{{pc:0x10600}}}\ndata {{{data:0x10500}}}\n\
                 {{{hexdict:\n  RIP: 0x10400 }}}\n";
    let out = run(opts(), input);
    assert_eq!(
        out,
        format!(
            "pc f0 at /home/u/work/proj/src/main.rs:1 f5 at /usr/include/c++/12/bits/stl_vector.h:6\n\
             [<cargo> = {CARGO}]\n\
             data g_var at <cargo>/serde-1.0.200/src/de.rs:5\n\
             [<rust> = {RUSTC}]\n\
             {{{{{{hexdict:\n  RIP: 0x10400 }}}}}}\n\
             \x20 RIP: 0x10400 = f3 at <rust>/library/std/src/rt.rs:4\n"
        )
    );
}

#[test]
fn colour_and_crlf() {
    let color = Options {
        color: true,
        ..opts()
    };
    let input = [bt(0, 0x100), bt(1, 0x200), bt(2, 0x100)].concat();
    let out = run(color, &input.replace('\n', "\r\n"));
    assert_eq!(
        out,
        "[paths relative to /home/u/work/proj/src/]\r\n\
         #0     0x0000000000010100 in \x1b[1mf0\x1b[0m \x1b[32mmain.rs:1\x1b[0m (app+0x100)\r\n\
         #1     0x0000000000010200 in \x1b[1mf1\x1b[0m \x1b[32mnet/conn.rs:2\x1b[0m (app+0x200)\r\n\
         #2     0x0000000000010100 in \x1b[1mf0\x1b[0m \x1b[32mmain.rs:1\x1b[0m (app+0x100)\r\n"
    );
}

#[test]
fn module_base_names_only_when_unambiguous() {
    let ctx = "{{{module:1:/a/libx.so:elf:bb}}}\n{{{mmap:0x30000:0x1000:load:1:rx:0x0}}}\n\
               {{{module:2:/b/libx.so:elf:cc}}}\n{{{mmap:0x40000:0x1000:load:2:rx:0x0}}}\n\
               {{{module:3:\u{fffd}/dir/:elf:dd}}}\n{{{mmap:0x50000:0x1000:load:3:rx:0x0}}}\n\
               {{{module:4:x\\y.dll:elf:ee}}}\n{{{mmap:0x60000:0x1000:load:4:rx:0x0}}}\n";
    let input = format!(
        "{ctx}{{{{{{pc:0x30010}}}}}} {{{{{{pc:0x40010}}}}}} {{{{{{pc:0x50010}}}}}} \
         {{{{{{pc:0x60010}}}}}} {{{{{{pc:0x10010}}}}}}\n"
    );
    let out = run(opts(), &input);
    let last = out.lines().last().expect("a line");
    assert_eq!(
        last,
        "/a/libx.so+0x10 /b/libx.so+0x10 \u{fffd}/dir/+0x10 y.dll+0x10 app+0x10"
    );
}

#[test]
fn module_names_with_invalid_utf8() {
    let mut input = CONTEXT.as_bytes().to_vec();
    input.extend_from_slice(b"{{{module:1:/d\xff/lib\xfe.so:elf:bb}}}\n");
    input.extend_from_slice(b"{{{mmap:0x30000:0x1000:load:1:rx:0x0}}}\n");
    input.extend_from_slice(b"{{{bt:0:0x30010:pc}}}\n");
    let config = SymbolizerConfig {
        providers: vec![Box::new(Scripted(table()))],
    };
    let mut f = Filter::new(opts(), Symbolizer::new(config), Arc::new(Silent));
    let mut out = Vec::new();
    f.run("t.log", &input[..], &mut out).expect("run");
    f.finish(&mut out).expect("finish");
    let out = String::from_utf8_lossy(&out);
    assert!(
        out.ends_with("#0     0x0000000000030010 (lib\u{fffd}.so+0x10)\n"),
        "{out}"
    );
}

/// Output stays live: when the filter waits for input, the backtrace so far
/// is written. A common directory stated then holds for the rest of it.
#[test]
fn held_backtrace_is_written_before_waiting() {
    let first = [bt(0, 0x100), bt(1, 0x200)].concat();
    let second = [bt(2, 0x300), bt(3, 0xd00)].concat();
    let until = vec![
        None,
        None,
        Some("in f1 net/conn.rs:2 (app+0x200)\n".to_string()),
        Some("(app+0xd00)\n".to_string()),
    ];
    let (out, seen) = run_pieces_until(opts(), &[&first, &second, "end\n"], until);
    assert_eq!(
        out,
        "[paths relative to /home/u/work/proj/src/]\n\
         #0     0x0000000000010100 in f0 main.rs:1 (app+0x100)\n\
         #1     0x0000000000010200 in f1 net/conn.rs:2 (app+0x200)\n\
         #2     0x0000000000010300 in f2 /home/u/work/proj/lib/util.rs:3 (app+0x300)\n\
         #3     0x0000000000010d00 in f12 /srv/other/x.c:13 (app+0xd00)\n\
         end\n"
    );
    // Reads: context, first, second, "end", EOF. Before the third read the
    // first part is out; before the fourth, all frames.
    assert!(
        seen[2].ends_with("in f1 net/conn.rs:2 (app+0x200)\n"),
        "{seen:?}"
    );
    assert!(seen[3].ends_with("(app+0xd00)\n"), "{seen:?}");
    // A frame alone in its read is written as it is (no directory yet),
    // and later frames may still get one.
    let rest = [bt(1, 0x200), bt(2, 0x2000)].concat();
    let (out, _) = run_pieces(opts(), &[&bt(0, 0x100), &rest]);
    assert_eq!(
        out,
        "#0     0x0000000000010100 in f0 /home/u/work/proj/src/main.rs:1 (app+0x100)\n\
         [paths relative to /home/u/work/proj/src/]\n\
         #1     0x0000000000010200 in f1 net/conn.rs:2 (app+0x200)\n\
         #2.1   0x0000000000012000 in inner inner.rs:7:3 (app+0x2000)\n\
         #2     0x0000000000012000 in outer outer.rs:9 (app+0x2000)\n"
    );
}

/// A relative path after a stated directory would read as relative to it:
/// the output says that the paths are as given from there on.
#[test]
fn relative_path_after_a_stated_directory() {
    let first = [bt(0, 0x100), bt(1, 0x200)].concat();
    let (out, _) = run_pieces(opts(), &[&first, &bt(2, 0x700)]);
    assert_eq!(
        out,
        "[paths relative to /home/u/work/proj/src/]\n\
         #0     0x0000000000010100 in f0 main.rs:1 (app+0x100)\n\
         #1     0x0000000000010200 in f1 net/conn.rs:2 (app+0x200)\n\
         [paths as in the debug info]\n\
         #2     0x0000000000010700 in f6 relative/dir/file.c:7 (app+0x700)\n"
    );
    // The same for a backtrace that directly follows one with a directory;
    // not after other text.
    let input = [bt(0, 0x100), bt(1, 0x200), bt(0, 0x700)].concat();
    let out = run(opts(), &input);
    assert!(
        out.ends_with(
            "[paths as in the debug info]\n\
             #0     0x0000000000010700 in f6 relative/dir/file.c:7 (app+0x700)\n"
        ),
        "{out}"
    );
    let input = [bt(0, 0x100), bt(1, 0x200), "x\n".into(), bt(0, 0x700)].concat();
    let out = run(opts(), &input);
    assert!(!out.contains("[paths as"), "{out}");
}

/// A backtrace far longer than what is held is written in parts, the
/// directory stated once.
#[test]
fn long_backtrace_is_written_in_parts() {
    let n = 3000u64;
    let input: String = (0..n).map(|i| bt(i, 0x100 + (i % 2) * 0x100)).collect();
    let out = run(opts(), &input);
    assert_eq!(out.matches("[paths relative to").count(), 1);
    assert!(out.starts_with("[paths relative to /home/u/work/proj/src/]\n"));
    assert_eq!(out.lines().count() as u64, n + 1);
    assert_eq!(out.matches(" main.rs:1 ").count() as u64, n / 2);
    assert_eq!(out.matches(" net/conn.rs:2 ").count() as u64, n / 2);
}

/// Through the real binary on a pipe: a backtrace line shows up while the
/// input is still open.
#[test]
fn live_backtrace_through_a_pipe() {
    use std::process::Stdio;
    use std::sync::mpsc;
    use std::time::Duration;
    let mut child = common::command()
        .args(["--color=never", "-q", "--no-debuginfod", "--offline"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 256];
        let mut got = Vec::new();
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
            if tx.send(got.clone()).is_err() {
                break;
            }
        }
    });
    stdin
        .write_all(
            b"{{{module:0:/x/app:elf:abcd}}}\n{{{mmap:0x1000:0x1000:load:0:rx:0x0}}}\n\
              {{{bt:0:0x1010:pc}}}\n",
        )
        .expect("write");
    stdin.flush().expect("flush");
    let want = "[module #0 \"/x/app\" build-id abcd: 0x1000-0x1fff rx]\n\
                #0     0x0000000000001010 (app+0x10)\n";
    let mut got = Vec::new();
    while got != want.as_bytes() {
        got = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("no live output; got {:?}", String::from_utf8_lossy(&got)));
    }
    drop(stdin);
    assert!(child.wait().expect("wait").success());
}

// ---- Property: shortening loses nothing ------------------------------------

mod property {
    use super::*;
    use proptest::prelude::*;
    use symfilter::render::paths;

    struct Many(Vec<String>);

    impl Provider for Many {
        fn name(&self) -> Locator {
            Locator::Custom("many")
        }
        fn find(
            &self,
            _key: &ModuleKey,
            _trail: &mut Vec<Attempt>,
        ) -> Option<Box<dyn SymbolSource>> {
            let mut t = BTreeMap::new();
            for (i, file) in self.0.iter().enumerate() {
                t.insert(
                    0x100 * (i as u64 + 1),
                    CodeInfo {
                        frames: vec![Frame {
                            function: Some("frame_fn".into()),
                            file: Some(file.as_str().into()),
                            line: 1,
                            column: 0,
                        }]
                        .into(),
                        symbol: None,
                        claimed: false,
                        shown: Default::default(),
                    },
                );
            }
            Some(Box::new(Source(t)))
        }
    }

    /// Paths that often share a deep directory, with odd components mixed in.
    fn path() -> impl Strategy<Value = String> {
        let base = prop_oneof![
            3 => Just("/home/someone/work/project/"),
            1 => Just("/home/someone/work/other/"),
            1 => Just("C:\\work\\project\\"),
            1 => Just("/"),
            1 => Just(""),
            1 => Just("/rustc/0123456789abcdef/library/"),
            1 => Just("/rustc/fedcba9876543210/library/"),
            1 => Just("/home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/memchr-2.7.4/"),
            1 => Just("/root/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde-1.0.0/"),
            1 => Just("/usr/include/"),
        ];
        let part = prop_oneof![
            Just("src".to_string()),
            Just("a".to_string()),
            Just("é".to_string()),
            Just("..".to_string()),
            Just(".".to_string()),
            Just("".to_string()),
            Just("x\\y".to_string()),
            "[a-z]{1,3}",
        ];
        (base, proptest::collection::vec(part, 0..4))
            .prop_map(|(base, parts)| format!("{base}{}.c", parts.join("/")))
    }

    /// Render one backtrace of `files`, split into reads at `cuts`.
    fn render(files: &[String], opts: Options, cuts: &[usize]) -> String {
        let body: String = (0..files.len())
            .map(|i| bt(i as u64, 0x100 * (i as u64 + 1)))
            .collect();
        let input = format!("{CONTEXT}{body}");
        let mut pieces = Vec::new();
        let mut at = 0;
        for &c in cuts {
            let c = c.min(input.len()).max(at);
            if c > at {
                pieces.push(input.as_bytes()[at..c].to_vec());
            }
            at = c;
        }
        pieces.push(input.as_bytes()[at..].to_vec());
        filtered(files, opts, |out| Pieces {
            pieces,
            next: 0,
            out,
            seen: Arc::default(),
            until: Vec::new(),
        })
    }

    /// What the filter (with `opts`, each address's answer a file of
    /// `files`) writes for the input `reader` gives (made with the output,
    /// which it may watch).
    fn filtered<R: std::io::Read>(
        files: &[String],
        opts: Options,
        reader: impl FnOnce(Shared) -> R,
    ) -> String {
        let config = SymbolizerConfig {
            providers: vec![Box::new(Many(files.to_vec()))],
        };
        let mut f = Filter::new(opts, Symbolizer::new(config), Arc::new(Silent));
        let out = Shared::default();
        let mut w = out.clone();
        f.run("t.log", reader(out.clone()), &mut w).expect("run");
        f.finish(&mut w).expect("finish");
        out.text()
    }

    /// Lines of `pc` elements, or backtraces, each element's answer the
    /// file of its index in `files` (`lines` gives each line's indexes, and
    /// whether it is a backtrace of a frame per index).
    fn render_mixed(files: &[String], lines: &[(bool, Vec<usize>)]) -> String {
        let mut input = CONTEXT.to_string();
        for (backtrace, line) in lines {
            if *backtrace {
                for (n, &i) in line.iter().enumerate() {
                    input.push_str(&bt(n as u64, 0x100 * (i as u64 + 1)));
                }
                continue;
            }
            input.push('p');
            for &i in line {
                let at = 0x10000 + 0x100 * (i as u64 + 1);
                input.push_str(&format!(" {{{{{{pc:{at:#x}}}}}}}"));
            }
            input.push('\n');
        }
        filtered(files, opts(), |_| std::io::Cursor::new(input))
    }

    /// The paths of `pc` and `bt` elements as shown, in order, with the
    /// stated directory (in the backtraces right below it) and tokens put
    /// back as the legends above them state them.
    fn expand(out: &str) -> Vec<String> {
        let mut prefix = String::new();
        let mut roots: Vec<(String, String)> = Vec::new();
        let mut files = Vec::new();
        let with_root = |shown: &str, roots: &[(String, String)]| {
            roots
                .iter()
                .find(|(t, _)| shown.starts_with(t.as_str()))
                .map(|(t, r)| format!("{r}{}", &shown[t.len()..]))
        };
        for line in out.lines() {
            if let Some(legend) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                if legend.starts_with("module #") {
                    continue;
                }
                for part in legend.split("; ") {
                    if part == "paths as in the debug info" {
                        prefix.clear();
                    } else if let Some(p) = part.strip_prefix("paths relative to ") {
                        prefix = p.to_string();
                    } else if let Some((t, r)) = part.split_once(" = ") {
                        roots.retain(|(k, _)| k != t);
                        roots.push((t.to_string(), r.to_string()));
                    }
                }
                continue;
            }
            if let Some((_, rest)) = line.split_once(" in frame_fn ") {
                let (shown, _) = rest.rsplit_once(":1 (").expect("a bt location");
                let full = match with_root(shown, &roots) {
                    Some(full) => full,
                    None if !prefix.is_empty() && !paths::is_absolute(shown.as_bytes()) => {
                        format!("{prefix}{shown}")
                    }
                    None => shown.to_string(),
                };
                files.push(full);
                continue;
            }
            // A stated directory is the backtrace's below it: another line
            // ends it.
            prefix.clear();
            for shown in line.split(" frame_fn at ").skip(1) {
                let shown = shown
                    .strip_suffix(":1")
                    .or_else(|| shown.strip_suffix(":1 "));
                let shown = shown.expect("a pc location");
                files.push(with_root(shown, &roots).unwrap_or_else(|| shown.to_string()));
            }
        }
        files
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// However lines and backtraces mix paths under different roots of
        /// one token, every path shown is the original once the stated
        /// directory and the tokens the legends state are put back: a token
        /// is never restated under a path that relied on it.
        #[test]
        fn tokens_hold_across_lines(
            files in proptest::collection::vec(path(), 1..8),
            lines in proptest::collection::vec(
                (any::<bool>(), proptest::collection::vec(0usize..8, 1..4)),
                1..8,
            ),
        ) {
            let lines: Vec<(bool, Vec<usize>)> = lines
                .into_iter()
                .map(|(bt, l)| (bt, l.into_iter().map(|i| i % files.len()).collect()))
                .collect();
            let out = render_mixed(&files, &lines);
            let want: Vec<String> = lines
                .iter()
                .flat_map(|(_, l)| l)
                .map(|&i| paths::normalize(&files[i]))
                .collect();
            prop_assert_eq!(expand(&out), want, "{}", out);
        }

        /// Whatever the paths and however the input arrives, every path shown
        /// is the (lexically normalised) original once the stated directory
        /// and tokens are put back; `--full-paths` shows the originals.
        #[test]
        fn nothing_is_lost(
            files in proptest::collection::vec(path(), 1..8),
            cuts in proptest::collection::vec(0usize..900, 0..4),
        ) {
            let mut cuts = cuts;
            cuts.sort_unstable();
            let short = render(&files, opts(), &cuts);
            let want: Vec<String> = files
                .iter()
                .map(|f| paths::normalize(f))
                .collect();
            prop_assert_eq!(expand(&short), want, "{}", short);
            let full = Options { full_paths: true, ..opts() };
            let out = render(&files, full, &[]);
            prop_assert_eq!(expand(&out), files.clone(), "{}", out);
        }
    }
}

/// A base name stays short while one full name uses it (even by several
/// modules) and goes back to full names for all once another full name
/// shares it; `reset` forgets.
#[test]
fn module_base_names_change_with_the_context() {
    let input = "{{{module:1:/c/liby.so:elf:bb}}}\n{{{mmap:0x30000:0x1000:load:1:rx:0x0}}}\n\
                 {{{module:2:/c/liby.so:elf:cc}}}\n{{{mmap:0x40000:0x1000:load:2:rx:0x0}}}\n\
                 a {{{pc:0x30010}}} {{{pc:0x40010}}}\n\
                 {{{module:3:/d/liby.so:elf:dd}}}\n{{{mmap:0x50000:0x1000:load:3:rx:0x0}}}\n\
                 b {{{pc:0x30010}}} {{{pc:0x40010}}} {{{pc:0x50010}}}\n\
                 {{{reset}}}\n\
                 {{{module:3:/d/liby.so:elf:dd}}}\n{{{mmap:0x50000:0x1000:load:3:rx:0x0}}}\n\
                 c {{{pc:0x50010}}}\n";
    let out = run(opts(), input);
    let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with('[')).collect();
    assert_eq!(
        lines,
        [
            "a liby.so+0x10 liby.so+0x10",
            "b /c/liby.so+0x10 /c/liby.so+0x10 /d/liby.so+0x10",
            "c liby.so+0x10",
        ]
    );
}

/// Regular files never make the filter wait: a backtrace that straddles a
/// read boundary comes out as if it had been read at once (the widget
/// report after 256 KiB of text, the boundary inside a backtrace).
#[test]
fn file_input_does_not_depend_on_read_boundaries() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/human");
    let log = std::fs::read(dir.join("widget.log")).expect("widget.log");
    // The second backtrace's frame #2 (the first one's #2 comes earlier).
    let at = log
        .windows(8)
        .enumerate()
        .filter(|(_, w)| w == b"{{{bt:2:")
        .map(|(i, _)| i)
        .nth(1)
        .expect("a second #2 frame");
    let pad = (256 << 10) - (at + 5);
    let mut input = Vec::new();
    while input.len() + 100 <= pad {
        input.extend_from_slice(&[b'x'; 99]);
        input.push(b'\n');
    }
    input.resize(pad - 1, b'y');
    input.push(b'\n');
    input.extend_from_slice(&log);
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("padded.log");
    std::fs::write(&path, &input).expect("write");
    let empty = tempfile::tempdir().expect("tempdir");
    let out = common::command()
        .current_dir(&dir)
        .env_remove("DEBUGINFOD_URLS")
        .arg("--build-id-dir")
        .arg(empty.path())
        .args(["--symbol-path", "bin", "--no-debuginfod", "--offline", "-q"])
        .arg("--no-default-paths")
        .arg("--color=never")
        .arg(&path)
        .output()
        .expect("run symfilter");
    assert!(out.status.success());
    let mut want = input[..pad].to_vec();
    want.extend_from_slice(expected("widget.human").as_bytes());
    assert!(
        out.stdout == want,
        "{}",
        String::from_utf8_lossy(&out.stdout[pad..])
    );
}

/// Through the library: with `set_input_never_blocks` a split backtrace is
/// rendered whole; without, its first part is written at the read boundary.
#[test]
fn never_blocking_input_holds_the_whole_backtrace() {
    let input = format!("{CONTEXT}{}{}", bt(0, 0x100), bt(1, 0x200));
    let cut = CONTEXT.len() + bt(0, 0x100).len();
    let go = |never_blocks: bool| {
        let config = SymbolizerConfig {
            providers: vec![Box::new(Scripted(table()))],
        };
        let mut f = Filter::new(opts(), Symbolizer::new(config), Arc::new(Silent));
        f.set_input_never_blocks(never_blocks);
        let out = Shared::default();
        let reader = Pieces {
            pieces: vec![
                input.as_bytes()[..cut].to_vec(),
                input.as_bytes()[cut..].to_vec(),
            ],
            next: 0,
            out: out.clone(),
            seen: Arc::default(),
            until: Vec::new(),
        };
        let mut w = out.clone();
        f.run("t.log", reader, &mut w).expect("run");
        f.finish(&mut w).expect("finish");
        out.text()
    };
    assert!(go(true).contains(
        "[paths relative to /home/u/work/proj/src/]\n\
         #0     0x0000000000010100 in f0 main.rs:1 (app+0x100)\n\
         #1     0x0000000000010200 in f1 net/conn.rs:2 (app+0x200)\n"
    ));
    assert!(go(false).contains(
        "#0     0x0000000000010100 in f0 /home/u/work/proj/src/main.rs:1 (app+0x100)\n\
         #1     0x0000000000010200 in f1 /home/u/work/proj/src/net/conn.rs:2 (app+0x200)\n"
    ));
}
