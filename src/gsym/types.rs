//! GSYM constants, errors and lookup results (shared by the parser and the
//! writer).

/// `'GSYM'` as a native u32.
pub const GSYM_MAGIC: u32 = 0x4753_594d;
/// Version 1: the header carries the UUID and the string table location.
pub const VERSION_1: u16 = 1;
/// Version 2: a fixed 20-byte header followed by a directory of sections.
pub const VERSION_2: u16 = 2;
/// Size of the version 1 header in bytes.
pub const HEADER_V1_SIZE: usize = 48;
/// Size of the fixed part of the version 2 header in bytes.
pub const HEADER_V2_SIZE: usize = 20;
/// Size of one version 2 section directory entry (`GlobalData`).
pub const GLOBAL_DATA_SIZE: usize = 20;
/// Largest UUID a version 1 header holds.
pub const MAX_UUID_SIZE: usize = 20;

/// FunctionInfo chunk types.
pub mod info_type {
    pub const END_OF_LIST: u32 = 0;
    pub const LINE_TABLE: u32 = 1;
    pub const INLINE_INFO: u32 = 2;
    pub const MERGED_FUNCTIONS: u32 = 3;
    pub const CALL_SITES: u32 = 4;
}

/// Version 2 section directory entry types.
pub mod global_type {
    pub const END_OF_LIST: u32 = 0;
    pub const ADDR_OFFSETS: u32 = 1;
    pub const ADDR_INFO_OFFSETS: u32 = 2;
    pub const STRING_TABLE: u32 = 3;
    pub const FILE_TABLE: u32 = 4;
    pub const FUNCTION_INFO: u32 = 5;
    pub const UUID: u32 = 6;
}

/// Line table opcodes.
pub mod line_op {
    pub const END_SEQUENCE: u8 = 0;
    pub const SET_FILE: u8 = 1;
    pub const ADVANCE_PC: u8 = 2;
    pub const ADVANCE_LINE: u8 = 3;
    pub const FIRST_SPECIAL: u8 = 4;
}

/// Byte order of a GSYM file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endian {
    Little,
    Big,
}

/// Everything that can go wrong reading a GSYM file. Messages are one line
/// and say what was wrong and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GsymError {
    #[error("not a GSYM file (bad magic)")]
    BadMagic,
    #[error("unsupported GSYM version {0}")]
    BadVersion(u16),
    #[error("invalid address offset size {0}")]
    BadAddrOffSize(u8),
    #[error("invalid UUID size {0}")]
    BadUuidSize(u8),
    #[error("unsupported string table encoding {0}")]
    BadStringEncoding(u8),
    #[error("file is truncated: {what} needs bytes {start:#x}..{end:#x} but the file has {len:#x}")]
    Truncated {
        what: &'static str,
        start: u64,
        end: u64,
        len: u64,
    },
    #[error("missing required section {0}")]
    MissingSection(&'static str),
    #[error("{0} section size mismatch")]
    SectionSize(&'static str),
    #[error("section directory not terminated by EndOfList")]
    UnterminatedDirectory,
    #[error("address {0:#x} is not in GSYM")]
    NotFound(u64),
    #[error("invalid address info offset {0:#x}")]
    BadInfoOffset(u64),
    #[error("FunctionInfo data is truncated")]
    FunctionTruncated,
    #[error("invalid FunctionInfo name value 0")]
    ZeroName,
    #[error("address {0:#x} is not in the line table")]
    NotInLineTable(u64),
    #[error("line table is malformed: {0}")]
    BadLineTable(&'static str),
    #[error("inline info is malformed: {0}")]
    BadInlineInfo(&'static str),
    #[error("failed to extract file[{0}]")]
    BadFile(u64),
}

/// One frame of a lookup result, innermost first (LLVM's `SourceLocation`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceLocation {
    /// Function name (raw, as stored).
    pub name: String,
    /// Directory part of the source path (may be empty).
    pub dir: String,
    /// File name part of the source path (empty when unknown).
    pub base: String,
    /// 0 when unknown.
    pub line: u32,
    /// Byte offset of the looked-up address from the start of this
    /// function (or of the inlined range).
    pub offset: u64,
}

impl SourceLocation {
    /// `dir/base`, joined the way LLVM prints it; `None` without a file.
    pub fn path(&self) -> Option<String> {
        if self.dir.is_empty() && self.base.is_empty() {
            return None;
        }
        Some(join_path(&self.dir, &self.base))
    }
}

/// Joins a directory and a base name with `/` (or `\` for Windows-only
/// directories), as `llvm-gsymutil` prints them.
pub fn join_path(dir: &str, base: &str) -> String {
    if dir.is_empty() {
        return base.to_string();
    }
    let sep = if dir.contains('\\') && !dir.contains('/') {
        '\\'
    } else {
        '/'
    };
    let mut s = String::with_capacity(dir.len() + 1 + base.len());
    s.push_str(dir);
    s.push(sep);
    s.push_str(base);
    s
}

/// The answer to one address lookup.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LookupResult {
    pub address: u64,
    /// The function (FunctionInfo) containing the address.
    pub func_start: u64,
    pub func_size: u64,
    pub func_name: String,
    /// Innermost first. The first location has a file only when the
    /// function has a line table; there is always at least one.
    pub locations: Vec<SourceLocation>,
}
