//! Finding `.sym` files in Breakpad stores: the exact layout, the scan
//! fallback, identity checks, and hostile files (garbage, truncated,
//! corrupt lines) that must give a miss or a warning, never a panic.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common;

use symfilter::breakpad::{StoreProvider, debug_id_for, providers};
use symfilter::symbols::{
    Attempt, BuildId, CodeWant, DataWant, Miss, ModuleKey, Provider, SourceWarning, Symbolizer,
    SymbolizerConfig,
};

fn fixture_store() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/breakpad/store")
}

/// plain-O2's build ID, its debug ID and its .sym text.
fn plain() -> (BuildId, String, String) {
    let dir = fixture_store().join("plain-O2");
    let id_dir = fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    let debug_id = id_dir.file_name().unwrap().to_str().unwrap().to_string();
    let text = fs::read_to_string(id_dir.join("plain-O2.sym")).unwrap();
    let code_id = text
        .lines()
        .find_map(|l| l.strip_prefix("INFO CODE_ID "))
        .unwrap();
    let build_id = BuildId::from_hex(code_id.split(' ').next().unwrap()).unwrap();
    assert_eq!(debug_id_for(&build_id), debug_id);
    (build_id, debug_id, text)
}

fn put(root: &Path, rel: &str, text: &[u8]) -> PathBuf {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(&p, text).unwrap();
    p
}

fn find(roots: Vec<PathBuf>, build_id: &BuildId, name: &str) -> (bool, Vec<Attempt>) {
    let provider = StoreProvider::new(roots);
    let mut trail = Vec::new();
    let key = ModuleKey {
        build_id: build_id.clone(),
        name: name.to_string(),
        image_base_hint: None,
    };
    let found = provider.find(&key, &mut trail);
    (found.is_some(), trail)
}

#[test]
fn exact_path_from_module_name() {
    let (id, debug_id, _) = plain();
    let (found, trail) = find(vec![fixture_store()], &id, "/data/app/plain-O2");
    assert!(found);
    assert_eq!(trail.len(), 1);
    assert!(trail[0].failure.is_none());
    assert!(
        trail[0]
            .place
            .ends_with(&format!("plain-O2/{debug_id}/plain-O2.sym"))
    );
}

#[test]
fn scan_when_name_does_not_match() {
    let (id, debug_id, _) = plain();
    let (found, trail) = find(vec![fixture_store()], &id, "renamed-binary");
    assert!(found);
    let last = trail.last().unwrap();
    assert!(last.failure.is_none());
    assert!(last.place.ends_with(&format!("{debug_id}/plain-O2.sym")));
    assert_eq!(trail[0].failure, Some(Miss::NotFound));
    // An empty name goes straight to the scan.
    let (found, _) = find(vec![fixture_store()], &id, "");
    assert!(found);
}

#[test]
fn unknown_build_id_is_not_found_everywhere() {
    let id = BuildId::from_hex("00112233445566778899aabbccddeeff00112233").unwrap();
    let (found, trail) = find(vec![fixture_store()], &id, "plain-O2");
    assert!(!found);
    assert_eq!(trail.len(), 2);
    assert!(trail.iter().all(|a| a.failure == Some(Miss::NotFound)));
}

