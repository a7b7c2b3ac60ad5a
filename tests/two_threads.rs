//! The filter on two threads (src/pipeline/) must not change a byte of the
//! output, nor the diagnostics. A log of 2 MiB is made
//! from the differential suite's logs, so the answer for it is known from
//! LLVM 22 itself: each log's committed `llvm-symbolizer --filter-markup`
//! output, with the `[[[reset]]]` that a reset after earlier context
//! prints in between.

use crate::common;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/llvm-diff")
}

/// The concatenated log in `tmp`, its expected LLVM output, and where its
/// second copy of the suite starts in the log, with the output expected
/// from there.
fn big_log(tmp: &Path) -> (PathBuf, Vec<u8>, (u64, Vec<u8>)) {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("app_") && name.ends_with(".log")
        })
        .collect();
    names.sort();
    assert!(names.len() >= 7, "the app logs of the suite");
    let (mut log, mut expected, mut second) = (Vec::new(), Vec::new(), (0, 0));
    let mut context_before = false;
    for copy in 0..70 {
        for (i, name) in names.iter().enumerate() {
            let text = std::fs::read(name).unwrap();
            assert!(text.starts_with(b"{{{reset}}}\n") && text.ends_with(b"\n"));
            if copy == 1 && i == 0 {
                second.0 = log.len() as u64;
            }
            log.extend_from_slice(&text);
            if context_before {
                expected.extend_from_slice(b"[[[reset]]]\n");
            }
            if copy == 1 && i == 0 {
                // A reset with nothing before it prints nothing.
                second.1 = expected.len();
            }
            expected.extend(std::fs::read(name.with_extension("llvm.out")).unwrap());
            context_before = true;
        }
    }
    assert!(log.len() > 2 << 20, "large enough for two threads");
    let path = tmp.join("big.log");
    std::fs::write(&path, &log).unwrap();
    let from_second = expected[second.1..].to_vec();
    (path, expected, (second.0, from_second))
}

fn symfilter(args: &[&str], stdin: Stdio) -> Output {
    let out = common::command()
        .current_dir(dir())
        .env_remove("DEBUGINFOD_URLS")
        .env("SYMFILTER_PIPELINE_STATS", "1")
        .args([
            "--color=never",
            "--no-debuginfod",
            "--build-id-dir",
            "../debug",
        ])
        .args(args)
        .stdin(stdin)
        .output()
        .unwrap();
    assert!(out.status.success(), "symfilter {args:?} failed");
    out
}

/// The diagnostic lines on stderr, without the statistics.
fn diagnostics(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| !l.contains("two threads:"))
        .map(str::to_owned)
        .collect()
}

/// Batches the printing thread printed and lookups it made, from its
/// statistics line (none when the filter ran on one thread).
fn two_threads(out: &Output) -> Option<(u64, u64)> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr.lines().find(|l| l.contains("two threads:"))?;
    let mut numbers = line.split(' ').filter_map(|w| w.parse::<u64>().ok()).fuse();
    Some((numbers.next()?, numbers.next()?))
}

#[test]
fn output_on_two_threads_is_llvms_for_files_pipes_and_standard_input() {
    let tmp = tempfile::tempdir().unwrap();
    let (log, expected, second) = big_log(tmp.path());
    let log_arg = log.to_str().unwrap();

    let named = symfilter(&["--format=llvm", log_arg], Stdio::null());
    assert!(
        named.stdout == expected,
        "named file: output differs from LLVM's"
    );
    let (batches, lookups) = two_threads(&named).expect("two threads ran");
    assert!(batches > 10, "{batches} batches");
    assert!(lookups > 0, "the printing thread made no lookups");

    let file = std::fs::File::open(&log).unwrap();
    let redirected = symfilter(&["--format=llvm"], Stdio::from(file));
    assert!(
        redirected.stdout == expected,
        "standard input: output differs"
    );
    assert!(two_threads(&redirected).is_some());

    // Standard input already read from: the filter starts where it is.
    let mut file = std::fs::File::open(&log).unwrap();
    file.seek(SeekFrom::Start(second.0)).unwrap();
    let rest = symfilter(&["--format=llvm", "-"], Stdio::from(file));
    assert!(
        rest.stdout == second.1,
        "standard input read from: output differs"
    );

    // A pipe, written to in pieces.
    let mut child = common::command()
        .current_dir(dir())
        .env_remove("DEBUGINFOD_URLS")
        .env("SYMFILTER_PIPELINE_STATS", "1")
        .args(["--no-debuginfod", "--build-id-dir", "../debug"])
        .arg("--format=llvm")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let bytes = std::fs::read(&log).unwrap();
    let writer = std::thread::spawn(move || {
        for piece in bytes.chunks(100_003) {
            stdin.write_all(piece).unwrap();
        }
    });
    let piped = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(piped.status.success());
    assert!(piped.stdout == expected, "pipe: output differs");
    assert!(two_threads(&piped).is_some(), "a pipe runs on two threads");
}

