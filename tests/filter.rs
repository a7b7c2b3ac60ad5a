//! Integration tests of the filter: golden logs through the real binary,
//! pass-through properties through the library, and process behaviour
//! (pipes, exit codes, live output).

use crate::common;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use proptest::prelude::*;
use std::sync::Arc;
use symfilter::filter::{Dialect, Filter, Options};
use symfilter::render::Format;
use symfilter::report::Silent;
use symfilter::symbols::{Symbolizer, SymbolizerConfig};

fn logs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/logs")
}

/// Run the binary on a golden log the way testdata/logs/regen.sh does.
fn run_golden(log: &str, args: &[&str]) -> (Vec<u8>, Vec<u8>) {
    let empty = tempfile::tempdir().expect("tempdir");
    let out = common::command()
        .current_dir(logs_dir())
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("DEBUGINFOD_URLS")
        .arg("--build-id-dir")
        .arg(empty.path())
        .args(["--no-debuginfod", "--offline", "--no-default-paths"])
        .args(args)
        .arg(log)
        .output()
        .expect("run symfilter");
    assert!(out.status.success(), "{log}: exit {:?}", out.status);
    (out.stdout, out.stderr)
}

fn golden_logs() -> Vec<String> {
    let mut logs: Vec<String> = std::fs::read_dir(logs_dir())
        .expect("testdata/logs")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect();
    logs.sort();
    assert!(logs.len() >= 6, "golden logs missing");
    logs
}

