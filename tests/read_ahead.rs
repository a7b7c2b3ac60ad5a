//! The read-ahead thread (src/readahead/) must not change a byte of the
//! output. A log of 2 MiB is made from the differential suite's logs, so
//! the answer for it is known from LLVM 22 itself: each log's committed
//! `llvm-symbolizer --filter-markup` output, with the `[[[reset]]]` that a
//! reset after earlier context prints in between.

use crate::common;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/llvm-diff")
}

/// Plain text the writing filter is held up in: its output fills the pipe
/// a [`slowly_read`] run does not read yet, while the read-ahead, which
/// prints nothing, goes on to the elements after it and claims their
/// address regions first (a fast writer may otherwise meet every region
/// first, and then nothing is handed over).
fn pause() -> Vec<u8> {
    let line = b"plain text before the next log, passed through as it is\n";
    line.repeat((512 << 10) / line.len())
}

/// The concatenated log in `tmp`, its expected LLVM output, and where its
/// second copy of the suite starts in the log, with the output expected
/// from there. A [`pause`] comes before the first and the second copy.
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
    let pause = pause();
    let (mut log, mut expected, mut second) = (Vec::new(), Vec::new(), (0, 0));
    let mut context_before = false;
    for copy in 0..70 {
        for (i, name) in names.iter().enumerate() {
            let text = std::fs::read(name).unwrap();
            assert!(text.starts_with(b"{{{reset}}}\n") && text.ends_with(b"\n"));
            if copy < 2 && i == 0 {
                second.0 = log.len() as u64;
                log.extend_from_slice(&pause);
                expected.extend_from_slice(&pause);
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
    assert!(log.len() > 2 << 20, "large enough for a read-ahead");
    let path = tmp.join("big.log");
    std::fs::write(&path, &log).unwrap();
    let mut from_second = pause;
    from_second.extend_from_slice(&expected[second.1..]);
    (path, expected, (second.0, from_second))
}

fn symfilter(args: &[&str], stdin: Stdio) -> Output {
    run(args, stdin, false)
}

/// [`symfilter`] with its output left unread for a while at first, so
/// that the writing filter waits in the log's first [`pause`].
fn slowly_read(args: &[&str], stdin: Stdio) -> Output {
    run(args, stdin, true)
}

fn run(args: &[&str], stdin: Stdio, slowly: bool) -> Output {
    let child = common::command()
        .current_dir(dir())
        .env_remove("DEBUGINFOD_URLS")
        .env("SYMFILTER_READ_AHEAD_STATS", "1")
        .args([
            "--color=never",
            "--no-debuginfod",
            "--build-id-dir",
            "../debug",
        ])
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if slowly {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "symfilter {args:?} failed");
    out
}

/// The diagnostic lines on stderr, without the read-ahead's statistics.
fn diagnostics(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| !l.contains("read-ahead:"))
        .map(str::to_owned)
        .collect()
}

/// Answers the read-ahead handed over, from its statistics line (none when
/// it did not run).
fn handed_over(out: &Output) -> Option<u64> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr.lines().find(|l| l.contains("read-ahead:"))?;
    let n = line.split("read-ahead: ").nth(1)?.split(' ').next()?;
    n.parse().ok()
}

#[test]
fn read_ahead_output_is_llvms_for_a_named_file_and_for_standard_input() {
    let tmp = tempfile::tempdir().unwrap();
    let (log, expected, second) = big_log(tmp.path());
    let log_arg = log.to_str().unwrap();

    let named = slowly_read(&["--format=llvm", log_arg], Stdio::null());
    assert!(
        named.stdout == expected,
        "named file: output differs from LLVM's"
    );
    let handed = handed_over(&named).expect("the read-ahead ran");
    assert!(handed > 0, "the read-ahead handed over no answers");

    let file = std::fs::File::open(&log).unwrap();
    let piped = slowly_read(&["--format=llvm"], Stdio::from(file));
    assert!(piped.stdout == expected, "standard input: output differs");
    assert!(handed_over(&piped).is_some_and(|n| n > 0));

    // Standard input already read from: both threads start where it is.
    let mut file = std::fs::File::open(&log).unwrap();
    file.seek(SeekFrom::Start(second.0)).unwrap();
    let rest = slowly_read(&["--format=llvm", "-"], Stdio::from(file));
    assert!(handed_over(&rest).is_some_and(|n| n > 0));
    assert!(
        rest.stdout == second.1,
        "standard input read from: output differs"
    );
}

#[test]
fn read_ahead_changes_nothing_in_the_human_and_json_formats() {
    let tmp = tempfile::tempdir().unwrap();
    let (log, _, _) = big_log(tmp.path());
    let log_arg = log.to_str().unwrap();
    for format in ["--format=human", "--format=json"] {
        let ahead = slowly_read(&[format, log_arg], Stdio::null());
        let alone = symfilter(&[format, "--no-read-ahead", log_arg], Stdio::null());
        assert!(handed_over(&ahead).is_some_and(|n| n > 0), "{format}");
        assert_eq!(handed_over(&alone), None);
        assert!(ahead.stdout == alone.stdout, "{format}: output differs");
        // Diagnostics are the writer's alone: the same lines either way.
        assert_eq!(diagnostics(&ahead), diagnostics(&alone));
    }
}

