//! ELF/DWARF symbol source, found by build ID.
//!
//! Two providers: `--build-id-dir` trees (default `/usr/lib/debug`) and
//! `--symbol-path` files and folders (indexed by build ID on first use).
//! Both hand over an [`ElfSource`]: the found file merged with its separate
//! debug file (build-ID tree or `.gnu_debuglink`, CRC checked), its dwz
//! supplementary file (`.gnu_debugaltlink`) and split DWARF (`.dwo`,
//! `.dwp`), memory-mapped and parsed lazily: by our own lookup engine
//! (`engine`), and by `addr2line` where the engine steps aside.

mod die_walk;
mod engine;
mod file;
mod globals;
mod guard;
mod line0;
mod line_program;
mod root_abbrev;
mod search;
mod source;
mod symtab;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use source::ElfSource;

use crate::symbols::{Attempt, Miss, ModuleKey, Provider, SymbolSource};
use search::{Found, Index, Searcher, open_checked};

/// Providers for `--build-id-dir` (default /usr/lib/debug) and `--symbol-path`.
pub fn providers(
    build_id_dirs: &[PathBuf],
    symbol_paths: &[PathBuf],
) -> anyhow::Result<Vec<Box<dyn Provider>>> {
    let searcher = Searcher::new(build_id_dirs);
    let mut out: Vec<Box<dyn Provider>> = vec![Box::new(BuildIdDirProvider {
        searcher: searcher.clone(),
    })];
    if !symbol_paths.is_empty() {
        out.push(Box::new(SymbolPathProvider {
            roots: symbol_paths.to_vec(),
            searcher,
            index: Mutex::new(None),
        }));
    }
    Ok(out)
}

/// Open one ELF file directly (no build-ID search for the file itself; its
/// debug file, supplementary file and `.dwp` are still looked for, using
/// `build_id_dirs`, default /usr/lib/debug).
pub fn open_file(path: &Path, build_id_dirs: &[PathBuf]) -> Result<ElfSource, Miss> {
    let searcher = Searcher::new(build_id_dirs);
    let mut trail = Vec::new();
    let Some(found) = open_checked(path, None, "file", &mut trail) else {
        return Err(trail
            .pop()
            .and_then(|a| a.failure)
            .unwrap_or(Miss::NotFound));
    };
    let parts = searcher.complete(vec![found], None, false, &mut trail)?;
    ElfSource::new(parts)
}

fn finish(
    searcher: &Searcher,
    files: Vec<Found>,
    key: &ModuleKey,
    provider: &'static str,
    trail: &mut Vec<Attempt>,
) -> Option<Box<dyn SymbolSource>> {
    let trees_searched = provider == "build-id-dir";
    if files.is_empty() {
        return None;
    }
    let place = files[0].mapped.display();
    let result = searcher
        .complete(files, Some(&key.build_id.0), trees_searched, trail)
        .and_then(ElfSource::new);
    match result {
        Ok(src) => Some(Box::new(src)),
        Err(miss) => {
            trail.push(Attempt {
                provider,
                place,
                failure: Some(miss),
            });
            None
        }
    }
}

/// `--build-id-dir DIR`: `DIR/.build-id/ab/cdef[.debug]` or `DIR/ab/cdef[.debug]`.
struct BuildIdDirProvider {
    searcher: Searcher,
}

impl Provider for BuildIdDirProvider {
    fn name(&self) -> &'static str {
        "build-id-dir"
    }

    fn find(&self, key: &ModuleKey, trail: &mut Vec<Attempt>) -> Option<Box<dyn SymbolSource>> {
        if key.build_id.0.is_empty() {
            trail.push(Attempt {
                provider: self.name(),
                place: String::new(),
                failure: Some(Miss::Other("empty build ID".into())),
            });
            return None;
        }
        let files = self
            .searcher
            .by_build_id(&key.build_id.0, self.name(), trail);
        finish(&self.searcher, files, key, self.name(), trail)
    }
}

/// `--symbol-path PATH`: ELF files, or folders scanned for them.
struct SymbolPathProvider {
    roots: Vec<PathBuf>,
    searcher: Searcher,
    index: Mutex<Option<Index>>,
}

impl Provider for SymbolPathProvider {
    fn name(&self) -> &'static str {
        "symbol-path"
    }

    fn find(&self, key: &ModuleKey, trail: &mut Vec<Attempt>) -> Option<Box<dyn SymbolSource>> {
        let paths: Vec<PathBuf> = {
            let mut guard = match self.index.lock() {
                Ok(g) => g,
                Err(poisoned) => poisoned.into_inner(),
            };
            let index = guard.get_or_insert_with(|| Index::build(&self.roots));
            match index.by_id.get(&key.build_id.0) {
                Some(paths) => paths.clone(),
                None => {
                    let mut what = format!("{} ELF files indexed", index.files);
                    if index.truncated {
                        what.push_str(", scan cut short by depth or size bounds");
                    }
                    for root in &self.roots {
                        trail.push(Attempt {
                            provider: self.name(),
                            place: format!("{} ({what})", root.display()),
                            failure: Some(Miss::NotFound),
                        });
                    }
                    return None;
                }
            }
        };
        let mut files: Vec<Found> = paths
            .iter()
            .filter_map(|p| open_checked(p, Some(&key.build_id.0), self.name(), trail))
            .collect();
        // The binary first, its debug file(s) after.
        files.sort_by_key(|f| f.probe.has_dwarf);
        finish(&self.searcher, files, key, self.name(), trail)
    }
}
