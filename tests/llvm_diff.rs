//! Differential suite: `symfilter --format=llvm` against LLVM 22's `llvm-symbolizer
//! --filter-markup` on the same logs and binaries. The expected outputs were written by the real
//! tool (`testdata/llvm-diff/make-expected.sh`) and are compared byte for byte, with no
//! exceptions (the line-0 columns that once differed are found by `src/elf/line0.rs`).

use crate::common;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/llvm-diff")
}

fn run_format(log: &Path, format: &str) -> Vec<u8> {
    run_with(log, &[format, "--color=never"])
}

/// symfilter's stdout on `log` with `args`, the suite's symbol tree and nothing else.
fn run_with(log: &Path, args: &[&str]) -> Vec<u8> {
    run_both(log, args).0
}

/// symfilter's stdout and stderr on `log` with `args`, as [`run_with`].
fn run_both(log: &Path, args: &[&str]) -> (Vec<u8>, Vec<u8>) {
    run_in(log, Path::new("../debug"), args)
}

/// symfilter's stdout and stderr on `log` with `args`, symbols from the
/// build-ID tree `tree` (relative to the suite's folder) only.
fn run_in(log: &Path, tree: &Path, args: &[&str]) -> (Vec<u8>, Vec<u8>) {
    let out = common::command()
        .current_dir(dir())
        .env_remove("DEBUGINFOD_URLS")
        .args(args)
        .args(["--no-debuginfod", "--no-default-paths", "--build-id-dir"])
        .arg(tree)
        .stdin(std::fs::File::open(log).expect("open log"))
        .output()
        .expect("run symfilter");
    assert!(
        out.status.success(),
        "symfilter failed on {}",
        log.display()
    );
    (out.stdout, out.stderr)
}

