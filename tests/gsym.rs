//! GSYM reader and writer against `llvm-gsymutil` (LLVM 22): the expected
//! outputs in testdata/gsym/expected were produced by llvm-gsymutil by
//! testdata/gsym/build.sh, which also checked that llvm-gsymutil reads the
//! files symfilter writes with the same answers.

use crate::common;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/gsym")
}

fn symfilter() -> Command {
    common::command()
}

/// Runs `symfilter gsym lookup GSYM` with the addresses of `name` on stdin.
fn lookup(gsym: &Path, name: &str) -> String {
    let addrs = std::fs::read(dir().join(format!("expected/{name}.addrs"))).unwrap();
    let mut child = symfilter()
        .args(["gsym", "lookup"])
        .arg(gsym)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&addrs).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let header = format!("Looking up addresses in \"{}\":\n", gsym.display());
    text.strip_prefix(&header)
        .unwrap_or_else(|| panic!("no header line {header:?}: {text}"))
        .to_string()
}

fn expected(name: &str) -> String {
    std::fs::read_to_string(dir().join(format!("expected/{name}.llvm.txt"))).unwrap()
}

fn assert_same(got: &str, want: &str, what: &str) {
    if got != want {
        for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
            assert_eq!(g, w, "{what}: first difference at line {}", i + 1);
        }
        assert_eq!(
            got.lines().count(),
            want.lines().count(),
            "{what}: line counts differ"
        );
        panic!("{what}: outputs differ");
    }
}

const FIXTURES: [&str; 6] = [
    "inl_O2",
    "inl_O0",
    "app_cpp_O2",
    "tiny",
    "inl_split",
    "xunit_lto",
];

#[test]
fn lookups_in_llvm_written_files_match_llvm_gsymutil() {
    for name in FIXTURES {
        let want = expected(name);
        assert!(want.lines().count() > 100, "{name}: too few addresses");
        let got = lookup(&dir().join(format!("{name}.gsym")), name);
        assert_same(&got, &want, name);
    }
}

#[test]
fn whole_output_matches_llvm_gsymutil_header_included() {
    let out = symfilter()
        .current_dir(dir())
        .args(["gsym", "lookup", "tiny.gsym", "0x401000", "0x0"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        std::fs::read_to_string(dir().join("expected/tiny.whole.llvm.txt")).unwrap()
    );
}

#[test]
fn inline_frames_are_innermost_first() {
    let got = lookup(&dir().join("inl_O2.gsym"), "inl_O2");
    let want = "0x0000000000001181: leaf @ /gsym/src/inl.c:12 [inlined]\n\
                \x20                   middle + 4 @ /gsym/src/inl.c:17 [inlined]\n\
                \x20                   outer + 4 @ /gsym/src/inl.c:24 [inlined]\n\
                \x20                   chain + 17 @ /gsym/src/inl.c:30\n";
    assert!(got.contains(want), "{got}");
}

#[test]
fn variants_other_byte_orders_versions_and_offset_sizes() {
    let cases = [
        ("inl_O2.be", "inl_O2"),
        ("inl_O2.v2", "inl_O2"),
        ("inl_O2.v2be", "inl_O2"),
        ("inl_O2.off8", "inl_O2"),
        ("app_cpp_O2.off4be", "app_cpp_O2"),
        ("tiny.off1", "tiny"),
        ("tiny.off2be", "tiny"),
        ("tiny.v2off1be", "tiny"),
    ];
    for (file, name) in cases {
        let path = dir().join(format!("variants/{file}.gsym"));
        let got = lookup(&path, name);
        assert_same(&got, &expected(name), file);
    }
    // The variants really are what they claim to be.
    let head = |f: &str| std::fs::read(dir().join(format!("variants/{f}.gsym"))).unwrap();
    assert_eq!(&head("inl_O2.be")[..6], b"GSYM\x00\x01");
    assert_eq!(&head("inl_O2.v2")[..8], b"MYSG\x02\x00\x02\x00");
    assert_eq!(&head("tiny.off1")[..7], b"MYSG\x01\x00\x01");
    assert_eq!(&head("tiny.v2off1be")[..7], b"GSYM\x00\x02\x01");
    assert_eq!(head("inl_O2.off8")[6], 8);
}

fn create(input: &Path, out: &Path, extra: &[&str]) {
    let st = symfilter()
        .args(["gsym", "create"])
        .arg(input)
        .arg("-o")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
}

#[test]
fn create_from_elf_is_byte_identical_to_llvm_gsymutil() {
    let tmp = tempfile::tempdir().unwrap();
    for name in FIXTURES {
        let out = tmp.path().join(format!("{name}.gsym"));
        create(&dir().join(format!("bin/{name}")), &out, &[]);
        let ours = std::fs::read(&out).unwrap();
        let llvms = std::fs::read(dir().join(format!("{name}.gsym"))).unwrap();
        assert!(
            ours == llvms,
            "{name}: symfilter's GSYM differs from llvm-gsymutil's"
        );
        assert_same(&lookup(&out, name), &expected(name), name);
    }
}

#[test]
fn create_variants_reproduces_committed_files() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &[&str]); 4] = [
        (
            "inl_O2",
            "inl_O2.v2be",
            &["--format-version", "2", "--byte-order", "big"],
        ),
        ("inl_O2", "inl_O2.off8", &["--addr-off-size", "8"]),
        (
            "tiny",
            "tiny.off1",
            &["--base-at-first-function", "--addr-off-size", "1"],
        ),
        (
            "app_cpp_O2",
            "app_cpp_O2.off4be",
            &["--addr-off-size", "4", "--byte-order", "big"],
        ),
    ];
    for (bin, variant, args) in cases {
        let out = tmp.path().join(format!("{variant}.gsym"));
        create(&dir().join(format!("bin/{bin}")), &out, args);
        let want = std::fs::read(dir().join(format!("variants/{variant}.gsym"))).unwrap();
        assert!(std::fs::read(&out).unwrap() == want, "{variant} differs");
    }
}

