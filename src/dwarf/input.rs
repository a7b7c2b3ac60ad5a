//! Reading a DWARF section's bytes as gimli reads them: the same values
//! and an error in the same places (truncation, LEB128 overflow), without
//! gimli's generic reader, where a scan reads many small numbers.

/// gimli would have failed here.
#[derive(Debug)]
pub(crate) struct Malformed;

type Result<T> = std::result::Result<T, Malformed>;

pub(crate) struct Input<'a> {
    pub bytes: &'a [u8],
    pub pos: usize,
}

impl Input<'_> {
    #[inline]
    pub fn u8(&mut self) -> Result<u8> {
        let b = *self.bytes.get(self.pos).ok_or(Malformed)?;
        self.pos += 1;
        Ok(b)
    }

    pub fn fixed(&mut self, n: usize, big_endian: bool) -> Result<u64> {
        let end = self.pos.checked_add(n).ok_or(Malformed)?;
        let bytes = self.bytes.get(self.pos..end).ok_or(Malformed)?;
        self.pos = end;
        let mut v = 0u64;
        if big_endian {
            bytes.iter().for_each(|&b| v = v << 8 | u64::from(b));
        } else {
            bytes.iter().rev().for_each(|&b| v = v << 8 | u64::from(b));
        }
        Ok(v)
    }

    /// gimli's `leb128::read::unsigned`.
    #[inline]
    pub fn uleb(&mut self) -> Result<u64> {
        let byte = self.u8()?;
        if byte & 0x80 == 0 {
            return Ok(u64::from(byte));
        }
        let mut result = u64::from(byte & 0x7f);
        let mut shift = 7;
        loop {
            let byte = self.u8()?;
            result |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(result);
            }
            shift += 7;
            if shift >= 63 {
                break;
            }
        }
        let byte = self.u8()?;
        if byte != 0x00 && byte != 0x01 {
            return Err(Malformed);
        }
        Ok(result | u64::from(byte) << 63)
    }

    /// gimli's `leb128::read::signed`.
    pub fn sleb(&mut self) -> Result<i64> {
        let mut result: i64 = 0;
        let mut shift = 0;
        let mut byte;
        loop {
            byte = self.u8()?;
            if shift == 63 && byte != 0x00 && byte != 0x7f {
                return Err(Malformed);
            }
            result |= i64::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                break;
            }
        }
        if shift < 64 && byte & 0x40 != 0 {
            result |= !0 << shift;
        }
        Ok(result)
    }
}
