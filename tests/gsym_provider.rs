//! `--gsym PATH` as a symbol source: matching files to modules by UUID,
//! frames and symbols, and hostile input (truncated files, wrong magic,
//! offsets past the end, every single-byte corruption) giving a reason and
//! a fallback, never a panic.

use std::path::{Path, PathBuf};

use symfilter::gsym::parser::{GsymView, Layout};
use symfilter::gsym::types::GsymError;
use symfilter::gsym::{GsymFile, providers};
use symfilter::symbols::{
    BuildId, CodeWant, DataWant, Frame, Miss, ModuleKey, Symbolizer, SymbolizerConfig,
};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/gsym")
}

fn uuid_of(name: &str) -> BuildId {
    BuildId(GsymFile::open(&dir().join(name)).unwrap().uuid().to_vec())
}

fn key(id: &BuildId) -> ModuleKey {
    ModuleKey {
        build_id: id.clone(),
        name: String::new(),
        image_base_hint: None,
    }
}

fn frame(f: &str, file: &str, line: u32) -> Frame {
    Frame {
        function: Some(f.into()),
        file: Some(file.into()),
        line,
        column: 0,
    }
}

#[test]
fn folder_matches_modules_by_uuid() {
    let tmp = tempfile::tempdir().unwrap();
    for f in ["inl_O2.gsym", "app_cpp_O2.gsym", "tiny.gsym"] {
        std::fs::copy(dir().join(f), tmp.path().join(f)).unwrap();
    }
    std::fs::create_dir(tmp.path().join("sub")).unwrap();
    std::fs::copy(
        dir().join("variants/inl_O2.v2be.gsym"),
        tmp.path().join("sub/other.gsym"),
    )
    .unwrap();
    std::fs::write(tmp.path().join("junk.txt"), b"not gsym").unwrap();

    let id = uuid_of("inl_O2.gsym");
    assert_eq!(id.to_hex(), "bc62010a5df6cc8a5be5fe9c025165f67f1bddd6");
    let mut sym = Symbolizer::new(SymbolizerConfig {
        providers: providers(&[tmp.path().to_path_buf()]),
    });
    let opened = sym.open(&key(&id));
    assert!(opened.first_time);
    let src = opened.source.ok().unwrap();
    assert!(src.origin().ends_with("inl_O2.gsym"), "{}", src.origin());
    let info = src.lookup_code(0x1181, CodeWant::default()).unwrap();
    assert_eq!(
        info.frames[..],
        [
            frame("leaf", "/gsym/src/inl.c", 12),
            frame("middle", "/gsym/src/inl.c", 17),
            frame("outer", "/gsym/src/inl.c", 24),
            frame("chain", "/gsym/src/inl.c", 30),
        ]
    );
    let s = info.symbol.as_ref().unwrap();
    assert_eq!((&*s.name, s.address, s.size), ("chain", 0x1170, 0x5c));

    // Symbol-table-only functions: a symbol, no frames.
    let info = src.lookup_code(0x1080, CodeWant::default()).unwrap();
    assert!(info.frames.is_empty());
    assert_eq!(&*info.symbol.as_ref().unwrap().name, "_start");
    // Gaps between functions are misses.
    assert_eq!(
        src.lookup_code(0x1096, CodeWant::default()),
        Err(Miss::NoInfo)
    );
    assert_eq!(
        src.lookup_code(0x10, CodeWant::default()),
        Err(Miss::NoInfo)
    );
    // Data lookups name the covering function at best.
    assert_eq!(
        src.lookup_data(0x1172, DataWant::default())
            .unwrap()
            .symbol
            .as_ref()
            .unwrap()
            .name,
        "chain".into()
    );

    // C++: linkage names, raw.
    let cpp = uuid_of("app_cpp_O2.gsym");
    let src = sym.open(&key(&cpp)).source.ok().unwrap();
    let info = src.lookup_code(0x1210, CodeWant::default()).unwrap();
    assert!(info.symbol.as_ref().unwrap().name.starts_with("_Z"));

    // An unknown build ID: one attempt naming the folder.
    let unknown = BuildId::from_hex("0123456789abcdef").unwrap();
    let opened = sym.open(&key(&unknown));
    let trail = opened.source.err().unwrap();
    assert_eq!(trail.len(), 1);
    assert_eq!(trail[0].failure, Some(Miss::NotFound));
}

