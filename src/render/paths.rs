//! Source-path shortening for `--format=human`.
//!
//! Pure functions over path text; the state (what has been stated to the
//! reader, which backtrace is open) lives in [`super::human`].
//!
//! The rules, applied to each path unless `--full-paths`:
//!
//! 1. `--strip-path-prefix P`: a path under `P` (at a directory boundary) is
//!    shown without it. Nothing else is done to it.
//! 2. `.` and `..` components and doubled slashes are removed lexically:
//!    `/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/vector`
//!    becomes `/usr/include/c++/12/vector`. A path that would climb above
//!    `/` is left as it is.
//! 3. Toolchain sources are written with a token whose meaning is stated
//!    in the output before its first use (and again when it changes):
//!    `<rust>` for `/rustc/<commit>` (or a rustup `lib/rustlib/src/rust`),
//!    `<cargo>` for a cargo registry source directory
//!    (`~/.cargo/registry/src/index.crates.io-<hash>`), `<cargo-git>` for
//!    `~/.cargo/git/checkouts`.
//! 4. The other absolute paths of one backtrace that are not in a system
//!    location ([`Class::System`]) are shown relative to their longest
//!    common directory, stated once above the backtrace (see
//!    [`common_dir`]).
//!
//! Paths are treated as bytes where it matters: a common prefix is only
//! ever cut just after a separator (ASCII), so it never splits a UTF-8
//! sequence.

use std::borrow::Cow;

/// An abbreviation for a toolchain source root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token {
    Rust,
    Cargo,
    CargoGit,
}

impl Token {
    pub const ALL: [Token; 3] = [Token::Rust, Token::Cargo, Token::CargoGit];

    /// The text written in place of the root.
    pub fn text(self) -> &'static str {
        match self {
            Token::Rust => "<rust>",
            Token::Cargo => "<cargo>",
            Token::CargoGit => "<cargo-git>",
        }
    }

    pub fn index(self) -> usize {
        match self {
            Token::Rust => 0,
            Token::Cargo => 1,
            Token::CargoGit => 2,
        }
    }
}

/// What kind of path this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class<'a> {
    /// A toolchain source: written as the token followed by `rest` (which
    /// starts with `/`); `root` is what the token stands for.
    Token {
        token: Token,
        root: &'a str,
        rest: &'a str,
    },
    /// An absolute path in a system location (`/usr/include`, `/usr/lib`,
    /// ...): shown in full, never part of a backtrace's common directory.
    System,
    /// Any other absolute path: a candidate for the common directory.
    Project,
    /// A relative path (as the debug info gives it): shown as it is.
    Relative,
}

/// Directories whose files are not the program's own sources. `/usr/src`
/// itself is not one (containers often build in `/usr/src/app`).
const SYSTEM_DIRS: &[&str] = &[
    "/usr/include/",
    "/usr/local/include/",
    "/usr/lib/",
    "/usr/lib32/",
    "/usr/lib64/",
    "/usr/libexec/",
    "/usr/share/",
    "/usr/src/debug/",
    "/lib/",
    "/lib64/",
    "/nix/store/",
    "/gnu/store/",
];

/// True for `/...`, `\\...` and `C:\...` / `C:/...`.
pub fn is_absolute(p: &[u8]) -> bool {
    match p {
        [b'/', ..] | [b'\\', b'\\', ..] => true,
        [d, b':', b'/' | b'\\', ..] => d.is_ascii_alphabetic(),
        _ => false,
    }
}

fn is_sep(b: u8) -> bool {
    b == b'/' || b == b'\\'
}

