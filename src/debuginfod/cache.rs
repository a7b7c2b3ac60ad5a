//! The debuginfod client cache, laid out as elfutils lays it out so gdb,
//! perf, `debuginfod-find` and symfilter share one cache:
//!
//! ```text
//! <root>/<buildid>/debuginfo     the debug file (mode 0400)
//! <root>/<buildid>/executable    the executable
//! <root>/<buildid>/<kind>        empty file: negative result, fresh for
//!                                <root>/cache_miss_s seconds (default 600)
//! ```
//!
//! Files are written to a temporary file in the same directory and renamed
//! into place, so a reader (this process, another symfilter, gdb) sees
//! either nothing or a whole file. Two processes downloading the same file
//! at once both rename a complete, verified copy; the last one wins.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use tempfile::{NamedTempFile, PersistError};

/// elfutils' default for `cache_miss_s`.
pub const DEFAULT_MISS_TTL: Duration = Duration::from_secs(600);

/// Which artifact of a build ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Debuginfo,
    Executable,
}

impl Kind {
    /// The file name in the cache and the last URL segment.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Debuginfo => "debuginfo",
            Kind::Executable => "executable",
        }
    }
}

/// What the cache holds for one build ID and kind.
#[derive(Debug, PartialEq, Eq)]
pub enum Probe {
    /// A non-empty file (still to be verified by the caller).
    Present(PathBuf),
    /// A fresh negative entry: do not ask the servers.
    Negative {
        age: Duration,
        ttl: Duration,
    },
    /// A negative entry older than the TTL: ask again.
    Expired {
        age: Duration,
        ttl: Duration,
    },
    Absent,
}

pub struct Cache {
    root: PathBuf,
}

