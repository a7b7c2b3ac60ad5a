use std::fmt;

use super::text::{Name, Text};
pub use crate::base::BuildId;
use crate::context::{Context, Module};

/// What a provider is asked to find: a module as the log names it.
#[derive(Clone, Debug)]
pub struct ModuleKey {
    pub build_id: BuildId,
    /// The human-readable name from `{{{module}}}` (may be empty). Only a
    /// hint: Breakpad stores are laid out by debug file name.
    pub name: String,
    /// The module-relative address of the module's lowest loaded region
    /// (the lowest `{{{mmap}}}` load address: the first `PT_LOAD`'s
    /// `p_vaddr`, e.g. 0x400000 for a non-PIE executable), when known.
    /// Sources whose addresses are relative to the image base (Breakpad
    /// `.sym`) use it when their own data does not tell the base.
    pub image_base_hint: Option<u64>,
}

impl ModuleKey {
    /// A key with no image base hint.
    pub fn new(build_id: BuildId, name: impl Into<String>) -> ModuleKey {
        ModuleKey {
            build_id,
            name: name.into(),
            image_base_hint: None,
        }
    }

    /// The key of a module of `context`, with the start of its image as the
    /// context knows it (Breakpad addresses of non-PIE executables are
    /// relative to it).
    pub fn of(context: &Context, module: &Module) -> ModuleKey {
        ModuleKey {
            build_id: module.build_id.clone(),
            name: module.name_lossy().into_owned(),
            image_base_hint: context.image_base_of(module),
        }
    }
}

/// One frame of a code location. `function` is the raw (usually mangled)
/// linkage name, or the plain DWARF name when no linkage name exists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    pub function: Option<Name>,
    /// Full path as the debug info gives it (comp dir joined).
    pub file: Option<Text>,
    /// 0 when unknown.
    pub line: u32,
    /// 0 when unknown.
    pub column: u32,
}

/// A symbol-table entry (ELF `.symtab`/`.dynsym`, Breakpad `PUBLIC`/`FUNC`,
/// GSYM function info).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolHit {
    /// Raw linkage name.
    pub name: Name,
    pub address: u64,
    pub size: u64,
    /// For local symbols, the `STT_FILE` name that precedes them (LLVM shows
    /// it when no line info exists).
    pub file: Option<Text>,
}

/// A code answer's frames: most answers have one or two, held in the
/// answer itself (no allocation of their own, one fewer to read and free).
pub type Frames = smallvec::SmallVec<[Frame; 2]>;

/// The answer to a code lookup.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CodeInfo {
    /// Innermost first; the last frame is the physical (outermost) function.
    /// Empty when there is no debug info for the address.
    pub frames: Frames,
    /// The symbol-table symbol covering the address, if any.
    pub symbol: Option<SymbolHit>,
    /// With no frames: the debug info claims a unit at the address by
    /// LLVM's reckoning all the same (asked by [`CodeWant::claims`]; see
    /// [`crate::dwarf::DwarfIndex::claims`]).
    pub claimed: bool,
    /// How often printers have shown this answer.
    pub shown: ShownBefore,
}

/// How often an answer has been shown (counted up to [`ShownBefore::MAX`]):
/// a printer that keeps what it makes of an answer for its next showings
/// need not remember, answer by answer, which ones it has shown (most of a
/// log of new addresses, once or twice). Not part of the answer's value: a
/// clone starts unshown, and answers compare equal whatever it says.
#[derive(Default)]
pub struct ShownBefore(std::sync::atomic::AtomicU8);

impl ShownBefore {
    /// Where the count stops.
    pub const MAX: u8 = 2;

    /// How often the answer was shown before this showing (which it
    /// counts), up to [`ShownBefore::MAX`].
    pub fn mark(&self) -> u8 {
        use std::sync::atomic::Ordering::Relaxed;
        // No write to the answer's line once the count has stopped.
        let before = self.0.load(Relaxed);
        if before < Self::MAX {
            self.0.store(before + 1, Relaxed);
        }
        before
    }
}

impl Clone for ShownBefore {
    fn clone(&self) -> Self {
        ShownBefore::default()
    }
}

impl PartialEq for ShownBefore {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for ShownBefore {}

impl fmt::Debug for ShownBefore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ShownBefore")
    }
}

impl CodeInfo {
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty() && self.symbol.is_none()
    }
}

/// The answer to a data lookup.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DataInfo {
    /// The global covering the address.
    pub symbol: Option<SymbolHit>,
    /// Declaration location from DWARF, when known.
    pub decl_file: Option<Text>,
    pub decl_line: u32,
}

