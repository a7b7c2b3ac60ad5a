//! Breakpad `.sym` symbol stores (`--breakpad-store DIR`).
//!
//! A store is laid out as `<debug_file>/<DEBUG_ID>/<debug_file>.sym`. For an
//! ELF module the debug file is the module's file name and the debug ID is
//! derived from its build ID ([`debug_id_for`]). When the module's name
//! from `{{{module}}}` does not lead to a file, every `*/<DEBUG_ID>/*.sym`
//! of the store is tried. A file is used only if its `MODULE` record (and
//! `INFO CODE_ID`, when present) names the same module.
//!
//! `.sym` addresses are relative to the module's first `PT_LOAD` segment;
//! lookups take ELF virtual addresses. The two agree for PIE executables
//! and shared libraries. For a non-PIE executable the image base is found
//! from dump_syms' section pseudo-symbols (see `resolver::infer_image_base`);
//! for a `.sym` without them the module's lowest load address from the log
//! ([`ModuleKey::image_base_hint`]) is taken, when its addresses lie below
//! it (see [`BreakpadSymbols::apply_image_base_hint`]); with neither, the
//! image base is 0.
//!
//! Both record forms dump_syms has written for inlining are read: the
//! current `INLINE_ORIGIN <id> <name>` / `INLINE <depth> <line> <file>
//! <origin> <ranges>` and the older `INLINE_ORIGIN <id> <file> <name>` /
//! `INLINE <depth> <line> <origin> <ranges>` (see [`parser`]).
//!
//! - [`parser`]: bytes -> sorted record tables.
//! - [`resolver`]: lookups, and the [`SymbolSource`] implementation.
//! - [`types`]: records, and the build ID -> debug ID mapping.

pub mod parser;
pub mod resolver;
pub mod types;

use std::path::{Path, PathBuf};

pub use resolver::{BreakpadSource, BreakpadSymbols, Bytes, OpenError};
pub use types::debug_id_for;

use crate::symbols::{Attempt, BuildId, Locator, Miss, ModuleKey, Provider, SymbolSource};

const PROVIDER: Locator = Locator::Breakpad;

/// The providers for the given options (none when the options are empty).
pub fn providers(paths: &[PathBuf]) -> Vec<Box<dyn Provider>> {
    if paths.is_empty() {
        return Vec::new();
    }
    vec![Box::new(StoreProvider::new(paths.to_vec()))]
}

/// Finds `.sym` files in Breakpad symbol stores, searched in order.
pub struct StoreProvider {
    roots: Vec<PathBuf>,
}

impl StoreProvider {
    pub fn new(roots: Vec<PathBuf>) -> StoreProvider {
        StoreProvider { roots }
    }
}

/// The file-name part of a module name (`/usr/lib/libc.so.6` -> `libc.so.6`),
/// or `None` when it cannot name a store folder.
fn debug_file_name(name: &str) -> Option<&str> {
    let base = name.rsplit(['/', '\\']).next()?;
    match base {
        "" | "." | ".." => None,
        _ => Some(base),
    }
}

/// `<name>.sym`, or for `<name>.pdb` `<name>.sym` (Breakpad's rule).
fn sym_file_name(debug_file: &str) -> String {
    let n = debug_file.len();
    match debug_file.get(n.saturating_sub(4)..) {
        Some(ext) if n > 4 && ext.eq_ignore_ascii_case(".pdb") => {
            format!("{}.sym", &debug_file[..n - 4])
        }
        _ => format!("{debug_file}.sym"),
    }
}

/// Open `path` and check it describes the module with `build_id`.
pub fn open_checked(
    path: &Path,
    build_id: &BuildId,
    debug_id: &str,
) -> Result<BreakpadSymbols, Miss> {
    let place = path.display().to_string();
    let syms = BreakpadSymbols::open(path).map_err(|e| Miss::Unreadable {
        path: place.clone(),
        reason: e.to_string(),
    })?;
    let found = syms.debug_id();
    if !found.eq_ignore_ascii_case(debug_id) {
        return Err(Miss::DebugIdMismatch {
            path: place,
            found: found.to_owned(),
            expected: debug_id.to_owned(),
        });
    }
    if let Some(code_id) = syms.code_id() {
        // For ELF, CODE_ID is the whole build ID; it tells apart build IDs
        // that agree in their first 16 bytes.
        let expected = build_id.to_hex();
        if BuildId::from_hex(&code_id).is_some() && !code_id.eq_ignore_ascii_case(&expected) {
            return Err(Miss::BuildIdMismatch {
                path: place,
                found: code_id.to_ascii_lowercase(),
                expected,
            });
        }
    }
    Ok(syms)
}

