//! The sanitizer runtimes' frames (compiler-rt's default stack-trace format
//! with `symbolize=0`) and `SUMMARY` lines:
//!
//! ```text
//!     #0 0x7f6268b195a6  (/tmp/b/libasan_lib.so+0x25a6) (BuildId: 5387d755...)
//!     #0 <null> <null> (tsan+0xe926e) (BuildId: 32cad0c8...)
//! SUMMARY: AddressSanitizer: heap-buffer-overflow (/tmp/b/libasan_lib.so+0x25a6) (BuildId: 5387d755...)
//! ```
//!
//! ASan, UBSan, LSan and MSan print `0xADDR` and an empty function (two
//! blanks); TSan prints no address, `<null> <null>` for function and file,
//! and the module's file name only. The runtimes step return addresses back
//! before printing, so the offset is looked up as printed.

use super::lex::{build_id_suffix, end, frame_number, hex0x, spaces};
use super::{Adjust, CrashFrame, Producer};

/// A frame line from its `#`.
pub fn frame(s: &[u8]) -> Option<CrashFrame<'_>> {
    let (n, rest) = frame_number(s)?;
    let rest = spaces(rest)?;
    let (addr, rest) = match rest.strip_prefix(b"<null> <null> (") {
        Some(rest) => (None, rest),
        None => {
            let (addr, rest) = hex0x(rest)?;
            (Some(addr), rest.strip_prefix(b"  (")?)
        }
    };
    let (module, offset, rest) = module_offset(rest)?;
    let (build_id, rest) = match build_id_suffix(rest) {
        Some((id, rest)) => (Some(id), rest),
        None => (None, rest),
    };
    let len = end(rest, s)?;
    Some(CrashFrame {
        producer: Producer::Sanitizer,
        frame: Some(n),
        addr,
        module,
        offset,
        build_id,
        adjust: Adjust::AsPrinted,
        span: 0..len,
    })
}

/// `SUMMARY: TOOL: WHAT (MODULE+0xOFF) (BuildId: HEX)`: the location of
/// the report's first frame.
pub fn summary(line: &[u8]) -> Option<CrashFrame<'_>> {
    let rest = line.strip_prefix(b"SUMMARY: ")?;
    let colon = memchr::memmem::find(rest, b"Sanitizer: ")?;
    let rest = &rest[colon + b"Sanitizer: ".len()..];
    // The location is the last ` (` group before the build ID.
    let id_at = memchr::memmem::rfind(rest, b" (BuildId: ")?;
    let open = memchr::memmem::rfind(&rest[..id_at], b" (")?;
    let start = line.len() - rest.len() + open + 1;
    let (module, offset, after) = module_offset(&line[start + 1..])?;
    let (build_id, after) = build_id_suffix(after)?;
    let len = end(after, line)?;
    Some(CrashFrame {
        producer: Producer::Sanitizer,
        frame: None,
        addr: None,
        module,
        offset,
        build_id: Some(build_id),
        adjust: Adjust::AsPrinted,
        span: start..len,
    })
}

/// `MODULE+0xOFF)`: the module (not empty) and offset, and the rest after
/// the `)`. The first `+0x` followed by hex digits and `)` ends the module.
pub(super) fn module_offset(s: &[u8]) -> Option<(&[u8], u64, &[u8])> {
    for plus in memchr::memmem::find_iter(s, b"+0x") {
        if plus == 0 {
            continue;
        }
        if let Some((off, rest)) = hex0x(&s[plus + 1..])
            && let Some(rest) = rest.strip_prefix(b")")
        {
            let module = &s[..plus];
            if module.contains(&b')') {
                return None;
            }
            return Some((module, off, rest));
        }
    }
    None
}