/// The human and JSON formats, and the llvm one, on one thread and on
/// two: the same output and the same diagnostics (where they fall among
/// the output is tested in `filter_render`, without background searches,
/// whose timing moves it). The log
/// adds a module whose file is missing, an address outside any mmap and
/// malformed elements to every copy of the suite.
#[test]
fn two_threads_change_nothing_in_any_format() {
    let tmp = tempfile::tempdir().unwrap();
    let (log, _, _) = big_log(tmp.path());
    let mut text = std::fs::read(&log).unwrap();
    let missing = std::fs::read(dir().join("shared_and_missing.log")).unwrap();
    let mut with_problems = Vec::new();
    for piece in text
        .split_inclusive(|&b| b == b'\n')
        .collect::<Vec<_>>()
        .chunks(4000)
    {
        with_problems.extend(piece.concat());
        with_problems.extend_from_slice(&missing);
        with_problems.extend_from_slice(b"bad {{{pc:nothex}}} {{{bt:x:0x1}}}\n");
    }
    text.clear();
    let path = tmp.path().join("problems.log");
    std::fs::write(&path, &with_problems).unwrap();
    let path = path.to_str().unwrap();
    for format in ["--format=llvm", "--format=human", "--format=json"] {
        let two = symfilter(&[format, path], Stdio::null());
        let one = symfilter(&[format, "--one-thread", path], Stdio::null());
        assert!(two_threads(&two).is_some(), "{format}: two threads ran");
        assert_eq!(two_threads(&one), None, "{format}: one thread");
        assert!(two.stdout == one.stdout, "{format}: output differs");
        let (a, b) = (diagnostics(&two), diagnostics(&one));
        assert_eq!(a, b, "{format}: diagnostics differ");
        assert!(a.len() > 100, "{format}: {} diagnostics", a.len());
        let missing = a
            .iter()
            .filter(|l| l.contains("no symbols for module"))
            .count();
        assert_eq!(missing, 1, "{format}: the missing module reported once");
    }
}

#[test]
fn small_files_are_filtered_on_one_thread() {
    let log = dir().join("app_c_O2.log");
    let out = symfilter(&["--format=llvm", log.to_str().unwrap()], Stdio::null());
    assert_eq!(two_threads(&out), None);
    assert!(out.stdout == std::fs::read(dir().join("app_c_O2.llvm.out")).unwrap());
}

/// A reader that stops reading early (`symfilter log | head -c 1000`): the
/// run ends quietly, with success, on either thread count.
#[test]
fn a_closed_output_ends_the_run_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let (log, expected, _) = big_log(tmp.path());
    for threads in [&[][..], &["--one-thread"][..]] {
        let mut child = common::command()
            .current_dir(dir())
            .env_remove("DEBUGINFOD_URLS")
            .args(["--no-debuginfod", "--build-id-dir", "../debug"])
            .arg("--format=llvm")
            .args(threads)
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut head = vec![0; 1000];
        child.stdout.take().unwrap().read_exact(&mut head).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{threads:?}: {out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{threads:?}");
        assert!(head == expected[..1000]);
    }
}

/// `--demux`, where the filter makes a printer per process: on two threads
/// as on one. Two of the suite's logs, their lines interleaved under
/// bracketed pids, again and again, past the 1 MiB under which a file is
/// filtered on one thread. (From a file: on a pipe the human format writes
/// held backtraces out whenever a read would wait, which depends on when
/// the bytes come.)
#[test]
fn demuxed_processes_print_the_same_on_two_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let read = |name: &str| std::fs::read_to_string(dir().join(name)).unwrap();
    let (a, b) = (read("app_c_O0.log"), read("app_cpp_O2.log"));
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let mut log = String::new();
    let mut round = 0;
    while log.len() < 3 << 19 {
        for i in 0..a.len().max(b.len()) {
            if let Some(l) = a.get(i) {
                log.push_str(&format!("[{}] {l}\n", 100 + round % 3));
            }
            if let Some(l) = b.get(i) {
                log.push_str(&format!("[{}] {l}\n", 200 + round % 5));
            }
        }
        round += 1;
    }
    let path = tmp.path().join("demux.log");
    std::fs::write(&path, &log).unwrap();
    let path = path.to_str().unwrap();
    for format in ["--format=llvm", "--format=human", "--format=json"] {
        let two = symfilter(&[format, "--demux=bracket", path], Stdio::null());
        let one = symfilter(
            &[format, "--demux=bracket", "--one-thread", path],
            Stdio::null(),
        );
        assert!(two_threads(&two).is_some(), "{format}: two threads ran");
        assert!(one.stdout.len() > 100_000, "{format}");
        assert!(two.stdout == one.stdout, "{format}: output differs");
        assert_eq!(diagnostics(&two), diagnostics(&one), "{format}");
    }
}
