//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod debuginfod;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The symfilter binary with an isolated environment: no debuginfod
/// servers, colour or cache settings from the caller, and `HOME` and the
/// XDG cache in a directory of this test process, so no test reads or
/// writes the user's caches. Tests set what they need on top.
pub fn command() -> Command {
    static HOME: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let home = HOME.get_or_init(|| tempfile::tempdir().expect("temporary HOME"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_symfilter"));
    for var in [
        "DEBUGINFOD_URLS",
        "DEBUGINFOD_CACHE_PATH",
        "DEBUGINFOD_TIMEOUT",
        "DEBUGINFOD_MAXSIZE",
        "DEBUGINFOD_MAXTIME",
        "DEBUGINFOD_PROGRESS",
        "SYMFILTER_DEBUGINFOD_TIMEOUT",
        "NO_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "SYMFILTER_PIPELINE_STATS",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("HOME", home.path())
        .env("XDG_CACHE_HOME", home.path().join("cache"));
    cmd
}

/// Limit what `cmd`'s child may take: `cpu_s` seconds of CPU time and
/// `address_space` bytes of address space (setrlimit between fork and
/// exec; the kernel stops a child that goes past either). Bounds of
/// hostile-input tests are asserted this way, never by the wall clock.
pub fn limit(cmd: &mut Command, cpu_s: Option<u64>, address_space: Option<u64>) {
    use rustix::process::{Resource, Rlimit, setrlimit};
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is a plain system call, safe between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            for (resource, bound) in [(Resource::Cpu, cpu_s), (Resource::As, address_space)] {
                if let Some(bound) = bound {
                    let limit = Rlimit {
                        current: Some(bound),
                        maximum: Some(bound),
                    };
                    setrlimit(resource, limit).map_err(std::io::Error::from)?;
                }
            }
            Ok(())
        });
    }
}

/// testdata/elf: the ELF fixtures (build.sh) and llvm-symbolizer's answers
/// for them (make-expected.py).
pub fn elf_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/elf")
}

/// `symfilter lookup ARGS`, as [`symfilter`].
pub fn lookup(args: &[&str], stdin: &[u8]) -> (String, String, i32) {
    let mut all = vec!["lookup"];
    all.extend_from_slice(args);
    symfilter(&all, stdin)
}

/// Run the symfilter binary with `args`, `stdin` on its standard input:
/// (stdout, stderr, exit code or -1 when killed by a signal).
pub fn symfilter(args: &[&str], stdin: &[u8]) -> (String, String, i32) {
    let mut child = command()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run symfilter");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait for symfilter");
    (
        String::from_utf8(out.stdout).expect("UTF-8 stdout"),
        String::from_utf8(out.stderr).expect("UTF-8 stderr"),
        out.status.code().unwrap_or(-1),
    )
}

/// `symfilter lookup --no-debuginfod --build-id ID --breakpad-store STORE
/// ARGS`, which must succeed with nothing on standard error: its output.
pub fn breakpad_lookup(store: &Path, build_id: &str, args: &[&str]) -> String {
    let store = store.to_str().expect("UTF-8 path");
    let mut all = vec![
        "--no-debuginfod",
        "--build-id",
        build_id,
        "--breakpad-store",
        store,
    ];
    all.extend_from_slice(args);
    let (out, err, code) = lookup(&all, b"");
    assert_eq!((err.as_str(), code), ("", 0), "lookup {all:?}");
    out
}

/// The committed `.sym` of a Breakpad fixture module
/// (testdata/breakpad/store/NAME/DEBUG_ID/NAME.sym): its path and debug ID.
pub fn breakpad_fixture_sym(name: &str) -> (PathBuf, String) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/breakpad/store")
        .join(name);
    let id_dir = std::fs::read_dir(&dir)
        .expect("fixture store")
        .next()
        .expect("a debug ID folder")
        .expect("read_dir")
        .path();
    let debug_id = id_dir
        .file_name()
        .and_then(|n| n.to_str())
        .expect("debug ID")
        .to_owned();
    (id_dir.join(format!("{name}.sym")), debug_id)
}

/// A Breakpad store in a temporary folder with `text` as the symbol file
/// of module NAME with DEBUG_ID.
pub fn breakpad_store_with(name: &str, debug_id: &str, text: &[u8]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    let id_dir = tmp.path().join(name).join(debug_id);
    std::fs::create_dir_all(&id_dir).expect("mkdir");
    std::fs::write(id_dir.join(format!("{name}.sym")), text).expect("write .sym");
    tmp
}

/// The build ID (lower-case hex) a `.sym` text's `INFO CODE_ID` gives.
pub fn sym_build_id(text: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix("INFO CODE_ID "))
        .and_then(|rest| rest.split(' ').next())
        .expect("INFO CODE_ID record")
        .to_ascii_lowercase()
}

/// A small deterministic generator (xorshift64*, from a nonzero seed), for
/// test inputs drawn at random that are the same on every run, so that a
/// failure reproduces.
pub struct Rng(pub u64);

impl Rng {
    /// A number below `n` (which is not 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }
}
