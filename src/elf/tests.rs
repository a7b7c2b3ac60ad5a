//! Provider tests: search order, build-ID and CRC checks, corrupt files.
//! Fixtures from testdata/elf (built by testdata/elf/build.sh).

use std::path::{Path, PathBuf};

use super::*;
use crate::symbols::{BuildId, CodeWant, DataWant, Locator, Miss, ModuleKey, Name, Note, Refusal};

fn bin(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/elf/bin")
        .join(name)
}

fn build_id(path: &Path) -> BuildId {
    BuildId(file::read_build_id(path).unwrap().unwrap())
}

fn key(id: &BuildId) -> ModuleKey {
    ModuleKey {
        build_id: id.clone(),
        name: "m".into(),
        image_base_hint: None,
    }
}

/// Copy `from` to `dir/.build-id/ab/cdef.debug` for build ID `id`.
fn plant(dir: &Path, id: &BuildId, from: &Path) -> PathBuf {
    let hex = id.to_hex();
    let sub = dir.join(".build-id").join(&hex[..2]);
    std::fs::create_dir_all(&sub).unwrap();
    let to = sub.join(format!("{}.debug", &hex[2..]));
    std::fs::copy(from, &to).unwrap();
    to
}

fn find(
    dirs: &[PathBuf],
    paths: &[PathBuf],
    id: &BuildId,
) -> (Option<Box<dyn SymbolSource>>, Vec<Attempt>) {
    let mut trail = Vec::new();
    let places = Places {
        build_id_dirs: dirs.to_vec(),
        symbol_paths: paths.to_vec(),
        defaults: false,
    };
    for p in providers(&places) {
        if let Some(src) = p.find(&key(id), &mut trail) {
            return (Some(src), trail);
        }
    }
    (None, trail)
}

fn function_at(src: &dyn SymbolSource, addr: u64) -> Option<String> {
    let info = src.lookup_code(addr, CodeWant::default()).ok()?;
    info.symbol.map(|s| s.name.to_string())
}

#[test]
fn build_id_dirs_are_searched_in_order_and_checked() {
    let want = bin("c_O2");
    let id = build_id(&want);
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    // The first tree holds the wrong file under the right name.
    plant(first.path(), &id, &bin("c_O0"));
    plant(second.path(), &id, &want);
    let dirs = [first.path().to_path_buf(), second.path().to_path_buf()];
    let (src, trail) = find(&dirs, &[], &id);
    let src = src.expect("found in the second tree");
    assert!(
        src.origin()
            .starts_with(&second.path().display().to_string())
    );
    assert!(matches!(
        trail[0].failure,
        Some(Miss::BuildIdMismatch { ref expected, .. }) if *expected == id.to_hex()
    ));
    // The remaining layouts of the first tree were tried before the second.
    let firsts = trail
        .iter()
        .take_while(|a| a.place.starts_with(&first.path().display().to_string()))
        .count();
    assert_eq!(firsts, 4);
    assert!(trail.last().unwrap().failure.is_none());
    assert_eq!(src.return_address_step(), 1);
}

#[test]
fn dot_build_id_folder_itself() {
    let want = bin("c_O2");
    let id = build_id(&want);
    let tree = tempfile::tempdir().unwrap();
    plant(tree.path(), &id, &want);
    let (src, _) = find(&[tree.path().join(".build-id")], &[], &id);
    assert!(src.is_some());
}

#[test]
fn missing_everywhere_is_a_trail_of_not_found() {
    let tree = tempfile::tempdir().unwrap();
    let id = BuildId(vec![0xab, 0xcd, 0xef]);
    let (src, trail) = find(&[tree.path().to_path_buf()], &[], &id);
    assert!(src.is_none());
    assert_eq!(trail.len(), 4);
    assert!(trail.iter().all(|a| a.failure == Some(Miss::NotFound)));
    assert!(trail[0].place.ends_with(".build-id/ab/cdef.debug"));
}

