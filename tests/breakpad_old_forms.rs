//! The record forms older dump_syms versions wrote (3-field
//! `INLINE_ORIGIN <id> <file_id> <name>`, `INLINE` without a call-site
//! file), read from testdata/breakpad/old-forms/ (made from the current
//! form of the same file by testdata/breakpad/make-old-forms.sh): every
//! lookup gives what the current form gives.

use std::path::{Path, PathBuf};
use std::process::Command;

use symfilter::breakpad::BreakpadSymbols;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/breakpad")
}

fn current_sym() -> PathBuf {
    std::fs::read_dir(dir().join("store/inline-O2"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("inline-O2.sym")
}

#[test]
fn old_forms_answer_like_the_current_form() {
    let new = BreakpadSymbols::open(&current_sym()).unwrap();
    let old = BreakpadSymbols::open(&dir().join("old-forms/inline-O2.sym")).unwrap();
    assert_eq!(old.corruption().count, 0);
    let old_text = std::fs::read_to_string(dir().join("old-forms/inline-O2.sym")).unwrap();
    assert!(old_text.contains("\nINLINE_ORIGIN 2 0 geo::dot(geo::Point, geo::Point)\n"));
    assert!(old_text.contains("\nINLINE 1 60 3 13f1 4b 1441 19 1495 20\n"));
    let addrs = std::fs::read_to_string(dir().join("expected/inline-O2.addrs")).unwrap();
    let mut inlined = 0;
    let mut n = 0;
    for a in addrs.lines() {
        let addr = u64::from_str_radix(a.trim_start_matches("0x"), 16).unwrap();
        let want = new.lookup(addr);
        assert_eq!(old.lookup(addr), want, "{a}");
        n += 1;
        if want.is_some_and(|w| w.frames.len() > 1) {
            inlined += 1;
        }
    }
    assert!(n > 300 && inlined > 50, "{n} addresses, {inlined} inlined");
}

#[test]
fn lookup_cli_reads_the_old_forms() {
    let text = std::fs::read_to_string(current_sym()).unwrap();
    let build_id = text
        .lines()
        .find_map(|l| l.strip_prefix("INFO CODE_ID "))
        .unwrap()
        .to_ascii_lowercase();
    let debug_id = current_sym()
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_owned();
    let store = tempfile::tempdir().unwrap();
    let id_dir = store.path().join("inline-O2").join(debug_id);
    std::fs::create_dir_all(&id_dir).unwrap();
    std::fs::copy(
        dir().join("old-forms/inline-O2.sym"),
        id_dir.join("inline-O2.sym"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_symfilter"))
        .args(["lookup", "--no-debuginfod", "--build-id", &build_id])
        .arg("--breakpad-store")
        .arg(store.path())
        .args(["0x11a5", "0x1400", "0x12e8"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "0x11a5 geo::dot(geo::Point, geo::Point) /symfilter/src/shapes.h:10\n\
0x11a5 geo::norm2(geo::Point) /symfilter/src/shapes.h:12\n\
0x11a5 (anonymous namespace)::score(geo::Point) /symfilter/src/inline.cc:18\n\
0x11a5 total_score(geo::Point const*, int) /symfilter/src/inline.cc:27\n\
0x1400 (anonymous namespace)::clamp(int, int, int) /symfilter/src/inline.cc:10\n\
0x1400 main::$_0::operator()(int) const /symfilter/src/inline.cc:60\n\
0x1400 apply_all<main::$_0>(main::$_0, int) /symfilter/src/inline.cc:38\n\
0x12e8 atoi /usr/include/stdlib.h:364\n\
0x12e8 main /symfilter/src/inline.cc:65\n"
    );
}
