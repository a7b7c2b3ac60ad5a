//! A minimal symbol-table-only [`SymbolSource`] so a downloaded file can
//! answer lookups before the ELF/DWARF source is wired in (see
//! `super::open_elf`). Function and object symbols from `.symtab`
//! (`.dynsym` when there is none); no line information.

use std::fs::File;
use std::path::Path;

use object::read::ReadCache;
use object::{Object, ObjectSymbol, SymbolKind};

use crate::symbols::{CodeInfo, DataInfo, Miss, SymbolHit, SymbolSource};

struct Sym {
    address: u64,
    size: u64,
    name: String,
    file: Option<String>,
}

pub struct SymtabSource {
    origin: String,
    /// Sorted by address.
    code: Vec<Sym>,
    data: Vec<Sym>,
}

impl SymtabSource {
    pub fn open(path: &Path) -> Result<SymtabSource, Miss> {
        let origin = path.display().to_string();
        let unreadable = |reason: String| Miss::Unreadable {
            path: origin.clone(),
            reason,
        };
        let file = File::open(path).map_err(|e| unreadable(e.to_string()))?;
        let cache = ReadCache::new(file);
        let obj = object::File::parse(&cache).map_err(|e| unreadable(e.to_string()))?;
        let mut code = Vec::new();
        let mut data = Vec::new();
        collect(obj.symbols(), &mut code, &mut data);
        if code.is_empty() && data.is_empty() {
            collect(obj.dynamic_symbols(), &mut code, &mut data);
        }
        if code.is_empty() && data.is_empty() {
            return Err(Miss::NoInfo);
        }
        code.sort_by_key(|s| (s.address, std::cmp::Reverse(s.size)));
        data.sort_by_key(|s| (s.address, std::cmp::Reverse(s.size)));
        Ok(SymtabSource { origin, code, data })
    }
}

fn collect<'d, S: ObjectSymbol<'d>>(
    syms: impl Iterator<Item = S>,
    code: &mut Vec<Sym>,
    data: &mut Vec<Sym>,
) {
    let mut current_file: Option<String> = None;
    for sym in syms {
        if sym.kind() == SymbolKind::File {
            current_file = sym.name().ok().map(str::to_owned);
            continue;
        }
        if !sym.is_definition() {
            continue;
        }
        let Ok(name) = sym.name() else { continue };
        if name.is_empty() {
            continue;
        }
        let entry = Sym {
            address: sym.address(),
            size: sym.size(),
            name: name.to_owned(),
            file: if sym.is_local() {
                current_file.clone()
            } else {
                None
            },
        };
        match sym.kind() {
            SymbolKind::Text => code.push(entry),
            SymbolKind::Data => data.push(entry),
            _ => {}
        }
    }
}

/// The symbol covering `addr`: the last one starting at or before it whose
/// extent (at least one byte) includes it.
fn covering(syms: &[Sym], addr: u64) -> Option<SymbolHit> {
    let end = syms.partition_point(|s| s.address <= addr);
    syms[..end]
        .iter()
        .rev()
        .take(16)
        .find(|s| addr - s.address < s.size.max(1))
        .map(|s| SymbolHit {
            name: s.name.clone(),
            address: s.address,
            size: s.size,
            file: s.file.clone(),
        })
}

impl SymbolSource for SymtabSource {
    fn origin(&self) -> String {
        self.origin.clone()
    }

    fn lookup_code(&self, addr: u64) -> Result<CodeInfo, Miss> {
        match covering(&self.code, addr) {
            Some(hit) => Ok(CodeInfo {
                frames: Vec::new(),
                symbol: Some(hit),
            }),
            None => Err(Miss::NoInfo),
        }
    }

    fn lookup_data(&self, addr: u64) -> Result<DataInfo, Miss> {
        match covering(&self.data, addr) {
            Some(hit) => Ok(DataInfo {
                symbol: Some(hit),
                ..DataInfo::default()
            }),
            None => Err(Miss::NoInfo),
        }
    }
}
