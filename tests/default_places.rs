//! Symbols with no options: the files the log's `{{{module}}}` lines name
//! and the system's debug directory. The logs are real AddressSanitizer
//! reports of programs built with clang-22 into a temporary folder at test
//! time (`testdata/src/asan_main.c` calling into `asan_lib.c`, a shared
//! library), printed with `enable_symbolizer_markup=1`, so every module
//! line names a file on this machine.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common;

fn src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/src")
        .join(name)
}

fn clang(args: &[&str]) {
    let st = Command::new("clang-22")
        .args(args)
        .status()
        .expect("run clang-22");
    assert!(st.success(), "clang-22 {args:?}");
}

/// The program and its library in a new temporary folder, built with
/// `extra` flags too.
fn build(dir: &Path, extra: &[&str]) {
    let lib = dir.join("libasan_lib.so");
    let exe = dir.join("overflow");
    let common = ["-O1", "-g", "-fsanitize=address", "-shared-libasan"];
    let mut args: Vec<&str> = common.to_vec();
    args.extend_from_slice(extra);
    let (lib_s, src_lib) = (lib.to_str().unwrap(), src("asan_lib.c"));
    let mut lib_args = args.clone();
    lib_args.extend([
        "-fPIC",
        "-shared",
        "-Wl,-soname,libasan_lib.so",
        "-o",
        lib_s,
        src_lib.to_str().unwrap(),
    ]);
    clang(&lib_args);
    let (exe_s, src_main) = (exe.to_str().unwrap(), src("asan_main.c"));
    let dir_s = format!("-L{}", dir.display());
    let mut exe_args = args;
    exe_args.extend([
        "-o",
        exe_s,
        src_main.to_str().unwrap(),
        &dir_s,
        "-lasan_lib",
        "-Wl,-rpath,$ORIGIN",
    ]);
    clang(&exe_args);
}

/// Run the program: its AddressSanitizer report, with markup.
fn report(dir: &Path) -> Vec<u8> {
    let rt = Command::new("clang-22")
        .arg("-print-file-name=libclang_rt.asan-x86_64.so")
        .output()
        .expect("clang-22 -print-file-name");
    let rt = PathBuf::from(String::from_utf8(rt.stdout).expect("UTF-8").trim());
    let out = Command::new(dir.join("overflow"))
        .env("ASAN_OPTIONS", "enable_symbolizer_markup=1:symbolize=0")
        .env("LD_LIBRARY_PATH", rt.parent().expect("runtime folder"))
        .output()
        .expect("run the program");
    let log = out.stderr;
    assert!(
        String::from_utf8_lossy(&log).contains("ERROR: AddressSanitizer: heap-buffer-overflow"),
        "{}",
        String::from_utf8_lossy(&log)
    );
    log
}

/// symfilter `args` over `log` in JSON: its output lines, and stderr.
fn symfilter(args: &[&str], log: &[u8]) -> (Vec<Value>, String) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("report.log");
    std::fs::write(&path, log).expect("write the log");
    let out = common::command()
        .args(["--format=json"])
        .args(args)
        .arg(&path)
        .output()
        .expect("run symfilter");
    assert!(out.status.success());
    let lines = String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    (lines, String::from_utf8(out.stderr).expect("UTF-8"))
}

/// Every `bt` frame, as (module name, function, source file).
fn frames(lines: &[Value]) -> Vec<(String, Option<String>, Option<String>)> {
    let mut out = Vec::new();
    for v in lines {
        for span in v["spans"].as_array().into_iter().flatten() {
            if span["element"] != "bt" {
                continue;
            }
            let inner = &span["frames"][0];
            let function = inner["function"]
                .as_str()
                .or(span["symbol"]["name"].as_str())
                .map(str::to_owned);
            out.push((
                span["module"]["name"].as_str().unwrap_or("").to_owned(),
                function,
                inner["file"].as_str().map(str::to_owned),
            ));
        }
    }
    out
}

fn in_dir(module: &str, dir: &Path) -> bool {
    Path::new(module).parent() == Some(dir)
}