#[test]
fn corrupt_files_are_misses_not_panics() {
    let good = std::fs::read(bin("c_O2")).unwrap();
    let id = build_id(&bin("c_O2"));
    let tree = tempfile::tempdir().unwrap();
    let path = plant(tree.path(), &id, &bin("c_O2"));
    // Every truncation of the file, and some byte flips in its headers.
    let mut cuts: Vec<usize> = (0..good.len()).step_by(97).collect();
    cuts.extend([0, 4, 16, 52, 63, 64, 65, good.len() - 1]);
    for cut in cuts {
        std::fs::write(&path, &good[..cut]).unwrap();
        let (src, trail) = find(&[tree.path().to_path_buf()], &[], &id);
        if let Some(src) = src {
            // A file still carrying the build ID may load; lookups must not panic.
            for addr in (0x1000..0x1200).step_by(7) {
                let _ = src.lookup_code(addr, CodeWant::default());
                let _ = src.lookup_data(addr, DataWant::default());
            }
        } else {
            assert!(
                trail.iter().any(|a| matches!(
                    a.failure,
                    Some(Miss::Unreadable { .. } | Miss::BuildIdMismatch { .. })
                )),
                "cut at {cut}: {trail:?}"
            );
        }
    }
    for at in (0..0x800).step_by(5) {
        let mut bad = good.clone();
        bad[at] ^= 0xff;
        std::fs::write(&path, &bad).unwrap();
        let (src, _) = find(&[tree.path().to_path_buf()], &[], &id);
        if let Some(src) = src {
            for addr in (0x1000..0x1200).step_by(11) {
                let _ = src.lookup_code(addr, CodeWant::default());
                let _ = src.lookup_data(addr, DataWant::default());
            }
        }
    }
}

#[test]
fn debuglink_crc_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let stripped = dir.path().join("c_stripped");
    std::fs::copy(bin("c_stripped"), &stripped).unwrap();
    let mut debug = std::fs::read(bin("c_stripped.debug")).unwrap();
    debug.push(0); // same build ID, different CRC
    std::fs::write(dir.path().join("c_stripped.debug"), &debug).unwrap();
    let empty = tempfile::tempdir().unwrap();
    let src = open_file(&stripped, &[empty.path().to_path_buf()]).unwrap();
    // No debug file accepted: no DWARF, no .symtab.
    assert!(src.origin().ends_with("c_stripped"));
    let mut trail = Vec::new();
    let searcher = Searcher::new(&[empty.path().to_path_buf()], false);
    let found = open_checked(&stripped, None, Locator::File, &mut trail).unwrap();
    let parts = searcher
        .complete(vec![found], None, false, &mut trail)
        .unwrap();
    assert_eq!(parts.dwarf, None);
    let crc = trail
        .iter()
        .find(|a| a.provider == Locator::Debuglink && a.place.ends_with("/c_stripped.debug"))
        .expect("debuglink tried");
    assert!(
        matches!(&crc.failure, Some(Miss::CrcMismatch { .. })),
        "{crc:?}"
    );
    // With the right file, the debug info is used.
    std::fs::copy(bin("c_stripped.debug"), dir.path().join("c_stripped.debug")).unwrap();
    let src = open_file(&stripped, &[empty.path().to_path_buf()]).unwrap();
    assert!(src.origin().contains("debug info:"), "{}", src.origin());
    // The image is the binary itself, not the debug file nor the message.
    assert_eq!(src.image(), Some(stripped.clone()));
}

#[test]
fn debuglink_build_id_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let stripped = dir.path().join("c_stripped");
    std::fs::copy(bin("c_stripped"), &stripped).unwrap();
    // Right CRC cannot be faked cheaply; a different debug file fails on CRC
    // first. Check the build-ID tree path instead: a mismatching file there.
    let tree = tempfile::tempdir().unwrap();
    let id = build_id(&stripped);
    plant(tree.path(), &id, &bin("c_O0"));
    let mut trail = Vec::new();
    let searcher = Searcher::new(&[tree.path().to_path_buf()], false);
    let found = searcher.by_build_id(&id.0, &mut trail);
    assert!(found.is_empty());
    assert!(matches!(
        trail[0].failure,
        Some(Miss::BuildIdMismatch { .. })
    ));
}

