//! Opening a file that a log names, inside the one directory the user gave
//! for such files, and nowhere else.
//!
//! A log is untrusted input: `{{{dumpfile:sancov:/etc/shadow}}}`, `../`
//! names, symbolic links and FIFOs must not make symfilter read, or hang
//! on, anything outside that directory. So the name is resolved one
//! component at a time from a descriptor of the directory (`openat`), never
//! as a path string:
//!
//! * absolute names, `..` components and NUL bytes are refused before
//!   anything is opened;
//! * no component is followed if it is a symbolic link (`O_NOFOLLOW` on
//!   each), so nothing resolves outside the directory, and nothing changes
//!   between a check and the open (there is no separate check);
//! * the file is opened non-blocking (a FIFO or a device cannot make the
//!   open wait) and then checked with `fstat` on the descriptor: anything
//!   but a regular file is refused before a byte is read.
//!
//! The directory itself is the user's choice (`--dumpfile-dir`, or the
//! log's directory) and is opened as given.

use std::fs::File;
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;

/// Why a name was not opened. Messages name the file, never its content.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("empty file name")]
    Empty,
    #[error("file name holds a NUL byte")]
    Nul,
    #[error("absolute file names are not read (names are relative to {})", .0.display())]
    Absolute(PathBuf),
    #[error("file names with '..' are not read (names are relative to {})", .0.display())]
    Parent(PathBuf),
    #[error("no such file {}", .0.display())]
    NotFound(PathBuf),
    #[error("{} is a symbolic link (not followed)", .0.display())]
    Symlink(PathBuf),
    #[error("{} is not a regular file ({})", .0.display(), .1)]
    NotRegular(PathBuf, &'static str),
    #[error("{}: {}", .0.display(), .1)]
    Io(PathBuf, std::io::Error),
}

/// Open `name` (bytes from a log; `/`-separated) for reading inside `dir`.
/// Returns the file and its path for messages (`dir/name`).
pub fn open_in(dir: &Path, name: &[u8]) -> Result<(File, PathBuf), Refused> {
    if name.is_empty() {
        return Err(Refused::Empty);
    }
    if name.contains(&0) {
        return Err(Refused::Nul);
    }
    if name[0] == b'/' {
        return Err(Refused::Absolute(dir.to_path_buf()));
    }
    let parts: Vec<&[u8]> = name
        .split(|&b| b == b'/')
        .filter(|p| !p.is_empty() && *p != b".")
        .collect();
    if parts.contains(&&b".."[..]) {
        return Err(Refused::Parent(dir.to_path_buf()));
    }
    let shown = dir.join(bytes_path(name));
    let io = |e: Errno| match e {
        Errno::NOENT | Errno::NOTDIR => Refused::NotFound(shown.clone()),
        Errno::LOOP => Refused::Symlink(shown.clone()),
        e => Refused::Io(shown.clone(), e.into()),
    };
    let Some((last, inner)) = parts.split_last() else {
        // `.` or `./`: the directory itself.
        return Err(Refused::NotRegular(shown, "a directory"));
    };
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut at = rustix::fs::open(dir, dir_flags, Mode::empty())
        .map_err(|e| Refused::Io(dir.to_path_buf(), e.into()))?;
    for part in inner {
        let part = bytes_path(part);
        at = match rustix::fs::openat(&at, part, dir_flags | OFlags::NOFOLLOW, Mode::empty()) {
            Ok(fd) => fd,
            // A link to a directory fails as "not a directory": say why.
            Err(Errno::NOTDIR | Errno::LOOP)
                if rustix::fs::statat(&at, part, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink) =>
            {
                return Err(Refused::Symlink(shown));
            }
            Err(e) => return Err(io(e)),
        };
    }
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(&at, bytes_path(last), flags, Mode::empty()).map_err(io)?;
    let st = rustix::fs::fstat(&fd).map_err(io)?;
    let kind = match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => None,
        FileType::Directory => Some("a directory"),
        FileType::Fifo => Some("a FIFO"),
        FileType::Socket => Some("a socket"),
        FileType::CharacterDevice | FileType::BlockDevice => Some("a device"),
        _ => Some("not a file"),
    };
    if let Some(kind) = kind {
        return Err(Refused::NotRegular(shown, kind));
    }
    Ok((File::from(fd), shown))
}

fn bytes_path(b: &[u8]) -> &Path {
    use std::os::unix::ffi::OsStrExt;
    Path::new(std::ffi::OsStr::from_bytes(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn read(dir: &Path, name: &[u8]) -> Result<String, String> {
        open_in(dir, name)
            .map(|(mut f, _)| {
                let mut s = String::new();
                f.read_to_string(&mut s).expect("read");
                s
            })
            .map_err(|e| e.to_string())
    }

    #[test]
    fn only_regular_files_inside_the_directory() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("logs");
        std::fs::create_dir_all(dir.join("sub")).expect("mkdir");
        std::fs::write(dir.join("sub/a.sancov"), "inside").expect("write");
        std::fs::write(tmp.path().join("secret"), "outside").expect("write");
        std::os::unix::fs::symlink(tmp.path().join("secret"), dir.join("link")).expect("link");
        std::os::unix::fs::symlink(tmp.path(), dir.join("up")).expect("link");
        rustix::fs::mkfifoat(rustix::fs::CWD, dir.join("fifo"), Mode::RUSR | Mode::WUSR)
            .expect("mkfifo");
        let d = dir.display();

        assert_eq!(read(&dir, b"sub/a.sancov").as_deref(), Ok("inside"));
        assert_eq!(read(&dir, b"./sub//a.sancov").as_deref(), Ok("inside"));
        let secret = tmp.path().join("secret");
        let refused = [
            (
                secret.to_str().expect("utf-8").as_bytes(),
                format!("absolute file names are not read (names are relative to {d})"),
            ),
            (
                b"../secret",
                format!("file names with '..' are not read (names are relative to {d})"),
            ),
            (
                b"sub/../../secret",
                format!("file names with '..' are not read (names are relative to {d})"),
            ),
            (
                b"link",
                format!("{d}/link is a symbolic link (not followed)"),
            ),
            (
                b"up/secret",
                format!("{d}/up/secret is a symbolic link (not followed)"),
            ),
            (b"fifo", format!("{d}/fifo is not a regular file (a FIFO)")),
            (
                b"sub",
                format!("{d}/sub is not a regular file (a directory)"),
            ),
            (b".", format!("{d}/. is not a regular file (a directory)")),
            (b"nope", format!("no such file {d}/nope")),
            (b"", "empty file name".to_string()),
            (b"a\0b", "file name holds a NUL byte".to_string()),
        ];
        for (name, want) in refused {
            assert_eq!(
                read(&dir, name),
                Err(want),
                "{}",
                String::from_utf8_lossy(name)
            );
        }
    }
}
