//! Finding a module's files: build-ID trees, `--symbol-path` indexes,
//! `.gnu_debuglink`, `.gnu_debugaltlink` and `.dwp` packages. Every place
//! looked at is recorded as an [`Attempt`]; every file used is checked to
//! carry the build ID asked for.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::file::{self, Mapped, Probe};
use super::source::Parts;
use crate::base::{BuildId, bytes_to_path};
use crate::symbols::{Attempt, Locator, Miss, Note};

/// The system's debug directory: searched by build ID and by debug link
/// after the user's own trees, unless the user asks for none.
pub const SYSTEM_DEBUG_DIR: &str = "/usr/lib/debug";

/// Where debug files are looked for by build ID and by debug link.
#[derive(Clone, Debug)]
pub(crate) struct Searcher {
    /// `--build-id-dir` trees, in order.
    pub user: Vec<PathBuf>,
    /// The system's trees, after the user's (empty when turned off).
    pub system: Vec<PathBuf>,
}

/// A file that was found and checked, with what it is.
pub(crate) struct Found {
    pub mapped: Mapped,
    pub probe: Probe,
}

fn attempt(trail: &mut Vec<Attempt>, provider: Locator, place: &Path, failure: Option<Miss>) {
    trail.push(Attempt::new(provider, place.display().to_string(), failure));
}

fn hex(id: Option<&[u8]>) -> String {
    match id {
        Some(id) => BuildId(id.to_vec()).to_hex(),
        None => "missing".to_string(),
    }
}

/// Open `path` and check that it is an ELF file carrying build ID `want`
/// (when `want` is given). Records the attempt.
pub(crate) fn open_checked(
    path: &Path,
    want: Option<&[u8]>,
    provider: Locator,
    trail: &mut Vec<Attempt>,
) -> Option<Found> {
    open_with(path, want, false, provider, trail)
}

/// [`open_checked`] for a file at a build-ID path: one without a build-ID
/// note is taken on the strength of its path (as LLVM takes it), with a
/// note; one whose note names another build ID never is.
fn open_by_id_path(
    path: &Path,
    want: &[u8],
    provider: Locator,
    trail: &mut Vec<Attempt>,
) -> Option<Found> {
    open_with(path, Some(want), true, provider, trail)
}

fn open_with(
    path: &Path,
    want: Option<&[u8]>,
    trust_path: bool,
    provider: Locator,
    trail: &mut Vec<Attempt>,
) -> Option<Found> {
    let mapped = match Mapped::open(path) {
        Ok(m) => m,
        Err(miss) => {
            attempt(trail, provider, path, Some(miss));
            return None;
        }
    };
    let probe = match Probe::read(&mapped.map) {
        Ok(p) => p,
        Err(reason) => {
            attempt(trail, provider, path, Some(file::unreadable(path, reason)));
            return None;
        }
    };
    if trust_path && probe.build_id.is_none() {
        let mut a = Attempt::new(provider, path.display().to_string(), None);
        a.note = Some(Note::TrustedPath);
        trail.push(a);
        return Some(Found { mapped, probe });
    }
    if let Some(want) = want
        && probe.build_id.as_deref() != Some(want)
    {
        let miss = Miss::BuildIdMismatch {
            path: path.display().to_string(),
            found: hex(probe.build_id.as_deref()),
            expected: hex(Some(want)),
        };
        attempt(trail, provider, path, Some(miss));
        return None;
    }
    attempt(trail, provider, path, None);
    Some(Found { mapped, probe })
}

/// The places a build-ID tree may hold a file: `DIR/.build-id/ab/cdef.debug`,
/// the same without `.debug`, and `DIR` itself being a `.build-id` folder.
pub(crate) fn build_id_paths(dir: &Path, id: &[u8]) -> Vec<PathBuf> {
    let Some((first, rest)) = id.split_first() else {
        return Vec::new();
    };
    let head = format!("{first:02x}");
    let rest = BuildId(rest.to_vec()).to_hex();
    let mut out = Vec::with_capacity(4);
    for base in [dir.join(".build-id"), dir.to_path_buf()] {
        let sub = base.join(&head);
        out.push(sub.join(format!("{rest}.debug")));
        if !rest.is_empty() {
            out.push(sub.join(&rest));
        }
    }
    out
}

impl Searcher {
    /// The user's trees, then the system's when `system` is on.
    pub(crate) fn new(user: &[PathBuf], system: bool) -> Searcher {
        Searcher {
            user: user.to_vec(),
            system: if system {
                vec![PathBuf::from(SYSTEM_DEBUG_DIR)]
            } else {
                Vec::new()
            },
        }
    }

