//! symfilter: a symbolizing filter for LLVM Symbolizer Markup logs.
//!
//! Data flows one way: [`markup`] (lexer, bytes -> elements) -> [`context`]
//! (module/mmap state machine) -> [`symbols`] (one front over every symbol
//! source) -> [`render`] (human, llvm, json printers). The lexer knows
//! nothing of ELF; sources know nothing of markup; renderers know nothing of
//! file formats. [`crash`] is a second lexer, for crash-report frames in
//! lines without markup (sanitizers, Android, systemd, LLVM); the filter
//! resolves and renders them as `bt` elements. Every layer stands on
//! [`base`] (build IDs, hex, byte paths, file maps), which depends on none.
//!
//! The library writes nothing to the terminal: diagnostics, warnings,
//! `--explain` notes and download progress go to the [`report::Reporter`]
//! its caller gives. The command line (argument parsing, error reports,
//! exit codes, the reporter on standard error) lives in the binary
//! (`src/main.rs`, `src/cmd/`), a client of this library.

pub mod base;
pub mod breakpad;
pub mod confined;
pub mod context;
pub mod crash;
pub mod debuginfod;
pub mod demangle;
pub mod demux;
pub mod dumpfile;
pub mod dwarf;
pub mod elf;
pub mod escape;
pub mod filter;
pub mod gsym;
pub mod gsym_create;
pub mod markup;
pub mod pipeline;
pub mod render;
pub mod report;
pub mod symbols;
mod walk;
pub mod xray;
