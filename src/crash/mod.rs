//! Crash-report frames without markup: the stack frames that sanitizer
//! runtimes, Android's debuggerd, systemd-coredump and LLVM's crash handler
//! print when they cannot symbolize, recognised so the filter can symbolize
//! them in place.
//!
//! Like [`crate::markup`] this is lexer-level: bytes in, a typed
//! [`CrashFrame`] out, and nothing of ELF or symbols. A line is recognised
//! only when it matches one producer's grammar completely (each grammar is
//! in its module and in the README); anything else is not a frame.
//!
//! Plain text must stay fast: [`Candidates`] finds the lines worth parsing
//! with two SIMD searches (`#`, which starts every frame, and `uild`, in
//! `BuildId:` and `build-id`), so a log without frames costs two scans.

mod android;
mod llvm;
mod sanitizer;
mod systemd;

use std::ops::Range;

/// Who printed a frame (decides the address adjustment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Producer {
    /// ASan, TSan, UBSan, LSan, MSan (`symbolize=0`).
    Sanitizer,
    /// Android tombstones and logcat crash dumps.
    Android,
    /// systemd-coredump / `coredumpctl info`.
    Systemd,
    /// LLVM's crash handler (`PrintStackTrace`).
    Llvm,
}

/// How the printed offset relates to the instruction to look up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adjust {
    /// The producer stepped return addresses back already.
    AsPrinted,
    /// A return address: the caller's instruction is before it.
    ReturnAddress,
}

/// One recognised frame (or sanitizer `SUMMARY` location).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrashFrame<'a> {
    pub producer: Producer,
    /// The `#N` frame number; `None` for a `SUMMARY` line (one location).
    pub frame: Option<u64>,
    /// The absolute address printed, when the producer prints one.
    pub addr: Option<u64>,
    /// The module as printed (a path or a file name).
    pub module: &'a [u8],
    /// The module-relative offset as printed.
    pub offset: u64,
    /// The build ID printed on the line (hex), if any.
    pub build_id: Option<&'a [u8]>,
    pub adjust: Adjust,
    /// The bytes the frame covers; what is before it (indentation, a log
    /// prefix) and after it (trailing blanks, `\r`) is kept untouched.
    pub span: Range<usize>,
}

/// What a line is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recognised<'a> {
    Frame(CrashFrame<'a>),
    /// systemd's `Module NAME with build-id HEX`: the build ID of the
    /// module later frames name `NAME`.
    ModuleBuildId {
        name: &'a [u8],
        build_id: &'a [u8],
    },
}

/// Recognise one line (without its `\n`).
pub fn recognise(line: &[u8]) -> Option<Recognised<'_>> {
    if let Some(m) = systemd::module_line(line) {
        return Some(m);
    }
    let frame = match frame_start(line) {
        Some(hash) => {
            let body = &line[hash..];
            sanitizer::frame(body)
                .or_else(|| android::frame(body))
                .or_else(|| systemd::frame(body))
                .or_else(|| llvm::frame(body))
                .map(|mut f| {
                    f.span = f.span.start + hash..f.span.end + hash;
                    f
                })
        }
        None => sanitizer::summary(line),
    };
    frame.map(Recognised::Frame)
}

/// Where a frame's `#` is: the first `#` of the line, at its start or after
/// a blank (the bytes before it are a prefix kept as is).
fn frame_start(line: &[u8]) -> Option<usize> {
    let i = memchr::memchr(b'#', line)?;
    (i == 0 || matches!(line[i - 1], b' ' | b'\t')).then_some(i)
}

/// Finds the lines of a text that may hold a frame, a `SUMMARY` location or
/// a `Module ... with build-id` line: those with a `#` or `uild`.
pub struct Candidates {
    build: memchr::memmem::Finder<'static>,
}

impl Default for Candidates {
    fn default() -> Self {
        Candidates {
            build: memchr::memmem::Finder::new(b"uild"),
        }
    }
}