#[test]
fn with_no_options_every_frame_of_the_programs_own_modules_is_named() {
    let tmp = tempfile::tempdir().expect("tempdir");
    build(tmp.path(), &[]);
    let log = report(tmp.path());
    let (lines, err) = symfilter(&[], &log);
    let all = frames(&lines);
    let own: Vec<_> = all.iter().filter(|f| in_dir(&f.0, tmp.path())).collect();
    assert!(own.len() >= 5, "{all:?}\n{err}");
    // Every frame has its function; all but the C runtime's `_start` (no
    // debug info) have their source file.
    for (module, function, file) in &own {
        let function = function
            .as_deref()
            .unwrap_or_else(|| panic!("{module}: {all:?}"));
        if function.starts_with("_start") {
            continue;
        }
        let file = file.as_deref().unwrap_or("");
        assert!(
            file.ends_with("asan_main.c") || file.ends_with("asan_lib.c"),
            "{module}: {function} in {file:?}"
        );
    }
    // The sanitizer runtime (stripped, at the path the log names) gives
    // the names of its exported functions.
    let runtime: Vec<_> = all
        .iter()
        .filter(|f| f.0.contains("libclang_rt.asan"))
        .collect();
    assert!(!runtime.is_empty(), "{all:?}");
    assert!(runtime.iter().all(|f| f.1.is_some()), "{runtime:?}");
    // Only what the options name: the program's frames stay raw.
    let (lines, _) = symfilter(&["--no-default-paths"], &log);
    let none = frames(&lines);
    assert_eq!(none.len(), all.len());
    assert!(none.iter().all(|f| f.1.is_none()), "{none:?}");
}

/// The debug file of libc the system has in /usr/lib/debug, if any.
fn system_libc_debug_file(log: &str) -> Option<PathBuf> {
    let at = log.find("/libc.so.6:elf:")?;
    let hex: String = log[at + "/libc.so.6:elf:".len()..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    let path = PathBuf::from(format!(
        "/usr/lib/debug/.build-id/{}/{}.debug",
        &hex[..2],
        &hex[2..]
    ));
    path.is_file().then_some(path)
}

#[test]
fn a_build_id_dir_of_ones_own_keeps_the_system_debug_files() {
    let tmp = tempfile::tempdir().expect("tempdir");
    build(tmp.path(), &[]);
    let log = report(tmp.path());
    let Some(debug) = system_libc_debug_file(&String::from_utf8_lossy(&log)) else {
        eprintln!(
            "skipped: /usr/lib/debug has no debug file for this system's libc \
             (Debian: apt-get install libc6-dbg)"
        );
        return;
    };
    let empty = tempfile::tempdir().expect("tempdir");
    let (lines, err) = symfilter(
        &[
            "--build-id-dir",
            empty.path().to_str().unwrap(),
            "--explain",
        ],
        &log,
    );
    let libc: Vec<_> = frames(&lines)
        .into_iter()
        .filter(|f| f.0.ends_with("/libc.so.6"))
        .collect();
    assert!(!libc.is_empty());
    for (_, function, file) in &libc {
        assert!(function.is_some() && file.is_some(), "{libc:?}\n{err}");
    }
    assert!(
        err.contains(&format!("[system-debug-dir] {}: found", debug.display())),
        "{err}"
    );
}

#[test]
fn a_file_at_the_logged_path_with_another_build_id_is_never_used() {
    let tmp = tempfile::tempdir().expect("tempdir");
    build(tmp.path(), &[]);
    let log = report(tmp.path());
    // The same program rebuilt in place with another build ID.
    let new_id = "5eed0000000000000000000000000000000b0a75";
    build(tmp.path(), &[&format!("-Wl,--build-id=0x{new_id}")]);
    let (lines, err) = symfilter(&["--explain"], &log);
    let own: Vec<_> = frames(&lines)
        .into_iter()
        .filter(|f| in_dir(&f.0, tmp.path()))
        .collect();
    assert!(own.len() >= 5, "{own:?}");
    assert!(own.iter().all(|f| f.1.is_none()), "{own:?}");
    let exe = tmp.path().join("overflow");
    assert!(
        err.contains(&format!(
            "[module-path] {}: another build ID",
            exe.display()
        )),
        "{err}"
    );
    assert!(!err.contains(new_id), "{err}");
    let out = serde_json::to_string(&lines).expect("JSON");
    assert!(!out.contains(new_id));
}