fn expect_file(log: &str, ext: &str) -> Vec<u8> {
    let name = format!("{}.{ext}", log.trim_end_matches(".log"));
    std::fs::read(logs_dir().join(&name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn golden_llvm_matches_llvm_symbolizer() {
    for log in golden_logs() {
        let (out, _) = run_golden(&log, &["--format=llvm", "--color=never"]);
        let want = expect_file(&log, "llvm");
        assert!(
            out == want,
            "{log} (llvm):\n--- got\n{}\n--- want\n{}",
            show(&out),
            show(&want)
        );
        let (out, _) = run_golden(&log, &["--format=llvm", "--color"]);
        let want = expect_file(&log, "llvm-color");
        assert!(
            out == want,
            "{log} (llvm, colour):\n--- got\n{:?}\n--- want\n{:?}",
            show(&out),
            show(&want)
        );
    }
}

#[test]
fn golden_human_and_json() {
    for log in golden_logs() {
        let (out, err) = run_golden(&log, &["--format=human", "--color=never"]);
        let want = expect_file(&log, "human");
        assert!(
            out == want,
            "{log} (human):\n--- got\n{}\n--- want\n{}",
            show(&out),
            show(&want)
        );
        let want = expect_file(&log, "stderr");
        assert!(
            err == want,
            "{log} (stderr):\n--- got\n{}\n--- want\n{}",
            show(&err),
            show(&want)
        );
        let (out, _) = run_golden(&log, &["--format=json"]);
        let want = expect_file(&log, "json");
        assert!(
            out == want,
            "{log} (json):\n--- got\n{}\n--- want\n{}",
            show(&out),
            show(&want)
        );
        // Every JSON line parses.
        for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let v: serde_json::Value = serde_json::from_slice(line).expect("valid JSON");
            assert!(v.get("spans").is_some());
        }
    }
}

/// A reader that hands out at most `step` bytes per read.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn filter_bytes(input: &[u8], format: Format, step: usize, max_line: usize) -> (Vec<u8>, u64) {
    let opts = Options {
        format,
        dialect: Dialect::usual_for(format),
        max_line,
        max_group_bytes: 256,
        max_group_lines: 8,
        ..Options::default()
    };
    let mut f = Filter::new(
        opts,
        Symbolizer::new(SymbolizerConfig::default()),
        Arc::new(Silent),
    );
    let mut out = Vec::new();
    f.run("<test>", Trickle { data: input, step }, &mut out)
        .expect("run");
    f.finish(&mut out).expect("finish");
    (out, f.diagnostics())
}

fn without_markup() -> impl Strategy<Value = Vec<u8>> {
    // Bytes biased towards the interesting ones, with no "{{{" and no ESC.
    let byte = prop_oneof![
        4 => any::<u8>(),
        2 => Just(b'\n'),
        1 => Just(b'\r'),
        1 => Just(0u8),
        2 => Just(b'{'),
        2 => Just(b'}'),
        1 => Just(b':'),
    ];
    proptest::collection::vec(byte, 0..600).prop_map(|mut v| {
        v.retain(|&b| b != 0x1b);
        while let Some(i) = v.windows(3).position(|w| w == b"{{{") {
            v[i + 2] = b'x';
        }
        v
    })
}

fn with_markup() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"{{{".to_vec()),
        Just(b"}}}".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\x1b[31m".to_vec()),
        Just(b"\x1b[0m".to_vec()),
        Just(b"{{{module:0:app:elf:abcd}}}".to_vec()),
        Just(b"{{{mmap:0x1000:0x1000:load:0:rx:0x0}}}".to_vec()),
        Just(b"{{{bt:0:0x1010}}}".to_vec()),
        Just(b"{{{pc:0x1010}}}".to_vec()),
        Just(b"{{{data:0x1010}}}".to_vec()),
        Just(b"{{{reset}}}".to_vec()),
        Just(b"{{{hexdict:\n RIP: 0x1010\n".to_vec()),
        Just(b"{{{symbol:_Z1fv}}}".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..20),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Input without "{{{" and ESC comes out byte-identical, however it is
    /// split into reads, including lines longer than the line limit.
    #[test]
    fn plain_text_passes_through(input in without_markup(), step in 1usize..80) {
        let (out, diags) = filter_bytes(&input, Format::Human, step, 64);
        prop_assert_eq!(&out, &input);
        prop_assert_eq!(diags, 0);
        let (out, _) = filter_bytes(&input, Format::Human, 4096, 1 << 20);
        prop_assert_eq!(&out, &input);
        // LLVM mode adds the newline a last line lacks, and nothing else.
        let (out, _) = filter_bytes(&input, Format::Llvm, step, 1 << 20);
        let mut want = input.clone();
        if !want.is_empty() && want.last() != Some(&b'\n') {
            want.push(b'\n');
        }
        prop_assert_eq!(out, want);
    }

    /// Output does not depend on how the input is split into reads.
    #[test]
    fn chunking_does_not_matter(input in with_markup(), step in 1usize..50) {
        for format in [Format::Human, Format::Llvm, Format::Json] {
            let (whole, d1) = filter_bytes(&input, format, 1 << 20, 1 << 20);
            let (split, d2) = filter_bytes(&input, format, step, 1 << 20);
            prop_assert_eq!(&whole, &split);
            prop_assert_eq!(d1, d2);
        }
    }
}

#[test]
fn odd_bytes_pass_through_binary() {
    let mut input = Vec::new();
    input.extend_from_slice(b"nul\0byte\r\nlone\rcr\n\xff\xfe invalid utf-8\n");
    input.extend_from_slice(&vec![b'x'; 300_000]);
    input.extend_from_slice(b"\n{{ }} {{x}} }}}\nlast line without newline");
    let mut child = common::command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let data = input.clone();
    let writer = std::thread::spawn(move || stdin.write_all(&data));
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("join").expect("write");
    assert!(out.status.success());
    assert!(out.stdout == input, "bytes changed");
    assert!(out.stderr.is_empty(), "{}", show(&out.stderr));
}

#[test]
fn broken_pipe_is_quiet() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("big.log");
    let line = b"some plain log text that is not markup at all\n";
    let mut data = Vec::new();
    while data.len() < 8 << 20 {
        data.extend_from_slice(line);
    }
    std::fs::write(&path, &data).expect("write");
    let mut child = common::command()
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).expect("read");
    drop(stdout);
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "exit {:?}", out.status);
    assert!(out.stderr.is_empty(), "{}", show(&out.stderr));
}

#[test]
fn live_output_before_eof() {
    let mut child = common::command()
        .args(["--color=never"])
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
        .write_all(b"first line\nfn {{{symbol:_ZN7Mangled4NameEv}}}\n")
        .expect("write");
    stdin.flush().expect("flush");
    let mut got = Vec::new();
    while got != b"first line\nfn Mangled::Name()\n" {
        got = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("no live output; got {:?}", show(&got)));
    }
    drop(stdin);
    assert!(child.wait().expect("wait").success());
}

