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
        let mut i = buf.len();
        let mut v = v;
        loop {
            i -= 1;
            buf[i] = b"0123456789abcdef"[(v & 0xf) as usize];
            v >>= 4;
            if v == 0 {
                break;
            }
        }
        // Digits plus `0x` fill at least `width` (the buffer holds 32
        // digits, more than any width asked for).
        let digits = width.saturating_sub(2).clamp(buf.len() - i, 32);
        let start = buf.len() - digits - 2;
        buf[start] = b'0';
        buf[start + 1] = b'x';
        Hex { buf, start }
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf[self.start..]
    }
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