impl Cache {
    pub fn new(root: PathBuf) -> Cache {
        Cache { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<root>/<hex>/<kind>`. `hex` must already be validated (only hex
    /// digits) by the caller: it becomes a path component.
    pub fn entry(&self, hex: &str, kind: Kind) -> PathBuf {
        self.root.join(hex).join(kind.as_str())
    }

    /// How long a negative entry stays fresh: `<root>/cache_miss_s` when it
    /// holds a number, else 600 s (what elfutils writes and reads).
    pub fn miss_ttl(&self) -> Duration {
        let path = self.root.join("cache_miss_s");
        let mut buf = Vec::new();
        // Read at most a few bytes: a hostile or huge file is just ignored.
        let Ok(file) = File::open(&path) else {
            return DEFAULT_MISS_TTL;
        };
        if io::Read::read_to_end(&mut io::Read::take(file, 32), &mut buf).is_err() {
            return DEFAULT_MISS_TTL;
        }
        std::str::from_utf8(&buf)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .map_or(DEFAULT_MISS_TTL, Duration::from_secs)
    }

    pub fn probe(&self, hex: &str, kind: Kind) -> Probe {
        let path = self.entry(hex, kind);
        let Ok(meta) = fs::metadata(&path) else {
            return Probe::Absent;
        };
        if !meta.is_file() {
            return Probe::Absent;
        }
        if meta.len() > 0 {
            return Probe::Present(path);
        }
        let age = meta
            .modified()
            .ok()
            .and_then(|m| SystemTime::now().duration_since(m).ok())
            .unwrap_or(Duration::ZERO);
        let ttl = self.miss_ttl();
        if age <= ttl {
            Probe::Negative { age, ttl }
        } else {
            Probe::Expired { age, ttl }
        }
    }

    /// A temporary file next to where `hex`/`kind` will live (creating the
    /// build-ID directory, mode 0700 as elfutils makes it).
    pub fn begin(&self, hex: &str, kind: Kind) -> io::Result<NamedTempFile> {
        let dir = self.root.join(hex);
        fs::create_dir_all(&self.root)?;
        match DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        tempfile::Builder::new()
            .prefix(&format!("{}.", kind.as_str()))
            .rand_bytes(6)
            .tempfile_in(&dir)
    }

    /// Move a verified download into place atomically; read-only (0400),
    /// as elfutils leaves its cache files.
    /// On failure the temporary file is handed back.
    pub fn commit(
        &self,
        tmp: NamedTempFile,
        hex: &str,
        kind: Kind,
    ) -> Result<PathBuf, PersistError> {
        let path = self.entry(hex, kind);
        let prepared = tmp
            .as_file()
            .sync_all()
            // On the open file (fchmod), not by path.
            .and_then(|()| {
                tmp.as_file()
                    .set_permissions(fs::Permissions::from_mode(0o400))
            });
        if let Err(error) = prepared {
            return Err(PersistError { error, file: tmp });
        }
        tmp.persist(&path)?;
        Ok(path)
    }

    /// Record that no server has `hex`/`kind`: an empty file, or a fresh
    /// mtime on an existing empty one. Never replaces a real file another
    /// process may have put there meanwhile. Best effort.
    pub fn store_negative(&self, hex: &str, kind: Kind) {
        let path = self.entry(hex, kind);
        if fs::create_dir_all(&self.root).is_err() {
            return;
        }
        let _ = DirBuilder::new().mode(0o700).create(self.root.join(hex));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(&path)
        {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                if let Ok(f) = File::open(&path)
                    && f.metadata().is_ok_and(|m| m.is_file() && m.len() == 0)
                {
                    let _ = f.set_modified(SystemTime::now());
                }
            }
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn layout_negative_entries_and_ttl() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Cache::new(dir.path().join("c"));
        let hex = "00aabb";
        assert_eq!(cache.probe(hex, Kind::Debuginfo), Probe::Absent);
        cache.store_negative(hex, Kind::Debuginfo);
        let path = dir.path().join("c/00aabb/debuginfo");
        assert_eq!(fs::metadata(&path).expect("negative entry").len(), 0);
        assert!(matches!(
            cache.probe(hex, Kind::Debuginfo),
            Probe::Negative { ttl, .. } if ttl == DEFAULT_MISS_TTL
        ));
        assert_eq!(cache.probe(hex, Kind::Executable), Probe::Absent);

        // An old negative entry expires; cache_miss_s is honoured.
        let old = SystemTime::now() - Duration::from_secs(120);
        File::open(&path)
            .expect("open")
            .set_modified(old)
            .expect("set mtime");
        fs::write(dir.path().join("c/cache_miss_s"), "60\n").expect("write ttl");
        assert!(matches!(
            cache.probe(hex, Kind::Debuginfo),
            Probe::Expired { ttl, .. } if ttl == Duration::from_secs(60)
        ));
        // Storing again refreshes it.
        cache.store_negative(hex, Kind::Debuginfo);
        assert!(matches!(
            cache.probe(hex, Kind::Debuginfo),
            Probe::Negative { .. }
        ));
    }

    #[test]
    fn commit_is_atomic_and_read_only_and_negative_never_clobbers() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Cache::new(dir.path().to_path_buf());
        let mut tmp = cache.begin("abcd", Kind::Executable).expect("begin");
        assert!(
            tmp.path()
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("executable.") && n.len() == "executable.".len() + 6)
        );
        assert_eq!(cache.probe("abcd", Kind::Executable), Probe::Absent);
        tmp.write_all(b"payload").expect("write");
        let path = cache.commit(tmp, "abcd", Kind::Executable).expect("commit");
        assert_eq!(path, dir.path().join("abcd/executable"));
        assert_eq!(fs::read(&path).expect("read"), b"payload");
        let meta = fs::metadata(&path).expect("meta");
        assert_eq!(meta.permissions().mode() & 0o777, 0o400);
        let dmeta = fs::metadata(dir.path().join("abcd")).expect("dir meta");
        assert_eq!(dmeta.permissions().mode() & 0o777, 0o700);
        cache.store_negative("abcd", Kind::Executable);
        assert_eq!(cache.probe("abcd", Kind::Executable), Probe::Present(path));
        // Only the final file is left: no stray temporaries.
        let names: Vec<_> = fs::read_dir(dir.path().join("abcd"))
            .expect("readdir")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("executable")]);
    }

    #[test]
    fn hostile_cache_miss_file_is_ignored() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Cache::new(dir.path().to_path_buf());
        fs::write(dir.path().join("cache_miss_s"), "9".repeat(10_000)).expect("write");
        assert_eq!(cache.miss_ttl(), DEFAULT_MISS_TTL);
    }
}