/// Why a lookup or a search came up empty: what `--explain` and the
/// diagnostics print. Every miss carries one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Miss {
    #[error("no file found")]
    NotFound,
    #[error("{path}: build ID is {found}, expected {expected}")]
    BuildIdMismatch {
        path: String,
        found: String,
        expected: String,
    },
    #[error("{path}: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("no symbol or line information for this address")]
    NoInfo,
    /// The debug information is broken where the address was looked up
    /// (the parser's words).
    #[error("{0}")]
    BadDebugInfo(String),
    /// A source failed while searching; nothing is known of the module.
    #[error("the search failed")]
    SearchFailed,
    #[error("empty build ID")]
    EmptyBuildId,
    #[error("build ID of {len} bytes is longer than {max}")]
    BuildIdTooLong { len: usize, max: usize },
    #[error("build ID is not hex")]
    BuildIdNotHex,
    #[error("{from}: .gnu_debuglink name is not a plain file name")]
    DebuglinkName { from: String },
    #[error("{path}: CRC is {found:08x}, .gnu_debuglink in {from} expects {expected:08x}")]
    CrcMismatch {
        path: String,
        from: String,
        found: u32,
        expected: u32,
    },
    /// A Breakpad file's `MODULE` record names another module.
    #[error("{path}: MODULE record has debug ID {found}, expected {expected}")]
    DebugIdMismatch {
        path: String,
        found: String,
        expected: String,
    },
    #[error("Breakpad symbol files hold no data symbols")]
    BreakpadNoData,
    /// debuginfod's cache remembers that no server had the file.
    #[error("cached negative result ({age_secs} s old, kept {ttl_secs} s); servers not asked")]
    CachedNegative { age_secs: u64, ttl_secs: u64 },
    #[error("negative result expired ({age_secs} s old, kept {ttl_secs} s)")]
    NegativeExpired { age_secs: u64, ttl_secs: u64 },
    /// A server found dead earlier in the run, with why.
    #[error("not asked: server failed earlier in this run ({0})")]
    ServerDown(String),
    #[error("not asked: this run's debuginfod time ({secs} s) is spent")]
    BudgetSpent { secs: u64 },
    /// A download failed (the client's words).
    #[error("{0}")]
    Download(String),
    #[error("cannot lay out the dwz supplementary file: {0}")]
    SupplementLayout(String),
    #[error("debuginfo has no symbol table or DWARF; trying the executable")]
    DebuginfoWithoutSymbols,
    /// A file the log named was not opened or not used (see [`Refusal`]).
    #[error("{0}")]
    Refused(Refusal),
}

/// A problem a source found in its data when it was opened that did not
/// stop it from being used: said once per module, as a diagnostic at the
/// module's first use. Its text is its [`Display`](fmt::Display) form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceWarning {
    /// Lines of a text symbol file (Breakpad `.sym`) that could not be
    /// read were skipped.
    CorruptLinesSkipped {
        path: String,
        /// How many lines were skipped.
        count: u64,
        /// 1-based number of the first skipped line, and what was wrong
        /// with it.
        first_line: u64,
        first_reason: &'static str,
    },
}

impl fmt::Display for SourceWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceWarning::CorruptLinesSkipped {
                path,
                count,
                first_line,
                first_reason,
            } => write!(
                f,
                "{path}: skipped {count} corrupt line{} (first: line {first_line}: {first_reason})",
                if *count == 1 { "" } else { "s" },
            ),
        }
    }
}

/// Why a file at a path the log names (a `{{{module}}}` name) was not
/// used. Such paths come from the input, so nothing is said about a file
/// beyond these words: not its build ID, not what a parser made of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("not an absolute path")]
    NotAbsolute,
    #[error("no such file")]
    Missing,
    #[error("not a regular file")]
    NotRegular,
    #[error("on a kernel file system (/proc, /sys, ...)")]
    KernelFileSystem,
    #[error("cannot be opened")]
    Unopenable,
    #[error("not an ELF file")]
    NotElf,
    #[error("another build ID")]
    OtherBuildId,
    #[error("no build ID note")]
    NoBuildId,
}

