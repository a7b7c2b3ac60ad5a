//! Hexadecimal digits and numbers, read without the standard library's
//! generic radix parsing: every address of a log and of a Breakpad `.sym`
//! file, and every build ID, goes through here.

/// The value of hex digit `c` (either case).
#[inline]
pub(crate) fn digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// `v` with hex digit `c` (either case) appended; `None` when `c` is not a
/// hex digit or the result needs more than 64 bits (leading zeros are free,
/// as with `u64::from_str_radix`).
#[inline]
pub(crate) fn push_digit(v: u64, c: u8) -> Option<u64> {
    let d = digit(c)?;
    // `v * 16` overflows exactly when one of the top four bits is set.
    if v >> 60 != 0 {
        return None;
    }
    Some(v << 4 | u64::from(d))
}