    /// Every tree, the user's first.
    pub(crate) fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
        self.user.iter().chain(&self.system)
    }

    /// Look in the user's build-ID trees, then the system's. Returns the
    /// first file found; if it has no DWARF, keeps looking for one that
    /// does and returns both.
    pub(crate) fn by_build_id(&self, id: &[u8], trail: &mut Vec<Attempt>) -> Vec<Found> {
        let mut found = Vec::new();
        if !by_build_id_in(&self.user, id, Locator::BuildIdDir, &mut found, trail) {
            by_build_id_in(&self.system, id, Locator::SystemDebugDir, &mut found, trail);
        }
        found
    }

    /// Complete a module from the files found for it: when none carries
    /// DWARF, look for the debug file (build-ID trees, then
    /// `.gnu_debuglink`); then the dwz supplementary file and a `.dwp`.
    pub(crate) fn complete(
        &self,
        mut files: Vec<Found>,
        want: Option<&[u8]>,
        trees_searched: bool,
        trail: &mut Vec<Attempt>,
    ) -> Result<Parts, Miss> {
        if files.is_empty() {
            return Err(Miss::NotFound);
        }
        // Build ID to check companions against: asked for, or the file's own.
        let id: Option<Vec<u8>> = want
            .map(<[u8]>::to_vec)
            .or_else(|| files[0].probe.build_id.clone());
        if !files.iter().any(|f| f.probe.has_dwarf) {
            let mut extra = Vec::new();
            if let Some(id) = id.as_deref()
                && !trees_searched
            {
                for f in self.by_build_id(id, trail) {
                    if !files
                        .iter()
                        .any(|g| same_file(&g.mapped.path, &f.mapped.path))
                    {
                        extra.push(f);
                    }
                }
            }
            if !extra.iter().any(|f| f.probe.has_dwarf) {
                let links: Vec<(PathBuf, Vec<u8>, u32)> = files
                    .iter()
                    .filter_map(|f| {
                        let (name, crc) = f.probe.debuglink.clone()?;
                        Some((f.mapped.path.clone(), name, crc))
                    })
                    .collect();
                for (from, name, crc) in links {
                    if let Some(f) = self.debuglink(&from, &name, crc, id.as_deref(), trail) {
                        extra.push(f);
                        break;
                    }
                }
            }
            files.extend(extra);
        }
        let dwarf = files.iter().position(|f| f.probe.has_dwarf);
        let sup = dwarf.and_then(|d| {
            let (path, sup_id) = files[d].probe.altlink.clone()?;
            self.altlink(&files[d].mapped.path, &path, &sup_id, trail)
        });
        let dwp = dwarf.and_then(|d| self.dwp(&files[d].mapped.path, &files[0].mapped.path, trail));
        Ok(Parts {
            files: files.into_iter().map(|f| f.mapped).collect(),
            dwarf,
            sup: sup.map(|f| f.mapped),
            dwp,
        })
    }

    /// `.gnu_debuglink`: next to the file, in its `.debug` folder, and under
    /// each debug directory at the file's own directory (as GDB does). The
    /// CRC must match, and the build ID when both files have one.
    fn debuglink(
        &self,
        from: &Path,
        name: &[u8],
        crc: u32,
        id: Option<&[u8]>,
        trail: &mut Vec<Attempt>,
    ) -> Option<Found> {
        let name = bytes_to_path(name);
        // A link is a plain file name; refuse anything that climbs out.
        if name.components().count() != 1 || name.is_absolute() {
            attempt(
                trail,
                Locator::Debuglink,
                &name,
                Some(Miss::DebuglinkName {
                    from: from.display().to_string(),
                }),
            );
            return None;
        }
        let dir = from.parent().map(Path::to_path_buf).unwrap_or_default();
        let absdir = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
        let mut candidates = vec![dir.join(&name), dir.join(".debug").join(&name)];
        for d in self.dirs() {
            let rel = absdir.strip_prefix("/").unwrap_or(&absdir);
            candidates.push(d.join(rel).join(&name));
        }
        for path in candidates {
            if same_file(&path, from) {
                continue;
            }
            let mapped = match Mapped::open(&path) {
                Ok(m) => m,
                Err(miss) => {
                    attempt(trail, Locator::Debuglink, &path, Some(miss));
                    continue;
                }
            };
            let actual = file::crc32(&mapped.map);
            if actual != crc {
                let miss = Miss::CrcMismatch {
                    path: path.display().to_string(),
                    from: from.display().to_string(),
                    found: actual,
                    expected: crc,
                };
                attempt(trail, Locator::Debuglink, &path, Some(miss));
                continue;
            }
            let probe = match Probe::read(&mapped.map) {
                Ok(p) => p,
                Err(reason) => {
                    attempt(
                        trail,
                        Locator::Debuglink,
                        &path,
                        Some(file::unreadable(&path, reason)),
                    );
                    continue;
                }
            };
            if let (Some(want), Some(got)) = (id, probe.build_id.as_deref())
                && want != got
            {
                let miss = Miss::BuildIdMismatch {
                    path: path.display().to_string(),
                    found: hex(Some(got)),
                    expected: hex(Some(want)),
                };
                attempt(trail, Locator::Debuglink, &path, Some(miss));
                continue;
            }
            attempt(trail, Locator::Debuglink, &path, None);
            return Some(Found { mapped, probe });
        }
        None
    }

    /// `.gnu_debugaltlink` (dwz): the path as written (relative to the
    /// debug file's folder), under the debug directories, then by build ID.
    fn altlink(
        &self,
        from: &Path,
        path: &[u8],
        sup_id: &[u8],
        trail: &mut Vec<Attempt>,
    ) -> Option<Found> {
        let path = bytes_to_path(path);
        let dir = from.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut candidates = Vec::new();
        if path.is_absolute() {
            candidates.push(path.clone());
            if let Ok(rest) = path.strip_prefix(SYSTEM_DEBUG_DIR) {
                for d in self.dirs() {
                    candidates.push(d.join(rest));
                }
            }
        } else {
            candidates.push(dir.join(&path));
        }
        for d in self.dirs() {
            candidates.extend(build_id_paths(d, sup_id));
        }
        if let Some(base) = path.file_name() {
            candidates.push(dir.join(base));
        }
        let mut seen = HashSet::new();
        for c in candidates {
            if !seen.insert(c.clone()) {
                continue;
            }
            if !c.exists() {
                attempt(trail, Locator::Debugaltlink, &c, Some(Miss::NotFound));
                continue;
            }
            if let Some(f) = open_checked(&c, Some(sup_id), Locator::Debugaltlink, trail) {
                return Some(f);
            }
        }
        None
    }

    /// A DWARF package next to the debug file or the binary:
    /// `NAME.dwp`, or `STEM.dwp` for `STEM.debug`.
    fn dwp(&self, dwarf_file: &Path, first: &Path, trail: &mut Vec<Attempt>) -> Option<Mapped> {
        let mut candidates = Vec::new();
        for p in [dwarf_file, first] {
            let mut s: OsString = p.as_os_str().to_owned();
            s.push(".dwp");
            candidates.push(PathBuf::from(s));
            if p.extension().is_some_and(|e| e == "debug") {
                candidates.push(p.with_extension("dwp"));
            }
        }
        for c in candidates {
            if !c.is_file() {
                continue;
            }
            match Mapped::open(&c) {
                Ok(m) => {
                    attempt(trail, Locator::Dwp, &c, None);
                    return Some(m);
                }
                Err(miss) => attempt(trail, Locator::Dwp, &c, Some(miss)),
            }
        }
        None
    }
}

