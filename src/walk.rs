//! The one walk over folders of symbol files (`--symbol-path` trees,
//! `--gsym` folders), with one policy for every caller: symbolic links
//! are followed and each file or folder is visited once (a link loop is
//! cut where it closes), folders are read in name order, at most
//! [`MAX_DEPTH`] levels below a root and [`MAX_ENTRIES`] entries in all.

use std::collections::HashSet;
use std::fs::Metadata;
use std::path::{Path, PathBuf};

/// Folders deeper than this below a root are not read.
pub(crate) const MAX_DEPTH: usize = 32;
/// At most this many entries (files and folders) are looked at per walk.
pub(crate) const MAX_ENTRIES: usize = 1_000_000;

/// A regular file the walk found.
pub(crate) struct Entry<'p> {
    pub path: &'p Path,
    pub meta: &'p Metadata,
    /// The file is one of the roots itself (named by the user).
    pub root: bool,
}

/// Hands every regular file below `roots` (a root that is a file is
/// handed itself) to `visit`, in order. Returns whether a bound cut the
/// walk short.
pub(crate) fn files(roots: &[PathBuf], mut visit: impl FnMut(Entry<'_>)) -> bool {
    let mut walk = Walk {
        seen: HashSet::new(),
        budget: MAX_ENTRIES,
        truncated: false,
    };
    for root in roots {
        walk.visit(root, 0, &mut visit);
    }
    walk.truncated
}

struct Walk {
    seen: HashSet<(u64, u64)>,
    budget: usize,
    truncated: bool,
}

impl Walk {
    fn visit(&mut self, path: &Path, depth: usize, visit: &mut impl FnMut(Entry<'_>)) {
        if self.budget == 0 {
            self.truncated = true;
            return;
        }
        self.budget -= 1;
        let Ok(meta) = std::fs::metadata(path) else {
            return;
        };
        if !self.seen.insert(file_key(&meta, path)) {
            return;
        }
        if meta.is_dir() {
            if depth >= MAX_DEPTH {
                self.truncated = true;
                return;
            }
            let Ok(entries) = std::fs::read_dir(path) else {
                return;
            };
            let mut children: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
            children.sort();
            for child in children {
                self.visit(&child, depth + 1, visit);
            }
        } else if meta.is_file() {
            visit(Entry {
                path,
                meta: &meta,
                root: depth == 0,
            });
        }
    }
}

#[cfg(unix)]
fn file_key(meta: &Metadata, _path: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn file_key(_meta: &Metadata, path: &Path) -> (u64, u64) {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .hash(&mut h);
    (0, h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(roots: &[PathBuf]) -> (Vec<String>, bool) {
        let mut found = Vec::new();
        let truncated = files(roots, |e| {
            let name = e.path.file_name().unwrap().to_string_lossy();
            found.push(format!("{name}{}", if e.root { " (root)" } else { "" }));
        });
        (found, truncated)
    }

    #[test]
    fn files_in_name_order_roots_first_class() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("b");
        std::fs::create_dir(&sub).unwrap();
        for p in [dir.path().join("c"), dir.path().join("a"), sub.join("z")] {
            std::fs::write(p, b"x").unwrap();
        }
        let roots = [dir.path().to_path_buf(), dir.path().join("a")];
        // `a` is visited once, from the folder.
        assert_eq!(
            walk(&roots),
            (vec!["a".into(), "z".into(), "c".into()], false)
        );
        assert_eq!(walk(&roots[1..]), (vec!["a (root)".into()], false));
    }

    #[test]
    fn deep_folders_are_cut_and_said_to_be() {
        let dir = tempfile::tempdir().unwrap();
        let mut deep = dir.path().to_path_buf();
        for _ in 0..MAX_DEPTH {
            deep.push("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.parent().unwrap().join("last"), b"x").unwrap();
        std::fs::write(deep.join("too_deep"), b"x").unwrap();
        assert_eq!(
            walk(&[dir.path().to_path_buf()]),
            (vec!["last".into()], true)
        );
    }

    #[cfg(unix)]
    #[test]
    fn link_loops_are_cut() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("a");
        std::fs::create_dir(&sub).unwrap();
        std::os::unix::fs::symlink(dir.path(), sub.join("loop")).unwrap();
        std::fs::write(sub.join("f"), b"x").unwrap();
        assert_eq!(walk(&[dir.path().to_path_buf()]), (vec!["f".into()], false));
    }
}