/// The read-ahead's count of forgotten memo tables it freed.
fn freed_tables(out: &Output) -> Option<u64> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr.lines().find(|l| l.contains("read-ahead:"))?;
    let n = line.split(", ").last()?.split(' ').next()?;
    n.parse().ok()
}

/// More distinct addresses than a memo keeps (16,384 answers per module),
/// after a [`pause`] in which the read-ahead claims their regions, then more
/// plain text than the read-ahead's lead (8 MiB). The writer, its output
/// not read at first, takes from the read-ahead what it handed over (all,
/// or the 65,536 it may hand over untaken) and computes the rest. Its memo
/// keeps only what it computed (and the answer it first waited for in each
/// batch of 64 handed over): no more forgotten tables than those can fill
/// are left for the read-ahead to free. The output is the writer's alone.
#[test]
fn the_writers_memo_keeps_only_what_it_was_not_handed() {
    let tmp = tempfile::tempdir().unwrap();
    let context = std::fs::read_to_string(dir().join("app_c_O0.log")).unwrap();
    let module = context.lines().nth(1).unwrap();
    let mut log = format!("{{{{{{reset}}}}}}\n{module}\n");
    // One megabyte of code (beyond the file's own, answers of no frames).
    log.push_str("{{{mmap:0x555555555000:0x100000:load:0:rx:0x1000}}}\n");
    log.push_str(std::str::from_utf8(&pause()).unwrap());
    for i in 0..100_000u64 {
        log.push_str(&format!(
            "#{i} {{{{{{pc:{:#x}}}}}}}\n",
            0x5555_5555_5000 + i * 7
        ));
    }
    let line = "plain text after the addresses, longer than the read-ahead's lead\n";
    log.push_str(&line.repeat((9 << 20) / line.len()));
    let path = tmp.path().join("distinct.log");
    std::fs::write(&path, &log).unwrap();
    let path = path.to_str().unwrap();
    let ahead = slowly_read(&["--format=human", path], Stdio::null());
    let alone = symfilter(&["--format=human", "--no-read-ahead", path], Stdio::null());
    let stats = String::from_utf8_lossy(&ahead.stderr);
    let handed = handed_over(&ahead)
        .expect("the read-ahead ran")
        .min(100_000);
    assert!(handed >= 1 << 16, "{stats}");
    let kept = (100_000 - handed) + handed.div_ceil(64);
    let freed = freed_tables(&ahead).expect("the read-ahead ran");
    assert!(freed <= kept.div_ceil(16_384), "{stats}");
    assert!(ahead.stdout == alone.stdout, "output differs");
    assert_eq!(diagnostics(&ahead), diagnostics(&alone));
}

#[test]
fn small_inputs_are_filtered_without_a_read_ahead() {
    let log = dir().join("app_c_O2.log");
    let out = symfilter(&["--format=llvm", log.to_str().unwrap()], Stdio::null());
    assert_eq!(handed_over(&out), None);
    assert!(out.stdout == std::fs::read(dir().join("app_c_O2.llvm.out")).unwrap());
}

/// A log with a module whose file is missing, addresses outside any mmap and
/// malformed elements, repeated past the read-ahead threshold: the same
/// output and the same diagnostics, at the same lines, with and without the
/// read-ahead (diagnostics are the writer's alone; the missing module is
/// reported once).
#[test]
fn diagnostics_are_the_writers_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let one = std::fs::read(dir().join("shared_and_missing.log")).unwrap();
    let mut log = Vec::new();
    while log.len() < 2 << 20 {
        log.extend_from_slice(&one);
        log.extend_from_slice(b"bad {{{pc:nothex}}} {{{bt:x:0x1}}}\n");
    }
    let path = tmp.path().join("missing.log");
    std::fs::write(&path, &log).unwrap();
    let path = path.to_str().unwrap();
    for format in ["--format=llvm", "--format=human", "--format=json"] {
        let ahead = symfilter(&[format, path], Stdio::null());
        let alone = symfilter(&[format, "--no-read-ahead", path], Stdio::null());
        assert!(
            handed_over(&ahead).is_some(),
            "{format}: the read-ahead ran"
        );
        assert!(ahead.stdout == alone.stdout, "{format}: output differs");
        let (a, b) = (diagnostics(&ahead), diagnostics(&alone));
        assert_eq!(a, b, "{format}: diagnostics differ");
        assert!(a.len() > 1000, "{format}: {} diagnostics", a.len());
        let missing = a
            .iter()
            .filter(|l| l.contains("no symbols for module"))
            .count();
        assert_eq!(missing, 1, "{format}: the missing module reported once");
    }
}