/// The kinds of places symbols are looked for, in the order the front
/// asks them (the companions of a found file, `Debuglink` to `Dwp`, come
/// with the place that found it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Locator {
    /// `--build-id-dir` trees.
    BuildIdDir,
    /// `--symbol-path` files and folders.
    SymbolPath,
    /// `--breakpad-store`.
    Breakpad,
    /// `--gsym`.
    Gsym,
    /// The file at the path the `{{{module}}}` element names.
    ModulePath,
    /// The system's debug directories (`/usr/lib/debug`) by build ID.
    SystemDebugDir,
    /// A `.gnu_debuglink` target of a found file.
    Debuglink,
    /// A dwz supplementary file (`.gnu_debugaltlink`).
    Debugaltlink,
    /// A DWARF package next to a found file.
    Dwp,
    /// The debuginfod cache and servers.
    Debuginfod,
    /// A file named on the command line (`lookup --file`).
    File,
    /// A provider from outside this crate (tests, embedders).
    Custom(&'static str),
}

impl Locator {
    pub fn as_str(self) -> &'static str {
        match self {
            Locator::BuildIdDir => "build-id-dir",
            Locator::SymbolPath => "symbol-path",
            Locator::Breakpad => "breakpad",
            Locator::Gsym => "gsym",
            Locator::ModulePath => "module-path",
            Locator::SystemDebugDir => "system-debug-dir",
            Locator::Debuglink => "debuglink",
            Locator::Debugaltlink => "debugaltlink",
            Locator::Dwp => "dwp",
            Locator::Debuginfod => "debuginfod",
            Locator::File => "file",
            Locator::Custom(name) => name,
        }
    }
}

impl fmt::Display for Locator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Something worth knowing about a place that served (`--explain`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Note {
    /// A file in a build-ID tree without a build-ID note: the path is the
    /// claim (as LLVM takes it).
    #[error("no build ID note; taken on the strength of its build-ID path")]
    TrustedPath,
    /// Only dynamic symbols: later places are still asked for better.
    #[error("dynamic symbols only; asking the places after it for more")]
    DynamicSymbolsOnly,
}

/// One place a provider looked, and what came of it (`--explain`).
#[derive(Clone, Debug)]
pub struct Attempt {
    pub provider: Locator,
    /// The path or URL tried.
    pub place: String,
    /// `None` when this place served the module.
    pub failure: Option<Miss>,
    /// A remark on a place that served.
    pub note: Option<Note>,
}

impl Attempt {
    pub fn new(provider: Locator, place: impl Into<String>, failure: Option<Miss>) -> Attempt {
        Attempt {
            provider,
            place: place.into(),
            failure,
            note: None,
        }
    }
}

/// What a code lookup is asked for, beyond the frames every answer
/// carries. Passed with each call: a source serves callers that print
/// different things. `Default` is everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CodeWant {
    /// The innermost frame on a line-0 row (compiler-generated code) gets
    /// the row's column, as llvm-symbolizer prints it (`FILE:0:COLUMN`);
    /// when false its column is 0, as addr2line gives it (the human format
    /// prints no column for line 0).
    pub line0_columns: bool,
    /// The symbol-table symbol covering the address even where the debug
    /// info names the outermost function (the llvm format names that frame
    /// from the symbol table); when false, only where it names none (the
    /// human format shows the symbol only there). Sources whose symbol
    /// costs nothing extra may give it anyway.
    pub symbol_when_named: bool,
    /// [`CodeInfo::claimed`], where the debug info gives no frames: LLVM's
    /// line lookup then shows no `STT_FILE` name for a local symbol (the
    /// llvm format's `{{{pc}}}`).
    pub claims: bool,
}

impl Default for CodeWant {
    fn default() -> CodeWant {
        CodeWant {
            line0_columns: true,
            symbol_when_named: true,
            claims: true,
        }
    }
}

/// What a data lookup is asked for, beyond the symbol every answer
/// carries. Passed with each call. `Default` asks for the symbol only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DataWant {
    /// Fill in [`DataInfo::decl_file`] and [`DataInfo::decl_line`] from the
    /// debug info when it tells them. Finding them may cost much more than
    /// the symbol (DWARF: an index over every DIE of the module, built on
    /// first use), so a caller that does not print declarations
    /// (`--format=llvm`) leaves it off.
    pub declaration: bool,
}