fn is_hex(s: &str, min: usize, max: usize) -> bool {
    (min..=max).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `name-<16 hex digits>`, as cargo names its registry index and git
/// checkout directories.
fn cargo_hashed(component: &str) -> bool {
    match component.rsplit_once('-') {
        Some((name, hash)) => !name.is_empty() && is_hex(hash, 16, 16),
        None => false,
    }
}

/// Split `p` at the end of the component that starts at `at` (a byte index
/// just after a `/`): the root up to and without the `/` after it, and the
/// rest from that `/`. `None` when no component or nothing follows.
fn split_after_component(p: &str, at: usize) -> Option<(&str, &str)> {
    let end = at + p.get(at..)?.find('/')?;
    if end == at || end + 1 >= p.len() {
        return None;
    }
    Some((&p[..end], &p[end..]))
}

fn token_of(p: &str) -> Option<(Token, &str, &str)> {
    if let Some(after) = p.strip_prefix("/rustc/") {
        let (hash, _) = after.split_once('/')?;
        if is_hex(hash, 7, 64) {
            let (root, rest) = split_after_component(p, "/rustc/".len())?;
            return Some((Token::Rust, root, rest));
        }
        return None;
    }
    const RUSTUP: &str = "/lib/rustlib/src/rust/";
    if let Some(i) = p.find(RUSTUP) {
        let cut = i + RUSTUP.len() - 1;
        if cut + 1 < p.len() {
            return Some((Token::Rust, &p[..cut], &p[cut..]));
        }
    }
    const REGISTRY: &str = "/registry/src/";
    if let Some(i) = p.find(REGISTRY) {
        let at = i + REGISTRY.len();
        if let Some((root, rest)) = split_after_component(p, at)
            && cargo_hashed(&root[at..])
        {
            return Some((Token::Cargo, root, rest));
        }
    }
    const GIT: &str = "/git/checkouts/";
    if let Some(i) = p.find(GIT) {
        let at = i + GIT.len();
        if let Some((dir, _)) = split_after_component(p, at)
            && cargo_hashed(&dir[at..])
        {
            let cut = at - 1;
            return Some((Token::CargoGit, &p[..cut], &p[cut..]));
        }
    }
    None
}

/// Classify a (normalised) path.
pub fn classify(p: &str) -> Class<'_> {
    if !is_absolute(p.as_bytes()) {
        return Class::Relative;
    }
    if let Some((token, root, rest)) = token_of(p) {
        return Class::Token { token, root, rest };
    }
    if SYSTEM_DIRS.iter().any(|d| p.starts_with(d)) {
        return Class::System;
    }
    Class::Project
}

/// Remove `.` and `..` components and empty ones (`//`) from an absolute
/// `/` path, lexically. Anything else (relative, Windows, climbing above
/// the root) comes back unchanged. Allocates only when something changes.
pub fn normalize(p: &str) -> Cow<'_, str> {
    if !p.starts_with('/')
        || !(p.contains("/./")
            || p.contains("/../")
            || p.contains("//")
            || p.ends_with("/.")
            || p.ends_with("/.."))
    {
        return Cow::Borrowed(p);
    }
    let mut parts: Vec<&str> = Vec::new();
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Cow::Borrowed(p);
                }
            }
            c => parts.push(c),
        }
    }
    let mut s = String::with_capacity(p.len());
    for c in &parts {
        s.push('/');
        s.push_str(c);
    }
    if s.is_empty() {
        s.push('/');
    }
    Cow::Owned(s)
}

/// `p` without the user's `prefix`, when `p` is under it at a directory
/// boundary (`/src` strips `/src/a.c` but not `/srcx/a.c`). The separator
/// after the prefix goes too; `None` when nothing would remain.
pub fn strip_user_prefix<'a>(p: &'a str, prefix: &str) -> Option<&'a str> {
    if prefix.is_empty() {
        return None;
    }
    let rest = p.strip_prefix(prefix)?;
    let boundary = prefix.ends_with(['/', '\\']) || rest.starts_with(['/', '\\']);
    if !boundary {
        return None;
    }
    let rest = rest.trim_start_matches(['/', '\\']);
    (!rest.is_empty()).then_some(rest)
}

/// Length of the longest common directory of `paths` (with its final
/// separator), or 0 when there is none worth showing: fewer than two
/// paths, no common directory below the root (the prefix must hold at least
/// two separators: `/a/`, `C:\a\`), or a path that would be left empty.
pub fn common_dir<'a>(paths: impl IntoIterator<Item = &'a [u8]>) -> usize {
    let mut it = paths.into_iter();
    let Some(first) = it.next() else {
        return 0;
    };
    let mut len = first.len();
    let mut min = first.len();
    let mut count = 1usize;
    for p in it {
        count += 1;
        min = min.min(p.len());
        len = first[..len]
            .iter()
            .zip(p)
            .take_while(|(a, b)| a == b)
            .count();
    }
    if count < 2 {
        return 0;
    }
    // Back to just after a separator, leaving a non-empty name in every
    // path (the separator is searched for before `min - 1`).
    let within = len.min(min.saturating_sub(1));
    let Some(i) = first[..within].iter().rposition(|&b| is_sep(b)) else {
        return 0;
    };
    let cut = i + 1;
    let seps = first[..cut].iter().filter(|&&b| is_sep(b)).count();
    if seps < 2 { 0 } else { cut }
}

