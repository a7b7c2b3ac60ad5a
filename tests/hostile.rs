//! Hostile logs: inputs made to cost time, memory or output, or to reach
//! files and terminals they should not. Each runs the real binary with a
//! CPU-time and address-space limit on the child process (setrlimit before
//! exec) and asserts that it finished inside them, with exact output where
//! the output is small; no test looks at the wall clock.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::common;

/// What a limited run gave.
struct Limited {
    /// Standard output, or its last 8 MiB.
    stdout: Vec<u8>,
    /// The first 64 KiB of standard output.
    head: Vec<u8>,
    /// Size of stdout (kept in a file: it may be big).
    stdout_len: u64,
    stderr: String,
    /// Exit code, or None when killed by a signal (a limit hit).
    code: Option<i32>,
}

/// Run symfilter on `input` (a file, fed to its standard input) in `dir`
/// with at most `cpu_s` seconds of CPU time and `mem` bytes of address
/// space. Of standard output, the last 8 MiB are kept.
fn limited(dir: &Path, args: &[&str], input: &Path, cpu_s: u64, mem: u64) -> Limited {
    let out_dir = tempfile::tempdir().expect("tempdir");
    let out_path = out_dir.path().join("stdout");
    let err_path = out_dir.path().join("stderr");
    let mut cmd = common::command();
    cmd.current_dir(dir)
        .args(["--no-debuginfod", "--color=never"])
        .args(args)
        // One malloc arena: each thread's arena would reserve 64 MiB of
        // address space, which is not memory the program uses.
        .env("MALLOC_ARENA_MAX", "1")
        .stdin(std::fs::File::open(input).expect("open input"))
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"));
    common::limit(&mut cmd, Some(cpu_s), Some(mem));
    let status = cmd.status().expect("run symfilter");
    let stdout_len = std::fs::metadata(&out_path).expect("stdout").len();
    let mut file = std::fs::File::open(&out_path).expect("stdout");
    let mut head = Vec::new();
    (&mut file)
        .take(64 << 10)
        .read_to_end(&mut head)
        .expect("read stdout");
    let mut stdout = Vec::new();
    file.seek(SeekFrom::Start(stdout_len.saturating_sub(8 << 20)))
        .expect("seek");
    file.read_to_end(&mut stdout).expect("read stdout");
    let stderr = std::fs::read(&err_path).expect("read stderr");
    Limited {
        stdout,
        head,
        stdout_len,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        code: status.code(),
    }
}

const MIB: u64 = 1 << 20;

/// A file `name` in `dir` with `content`.
fn write_file(dir: &Path, name: &str, content: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    let mut f = std::fs::File::create(&path).expect("create");
    f.write_all(content).expect("write");
    path
}

/// Many elements on one line cost time linear in the line: 150,000 `pc`
/// elements (each reported: no mmap covers them) used to take minutes of
/// CPU in a debug build, counting lines from the line start for each; so
/// did `bt` elements in the human format, each looking for its line start.
#[test]
fn many_elements_on_one_line_are_linear() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut line = b"x".to_vec();
    for _ in 0..150_000 {
        line.extend_from_slice(b"{{{pc:0x9}}}");
    }
    line.extend_from_slice(b"\n");
    let log = write_file(dir.path(), "many.log", &line);
    let r = limited(dir.path(), &[], &log, 20, 512 * MIB);
    assert_eq!(r.code, Some(0), "{}", &r.stderr[..r.stderr.len().min(500)]);
    assert!(r.stdout == line, "plain text and elements pass through");
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 150_000);
    assert_eq!(
        lines[149_999],
        "symfilter: <stdin>:1:1799996: no mmap covers address 0x9"
    );

    let mut log = b"{{{module:0:m:elf:abcd}}}\n{{{mmap:0x1000:0x1000:load:0:rx:0x0}}}\n".to_vec();
    for i in 0..150_000 {
        write!(log, "{{{{{{bt:{i}:0x1001:pc}}}}}}").expect("write");
    }
    log.push(b'\n');
    let log = write_file(dir.path(), "bt.log", &log);
    let r = limited(dir.path(), &["-q"], &log, 20, 512 * MIB);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let out = String::from_utf8_lossy(&r.stdout);
    assert!(
        out.starts_with("[module #0 \"m\" build-id abcd: 0x1000-0x1fff rx]\n#0     0x0000000000001001 (m+0x1)#1 "),
        "{}",
        &out[..out.len().min(200)]
    );
    assert!(
        out.ends_with(")#149999 0x0000000000001001 (m+0x1)\n"),
        "{}",
        &out[out.len().saturating_sub(200)..]
    );
    assert_eq!(r.stderr, "");
}

