//! DWARF lookups: one index over a module's debug sections, answering
//! which functions (inlined calls included) and source lines an address
//! is in, and where a global variable at an address is declared.
//!
//! It reads lazily and copies nothing: the unit list and their address
//! ranges when made, each unit's functions and line table on the first
//! lookup that lands in it, a split unit's `.dwo` file or package entry
//! then too, and the global-variable index on the first data lookup.
//! Names are made from the sections' bytes once per module and paths once
//! per unit, and every answer shares them. dwz supplementary files are
//! followed for names and strings. It knows nothing of ELF or of where
//! files lie: the caller hands over the sections and a way to find `.dwo`
//! files.

mod claims;
mod die_walk;
mod functions;
mod globals;
mod input;
mod line_program;
mod lines;
mod lookup;
mod ranges;
mod root_abbrev;
mod units;

#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::OnceLock;

use claims::Claims;
pub use globals::Global;
use globals::Globals;
use lookup::{Engine, Found};
pub use units::MAX_DEPTH;

use crate::symbols::Frames;

/// The reader every section is read through: bytes borrowed from a mapped
/// file (or a buffer that outlives the index).
pub type Reader<'a> = gimli::EndianSlice<'a, gimli::RunTimeEndian>;

/// What makes DWARF unreadable where a lookup needed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// gimli's reason.
    Read(gimli::Error),
    /// What was malformed.
    Malformed(&'static str),
}

impl From<gimli::Error> for Error {
    fn from(e: gimli::Error) -> Self {
        Error::Read(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Read(e) => write!(f, "DWARF: {e}"),
            Error::Malformed(what) => write!(f, "DWARF: malformed {what}"),
        }
    }
}

type Sure<T> = Result<T, Error>;

/// Why a lookup has no frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LookupError {
    /// A unit covering the address nests deeper than [`MAX_DEPTH`]; it is
    /// not read.
    TooDeep,
    /// The DWARF where the address lies cannot be read.
    Unreadable(Error),
}

impl fmt::Display for LookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LookupError::TooDeep => write!(
                f,
                "DWARF nested deeper than {MAX_DEPTH} levels here; ignored"
            ),
            LookupError::Unreadable(e) => e.fmt(f),
        }
    }
}

/// Where split units' `.dwo` files are found: the caller decides which
/// paths may be opened. [`NoSplitFiles`] finds none.
pub trait SplitFiles<'a> {
    /// Offer the DWARF sections (`.dwo` names) of each file that the
    /// skeleton's `name` (relative to `comp_dir`) may be, until `take`
    /// accepts one (it checks the DWO ID).
    fn offer(
        &self,
        name: &[u8],
        comp_dir: Option<&[u8]>,
        take: &mut dyn FnMut(gimli::Dwarf<Reader<'a>>) -> bool,
    );
}

/// No `.dwo` files: split units come from the package or not at all.
pub struct NoSplitFiles;

impl<'a> SplitFiles<'a> for NoSplitFiles {
    fn offer(
        &self,
        _: &[u8],
        _: Option<&[u8]>,
        _: &mut dyn FnMut(gimli::Dwarf<Reader<'a>>) -> bool,
    ) {
    }
}

/// A unit with code, for readers of every function (`gsym create`).
#[derive(Clone, Copy)]
pub struct CodeUnit<'i, 'a> {
    /// The unit whose DIEs describe the functions: a skeleton's split unit
    /// when it was found, else the unit itself.
    pub functions: gimli::UnitRef<'i, Reader<'a>>,
    /// The unit holding the line table and compilation directory (the
    /// skeleton, for a split unit).
    pub lines: gimli::UnitRef<'i, Reader<'a>>,
}

impl CodeUnit<'_, '_> {
    /// Whether the functions are in a split unit.
    pub fn is_split(&self) -> bool {
        !std::ptr::eq(self.functions.unit, self.lines.unit)
    }
}

/// A module's DWARF, ready for lookups.
pub struct DwarfIndex<'a> {
    engine: Engine<'a>,
    globals: OnceLock<Globals>,
    claims: OnceLock<Claims>,
}

impl<'a> DwarfIndex<'a> {
    /// The index over `dwarf` (with its supplementary file loaded, if it
    /// has one) and a DWARF package for its split units. Reads the unit
    /// headers and their ranges.
    pub fn new(
        dwarf: gimli::Dwarf<Reader<'a>>,
        package: Option<gimli::DwarfPackage<Reader<'a>>>,
    ) -> DwarfIndex<'a> {
        DwarfIndex {
            engine: Engine::new(dwarf, package),
            globals: OnceLock::new(),
            claims: OnceLock::new(),
        }
    }

    /// The frames at `addr`, innermost first. With `line0_columns`, the
    /// innermost frame on a line-0 row keeps the row's column (LLVM prints
    /// it; addr2line drops it). Empty when no unit has code there. A
    /// split unit not in the package is looked for in `files`, once.
    pub fn frames(
        &self,
        addr: u64,
        line0_columns: bool,
        files: &dyn SplitFiles<'a>,
    ) -> Result<Frames, LookupError> {
        match self.engine.find_frames(addr, files) {
            Ok(Found::Frames(mut frames, column)) => {
                if let Some(first) = frames.first_mut()
                    && first.line == 0
                    && line0_columns
                {
                    first.column = column;
                }
                Ok(frames)
            }
            Ok(Found::TooDeep) => Err(LookupError::TooDeep),
            Err(e) => Err(LookupError::Unreadable(e)),
        }
    }

    /// Whether the debug info claims a unit at `addr` by LLVM's reckoning:
    /// covered by a `.debug_aranges` entry, or by the declared ranges of a
    /// unit no aranges set names. It may hold where [`Self::frames`] finds
    /// nothing (a global variable's address). Indexed on the first call.
    pub fn claims(&self, addr: u64) -> bool {
        self.claims
            .get_or_init(|| Claims::build(self.engine.dwarf(), self.engine.units()))
            .covers(addr)
    }

    /// Every unit with code, in section order, split units loaded (from
    /// the package or `files`): see [`CodeUnit`].
    pub fn code_units<'i>(
        &'i self,
        files: &'i dyn SplitFiles<'a>,
    ) -> impl Iterator<Item = CodeUnit<'i, 'a>> + 'i {
        self.engine.code_units(files)
    }

    /// The sections of the main file.
    pub fn dwarf(&self) -> &gimli::Dwarf<Reader<'a>> {
        self.engine.dwarf()
    }

    /// The global variable covering `addr`, by its location expression;
    /// all units are indexed on the first call.
    pub fn global(&self, addr: u64) -> Option<&Global> {
        self.globals
            .get_or_init(|| Globals::build(self.engine.dwarf()))
            .find(addr)
    }
}
