//! The neutral base every layer stands on: build IDs and hexadecimal
//! numbers, file paths from bytes, and the one memory-mapped file type.
//! It knows nothing of markup, symbol sources or output formats, so the
//! lexer and the context can use it without reaching into either.

mod build_id;
pub(crate) mod hex;
pub mod mapped;
mod path;

pub use build_id::BuildId;
pub(crate) use path::bytes_to_path;
