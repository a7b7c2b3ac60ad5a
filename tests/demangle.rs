//! Names demangled exactly as LLVM 22 demangles them, in every output
//! format. Expected outputs come from LLVM's own tools
//! (testdata/demangle/make-expected.sh): `llvm-cxxfilt` for a sample of the
//! installed C++ libraries' symbols, `llvm-symbolizer --filter-markup` for
//! Microsoft-mangled symbols of C++ compiled for Windows and for
//! hand-picked and compiled names (special names, lambdas, std::function,
//! std::thread, MSVC, unmangled names, underscore and dot prefixes).

use std::io::Write;
use std::process::Stdio;

use symfilter::demangle::{MAX_DEMANGLED, demangle_full, demangle_llvm};

fn pairs(file: &str) -> Vec<(String, String)> {
    let path = format!("{}/testdata/demangle/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let (m, d) = l.split_once('\t').unwrap();
            (m.to_string(), d.to_string())
        })
        .collect()
}

/// Rust names read differently for people (the human and JSON formats).
fn is_rust(name: &str) -> bool {
    name.contains("17h0123456789abcdefE") || name.trim_start_matches('_').starts_with('R')
}

/// Run symfilter on `input` with `args`, its address space and CPU time
/// limited, and return its standard output.
fn symfilter(args: &[&str], input: &[u8]) -> String {
    let mut cmd = crate::common::command();
    crate::common::limit(&mut cmd, Some(60), Some(2 << 30));
    let mut child = cmd
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
    String::from_utf8(out.stdout).unwrap()
}

fn markup(names: &[&str]) -> Vec<u8> {
    names
        .iter()
        .map(|n| format!("{{{{{{symbol:{n}}}}}}}\n"))
        .collect::<String>()
        .into_bytes()
}

fn sample_equals(file: &str) {
    let mut wrong = Vec::new();
    for (mangled, expected) in pairs(file) {
        for got in [demangle_llvm(&mangled), demangle_full(&mangled)] {
            if got != expected {
                wrong.push(format!("{mangled}\n  llvm: {expected}\n  ours: {got}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn library_symbols_equal_llvm_cxxfilt() {
    sample_equals("itanium.tsv");
}

/// Microsoft-mangled symbols of C++ compiled by clang for x86_64 and i686
/// Windows (scripts/msvc-demangle-fidelity.py), as `llvm-symbolizer
/// --filter-markup` prints them.
#[test]
fn microsoft_symbols_equal_llvm_symbolizer() {
    sample_equals("msvc.tsv");
}

#[test]
fn special_names_equal_llvm_symbolizer_in_every_format() {
    let pairs = pairs("special.tsv");
    let names: Vec<&str> = pairs.iter().map(|(m, _)| m.as_str()).collect();
    let input = markup(&names);
    let llvm = symfilter(&["--format=llvm"], &input);
    let human = symfilter(&["--format=human"], &input);
    let json = symfilter(&["--format=json"], &input);
    let (mut llvm, mut human, mut json) = (llvm.lines(), human.lines(), json.lines());
    for (mangled, expected) in &pairs {
        assert_eq!(llvm.next().unwrap(), expected, "llvm format: {mangled}");
        let h = human.next().unwrap();
        let j: serde_json::Value = serde_json::from_str(json.next().unwrap()).unwrap();
        let j = j["spans"][0]["demangled"].as_str().unwrap().to_string();
        if !is_rust(mangled) {
            assert_eq!(h, expected, "human format: {mangled}");
            assert_eq!(&j, expected, "json format: {mangled}");
        }
    }
}

#[test]
fn unmangled_names_stay_as_they_are() {
    for name in [
        "f",
        "i",
        "Pi",
        "Ss",
        "St6vector",
        "main",
        "_Z",
        "_Zfoo",
        "Z3foov",
    ] {
        assert_eq!(demangle_llvm(name), name);
        assert_eq!(demangle_full(name), name);
    }
}

#[test]
fn rust_names_read_fully_for_people() {
    assert_eq!(
        demangle_full("_ZN5alloc3vec12Vec$LT$T$GT$4push17h0123456789abcdefE"),
        "alloc::vec::Vec<T>::push"
    );
    assert_eq!(
        demangle_llvm("_ZN5alloc3vec12Vec$LT$T$GT$4push17h0123456789abcdefE"),
        "alloc::vec::Vec$LT$T$GT$::push::h0123456789abcdef"
    );
    assert_eq!(demangle_full("_RNvCs1234_7mycrate3foo"), "mycrate::foo");
}

/// Hostile names: deep nesting, back-reference chains that expand
/// exponentially, huge names. The process has bounded memory and CPU time;
/// every name comes back, demangled within the output bound or as it is.
#[test]
fn hostile_names_are_bounded() {
    let mut names: Vec<String> = Vec::new();
    // Deep nesting of pointers, templates and function types.
    names.push(format!("_Z1f{}iv", "P".repeat(100_000)));
    names.push(format!(
        "_Z1f{}i{}v",
        "1aI".repeat(20_000),
        "E".repeat(20_000)
    ));
    names.push(format!(
        "_Z1f{}v{}",
        "PFv".repeat(30_000),
        "E".repeat(30_000)
    ));
    names.push(format!("_Z{}", "N1a".repeat(40_000)));
    // Each parameter doubles the previous one through substitutions.
    let mut doubling = String::from("_Z1f1AIiiE");
    for k in 0..60 {
        doubling.push_str(&format!("S_IS{k}_S{k}_E"));
    }
    names.push(doubling);
    // A pack expanded inside an expanded pack, many times over.
    names.push(format!(
        "_Z1fIJ{}EEvDp{}T_",
        "i".repeat(5_000),
        "Dp".repeat(5_000)
    ));
    // Long but valid: a 100 KB identifier.
    names.push(format!("_Z{}{}v", 100_000, "x".repeat(100_000)));
    // Microsoft names: deep nesting, past MSVC's length limit, a number
    // that overflows an `i32`.
    names.push(format!("?x@@3{}HA", "PEA".repeat(1_300)));
    names.push(format!("?x@@3{}HA", "PEA".repeat(100_000)));
    names.push("?$TSS777777777777777777".to_string());
    // Nested templates, local scopes and function pointers; parameter types
    // that each take the previous one forty times; a 100 KB identifier.
    names.push(format!("?x@@3{}HA", "PEAV?$a@".repeat(30_000)));
    names.push(format!("?x@@3{}HA", "V?$a@?1??f@@YAXXZ@".repeat(10_000)));
    names.push(format!("?f@@YAX{}H@Z", "P6AX".repeat(30_000)));
    let mut shared = String::from("?f@@YAXP6AXH@Z");
    for k in 0..9 {
        shared.push_str(&format!("P6AX{}@Z", k.to_string().repeat(40)));
    }
    shared.push_str("@Z");
    names.push(shared);
    names.push(format!("?{}@@3HA", "x".repeat(100_000)));
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let out = symfilter(&["--format=llvm"], &markup(&refs));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), names.len());
    for (name, line) in names.iter().zip(&lines) {
        assert!(
            *line == name || line.len() <= MAX_DEMANGLED,
            "{} bytes for a {}-byte name",
            line.len(),
            name.len()
        );
    }
    // The 100 KB identifier is longer than the output bound: left as it is.
    assert_eq!(lines[6], names[6]);
    assert_eq!(lines.last(), names.last().map(String::as_str).as_ref());
}
