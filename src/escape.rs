//! Control characters shown escaped, for everything symfilter writes that
//! it did not copy from a log's plain text: module, symbol and file names
//! from a log or from debug info reach a terminal, where ESC, BEL or a C1
//! control (`\u{9b}` is CSI) could set the title, write the clipboard or
//! clear the screen. They are written as Rust writes them in `{:?}`
//! (`\u{1b}`, `\n`, `\t`); every other character is kept.

use std::borrow::Cow;

use crate::symbols::{Name, Text};

/// The slot of a [`Name`] holding [`demangled_name`] (the demangled forms
/// are in slots [`crate::demangle::FULL`] and [`crate::demangle::LLVM`]).
const SHOWN: usize = 2;

/// The full demangled form of `name` ([`crate::demangle::full`]) with its
/// control characters escaped, made once per name: printers show a name
/// once per frame.
pub fn demangled_name(name: &Name) -> &str {
    name.derived(SHOWN, || {
        let full = crate::demangle::full(name);
        match controls(full) {
            Cow::Owned(escaped) => Some(Text::from(escaped)),
            // The full form itself (`None`: the raw name).
            Cow::Borrowed(_) => name.made(crate::demangle::FULL).cloned().flatten(),
        }
    })
}

/// `s` with its control characters (Unicode `Cc`: C0, DEL and C1)
/// escaped.
pub fn controls(s: &str) -> Cow<'_, str> {
    if !may_hold_control(s.as_bytes()) {
        return Cow::Borrowed(s);
    }
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether `b` holds a byte that starts a control character: C0 and DEL
/// are those bytes; C1 characters are encoded 0xC2 0x80-0x9F. Every name
/// and path printed passes here, nearly always without one, so whole
/// blocks are tested without a branch per byte (the compiler turns a block
/// into a few vector instructions).
fn may_hold_control(b: &[u8]) -> bool {
    let hit = |x: u8| x < 0x20 || x == 0x7f || x == 0xc2;
    const BLOCK: usize = 16;
    let mut blocks = b.chunks_exact(BLOCK);
    for block in &mut blocks {
        if block.iter().fold(false, |any, &x| any | hit(x)) {
            return true;
        }
    }
    blocks.remainder().iter().any(|&x| hit(x))
}

/// Bytes as text (invalid UTF-8 replaced) with control characters escaped.
pub fn bytes(b: &[u8]) -> Cow<'_, str> {
    match String::from_utf8_lossy(b) {
        Cow::Borrowed(s) => controls(s),
        Cow::Owned(s) => Cow::Owned(controls(&s).into_owned()),
    }
}

/// Append `b` to `out` as it is, except for control characters: those of
/// its valid UTF-8 escaped as in [`controls`], and lone bytes 0x80-0x9F
/// (C1 controls to an 8-bit terminal) as `\x9b`. Other invalid UTF-8 (a
/// Latin-1 name) stays as it was.
pub fn push_bytes(out: &mut Vec<u8>, b: &[u8]) {
    for chunk in b.utf8_chunks() {
        out.extend_from_slice(controls(chunk.valid()).as_bytes());
        for &byte in chunk.invalid() {
            if (0x80..=0x9f).contains(&byte) {
                out.extend_from_slice(format!("\\x{byte:02x}").as_bytes());
            } else {
                out.push(byte);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_control_at_every_position_of_a_block() {
        for len in [1, 15, 16, 17, 31, 32, 33, 100] {
            for at in 0..len {
                for c in ["\u{1b}", "\u{7f}", "\u{9b}", "\n", "\0"] {
                    let s = format!("{}{c}{}", "a".repeat(at), "é".repeat(len - at));
                    assert!(matches!(controls(&s), Cow::Owned(_)), "{len} {at} {c:?}");
                }
            }
            assert!(matches!(controls(&"é".repeat(len)), Cow::Borrowed(_)));
        }
    }

    #[test]
    fn escapes_controls_only() {
        assert!(matches!(controls("plain é ✓ \\ \""), Cow::Borrowed(_)));
        assert_eq!(
            controls("a\u{1b}]52;c;eA==\u{7}b\u{9b}2J\t\r\n\u{7f}\0"),
            "a\\u{1b}]52;c;eA==\\u{7}b\\u{9b}2J\\t\\r\\n\\u{7f}\\0"
        );
        assert_eq!(bytes(b"x\x1b[2J\xff\xc2\x9b"), "x\\u{1b}[2J\u{fffd}\\u{9b}");
        let mut out = Vec::new();
        push_bytes(&mut out, b"caf\xe9 \x9b2J \x1b \xc2\x9b");
        assert_eq!(out, b"caf\xe9 \\x9b2J \\u{1b} \\u{9b}");
    }
}
