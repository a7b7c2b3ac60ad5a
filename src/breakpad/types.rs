//! Records of a parsed Breakpad `.sym` file, and the ELF build ID -> debug
//! ID mapping.
//!
//! Records never own text: names and paths are [`Span`]s into the (memory
//! mapped) file, so parsing a file of hundreds of megabytes allocates only
//! the fixed-size record tables.

use crate::symbols::BuildId;

/// A byte range of the symbol file (names, paths). Files are limited to
/// 4 GiB so offsets fit in `u32`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    pub start: u32,
    pub len: u32,
}

impl Span {
    /// The bytes of `data` this span covers (empty if out of range, which
    /// cannot happen for spans made from the same data).
    pub fn bytes(self, data: &[u8]) -> &[u8] {
        let start = self.start as usize;
        data.get(start..start.saturating_add(self.len as usize))
            .unwrap_or_default()
    }

    /// The text of the span, invalid UTF-8 replaced.
    pub fn text(self, data: &[u8]) -> String {
        let b = self.bytes(data);
        // `from_utf8` has an ASCII fast path `from_utf8_lossy` lacks.
        match std::str::from_utf8(b) {
            Ok(s) => s.to_owned(),
            Err(_) => String::from_utf8_lossy(b).into_owned(),
        }
    }
}

/// The `MODULE os arch debug_id debug_file` record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModuleRecord {
    pub os: Span,
    pub arch: Span,
    pub debug_id: Span,
    pub debug_file: Span,
}

/// `FUNC [m] address size parameter_size name`, with the index ranges of its
/// line and inline records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Func {
    pub address: u64,
    pub size: u64,
    pub name: Span,
    /// `lines[first_line..end_line]`, sorted by address, non-overlapping.
    pub first_line: u32,
    pub end_line: u32,
    /// `inlines[first_inline..end_inline]`, in file order.
    pub first_inline: u32,
    pub end_inline: u32,
}

impl Func {
    pub fn contains(&self, addr: u64) -> bool {
        addr >= self.address && addr - self.address < self.size
    }

    pub fn end(&self) -> u64 {
        self.address.saturating_add(self.size)
    }
}

/// A line record: `address size line file_number`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    pub address: u64,
    pub size: u64,
    pub line: u32,
    pub file: u32,
}

impl Line {
    pub fn contains(&self, addr: u64) -> bool {
        addr >= self.address && addr - self.address < self.size
    }
}

/// `PUBLIC [m] address parameter_size name`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Public {
    pub address: u64,
    pub name: Span,
}

/// `file` of an [`Inline`] or [`Origin`] that names no file (`-1`, or the
/// old forms that have no such field).
pub const NO_FILE: u32 = u32::MAX;

/// `INLINE_ORIGIN origin_id name`, or the older
/// `INLINE_ORIGIN origin_id file_id name` (`file` is then the file of the
/// inlined function itself, else [`NO_FILE`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    pub id: u32,
    pub name: Span,
    pub file: u32,
}

/// `INLINE depth call_site_line call_site_file origin (address size)+`, or
/// the older `INLINE depth call_site_line origin (address size)+`, which
/// names no call-site file (`has_call_file` false, `call_file` [`NO_FILE`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inline {
    pub depth: u32,
    pub call_line: u32,
    pub call_file: u32,
    pub has_call_file: bool,
    pub origin: u32,
    /// `inline_ranges[first_range..end_range]`.
    pub first_range: u32,
    pub end_range: u32,
    /// Index in `inlines` just past this record's descendants (the records
    /// after it that are deeper), so a lookup can skip a whole subtree.
    pub subtree_end: u32,
}

/// Where each byte of a debug ID's GUID comes from in the build ID (and
/// back: the order is its own inverse).
const GUID_ORDER: [usize; 16] = [3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15];

/// The Breakpad debug identifier of an ELF module: the first 16 bytes of the
/// build ID (zero-padded when shorter) read as a GUID whose first three
/// fields are little-endian, printed in upper-case hex, followed by the age,
/// which is always 0 for ELF. 33 characters.
pub fn debug_id_for(build_id: &BuildId) -> String {
    let mut g = [0u8; 16];
    for (dst, src) in g.iter_mut().zip(build_id.0.iter()) {
        *dst = *src;
    }
    let mut s = String::with_capacity(33);
    for i in GUID_ORDER {
        use std::fmt::Write;
        let _ = write!(s, "{:02X}", g[i]);
    }
    s.push('0');
    s
}

/// The first 16 bytes of the build ID a debug ID was made from (see
/// [`debug_id_for`]): the GUID with its first three fields swapped back.
/// `None` when the ID does not start with 32 hex digits.
pub fn build_id_prefix(debug_id: &[u8]) -> Option<Vec<u8>> {
    let hex = std::str::from_utf8(debug_id.get(..32)?).ok()?;
    let guid = BuildId::from_hex(hex)?.0;
    GUID_ORDER.iter().map(|&i| guid.get(i).copied()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_id_prefix_undoes_debug_id_for() {
        let id = BuildId::from_hex("92096d1e210fe921260d87b06bd50423f274c8b0").unwrap();
        assert_eq!(
            build_id_prefix(debug_id_for(&id).as_bytes()),
            Some(id.0[..16].to_vec())
        );
        assert_eq!(
            build_id_prefix(b"0A0162BCF65D8ACC5BE5FE9C025165F60"),
            Some(vec![
                0xbc, 0x62, 0x01, 0x0a, 0x5d, 0xf6, 0xcc, 0x8a, 0x5b, 0xe5, 0xfe, 0x9c, 0x02, 0x51,
                0x65, 0xf6
            ])
        );
        // Found by cargo fuzz: byte 32 falls inside a 3-byte character.
        let cut = format!("{}\u{fffd}{}", "0".repeat(30), "0".repeat(8));
        assert_eq!(build_id_prefix(cut.as_bytes()), None);
        assert_eq!(build_id_prefix(b"0A0162BC"), None);
    }

    #[test]
    fn debug_id_swaps_guid_fields() {
        let id = BuildId::from_hex("000102030405060708090a0b0c0d0e0f10111213").unwrap();
        assert_eq!(debug_id_for(&id), "030201000504070608090A0B0C0D0E0F0");
    }

    #[test]
    fn debug_id_matches_dump_syms() {
        // MODULE lines written by Mozilla dump_syms 2.3.9 for clang-22
        // binaries linked with a SHA-1 and with an 8-byte build ID.
        let sha1 = BuildId::from_hex("92096d1e210fe921260d87b06bd50423f274c8b0").unwrap();
        assert_eq!(debug_id_for(&sha1), "1E6D09920F2121E9260D87B06BD504230");
        let short = BuildId::from_hex("a1b2c3d4e5f60708").unwrap();
        assert_eq!(debug_id_for(&short), "D4C3B2A1F6E5080700000000000000000");
    }

    #[test]
    fn debug_id_pads_short_ids() {
        let id = BuildId::from_hex("aabbccdd").unwrap();
        assert_eq!(debug_id_for(&id), "DDCCBBAA0000000000000000000000000");
    }
}