/// Whether showing `paths` paths relative to a common directory of
/// `prefix` bytes is worth a legend line of `legend` bytes: only when the
/// output gets shorter (a short `/src/` needs several frames, a deep home
/// directory two).
pub fn worth_stating(paths: usize, prefix: usize, legend: usize) -> bool {
    prefix > 0 && paths.saturating_mul(prefix) > legend
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cd(paths: &[&str]) -> String {
        let n = common_dir(paths.iter().map(|p| p.as_bytes()));
        paths.first().map_or(String::new(), |p| p[..n].to_string())
    }

    #[test]
    fn common_dir_rules() {
        assert_eq!(cd(&["/src/app.c", "/src/lib/util.c"]), "/src/");
        assert_eq!(
            cd(&["/home/x/proj/src/a.c", "/home/x/proj/src/b.c"]),
            "/home/x/proj/src/"
        );
        // The same file twice: its directory.
        assert_eq!(cd(&["/src/app.c", "/src/app.c"]), "/src/");
        // Shared leading text is not a directory.
        assert_eq!(cd(&["/src/app.c", "/src/apple.c"]), "/src/");
        assert_eq!(cd(&["/srcA/a.c", "/srcB/b.c"]), "");
        // Only the root in common, or nothing at all.
        assert_eq!(cd(&["/a/x.c", "/b/y.c"]), "");
        assert_eq!(cd(&["a.c", "b.c"]), "");
        // One path, or none.
        assert_eq!(cd(&["/src/app.c"]), "");
        assert_eq!(cd(&[]), "");
        // A path equal to the directory would be left empty.
        assert_eq!(cd(&["/src/a/", "/src/a/b.c"]), "/src/");
        assert_eq!(cd(&["/x/", "/x/b.c"]), "");
        // Windows paths.
        assert_eq!(cd(&["C:\\src\\a.c", "C:\\src\\b.c"]), "C:\\src\\");
        assert_eq!(cd(&["C:\\a.c", "C:\\b.c"]), "");
    }

    #[test]
    fn common_dir_never_splits_utf8() {
        // "é" and "è" share their first byte.
        let paths = ["/p/é/a.c", "/p/è/a.c"];
        assert_eq!(cd(&paths), "/p/");
        let paths = ["/p/éa/x.c", "/p/éb/x.c"];
        assert_eq!(cd(&paths), "/p/");
        // Arbitrary bytes (not UTF-8 at all) do not panic.
        let a: &[u8] = b"/d\xff\xfe/x";
        let b: &[u8] = b"/d\xff\xfd/y";
        assert_eq!(common_dir([a, b]), 0);
        let a: &[u8] = b"/d\xff/q/x";
        let b: &[u8] = b"/d\xff/q/y";
        assert_eq!(common_dir([a, b]), 6);
        let empty: &[u8] = b"";
        assert_eq!(common_dir([empty, empty]), 0);
        assert_eq!(common_dir([b"/".as_slice(), b"/".as_slice()]), 0);
    }

    #[test]
    fn worth_it() {
        // "/src/" (5 bytes) saved per path against a 26-byte legend.
        assert!(!worth_stating(2, 5, 26));
        assert!(!worth_stating(5, 5, 26));
        assert!(worth_stating(6, 5, 26));
        // A deep directory pays off with two frames.
        let p = "/home/dev/projects/widget/".len();
        assert!(worth_stating(2, p, 20 + p + 1));
        assert!(!worth_stating(1, p, 20 + p + 1));
        assert!(!worth_stating(usize::MAX, 0, 0));
        assert!(worth_stating(usize::MAX, 3, usize::MAX - 1));
    }

    #[test]
    fn normalize_rules() {
        assert_eq!(
            normalize(
                "/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/bits/stl_vector.h"
            ),
            "/usr/include/c++/12/bits/stl_vector.h"
        );
        assert_eq!(normalize("/src//a/./b.c"), "/src/a/b.c");
        assert_eq!(normalize("/src/a/.."), "/src");
        assert!(matches!(normalize("/src/app.c"), Cow::Borrowed(_)));
        // Above the root, relative, Windows: unchanged.
        assert_eq!(normalize("/../etc/x"), "/../etc/x");
        assert_eq!(normalize("../a/./b.c"), "../a/./b.c");
        assert_eq!(normalize("C:\\a\\..\\b.c"), "C:\\a\\..\\b.c");
        assert_eq!(normalize("/a/.."), "/");
        // Hidden directories are names, not `.`.
        assert_eq!(normalize("/home/u/.cargo/x.rs"), "/home/u/.cargo/x.rs");
    }

    #[test]
    fn tokens() {
        let rust =
            "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/iter/adapters/map.rs";
        assert_eq!(
            classify(rust),
            Class::Token {
                token: Token::Rust,
                root: "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860",
                rest: "/library/core/src/iter/adapters/map.rs",
            }
        );
        let rustup = "/home/u/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/lib/rustlib/src/rust/library/std/src/rt.rs";
        assert_eq!(
            classify(rustup),
            Class::Token {
                token: Token::Rust,
                root: "/home/u/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/lib/rustlib/src/rust",
                rest: "/library/std/src/rt.rs",
            }
        );
        let reg =
            "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde-1.0.200/src/de.rs";
        assert_eq!(
            classify(reg),
            Class::Token {
                token: Token::Cargo,
                root: "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f",
                rest: "/serde-1.0.200/src/de.rs",
            }
        );
        let git = "/usr/local/cargo/git/checkouts/mycrate-a1b2c3d4e5f6a7b8/1a2b3c4/src/lib.rs";
        assert_eq!(
            classify(git),
            Class::Token {
                token: Token::CargoGit,
                root: "/usr/local/cargo/git/checkouts",
                rest: "/mycrate-a1b2c3d4e5f6a7b8/1a2b3c4/src/lib.rs",
            }
        );
        // Look-alikes are not tokens.
        assert_eq!(classify("/rustc/not-a-hash/library/x.rs"), Class::Project);
        assert_eq!(classify("/rustc/abcdef0"), Class::Project);
        assert_eq!(classify("/rustc/abcdef0/"), Class::Project);
        assert_eq!(
            classify("/p/registry/src/plain/serde/src/de.rs"),
            Class::Project
        );
        assert_eq!(
            classify("/p/registry/src/index.crates.io-6f17d22bba15001f"),
            Class::Project
        );
    }

    #[test]
    fn classes() {
        assert_eq!(classify("/usr/include/stdio.h"), Class::System);
        assert_eq!(classify("/usr/src/app/main.c"), Class::Project);
        assert_eq!(classify("/usr/src/debug/glibc/x.c"), Class::System);
        assert_eq!(classify("/home/u/p/a.c"), Class::Project);
        assert_eq!(classify("crtstuff.c"), Class::Relative);
        assert_eq!(classify("./a.c"), Class::Relative);
        assert_eq!(classify(""), Class::Relative);
        assert_eq!(classify("C:\\src\\a.c"), Class::Project);
        assert_eq!(classify("\\\\srv\\share\\a.c"), Class::Project);
        assert_eq!(classify("é/ü.c"), Class::Relative);
    }

    #[test]
    fn user_prefix() {
        assert_eq!(strip_user_prefix("/src/a.c", "/src"), Some("a.c"));
        assert_eq!(strip_user_prefix("/src/a.c", "/src/"), Some("a.c"));
        assert_eq!(strip_user_prefix("/srcx/a.c", "/src"), None);
        assert_eq!(strip_user_prefix("/src", "/src"), None);
        assert_eq!(strip_user_prefix("/src/", "/src"), None);
        assert_eq!(strip_user_prefix("/other/a.c", "/src"), None);
        assert_eq!(strip_user_prefix("/src/a.c", ""), None);
        assert_eq!(strip_user_prefix("/pé/a.c", "/p"), None);
    }
}
