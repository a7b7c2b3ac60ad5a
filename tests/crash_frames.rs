//! Crash-report frames without markup (see `symfilter::crash`): real
//! sanitizer reports made at test time and compared with the runtimes' own
//! symbolization, Android and systemd samples with exact outputs, and lines
//! that nearly match a grammar, which must pass through unchanged.
//!
//! The real reports are filtered with no options at all (the files the
//! frames name are found at their paths); the samples with exact outputs
//! give `--symbol-path` and `--no-default-paths`, so that what the machine
//! has in /usr/lib/debug does not change them.

use std::path::Path;
use std::process::Command;

use proptest::prelude::*;

/// The fixture binary the samples are written around, and its build ID.
const APP: &str = "testdata/bin/app_c_O2";
const APP_ID: &str = "52083ec89bc0c7c102ccde8f63e3d8150be019b5";
/// A build ID no source knows.
const LIBC_ID: &str = "93ac61ec5a8eb1396f9fbd350e3169a558528a40";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// symfilter with only `symbol_path` as a symbol source (no default
/// places), `args` and `stdin`: (stdout, stderr).
fn filter(symbol_path: &Path, args: &[&str], stdin: &[u8]) -> (String, String) {
    let empty = tempfile::tempdir().expect("tempdir");
    let sp = symbol_path.to_str().expect("UTF-8 path");
    let dir = empty.path().to_str().expect("UTF-8 path");
    let mut all = vec![
        "--symbol-path",
        sp,
        "--build-id-dir",
        dir,
        "--no-debuginfod",
        "--offline",
        "--no-default-paths",
    ];
    all.extend_from_slice(args);
    let (out, err, code) = crate::common::symfilter(&all, stdin);
    assert_eq!(code, 0, "{err}");
    (out, err)
}

/// `FUNCTION FILE:LINE:COLUMN` of each frame of the fixture's own sources
/// in a report the runtime symbolized (`#N 0xADDR in FUNCTION FILE:L:C`,
/// or TSan's `#N FUNCTION FILE:L:C (module+0xOFF)`), in order.
fn runtime_frames(report: &str, src: &str) -> Vec<String> {
    let mut frames = Vec::new();
    for line in report.lines() {
        let t = line.trim_start();
        if !t.starts_with('#') {
            continue;
        }
        let rest = t.split_once(' ').map_or("", |(_, r)| r);
        let rest = match rest.strip_prefix("0x") {
            Some(r) => r.split_once(" in ").map_or("", |(_, r)| r),
            None => rest,
        };
        // TSan appends the module and build ID.
        let rest = rest.split(" (BuildId: ").next().unwrap_or(rest);
        let rest = match rest.rfind(" (") {
            Some(i) if rest.ends_with(')') && rest[i..].contains("+0x") => &rest[..i],
            _ => rest,
        };
        if let Some((function, location)) = rest.rsplit_once(' ')
            && location.starts_with(src)
        {
            frames.push(format!("{function} {location}"));
        }
    }
    frames
}

/// The same from symfilter's JSON output: the frames of its `bt` elements.
fn json_frames(json: &str, src: &str) -> Vec<String> {
    let mut frames = Vec::new();
    for line in json.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("JSON line");
        for span in v["spans"].as_array().expect("spans") {
            if span["element"] != "bt" {
                continue;
            }
            for f in span["frames"].as_array().expect("frames") {
                let file = f["file"].as_str().unwrap_or("");
                if file.starts_with(src) {
                    frames.push(format!(
                        "{} {file}:{}:{}",
                        f["function"].as_str().unwrap_or("??"),
                        f["line"],
                        f["column"]
                    ));
                }
            }
        }
    }
    frames
}

