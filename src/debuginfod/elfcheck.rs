//! Is this file an ELF with the build ID we asked for? The file is mapped
//! and only the headers, section names and notes are touched, so checking
//! a multi-gigabyte (or hostile) download costs neither time nor memory.

use std::fs::File;
use std::path::Path;

use object::{Object, ObjectSection, SectionKind};

use crate::symbols::{BuildId, Miss};

/// What the check learnt about a good file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElfFacts {
    /// Has a non-empty `.symtab` or `.debug_info`: worth symbolizing with.
    /// A stripped executable has neither (only `.dynsym`).
    pub has_symbols: bool,
    /// `.gnu_debugaltlink` (dwz): the supplementary file's recorded path
    /// and build ID.
    pub altlink: Option<(Vec<u8>, Vec<u8>)>,
}

/// Check `path` is an ELF file whose `NT_GNU_BUILD_ID` note is `expected`.
/// `shown` is how the file is named in the `Miss` (a URL for a download
/// still in its temporary file).
pub fn check(path: &Path, expected: &BuildId, shown: &str) -> Result<ElfFacts, Miss> {
    let unreadable = |reason: String| Miss::Unreadable {
        path: shown.to_owned(),
        reason,
    };
    let file = File::open(path).map_err(|e| unreadable(e.to_string()))?;
    let map =
        crate::base::mapped::FileMap::open(&file, path).map_err(|e| unreadable(e.to_string()))?;
    let obj =
        object::File::parse(&*map).map_err(|e| unreadable(format!("not an object file: {e}")))?;
    if obj.format() != object::BinaryFormat::Elf {
        return Err(unreadable(format!("not an ELF file ({:?})", obj.format())));
    }
    let found = obj
        .build_id()
        .map_err(|e| unreadable(format!("bad build ID note: {e}")))?;
    match found {
        Some(id) if id == expected.0.as_slice() => {}
        Some(id) => {
            return Err(Miss::BuildIdMismatch {
                path: shown.to_owned(),
                found: BuildId(id.to_vec()).to_hex(),
                expected: expected.to_hex(),
            });
        }
        None => {
            return Err(Miss::BuildIdMismatch {
                path: shown.to_owned(),
                found: "absent".to_owned(),
                expected: expected.to_hex(),
            });
        }
    }
    let present = |name: &str| {
        obj.section_by_name(name)
            .is_some_and(|s| s.size() > 0 && s.kind() != SectionKind::UninitializedData)
    };
    let altlink = obj
        .gnu_debugaltlink()
        .ok()
        .flatten()
        .filter(|(_, id)| !id.is_empty())
        .map(|(path, id)| (path.to_vec(), id.to_vec()));
    Ok(ElfFacts {
        has_symbols: present(".symtab") || present(".debug_info"),
        altlink,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const DEBUG: &[u8] = include_bytes!("../../testdata/debuginfod/hello.debug");
    const DWZ: &[u8] = include_bytes!("../../testdata/debuginfod/dwz/hello");

    fn id_of(name: &str) -> BuildId {
        let text = match name {
            "debug" => include_str!("../../testdata/debuginfod/build-id"),
            _ => include_str!("../../testdata/debuginfod/dwz/build-id"),
        };
        BuildId::from_hex(text.trim()).expect("hex")
    }

    fn check_bytes(bytes: &[u8], id: &BuildId) -> Result<ElfFacts, Miss> {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        std::fs::write(&path, bytes).expect("write");
        check(&path, id, "f")
    }

    #[test]
    fn facts_of_the_fixtures() {
        let facts = check_bytes(DEBUG, &id_of("debug")).expect("good");
        assert!(facts.has_symbols);
        assert_eq!(facts.altlink, None);
        let facts = check_bytes(DWZ, &id_of("dwz")).expect("good");
        let (path, sup) = facts.altlink.expect("altlink");
        assert_eq!(path, b"/usr/lib/debug/.dwz/symfilter-test-common.dwz");
        assert_eq!(
            BuildId(sup).to_hex(),
            include_str!("../../testdata/debuginfod/dwz/common-build-id").trim()
        );
        assert!(matches!(
            check_bytes(DEBUG, &id_of("dwz")),
            Err(Miss::BuildIdMismatch { .. })
        ));
        assert!(matches!(
            check_bytes(b"", &id_of("dwz")),
            Err(Miss::Unreadable { .. })
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Hostile downloads: corrupted headers, tables and notes are a
        /// `Miss`, never a panic.
        #[test]
        fn corrupted_files_never_panic(
            // The ELF header, the section headers (at the end) and anywhere.
            edits in proptest::collection::vec(
                (
                    prop_oneof![0usize..64, (DWZ.len() - 2560)..DWZ.len(), 0..DWZ.len()],
                    any::<u8>(),
                ),
                1..24,
            ),
            cut in 0usize..=DWZ.len(),
        ) {
            let mut bytes = DWZ.to_vec();
            for (at, b) in edits {
                bytes[at] = b;
            }
            bytes.truncate(cut.max(64));
            let _ = check_bytes(&bytes, &id_of("dwz"));
        }
    }
}
