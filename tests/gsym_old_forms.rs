//! `gsym create` from Breakpad `.sym` files in the record forms older
//! dump_syms versions wrote (`INLINE_ORIGIN <id> <file_id> <name>`, `INLINE`
//! without a call-site file): the GSYM is byte for byte the one made from
//! the current-form original. Old-form files: testdata/gsym-old-forms/
//! (from testdata/gsym/*.sym by make.sh there) and
//! testdata/breakpad/old-forms/ (from the Breakpad store fixture).

use crate::common;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// `symfilter gsym create INPUT -o OUT`, its bytes.
fn create(input: &Path, out: &Path) -> Vec<u8> {
    let st = common::command()
        .args(["gsym", "create"])
        .arg(input)
        .arg("-o")
        .arg(out)
        .output()
        .expect("run symfilter");
    assert!(
        st.status.success(),
        "{}: {}",
        input.display(),
        String::from_utf8_lossy(&st.stderr)
    );
    std::fs::read(out).expect("output written")
}

fn count(text: &str, prefix: &str, fields: usize) -> usize {
    text.lines()
        .filter(|l| l.starts_with(prefix) && l.split(' ').count() % 2 == fields % 2)
        .count()
}

#[test]
fn old_forms_give_the_gsym_of_the_current_form() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = root().join("breakpad/store/inline-O2");
    let current_store_sym = std::fs::read_dir(&store)
        .expect("store")
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("inline-O2.sym"))
        .find(|p| p.exists())
        .expect("inline-O2.sym in the store");
    let cases = [
        (
            root().join("gsym/inl_O2.sym"),
            root().join("gsym-old-forms/inl_O2.sym"),
        ),
        (
            root().join("gsym/app_cpp_O2.sym"),
            root().join("gsym-old-forms/app_cpp_O2.sym"),
        ),
        (
            current_store_sym,
            root().join("breakpad/old-forms/inline-O2.sym"),
        ),
    ];
    let mut old_inlines = 0;
    for (i, (current, old)) in cases.iter().enumerate() {
        let text = std::fs::read_to_string(old).expect("old form");
        // Really the old forms: INLINE with an odd number of fields after
        // the keyword (depth line origin, then pairs), INLINE_ORIGIN with a
        // file number.
        let inlines = count(&text, "INLINE ", 0);
        assert_eq!(count(&text, "INLINE ", 1), 0, "{}", old.display());
        assert!(inlines > 0);
        old_inlines += inlines;
        let want = create(current, &tmp.path().join(format!("{i}.cur.gsym")));
        let got = create(old, &tmp.path().join(format!("{i}.old.gsym")));
        assert!(got == want, "{}: GSYM differs", old.display());
    }
    assert!(old_inlines > 100, "{old_inlines} old-form INLINE records");
    // The current forms still give the committed bytes (tests/gsym.rs
    // checks this too, with llvm-gsymutil's lookups).
    for name in ["inl_O2", "app_cpp_O2"] {
        let got = create(
            &root().join(format!("gsym/{name}.sym")),
            &tmp.path().join(format!("{name}.gsym")),
        );
        let want = std::fs::read(root().join(format!("gsym/variants/{name}.sym.gsym")))
            .expect("committed variant");
        assert!(got == want, "{name}: .sym conversion changed");
    }
}
