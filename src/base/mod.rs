//! The neutral base every layer stands on: build IDs and hexadecimal
//! numbers, file paths from bytes, the one memory-mapped file type, and
//! lists kept empty for reuse.
//! It knows nothing of markup, symbol sources or output formats, so the
//! lexer and the context can use it without reaching into either.

mod build_id;
pub(crate) mod hex;
pub mod mapped;
mod path;

pub use build_id::BuildId;
pub(crate) use path::bytes_to_path;

/// `list` emptied, as a list of another element type, in the same
/// allocation when the two types have the same layout (as one type of two
/// lifetimes does: a list of borrowed values kept from one use to the
/// next); collecting an empty list in place reuses it.
pub(crate) fn recycle<T, U>(mut list: Vec<T>) -> Vec<U> {
    list.clear();
    list.into_iter()
        .map(|_| -> U { unreachable!("the list is empty") })
        .collect()
}
