//! `symfilter gsym create`: GSYM files built from an ELF file (DWARF and
//! symbol table, see `dwarf.rs`) or from a Breakpad `.sym` file (see
//! `breakpad.rs`), encoded by [`writer`]. Reading GSYM files is
//! [`crate::gsym`]'s business.
//!
//! Both conversions use the readers the symbol sources use: the units and
//! split units of [`crate::dwarf::DwarfIndex::code_units`], the ELF symbol
//! table reader of [`crate::elf`] and the record reader of
//! [`crate::breakpad::parser`]. What is LLVM's own (which DIEs make a
//! function, qualified names, line-table cuts, path joins) stays here, to
//! write what `llvm-gsymutil` writes.

mod breakpad;
mod dies;
mod dwarf;
pub mod writer;

pub use breakpad::from_breakpad;
pub use dwarf::from_elf;

use crate::breakpad::parser::ParseError;

/// Why an input could not be converted.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("not an ELF file: {0}")]
    Object(#[from] object::Error),
    #[error("malformed DWARF: {0}")]
    Dwarf(#[from] gimli::Error),
    #[error(transparent)]
    NotBreakpad(#[from] ParseError),
    #[error("line {line}: {reason}")]
    Breakpad { line: u64, reason: &'static str },
}

/// Counts of what a conversion found (printed by `gsym create`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ConvertStats {
    pub from_debug_info: usize,
    pub from_symbols: usize,
    /// Bytes of `.debug_*` sections in the input file (as stored).
    pub dwarf_bytes: u64,
}
