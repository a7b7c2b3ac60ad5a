//! ELF/DWARF symbol source, found by build ID.
//!
//! Providers: `--build-id-dir` trees and `--symbol-path` files and folders
//! (indexed by build ID on first use), asked first; then the file at the
//! path the log names and the system's `/usr/lib/debug`, asked after the
//! user's other places. All hand over an [`ElfSource`]: the found file merged with its separate
//! debug file (build-ID tree or `.gnu_debuglink`, CRC checked), its dwz
//! supplementary file (`.gnu_debugaltlink`) and split DWARF (`.dwo`,
//! `.dwp`), memory-mapped, its DWARF read lazily by [`crate::dwarf`].
//! Sources opened on the same files in one process (by the filter's two
//! threads) share one module: its files are mapped and its DWARF parsed
//! once.

mod file;
mod reloc;
mod search;
mod source;
pub(crate) mod symtab;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use search::SYSTEM_DEBUG_DIR;
pub(crate) use search::dwo_paths;
pub use source::ElfSource;
pub(crate) use source::{dwo_dwarf, endian_of};

use crate::symbols::{Attempt, Locator, Miss, ModuleKey, Provider, Refusal, SymbolSource};
use file::{Mapped, OpenError, Probe};
use search::{Found, Index, Searcher, by_build_id_in, open_checked};

/// Where the ELF providers look: the user's trees and files, and whether
/// the places nobody named (the paths the log gives, the system's debug
/// directory) are searched too.
#[derive(Clone, Debug, Default)]
pub struct Places {
    pub build_id_dirs: Vec<PathBuf>,
    pub symbol_paths: Vec<PathBuf>,
    /// The paths `{{{module}}}` elements name and [`SYSTEM_DEBUG_DIR`].
    pub defaults: bool,
}

impl Places {
    /// Every build-ID tree, the user's first: where a found file's debug
    /// file, supplementary file and `.dwp` are looked for.
    pub fn debug_dirs(&self) -> Vec<PathBuf> {
        Searcher::new(&self.build_id_dirs, self.defaults)
            .dirs()
            .cloned()
            .collect()
    }
}

/// Providers for `--build-id-dir` and `--symbol-path`, asked first.
pub fn providers(places: &Places) -> Vec<Box<dyn Provider>> {
    let searcher = Searcher::new(&places.build_id_dirs, places.defaults);
    let mut out: Vec<Box<dyn Provider>> = Vec::new();
    if !places.build_id_dirs.is_empty() {
        out.push(Box::new(BuildIdDirProvider {
            dirs: places.build_id_dirs.clone(),
            locator: Locator::BuildIdDir,
            searcher: searcher.clone(),
        }));
    }
    if !places.symbol_paths.is_empty() {
        out.push(Box::new(SymbolPathProvider {
            roots: places.symbol_paths.clone(),
            searcher,
            index: Mutex::new(None),
        }));
    }
    out
}

/// Providers for the places nobody named, asked after the user's own and
/// before the network: the file at the path the log gives, then the
/// system's debug directory. None when `places.defaults` is off.
pub fn default_providers(places: &Places) -> Vec<Box<dyn Provider>> {
    if !places.defaults {
        return Vec::new();
    }
    let searcher = Searcher::new(&places.build_id_dirs, true);
    vec![
        Box::new(ModulePathProvider {
            searcher: searcher.clone(),
        }),
        Box::new(BuildIdDirProvider {
            dirs: searcher.system.clone(),
            locator: Locator::SystemDebugDir,
            searcher,
        }),
    ]
}

/// Open one ELF file directly (no build-ID search for the file itself; its
/// debug file, supplementary file and `.dwp` are still looked for in
/// `build_id_dirs`, e.g. [`Places::debug_dirs`]).
pub fn open_file(path: &Path, build_id_dirs: &[PathBuf]) -> Result<ElfSource, Miss> {
    let searcher = Searcher::new(build_id_dirs, false);
    let mut trail = Vec::new();
    let Some(found) = open_checked(path, None, Locator::File, &mut trail) else {
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
    provider: Locator,
    trail: &mut Vec<Attempt>,
) -> Option<Box<dyn SymbolSource>> {
    let trees_searched = matches!(provider, Locator::BuildIdDir | Locator::SystemDebugDir);
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
            trail.push(Attempt::new(provider, place, Some(miss)));
            None
        }
    }
}