#[test]
fn module_id_and_code_id_are_checked() {
    let (id, debug_id, text) = plain();
    let tmp = tempfile::tempdir().unwrap();
    // Right place, but the MODULE record names another module.
    let other = text.replacen(&debug_id, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA0", 1);
    put(
        tmp.path(),
        &format!("plain-O2/{debug_id}/plain-O2.sym"),
        other.as_bytes(),
    );
    let (found, trail) = find(vec![tmp.path().to_path_buf()], &id, "plain-O2");
    assert!(!found);
    assert_eq!(
        trail[0].failure,
        Some(Miss::DebugIdMismatch {
            path: trail[0].place.clone(),
            found: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA0".into(),
            expected: debug_id.to_string(),
        })
    );
    assert_eq!(
        trail[0].failure.as_ref().map(ToString::to_string),
        Some(format!(
            "{}: MODULE record has debug ID AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA0, expected {debug_id}",
            trail[0].place
        ))
    );

    // Same first 16 bytes, different full build ID (INFO CODE_ID).
    let mut longer = id.0.clone();
    longer[19] ^= 1;
    let (found, trail) = find(vec![fixture_store()], &BuildId(longer), "plain-O2");
    assert!(!found);
    let want_found = plain().0.to_hex();
    assert!(matches!(
        &trail[0].failure,
        Some(Miss::BuildIdMismatch { found, .. }) if *found == want_found
    ));
}

#[test]
fn garbage_and_truncated_files_fall_back_to_the_next_store() {
    let (id, debug_id, text) = plain();
    let rel = format!("plain-O2/{debug_id}/plain-O2.sym");
    let bad: [&[u8]; 4] = [
        b"",
        b"\x7fELF\x02\x01\x01\0\0\0garbage",
        &text.as_bytes()[..3],
        b"MODULE Linux",
    ];
    for junk in bad {
        let tmp = tempfile::tempdir().unwrap();
        put(tmp.path(), &rel, junk);
        let (found, trail) = find(
            vec![tmp.path().to_path_buf(), fixture_store()],
            &id,
            "plain-O2",
        );
        assert!(found, "{junk:?}");
        assert!(
            matches!(&trail[0].failure, Some(Miss::Unreadable { .. })),
            "{:?}",
            trail[0].failure
        );
        assert!(trail.last().unwrap().failure.is_none());
    }
}

#[test]
fn corrupt_lines_are_skipped_and_reported_once() {
    let (id, debug_id, text) = plain();
    let tmp = tempfile::tempdir().unwrap();
    // Damage two records and truncate the file in the middle of a line.
    let mut damaged = text
        .replacen("FUNC ", "FUNC zz", 1)
        .replacen("FILE 0", "FILE x", 1);
    damaged.truncate(damaged.len() - 7);
    put(
        tmp.path(),
        &format!("plain-O2/{debug_id}/plain-O2.sym"),
        damaged.as_bytes(),
    );
    let provider = StoreProvider::new(vec![tmp.path().to_path_buf()]);
    let key = ModuleKey {
        build_id: id,
        name: "plain-O2".into(),
        image_base_hint: None,
    };
    let src = provider.find(&key, &mut Vec::new()).unwrap();
    let warnings = src.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    // The bad FILE, the bad FUNC, and every line/INLINE record of that
    // FUNC (records outside a FUNC are corrupt, as in Breakpad). The cut
    // STACK record at the end is not parsed, so not counted.
    let orphans = text
        .lines()
        .skip_while(|l| !l.starts_with("FUNC "))
        .skip(1)
        .take_while(|l| !l.starts_with("FUNC ") && !l.starts_with("PUBLIC "))
        .count();
    assert!(orphans > 0);
    assert!(
        matches!(
            &warnings[0],
            SourceWarning::CorruptLinesSkipped {
                count,
                first_line: 3,
                first_reason: "bad FILE number",
                ..
            } if *count == orphans as u64 + 2
        ),
        "{:?}",
        warnings[0]
    );
    // The damaged FUNC (`hash`) is gone: its address falls back to the
    // PUBLIC before it, as in Breakpad. The rest still answers.
    let addr_of = |name: &str| {
        let rec = text
            .lines()
            .find(|l| l.starts_with("FUNC ") && l.ends_with(&format!(" {name}")))
            .unwrap();
        u64::from_str_radix(rec.split(' ').nth(1).unwrap(), 16).unwrap()
    };
    let info = src
        .lookup_code(addr_of("hash"), CodeWant::default())
        .unwrap();
    assert!(info.frames.is_empty());
    assert_eq!(&*info.symbol.unwrap().name, "frame_dummy");
    let info = src
        .lookup_code(addr_of("main"), CodeWant::default())
        .unwrap();
    assert_eq!(info.frames[0].function.as_deref(), Some("main"));
}

#[test]
fn hostile_module_names_stay_inside_the_store() {
    let (id, _, _) = plain();
    for name in ["..", "/", "a/..", "x\0y", "../../etc/passwd"] {
        let (_, trail) = find(vec![fixture_store()], &id, name);
        for a in &trail {
            assert!(!a.place.contains("/../"), "{name:?}: {}", a.place);
        }
    }
}

#[test]
fn symbolizer_front_uses_the_provider() {
    let (id, _, _) = plain();
    let config = SymbolizerConfig {
        providers: providers(&[fixture_store()]),
    };
    let mut sym = Symbolizer::new(config);
    let key = ModuleKey {
        build_id: id,
        name: "plain-O2".into(),
        image_base_hint: None,
    };
    let opened = sym.open(&key);
    let src = opened.source.unwrap();
    assert!(src.origin().ends_with("plain-O2.sym"));
    assert!(src.lookup_data(0x4000, DataWant::default()).is_err());
    assert!(providers(&[]).is_empty());
}

/// `--explain` names each place once: a miss that carries the file's path
/// (build ID mismatch, unreadable file) is not printed with it again.
#[test]
fn explain_prints_each_path_once() {
    let (id, debug_id, text) = plain();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    // Same first 16 bytes (so the same debug ID), another CODE_ID.
    let mut other = id.0.clone();
    *other.last_mut().unwrap() ^= 0xff;
    let other = BuildId(other);
    let sym = put(
        root,
        &format!("plain-O2/{debug_id}/plain-O2.sym"),
        text.as_bytes(),
    );
    let empty_id = BuildId::from_hex("aabbccdd").unwrap();
    let empty_debug_id = debug_id_for(&empty_id);
    let empty = put(root, &format!("empty/{empty_debug_id}/empty.sym"), b"");
    let no_debug = tempfile::tempdir().unwrap();
    let log = format!(
        "{{{{{{module:0:plain-O2:elf:{other}}}}}}}\n\
{{{{{{mmap:0x1000:0x1000:load:0:rx:0x1000}}}}}}\n\
{{{{{{module:1:empty:elf:{empty_id}}}}}}}\n\
{{{{{{mmap:0x3000:0x1000:load:1:rx:0x0}}}}}}\n\
{{{{{{pc:0x1140}}}}}}\n{{{{{{pc:0x3000}}}}}}\n"
    );
    let (_, stderr, _) = common::symfilter(
        &[
            "--format=llvm",
            "--explain",
            "--no-debuginfod",
            "--no-default-paths",
            "--breakpad-store",
            root.to_str().unwrap(),
            "--build-id-dir",
            no_debug.path().to_str().unwrap(),
        ],
        log.as_bytes(),
    );
    let r = root.display();
    let d = no_debug.path().display();
    assert_eq!(
        stderr,
        format!(
            "symfilter: explain: module #0 \"plain-O2\" build ID {other}:\n\
symfilter:   [build-id-dir] {d}/.build-id/{h0}/{t0}.debug: no file found\n\
symfilter:   [build-id-dir] {d}/.build-id/{h0}/{t0}: no file found\n\
symfilter:   [build-id-dir] {d}/{h0}/{t0}.debug: no file found\n\
symfilter:   [build-id-dir] {d}/{h0}/{t0}: no file found\n\
symfilter:   [breakpad] {}: build ID is {id}, expected {other}\n\
symfilter:   [breakpad] {r}/*/{debug_id}/*.sym: no file found\n\
symfilter: <stdin>:5:7: no symbols for module #0 \"plain-O2\" (build ID {other}): \
6 place(s) tried; --explain lists them\n\
symfilter: explain: module #1 \"empty\" build ID {empty_id}:\n\
symfilter:   [build-id-dir] {d}/.build-id/aa/bbccdd.debug: no file found\n\
symfilter:   [build-id-dir] {d}/.build-id/aa/bbccdd: no file found\n\
symfilter:   [build-id-dir] {d}/aa/bbccdd.debug: no file found\n\
symfilter:   [build-id-dir] {d}/aa/bbccdd: no file found\n\
symfilter:   [breakpad] {}: empty file\n\
symfilter:   [breakpad] {r}/*/{empty_debug_id}/*.sym: no file found\n\
symfilter: <stdin>:6:7: no symbols for module #1 \"empty\" (build ID {empty_id}): \
6 place(s) tried; --explain lists them\n",
            sym.display(),
            empty.display(),
            h0 = &other.to_hex()[..2],
            t0 = &other.to_hex()[2..],
        )
    );
}