#[test]
fn create_rejects_too_small_offsets() {
    let tmp = tempfile::tempdir().unwrap();
    let out = symfilter()
        .args(["gsym", "create"])
        .arg(dir().join("bin/inl_O2"))
        .arg("-o")
        .arg(tmp.path().join("x.gsym"))
        .args(["--addr-off-size", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err,
        "symfilter: address offset size 1 cannot hold an offset of 0x17d4 (need a larger size)\n"
    );
}

/// Breakpad's rules where GSYM has none (testdata/gsym/rules.sym): a line
/// record naming no declared FILE keeps its function (Breakpad answers with
/// the line and no file), and a FUNC hides the PUBLIC symbols inside it.
#[test]
fn create_from_breakpad_follows_breakpads_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("rules.gsym");
    create(&dir().join("rules.sym"), &out, &[]);
    let addrs = ["0x1105", "0x1115", "0x1205", "0x1300", "0x1400", "0x1425"];
    let got = symfilter()
        .args(["gsym", "lookup"])
        .arg(&out)
        .args(addrs)
        .output()
        .unwrap();
    let got = String::from_utf8(got.stdout).unwrap();
    let want = format!(
        "Looking up addresses in \"{}\":\n\
         0x0000000000001105: f_undeclared + 5\n\
         0x0000000000001115: f_undeclared + 21 @ /src/a.c:8\n\
         0x0000000000001205: f_all_undeclared + 5\n\
         0x0000000000001300: p_alone\n\
         0x0000000000001400: f_with_public_inside @ /src/a.c:10\n\
         0x0000000000001425: f_with_public_inside + 37 @ /src/a.c:10\n",
        out.display()
    );
    assert_eq!(got, want);
    // The reference reader answers the same.
    let mut llvm = std::process::Command::new("/usr/lib/llvm-22/bin/llvm-gsymutil");
    llvm.arg(&out);
    for a in addrs {
        llvm.args(["--address", a]);
    }
    let llvm = llvm.output().unwrap();
    assert_eq!(String::from_utf8(llvm.stdout).unwrap(), want);
}