#[test]
fn symbol_path_folder_merges_binary_and_debug_file() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("out/bin");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::copy(bin("c_stripped"), sub.join("app")).unwrap();
    // Renamed so the debug link cannot find it: only the index can.
    std::fs::copy(bin("c_stripped.debug"), dir.path().join("out/app.dbg")).unwrap();
    std::fs::write(sub.join("notes.txt"), b"not an ELF file at all").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.path(), sub.join("loop")).unwrap();
    let id = build_id(&bin("c_stripped"));
    let empty = tempfile::tempdir().unwrap();
    let (src, trail) = find(
        &[empty.path().to_path_buf()],
        &[dir.path().to_path_buf()],
        &id,
    );
    let src = src.unwrap_or_else(|| panic!("{trail:?}"));
    assert!(src.origin().contains("app.dbg"), "{}", src.origin());
    let info = src.lookup_code(0x1140, CodeWant::default()).unwrap();
    assert_eq!(&*info.symbol.unwrap().name, "outer");
    assert_eq!(
        info.frames.last().unwrap().file.as_deref(),
        Some("/elfsrc/prog.c")
    );
    // An unknown build ID reports the scan.
    let (none, trail) = find(&[], &[dir.path().to_path_buf()], &BuildId(vec![1, 2, 3]));
    assert!(none.is_none());
    assert!(
        trail
            .iter()
            .any(|a| a.provider == Locator::SymbolPath && a.place.contains("2 ELF files indexed"))
    );
}

#[test]
fn symbol_path_explicit_file() {
    let id = build_id(&bin("c_O2"));
    let empty = tempfile::tempdir().unwrap();
    let (src, _) = find(&[empty.path().to_path_buf()], &[bin("c_O2")], &id);
    let src = src.unwrap();
    assert_eq!(function_at(src.as_ref(), 0x1140).as_deref(), Some("outer"));
}

#[test]
fn data_lookup_names_the_global() {
    let src = open_file(&bin("c_O2"), &[]).unwrap();
    let data = std::fs::read(bin("c_O2")).unwrap();
    let obj = object::File::parse(&*data).unwrap();
    use object::{Object, ObjectSymbol};
    let points = obj
        .symbols()
        .find(|s| s.name() == Ok("g_points"))
        .unwrap()
        .address();
    let d = src.lookup_data(points + 12, DataWant::default()).unwrap();
    let sym = d.symbol.unwrap();
    assert_eq!(&*sym.name, "g_points");
    assert_eq!(sym.size, 32);
    assert_eq!(sym.address, points);
    // One past the end is not covered.
    assert!(
        src.lookup_data(points + 32, DataWant::default())
            .map(|d| d.symbol.unwrap().name)
            != Ok("g_points".into())
    );
}

#[test]
fn empty_build_id() {
    let (src, trail) = find(&[PathBuf::from("/nonexistent")], &[], &BuildId(Vec::new()));
    assert!(src.is_none());
    assert_eq!(trail[0].failure, Some(Miss::EmptyBuildId));
}

/// Flip bytes all over the DWARF (and everything else) of real files: every
/// lookup must come back, with an answer or a miss.
#[test]
fn byte_flips_anywhere_never_panic() {
    for name in ["c_O2", "cpp_O2", "dwz_prog", "split_dwp"] {
        let good = std::fs::read(bin(name)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        if name == "dwz_prog" {
            std::fs::copy(bin("dwz_common.debug"), dir.path().join("dwz_common.debug")).unwrap();
        }
        if name == "split_dwp" {
            std::fs::copy(bin("split_dwp.dwp"), dir.path().join("split_dwp.dwp")).unwrap();
        }
        let step = good.len() / 300 + 1;
        for at in (0..good.len()).step_by(step) {
            for flip in [0xffu8, 0x80] {
                let mut bad = good.clone();
                bad[at] ^= flip;
                std::fs::write(&path, &bad).unwrap();
                let Ok(src) = open_file(&path, &[dir.path().to_path_buf()]) else {
                    continue;
                };
                for addr in (0x1100..0x1200).step_by(9) {
                    let _ = src.lookup_code(addr, CodeWant::default());
                }
                for addr in (0x4000..0x4040).step_by(6) {
                    let _ = src.lookup_data(addr, DataWant::default());
                }
            }
        }
    }
}

#[test]
fn the_last_address_of_the_space_is_a_miss_not_a_panic() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bin/app_c_O2");
    let src = crate::elf::open_file(&path, &[]).expect("open fixture");
    // No DWARF frames there; the size-0 `_end` symbol still covers it, as
    // LLVM's symbol-table rule has it.
    for addr in [u64::MAX, u64::MAX - 1] {
        let info = src
            .lookup_code(addr, CodeWant::default())
            .expect("symbol-table answer");
        assert!(info.frames.is_empty());
        assert_eq!(info.symbol.map(|s| s.name), Some("_end".into()));
    }
}