#[test]
fn unreadable_file_exit_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = dir.path().join("good.log");
    std::fs::write(&good, b"good {{{symbol:main}}}\n").expect("write");
    let missing = dir.path().join("missing.log");
    let out = common::command()
        .arg(&missing)
        .arg(&good)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(out.stdout, b"good main\n");
    let err = show(&out.stderr);
    assert!(
        err.starts_with("symfilter: ") && err.contains("missing.log"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn stdin_and_dash() {
    let mut child = common::command()
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"x {{{pc:0x10}}}\n")
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success());
    assert_eq!(out.stdout, b"x {{{pc:0x10}}}\n");
    assert_eq!(
        show(&out.stderr),
        "symfilter: <stdin>:1:9: no mmap covers address 0x10\n"
    );
}

#[test]
fn quiet_silences_diagnostics() {
    let mut child = common::command()
        .arg("-q")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"x {{{pc:zz}}}\n")
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success());
    assert_eq!(out.stdout, b"x {{{pc:zz}}}\n");
    assert!(out.stderr.is_empty());
}

fn run_env(args: &[&str], env: &[(&str, &str)], input: &[u8]) -> Vec<u8> {
    let mut cmd = common::command();
    cmd.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success());
    out.stdout
}

#[test]
fn color_choice() {
    let input = b"\x1b[31mred\x1b[0m {{{symbol:main}}}\n";
    let plain = b"red main\n".to_vec();
    let coloured = b"\x1b[31mred\x1b[0m \x1b[1mmain\x1b[0m\n".to_vec();
    // Not a terminal: off.
    assert_eq!(run_env(&[], &[], input), plain);
    assert_eq!(run_env(&["--color=never"], &[], input), plain);
    assert_eq!(run_env(&["--color=always"], &[], input), coloured);
    assert_eq!(run_env(&["--color"], &[], input), coloured);
    assert_eq!(run_env(&[], &[("CLICOLOR_FORCE", "1")], input), coloured);
    assert_eq!(run_env(&[], &[("CLICOLOR_FORCE", "0")], input), plain);
    assert_eq!(
        run_env(&[], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")], input),
        plain
    );
    // An explicit choice beats the environment.
    assert_eq!(
        run_env(&["--color=always"], &[("NO_COLOR", "1")], input),
        coloured
    );
}

#[test]
fn help_and_version() {
    let out = common::command().arg("--help").output().expect("run");
    assert!(out.status.success());
    let help = show(&out.stdout);
    for opt in [
        "--format",
        "--color",
        "--keep-context",
        "--quiet",
        "--strip-path-prefix",
        "--explain",
    ] {
        assert!(help.contains(opt), "--help lacks {opt}");
    }
    assert!(
        !help.contains("\n      --filter-markup"),
        "hidden option shown"
    );
    let out = common::command().arg("--version").output().expect("run");
    assert!(out.status.success());
    assert_eq!(
        show(&out.stdout),
        format!("symfilter {}\n", env!("CARGO_PKG_VERSION"))
    );
    // Accepted for compatibility.
    assert!(run_env(&["--filter-markup"], &[], b"a\n") == b"a\n");
}

#[test]
fn keep_context_keeps_raw_lines() {
    let input = b"{{{module:0:app:elf:abcd}}}\n{{{mmap:0x1000:0x1000:load:0:rx:0x0}}}\nx\n";
    assert_eq!(
        show(&run_env(&["--keep-context"], &[], input)),
        "{{{module:0:app:elf:abcd}}}\n{{{mmap:0x1000:0x1000:load:0:rx:0x0}}}\n\
         [module #0 \"app\" build-id abcd: 0x1000-0x1fff rx]\nx\n"
    );
}

/// Real symbols: the shared fixture logs through the human and json formats
/// (expected files in testdata/logs/symbolized, written by regen.sh).
#[test]
fn golden_symbolized_human_and_json() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let expected = logs_dir().join("symbolized");
    let mut names: Vec<String> = std::fs::read_dir(&expected)
        .expect("symbolized/")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".human").map(str::to_string))
        .collect();
    names.sort();
    assert!(names.len() >= 5, "symbolized goldens missing");
    for name in names {
        let log = format!("{name}.log");
        let dir = ["llvm-diff", "sanitizers"]
            .iter()
            .map(|d| root.join(d))
            .find(|d| d.join(&log).exists())
            .unwrap_or_else(|| panic!("no fixture log {log}"));
        for (format, ext) in [("human", "human"), ("json", "json")] {
            let out = common::command()
                .current_dir(&dir)
                .env_remove("DEBUGINFOD_URLS")
                .args([
                    "--build-id-dir",
                    "../debug",
                    "--no-debuginfod",
                    "--offline",
                    "--no-default-paths",
                ])
                .arg(format!("--format={format}"))
                .arg("--color=never")
                .arg(&log)
                .output()
                .expect("run symfilter");
            assert!(out.status.success());
            let want = std::fs::read(expected.join(format!("{name}.{ext}"))).expect("expected");
            assert!(
                out.stdout == want,
                "{name} ({format}):\n--- got\n{}\n--- want\n{}",
                show(&out.stdout),
                show(&want)
            );
            if format == "human" {
                let want =
                    std::fs::read(expected.join(format!("{name}.stderr"))).expect("expected");
                assert!(out.stderr == want, "{name} stderr:\n{}", show(&out.stderr));
            }
        }
    }
}