/// The first use of a module looks at its own regions only: 4,000 modules
/// over 200,000 regions, each module used once, used to scan every region
/// for each (800 million region visits).
#[test]
fn first_use_of_a_module_does_not_scan_every_region() {
    const MODULES: u64 = 4_000;
    const REGIONS: u64 = 200_000;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut log = Vec::new();
    for m in 0..MODULES {
        writeln!(log, "{{{{{{module:{m}:m{m}:elf:{:08x}}}}}}}", m + 1).expect("write");
    }
    for r in 0..REGIONS {
        let start = 0x1000_0000 + r * 0x1000;
        let m = r % MODULES;
        writeln!(
            log,
            "{{{{{{mmap:{start:#x}:0x1000:load:{m}:rx:{:#x}}}}}}}",
            r * 0x1000
        )
        .expect("write");
    }
    for m in 0..MODULES {
        writeln!(log, "{{{{{{pc:{:#x}}}}}}}", 0x1000_0000 + m * 0x1000 + 0x10).expect("write");
    }
    let log = write_file(dir.path(), "regions.log", &log);
    let r = limited(dir.path(), &["--format=llvm"], &log, 10, 512 * MIB);
    assert_eq!(r.code, Some(0), "{}", &r.stderr[..r.stderr.len().min(500)]);
    let out = String::from_utf8_lossy(&r.stdout);
    let last: Vec<&str> = out.lines().rev().take(2).collect();
    assert_eq!(last, ["[[[pc:0x10f9f010]]]", "[[[pc:0x10f9e010]]]"]);
    // One "no symbols" diagnostic per module, each built from its key, up
    // to 100; the rest are counted.
    assert_eq!(r.stderr.matches("no symbols for module").count(), 100);
    assert!(r.stderr.ends_with(
        "symfilter: 3900 more modules without symbols were not reported (the first 100 were)\n"
    ));
}

/// A line over the 16 MiB limit right after a context run is passed
/// through after the run's summary (human) or module line (llvm), not
/// before it or inside it.
#[test]
fn over_long_line_after_a_context_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut log = b"{{{module:0:app:elf:abcd}}}\n{{{mmap:0x1000:0x1000:load:0:rx:0x0}}}\n".to_vec();
    let long = vec![b'x'; 17 << 20];
    log.extend_from_slice(&long);
    log.extend_from_slice(b"\nafter\n");
    let log = write_file(dir.path(), "long.log", &log);
    for (format, head) in [
        (
            "human",
            "[module #0 \"app\" build-id abcd: 0x1000-0x1fff rx]\n",
        ),
        (
            "llvm",
            "[[[ELF module #0x0 \"app\"; BuildID=abcd [0x1000-0x1fff](rx)]]]\n",
        ),
    ] {
        let r = limited(
            dir.path(),
            &[&format!("--format={format}")],
            &log,
            20,
            512 * MIB,
        );
        assert_eq!(r.code, Some(0), "{format}: {}", r.stderr);
        assert_eq!(
            r.stdout_len,
            (head.len() + long.len() + 7) as u64,
            "{format}"
        );
        let shown = String::from_utf8_lossy(&r.head[..r.head.len().min(200)]);
        assert!(r.head.starts_with(head.as_bytes()), "{format}: {shown}");
        assert!(
            r.head[head.len()..].iter().all(|&b| b == b'x'),
            "{format}: {shown}"
        );
        assert!(r.stdout.ends_with(b"xxxx\nafter\n"), "{format}");
    }
}