/// ASan (C with a shared library and inlined frames, C++), TSan, UBSan and MSan
/// reports printed with `symbolize=0`, filtered, give the frames the same
/// program's report gives with the runtime's own symbolizer
/// (llvm-symbolizer 22), frame by frame, inlined frames included.
#[test]
fn sanitizer_reports_match_the_runtimes_own_symbolization() {
    let dir = tempfile::tempdir().expect("tempdir");
    let status = Command::new(root().join("testdata/crash/make-reports.sh"))
        .arg(dir.path())
        .status()
        .expect("run make-reports.sh");
    assert!(status.success());
    let src = root().join("testdata/src");
    let src = src.to_str().expect("UTF-8 path");
    for name in ["asan_c", "asan_cpp", "tsan", "ubsan", "msan"] {
        let raw = std::fs::read_to_string(dir.path().join(format!("{name}.raw"))).expect("raw");
        let sym = std::fs::read_to_string(dir.path().join(format!("{name}.sym"))).expect("sym");
        let want = runtime_frames(&sym, src);
        assert!(
            want.len() >= 2,
            "{name}: the runtime symbolized nothing:\n{sym}"
        );
        // No options: the binaries are found at the paths the frames name.
        // TSan prints only a module's file name (`tsan+0x...`), which names
        // no place to look, so its report needs the symbol path.
        if name != "tsan" {
            let (json, err, code) =
                crate::common::symfilter(&["--format=json", "--offline"], raw.as_bytes());
            assert_eq!(code, 0, "{err}");
            assert_eq!(json_frames(&json, src), want, "{name}\n{raw}");
        }
        let (json, _) = filter(dir.path(), &["--format=json"], raw.as_bytes());
        assert_eq!(json_frames(&json, src), want, "{name}\n{raw}");

        // The human format: frames of other modules (libc: no symbols here)
        // are left exactly as they were, with one diagnostic per build ID;
        // the SUMMARY location names the function and place.
        let (human, err) = filter(dir.path(), &[], raw.as_bytes());
        for line in raw
            .lines()
            .filter(|l| l.contains("(BuildId: ") && l.contains("libc.so"))
        {
            assert!(
                human.lines().any(|h| h == line),
                "{name}: {line:?} changed:\n{human}"
            );
        }
        let libc_ids: std::collections::HashSet<&str> = raw
            .lines()
            .filter(|l| l.contains("libc.so"))
            .filter_map(|l| l.split("(BuildId: ").nth(1))
            .collect();
        assert_eq!(
            err.matches("no symbols for module").count(),
            libc_ids.len(),
            "{err}"
        );
        if let Some(summary) = sym
            .lines()
            .find(|l| l.starts_with("SUMMARY: ") && l.contains(" in "))
        {
            // `SUMMARY: TOOL: WHAT FILE:L:C in FUNCTION`
            let (head, function) = summary.rsplit_once(" in ").expect("in");
            let (what, location) = head.rsplit_once(' ').expect("location");
            let want = format!("{what} {function} at {location}");
            assert!(
                human.lines().any(|l| l.starts_with(&want)),
                "{name}: no line starts with {want:?}:\n{human}"
            );
        }
    }
}

/// A systemd-coredump stack as `coredumpctl info` prints it (layout from
/// systemd's coredump documentation and its stack-trace writer), around
/// the fixture binary: the `Module` line gives the build ID, frame #0 is
/// looked up as printed and the others one byte before their return
/// address (the offsets are the fixture's real call sites). The libc
/// frame (no symbols) and the `n/a` frame are left as they were.
#[test]
fn systemd_coredump_stack() {
    let input = format!(
        "       Message: Process 4242 (app_c_O2) of user 1000 dumped core.

                Module /usr/bin/app_c_O2 with build-id {APP_ID}
                Module libc.so.6 with build-id {LIBC_ID}
                Stack trace of thread 4242:
                #0  0x0000555555555144 sink (/usr/bin/app_c_O2 + 0x1144)
                #1  0x0000555555555160 inlined_entry (/usr/bin/app_c_O2 + 0x1160)
                #2  0x00005555555551ab frame3 (/usr/bin/app_c_O2 + 0x11ab)
                #3  0x00007ffff7c29d90 __libc_start_call_main (libc.so.6 + 0x29d90)
                #4  0x0000000000000000 n/a (n/a + 0x0)
                ELF object binary architecture: AMD x86-64
"
    );
    let want = format!(
        "       Message: Process 4242 (app_c_O2) of user 1000 dumped core.

                Module /usr/bin/app_c_O2 with build-id {APP_ID}
                Module libc.so.6 with build-id {LIBC_ID}
                Stack trace of thread 4242:
                #0     0x0000555555555144 in sink /src/app.c:10:53 (/usr/bin/app_c_O2+0x1144)
                #1.1   0x000055555555515f in level3 /src/app.c:13:3 (/usr/bin/app_c_O2+0x115f)
                #1.2   0x000055555555515f in level2 /src/app.c:18:11 (/usr/bin/app_c_O2+0x115f)
                #1     0x000055555555515f in inlined_entry /src/app.c:23:11 (/usr/bin/app_c_O2+0x115f)
                #2     0x00005555555551aa in frame3 /src/app.c:35:54 (/usr/bin/app_c_O2+0x11aa)
                #3  0x00007ffff7c29d90 __libc_start_call_main (libc.so.6 + 0x29d90)
                #4  0x0000000000000000 n/a (n/a + 0x0)
                ELF object binary architecture: AMD x86-64
"
    );
    let app = root().join(APP);
    let (out, err) = filter(&app, &[], input.as_bytes());
    assert_eq!(out, want);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with(&format!(
        "symfilter: <stdin>:9:17: no symbols for module \"libc.so.6\" (build ID {LIBC_ID})"
    )));
    // Off, and in the llvm format, nothing changes.
    for args in [&["--no-crash-frames"][..], &["--format=llvm"]] {
        let (out, err) = filter(&app, args, input.as_bytes());
        assert_eq!(out, input, "{args:?}");
        assert_eq!(err, "");
    }
}