#[test]
fn create_from_breakpad_sym() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["inl_O2", "app_cpp_O2"] {
        let sym = dir().join(format!("{name}.sym"));
        let out = tmp.path().join(format!("{name}.gsym"));
        create(&sym, &out, &[]);
        assert!(
            std::fs::read(&out).unwrap()
                == std::fs::read(dir().join(format!("variants/{name}.sym.gsym"))).unwrap(),
            "{name}: .sym conversion changed"
        );
        // What llvm-gsymutil answered for this file when build.sh ran.
        assert_same(&lookup(&out, name), &expected(&format!("{name}.sym")), name);
    }
    // A non-PIE executable: --image-base turns Breakpad's module-relative
    // addresses back into ELF virtual addresses; then every answer is the
    // DWARF-derived file's, except that the size-less PUBLIC symbol for the
    // end of .text runs on to the top of the address space.
    let out = tmp.path().join("tiny.gsym");
    create(&dir().join("tiny.sym"), &out, &["--image-base", "0x400000"]);
    let got = lookup(&out, "tiny");
    assert_same(&got, &expected("tiny.sym"), "tiny.sym");
    let want = expected("tiny");
    let differing: Vec<_> = got
        .lines()
        .zip(want.lines())
        .filter(|(g, w)| g != w)
        .collect();
    assert_eq!(
        differing,
        vec![(
            "0xffffffffffffffff: <.text ELF section in tiny> + 4286574591",
            "0xffffffffffffffff: error: address 0xffffffffffffffff is not in GSYM"
        )]
    );
    // Inline records become inline frames, like the DWARF-derived file's.
    let got = lookup(&tmp.path().join("inl_O2.gsym"), "inl_O2");
    assert!(got.contains(
        "0x00000000000011a4: leaf + 4 @ /gsym/src/inl.c:12 [inlined]\n\
         \x20                   middle + 12 @ /gsym/src/inl.c:17 [inlined]\n\
         \x20                   outer + 39 @ /gsym/src/inl.c:25 [inlined]\n\
         \x20                   chain + 52 @ /gsym/src/inl.c:30\n"
    ));
}

#[test]
fn lookup_of_a_corrupt_file_is_a_one_line_error() {
    let tmp = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(dir().join("inl_O2.gsym")).unwrap();
    let cut = tmp.path().join("cut.gsym");
    std::fs::write(&cut, &bytes[..100]).unwrap();
    let out = symfilter()
        .args(["gsym", "lookup"])
        .arg(&cut)
        .arg("0x1181")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "symfilter: {}: file is truncated: address info offsets needs bytes 0x54..0x9c but the file has 0x64\n",
            cut.display()
        )
    );
}

/// Runs `symfilter lookup ARGS` with `addrs` on stdin; output grouped by
/// address.
fn lookup_cli(args: &[&str], addrs: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut child = symfilter()
        .arg("lookup")
        .args(args)
        .args(["--no-demangle", "--no-debuginfod"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(addrs.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut map = std::collections::BTreeMap::<String, Vec<String>>::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let (addr, rest) = line.split_once(' ').unwrap();
        map.entry(addr.to_string())
            .or_default()
            .push(rest.to_string());
    }
    map
}

/// The filter's sources agree: wherever the GSYM file has line info, the
/// frames `symfilter lookup --gsym` gives equal those the ELF/DWARF source
/// gives for the binary itself (GSYM keeps no columns).
#[test]
fn gsym_source_agrees_with_the_elf_source() {
    for name in ["inl_O2", "inl_O0", "app_cpp_O2"] {
        let gsym = dir().join(format!("{name}.gsym"));
        let bin = dir().join(format!("bin/{name}"));
        let id = symfilter::gsym::GsymFile::open(&gsym)
            .unwrap()
            .uuid()
            .to_vec();
        let id = symfilter::symbols::BuildId(id).to_hex();
        let addrs: String = std::fs::read_to_string(dir().join(format!("expected/{name}.addrs")))
            .unwrap()
            .lines()
            .filter(|a| *a != "0xffffffffffffffff")
            .map(|a| format!("{a}\n"))
            .collect();
        let g = lookup_cli(
            &["--gsym", gsym.to_str().unwrap(), "--build-id", &id],
            &addrs,
        );
        let e = lookup_cli(&["--file", bin.to_str().unwrap()], &addrs);
        let mut compared = 0;
        for (addr, frames) in &g {
            if frames[0].ends_with("??:0") {
                continue;
            }
            let strip = |f: &String| match f.rsplit_once(':') {
                Some((head, _col))
                    if head
                        .rsplit_once(':')
                        .is_some_and(|(_, l)| l.parse::<u32>().is_ok()) =>
                {
                    head.to_string()
                }
                _ => f.clone(),
            };
            let elf: Vec<String> = e[addr].iter().map(strip).collect();
            assert_eq!(frames, &elf, "{name} at {addr}");
            compared += 1;
        }
        assert!(compared > 100, "{name}: only {compared} addresses compared");
    }
}