/// Where `got` first differs from `want`, line by line, for a message.
fn first_difference(got: &[u8], want: &[u8]) -> String {
    let (got, want) = (String::from_utf8_lossy(got), String::from_utf8_lossy(want));
    let first = got
        .lines()
        .zip(want.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(got.lines().count().min(want.lines().count()));
    format!(
        "first difference at line {}:\n  got:  {:?}\n  want: {:?}",
        first + 1,
        got.lines().nth(first).unwrap_or("<end>"),
        want.lines().nth(first).unwrap_or("<end>")
    )
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
    let runs = [
        (["--format=llvm", "--color=never"], "llvm.out"),
        (["--format=llvm", "--color=always"], "llvm-color.out"),
    ];
    for (log, (args, extension)) in logs.iter().flat_map(|l| runs.iter().map(move |r| (l, r))) {
        let ours = run_with(log, args);
        let expected = std::fs::read(log.with_extension(extension)).expect("read LLVM's output");
        if ours != expected {
            failures.push(format!(
                "{} ({}): {}",
                log.file_name().unwrap_or_default().to_string_lossy(),
                args[1],
                first_difference(&ours, &expected)
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

/// The located diagnostics of a stderr: (input line, column) of each.
type Located = Vec<(Vec<u8>, usize)>;

/// LLVM's diagnostics with a location, from its stderr: a `warning:` or
/// `error:` line, the whole input line, and a caret under the column. Those
/// saying that no mmap covers an address are marked: LLVM puts the caret at
/// the element's first field, symfilter at the address.
fn llvm_located(err: &[u8]) -> Vec<(Vec<u8>, usize, bool)> {
    let lines: Vec<&[u8]> = err.split(|&b| b == b'\n').collect();
    let mut found = Vec::new();
    for (i, message) in lines.iter().enumerate() {
        let located = message.starts_with(b"warning: ") || message.starts_with(b"error: ");
        let (Some(input), Some(caret)) = (lines.get(i + 1), lines.get(i + 2)) else {
            continue;
        };
        let spaces = caret.iter().take_while(|&&b| b == b' ').count();
        if located && caret.get(spaces..) == Some(&b"^"[..]) {
            let input = input.strip_suffix(b"\r").unwrap_or(input).to_vec();
            found.push((
                input,
                spaces + 1,
                message.ends_with(b"no mmap covers address"),
            ));
        }
    }
    found
}

/// symfilter's diagnostics with a location (`symfilter: <stdin>:LINE:COLUMN:
/// ...`) as (input line, column), but for modules without symbols, which
/// LLVM reports without a location.
fn our_located(err: &[u8], log: &[u8]) -> Located {
    let input: Vec<&[u8]> = log.split(|&b| b == b'\n').collect();
    String::from_utf8_lossy(err)
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("symfilter: <stdin>:")?;
            let mut parts = rest.splitn(3, ':');
            let line: usize = parts.next()?.parse().ok()?;
            let column: usize = parts.next()?.parse().ok()?;
            if parts
                .next()?
                .trim_start()
                .starts_with("no symbols for module")
            {
                return None;
            }
            let text = input.get(line.checked_sub(1)?)?;
            Some((text.strip_suffix(b"\r").unwrap_or(text).to_vec(), column))
        })
        .collect()
}

/// Every input line LLVM 22 diagnoses (warning or error, with a location)
/// symfilter diagnoses too, as many times and at the same column (but for
/// an address no mmap covers, which symfilter points at), and no other
/// line: compared with LLVM's stored stderr over the whole suite.
#[test]
fn diagnoses_the_lines_llvm_does() {
    let mut failures = Vec::new();
    for log in suite_logs() {
        let name = log
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let theirs =
            llvm_located(&std::fs::read(log.with_extension("llvm.err")).expect("LLVM's stderr"));
        let (_, err) = run_both(&log, &["--format=llvm", "--color=never"]);
        let mut ours = our_located(&err, &std::fs::read(&log).expect("read log"));
        let mut lines_theirs: Vec<&[u8]> = theirs.iter().map(|(l, _, _)| l.as_slice()).collect();
        let mut lines_ours: Vec<&[u8]> = ours.iter().map(|(l, _)| l.as_slice()).collect();
        lines_theirs.sort();
        lines_ours.sort();
        if lines_theirs != lines_ours {
            failures.push(format!(
                "{name}: lines diagnosed differ\n  LLVM: {:?}\n  ours: {:?}",
                lines_theirs
                    .iter()
                    .map(|l| String::from_utf8_lossy(l))
                    .collect::<Vec<_>>(),
                lines_ours
                    .iter()
                    .map(|l| String::from_utf8_lossy(l))
                    .collect::<Vec<_>>()
            ));
            continue;
        }
        for (line, column, unmapped) in &theirs {
            if *unmapped {
                continue;
            }
            match ours.iter().position(|(l, c)| l == line && c == column) {
                Some(i) => {
                    ours.swap_remove(i);
                }
                None => failures.push(format!(
                    "{name}: LLVM diagnoses column {column} of {:?}, symfilter does not",
                    String::from_utf8_lossy(line)
                )),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The system's own debug files, symbolized by both tools: every ELF file
/// of `/usr/lib/debug/.build-id` (Debian's `libc6-dbg`, which `.ci/run`
/// installs: libc, libm, the dynamic loader, the gconv modules, ...),
/// mapped as its program headers say, and 100 addresses drawn from each
/// executable segment as a `pc` and as a `bt` (inlined frames and all),
/// and the symbols of sections not loaded, as a `pc`, `bt` and `data`:
/// `--format=llvm` is byte-identical to LLVM 22's output made in the same
/// run. Inputs neither the tests nor the fixtures chose.
#[test]
fn system_debug_files_match_llvm_symbolizer_22() {
    use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol};
    let root = Path::new("/usr/lib/debug/.build-id");
    let sorted = |dir: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        v.sort();
        v
    };
    let mut rng = common::Rng(20261127);
    let mut log = String::from("{{{reset}}}\n");
    let mut modules = 0u64;
    for dir in sorted(root).iter().filter(|d| d.is_dir()) {
        for file in sorted(dir) {
            let (Some(prefix), Some(stem)) = (
                dir.file_name().and_then(|n| n.to_str()),
                file.file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.strip_suffix(".debug")),
            ) else {
                continue;
            };
            let Ok(data) = std::fs::read(&file) else {
                continue;
            };
            let Ok(obj) = object::File::parse(&*data) else {
                continue;
            };
            let base = 0x7e00_0000_0000 + (modules << 32);
            let mut lines = vec![format!(
                "{{{{{{module:{modules}:m{modules}.so:elf:{prefix}{stem}}}}}}}"
            )];
            let mut code = Vec::new();
            for seg in obj.segments() {
                let object::SegmentFlags::Elf { p_flags, p_type } = seg.flags() else {
                    continue;
                };
                if p_type != object::elf::PT_LOAD {
                    continue;
                }
                let p_flags = p_flags.0;
                let (start, end) = (seg.address() & !0xfff, seg.address() + seg.size());
                if seg.size() == 0 {
                    continue;
                }
                let mode: String = [(4, 'r'), (2, 'w'), (1, 'x')]
                    .iter()
                    .filter(|(bit, _)| p_flags & bit != 0)
                    .map(|&(_, c)| c)
                    .collect();
                let size = ((end + 0xfff) & !0xfff) - start;
                lines.push(format!(
                    "{{{{{{mmap:{:#x}:{size:#x}:load:{modules}:{mode}:{start:#x}}}}}}}",
                    base + start
                ));
                if p_flags & 1 != 0 {
                    code.push((seg.address(), seg.size()));
                }
            }
            if code.is_empty() {
                continue;
            }
            // Symbols of sections the program does not have in memory
            // (glibc's `.gnu.warning.*`, at address 0): LLVM leaves them out.
            let unallocated = obj
                .symbols()
                .filter(|sym| match sym.section() {
                    object::SymbolSection::Section(i) => obj.section_by_index(i).is_ok_and(|s| {
                        matches!(s.flags(), object::SectionFlags::Elf { sh_flags, .. }
                            if !sh_flags.contains(object::elf::SHF_ALLOC))
                    }),
                    _ => false,
                })
                .filter(|sym| sym.size() > 0)
                .take(20);
            for sym in unallocated {
                let a = base + sym.address() + sym.size() / 2;
                lines.push(format!(
                    "pc {{{{{{pc:{a:#x}}}}}}} bt {{{{{{bt:0:{a:#x}}}}}}} data {{{{{{data:{a:#x}}}}}}}"
                ));
            }
            for (address, size) in code {
                for _ in 0..100 {
                    let a = base + address + rng.below(size as usize) as u64;
                    lines.push(format!(
                        "pc {{{{{{pc:{a:#x}}}}}}} bt {{{{{{bt:0:{a:#x}}}}}}}"
                    ));
                }
            }
            log.push_str(&lines.join("\n"));
            log.push('\n');
            modules += 1;
        }
    }
    assert!(
        modules >= 10,
        "only {modules} debug files in {} (install libc6-dbg)",
        root.display()
    );
    let work = tempfile::tempdir().expect("tempdir");
    let path = work.path().join("system.log");
    std::fs::write(&path, &log).expect("write the log");
    let llvm = std::process::Command::new("/usr/lib/llvm-22/bin/llvm-symbolizer")
        .args(["--filter-markup", "--debug-file-directory=/usr/lib/debug"])
        .stdin(std::fs::File::open(&path).expect("open log"))
        .output()
        .expect("run llvm-symbolizer 22");
    let (ours, _) = run_in(
        &path,
        Path::new("/usr/lib/debug"),
        &["--format=llvm", "--color=never"],
    );
    assert!(
        ours == llvm.stdout,
        "{modules} debug files: {}",
        first_difference(&ours, &llvm.stdout)
    );
}

/// Random markup logs with their edges bent (number forms, field counts,
/// bad tags and braces, SGR escapes, clashing modules and mmaps, elements
/// before contextual ones on a line), made by `scripts/llvm-diff-random.py`
/// over the suite's fixtures: `--format=llvm` prints what LLVM 22 prints
/// on each, in the same run, without and with colour. The script says
/// which logs differ and keeps each, cut to the lines that still differ.
#[test]
fn random_logs_print_as_llvm_symbolizer_22() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = tempfile::tempdir().expect("tempdir");
    let out = std::process::Command::new("python3")
        .arg(root.join("scripts/llvm-diff-random.py"))
        .args(["--count", "300", "--seed", "20261206", "--symfilter"])
        .arg(env!("CARGO_BIN_EXE_symfilter"))
        .arg("--tree")
        .arg(root.join("testdata/debug"))
        .arg("--out")
        .arg(work.path())
        .env_remove("DEBUGINFOD_URLS")
        .output()
        .expect("run scripts/llvm-diff-random.py");
    let report = String::from_utf8_lossy(&out.stdout);
    let mut cases = String::new();
    for entry in std::fs::read_dir(work.path())
        .into_iter()
        .flatten()
        .flatten()
    {
        let path = entry.path();
        if path.extension().is_some_and(|x| x == "log") {
            let log = std::fs::read(&path).unwrap_or_default();
            let llvm = std::fs::read(path.with_extension("llvm")).unwrap_or_default();
            cases += &format!(
                "{}: {}\n",
                path.display(),
                first_difference(
                    &std::fs::read(path.with_extension("symfilter")).unwrap_or_default(),
                    &llvm
                )
            );
            cases += &format!("  log: {:?}\n", String::from_utf8_lossy(&log));
        }
    }
    assert!(
        out.status.success(),
        "{report}{cases}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report.contains("0 of 300 logs differ"), "{report}");
}