/// A log names dump files only inside the dumpfile directory (the log's,
/// here the current directory for standard input): absolute names, `..`,
/// symbolic links out of it and FIFOs are refused, and nothing of a file
/// that is not a dump of its kind (its magic bytes) is shown in a
/// diagnostic, in JSON output or in the report.
#[test]
fn dump_files_stay_inside_their_directory() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let logs = tmp.path().join("logs");
    std::fs::create_dir(&logs).expect("mkdir");
    // "SECRET!!" as the 8-byte sancov magic is 0x2121544552434553; as an
    // XRay header, version 0x4553 and type 0x4552.
    let secret = [&b"SECRET!!"[..], &[b'S'; 40]].concat();
    write_file(tmp.path(), "secret", &secret);
    write_file(&logs, "inside.bin", &secret);
    std::os::unix::fs::symlink("../secret", logs.join("link")).expect("symlink");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        logs.join("fifo"),
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
    )
    .expect("mkfifo");
    let abs = tmp.path().join("secret");
    let log = format!(
        "{{{{{{dumpfile:sancov:{}}}}}}}
{{{{{{dumpfile:sancov:../secret}}}}}}
{{{{{{dumpfile:sancov:link}}}}}}
{{{{{{dumpfile:xray:link}}}}}}
{{{{{{dumpfile:sancov:fifo}}}}}}
{{{{{{dumpfile:xray:fifo}}}}}}
{{{{{{dumpfile:sancov:inside.bin}}}}}}
{{{{{{dumpfile:xray:inside.bin}}}}}}
",
        abs.display()
    );
    let log_path = write_file(tmp.path(), "hostile.log", log.as_bytes());
    let report = tmp.path().join("report");
    let report_arg = report.to_str().expect("utf-8");
    let r = limited(
        &logs,
        &["--dumpfile-report", report_arg],
        &log_path,
        20,
        512 * MIB,
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let rel = "names are relative to .";
    assert_eq!(
        r.stderr,
        format!(
            "symfilter: <stdin>:1:20: dumpfile sancov:{}: absolute file names are not read ({rel})
symfilter: <stdin>:2:20: dumpfile sancov:../secret: file names with '..' are not read ({rel})
symfilter: <stdin>:3:20: dumpfile sancov:link: ./link is a symbolic link (not followed)
symfilter: <stdin>:4:18: dumpfile xray:link: ./link is a symbolic link (not followed)
symfilter: <stdin>:5:20: dumpfile sancov:fifo: ./fifo is not a regular file (a FIFO)
symfilter: <stdin>:6:18: dumpfile xray:fifo: ./fifo is not a regular file (a FIFO)
symfilter: <stdin>:7:20: dumpfile sancov:inside.bin: ./inside.bin: not a sancov file
symfilter: <stdin>:8:18: dumpfile xray:inside.bin: ./inside.bin: not an XRay FDR trace
",
            abs.display()
        )
    );
    let json = limited(&logs, &["--format=json"], &log_path, 20, 512 * MIB);
    assert_eq!(json.code, Some(0), "{}", json.stderr);
    assert_eq!(json.stderr, r.stderr);
    let report = std::fs::read_to_string(&report).expect("report");
    for (what, text) in [
        ("human", String::from_utf8_lossy(&r.stdout).into_owned()),
        ("json", String::from_utf8_lossy(&json.stdout).into_owned()),
        ("report", report),
        ("stderr", r.stderr.clone()),
    ] {
        for leak in ["2121544552434553", "SECRET", "17747", "0x4553", "17746"] {
            assert!(!text.contains(leak), "{what} shows {leak}: {text}");
        }
    }
}

