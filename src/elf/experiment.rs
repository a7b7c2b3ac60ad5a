//! Issue 14's measuring experiment, compiled only with the
//! `lookup-experiment` feature: which DWARF lookup path answers code
//! lookups, chosen by `SYMFILTER_LOOKUP_PATH` so that one build can be
//! measured all three ways on the same logs (`scripts/bench-shapes.sh`,
//! `SYMFILTER_EXTRA`). Default builds always take our engine.
//!
//! - `engine` (or unset): production behaviour.
//! - `addr2line`: every lookup goes to addr2line's `Context`, behind the
//!   whole-file depth guard as production's fallback does.
//! - `addr2line-unguarded`: addr2line's `Context` over the sections as
//!   loaded (no guard, no `.debug_aranges` rewriting). Unsafe on hostile
//!   nesting; it bounds from below what addr2line with any nesting check
//!   can cost.

use std::sync::OnceLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    Engine,
    Addr2line,
    Addr2lineUnguarded,
}

/// The path named by `SYMFILTER_LOOKUP_PATH`, read once.
pub(crate) fn path() -> Path {
    static PATH: OnceLock<Path> = OnceLock::new();
    *PATH.get_or_init(|| match std::env::var("SYMFILTER_LOOKUP_PATH").as_deref() {
        Ok("addr2line") => Path::Addr2line,
        Ok("addr2line-unguarded") => Path::Addr2lineUnguarded,
        Ok("engine") | Err(_) => Path::Engine,
        Ok(other) => {
            eprintln!("symfilter: SYMFILTER_LOOKUP_PATH={other}: unknown, using the engine");
            Path::Engine
        }
    })
}
