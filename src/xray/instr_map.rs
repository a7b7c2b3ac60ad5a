//! The XRay instrumentation map: the `xray_instr_map` section the compiler
//! builds into every instrumented binary, one sled entry per patch point.
//! Function IDs are assigned the way the runtime and `llvm-xray` assign
//! them: 1 for the first function, counting up each time the entry's
//! function address changes.

use std::collections::HashMap;

use object::{
    Object, ObjectSection, ObjectSymbol, ObjectSymbolTable, RelocationFlags, RelocationTarget,
};

use crate::symbols::BuildId;

/// One sled: a patch point in a function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sled {
    pub address: u64,
    pub function: u64,
    /// 0 entry, 1 exit, 2 tail exit, 3 entry with arguments, 4 custom event.
    pub kind: u8,
    pub always_instrument: bool,
    pub version: u8,
}

/// Why a binary's instrumentation map could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InstrMapError {
    #[error("not an object file: {0}")]
    Object(#[from] object::Error),
    #[error("no xray_instr_map section (was it built with -fxray-instrument?)")]
    NoSection,
    #[error("xray_instr_map has no contents in this file (a stripped debug file?)")]
    NoContents,
    #[error("xray_instr_map size {size} is not a multiple of the {entry}-byte sled entry")]
    BadSize { size: usize, entry: usize },
}

/// Function ID -> function address (module-relative ELF virtual address).
#[derive(Clone, Debug, Default)]
pub struct InstrMap {
    /// `functions[id - 1]` is the address of function `id`.
    pub functions: Vec<u64>,
    pub sleds: Vec<Sled>,
    pub build_id: Option<BuildId>,
}

impl InstrMap {
    pub fn function_address(&self, id: u32) -> Option<u64> {
        let i = usize::try_from(id).ok()?.checked_sub(1)?;
        self.functions.get(i).copied()
    }

    /// Read the map from an ELF (or Mach-O) file's bytes.
    pub fn parse(data: &[u8]) -> Result<InstrMap, InstrMapError> {
        let file = object::File::parse(data)?;
        let build_id = file.build_id().ok().flatten().map(|b| BuildId(b.to_vec()));
        let section = file
            .sections()
            .find(|s| s.name().is_ok_and(|n| n == "xray_instr_map"))
            .ok_or(InstrMapError::NoSection)?;
        let contents = section.data()?;
        if contents.is_empty() && section.size() > 0 {
            return Err(InstrMapError::NoContents);
        }
        let base = section.address();
        let relocs = relocations(&file, &section);
        let little = file.is_little_endian();
        let word = if file.is_64() { 8 } else { 4 };
        let entry = 4 * word;
        if contents.len() % entry != 0 {
            return Err(InstrMapError::BadSize {
                size: contents.len(),
                entry,
            });
        }
        let read = |b: &[u8]| -> u64 {
            if word == 8 {
                let mut a = [0u8; 8];
                a.copy_from_slice(&b[..8]);
                if little {
                    u64::from_le_bytes(a)
                } else {
                    u64::from_be_bytes(a)
                }
            } else {
                let a = [b[0], b[1], b[2], b[3]];
                u64::from(if little {
                    u32::from_le_bytes(a)
                } else {
                    u32::from_be_bytes(a)
                })
            }
        };
        let mut map = InstrMap {
            build_id,
            ..InstrMap::default()
        };
        let mut current = None;
        for (i, chunk) in contents.chunks_exact(entry).enumerate() {
            let off = (i * entry) as u64;
            // A zero field may be filled in by a relocation (PIE binaries
            // and relocatable objects).
            let field = |at: u64, raw: u64| -> u64 {
                if raw == 0 {
                    relocs.get(&(base + off + at)).copied().unwrap_or(0)
                } else {
                    raw
                }
            };
            let mut address = field(0, read(&chunk[..word]));
            let mut function = field(word as u64, read(&chunk[word..2 * word]));
            let kind = chunk[2 * word];
            let always_instrument = chunk[2 * word + 1] != 0;
            let version = chunk[2 * word + 2];
            if version >= 2 {
                // Version 2 sleds hold addresses relative to the field.
                address = address.wrapping_add(base + off);
                function = function.wrapping_add(base + off + word as u64);
            }
            if word == 4 {
                address &= 0xffff_ffff;
                function &= 0xffff_ffff;
            }
            if current != Some(function) {
                current = Some(function);
                map.functions.push(function);
            }
            map.sleds.push(Sled {
                address,
                function,
                kind,
                always_instrument,
                version,
            });
        }
        Ok(map)
    }
}

/// Relocations that may fill fields of the section: dynamic ones in
/// executables and shared objects (offset = virtual address), the section's
/// own in relocatable objects. Maps target address -> value.
fn relocations(file: &object::File<'_>, section: &object::Section<'_, '_>) -> HashMap<u64, u64> {
    let mut out = HashMap::new();
    let arch = file.architecture();
    let mut add = |offset: u64,
                   rel: &object::Relocation,
                   symbols: &dyn Fn(object::SymbolIndex) -> Option<u64>| {
        let value = match rel.target() {
            RelocationTarget::Symbol(idx) => match symbols(idx) {
                Some(v) => v.wrapping_add(rel.addend() as u64),
                None => return,
            },
            RelocationTarget::Absolute => rel.addend() as u64,
            RelocationTarget::Section(_) => rel.addend() as u64,
            _ => return,
        };
        if is_relative(arch, rel.flags()) {
            out.insert(offset, rel.addend() as u64);
        } else {
            out.insert(offset, value);
        }
    };
    if let Some(dynrel) = file.dynamic_relocations() {
        let dynsym = |idx: object::SymbolIndex| {
            file.dynamic_symbol_table()
                .and_then(|t| t.symbol_by_index(idx).ok())
                .map(|s| s.address())
        };
        let (lo, hi) = (section.address(), section.address() + section.size());
        for (offset, rel) in dynrel {
            if (lo..hi).contains(&offset) {
                add(offset, &rel, &dynsym);
            }
        }
    }
    let sym = |idx: object::SymbolIndex| file.symbol_by_index(idx).ok().map(|s| s.address());
    for (offset, rel) in section.relocations() {
        add(section.address() + offset, &rel, &sym);
    }
    out
}

fn is_relative(arch: object::Architecture, flags: RelocationFlags) -> bool {
    use object::{Architecture as A, elf};
    let RelocationFlags::Elf { r_type } = flags else {
        return false;
    };
    let want = match arch {
        A::X86_64 => elf::R_X86_64_RELATIVE,
        A::I386 => elf::R_386_RELATIVE,
        A::Aarch64 => elf::R_AARCH64_RELATIVE,
        A::Arm => elf::R_ARM_RELATIVE,
        A::PowerPc64 => elf::R_PPC64_RELATIVE,
        A::Riscv64 => elf::R_RISCV_RELATIVE,
        A::LoongArch64 => elf::R_LARCH_RELATIVE,
        _ => return false,
    };
    r_type == want
}