/// Each dumpfile element used to reprint the whole context (every region
/// of up to 256 modules): 100 dumps over 100,000 regions were 400 MB of
/// output. The context is described once (at most 1024 regions), then
/// referred to by number; the report likewise.
#[test]
fn dumps_describe_their_context_once() {
    const MODULES: u64 = 256;
    const REGIONS: u64 = 100_000;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut log = Vec::new();
    for m in 0..MODULES {
        writeln!(log, "{{{{{{module:{m}:m{m}:elf:{:04x}}}}}}}", m + 1).expect("write");
    }
    for r in 0..REGIONS {
        let m = r * MODULES / REGIONS;
        writeln!(
            log,
            "{{{{{{mmap:{:#x}:0x1000:load:{m}:r:0x0}}}}}}",
            0x1000_0000 + r * 0x1000
        )
        .expect("write");
    }
    for i in 0..100 {
        writeln!(log, "{{{{{{dumpfile:llvm-profile:p{i}}}}}}}").expect("write");
    }
    let log = write_file(dir.path(), "dumps.log", &log);
    let report = dir.path().join("report");
    let report_arg = report.to_str().expect("utf-8");
    let r = limited(
        dir.path(),
        &["--dumpfile-report", report_arg],
        &log,
        20,
        512 * MIB,
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    // The module summaries, then the dumps: bounded by the input.
    assert!(r.stdout_len < 8 * MIB, "{} bytes of output", r.stdout_len);
    let out = String::from_utf8_lossy(&r.stdout);
    let dumps: Vec<&str> = out.lines().filter(|l| l.starts_with("[dumpfile")).collect();
    assert_eq!(dumps.len(), 100);
    assert!(
        dumps[0].starts_with("[dumpfile llvm-profile:p0: context #1: module 0 \"m0\" build-id 0001 0x10000000-0x10000fff r +0x0, "),
        "{}",
        &dumps[0][..200]
    );
    // 1024 regions listed (modules 0, 1 and part of 2), then counts.
    assert_eq!(dumps[0].matches(" r +0x0").count(), 1024);
    assert!(dumps[0].contains("; module 3 \"m3\" build-id 0004 ... 391 more regions; "));
    assert!(
        dumps[0].ends_with("; module 255 \"m255\" build-id 0100 ... 390 more regions]"),
        "{}",
        &dumps[0][dumps[0].len() - 300..]
    );
    assert_eq!(
        dumps[99],
        "[dumpfile llvm-profile:p99: context #1 (as above)]"
    );
    assert!(dumps[0].len() < 64 << 10, "{}", dumps[0].len());
    let report = std::fs::read_to_string(&report).expect("report");
    let objs: Vec<serde_json::Value> = report
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert_eq!(objs.len(), 100);
    assert_eq!(objs[0]["context"], 1);
    assert_eq!(objs[0]["modules"].as_array().map(Vec::len), Some(256));
    assert_eq!(objs[0]["regions_omitted"], 100_000 - 65_536);
    assert_eq!(
        objs[99],
        serde_json::json!({"kind": "llvm-profile", "name": "p99", "context": 1,
                           "input": "<stdin>", "line": 100_356})
    );
}

/// Memory does not grow with what a log declares: module names are cut
/// (a prefix and the length are kept), and missing modules are remembered,
/// and reported, up to a bound.
#[test]
fn memory_stays_bounded() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 40 names of 8 MiB: 320 MB kept whole before.
    let mut log = Vec::new();
    for m in 0..40 {
        write!(log, "{{{{{{module:{m}:").expect("write");
        log.resize(log.len() + (8 << 20), b'n');
        writeln!(log, ":elf:{:02x}}}}}}}", m + 1).expect("write");
    }
    log.extend_from_slice(b"{{{mmap:0x1000:0x1000:load:39:rx:0x0}}}\n{{{pc:0x1010}}}\n");
    let log = write_file(dir.path(), "names.log", &log);
    let r = limited(dir.path(), &["--format=llvm"], &log, 30, 256 * MIB);
    assert_eq!(r.code, Some(0), "{}", &r.stderr[..r.stderr.len().min(500)]);
    let name = format!("{}...(8388608 bytes)", "n".repeat(4096));
    let end = format!("{name}\"; BuildID=28 [0x1000-0x1fff](rx)]]]\n[[[pc:0x1010]]]\n");
    assert!(r.stdout.ends_with(end.as_bytes()));
    assert!(
        r.stderr.contains(&format!(
            "no symbols for module #39 \"{name}\" (build ID 28)"
        )),
        "{}",
        &r.stderr[..r.stderr.len().min(500)]
    );

    // 100,000 distinct missing build IDs, each used once.
    let empty = tempfile::tempdir().expect("tempdir");
    let mut log = Vec::new();
    for i in 0..100_000u64 {
        if i % 50_000 == 0 {
            log.extend_from_slice(b"{{{reset}}}\n");
        }
        let start = 0x1000_0000 + (i % 50_000) * 0x1000;
        writeln!(
            log,
            "{{{{{{module:{i}:m:elf:{i:016x}}}}}}}\n{{{{{{mmap:{start:#x}:0x1000:load:{i}:rx:0x0}}}}}}\n{{{{{{pc:{start:#x}}}}}}}"
        )
        .expect("write");
    }
    let log = write_file(dir.path(), "missing.log", &log);
    let build_id_dir = empty.path().to_str().expect("utf-8");
    let r = limited(
        dir.path(),
        &["--format=llvm", "--build-id-dir", build_id_dir],
        &log,
        60,
        256 * MIB,
    );
    assert_eq!(r.code, Some(0), "{}", &r.stderr[..r.stderr.len().min(500)]);
    assert_eq!(r.stderr.lines().count(), 101);
    assert!(r.stderr.ends_with(
        "symfilter: 99900 more modules without symbols were not reported (the first 100 were)\n"
    ));
}

