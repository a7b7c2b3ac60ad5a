//! Hex numbers as text without `core::fmt` (decimal: the `itoa` crate): renderers print an address, a line
//! and a column for every frame, and the formatting machinery costs more
//! than the rest of a frame (measured on the filter benchmark).

/// `0x`-prefixed lowercase hex, zero-padded to `width` characters in all
/// (`{:#0width$x}`); `width` 0 gives `{:#x}`.
pub(crate) struct Hex {
    buf: [u8; 34],
    start: usize,
}

impl Hex {
    pub(crate) fn new(v: u64, width: usize) -> Hex {
        let mut buf = [b'0'; 34];
        // All 16 digits at the end, the leading zeros then kept as padding.
        buf[18..26].copy_from_slice(&hex8((v >> 32) as u32));
        buf[26..].copy_from_slice(&hex8(v as u32));
        let significant = (16 - v.leading_zeros() as usize / 4).max(1);
        // Digits plus `0x` fill at least `width` (the buffer holds 32
        // digits, more than any width asked for).
        let digits = width.saturating_sub(2).clamp(significant, 32);
        let start = buf.len() - digits - 2;
        buf[start] = b'0';
        buf[start + 1] = b'x';
        Hex { buf, start }
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf[self.start..]
    }
}

/// The 8 lowercase hex digits of `n`, all at once: each nibble spread to
/// its own byte, then `'0'` added, and `'a' - '0' - 10` more where the
/// nibble is 10 or above.
fn hex8(n: u32) -> [u8; 8] {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let mut x = u64::from(n);
    x = (x | x << 16) & 0x0000_ffff_0000_ffff;
    x = (x | x << 8) & 0x00ff_00ff_00ff_00ff;
    x = (x | x << 4) & 0x0f0f_0f0f_0f0f_0f0f;
    let letters = ((x + 6 * ONES) >> 4) & ONES;
    (x + u64::from(b'0') * ONES + letters * u64::from(b'a' - b'0' - 10)).to_be_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hex_matches_std() {
        for v in [0u64, 1, 0xf, 0x10, 0xdead_beef, u64::MAX] {
            for w in [0usize, 1, 3, 10, 18, 20] {
                assert_eq!(
                    Hex::new(v, w).as_bytes(),
                    format!("{v:#0w$x}").as_bytes(),
                    "{v} {w}"
                );
            }
        }
    }

    proptest! {
        #[test]
        fn hex_matches_std_everywhere(v: u64, w in 0usize..24) {
            let ours = Hex::new(v, w);
            let std = format!("{v:#0w$x}");
            prop_assert_eq!(ours.as_bytes(), std.as_bytes());
        }
    }
}
