//! A symbol file truncated by another process while the filter has it
//! mapped: the filter must not die of SIGBUS. The rest of the log comes
//! through, and one diagnostic names the file at the line where it was
//! found out. The child runs with CPU-time and address-space limits.

use crate::common;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// Runs the filter with `args`, feeds it a module with `pcs[0]` and waits
/// for that answer, truncates `victim`, then feeds `pcs[1]` and a plain
/// line. Returns (first answer, the rest of stdout, stderr).
fn truncate_midway(args: &[&str], build_id: &str, pcs: [u64; 2], victim: &Path) -> [String; 3] {
    let mut cmd = common::command();
    cmd.args(args)
        .args(["--no-debuginfod", "--one-thread"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    common::limit(&mut cmd, Some(60), Some(4 << 30));
    let mut child = cmd.spawn().expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    write!(
        stdin,
        "{{{{{{reset}}}}}}\n{{{{{{module:0:m:elf:{build_id}}}}}}}\n\
         {{{{{{mmap:0x100000:0x10000:load:0:rx:0x0}}}}}}\nfirst {{{{{{pc:{:#x}}}}}}}\n",
        0x100000 + pcs[0]
    )
    .expect("write");
    stdin.flush().expect("flush");
    let mut module = String::new();
    stdout.read_line(&mut module).expect("module line");
    let mut first = String::new();
    stdout.read_line(&mut first).expect("first answer");
    std::fs::OpenOptions::new()
        .write(true)
        .open(victim)
        .expect("open victim")
        .set_len(0)
        .expect("truncate");
    write!(
        stdin,
        "second {{{{{{pc:{:#x}}}}}}}\nthird plain\n",
        0x100000 + pcs[1]
    )
    .expect("write");
    drop(stdin);
    let out = child.wait_with_output().expect("wait");
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).expect("rest");
    [first, rest, String::from_utf8(out.stderr).expect("utf-8")]
}

fn diagnostic(victim: &Path) -> String {
    format!(
        "symfilter: <stdin>:5:14: {}: file was truncated while in use; nothing more is read from it\n",
        victim.display()
    )
}

#[test]
fn elf_file_truncated_while_mapped() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let victim = tmp.path().join("c_O2");
    std::fs::copy(root().join("elf/bin/c_O2"), &victim).expect("copy");
    let dir = tmp.path().to_str().expect("utf-8");
    let [first, rest, err] = truncate_midway(
        &["--symbol-path", dir],
        "e25b4b34098186067403e8c10229d861e038c6cf",
        [0x1150, 0x1160],
        &victim,
    );
    assert_eq!(first, "first outer at /elfsrc/prog.c:23:12\n");
    assert_eq!(rest, "second m+0x1160\nthird plain\n");
    assert_eq!(err, diagnostic(&victim));
}

#[test]
fn gsym_file_truncated_while_mapped() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let victim = tmp.path().join("inl_O2.gsym");
    std::fs::copy(root().join("gsym/inl_O2.gsym"), &victim).expect("copy");
    let [first, rest, err] = truncate_midway(
        &["--gsym", victim.to_str().expect("utf-8")],
        "bc62010a5df6cc8a5be5fe9c025165f67f1bddd6",
        [0x1181, 0x1660],
        &victim,
    );
    assert!(
        first.starts_with("first leaf at /gsym/src/inl.c:12"),
        "{first}"
    );
    assert_eq!(rest, "second m+0x1660\nthird plain\n");
    assert_eq!(err, diagnostic(&victim));
}

#[test]
fn breakpad_file_truncated_while_mapped() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let id_dir = tmp.path().join("inl_O2/0A0162BCF65D8ACC5BE5FE9C025165F60");
    std::fs::create_dir_all(&id_dir).expect("mkdir");
    let victim = id_dir.join("inl_O2.sym");
    std::fs::copy(root().join("gsym/inl_O2.sym"), &victim).expect("copy");
    let [first, rest, err] = truncate_midway(
        &["--breakpad-store", tmp.path().to_str().expect("utf-8")],
        "bc62010a5df6cc8a5be5fe9c025165f67f1bddd6",
        [0x1181, 0x1660],
        &victim,
    );
    assert!(
        first.starts_with("first leaf at /gsym/src/inl.c:12"),
        "{first}"
    );
    assert_eq!(rest, "second m+0x1660\nthird plain\n");
    assert_eq!(err, diagnostic(&victim));
}