/// Build-ID trees: `DIR/.build-id/ab/cdef[.debug]` or `DIR/ab/cdef[.debug]`,
/// the user's (`--build-id-dir`) or the system's.
struct BuildIdDirProvider {
    dirs: Vec<PathBuf>,
    locator: Locator,
    searcher: Searcher,
}

impl Provider for BuildIdDirProvider {
    fn name(&self) -> Locator {
        self.locator
    }

    fn find(&self, key: &ModuleKey, trail: &mut Vec<Attempt>) -> Option<Box<dyn SymbolSource>> {
        if key.build_id.0.is_empty() {
            trail.push(Attempt::new(
                self.name(),
                String::new(),
                Some(Miss::EmptyBuildId),
            ));
            return None;
        }
        let mut files = Vec::new();
        by_build_id_in(&self.dirs, &key.build_id.0, self.locator, &mut files, trail);
        finish(&self.searcher, files, key, self.name(), trail)
    }
}

/// The file at the path the `{{{module}}}` element names. The path comes
/// from the input, so it is opened with care (regular files only, never
/// blocking, see [`file::open_regular`]), only its headers and notes are
/// read until its build ID is the one asked for, and nothing of a file with
/// another build ID is said beyond that.
struct ModulePathProvider {
    searcher: Searcher,
}

impl ModulePathProvider {
    fn open(&self, key: &ModuleKey) -> Result<Found, Refusal> {
        let path = Path::new(&key.name);
        if !path.is_absolute() {
            return Err(Refusal::NotAbsolute);
        }
        let mapped = Mapped::open_as(path).map_err(|e| match e {
            OpenError::Missing => Refusal::Missing,
            OpenError::NotRegular => Refusal::NotRegular,
            OpenError::KernelFileSystem => Refusal::KernelFileSystem,
            OpenError::TooShort | OpenError::NotElf => Refusal::NotElf,
            OpenError::Io(_) => Refusal::Unopenable,
        })?;
        let probe = Probe::read(&mapped.map).map_err(|_| Refusal::NotElf)?;
        match &probe.build_id {
            Some(id) if *id == key.build_id.0 => Ok(Found { mapped, probe }),
            Some(_) => Err(Refusal::OtherBuildId),
            None => Err(Refusal::NoBuildId),
        }
    }
}

impl Provider for ModulePathProvider {
    fn name(&self) -> Locator {
        Locator::ModulePath
    }

    fn find(&self, key: &ModuleKey, trail: &mut Vec<Attempt>) -> Option<Box<dyn SymbolSource>> {
        if key.name.is_empty() {
            return None;
        }
        match self.open(key) {
            Ok(found) => {
                trail.push(Attempt::new(self.name(), key.name.clone(), None));
                finish(&self.searcher, vec![found], key, self.name(), trail)
            }
            Err(why) => {
                trail.push(Attempt::new(
                    self.name(),
                    key.name.clone(),
                    Some(Miss::Refused(why)),
                ));
                None
            }
        }
    }
}

/// `--symbol-path PATH`: ELF files, or folders scanned for them.
struct SymbolPathProvider {
    roots: Vec<PathBuf>,
    searcher: Searcher,
    index: Mutex<Option<Index>>,
}

impl Provider for SymbolPathProvider {
    fn name(&self) -> Locator {
        Locator::SymbolPath
    }

    fn find(&self, key: &ModuleKey, trail: &mut Vec<Attempt>) -> Option<Box<dyn SymbolSource>> {
        let paths: Vec<PathBuf> = {
            let mut guard = crate::base::lock(&self.index);
            let index = guard.get_or_insert_with(|| Index::build(&self.roots));
            match index.by_id.get(&key.build_id.0) {
                Some(paths) => paths.clone(),
                None => {
                    let mut what = format!("{} ELF files indexed", index.files);
                    if index.truncated {
                        what.push_str(", scan cut short by depth or size bounds");
                    }
                    for root in &self.roots {
                        trail.push(Attempt::new(
                            self.name(),
                            format!("{} ({what})", root.display()),
                            Some(Miss::NotFound),
                        ));
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
