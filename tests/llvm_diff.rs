//! Differential suite: `symfilter --format=llvm` against LLVM 22's `llvm-symbolizer
//! --filter-markup` on the same logs and binaries. The expected outputs were written by the real
//! tool (`testdata/llvm-diff/make-expected.sh`) and are compared byte for byte, with no
//! exceptions (the line-0 columns that once differed are found by `src/elf/line0.rs`).

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Stdio;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/llvm-diff")
}

fn run_format(log: &Path, format: &str) -> Vec<u8> {
    let out = common::command()
        .current_dir(dir())
        .env_remove("DEBUGINFOD_URLS")
        .args([
            format,
            "--color=never",
            "--no-debuginfod",
            "--no-default-paths",
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

fn suite_logs() -> Vec<PathBuf> {
    let sanitizers = dir().join("../sanitizers");
    let mut logs: Vec<PathBuf> = [dir(), sanitizers]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).expect("read a suite folder"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    logs
}

#[test]
fn llvm_format_matches_llvm_symbolizer_22() {
    let logs = suite_logs();
    assert!(
        logs.len() >= 14,
        "expected the whole suite, found {} logs",
        logs.len()
    );
    let mut failures = Vec::new();
    for log in &logs {
        let ours = run_format(log, "--format=llvm");
        let expected = std::fs::read(log.with_extension("llvm.out")).expect("read LLVM's output");
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

/// Every `bt`/`pc` frame that falls in one of the sanitizer programs' own
/// modules (binaries and libraries of testdata/sanitizers/bin, whose build
/// IDs are in the tree) is symbolized: it has a function name, and the
/// program's own functions have their source file. Frames in the sanitizer
/// runtime and libc (not in the tree) are not asked about.
#[test]
fn sanitizer_reports_symbolize_every_own_frame() {
    let bin = dir().join("../sanitizers/bin");
    let own: Vec<String> = std::fs::read_dir(&bin)
        .expect("sanitizers/bin")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    let logs: Vec<PathBuf> = suite_logs()
        .into_iter()
        .filter(|p| p.parent().is_some_and(|d| d.ends_with("sanitizers")))
        .collect();
    assert!(logs.len() >= 4, "sanitizer logs missing: {logs:?}");
    for log in &logs {
        let name = log.file_name().unwrap_or_default().to_string_lossy();
        let out = run_format(log, "--format=json");
        let (mut frames, mut with_source) = (0, 0);
        for line in String::from_utf8_lossy(&out).lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            for span in v["spans"].as_array().into_iter().flatten() {
                let element = span["element"].as_str().unwrap_or("");
                let module = span["module"]["name"].as_str().unwrap_or("");
                let base = module.rsplit('/').next().unwrap_or(module);
                if !matches!(element, "bt" | "pc") || !own.iter().any(|o| o == base) {
                    continue;
                }
                frames += 1;
                assert_eq!(span["status"], "ok", "{name}: {span}");
                let inner = &span["frames"][0];
                let function = inner["function"]
                    .as_str()
                    .or(span["symbol"]["name"].as_str())
                    .unwrap_or("");
                assert!(!function.is_empty(), "{name}: no function in {span}");
                if inner["file"]
                    .as_str()
                    .is_some_and(|f| f.starts_with("/src/"))
                {
                    with_source += 1;
                }
            }
        }
        assert!(
            frames >= 3,
            "{name}: only {frames} frames in its own modules"
        );
        assert!(
            with_source >= 3,
            "{name}: only {with_source} of {frames} own frames have a source file"
        );
    }
}
