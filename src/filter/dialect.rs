//! The rules the filter reads and resolves a log by: symfilter's own, or
//! LLVM's (`llvm-symbolizer --filter-markup`, which `--format=llvm`
//! matches byte for byte), and what its lookups ask the symbol sources
//! for ([`Wants`]). They are data the caller chooses, not questions put to
//! the printer: printers print what the filter hands them.

use crate::render::Format;
use crate::symbols::{CodeWant, DataWant};

/// How the filter reads and resolves a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dialect {
    /// Read `pc` and `bt` fields as LLVM 22 does (see
    /// [`crate::markup::llvm_reading`]).
    pub llvm_fields: bool,
    /// A line ends at its first contextual element: nothing after it is
    /// printed or applied (LLVM).
    pub context_ends_line: bool,
    /// A line's `module` or `mmap` is applied before the elements before
    /// it on the line, which may then fall in its mapping, and nothing is
    /// said of those elements where they are not shown (LLVM; see
    /// `filter/context_line.rs`).
    pub context_first: bool,
    /// A `hexdict` that spans several lines is read as one group (LLVM
    /// reads each line alone).
    pub multiline_hexdict: bool,
    /// A return address moves back by its architecture's instruction step
    /// (AArch64 4, RISC-V 2), not always by one byte (LLVM).
    pub instruction_step: bool,
    /// Crash-report frames in lines without markup are symbolized (see
    /// [`crate::crash`]; LLVM leaves them).
    pub crash_frames: bool,
}

impl Default for Dialect {
    /// symfilter's rules.
    fn default() -> Dialect {
        Dialect {
            llvm_fields: false,
            context_ends_line: false,
            context_first: false,
            multiline_hexdict: true,
            instruction_step: true,
            crash_frames: true,
        }
    }
}

impl Dialect {
    /// LLVM 22's rules.
    pub fn llvm() -> Dialect {
        Dialect {
            llvm_fields: true,
            context_ends_line: true,
            context_first: true,
            multiline_hexdict: false,
            instruction_step: false,
            crash_frames: false,
        }
    }

    /// The rules the command line pairs with `format`: LLVM's for its
    /// output, symfilter's for the others.
    pub fn usual_for(format: Format) -> Dialect {
        match format {
            Format::Llvm => Dialect::llvm(),
            Format::Human | Format::Json => Dialect::default(),
        }
    }
}

/// What the filter asks its symbol sources for on every lookup: what its
/// printer prints, and no more (some answers cost extra to find).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wants {
    pub code: CodeWant,
    pub data: DataWant,
}

impl Wants {
    /// Everything a source can tell, whatever the printer prints.
    pub fn everything() -> Wants {
        Wants {
            code: CodeWant::default(),
            data: DataWant { declaration: true },
        }
    }

    /// What `format` prints: the human format never shows the column of a
    /// line-0 location, nor the symbol of a function the debug info names;
    /// the llvm format never shows declarations, and asks whether the
    /// debug info claims an address it gives no frames for (its `pc`).
    pub fn usual_for(format: Format) -> Wants {
        Wants {
            code: CodeWant {
                line0_columns: format != Format::Human,
                symbol_when_named: format != Format::Human,
                claims: format == Format::Llvm,
            },
            data: DataWant {
                declaration: format != Format::Llvm,
            },
        }
    }
}