#[test]
fn single_file_with_other_uuid_is_a_mismatch() {
    let p = dir().join("tiny.gsym");
    let mut sym = Symbolizer::new(SymbolizerConfig {
        providers: providers(std::slice::from_ref(&p)),
    });
    let id = uuid_of("inl_O2.gsym");
    let trail = sym.open(&key(&id)).source.err().unwrap();
    assert_eq!(
        trail[0].failure,
        Some(Miss::BuildIdMismatch {
            path: p.display().to_string(),
            found: uuid_of("tiny.gsym").to_hex(),
            expected: id.to_hex(),
        })
    );
}

#[test]
fn corrupt_file_gives_a_reason_and_falls_back() {
    let tmp = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(dir().join("inl_O2.gsym")).unwrap();
    let cut = tmp.path().join("cut.gsym");
    std::fs::write(&cut, &bytes[..60]).unwrap();
    let good = tmp.path().join("good");
    std::fs::create_dir(&good).unwrap();
    std::fs::copy(dir().join("inl_O2.gsym"), good.join("a.gsym")).unwrap();
    // In the folder, a damaged copy named after the build ID.
    let id = uuid_of("inl_O2.gsym");
    let bad_dir = tmp.path().join("bad");
    std::fs::create_dir(&bad_dir).unwrap();
    let mut wrong_magic = bytes.clone();
    wrong_magic[..4].copy_from_slice(b"MYSX");
    std::fs::write(bad_dir.join(format!("{}.gsym", id.to_hex())), &bytes[..100]).unwrap();
    std::fs::write(bad_dir.join("x.gsym"), &wrong_magic).unwrap();

    let mut sym = Symbolizer::new(SymbolizerConfig {
        providers: providers(&[cut.clone(), bad_dir.clone(), good.clone()]),
    });
    let opened = sym.open(&key(&id));
    let src = opened.source.ok().unwrap();
    assert!(src.origin().ends_with("good/a.gsym"));
    let trail = sym.trail(&id).unwrap();
    assert_eq!(trail.len(), 3);
    assert_eq!(
        trail[0].failure,
        Some(Miss::Unreadable {
            path: cut.display().to_string(),
            reason: "file is truncated: address table needs bytes 0x30..0x54 but the file has 0x3c"
                .into()
        })
    );
    let named = bad_dir.join(format!("{}.gsym", id.to_hex()));
    assert_eq!(
        trail[1].failure,
        Some(Miss::Unreadable {
            path: named.display().to_string(),
            reason: "file is truncated: address info offsets needs bytes 0x54..0x9c but the file has 0x64".into()
        })
    );
    assert_eq!(trail[2].failure, None);
}

