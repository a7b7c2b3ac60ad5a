//! `symfilter lookup` through the build-ID sources, JSON output, arguments
//! and errors. Fixtures: testdata/elf (build.sh), expected outputs from
//! llvm-symbolizer 22 (make-expected.py).

use std::path::Path;

use object::Object;

use crate::common;
use common::{elf_root, lookup};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn build_id(name: &str) -> String {
    let data = std::fs::read(elf_root().join("bin").join(name)).unwrap();
    let obj = object::File::parse(&*data).unwrap();
    obj.build_id()
        .unwrap()
        .unwrap()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn expected(name: &str) -> (Vec<u8>, String) {
    let dir = elf_root().join("expected");
    (
        std::fs::read(dir.join(format!("{name}.addrs"))).unwrap(),
        std::fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap(),
    )
}

fn assert_same(out: &str, want: &str) {
    for (i, (a, b)) in out.lines().zip(want.lines()).enumerate() {
        assert_eq!(a, b, "first difference at line {}", i + 1);
    }
    assert_eq!(out.lines().count(), want.lines().count());
}

#[test]
fn build_id_tree_debug_file_for_stripped_binary() {
    let tree = elf_root().join("tree");
    let (addrs, want) = expected("c_treeonly");
    let id = build_id("c_treeonly");
    let (out, err, code) = lookup(&["--build-id-dir", s(&tree), "--build-id", &id], &addrs);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_same(&out, &want);
}

#[test]
fn build_id_tree_given_as_the_dot_build_id_folder() {
    let tree = elf_root().join("tree/.build-id");
    let (addrs, want) = expected("c_treeonly");
    let id = build_id("c_treeonly");
    let (out, _, code) = lookup(&["--build-id-dir", s(&tree), "--build-id", &id], &addrs);
    assert_eq!(code, 0);
    assert_same(&out, &want);
}

#[test]
fn build_id_tree_suffixless_link() {
    let tree = elf_root().join("tree");
    let (addrs, want) = expected("c_O0");
    let id = build_id("c_O0");
    let (out, _, code) = lookup(&["--build-id-dir", s(&tree), "--build-id", &id], &addrs);
    assert_eq!(code, 0);
    assert_same(&out, &want);
}

#[test]
fn symbol_path_folder_with_dwz_pair() {
    let empty = tempfile::tempdir().unwrap();
    let bin = elf_root().join("bin");
    for name in ["dwz_prog", "dwz_other", "c_stripped"] {
        let (addrs, want) = expected(name);
        let id = build_id(name);
        let (out, err, code) = lookup(
            &[
                "--build-id-dir",
                s(empty.path()),
                "--symbol-path",
                s(&bin),
                "--build-id",
                &id,
            ],
            &addrs,
        );
        assert_eq!((code, err.as_str()), (0, ""), "{name}");
        assert_same(&out, &want);
    }
}

#[test]
fn unknown_build_id_lists_the_places_tried() {
    let empty = tempfile::tempdir().unwrap();
    let (out, err, code) = lookup(
        &[
            "--no-default-paths",
            "--build-id-dir",
            s(empty.path()),
            "--build-id",
            "abcdef",
            "0x10",
        ],
        b"",
    );
    assert_eq!(code, 2);
    assert_eq!(out, "");
    let dir = empty.path().display();
    assert_eq!(
        err,
        format!(
            "symfilter: build ID abcdef not found\n  \
             build-id-dir: {dir}/.build-id/ab/cdef.debug: not found\n  \
             build-id-dir: {dir}/.build-id/ab/cdef: not found\n  \
             build-id-dir: {dir}/ab/cdef.debug: not found\n  \
             build-id-dir: {dir}/ab/cdef: not found\n"
        )
    );
}

#[test]
fn json_output() {
    let file = elf_root().join("bin/c_O2");
    let (out, _, code) = lookup(
        &["--file", s(&file), "--format", "json", "0x1150", "0x0"],
        b"",
    );
    assert_eq!(code, 0);
    assert_eq!(
        out,
        concat!(
            r#"{"address":"0x1150","adjusted":"0x1150","frames":[{"column":12,"file":"/elfsrc/prog.c","function":"outer","inlined":false,"line":23,"mangled":"outer"}],"status":"ok","symbol":{"mangled":"outer","name":"outer","offset":"0x10"}}"#,
            "\n",
            r#"{"address":"0x0","adjusted":"0x0","reason":"no symbol or line information for this address","status":"no_info"}"#,
            "\n"
        )
    );
}

/// `lookup --format=json` speaks the filter's JSON: its object for an
/// address is the filter's `pc` or `data` object for the same
/// module-relative address, less the members that come from markup.
#[test]
fn json_is_the_filters_vocabulary() {
    let bin = elf_root().join("bin");
    let file = bin.join("cpp_O2");
    let id = build_id("cpp_O2");
    let log = format!(
        "{{{{{{module:0:cpp_O2:elf:{id}}}}}}}{{{{{{mmap:0x0:0x100000:load:0:rx:0x0}}}}}}\n\
         {{{{{{pc:0x1150:pc}}}}}}\n{{{{{{pc:0x0:pc}}}}}}\n{{{{{{data:0x4014}}}}}}\n"
    );
    let (filtered, err, code) =
        common::symfilter(&["--format=json", "--symbol-path", s(&bin)], log.as_bytes());
    assert_eq!((code, err.as_str()), (0, ""));
    let from_filter: Vec<serde_json::Value> = filtered
        .lines()
        .skip(1)
        .map(|l| {
            let line: serde_json::Value = serde_json::from_str(l).unwrap();
            let mut element = line["spans"][0].clone();
            let members = element.as_object_mut().unwrap();
            for markup in ["element", "raw", "module", "offset"] {
                assert!(members.remove(markup).is_some(), "{markup} in {l}");
            }
            element
        })
        .collect();
    let from_lookup: Vec<serde_json::Value> = [&["0x1150", "0x0"][..], &["--data", "0x4014"]]
        .iter()
        .flat_map(|args| {
            let mut all = vec!["--file", s(&file), "--format", "json"];
            all.extend_from_slice(args);
            let (out, _, code) = lookup(&all, b"");
            assert_eq!(code, 0);
            out.lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(from_lookup, from_filter);
    assert_eq!(from_lookup[0]["frames"].as_array().unwrap().len(), 2);
    assert_eq!(from_lookup[1]["status"], "no_info");
    assert_eq!(from_lookup[2]["symbol"]["mangled"], "g_cpp_sink");
}

#[test]
fn cpp_names_demangled_or_raw() {
    let file = elf_root().join("bin/cpp_O2");
    let (out, _, _) = lookup(&["--file", s(&file), "0x1150"], b"");
    assert_eq!(
        out,
        "0x1150 shapes::Widget::Widget(int) /elfsrc/widget.cpp:10:28\n\
         0x1150 run(int) /elfsrc/widget.cpp:24:18\n"
    );
    let (out, _, _) = lookup(&["--file", s(&file), "--no-demangle", "0x1150"], b"");
    assert_eq!(
        out,
        "0x1150 _ZN6shapes6WidgetC2Ei /elfsrc/widget.cpp:10:28\n\
         0x1150 _Z3runi /elfsrc/widget.cpp:24:18\n"
    );
}

#[test]
fn bad_addresses_are_reported_and_skipped() {
    let file = elf_root().join("bin/c_O2");
    let (out, err, code) = lookup(&["--file", s(&file)], b"zz\n0x1140\n\n1140\n");
    assert_eq!(code, 1);
    assert_eq!(err, "symfilter: bad address 'zz'\n");
    assert_eq!(
        out,
        "0x1140 outer /elfsrc/prog.c:21\n0x1140 outer /elfsrc/prog.c:21\n"
    );
}

#[test]
fn data_lookup() {
    let file = elf_root().join("bin/c_O2");
    let (out, _, code) = lookup(
        &["--file", s(&file), "--data", "0x4018", "0x4038", "0x0"],
        b"",
    );
    assert_eq!(code, 0);
    let mut lines = out.lines();
    assert!(lines.next().unwrap().starts_with("0x4018 g_points+0x8 "));
    assert!(lines.next().unwrap().starts_with("0x4038 s_hits+0x0 "));
    assert_eq!(lines.next(), Some("0x0 ?? ??:0"));
}

#[test]
fn missing_file_is_an_error() {
    let (out, err, code) = lookup(&["--file", "/nonexistent/x", "0x1"], b"");
    assert_eq!((out.as_str(), code), ("", 2));
    assert_eq!(err, "symfilter: /nonexistent/x: no file found\n");
}

#[test]
fn hostile_die_nesting_is_refused_not_a_crash() {
    // 20,000 nested inlined subroutines: a recursive parser overflows its
    // stack; we answer from the symbol table.
    let file = elf_root().join("bin/deep_dies");
    let (out, err, code) = lookup(&["--file", s(&file), "0x1150"], b"");
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(out, "0x1150 outer ??:0\n");
    let (out, _, _) = lookup(&["--file", s(&file), "0x1160", "0x1200"], b"");
    assert_eq!(out, "0x1160 main ??:0\n0x1200 _fini ??:0\n");
}

/// Line-0 rows (compiler-generated code): `FILE:0` by default, as addr2line
/// prints them; `--line0-columns` adds the row's column as llvm-symbolizer
/// 22 does (testdata/line0/libfixture.so.expected, from the real tool).
#[test]
fn line0_columns_only_when_asked() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let llvm = std::fs::read_to_string(root.join("line0/libfixture.so.expected")).unwrap();
    let mut addrs: Vec<&str> = llvm.lines().map(|l| l.split(' ').next().unwrap()).collect();
    addrs.dedup();
    let stdin = addrs.join("\n").into_bytes();
    // lookup leaves a column of 0 out and writes an unknown function `??`.
    let with_columns: String = llvm
        .lines()
        .map(|l| {
            let l = l.strip_suffix(":0").unwrap_or(l);
            format!("{}\n", l.replacen("  ", " ?? ", 1))
        })
        .collect();
    let lib = root.join("bin/libfixture.so");
    let (out, _, code) = lookup(&["--line0-columns", "--file", s(&lib)], &stdin);
    assert_eq!(code, 0);
    assert_same(&out, &with_columns);
    assert!(out.contains(":0:3\n") && out.contains(":0:21\n"));

    let without: String = with_columns
        .lines()
        .map(|l| match l.rsplit_once(":0:") {
            Some((head, col)) if col.bytes().all(|b| b.is_ascii_digit()) => format!("{head}:0\n"),
            _ => format!("{l}\n"),
        })
        .collect();
    assert_ne!(without, with_columns);
    let (out, _, code) = lookup(&["--file", s(&lib)], &stdin);
    assert_eq!(code, 0);
    assert_same(&out, &without);
}

/// Addresses are looked up in address order within a batch, but answered in
/// the order given: shuffled, repeated and bad addresses between them give
/// each address's answer (LLVM's, from the expected file) in place.
#[test]
fn answers_keep_the_input_order() {
    let (addrs, want) = expected("c_O2");
    let addrs: Vec<String> = String::from_utf8(addrs)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    // LLVM's answer per address (one line per frame).
    let mut per_addr: std::collections::HashMap<&str, String> = Default::default();
    for line in want.lines() {
        let addr = line.split(' ').next().unwrap();
        per_addr
            .entry(addr)
            .or_default()
            .push_str(&format!("{line}\n"));
    }
    // Reversed, every third one repeated, and a bad address in the middle.
    let mut input = String::new();
    let mut expected_out = String::new();
    for (i, a) in addrs.iter().rev().enumerate() {
        for _ in 0..if i % 3 == 0 { 2 } else { 1 } {
            input.push_str(&format!("{a}\n"));
            expected_out.push_str(&per_addr[a.as_str()]);
        }
        if i == addrs.len() / 2 {
            input.push_str("0xnothex\n\n");
        }
    }
    let bin = elf_root().join("bin/c_O2");
    let (out, err, code) = lookup(&["--file", s(&bin)], input.as_bytes());
    assert_eq!(code, 1, "a bad address fails the run");
    assert!(err.contains("bad address '0xnothex'"), "{err}");
    assert_same(&out, &expected_out);
    // The same as arguments.
    let args: Vec<&str> = input
        .lines()
        .filter(|l| !l.is_empty() && !l.contains("nothex"))
        .collect();
    let mut argv = vec!["--file", s(&bin)];
    argv.extend(args);
    let (out, _, code) = lookup(&argv, b"");
    assert_eq!(code, 0);
    assert_same(&out, &expected_out);
}
