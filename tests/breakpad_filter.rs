//! End to end: `symfilter --format=llvm --breakpad-store` over markup logs
//! prints what `llvm-symbolizer --filter-markup` prints from the DWARF of
//! the same binaries (testdata/breakpad/make-filter-expected.sh), except
//! for columns, which Breakpad symbol files do not carry (symfilter prints
//! 0; the expected side is normalised to 0 here), and the return type
//! LLVM's demangler prints for function templates (`int apply_all<...>`),
//! which dump_syms' does not. Every frame, inline frame, pc/ra adjustment
//! and the non-PIE image base must match exactly.

use std::path::{Path, PathBuf};

use crate::common;

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
    check_with_store(name, &dir().join("store"));
}

fn check_with_store(name: &str, store: &Path) {
    let log = dir().join("filter").join(format!("{name}.log"));
    let out = common::command()
        .arg("--format=llvm")
        .arg("--breakpad-store")
        .arg(store)
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

/// plain-nopie-O1's .sym in a store of its own, without the lines that
/// match `drop`; returns the store, the .sym text as written, and the
/// module's build ID.
fn nopie_store_without(drop: &str) -> (tempfile::TempDir, String, String) {
    let (sym, debug_id) = common::breakpad_fixture_sym("plain-nopie-O1");
    let text = std::fs::read_to_string(sym).unwrap();
    let kept: String = text
        .lines()
        .filter(|l| !l.contains(drop))
        .map(|l| format!("{l}\n"))
        .collect();
    let store = common::breakpad_store_with("plain-nopie-O1", &debug_id, kept.as_bytes());
    (store, kept, common::sym_build_id(&text))
}

/// dump_syms 2.3.9 writes a non-PIE executable's addresses relative to its
/// first PT_LOAD (0x400000) and adds section pseudo-symbols at raw section
/// addresses, from which the image base is inferred. Without them, the
/// base comes from the log: the module's lowest mmap load address.
#[test]
fn plain_non_pie_without_section_symbols() {
    let (_with, text, _) = nopie_store_without("no line has this");
    assert!(text.contains("\nPUBLIC 401000 0 <.init ELF section in plain-nopie-O1>\n"));
    assert!(text.contains("\nPUBLIC 1000 0 _init\n"));
    assert!(text.contains("\nFUNC 1140 4d 0 hash\n"));
    let (store, text, _) = nopie_store_without(" ELF section in ");
    assert!(!text.contains("section"));
    check_with_store("plain-nopie-O1", store.path());
}

/// `text` with every address moved up by `base` (FUNC, PUBLIC, line and
/// INLINE records), as a writer of absolute ELF addresses would write it.
fn shift_addresses(text: &str, base: u64) -> String {
    let hex = |t: &str| format!("{:x}", u64::from_str_radix(t, 16).unwrap() + base);
    let mut out = String::new();
    for line in text.lines() {
        let mut f: Vec<String> = line.split(' ').map(str::to_owned).collect();
        let m = usize::from(f.get(1).is_some_and(|t| t == "m"));
        match f[0].as_str() {
            "FUNC" | "PUBLIC" => f[1 + m] = hex(&f[1 + m]),
            "INLINE" => {
                for i in (5..f.len()).step_by(2) {
                    f[i] = hex(&f[i]);
                }
            }
            t if f.len() == 4 && t.bytes().all(|c| c.is_ascii_hexdigit()) => f[0] = hex(t),
            _ => {}
        }
        out.push_str(&f.join(" "));
        out.push('\n');
    }
    out
}

/// A `.sym` whose addresses are already ELF virtual addresses (no section
/// pseudo-symbols): the log's image base is not applied to it.
#[test]
fn plain_non_pie_with_absolute_addresses() {
    let (_, text, _) = nopie_store_without(" ELF section in ");
    let shifted = shift_addresses(&text, 0x400000);
    assert!(shifted.contains("\nFUNC 401140 4d 0 hash\n"));
    assert!(shifted.contains("\n401140 4 12 0\n"));
    assert!(shifted.contains("\nINLINE 0 16 0 0 401164 1d\n"));
    let (_, debug_id) = common::breakpad_fixture_sym("plain-nopie-O1");
    let store = common::breakpad_store_with("plain-nopie-O1", &debug_id, shifted.as_bytes());
    check_with_store("plain-nopie-O1", store.path());
}

/// `lookup` has no log to take the image base from: `--image-base` gives
/// it; without it, addresses are read as image-relative.
#[test]
fn lookup_non_pie_without_section_symbols() {
    let (store, _, build_id) = nopie_store_without(" ELF section in ");
    let run = |extra: &[&str], addrs: &[&str]| {
        common::breakpad_lookup(store.path(), &build_id, &[extra, addrs].concat())
    };
    assert_eq!(
        run(
            &["--image-base", "0x400000"],
            &["0x401170", "0x4011a5", "0x401000"]
        ),
        "0x401170 mix /symfilter/src/plain.c:8\n\
0x401170 hash /symfilter/src/plain.c:16\n\
0x4011a5 depth /symfilter/src/plain.c:20\n\
0x401000 _init ??:0\n"
    );
    assert_eq!(
        run(&[], &["0x1170", "0x11a5"]),
        "0x1170 mix /symfilter/src/plain.c:8\n\
0x1170 hash /symfilter/src/plain.c:16\n\
0x11a5 depth /symfilter/src/plain.c:20\n"
    );
    let (_, stderr, code) = common::lookup(
        &["--build-id", &build_id, "--image-base", "0xzz", "0x1"],
        b"",
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains(
            "invalid value '0xzz' for '--image-base <HEX>': '0xzz' is not a hexadecimal address"
        ),
        "{stderr}"
    );
    // An ELF file read directly has its own addresses: no image base.
    let (_, stderr, code) = common::lookup(
        &["--file", "/nonexistent", "--image-base", "0x400000", "0x1"],
        b"",
    );
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with(
            "error: the argument '--file <PATH>' cannot be used with '--image-base <HEX>'\n"
        ),
        "{stderr}"
    );
}

