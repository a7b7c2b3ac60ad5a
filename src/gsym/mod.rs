//! GSYM symbol source: reads LLVM GSYM files (versions 1 and 2, either byte
//! order, 1/2/4/8-byte address offsets, line tables and inline info).
//!
//! Layout follows the other sources: [`parser`] turns bytes into records,
//! [`resolver`] answers [`SymbolSource`]
//! lookups, [`types`] holds what both share. [`crate::gsym_create`] writes
//! new files (`symfilter gsym create`).

pub mod parser;
pub mod resolver;
pub mod types;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use resolver::{GsymFile, OpenError};

use crate::symbols::{Attempt, BuildId, Locator, Miss, ModuleKey, Provider, SymbolSource};

const PROVIDER: Locator = Locator::Gsym;

/// The providers for the given options (none when the options are empty).
pub fn providers(paths: &[PathBuf]) -> Vec<Box<dyn Provider>> {
    paths
        .iter()
        .map(|p| Box::new(GsymProvider::new(p.clone())) as Box<dyn Provider>)
        .collect()
}

/// What a folder holds, indexed on first use.
#[derive(Default)]
struct FolderIndex {
    by_uuid: HashMap<Vec<u8>, Vec<PathBuf>>,
    /// Files that look like GSYM (magic) but could not be read, with why.
    broken: Vec<(PathBuf, String)>,
}

/// One `--gsym PATH`: a GSYM file, or a folder of GSYM files matched to
/// modules by the UUID in their headers.
pub struct GsymProvider {
    path: PathBuf,
    index: OnceLock<FolderIndex>,
}

impl GsymProvider {
    pub fn new(path: PathBuf) -> GsymProvider {
        GsymProvider {
            path,
            index: OnceLock::new(),
        }
    }

    fn index(&self) -> &FolderIndex {
        self.index.get_or_init(|| {
            let mut idx = FolderIndex::default();
            crate::walk::files(std::slice::from_ref(&self.path), |found| {
                if !looks_like_gsym(found.path) {
                    return;
                }
                let path = found.path.to_path_buf();
                match GsymFile::open(&path) {
                    Ok(f) => idx.by_uuid.entry(f.uuid().to_vec()).or_default().push(path),
                    Err(e) => idx.broken.push((path, e.to_string())),
                }
            });
            idx
        })
    }

    fn find_file(
        &self,
        key: &ModuleKey,
        trail: &mut Vec<Attempt>,
    ) -> Option<Box<dyn SymbolSource>> {
        let place = self.path.display().to_string();
        match GsymFile::open(&self.path) {
            Ok(f) if uuid_matches(f.uuid(), &key.build_id) => {
                trail.push(Attempt::new(PROVIDER, place, None));
                Some(Box::new(f))
            }
            Ok(f) => {
                trail.push(Attempt::new(
                    PROVIDER,
                    place.clone(),
                    Some(Miss::BuildIdMismatch {
                        path: place,
                        found: BuildId(f.uuid().to_vec()).to_hex(),
                        expected: key.build_id.to_hex(),
                    }),
                ));
                None
            }
            Err(e) => {
                trail.push(Attempt::new(
                    PROVIDER,
                    place.clone(),
                    Some(Miss::Unreadable {
                        path: place,
                        reason: e.to_string(),
                    }),
                ));
                None
            }
        }
    }

    fn find_in_folder(
        &self,
        key: &ModuleKey,
        trail: &mut Vec<Attempt>,
    ) -> Option<Box<dyn SymbolSource>> {
        let idx = self.index();
        let id = &key.build_id.0;
        let found = idx.by_uuid.get(id).or_else(|| {
            // Breakpad-derived files may carry only the first 16 bytes.
            id.get(..BREAKPAD_ID_LEN)
                .filter(|_| id.len() > BREAKPAD_ID_LEN)
                .and_then(|p| idx.by_uuid.get(p))
        });
        if let Some(paths) = found {
            for p in paths {
                let place = p.display().to_string();
                match GsymFile::open(p) {
                    Ok(f) => {
                        trail.push(Attempt::new(PROVIDER, place, None));
                        return Some(Box::new(f));
                    }
                    Err(e) => trail.push(Attempt::new(
                        PROVIDER,
                        place.clone(),
                        Some(Miss::Unreadable {
                            path: place,
                            reason: e.to_string(),
                        }),
                    )),
                }
            }
            return None;
        }
        // A damaged file named after the build ID is most likely the one
        // that was meant: say why it was not used.
        let hex = key.build_id.to_hex();
        let mut named = false;
        for (p, why) in &idx.broken {
            let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            if stem.eq_ignore_ascii_case(&hex) {
                named = true;
                let place = p.display().to_string();
                trail.push(Attempt::new(
                    PROVIDER,
                    place.clone(),
                    Some(Miss::Unreadable {
                        path: place,
                        reason: why.clone(),
                    }),
                ));
            }
        }
        if !named {
            trail.push(Attempt::new(
                PROVIDER,
                self.path.display().to_string(),
                Some(Miss::NotFound),
            ));
        }
        None
    }
}

/// Bytes of a build ID a Breakpad debug ID keeps.
const BREAKPAD_ID_LEN: usize = 16;

/// A GSYM UUID matches a build ID when equal, or when it is the 16-byte
/// prefix a Breakpad debug ID keeps (GSYM files made from `.sym` files
/// without a code ID).
fn uuid_matches(uuid: &[u8], id: &BuildId) -> bool {
    uuid == id.0.as_slice()
        || (uuid.len() == BREAKPAD_ID_LEN && id.0.len() > BREAKPAD_ID_LEN && id.0.starts_with(uuid))
}

/// True when the file starts with the GSYM magic in either byte order.
fn looks_like_gsym(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    let ok = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic));
    ok.is_ok() && (magic == *b"MYSG" || magic == *b"GSYM")
}

impl Provider for GsymProvider {
    fn name(&self) -> Locator {
        PROVIDER
    }

    fn find(&self, key: &ModuleKey, trail: &mut Vec<Attempt>) -> Option<Box<dyn SymbolSource>> {
        if self.path.is_dir() {
            self.find_in_folder(key, trail)
        } else {
            self.find_file(key, trail)
        }
    }
}