/// Names that reach a terminal (module, symbol and dumpfile names from the
/// log, function names and source paths from debug info) have their
/// control characters shown escaped in the human format and in every
/// diagnostic; plain text keeps its escapes byte for byte, and the llvm
/// format prints names as LLVM does (raw).
#[test]
fn terminal_escapes_in_names_are_shown_escaped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = b"{{{module:0:a\x1b]52;c;SGVsbG8=\x07:elf:abcd}}}
{{{mmap:0x1000:0x1000:load:0:rx:0x0}}}
plain \x1b[2J text
pc {{{pc:0x1010}}} symbol {{{symbol:x\x1b[2Jy}}} {{{symbol:\xc2\x9b2J}}} {{{symbol:\x9b2J}}}
{{{dumpfile:llvm-profile:p\x1b[2J}}}
";
    let path = write_file(dir.path(), "escapes.log", log);
    let r = limited(dir.path(), &[], &path, 20, 512 * MIB);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let name = "a\\u{1b}]52;c;SGVsbG8=\\u{7}";
    assert_eq!(
        String::from_utf8_lossy(&r.stdout),
        format!(
            "[module #0 \"{name}\" build-id abcd: 0x1000-0x1fff rx]
plain \x1b[2J text
pc {name}+0x10 symbol x\\u{{1b}}[2Jy \\u{{9b}}2J \\x9b2J
{{{{{{dumpfile:llvm-profile:p\x1b[2J}}}}}}
[dumpfile llvm-profile:p\\u{{1b}}[2J: context #1: module 0 \"{name}\" build-id abcd 0x1000-0x1fff rx +0x0]
"
        )
    );
    // Where symbols were looked for depends on the machine.
    assert!(
        r.stderr.starts_with(&format!(
            "symfilter: <stdin>:4:10: no symbols for module #0 \"{name}\" (build ID abcd): "
        )),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1);
    assert!(!r.stderr.contains('\x1b'));
    // LLVM prints the name raw; so does the llvm format.
    let r = limited(dir.path(), &["--format=llvm"], &path, 20, 512 * MIB);
    assert!(
        r.stdout
            .starts_with(b"[[[ELF module #0x0 \"a\x1b]52;c;SGVsbG8=\x07\"; BuildID=abcd"),
        "{}",
        String::from_utf8_lossy(&r.stdout)
    );
    assert!(!r.stderr.contains('\x1b'), "{}", r.stderr);
}

/// Function names and source paths from debug info are escaped in the
/// human format too (the renderer, given a hostile answer).
#[test]
fn terminal_escapes_from_debug_info_are_shown_escaped() {
    use std::sync::Arc;
    use symfilter::context::{Module, Region};
    use symfilter::markup::{Mode, RawElement};
    use symfilter::render::{
        Event, Format, Line, Lookup, Place, RenderOptions, Resolved, renderer,
    };
    use symfilter::symbols::{BuildId, CodeInfo, Frame, SymbolHit};
    let info = CodeInfo {
        frames: vec![Frame {
            function: Some("f\x1b]0;title\x07".into()),
            file: Some("/src/\x1b[2J/a.c".into()),
            line: 3,
            column: 1,
        }]
        .into(),
        symbol: None,
        claimed: false,
        shown: Default::default(),
    };
    let module = Module {
        id: 0,
        name: b"app".to_vec(),
        build_id: BuildId(vec![0xab]),
    };
    let region = Region {
        start: 0x1000,
        size: 0x1000,
        module: 0,
        mode: Mode {
            read: true,
            write: false,
            exec: true,
        },
        rel: 0,
    };
    let resolved = Resolved {
        addr: 0x1010,
        adjusted: 0x1010,
        place: Some(Place {
            module: Arc::new(module),
            region,
            rel: 0x10,
        }),
        lookup: Lookup::Code(Arc::new(info)),
    };
    let raw = RawElement {
        span: 0..14,
        tag: 3..5,
        fields: Default::default(),
    };
    let line = Line {
        bytes: b"{{{pc:0x1010}}}",
        ending: b"\n",
        number: 1,
        lead: b"",
        key: None,
    };
    for full_paths in [false, true] {
        let opts = RenderOptions {
            full_paths,
            ..RenderOptions::default()
        };
        let mut human = renderer(Format::Human, &opts);
        let mut out = Vec::new();
        human
            .line(&mut out, &line, &[Event::Pc(&raw, resolved.clone())])
            .expect("render");
        human.finish(&mut out).expect("finish");
        assert_eq!(
            String::from_utf8_lossy(&out),
            "f\\u{1b}]0;title\\u{7} at /src/\\u{1b}[2J/a.c:3:1\n",
            "full_paths {full_paths}"
        );
    }
    // A symbol-table name (no frames), at its start and inside it.
    for (rel, shown) in [(0x10, " (app+0x10)"), (0x14, "+0x4 (app+0x14)")] {
        let mut only_symbol = resolved.clone();
        if let Some(place) = &mut only_symbol.place {
            place.rel = rel;
        }
        only_symbol.lookup = Lookup::Code(Arc::new(CodeInfo {
            frames: Default::default(),
            symbol: Some(SymbolHit {
                name: "g\x1b[31m\u{9b}2J".into(),
                address: 0x10,
                size: 8,
                file: None,
            }),
            claimed: false,
            shown: Default::default(),
        }));
        let mut human = renderer(Format::Human, &RenderOptions::default());
        let mut out = Vec::new();
        human
            .line(&mut out, &line, &[Event::Pc(&raw, only_symbol)])
            .expect("render");
        human.finish(&mut out).expect("finish");
        assert_eq!(
            String::from_utf8_lossy(&out),
            format!("g\\u{{1b}}[31m\\u{{9b}}2J{shown}\n")
        );
    }
}

/// A `.debug_info` of 2,000,000 empty units (11 bytes each): the unit
/// index costs a few words per unit, not a parsed header and lookup state
/// per unit (which took over 500 MiB here).
#[test]
fn many_tiny_units_cost_memory_in_proportion() {
    let dir = tempfile::tempdir().expect("tempdir");
    let unit = [
        7u32.to_le_bytes().as_slice(),
        &4u16.to_le_bytes(),
        &0u32.to_le_bytes(),
        &[8],
    ]
    .concat();
    let units = write_file(dir.path(), "units.bin", &unit.repeat(2_000_000));
    let binary = dir.path().join("many_units");
    std::fs::copy(common::elf_root().join("bin/c_O2"), &binary).expect("copy fixture");
    let status = std::process::Command::new("/usr/lib/llvm-22/bin/llvm-objcopy")
        .arg(format!("--update-section=.debug_info={}", units.display()))
        .arg(&binary)
        .status()
        .expect("llvm-objcopy");
    assert!(status.success());
    let mut cmd = common::command();
    cmd.args(["lookup", "--file"]).arg(&binary).arg("0x1140");
    common::limit(&mut cmd, Some(60), Some(320 * MIB));
    let out = cmd.output().expect("run symfilter");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "0x1140 outer ??:0\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