#[test]
fn zero_column_only_touches_the_column() {
    assert_eq!(
        zero_column("    #0    0x1 f /a.c:14:14 (m+0x1)"),
        "    #0    0x1 f /a.c:14:0 (m+0x1)"
    );
    assert_eq!(zero_column("[[[ELF module]]]"), "[[[ELF module]]]");
}

/// A store whose .sym has damaged records: the filter still symbolizes
/// from the rest and says so once, on stderr, however many frames use it.
#[test]
fn corrupt_records_are_reported_once() {
    let (sym, debug_id) = common::breakpad_fixture_sym("plain-O2");
    let text = std::fs::read_to_string(sym).unwrap();
    let tmp = common::breakpad_store_with(
        "plain-O2",
        &debug_id,
        text.replacen("FILE 0 ", "FILE x ", 1).as_bytes(),
    );
    let out = common::command()
        .arg("--format=llvm")
        .arg("--breakpad-store")
        .arg(tmp.path())
        .arg("--no-debuginfod")
        .arg(dir().join("filter/plain-O2.log"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    let warnings: Vec<&str> = stderr.lines().collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0]
            .ends_with("plain-O2.sym: skipped 1 corrupt line (first: line 3: bad FILE number)"),
        "{stderr}"
    );
    // Frames still resolve; FILE 0 is gone, so its lines have no file.
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains(" hash "), "{stdout}");
}

/// `symfilter lookup --build-id` has no module name: the store is scanned
/// for the debug ID. Inline chain, PUBLIC fallback and a miss.
#[test]
fn lookup_subcommand_by_build_id() {
    let (sym, _) = common::breakpad_fixture_sym("inline-O2");
    let build_id = common::sym_build_id(&std::fs::read_to_string(sym).unwrap());
    let out = common::breakpad_lookup(
        &dir().join("store"),
        &build_id,
        &["0x11a5", "0x1150", "0x10"],
    );
    assert_eq!(
        out,
        "0x11a5 geo::dot(geo::Point, geo::Point) /symfilter/src/shapes.h:10\n\
0x11a5 geo::norm2(geo::Point) /symfilter/src/shapes.h:12\n\
0x11a5 (anonymous namespace)::score(geo::Point) /symfilter/src/inline.cc:18\n\
0x11a5 total_score(geo::Point const*, int) /symfilter/src/inline.cc:27\n\
0x1150 frame_dummy ??:0\n\
0x10 ?? ??:0\n"
    );
}
