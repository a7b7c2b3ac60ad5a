//! SanitizerCoverage PC lists (`{{{dumpfile:sancov:NAME}}}`): the file
//! format, and the covered functions its PCs resolve to.

use std::collections::BTreeMap;
use std::path::Path;

use crate::context::{Context, Module};
use crate::demangle::demangle_full;
use crate::symbols::{CodeWant, ModuleKey, Symbolizer};

/// SanitizerCoverage magic for 64-bit PCs.
pub const SANCOV_MAGIC_64: u64 = 0xC0BF_FFFF_FFFF_FF64;
/// SanitizerCoverage magic for 32-bit PCs.
pub const SANCOV_MAGIC_32: u64 = 0xC0BF_FFFF_FFFF_FF32;

/// Why a sancov file could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SancovError {
    #[error("too short for a sancov file ({0} bytes, the magic alone is 8)")]
    TooShort(usize),
    /// The first 8 bytes are no sancov magic (not shown: the file is named
    /// by an untrusted log).
    #[error("not a sancov file")]
    BadMagic,
    #[error("truncated: {len} bytes of PCs is not a multiple of {width}")]
    Truncated { len: usize, width: usize },
}

/// A parsed sancov file: the PCs, borrowed from the file bytes.
#[derive(Clone, Copy, Debug)]
pub struct Sancov<'a> {
    /// 32 or 64.
    pub bits: u32,
    data: &'a [u8],
}

impl<'a> Sancov<'a> {
    pub fn parse(data: &'a [u8]) -> Result<Sancov<'a>, SancovError> {
        let Some((magic, rest)) = data.split_first_chunk::<8>() else {
            return Err(SancovError::TooShort(data.len()));
        };
        let bits = match u64::from_le_bytes(*magic) {
            SANCOV_MAGIC_64 => 64,
            SANCOV_MAGIC_32 => 32,
            _ => return Err(SancovError::BadMagic),
        };
        let width = bits as usize / 8;
        if rest.len() % width != 0 {
            return Err(SancovError::Truncated {
                len: rest.len(),
                width,
            });
        }
        Ok(Sancov { bits, data: rest })
    }

    /// Number of PCs.
    pub fn len(&self) -> usize {
        self.data.len() / (self.bits as usize / 8)
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The PCs in file order.
    pub fn pcs(&self) -> impl Iterator<Item = u64> + 'a {
        let wide = self.bits == 64;
        let width = self.bits as usize / 8;
        self.data.chunks_exact(width).map(move |c| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            if wide {
                u64::from_le_bytes(b)
            } else {
                u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
        })
    }
}

/// Covered functions of a sancov dump.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    pub pcs: usize,
    pub bits: u32,
    /// PCs that resolved to no function.
    pub unresolved: usize,
    /// Demangled function name -> number of PCs.
    pub functions: BTreeMap<String, usize>,
}

/// The module a Linux `MODULE.PID.sancov` file belongs to, else the only
/// module of the context.
fn file_module<'c>(path: &Path, context: &'c Context) -> Option<&'c Module> {
    let file = path.file_name()?.to_string_lossy().into_owned();
    let stem = file.strip_suffix(".sancov").unwrap_or(&file);
    let stem = match stem.rsplit_once('.') {
        Some((m, pid)) if !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) => m,
        _ => stem,
    };
    let base = |m: &Module| {
        let n = m.name_lossy().into_owned();
        match n.rsplit_once('/') {
            Some((_, b)) => b.to_string(),
            None => n,
        }
    };
    let mut mods: Vec<&Module> = context.modules().collect();
    mods.sort_by_key(|m| m.id);
    if let Some(m) = mods.iter().find(|m| base(m) == stem) {
        return Some(m);
    }
    match mods.as_slice() {
        [only] => Some(only),
        _ => None,
    }
}