/// An Android tombstone backtrace and the same frames in logcat (layout
/// from Android's "Diagnosing native crashes" documentation), around the
/// fixture binary. debuggerd's `pc` is already stepped back, so it is
/// looked up as printed; a frame without a build ID takes the one an
/// earlier frame of the same path gave. In JSON each frame is a `bt`
/// element.
#[test]
fn android_backtrace() {
    let input = format!(
        "backtrace:
      #00 pc 0000000000001144  /data/local/tmp/app_c_O2 (sink+4) (BuildId: {APP_ID})
      #01 pc 00000000000011aa  /data/local/tmp/app_c_O2 (frame3+10)
      #02 pc 0000000000029d90  /apex/com.android.runtime/lib64/bionic/libc.so (__libc_init+96) (BuildId: {LIBC_ID})
04-01 12:00:00.123  4242  4242 F DEBUG   :       #01 pc 00000000000011ca  /data/local/tmp/app_c_O2 (frame2+10) (BuildId: {APP_ID})\r
"
    );
    let want = format!(
        "backtrace:
      #0     0x0000000000001144 in sink /src/app.c:10:53 (/data/local/tmp/app_c_O2+0x1144)
      #1     0x00000000000011aa in frame3 /src/app.c:35:54 (/data/local/tmp/app_c_O2+0x11aa)
      #02 pc 0000000000029d90  /apex/com.android.runtime/lib64/bionic/libc.so (__libc_init+96) (BuildId: {LIBC_ID})
04-01 12:00:00.123  4242  4242 F DEBUG   :       #1     0x00000000000011ca in frame2 /src/app.c:36:54 (/data/local/tmp/app_c_O2+0x11ca)\r
"
    );
    let app = root().join(APP);
    let (out, _) = filter(&app, &[], input.as_bytes());
    assert_eq!(out, want);

    let (json, _) = filter(&app, &["--format=json"], input.as_bytes());
    let line2: serde_json::Value =
        serde_json::from_str(json.lines().nth(1).expect("line 2")).expect("JSON");
    let bt = &line2["spans"][1];
    assert_eq!(bt["element"], "bt");
    assert_eq!(bt["frame"], 0);
    assert_eq!(bt["offset"], "0x1144");
    assert_eq!(bt["module"]["build_id"], APP_ID);
    assert_eq!(bt["module"]["name"], "/data/local/tmp/app_c_O2");
    assert_eq!(bt["frames"][0]["function"], "sink");
    assert_eq!(bt["frames"][0]["line"], 10);
    assert_eq!(line2["spans"][0]["text"], "      ");
}

