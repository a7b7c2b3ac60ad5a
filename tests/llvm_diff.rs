//! Differential suite: `symfilter --format=llvm` against LLVM 22's `llvm-symbolizer
//! --filter-markup` on the same logs and binaries. The expected outputs were written by the real
//! tool (`testdata/llvm-diff/make-expected.sh`) and are compared byte for byte. Where symfilter
//! deliberately departs from LLVM (see the README), the reviewed expectation lives in
//! `NAME.symfilter.out` next to LLVM's, and the README lists the departures.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/llvm-diff")
}

fn run_llvm_format(log: &Path) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_symfilter"))
        .current_dir(dir())
        .args([
            "--format=llvm",
            "--color=never",
            "--build-id-dir",
            "../debug",
        ])
        .stdin(std::fs::File::open(log).expect("open log"))
        .stderr(Stdio::null())
        .output()
        .expect("run symfilter");
    assert!(
        out.status.success(),
        "symfilter failed on {}",
        log.display()
    );
    out.stdout
}

#[test]
fn llvm_format_matches_llvm_symbolizer_22() {
    let sanitizers = dir().join("../sanitizers");
    let mut logs: Vec<PathBuf> = [dir(), sanitizers]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).expect("read a suite folder"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    assert!(
        logs.len() >= 12,
        "expected the whole suite, found {} logs",
        logs.len()
    );
    let mut failures = Vec::new();
    for log in &logs {
        let ours = run_llvm_format(log);
        let reviewed = log.with_extension("symfilter.out");
        let llvm_path = log.with_extension("llvm.out");
        if reviewed.exists() {
            let llvm = std::fs::read_to_string(&llvm_path).expect("read LLVM's output");
            let ours = std::fs::read_to_string(&reviewed).expect("read reviewed output");
            assert_only_documented_departures(&llvm, &ours, &reviewed);
        }
        let expected_path = if reviewed.exists() {
            reviewed
        } else {
            llvm_path
        };
        let expected = std::fs::read(&expected_path).expect("read expected output");
        if ours != expected {
            let got = String::from_utf8_lossy(&ours);
            let want = String::from_utf8_lossy(&expected);
            let first = got
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(got.lines().count().min(want.lines().count()));
            failures.push(format!(
                "{}: first difference at line {}:\n  got:  {:?}\n  want: {:?}",
                log.file_name().unwrap_or_default().to_string_lossy(),
                first + 1,
                got.lines().nth(first).unwrap_or("<end>"),
                want.lines().nth(first).unwrap_or("<end>")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The one documented departure: on a line-table row with line 0 LLVM still
/// prints the row's column (`file:0:21`); the addr2line crate drops it
/// (`file:0:0`). Any other difference in a reviewed file fails the test.
fn assert_only_documented_departures(llvm: &str, ours: &str, path: &Path) {
    let (a, b): (Vec<&str>, Vec<&str>) = (llvm.lines().collect(), ours.lines().collect());
    assert_eq!(
        a.len(),
        b.len(),
        "{}: line count differs from LLVM's",
        path.display()
    );
    for (l, o) in a.iter().zip(&b) {
        if l == o {
            continue;
        }
        let zeroed = zero_line0_columns(l);
        assert_eq!(
            &zeroed,
            o,
            "{}: undocumented departure from LLVM",
            path.display()
        );
    }
}

/// `...:0:21 (` -> `...:0:0 (`
fn zero_line0_columns(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(i) = rest.find(":0:") {
        out.push_str(&rest[..i + 3]);
        rest = &rest[i + 3..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with(" (") {
            out.push('0');
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}
