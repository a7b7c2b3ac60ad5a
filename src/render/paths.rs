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
pub enum Class {
    /// A toolchain source: written as the token followed by the rest of the
    /// path (which starts with a separator); the first `root` bytes are what
    /// the token stands for.
    Token { token: Token, root: usize },
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
const SYSTEM_DIRS: &[&[u8]] = &[
    b"/usr/include/",
    b"/usr/local/include/",
    b"/usr/lib/",
    b"/usr/lib32/",
    b"/usr/lib64/",
    b"/usr/libexec/",
    b"/usr/share/",
    b"/usr/src/debug/",
    b"/lib/",
    b"/lib64/",
    b"/nix/store/",
    b"/gnu/store/",
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

fn is_hex(s: &[u8], min: usize, max: usize) -> bool {
    (min..=max).contains(&s.len()) && s.iter().all(u8::is_ascii_hexdigit)
}

/// `name-<16 hex digits>`, as cargo names its registry index and git
/// checkout directories.
fn cargo_hashed(component: &[u8]) -> bool {
    match component.iter().rposition(|&b| b == b'-') {
        Some(i) => i > 0 && is_hex(&component[i + 1..], 16, 16),
        None => false,
    }
}

/// The end of the component that starts at `at` (the index of the `/`
/// after it), when it is non-empty and something follows that `/`.
fn component_end(p: &[u8], at: usize) -> Option<usize> {
    let end = at + memchr::memchr(b'/', p.get(at..)?)?;
    (end > at && end + 1 < p.len()).then_some(end)
}

struct Needles {
    rustup: memchr::memmem::Finder<'static>,
    registry: memchr::memmem::Finder<'static>,
    git: memchr::memmem::Finder<'static>,
}

static NEEDLES: std::sync::LazyLock<Needles> = std::sync::LazyLock::new(|| Needles {
    rustup: memchr::memmem::Finder::new(RUSTUP),
    registry: memchr::memmem::Finder::new(REGISTRY),
    git: memchr::memmem::Finder::new(GIT),
});

const RUSTC: &[u8] = b"/rustc/";
const RUSTUP: &[u8] = b"/lib/rustlib/src/rust/";
const REGISTRY: &[u8] = b"/registry/src/";
const GIT: &[u8] = b"/git/checkouts/";

/// The toolchain root at the start of `p`: its token and length.
fn token_of(p: &[u8]) -> Option<(Token, usize)> {
    if let Some(after) = p.strip_prefix(RUSTC) {
        let end = component_end(p, RUSTC.len())?;
        return is_hex(&after[..end - RUSTC.len()], 7, 64).then_some((Token::Rust, end));
    }
    let n = &*NEEDLES;
    if let Some(i) = n.rustup.find(p) {
        let cut = i + RUSTUP.len() - 1;
        if cut + 1 < p.len() {
            return Some((Token::Rust, cut));
        }
    }
    if let Some(i) = n.registry.find(p) {
        let at = i + REGISTRY.len();
        if let Some(end) = component_end(p, at)
            && cargo_hashed(&p[at..end])
        {
            return Some((Token::Cargo, end));
        }
    }
    if let Some(i) = n.git.find(p) {
        let at = i + GIT.len();
        if let Some(end) = component_end(p, at)
            && cargo_hashed(&p[at..end])
        {
            return Some((Token::CargoGit, at - 1));
        }
    }
    None
}

/// Classify a (normalised) path.
pub fn classify(p: &[u8]) -> Class {
    if !is_absolute(p) {
        return Class::Relative;
    }
    if let Some((token, root)) = token_of(p) {
        return Class::Token { token, root };
    }
    if SYSTEM_DIRS.iter().any(|d| p.starts_with(d)) {
        return Class::System;
    }
    Class::Project
}

/// Append `p` to `out` with `.` and `..` components and empty ones (`//`)
/// removed, lexically, when it is an absolute `/` path. Anything else
/// (relative, Windows, climbing above the root) is appended unchanged.
/// Allocates nothing beyond `out`'s growth.
pub fn push_normalized(out: &mut Vec<u8>, p: &str) {
    let b = p.as_bytes();
    // One pass for the common case: no `/.` and no `//` at all.
    if b.first() != Some(&b'/')
        || !memchr::memchr_iter(b'/', b).any(|i| matches!(b.get(i + 1), Some(b'.' | b'/')))
    {
        out.extend_from_slice(b);
        return;
    }
    let start = out.len();
    for c in b[1..].split(|&c| c == b'/') {
        match c {
            b"" | b"." => {}
            b".." => match out[start..].iter().rposition(|&c| c == b'/') {
                Some(i) => out.truncate(start + i),
                None => {
                    out.truncate(start);
                    out.extend_from_slice(b);
                    return;
                }
            },
            c => {
                out.push(b'/');
                out.extend_from_slice(c);
            }
        }
    }
    if out.len() == start {
        out.push(b'/');
    }
}

/// [`push_normalized`] with the last directory normalised remembered: the
/// frames of C++ programs repeat a few `.../12/../../../../include/c++/12/`
/// directories, and those are then a compare and two copies.
#[derive(Default)]
pub struct Normalizer {
    raw_dir: Vec<u8>,
    norm_dir: Vec<u8>,
}

impl Normalizer {
    pub fn push(&mut self, out: &mut Vec<u8>, p: &str) {
        let b = p.as_bytes();
        let Some(slash) = memchr::memrchr(b'/', b) else {
            out.extend_from_slice(b);
            return;
        };
        let (dir, name) = b.split_at(slash);
        // A name of `.`, `..` or nothing changes the directory part, as
        // does an empty last directory component (`a//name`).
        if matches!(name, b"/" | b"/." | b"/..")
            || dir.last() == Some(&b'/')
            || !dir.contains(&b'.')
        {
            return push_normalized(out, p);
        }
        if dir != self.raw_dir.as_slice() {
            // Only whole components of `p` go in: still UTF-8.
            let Ok(dir_text) = std::str::from_utf8(dir) else {
                return push_normalized(out, p);
            };
            self.raw_dir.clear();
            self.raw_dir.extend_from_slice(dir);
            self.norm_dir.clear();
            push_normalized(&mut self.norm_dir, dir_text);
        }
        // A directory that normalises to the root: just `/name`.
        if self.norm_dir.as_slice() != b"/" {
            out.extend_from_slice(&self.norm_dir);
        }
        out.extend_from_slice(name);
    }
}

/// [`push_normalized`] into a new string.
pub fn normalize(p: &str) -> String {
    let mut v = Vec::with_capacity(p.len());
    push_normalized(&mut v, p);
    // Only whole components of `p` were copied: still UTF-8.
    String::from_utf8(v).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
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
/// No path is left starting with a separator (`C:\a\/b.c` cut after
/// `C:\a\` would read as the absolute `/b.c`).
pub fn common_dir<'a, I>(paths: I) -> usize
where
    I: IntoIterator<Item = &'a [u8]>,
    I::IntoIter: Clone,
{
    let all = paths.into_iter();
    let mut it = all.clone();
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
    let Some(mut i) = first[..within].iter().rposition(|&b| is_sep(b)) else {
        return 0;
    };
    while all
        .clone()
        .any(|p| p.get(i + 1).is_some_and(|&b| is_sep(b)))
    {
        let Some(before) = first[..i].iter().rposition(|&b| is_sep(b)) else {
            return 0;
        };
        i = before;
    }
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
        // Never a remainder that reads as absolute.
        let (c, d) = (b"C:\\w\\p\\a.c".as_slice(), b"C:\\w\\p\\/b.c".as_slice());
        assert_eq!(common_dir([c, d]), 5);
        assert_eq!(
            common_dir([b"/a//b.c".as_slice(), b"/a/x/c.c".as_slice()]),
            0
        );
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
        assert_eq!(normalize("/src/app.c"), "/src/app.c");
        // Above the root, relative, Windows: unchanged.
        assert_eq!(normalize("/../etc/x"), "/../etc/x");
        assert_eq!(normalize("/a/../../x"), "/a/../../x");
        assert_eq!(normalize("../a/./b.c"), "../a/./b.c");
        assert_eq!(normalize("C:\\a\\..\\b.c"), "C:\\a\\..\\b.c");
        assert_eq!(normalize("/a/.."), "/");
        // Hidden directories and dotted names are names, not `.`.
        assert_eq!(normalize("/home/u/.cargo/x.rs"), "/home/u/.cargo/x.rs");
        assert_eq!(normalize("/a/.../b"), "/a/.../b");
        assert_eq!(normalize("/a/..b/c"), "/a/..b/c");
        assert_eq!(normalize("/"), "/");
        assert_eq!(normalize("//"), "/");
        assert_eq!(normalize(""), "");
        assert_eq!(normalize("/é/../ü/./x"), "/ü/x");
        // Appends: what is already in the buffer is kept.
        let mut out = b"at ".to_vec();
        push_normalized(&mut out, "/a/../b");
        assert_eq!(out, b"at /b");
        let mut out = b"/x".to_vec();
        push_normalized(&mut out, "/..");
        assert_eq!(out, b"/x/..");
    }

    #[test]
    fn normalizer_agrees() {
        let mut n = Normalizer::default();
        let paths = [
            "/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/bits/stl_vector.h",
            "/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/bits/alloc_traits.h",
            "/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/vector",
            "/a/../x.c",
            "/a/../x.c",
            "/../x.c",
            "/a/b/..",
            "/a/b/.",
            "/a/b/",
            "../a/b.c",
            "/a/./b/./c.c",
            "/:.//:",
            "/a.b//c.c",
            "/a/.//b.c",
            "/x.c",
            "x.c",
            "",
            "/",
            "/é/../ü.c",
            "C:\\a\\..\\b.c",
            "/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/bits/stl_vector.h",
        ];
        for p in paths {
            let mut a = b"> ".to_vec();
            n.push(&mut a, p);
            assert_eq!(String::from_utf8_lossy(&a[2..]), normalize(p), "{p}");
        }
    }

    /// (token, root, rest) of a path, or its class.
    fn split(p: &str) -> Result<(Token, &str, &str), Class> {
        match classify(p.as_bytes()) {
            Class::Token { token, root } => Ok((token, &p[..root], &p[root..])),
            c => Err(c),
        }
    }

    #[test]
    fn tokens() {
        let rust =
            "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/iter/adapters/map.rs";
        assert_eq!(
            split(rust),
            Ok((
                Token::Rust,
                "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860",
                "/library/core/src/iter/adapters/map.rs",
            ))
        );
        let rustup = "/home/u/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/lib/rustlib/src/rust/library/std/src/rt.rs";
        assert_eq!(
            split(rustup),
            Ok((
                Token::Rust,
                "/home/u/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/lib/rustlib/src/rust",
                "/library/std/src/rt.rs",
            ))
        );
        let reg =
            "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde-1.0.200/src/de.rs";
        assert_eq!(
            split(reg),
            Ok((
                Token::Cargo,
                "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f",
                "/serde-1.0.200/src/de.rs",
            ))
        );
        let git = "/usr/local/cargo/git/checkouts/mycrate-a1b2c3d4e5f6a7b8/1a2b3c4/src/lib.rs";
        assert_eq!(
            split(git),
            Ok((
                Token::CargoGit,
                "/usr/local/cargo/git/checkouts",
                "/mycrate-a1b2c3d4e5f6a7b8/1a2b3c4/src/lib.rs",
            ))
        );
        // Look-alikes are not tokens.
        assert_eq!(split("/rustc/not-a-hash/library/x.rs"), Err(Class::Project));
        assert_eq!(split("/rustc/abcdef0"), Err(Class::Project));
        assert_eq!(split("/rustc/abcdef0/"), Err(Class::Project));
        assert_eq!(split("/rustc//x.rs"), Err(Class::Project));
        assert_eq!(
            split("/p/registry/src/plain/serde/src/de.rs"),
            Err(Class::Project)
        );
        assert_eq!(
            split("/p/registry/src/index.crates.io-6f17d22bba15001f"),
            Err(Class::Project)
        );
        assert_eq!(
            split("/p/registry/src/-6f17d22bba15001f/x.rs"),
            Err(Class::Project)
        );
        assert_eq!(split("/p/lib/rustlib/src/rust/"), Err(Class::Project));
    }

    #[test]
    fn classes() {
        let c = |p: &str| classify(p.as_bytes());
        assert_eq!(c("/usr/include/stdio.h"), Class::System);
        assert_eq!(c("/usr/src/app/main.c"), Class::Project);
        assert_eq!(c("/usr/src/debug/glibc/x.c"), Class::System);
        assert_eq!(c("/home/u/p/a.c"), Class::Project);
        assert_eq!(c("crtstuff.c"), Class::Relative);
        assert_eq!(c("./a.c"), Class::Relative);
        assert_eq!(c(""), Class::Relative);
        assert_eq!(c("C:\\src\\a.c"), Class::Project);
        assert_eq!(c("\\\\srv\\share\\a.c"), Class::Project);
        assert_eq!(c("é/ü.c"), Class::Relative);
        assert_eq!(classify(b"/\xff\xfe/x"), Class::Project);
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

    proptest::proptest! {
        /// Any text: no panics, normalising twice changes nothing, a token
        /// root ends on a character boundary before a separator, and a
        /// common directory is a prefix of every path ending in a separator.
        #[test]
        fn any_text(
            p in "[/a.\\\\é:C]{0,24}",
            q in "[/a.\\\\é:C]{0,24}",
        ) {
            let n = normalize(&p);
            proptest::prop_assert_eq!(normalize(&n), n.clone());
            let mut cached = Normalizer::default();
            let mut out = Vec::new();
            cached.push(&mut out, &q);
            cached.push(&mut out, &p);
            proptest::prop_assert_eq!(&out[normalize(&q).len()..], n.as_bytes());
            if let Class::Token { root, .. } = classify(n.as_bytes()) {
                proptest::prop_assert!(n.is_char_boundary(root));
                proptest::prop_assert!(is_sep(n.as_bytes()[root]));
            }
            let c = common_dir([p.as_bytes(), q.as_bytes()]);
            if c > 0 {
                proptest::prop_assert!(p.len() > c && q.len() > c);
                proptest::prop_assert_eq!(&p[..c], &q[..c]);
                proptest::prop_assert!(is_sep(p.as_bytes()[c - 1]));
            }
        }
    }
}
