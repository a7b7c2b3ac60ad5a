//! End to end: `symfilter --format=llvm --breakpad-store` over markup logs
//! prints what `llvm-symbolizer --filter-markup` prints from the DWARF of
//! the same binaries (testdata/breakpad/make-filter-expected.sh), except
//! for columns, which Breakpad symbol files do not carry (symfilter prints
//! 0; the expected side is normalised to 0 here), and the return type
//! LLVM's demangler prints for function templates (`int apply_all<...>`),
//! which dump_syms' does not. Every frame, inline frame, pc/ra adjustment
//! and the non-PIE image base must match exactly.

use std::path::{Path, PathBuf};
use std::process::Command;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/breakpad")
}

/// `... /src/a.c:12:7 (mod+0x12)` -> `... /src/a.c:12:0 (mod+0x12)`.
fn zero_column(line: &str) -> String {
    let Some(paren) = line.rfind(" (") else {
        return line.to_string();
    };
    let (loc, tail) = line.split_at(paren);
    match loc.rfind(':') {
        Some(colon) if loc[colon + 1..].bytes().all(|b| b.is_ascii_digit()) => {
            format!("{}:0{tail}", &loc[..colon])
        }
        _ => line.to_string(),
    }
}

fn check(name: &str) {
    let log = dir().join("filter").join(format!("{name}.log"));
    let out = Command::new(env!("CARGO_BIN_EXE_symfilter"))
        .arg("--format=llvm")
        .arg("--breakpad-store")
        .arg(dir().join("store"))
        .arg("--no-debuginfod")
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let got = String::from_utf8(out.stdout).unwrap();
    let want =
        std::fs::read_to_string(dir().join("filter").join(format!("{name}.llvm.txt"))).unwrap();
    let want: Vec<String> = want
        .lines()
        .map(|l| zero_column(l).replace(" int apply_all<", " apply_all<"))
        .collect();
    let got: Vec<&str> = got.lines().collect();
    assert!(want.len() > 20, "{name}: only {} lines", want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "{name} line {}", i + 1);
    }
    assert_eq!(got.len(), want.len(), "{name}");
}

#[test]
fn inline_o2() {
    check("inline-O2");
}

#[test]
fn inline_o0() {
    check("inline-O0");
}

#[test]
fn plain_o2() {
    check("plain-O2");
}

#[test]
fn plain_non_pie() {
    check("plain-nopie-O1");
}

#[test]
fn zero_column_only_touches_the_column() {
    assert_eq!(
        zero_column("    #0    0x1 f /a.c:14:14 (m+0x1)"),
        "    #0    0x1 f /a.c:14:0 (m+0x1)"
    );
    assert_eq!(zero_column("[[[ELF module]]]"), "[[[ELF module]]]");
}