impl Candidates {
    /// The lines of `text` (complete lines, each ending in `\n`) that may
    /// be recognised, as ranges without the `\n`, in order.
    pub fn lines<'a>(&'a self, text: &'a [u8]) -> impl Iterator<Item = Range<usize>> + 'a {
        let mut hash = None;
        let mut build = None;
        let mut from = 0;
        std::iter::from_fn(move || {
            if from >= text.len() {
                return None;
            }
            // Each needle's next hit is kept until passed: every byte is
            // searched once per needle.
            let next = |hit: &mut Option<Option<usize>>, find: &dyn Fn(&[u8]) -> Option<usize>| {
                if hit.is_none_or(|h| h.is_some_and(|h| h < from)) {
                    *hit = Some(find(&text[from..]).map(|i| from + i));
                }
                hit.flatten()
            };
            let h = next(&mut hash, &|t| memchr::memchr(b'#', t));
            let b = next(&mut build, &|t| self.build.find(t));
            let at = match (h, b) {
                (Some(h), Some(b)) => h.min(b),
                (h, b) => h.or(b)?,
            };
            let start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |i| i + 1);
            let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i);
            from = end + 1;
            Some(start..end)
        })
    }
}

/// Shared pieces of the grammars: each takes bytes and returns what it read
/// and the rest.
mod lex {
    /// `#` and decimal digits: the frame number.
    pub fn frame_number(s: &[u8]) -> Option<(u64, &[u8])> {
        let s = s.strip_prefix(b"#")?;
        decimal(s)
    }

    /// One or more decimal digits (at most 9: frame numbers are small).
    pub fn decimal(s: &[u8]) -> Option<(u64, &[u8])> {
        let n = s.iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 || n > 9 {
            return None;
        }
        let v = s[..n]
            .iter()
            .fold(0u64, |v, d| v * 10 + u64::from(d - b'0'));
        Some((v, &s[n..]))
    }

    /// Hex digits (at least one, value fits 64 bits).
    pub fn hex(s: &[u8]) -> Option<(u64, &[u8])> {
        let n = s.iter().take_while(|b| b.is_ascii_hexdigit()).count();
        if n == 0 {
            return None;
        }
        let mut v = 0u64;
        for &c in &s[..n] {
            v = crate::base::hex::push_digit(v, c)?;
        }
        Some((v, &s[n..]))
    }

    /// `0x` and hex digits.
    pub fn hex0x(s: &[u8]) -> Option<(u64, &[u8])> {
        hex(s.strip_prefix(b"0x")?)
    }

    /// One or more spaces.
    pub fn spaces(s: &[u8]) -> Option<&[u8]> {
        let n = s.iter().take_while(|&&b| b == b' ').count();
        (n > 0).then_some(&s[n..])
    }

    /// A build ID: 16 to 64 hex digits, an even number (8-byte `fast`,
    /// 16-byte `md5`/`uuid`, 20-byte `sha1`, 32-byte hashes all fit).
    pub fn build_id(s: &[u8]) -> Option<(&[u8], &[u8])> {
        let n = s.iter().take_while(|b| b.is_ascii_hexdigit()).count();
        (n % 2 == 0 && (16..=64).contains(&n)).then(|| s.split_at(n))
    }

    /// ` (BuildId: HEX)`, the sanitizers' and Android's build ID suffix.
    pub fn build_id_suffix(s: &[u8]) -> Option<(&[u8], &[u8])> {
        let s = s.strip_prefix(b" (BuildId: ")?;
        let (id, s) = build_id(s)?;
        Some((id, s.strip_prefix(b")")?))
    }

    /// What may follow a frame: blanks and a `\r`, nothing else. Returns
    /// the length of the frame (`s` minus the tail).
    pub fn end(s: &[u8], whole: &[u8]) -> Option<usize> {
        s.iter()
            .all(|&b| matches!(b, b' ' | b'\t' | b'\r'))
            .then(|| whole.len() - s.len())
    }
}

#[cfg(test)]
mod tests;