/// Resolve every PC of a sancov dump to its function, looking up code
/// with `want`.
pub fn resolve_coverage(
    sancov: &Sancov<'_>,
    path: &Path,
    context: &Context,
    symbolizer: &mut Symbolizer,
    want: CodeWant,
) -> Coverage {
    let fallback = file_module(path, context).map(|m| m.id);
    let mut cov = Coverage {
        pcs: sancov.len(),
        bits: sancov.bits,
        ..Coverage::default()
    };
    // Module-relative PCs by module, so each module is opened once and each
    // distinct PC looked up once.
    let mut by_module: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for pc in sancov.pcs() {
        let (id, rel) = match context.lookup(pc) {
            Some(loc) if loc.region.mode.exec => (loc.module.id, loc.rel),
            _ => match fallback {
                Some(id) => (id, pc),
                None => {
                    cov.unresolved += 1;
                    continue;
                }
            },
        };
        by_module.entry(id).or_default().push(rel);
    }
    for (id, mut rels) in by_module {
        let Some(module) = context.module(id) else {
            cov.unresolved += rels.len();
            continue;
        };
        rels.sort_unstable();
        let src = symbolizer.open(&ModuleKey::of(context, module)).source.ok();
        for run in rels.chunk_by(|a, b| a == b) {
            let name = src.and_then(|src| match src.lookup_code(run[0], want) {
                Ok(info) => info
                    .frames
                    .first()
                    .and_then(|f| f.function.clone())
                    .or_else(|| info.symbol.as_ref().map(|s| s.name.clone())),
                Err(_) => None,
            });
            match name {
                Some(n) => *cov.functions.entry(demangle_full(&n)).or_insert(0) += run.len(),
                None => cov.unresolved += run.len(),
            }
        }
    }
    cov
}

pub(super) fn coverage_json(c: &Coverage) -> serde_json::Value {
    serde_json::json!({
        "pcs": c.pcs,
        "bits": c.bits,
        "unresolved": c.unresolved,
        "functions": c.functions.iter().map(|(n, k)| serde_json::json!({"name": n, "pcs": k})).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(magic: u64, pcs: &[u8]) -> Vec<u8> {
        let mut v = magic.to_le_bytes().to_vec();
        v.extend_from_slice(pcs);
        v
    }

    #[test]
    fn sancov_64_and_32() {
        let mut pcs = Vec::new();
        pcs.extend_from_slice(&0x1234u64.to_le_bytes());
        pcs.extend_from_slice(&0xffff_0000_0000_0001u64.to_le_bytes());
        let data = file(SANCOV_MAGIC_64, &pcs);
        let s = Sancov::parse(&data).expect("valid");
        assert_eq!(s.bits, 64);
        assert_eq!(s.pcs().collect::<Vec<_>>(), [0x1234, 0xffff_0000_0000_0001]);

        let data = file(SANCOV_MAGIC_32, &[1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        let s = Sancov::parse(&data).expect("valid");
        assert_eq!(s.bits, 32);
        assert_eq!(s.pcs().collect::<Vec<_>>(), [1, 0xffff_ffff]);
    }

    proptest::proptest! {
        #[test]
        fn sancov_any_bytes(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
                            wide in proptest::prelude::any::<bool>()) {
            let magic = if wide { SANCOV_MAGIC_64 } else { SANCOV_MAGIC_32 };
            for bytes in [data.clone(), file(magic, &data)] {
                if let Ok(s) = Sancov::parse(&bytes) {
                    let width = s.bits as usize / 8;
                    proptest::prop_assert_eq!(s.pcs().count(), (bytes.len() - 8) / width);
                    proptest::prop_assert_eq!(s.len(), s.pcs().count());
                }
            }
        }
    }

    #[test]
    fn sancov_bad() {
        assert_eq!(
            Sancov::parse(&[1, 2, 3]).err(),
            Some(SancovError::TooShort(3))
        );
        assert_eq!(Sancov::parse(&[0; 8]).err(), Some(SancovError::BadMagic));
        assert_eq!(
            Sancov::parse(&file(SANCOV_MAGIC_64, &[0; 12])).err(),
            Some(SancovError::Truncated { len: 12, width: 8 })
        );
        assert_eq!(
            Sancov::parse(&file(SANCOV_MAGIC_32, &[0; 6])).err(),
            Some(SancovError::Truncated { len: 6, width: 4 })
        );
        let empty = file(SANCOV_MAGIC_64, &[]);
        assert!(Sancov::parse(&empty).expect("valid").is_empty());
    }
}