/// `bytes` with the type of its build-ID note changed, so that it has none.
fn without_build_id_note(bytes: &[u8], id: &BuildId) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let mut desc = b"GNU\0".to_vec();
    desc.extend_from_slice(&id.0);
    let at = out
        .windows(desc.len())
        .position(|w| w == desc)
        .expect("build-ID note");
    // namesz, descsz, type, then the name: the type is 4 bytes before it.
    out[at - 4..at].copy_from_slice(&0x4242u32.to_le_bytes());
    out
}

#[test]
fn a_build_id_path_is_the_claim_when_the_file_has_no_note() {
    let want = bin("c_O2");
    let id = build_id(&want);
    let tree = tempfile::tempdir().unwrap();
    let planted = plant(tree.path(), &id, &want);
    std::fs::write(
        &planted,
        without_build_id_note(&std::fs::read(&want).unwrap(), &id),
    )
    .unwrap();
    assert_eq!(file::read_build_id(&planted).unwrap(), None);
    let (src, trail) = find(&[tree.path().to_path_buf()], &[], &id);
    let src = src.unwrap_or_else(|| panic!("{trail:?}"));
    assert_eq!(src.origin(), planted.display().to_string());
    let used = trail.iter().find(|a| a.failure.is_none()).expect("found");
    assert_eq!(used.note, Some(Note::TrustedPath));
    // A note naming another build ID is never taken.
    plant(tree.path(), &id, &bin("c_O0"));
    let (src, trail) = find(&[tree.path().to_path_buf()], &[], &id);
    assert!(src.is_none());
    assert!(matches!(
        trail[0].failure,
        Some(Miss::BuildIdMismatch { .. })
    ));
}

fn module_path(name: &str, id: &BuildId) -> (Option<Box<dyn SymbolSource>>, Vec<Attempt>) {
    let provider = ModulePathProvider {
        searcher: Searcher::new(&[], false),
    };
    let key = ModuleKey::new(id.clone(), name);
    let mut trail = Vec::new();
    (provider.find(&key, &mut trail), trail)
}

fn refusal(trail: &[Attempt]) -> Option<Refusal> {
    match trail {
        [
            Attempt {
                provider: Locator::ModulePath,
                failure: Some(Miss::Refused(why)),
                ..
            },
        ] => Some(*why),
        _ => None,
    }
}

#[test]
fn the_logged_path_serves_when_its_build_id_matches() {
    let want = bin("c_O2");
    let id = build_id(&want);
    let (src, trail) = module_path(want.to_str().unwrap(), &id);
    let src = src.unwrap_or_else(|| panic!("{trail:?}"));
    assert_eq!(function_at(src.as_ref(), 0x1140).as_deref(), Some("outer"));
    // Another build ID: refused, and its own ID is not said.
    let (src, trail) = module_path(bin("c_O0").to_str().unwrap(), &id);
    assert!(src.is_none());
    assert_eq!(refusal(&trail), Some(Refusal::OtherBuildId));
    let said = format!("{:?}", trail[0].failure);
    assert!(!said.contains(&build_id(&bin("c_O0")).to_hex()), "{said}");
    // A file without a note at a logged path is no claim at all.
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("bare");
    std::fs::write(
        &bare,
        without_build_id_note(&std::fs::read(&want).unwrap(), &id),
    )
    .unwrap();
    let (_, trail) = module_path(bare.to_str().unwrap(), &id);
    assert_eq!(refusal(&trail), Some(Refusal::NoBuildId));
}