/// Look in `dirs`' build-ID layouts for `id`, adding what is found to
/// `found`; true once a file with DWARF is among them.
pub(crate) fn by_build_id_in(
    dirs: &[PathBuf],
    id: &[u8],
    provider: Locator,
    found: &mut Vec<Found>,
    trail: &mut Vec<Attempt>,
) -> bool {
    for dir in dirs {
        for path in build_id_paths(dir, id) {
            if found.iter().any(|f| same_file(&f.mapped.path, &path)) {
                continue;
            }
            // Tried already for this module (the system's trees are also
            // where a found file's debug file is looked for): once is
            // enough, in the search and in `--explain`.
            let shown = path.display().to_string();
            if trail
                .iter()
                .any(|a| a.provider == provider && a.place == shown)
            {
                continue;
            }
            if let Some(f) = open_by_id_path(&path, id, provider, trail) {
                let has_dwarf = f.probe.has_dwarf;
                found.push(f);
                if has_dwarf {
                    return true;
                }
            }
        }
    }
    false
}

fn same_file(a: &Path, b: &Path) -> bool {
    if a == b {
        return true;
    }
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Where the `.dwo` file a skeleton unit names is looked for, in order: the
/// name joined to the unit's compilation directory (as LLVM does), then its
/// base name in each of `dirs` (the folders of the module's files).
pub(crate) fn dwo_paths<'d>(
    name: &[u8],
    comp_dir: Option<&[u8]>,
    dirs: impl IntoIterator<Item = &'d Path>,
) -> Vec<PathBuf> {
    let name = bytes_to_path(name);
    let mut paths = vec![match comp_dir {
        Some(dir) if name.is_relative() => bytes_to_path(dir).join(&name),
        _ => name.clone(),
    }];
    if let Some(base) = name.file_name() {
        paths.extend(dirs.into_iter().map(|dir| dir.join(base)));
    }
    paths
}

