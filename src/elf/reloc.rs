//! Relocations of a relocatable object's (`.o`) DWARF sections.
//!
//! In a `.o`, every reference from a debug section to a string, an
//! abbreviation set, a line program or a code address is a relocation
//! against a zero field: read as they are, all names are the first string
//! and every unit starts at address 0. Such files are found as debug files
//! (LLVM's own tests use them), so their sections are copied and the
//! absolute 32- and 64-bit relocations that DWARF uses are written in, as
//! `object`'s `RelocationMap` computes them (what addr2line's loader reads
//! through).

use object::{Object, ObjectKind, ObjectSection, RelocationMap};

/// `data` (the section's contents) with the relocations applied, or `None`
/// when the file is not relocatable or nothing in the section is relocated.
/// Relocations of other kinds or sizes, or outside the section, are left
/// alone.
pub(crate) fn relocated(
    obj: &object::File<'_>,
    sec: &object::Section<'_, '_>,
    data: &[u8],
) -> Option<Vec<u8>> {
    if obj.kind() != ObjectKind::Relocatable {
        return None;
    }
    let mut map = RelocationMap::default();
    let mut fields = Vec::new();
    for (offset, rel) in sec.relocations() {
        let size = match rel.size() {
            32 => 4,
            64 => 8,
            _ => continue,
        };
        let Some(at) = usize::try_from(offset)
            .ok()
            .filter(|&at| at.checked_add(size).is_some_and(|end| end <= data.len()))
        else {
            continue;
        };
        if map.add(obj, offset, rel).is_ok() {
            fields.push((at, size));
        }
    }
    if fields.is_empty() {
        return None;
    }
    let little = obj.is_little_endian();
    let mut out = data.to_vec();
    for (at, size) in fields {
        let field = &mut out[at..at + size];
        let mut bytes = [0u8; 8];
        if little {
            bytes[..size].copy_from_slice(field);
        } else {
            bytes[8 - size..].copy_from_slice(field);
        }
        let old = if little {
            u64::from_le_bytes(bytes)
        } else {
            u64::from_be_bytes(bytes)
        };
        let new = map.relocate(at as u64, old);
        if little {
            field.copy_from_slice(&new.to_le_bytes()[..size]);
        } else {
            field.copy_from_slice(&new.to_be_bytes()[8 - size..]);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A linked file's DWARF is final: never copied or rewritten.
    #[test]
    fn linked_files_are_left_alone() {
        let data = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/testdata/bin/app_c_O2"
        ))
        .expect("fixture");
        let obj = object::File::parse(&*data).expect("ELF");
        let sec = obj.section_by_name(".debug_info").expect("section");
        assert!(relocated(&obj, &sec, sec.data().expect("data")).is_none());
    }

    /// In the fixture object, the unit's name is a relocation against
    /// `.debug_str` (or its offsets table): unrelocated, every string
    /// reference reads the producer string at offset 0.
    #[test]
    fn object_string_references_are_relocated() {
        let data = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/testdata/elf/bin/reloc.o"
        ))
        .expect("fixture");
        let obj = object::File::parse(&*data).expect("ELF");
        let mut changed = 0;
        for sec in obj.sections() {
            if sec.name().is_ok_and(|n| n.starts_with(".debug_")) {
                let raw = sec.data().expect("data");
                if let Some(done) = relocated(&obj, &sec, raw) {
                    assert_eq!(done.len(), raw.len());
                    assert_ne!(done, raw);
                    changed += 1;
                }
            }
        }
        assert!(changed >= 3, "{changed} sections relocated");
    }
}