#[test]
fn logged_paths_to_anything_but_regular_files_are_not_read() {
    let id = build_id(&bin("c_O2"));
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // Nobody writes to the FIFO: opening it to read would block forever.
    for (name, why) in [
        (fifo.to_str().unwrap(), Refusal::NotRegular),
        (dir.path().to_str().unwrap(), Refusal::NotRegular),
        ("/dev/zero", Refusal::NotRegular),
        ("/proc/self/maps", Refusal::KernelFileSystem),
        ("/proc/self/exe/nothing", Refusal::Unopenable),
        ("relative/path", Refusal::NotAbsolute),
        ("linux-vdso.so.1", Refusal::NotAbsolute),
    ] {
        let (src, trail) = module_path(name, &id);
        assert!(src.is_none(), "{name}");
        assert_eq!(refusal(&trail), Some(why), "{name}: {trail:?}");
    }
    let missing = dir.path().join("gone");
    let (_, trail) = module_path(missing.to_str().unwrap(), &id);
    assert_eq!(refusal(&trail), Some(Refusal::Missing));
    let short = dir.path().join("short");
    std::fs::write(&short, b"\x7fELF").unwrap();
    let (_, trail) = module_path(short.to_str().unwrap(), &id);
    assert_eq!(refusal(&trail), Some(Refusal::NotElf));
}

/// Every answer of every `.text` address of `path`, with line-0 columns.
fn every_text_answer(src: &ElfSource, path: &Path, order_reversed: bool) -> Vec<String> {
    use object::{Object, ObjectSection};
    let data = std::fs::read(path).unwrap();
    let obj = object::File::parse(&*data).unwrap();
    let text = obj.section_by_name(".text").unwrap();
    let mut addrs: Vec<u64> = (text.address()..text.address() + text.size()).collect();
    if order_reversed {
        addrs.reverse();
    }
    let want = CodeWant::default();
    let mut out: Vec<(u64, String)> = addrs
        .into_iter()
        .map(|a| (a, format!("{:?}", src.lookup_code(a, want))))
        .collect();
    out.sort();
    out.into_iter()
        .map(|(a, s)| format!("{a:#x} {s}"))
        .collect()
}

/// A module opened twice from the same files is one module: two threads
/// looking up every address at once, from opposite ends (so that each
/// parses units and functions the other then finds), answer exactly as a
/// module of its own on a copy of the files answers on one thread.
#[test]
fn a_module_opened_twice_is_shared_and_answers_alike_from_two_threads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    for (path, with) in [
        (root.join("testdata/bin/app_cpp_O2"), None),
        (root.join("testdata/bin/app_rust_v0"), None),
        (bin("dwz_prog"), Some("dwz_common.debug")),
        (bin("split_dwo"), Some("split_dwo.dwo")),
    ] {
        let name = path.file_name().unwrap();
        let copy = dir.path().join(name);
        std::fs::copy(&path, &copy).unwrap();
        if let Some(dwo) = with {
            std::fs::copy(bin(dwo), dir.path().join(dwo)).unwrap();
        }
        let alone = open_file(&copy, &[]).unwrap();
        let want = every_text_answer(&alone, &copy, false);
        let one = open_file(&path, &[]).unwrap();
        let other = open_file(&path, &[]).unwrap();
        assert!(one.same_module(&other), "{path:?}");
        assert!(!one.same_module(&alone), "{path:?}");
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| every_text_answer(&one, &path, false));
            let b = s.spawn(|| every_text_answer(&other, &path, true));
            (a.join().unwrap(), b.join().unwrap())
        });
        assert!(want.iter().any(|w| w.contains("line: ")), "{path:?}");
        if with.is_some() {
            // The supplementary or split file was found: functions named.
            assert!(
                want.iter().any(|w| w.contains("function: Some")),
                "{path:?}"
            );
        }
        for answers in [a, b] {
            assert_eq!(answers.len(), want.len());
            let differ = answers.iter().zip(&want).find(|(x, y)| x != y);
            assert!(differ.is_none(), "{path:?}: {differ:?}");
        }
    }
}

