//! Hexadecimal digits and numbers, read without the standard library's
//! generic radix parsing: every address of a log and of a Breakpad `.sym`
//! file, and every build ID, goes through here.

/// Each byte's value as a hex digit, [`NOT_A_DIGIT`] for the others.
static DIGITS: [u8; 256] = {
    let mut t = [NOT_A_DIGIT; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

const NOT_A_DIGIT: u8 = 0xff;

/// The value of hex digit `c` (either case). A table, not comparisons:
/// the digits of an address are a random mix of `0-9` and `a-f`, and a
/// branch on which range a digit is in goes wrong about every other digit.
#[inline]
pub(crate) fn digit(c: u8) -> Option<u8> {
    let d = DIGITS[usize::from(c)];
    (d != NOT_A_DIGIT).then_some(d)
}

/// `v` with hex digit `c` (either case) appended; `None` when `c` is not a
/// hex digit or the result needs more than 64 bits (leading zeros are free,
/// as with `u64::from_str_radix`).
#[inline]
pub(crate) fn push_digit(v: u64, c: u8) -> Option<u64> {
    push_value(v, digit(c)?)
}

/// `v` with a digit of value `d` (below 16, from [`digit`]) appended;
/// `None` when the result needs more than 64 bits.
#[inline]
pub(crate) fn push_value(v: u64, d: u8) -> Option<u64> {
    // `v * 16` overflows exactly when one of the top four bits is set.
    if v >> 60 != 0 {
        return None;
    }
    Some(v << 4 | u64::from(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_as_a_digit() {
        for c in 0..=255u8 {
            let want = (c as char).to_digit(16).map(|d| d as u8);
            assert_eq!(digit(c), want, "{c:#x}");
            assert_eq!(push_digit(0x0abc, c), want.map(|d| 0xabc0 | u64::from(d)));
        }
    }

    #[test]
    fn pushing_a_digit_checks_for_overflow() {
        assert_eq!(
            push_digit(0x0fff_ffff_ffff_ffff, b'e'),
            Some(0xffff_ffff_ffff_fffe)
        );
        assert_eq!(push_digit(0x1000_0000_0000_0000, b'0'), None);
        assert_eq!(push_digit(0, b'0'), Some(0));
    }
}