/// Output as handed over, with the length at each flush.
#[derive(Default)]
struct Flushes {
    data: Vec<u8>,
    at: Vec<usize>,
}

impl Write for Flushes {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.data.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.at.push(self.data.len());
        Ok(())
    }
}

/// What earlier lines produced is written out before a module's symbols
/// are first looked for (a search may take long), once per module: here
/// with the JSON printer, which otherwise holds its output, and an input
/// that never blocks (no writing out at reads). No search runs in the
/// background: one finished in time would make the opening quick, and
/// the flush needless.
#[test]
fn output_is_flushed_before_a_module_is_first_opened() {
    let log = "first\n\
               {{{module:0:app:elf:abcd}}}\n\
               {{{mmap:0x1000:0x1000:load:0:rx:0x0}}}\n\
               {{{pc:0x1010}}}\n\
               between\n\
               {{{bt:0:0x1020}}}\n\
               {{{data:0x1030}}}\n\
               {{{module:1:lib:elf:ef01}}}\n\
               {{{mmap:0x3000:0x1000:load:1:rx:0x0}}}\n\
               {{{pc:0x3010}}}\n";
    let opts = Options {
        format: Format::Json,
        dialect: Dialect::usual_for(Format::Json),
        ..Options::default()
    };
    let mut symbolizer = Symbolizer::new(SymbolizerConfig::default());
    symbolizer.search_in_background(false);
    let mut f = Filter::new(opts, symbolizer, Arc::new(Silent));
    f.set_input_never_blocks(true);
    let mut out = Flushes::default();
    f.run("<test>", log.as_bytes(), &mut out).expect("run");
    f.finish(&mut out).expect("finish");
    let object_of = |line: u64| {
        let at = format!("{{\"line\":{line},");
        let text = show(&out.data);
        text.find(&at)
            .unwrap_or_else(|| panic!("no line {line} in {text}"))
    };
    // Before line 4 (module 0 first needed) and line 10 (module 1), and at
    // no other line's start.
    let starts: Vec<usize> = (1..=10).map(object_of).collect();
    let flushed: Vec<usize> = (1..=10)
        .filter(|&line| out.at.contains(&starts[line as usize - 1]) && line > 1)
        .map(|line| line as usize)
        .collect();
    assert_eq!(
        flushed,
        [4, 10],
        "flushes at {:?} of {}",
        out.at,
        show(&out.data)
    );
}

/// What the binary run with `args` writes to a file standing for its
/// standard output (and its standard error too, when `merged`), given
/// `log` through a pipe (two threads) or as a small file (one thread).
fn output_of(args: &[&str], log: &str, pipe: bool, merged: bool) -> String {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("out");
    let out = std::fs::File::create(&file).expect("output file");
    let err: Stdio = if merged {
        out.try_clone().expect("clone").into()
    } else {
        Stdio::null()
    };
    let mut cmd = common::command();
    cmd.args(args).stdout(out).stderr(err);
    let status = if pipe {
        let mut child = cmd.stdin(Stdio::piped()).spawn().expect("spawn");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(log.as_bytes())
            .expect("write input");
        child.wait().expect("wait")
    } else {
        let input = tmp.path().join("in.log");
        std::fs::write(&input, log).expect("write log");
        let stdin = std::fs::File::open(&input).expect("input");
        cmd.stdin(stdin).status().expect("run")
    };
    assert!(status.success(), "{args:?}: {status}");
    std::fs::read_to_string(&file).expect("read output")
}