/// LLVM's crash-handler frames print no build ID: one is used when an
/// earlier line gave it for the same module (here a systemd `Module`
/// line); the addresses are return addresses, looked up one byte back.
/// Without a known build ID the frame is left alone, silently.
#[test]
fn llvm_crash_handler_frames() {
    let input = format!(
        "Stack dump:
 #0 0x00005555555551ab (/opt/app_c_O2+0x11ab)
Module /opt/app_c_O2 with build-id {APP_ID}
 #1 0x00005555555551cb (/opt/app_c_O2+0x11cb)
 #2 0x00007ffff7c29d90 (/usr/lib/libLLVM.so.22.1+0x29d90)
"
    );
    let want = format!(
        "Stack dump:
 #0 0x00005555555551ab (/opt/app_c_O2+0x11ab)
Module /opt/app_c_O2 with build-id {APP_ID}
 #1     0x00005555555551ca in frame2 /src/app.c:36:54 (/opt/app_c_O2+0x11ca)
 #2 0x00007ffff7c29d90 (/usr/lib/libLLVM.so.22.1+0x29d90)
"
    );
    let (out, err) = filter(&root().join(APP), &[], input.as_bytes());
    assert_eq!(out, want);
    assert_eq!(err, "");
}

/// A frame of the fixture in each grammar, which is rewritten.
fn good_frames() -> Vec<String> {
    vec![
        format!("    #1 0x5555555551aa  (/b/app_c_O2+0x11aa) (BuildId: {APP_ID})"),
        format!("    #1 <null> <null> (app_c_O2+0x11aa) (BuildId: {APP_ID})"),
        format!("SUMMARY: AddressSanitizer: SEGV (/b/app_c_O2+0x11aa) (BuildId: {APP_ID})"),
        format!("      #01 pc 00000000000011aa  /b/app_c_O2 (frame3+10) (BuildId: {APP_ID})"),
    ]
}

/// Ways to spoil a frame: a build ID of the wrong length, the offset
/// missing, extra text.
fn spoil(line: &str, how: usize, text: &str) -> String {
    match how % 5 {
        0 => line.replacen(APP_ID, &APP_ID[..39], 1),
        1 => line.replacen(
            APP_ID,
            &format!("{APP_ID}{}", &APP_ID[..2 + text.len() % 3 * 2 + 1]),
            1,
        ),
        2 => line
            .replacen("+0x11aa", "", 1)
            .replacen(" 00000000000011aa", "", 1),
        3 => format!("{line} {text}"),
        _ => line.replacen(" (", &format!(" {text}("), 1),
    }
}

#[test]
fn good_frames_are_rewritten() {
    let app = root().join(APP);
    for line in good_frames() {
        let (out, _) = filter(&app, &[], format!("{line}\n").as_bytes());
        let summary = out.contains("SEGV frame3 at /src/app.c:35:54\n");
        assert!(
            summary || out.contains(" in frame3 /src/app.c:35:54 ("),
            "{line:?}: {out:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Near misses of every grammar come out byte for byte, between plain
    /// lines (the same lines unspoilt are rewritten: above).
    #[test]
    fn near_misses_pass_through(
        which in 0usize..4,
        how in 0usize..5,
        text in "[a-z]{1,6}",
        before in "[ -~]{0,30}",
    ) {
        let line = spoil(&good_frames()[which], how, &text);
        let input = format!("{before}\n{line}\n{before}");
        let (out, err) = filter(&root().join(APP), &[], input.as_bytes());
        prop_assert_eq!(out, input);
        prop_assert_eq!(err, "");
    }
}

/// Hostile input cannot grow what is remembered of crash reports without
/// bound: 50,000 `Module` lines and frames, each naming a different 2 KB
/// module (200 MB in all, every name kept would need as much), go through
/// a process limited to 192 MiB of address space.
#[test]
fn distinct_module_names_stay_bounded() {
    use std::io::Write;
    use std::process::Stdio;
    let empty = tempfile::tempdir().expect("tempdir");
    let mut cmd = crate::common::command();
    crate::common::limit(&mut cmd, None, Some(192 << 20));
    let mut child = cmd
        .arg("--build-id-dir")
        .arg(empty.path())
        .args(["--no-debuginfod", "--offline", "--no-default-paths"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run symfilter");
    let mut stdin = child.stdin.take().expect("stdin");
    let pad = "x".repeat(2000);
    for i in 0..50_000 {
        let text = format!(
            "Module /m/{i}{pad} with build-id {APP_ID}\n    #0 0x1  (/n/{i}{pad}+0x11aa) (BuildId: {LIBC_ID})\n"
        );
        stdin.write_all(text.as_bytes()).expect("write stdin");
    }
    drop(stdin);
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {err}", out.status);
    assert_eq!(err.matches("no symbols for module").count(), 1, "{err}");
}
