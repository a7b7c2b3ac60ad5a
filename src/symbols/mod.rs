//! One symbolizer front over many symbol sources.
//!
//! Every source (ELF/DWARF, Breakpad `.sym`, GSYM, debuginfod) implements
//! [`Provider`] (find the data for a build ID) and [`SymbolSource`] (answer
//! lookups for one module). Addresses handed to a source are always
//! module-relative ELF virtual addresses (what `{{{mmap}}}`'s last field and
//! `p_vaddr` talk about). Names are returned *raw* (linkage names, mangled);
//! demangling is the renderer's choice (see [`crate::demangle`]).

mod front;
mod memo;
pub mod prefetch;
mod text;
mod types;

pub use front::{Opened, Symbolizer, SymbolizerConfig};
pub use memo::{Deferred, Kept, Memo, keep, recall};
pub use text::{DERIVED, Interner, Name, Text, lossy};
pub use types::*;
