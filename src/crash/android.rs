//! Android backtraces, as debuggerd writes them to tombstones and logcat
//! (format from the Android "Diagnosing native crashes" documentation):
//!
//! ```text
//!       #00 pc 00000000000bdcec  /apex/com.android.runtime/lib64/bionic/libc.so (abort+164) (BuildId: 6b7b...)
//! F DEBUG   :       #01 pc 0000000000001139  /data/local/tmp/app (main+20)
//!       #02 pc 000000000004fdbc  /data/app/base.apk (offset 0x1000) (BuildId: a6c7...)
//! ```
//!
//! `pc` is the ELF-relative address (8 hex digits on 32-bit devices, 16 on
//! 64-bit). libunwindstack already steps every frame but the first back by
//! one instruction, so it is looked up as printed. A frame without a build
//! ID is symbolized when an earlier line gave one for the same path.

use super::lex::{build_id_suffix, decimal, end, hex, spaces};
use super::{Adjust, CrashFrame, Producer};

pub fn frame(s: &[u8]) -> Option<CrashFrame<'_>> {
    let rest = s.strip_prefix(b"#")?;
    let (n, rest) = decimal(rest)?;
    let rest = spaces(rest)?.strip_prefix(b"pc ")?;
    let (offset, after) = hex(rest)?;
    if !matches!(rest.len() - after.len(), 8 | 16) {
        return None;
    }
    let rest = after.strip_prefix(b"  ")?;
    let path_len = rest
        .iter()
        .position(|&b| matches!(b, b' ' | b'\t' | b'\r'))
        .unwrap_or(rest.len());
    if path_len == 0 {
        return None;
    }
    let (module, mut rest) = rest.split_at(path_len);
    if let Some(r) = rest.strip_prefix(b" (offset 0x") {
        let (_, r) = hex(r)?;
        rest = r.strip_prefix(b")")?;
    }
    // ` (FUNCTION+N)`: the function may hold blanks and parentheses (a
    // demangled signature); it runs to the `)` before the build ID or the
    // end of the line.
    let id_at = memchr::memmem::rfind(rest, b" (BuildId: ");
    let before_id = &rest[..id_at.unwrap_or(rest.len())];
    if before_id.starts_with(b" (") {
        let trimmed = before_id.trim_ascii_end();
        if !trimmed.ends_with(b")") || (id_at.is_some() && trimmed.len() != before_id.len()) {
            return None;
        }
        rest = &rest[trimmed.len()..];
    }
    let (build_id, rest) = match build_id_suffix(rest) {
        Some((id, rest)) => (Some(id), rest),
        None => (None, rest),
    };
    let len = end(rest, s)?;
    Some(CrashFrame {
        producer: Producer::Android,
        frame: Some(n),
        addr: None,
        module,
        offset,
        build_id,
        adjust: Adjust::AsPrinted,
        span: 0..len,
    })
}
