//! The record forms older dump_syms versions wrote (3-field
//! `INLINE_ORIGIN <id> <file_id> <name>`, `INLINE` without a call-site
//! file), read from testdata/breakpad/old-forms/ (made from the current
//! form of the same file by testdata/breakpad/make-old-forms.sh): every
//! lookup gives what the current form gives.

use std::path::{Path, PathBuf};

use symfilter::breakpad::BreakpadSymbols;

use crate::common;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/breakpad")
}

fn current_sym() -> PathBuf {
    common::breakpad_fixture_sym("inline-O2").0
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
    let (sym, debug_id) = common::breakpad_fixture_sym("inline-O2");
    let build_id = common::sym_build_id(&std::fs::read_to_string(sym).unwrap());
    let old = std::fs::read(dir().join("old-forms/inline-O2.sym")).unwrap();
    let store = common::breakpad_store_with("inline-O2", &debug_id, &old);
    let addrs = ["0x11a5", "0x1400", "0x12e8"];
    // 0x11a5 as in breakpad_filter's lookup_subcommand_by_build_id.
    assert_eq!(
        common::breakpad_lookup(store.path(), &build_id, &addrs[..1]),
        common::breakpad_lookup(&dir().join("store"), &build_id, &addrs[..1]),
    );
    assert_eq!(
        common::breakpad_lookup(store.path(), &build_id, &addrs[1..]),
        "0x1400 (anonymous namespace)::clamp(int, int, int) /symfilter/src/inline.cc:10\n\
0x1400 main::$_0::operator()(int) const /symfilter/src/inline.cc:60\n\
0x1400 apply_all<main::$_0>(main::$_0, int) /symfilter/src/inline.cc:38\n\
0x12e8 atoi /usr/include/stdlib.h:364\n\
0x12e8 main /symfilter/src/inline.cc:65\n"
    );
}