/// Asked without the symbol of named functions, a source gives the same
/// frames, and the symbol exactly where the outermost frame has no name
/// (what the human format shows): every `.text` address of a C++ program,
/// and of a split-DWARF program whose `.dwo` is missing (lines, no names).
#[test]
fn the_symbol_of_a_named_function_is_given_only_when_wanted() {
    use object::{Object, ObjectSection};
    let dir = tempfile::tempdir().unwrap();
    let lone = dir.path().join("split_dwo");
    std::fs::copy(bin("split_dwo"), &lone).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let unnamed_want = CodeWant {
        symbol_when_named: false,
        ..CodeWant::default()
    };
    for path in [root.join("testdata/bin/app_cpp_O2"), lone] {
        let src = open_file(&path, &[]).unwrap();
        let data = std::fs::read(&path).unwrap();
        let obj = object::File::parse(&*data).unwrap();
        let text = obj.section_by_name(".text").unwrap();
        let (mut named, mut unnamed) = (0, 0);
        for addr in text.address()..text.address() + text.size() {
            let all = src.lookup_code(addr, CodeWant::default());
            let some = src.lookup_code(addr, unnamed_want);
            let (Ok(all), Ok(some)) = (all, some) else {
                continue;
            };
            assert_eq!(all.frames, some.frames, "{path:?} {addr:#x}");
            if all.frames.last().is_some_and(|f| f.function.is_some()) {
                assert_eq!(some.symbol, None, "{path:?} {addr:#x}");
                named += 1;
            } else {
                assert_eq!(some.symbol, all.symbol, "{path:?} {addr:#x}");
                unnamed += usize::from(all.symbol.is_some());
            }
        }
        assert!(named > 0 || unnamed > 0, "{path:?}");
        if path.ends_with("split_dwo") {
            assert!(unnamed > 0 && named == 0, "{path:?}: {named} {unnamed}");
        } else {
            assert!(named > 0, "{path:?}");
        }
    }
}

/// A symbol spelled as the linkage name of the function its address is in
/// is that function's name, shared (demangled once, and written from the
/// same memory), on every `.text` address of a C++ and a Rust program;
/// its text is the symbol table's either way.
#[test]
fn a_symbol_spelled_as_its_function_shares_its_name() {
    use object::{Object, ObjectSection, ObjectSymbol};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for path in [
        root.join("testdata/bin/app_cpp_O2"),
        root.join("testdata/bin/app_rust_legacy"),
    ] {
        let src = open_file(&path, &[]).unwrap();
        let data = std::fs::read(&path).unwrap();
        let obj = object::File::parse(&*data).unwrap();
        let names: std::collections::HashSet<&str> =
            obj.symbols().filter_map(|s| s.name().ok()).collect();
        let text = obj.section_by_name(".text").unwrap();
        let (mut shared, mut apart) = (0, 0);
        for addr in text.address()..text.address() + text.size() {
            let Ok(info) = src.lookup_code(addr, CodeWant::default()) else {
                continue;
            };
            let Some(symbol) = &info.symbol else { continue };
            assert!(names.contains(symbol.name.raw()), "{path:?} {addr:#x}");
            let Some(function) = info.frames.last().and_then(|f| f.function.as_ref()) else {
                continue;
            };
            if function.raw() == symbol.name.raw() {
                assert!(Name::ptr_eq(function, &symbol.name), "{path:?} {addr:#x}");
                shared += 1;
            } else {
                assert!(!Name::ptr_eq(function, &symbol.name), "{path:?} {addr:#x}");
                apart += 1;
            }
        }
        assert!(shared > apart, "{path:?}: {shared} shared, {apart} apart");
    }
}