/// With standard output and standard error in one file (`2>&1`), each
/// diagnostic stands on a line of its own: no output line is split by one,
/// in any format, whether the filter runs on one thread (a small file) or
/// two (a pipe). The llvm format holds a module's line until the next line
/// ends it, and a module not found is reported before that. (Where a
/// diagnostic falls among whole lines depends on when a background search
/// ends, so only the lines themselves are compared.)
#[test]
fn diagnostics_never_split_an_output_line() {
    let log = "first\n\
               {{{module:0:notfound:elf:abad1d}}}\n\
               {{{mmap:0x1000:0x1000:load:0:rx:0}}}\n\
               {{{pc:0x1234}}}\n\
               between\n\
               {{{module:1:other:elf:ef01}}}\n\
               {{{mmap:0x3000:0x1000:load:1:r:0}}}\n\
               {{{bt:0:0x3010}}}\n";
    for format in ["llvm", "human", "json"] {
        for pipe in [false, true] {
            let args = ["--no-default-paths", "--color=never", "--format", format];
            let merged = output_of(&args, log, pipe, true);
            let alone = output_of(&args, log, pipe, false);
            let (diagnostics, output): (Vec<&str>, Vec<&str>) = merged
                .lines()
                .partition(|l| l.starts_with("symfilter: <stdin>:"));
            assert_eq!(
                output.join("\n") + "\n",
                alone,
                "{format}, pipe {pipe}:\n{merged}"
            );
            assert_eq!(diagnostics.len(), 2, "{format}, pipe {pipe}:\n{merged}");
        }
    }
}

/// A place an option names that cannot be looked in (a mistyped path, a
/// file where a folder is wanted) gets one warning line at the start; the
/// filter goes on as it would without it, and `-q` silences the warning.
#[test]
fn places_that_cannot_be_looked_in_are_named_once() {
    let log = b"{{{module:0:app:elf:abad1d}}}\n\
                {{{mmap:0x1000:0x1000:load:0:rx:0}}}\n\
                {{{pc:0x1234}}}\n";
    let file = tempfile::NamedTempFile::new().expect("temporary file");
    let file = file.path().to_str().expect("UTF-8 path");
    let missing = "/nonexistent/symfilter-test-place";
    let args = [
        "--format=llvm",
        "--no-default-paths",
        "--build-id-dir",
        missing,
        "--breakpad-store",
        file,
        "--symbol-path",
        missing,
        "--gsym",
        file,
    ];
    let (out, err, code) = common::symfilter(&args, log);
    let (plain, _, _) = common::symfilter(&["--format=llvm", "--no-default-paths"], log);
    assert_eq!((out.as_str(), code), (plain.as_str(), 0));
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    let not_found = std::io::Error::from_raw_os_error(libc::ENOENT).to_string();
    assert_eq!(
        warnings,
        [
            format!("symfilter: warning: --build-id-dir {missing}: {not_found}"),
            format!("symfilter: warning: --breakpad-store {file}: not a directory"),
            format!("symfilter: warning: --symbol-path {missing}: {not_found}"),
        ],
        "{err}"
    );
    let mut quiet = vec!["-q"];
    quiet.extend_from_slice(&args);
    let (out, err, code) = common::symfilter(&quiet, log);
    assert_eq!((out.as_str(), err.as_str(), code), (plain.as_str(), "", 0));
}

/// In colour, with both streams on one terminal or file: when a diagnostic
/// is written, the colours of the llvm format's last line have been reset
/// (the module line held until the next line ends it keeps its own
/// escapes; those ending the line before go out with that line).
#[test]
fn diagnostics_are_not_written_in_a_module_lines_colours() {
    let log = "first\n\
               {{{module:0:a:elf:abad1d}}}\n\
               {{{mmap:0x1000:0x1000:load:0:rx:0}}}\n\
               {{{module:1:b:elf:ef01}}}\n\
               {{{mmap:0x3000:0x1000:load:1:r:0}}}\n\
               {{{pc:0x3010}}}\n";
    let args = ["--no-default-paths", "--format=llvm", "--color=always"];
    let merged = output_of(&args, log, true, true);
    let at = merged.find("symfilter: ").expect("a diagnostic");
    let last_escape = merged[..at].rfind('\x1b').expect("colours before it");
    assert!(merged[last_escape..at].starts_with("\x1b[0m"), "{merged:?}");
}