impl StoreProvider {
    fn try_path(
        &self,
        path: PathBuf,
        key: &ModuleKey,
        debug_id: &str,
        trail: &mut Vec<Attempt>,
    ) -> Option<Box<dyn SymbolSource>> {
        let place = path.display().to_string();
        match open_checked(&path, &key.build_id, debug_id) {
            Ok(mut syms) => {
                if let Some(hint) = key.image_base_hint {
                    syms.apply_image_base_hint(hint);
                }
                trail.push(Attempt::new(PROVIDER, place, None));
                Some(Box::new(BreakpadSource::new(path, syms)))
            }
            Err(miss) => {
                trail.push(Attempt::new(PROVIDER, place, Some(miss)));
                None
            }
        }
    }

    /// Every `*/<debug_id>/*.sym` under `root`, sorted, except `skip`.
    fn scan(root: &Path, debug_id: &str, skip: Option<&Path>) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let Ok(entries) = std::fs::read_dir(root) else {
            return found;
        };
        for entry in entries.flatten() {
            let id_dir = entry.path().join(debug_id);
            let Ok(files) = std::fs::read_dir(&id_dir) else {
                continue;
            };
            for file in files.flatten() {
                let p = file.path();
                if p.extension().is_some_and(|e| e == "sym")
                    && Some(p.as_path()) != skip
                    && p.is_file()
                {
                    found.push(p);
                }
            }
        }
        found.sort();
        found
    }
}

impl Provider for StoreProvider {
    fn name(&self) -> Locator {
        PROVIDER
    }

    fn find(&self, key: &ModuleKey, trail: &mut Vec<Attempt>) -> Option<Box<dyn SymbolSource>> {
        let debug_id = debug_id_for(&key.build_id);
        let debug_file = debug_file_name(&key.name);
        // The exact path in every store first, then a scan of each store.
        let mut direct = Vec::new();
        for root in &self.roots {
            let Some(file) = debug_file else { break };
            let path = root.join(file).join(&debug_id).join(sym_file_name(file));
            if path.is_file() {
                if let Some(src) = self.try_path(path.clone(), key, &debug_id, trail) {
                    return Some(src);
                }
            } else {
                trail.push(Attempt::new(
                    PROVIDER,
                    path.display().to_string(),
                    Some(Miss::NotFound),
                ));
            }
            direct.push(path);
        }
        for (i, root) in self.roots.iter().enumerate() {
            let skip = direct.get(i).map(PathBuf::as_path);
            let candidates = Self::scan(root, &debug_id, skip);
            if candidates.is_empty() {
                trail.push(Attempt::new(
                    PROVIDER,
                    root.join("*")
                        .join(&debug_id)
                        .join("*.sym")
                        .display()
                        .to_string(),
                    Some(Miss::NotFound),
                ));
            }
            for path in candidates {
                if let Some(src) = self.try_path(path, key, &debug_id, trail) {
                    return Some(src);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(debug_file_name("/usr/lib/libc.so.6"), Some("libc.so.6"));
        assert_eq!(debug_file_name("a.out"), Some("a.out"));
        assert_eq!(debug_file_name("C:\\x\\foo.dll"), Some("foo.dll"));
        assert_eq!(debug_file_name("/x/.."), None);
        assert_eq!(debug_file_name(""), None);
        assert_eq!(sym_file_name("foo.PDB"), "foo.sym");
        assert_eq!(sym_file_name("libfoo.so"), "libfoo.so.sym");
        assert_eq!(sym_file_name(".pdb"), ".pdb.sym");
    }
}