/// Answers lookups for one module. Implementations are opened lazily and
/// live for the whole run.
pub trait SymbolSource: Send + Sync {
    /// Where the data came from (a path or URL), for messages.
    fn origin(&self) -> String;
    /// The file that holds the module's own image (its code and sections),
    /// for readers of sections no lookup needs, such as XRay's
    /// instrumentation map; `None` when the source has no such file.
    fn image(&self) -> Option<std::path::PathBuf> {
        None
    }
    /// Code lookup at a module-relative address (already adjusted for
    /// return addresses by the caller), with what `want` asks for where
    /// the source can tell it.
    fn lookup_code(&self, addr: u64, want: CodeWant) -> Result<CodeInfo, Miss>;
    /// Data lookup at a module-relative address, with what `want` asks for
    /// where the source can tell it.
    fn lookup_data(&self, addr: u64, want: DataWant) -> Result<DataInfo, Miss>;
    /// How far to move a return address back to land inside the call
    /// instruction (x86: 1, AArch64: 4, RISC-V: 2).
    fn return_address_step(&self) -> u64 {
        1
    }
    /// Problems found in the data when it was opened that did not stop it
    /// from being used (e.g. corrupt records skipped), for the caller to
    /// report once per module.
    fn warnings(&self) -> Vec<SourceWarning> {
        Vec::new()
    }
    /// Has nothing but dynamic symbols (`.dynsym`: a stripped shared
    /// library or executable): the front keeps asking later places and
    /// falls back to this one.
    fn only_dynamic_symbols(&self) -> bool {
        false
    }
    /// A file of this source that another process truncated while it was
    /// mapped (see [`crate::base::mapped`]): its bytes now read as zeros, so no
    /// answer from the source can be trusted any more.
    fn truncated(&self) -> Option<String> {
        None
    }
}

/// Finds the symbol data for a module. Providers are asked in order; the
/// first that returns a source wins.
pub trait Provider: Send + Sync {
    fn name(&self) -> Locator;
    /// Look for `key`, recording every place tried in `trail`.
    fn find(&self, key: &ModuleKey, trail: &mut Vec<Attempt>) -> Option<Box<dyn SymbolSource>>;
}

#[cfg(test)]
mod tests {
    use super::{Miss, SourceWarning};

    /// Diagnostics print these words once per module.
    #[test]
    fn source_warning_messages() {
        let skipped = |count| SourceWarning::CorruptLinesSkipped {
            path: "/s/app.sym".into(),
            count,
            first_line: 3,
            first_reason: "bad FILE number",
        };
        assert_eq!(
            skipped(1).to_string(),
            "/s/app.sym: skipped 1 corrupt line (first: line 3: bad FILE number)"
        );
        assert_eq!(
            skipped(12).to_string(),
            "/s/app.sym: skipped 12 corrupt lines (first: line 3: bad FILE number)"
        );
    }

    /// `--explain` and the diagnostics print these words; tests and users'
    /// scripts match them.
    #[test]
    fn miss_messages() {
        let cases = [
            (Miss::SearchFailed, "the search failed"),
            (Miss::EmptyBuildId, "empty build ID"),
            (
                Miss::BuildIdTooLong { len: 65, max: 64 },
                "build ID of 65 bytes is longer than 64",
            ),
            (Miss::BuildIdNotHex, "build ID is not hex"),
            (
                Miss::DebuglinkName {
                    from: "/a/b".into(),
                },
                "/a/b: .gnu_debuglink name is not a plain file name",
            ),
            (
                Miss::CrcMismatch {
                    path: "/d/x.debug".into(),
                    from: "/b/x".into(),
                    found: 0xab,
                    expected: 0x1234_5678,
                },
                "/d/x.debug: CRC is 000000ab, .gnu_debuglink in /b/x expects 12345678",
            ),
            (
                Miss::BreakpadNoData,
                "Breakpad symbol files hold no data symbols",
            ),
            (
                Miss::CachedNegative {
                    age_secs: 3,
                    ttl_secs: 600,
                },
                "cached negative result (3 s old, kept 600 s); servers not asked",
            ),
            (
                Miss::NegativeExpired {
                    age_secs: 700,
                    ttl_secs: 600,
                },
                "negative result expired (700 s old, kept 600 s)",
            ),
            (
                Miss::ServerDown("cannot connect: refused".into()),
                "not asked: server failed earlier in this run (cannot connect: refused)",
            ),
            (
                Miss::BudgetSpent { secs: 600 },
                "not asked: this run's debuginfod time (600 s) is spent",
            ),
            (
                Miss::SupplementLayout("disk full".into()),
                "cannot lay out the dwz supplementary file: disk full",
            ),
            (
                Miss::DebuginfoWithoutSymbols,
                "debuginfo has no symbol table or DWARF; trying the executable",
            ),
        ];
        for (miss, text) in cases {
            assert_eq!(miss.to_string(), text);
        }
    }
}
