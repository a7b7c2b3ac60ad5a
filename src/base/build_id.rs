use std::fmt;

use super::hex::digit;

/// An ELF build ID (the payload of the `NT_GNU_BUILD_ID` note).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BuildId(pub Vec<u8>);

impl BuildId {
    /// Parse lowercase/uppercase hex; odd lengths are read with a leading `0`
    /// (as LLVM does). Returns `None` for empty or non-hex input.
    pub fn from_hex(s: &str) -> Option<BuildId> {
        let s = s.as_bytes();
        if s.is_empty() {
            return None;
        }
        let mut out = Vec::with_capacity(s.len().div_ceil(2));
        let (head, rest) = if s.len() % 2 == 1 {
            s.split_at(1)
        } else {
            s.split_at(0)
        };
        if let [c] = head {
            out.push(digit(*c)?);
        }
        for pair in rest.chunks_exact(2) {
            out.push(digit(pair[0])? << 4 | digit(pair[1])?);
        }
        Some(BuildId(out))
    }

    pub fn to_hex(&self) -> String {
        let mut s = String::with_capacity(self.0.len() * 2);
        for b in &self.0 {
            use std::fmt::Write;
            let _ = write!(s, "{b:02x}");
        }
        s
    }
}

impl fmt::Display for BuildId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for BuildId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BuildId({})", self.to_hex())
    }
}
