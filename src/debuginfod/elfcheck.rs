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
    // SAFETY: the files checked here are never written in place: a
    // download in our own temporary file, or a cache entry, which every
    // debuginfod client (elfutils and us) replaces by rename and leaves
    // read-only.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| unreadable(e.to_string()))?;
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
