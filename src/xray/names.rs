//! Function IDs to names: instrumentation map -> address -> symbolizer
//! (DWARF, inline-aware, through [`crate::symbols::Symbolizer`]) with the
//! binary's own symbol table as the fallback, demangled.

use std::collections::HashMap;

use object::elf;

use super::instr_map::InstrMap;
use crate::elf::symtab::{Table, elf_symbols};
use crate::symbols::{CodeWant, ModuleKey, Symbolizer};

/// What is known about one function ID.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionInfo {
    /// Demangled name, if any source knew it.
    pub name: Option<String>,
    /// Source file (base name) and line/column of the function's entry.
    pub file: Option<String>,
    pub line: u32,
    pub column: u32,
    pub address: Option<u64>,
}

/// Names for function IDs.
#[derive(Clone, Debug, Default)]
pub struct Names {
    by_id: HashMap<u32, FunctionInfo>,
}

impl Names {
    pub fn get(&self, id: u32) -> Option<&FunctionInfo> {
        self.by_id.get(&id)
    }

    /// The function's name; `@(address)` when the address has no name,
    /// `#ID` when the ID is not in the map (as `llvm-xray` writes them).
    pub fn name(&self, id: u32) -> String {
        match self.by_id.get(&id) {
            Some(FunctionInfo { name: Some(n), .. }) => n.clone(),
            Some(FunctionInfo {
                address: Some(a), ..
            }) => format!("@({a:x})"),
            _ => format!("#{id}"),
        }
    }

    /// `file:line:column` of the function, or `(unknown)`.
    pub fn location(&self, id: u32) -> String {
        match self.by_id.get(&id) {
            Some(FunctionInfo {
                file: Some(file),
                line,
                column,
                ..
            }) => format!("{file}:{line}:{column}"),
            _ => "(unknown)".to_string(),
        }
    }

    pub fn insert(&mut self, id: u32, info: FunctionInfo) {
        self.by_id.insert(id, info);
    }

    /// Resolve `ids`: ask the symbolizer for the module with the map's
    /// build ID first (code lookups with the want beside it); fall back to
    /// the symbol table of `binary` (the bytes the map was read from).
    pub fn resolve(
        map: &InstrMap,
        binary: Option<&[u8]>,
        module_name: &str,
        mut symbolizer: Option<(&mut Symbolizer, CodeWant)>,
        ids: impl IntoIterator<Item = u32>,
    ) -> Names {
        let symtab = binary.map(SymbolTable::parse).unwrap_or_default();
        let key = map.build_id.as_ref().map(|b| ModuleKey {
            build_id: b.clone(),
            name: module_name.to_string(),
            image_base_hint: None,
        });
        let mut names = Names::default();
        for id in ids {
            let Some(addr) = map.function_address(id) else {
                continue;
            };
            let mut info = FunctionInfo {
                address: Some(addr),
                ..FunctionInfo::default()
            };
            if let (Some((sym, want)), Some(key)) = (symbolizer.as_mut(), key.as_ref())
                && let Ok(source) = sym.open(key).source
                && let Ok(code) = source.lookup_code(addr, *want)
            {
                // Frames run innermost first; the last is the function the
                // address belongs to.
                if let Some(frame) = code.frames.last() {
                    info.name = frame.function.as_deref().map(demangle);
                    info.file = frame.file.as_deref().map(base_name);
                    info.line = frame.line;
                    info.column = frame.column;
                }
                if info.name.is_none() {
                    info.name = code.symbol.as_ref().map(|s| demangle(&s.name));
                }
            }
            if info.name.is_none() {
                info.name = symtab.lookup(addr).map(demangle);
            }
            names.insert(id, info);
        }
        names
    }
}

fn base_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

/// Demangle as `llvm-xray` (LLVM's symbolizer) does, so names compare
/// equal to its reports.
pub fn demangle(name: &str) -> String {
    crate::demangle::demangle_llvm(name)
}

/// Function symbols of a binary, sorted by address.
#[derive(Default)]
struct SymbolTable {
    syms: Vec<(u64, u64, String)>,
}

impl SymbolTable {
    fn parse(data: &[u8]) -> SymbolTable {
        let Ok(file) = object::File::parse(data) else {
            return SymbolTable::default();
        };
        let mut syms: Vec<(u64, u64, String)> = [Table::Static, Table::Dynamic]
            .into_iter()
            .flat_map(|table| elf_symbols(&file, table))
            .filter(|s| {
                matches!(s.kind, elf::STT_FUNC | elf::STT_GNU_IFUNC) && !s.common && s.value != 0
            })
            .filter_map(|s| {
                let name = std::str::from_utf8(s.name()?).ok()?;
                Some((s.value, s.size, name.to_string()))
            })
            .collect();
        // Prefer global names at equal addresses by keeping the first seen
        // (symtab order); sort stably by address.
        syms.sort_by_key(|s| s.0);
        syms.dedup_by_key(|s| s.0);
        SymbolTable { syms }
    }

    fn lookup(&self, addr: u64) -> Option<&str> {
        let i = self.syms.partition_point(|s| s.0 <= addr);
        let (start, size, name) = self.syms.get(i.checked_sub(1)?)?;
        (addr == *start || addr - start < (*size).max(1)).then_some(name.as_str())
    }
}
