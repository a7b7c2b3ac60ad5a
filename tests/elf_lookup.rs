//! `symfilter lookup --file` against llvm-symbolizer 22's answers
//! (testdata/elf/expected, made by testdata/elf/make-expected.py from the
//! fixtures built by testdata/elf/build.sh).

use crate::common;
use common::{elf_root, lookup};

fn check(name: &str) {
    check_kind(name, "", &[]);
}

fn check_data(name: &str) {
    check_kind(name, ".data", &["--data"]);
}

fn check_kind(name: &str, kind: &str, extra: &[&str]) {
    let dir = elf_root();
    let addrs = std::fs::read(dir.join(format!("expected/{name}{kind}.addrs"))).unwrap();
    let expected = std::fs::read_to_string(dir.join(format!("expected/{name}{kind}.txt"))).unwrap();
    let file = dir.join("bin").join(name);
    let tree = dir.join("tree");
    let mut args = vec![
        "--build-id-dir",
        tree.to_str().unwrap(),
        "--file",
        file.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let (out, err, code) = lookup(&args, &addrs);
    assert_eq!(code, 0, "{name}: {err}");
    assert_eq!(err, "", "{name}");
    if out != expected {
        for (i, (a, b)) in out.lines().zip(expected.lines()).enumerate() {
            assert_eq!(a, b, "{name}: first difference at output line {}", i + 1);
        }
        assert_eq!(out.lines().count(), expected.lines().count(), "{name}");
    }
}

macro_rules! fixtures {
    ($($test:ident => $name:literal,)*) => {
        $(#[test] fn $test() { check($name); })*
    };
}

fixtures! {
    c_o0 => "c_O0",
    c_o2_inlining => "c_O2",
    c_non_pie => "c_nopie",
    c_dwarf4 => "c_dwarf4",
    c_gcc => "c_gcc",
    cpp_o2 => "cpp_O2",
    cpp_line_tables_only => "cpp_gmlt",
    shared_library => "libprog.so",
    zlib_compressed => "c_zlib",
    zstd_compressed => "c_zstd",
    stripped_with_debuglink => "c_stripped",
    stripped_debug_in_build_id_tree => "c_treeonly",
    split_dwarf_dwo => "split_dwo",
    split_dwarf_dwp => "split_dwp",
    dwz_supplementary => "dwz_prog",
    dwz_supplementary_other => "dwz_other",
    relocatable_object => "reloc.o",
}

macro_rules! data_fixtures {
    ($($test:ident => $name:literal,)*) => {
        $(#[test] fn $test() { check_data($name); })*
    };
}

data_fixtures! {
    data_c_o0 => "c_O0",
    data_c_o2 => "c_O2",
    data_c_dwarf4 => "c_dwarf4",
    data_cpp_o2 => "cpp_O2",
    data_shared_library => "libprog.so",
    data_stripped_with_debuglink => "c_stripped",
}

/// The relocatable object found by its build ID in a `--symbol-path`
/// folder, as a log's module would find it, answers as through `--file`.
#[test]
fn relocatable_object_found_by_build_id() {
    let dir = elf_root();
    let addrs = std::fs::read(dir.join("expected/reloc.o.addrs")).unwrap();
    let expected = std::fs::read_to_string(dir.join("expected/reloc.o.txt")).unwrap();
    let data = std::fs::read(dir.join("bin/reloc.o")).unwrap();
    let id: String = {
        use object::Object;
        let obj = object::File::parse(&*data).unwrap();
        let id = obj.build_id().unwrap().expect("build ID note");
        id.iter().map(|b| format!("{b:02x}")).collect()
    };
    let bin = dir.join("bin");
    let args = ["--build-id", &id, "--symbol-path", bin.to_str().unwrap()];
    let (out, err, code) = lookup(&args, &addrs);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, expected);
}