/// Build-ID index of `--symbol-path` entries, built on first use.
#[derive(Default)]
pub(crate) struct Index {
    pub by_id: HashMap<Vec<u8>, Vec<PathBuf>>,
    /// Files examined, for messages.
    pub files: usize,
    /// Whether a bound stopped the scan early.
    pub truncated: bool,
}

impl Index {
    pub(crate) fn build(roots: &[PathBuf]) -> Index {
        let mut index = Index::default();
        index.truncated = crate::walk::files(roots, |found| {
            // Smaller files cannot be ELF files; a file the user named is
            // read whatever its size, for the message.
            if !found.root && found.meta.len() < 52 {
                return;
            }
            match file::read_build_id(found.path) {
                Ok(Some(id)) => {
                    index.files += 1;
                    index
                        .by_id
                        .entry(id)
                        .or_default()
                        .push(found.path.to_path_buf());
                }
                Ok(None) => index.files += 1,
                Err(_) => {}
            }
        });
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_id_layouts() {
        let p = build_id_paths(Path::new("/d"), &[0xab, 0xcd, 0xef]);
        let p: Vec<_> = p.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(
            p,
            [
                "/d/.build-id/ab/cdef.debug",
                "/d/.build-id/ab/cdef",
                "/d/ab/cdef.debug",
                "/d/ab/cdef"
            ]
        );
        let one = build_id_paths(Path::new("/d"), &[0xab]);
        assert_eq!(one[0], Path::new("/d/.build-id/ab/.debug"));
        assert_eq!(one.len(), 2);
        assert!(build_id_paths(Path::new("/d"), &[]).is_empty());
    }

    #[test]
    fn dwo_paths_comp_dir_first_then_next_to_the_files() {
        let dirs = [Path::new("/bin"), Path::new("/lib")];
        let paths = |name: &str, comp: Option<&str>| {
            dwo_paths(name.as_bytes(), comp.map(str::as_bytes), dirs)
        };
        assert_eq!(
            paths("obj/a.dwo", Some("/build")),
            ["/build/obj/a.dwo", "/bin/a.dwo", "/lib/a.dwo"].map(PathBuf::from)
        );
        assert_eq!(
            paths("/abs/a.dwo", Some("/build")),
            ["/abs/a.dwo", "/bin/a.dwo", "/lib/a.dwo"].map(PathBuf::from)
        );
        assert_eq!(paths("a.dwo", None)[0], PathBuf::from("a.dwo"));
    }

    #[test]
    fn system_dir_after_the_users() {
        let user = [PathBuf::from("/mine")];
        let s = Searcher::new(&user, true);
        let all: Vec<_> = s.dirs().cloned().collect();
        assert_eq!(
            all,
            [PathBuf::from("/mine"), PathBuf::from("/usr/lib/debug")]
        );
        assert_eq!(Searcher::new(&user, false).dirs().count(), 1);
    }

    /// The index has each ELF file once, under its build ID, however many
    /// links lead to it (a link loop included).
    #[cfg(unix)]
    #[test]
    fn index_has_each_file_once() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/elf/bin/c_O0");
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::create_dir(&a).unwrap();
        std::fs::copy(&fixture, a.join("c_O0")).unwrap();
        std::fs::write(a.join("junk"), vec![0u8; 100]).unwrap();
        std::os::unix::fs::symlink(dir.path(), a.join("loop")).unwrap();
        std::os::unix::fs::symlink(&a, dir.path().join("b")).unwrap();
        let index = Index::build(&[dir.path().to_path_buf()]);
        let id = file::read_build_id(&fixture).unwrap().unwrap();
        assert_eq!(index.files, 1);
        assert_eq!(index.by_id.len(), 1);
        assert_eq!(index.by_id[&id], [a.join("c_O0")]);
        assert!(!index.truncated);
    }
}