#[test]
fn header_errors() {
    let bytes = std::fs::read(dir().join("inl_O2.gsym")).unwrap();
    let mut b = bytes.clone();
    b[..4].copy_from_slice(b"ELF\x7f");
    assert_eq!(Layout::parse(&b), Err(GsymError::BadMagic));
    let mut b = bytes.clone();
    b[4] = 3;
    assert_eq!(Layout::parse(&b), Err(GsymError::BadVersion(3)));
    let mut b = bytes.clone();
    b[6] = 3;
    assert_eq!(Layout::parse(&b), Err(GsymError::BadAddrOffSize(3)));
    // String table offset past the end of the file.
    let mut b = bytes.clone();
    b[20..24].copy_from_slice(&0xfff0u32.to_le_bytes());
    assert!(matches!(
        Layout::parse(&b),
        Err(GsymError::Truncated {
            what: "string table",
            ..
        })
    ));
    // A function info offset past the end: the lookup says so.
    let mut b = bytes.clone();
    let layout = Layout::parse(&b).unwrap();
    let at = layout.addr_info_offsets.start + 4 * 7;
    b[at..at + 4].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
    let layout = Layout::parse(&b).unwrap();
    let view = GsymView::new(&b, &layout);
    assert_eq!(
        view.lookup(0x1181),
        Err(GsymError::BadInfoOffset(0xffff_fff0))
    );
    // Through the SymbolSource: a miss with the path and the reason.
    let f = GsymFile::from_bytes(PathBuf::from("x.gsym"), b).unwrap();
    use symfilter::symbols::SymbolSource;
    assert_eq!(
        f.lookup_code(0x1181, CodeWant::default()),
        Err(Miss::Unreadable {
            path: "x.gsym".into(),
            reason: "invalid address info offset 0xfffffff0".into()
        })
    );
}

/// Every truncation and every single-byte change of real files (all
/// versions and byte orders): errors, never panics.
#[test]
fn every_truncation_and_byte_flip_is_survived() {
    let files = [
        "tiny.gsym",
        "inl_O2.gsym",
        "variants/inl_O2.v2be.gsym",
        "variants/tiny.v2off1be.gsym",
    ];
    let addrs = [
        0x0,
        0x1000,
        0x1181,
        0x11a4,
        0x1650,
        0x16bd,
        0x17d4,
        0x401000,
        0x401050,
        u64::MAX,
    ];
    let mut lookups = 0u64;
    for name in files {
        let bytes = std::fs::read(dir().join(name)).unwrap();
        let mut try_bytes = |b: &[u8]| {
            if let Ok(layout) = Layout::parse(b) {
                let view = GsymView::new(b, &layout);
                for &a in &addrs {
                    let _ = view.lookup(a);
                    lookups += 1;
                }
                for i in 0..view.num_addresses().min(64) {
                    let _ = view.function_at(i);
                }
            }
        };
        for n in 0..bytes.len() {
            try_bytes(&bytes[..n]);
        }
        for i in 0..bytes.len() {
            for v in [0x00, 0xff, 0x80, 0x01] {
                let mut b = bytes.clone();
                b[i] ^= v;
                try_bytes(&b);
            }
        }
    }
    assert!(lookups > 10_000);
}

/// A GSYM made from a `.sym` without a code ID carries the 16 bytes the
/// Breakpad debug ID keeps; it still serves the module.
#[test]
fn breakpad_derived_file_matches_by_debug_id_prefix() {
    let tmp = tempfile::tempdir().unwrap();
    let sym = std::fs::read_to_string(dir().join("inl_O2.sym")).unwrap();
    let no_code_id: String = sym
        .lines()
        .filter(|l| !l.starts_with("INFO CODE_ID"))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut b = symfilter::gsym_create::writer::GsymBuilder::new();
    symfilter::gsym_create::from_breakpad(no_code_id.as_bytes(), 0, &mut b).unwrap();
    b.finalize();
    let bytes = b.encode(&Default::default()).unwrap();
    let folder = tmp.path().join("store");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("inl_O2.gsym"), &bytes).unwrap();
    let id = uuid_of("inl_O2.gsym");
    let f = GsymFile::open(&folder.join("inl_O2.gsym")).unwrap();
    assert_eq!(f.uuid(), &id.0[..16]);
    for p in [folder.clone(), folder.join("inl_O2.gsym")] {
        let mut sym = Symbolizer::new(SymbolizerConfig {
            providers: providers(&[p]),
        });
        let src = sym.open(&key(&id)).source.ok().unwrap();
        let info = src.lookup_code(0x1181, CodeWant::default()).unwrap();
        assert_eq!(info.frames[0], frame("leaf", "/gsym/src/inl.c", 12));
        assert_eq!(info.frames.len(), 4);
    }
}
