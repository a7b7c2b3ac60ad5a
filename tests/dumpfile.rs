//! `{{{dumpfile}}}` in filter mode, through the real binary, on the real
//! fixtures of testdata/dumpfile/ (sancov file of a clang-22 ASan +
//! trace-pc-guard build; see make.sh) and testdata/xray/ (FDR trace of
//! xray_demo).

use crate::common;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

struct Run {
    stdout: String,
    stderr: String,
    code: Option<i32>,
}

/// Run symfilter in the crate root with `args`, feeding `stdin`.
fn run(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = common::command()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["--no-debuginfod", "--color=never"])
        .args(args)
        .env_remove("DEBUGINFOD_URLS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn symfilter");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin).expect("write stdin");
    drop(input);
    let out = child.wait_with_output().expect("wait");
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code(),
    }
}

const COV_CONTEXT: &str = "context #1: module 0 \"cov\" build-id f519c0ad3efbb4518cd7fcd0e24c9ff18081aac7 0x555555554000-0x555555554cbf r +0x0, 0x555555555000-0x555555556708 rx +0x1000, 0x555555557000-0x55555555813f r +0x3000, 0x555555559d70-0x55555555a10f rw +0x5d70]";

#[test]
fn sancov_human() {
    let r = run(
        &[
            "--symbol-path",
            "testdata/dumpfile/bin",
            "testdata/dumpfile/sancov.log",
        ],
        b"",
    );
    let expected = format!(
        "app starting
[module #0 \"cov\" build-id f519c0ad3efbb4518cd7fcd0e24c9ff18081aac7: 0x555555554000-0x555555554cbf r, 0x555555555000-0x555555556708 rx, 0x555555557000-0x55555555813f r, 0x555555559d70-0x55555555a10f rw]
coverage: {{{{{{dumpfile:sancov:cov.1234.sancov}}}}}}
[dumpfile sancov:cov.1234.sancov: {COV_CONTEXT}
    sancov cov.1234.sancov: 4 PCs, 2 functions
    add (1 PC)
    main (3 PCs)
{{{{{{dumpfile:sancov:truncated.sancov}}}}}}
[dumpfile sancov:truncated.sancov: context #1 (as above)]
{{{{{{dumpfile:sancov:garbage.sancov}}}}}}
[dumpfile sancov:garbage.sancov: context #1 (as above)]
{{{{{{dumpfile:sancov:missing.sancov}}}}}}
[dumpfile sancov:missing.sancov: context #1 (as above)]
{{{{{{dumpfile:llvm-profile:cov.profraw}}}}}}
[dumpfile llvm-profile:cov.profraw: context #1 (as above)]
done
"
    );
    assert_eq!(r.stdout, expected);
    assert_eq!(
        r.stderr,
        "symfilter: testdata/dumpfile/sancov.log:9:20: dumpfile sancov:truncated.sancov: testdata/dumpfile/truncated.sancov: truncated: 11 bytes of PCs is not a multiple of 8
symfilter: testdata/dumpfile/sancov.log:10:20: dumpfile sancov:garbage.sancov: testdata/dumpfile/garbage.sancov: not a sancov file
symfilter: testdata/dumpfile/sancov.log:11:20: dumpfile sancov:missing.sancov: no such file testdata/dumpfile/missing.sancov
"
    );
    assert_eq!(r.code, Some(0));
}

#[test]
fn sancov_absolute_32_bit_pcs() {
    let r = run(
        &[
            "--symbol-path",
            "testdata/dumpfile/bin",
            "testdata/dumpfile/abs.log",
        ],
        b"",
    );
    assert_eq!(
        r.stdout,
        "[module #0 \"cov\" build-id f519c0ad3efbb4518cd7fcd0e24c9ff18081aac7: 0x10000000-0x10000cbf r, 0x10001000-0x10002708 rx, 0x10003000-0x1000413f r, 0x10005d70-0x1000610f rw]
{{{dumpfile:sancov:abs32.sancov}}}
[dumpfile sancov:abs32.sancov: context #1: module 0 \"cov\" build-id f519c0ad3efbb4518cd7fcd0e24c9ff18081aac7 0x10000000-0x10000cbf r +0x0, 0x10001000-0x10002708 rx +0x1000, 0x10003000-0x1000413f r +0x3000, 0x10005d70-0x1000610f rw +0x5d70]
    sancov abs32.sancov: 4 PCs, 2 functions
    add (1 PC)
    main (3 PCs)
"
    );
    assert_eq!(r.stderr, "");
}

#[test]
fn sancov_without_symbols_counts_unresolved() {
    let r = run(&["testdata/dumpfile/abs.log"], b"");
    assert!(
        r.stdout
            .ends_with("    sancov abs32.sancov: 4 PCs, 0 functions, 4 unresolved\n"),
        "{}",
        r.stdout
    );
    assert_eq!(
        r.stderr,
        "symfilter: testdata/dumpfile/abs.log:6:20: dumpfile sancov:abs32.sancov: 4 of 4 PCs resolved to no function\n"
    );
}

#[test]
fn llvm_format_is_llvm_symbolizer_output() {
    let report = tempfile::NamedTempFile::new().expect("temp");
    let path = report.path().to_str().expect("utf-8 path");
    for args in [
        vec!["--format=llvm", "testdata/dumpfile/sancov.log"],
        vec![
            "--format=llvm",
            "--dumpfile-report",
            path,
            "--symbol-path",
            "testdata/dumpfile/bin",
            "testdata/dumpfile/sancov.log",
        ],
    ] {
        let r = run(&args, b"");
        let expected = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/dumpfile/sancov.llvm.out"),
        )
        .expect("expected output");
        assert_eq!(r.stdout, expected);
    }
    // The report is still written in llvm mode.
    let text = std::fs::read_to_string(report.path()).expect("report");
    assert_eq!(text.lines().count(), 5);
}

#[test]
fn report_json_per_dump() {
    let report = tempfile::NamedTempFile::new().expect("temp");
    let path = report.path().to_str().expect("utf-8 path");
    let r = run(
        &[
            "--symbol-path",
            "testdata/dumpfile/bin",
            "--dumpfile-report",
            path,
            "testdata/dumpfile/sancov.log",
        ],
        b"",
    );
    assert_eq!(r.code, Some(0));
    let text = std::fs::read_to_string(report.path()).expect("report");
    let objs: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(objs.len(), 5);
    assert_eq!(
        objs[0],
        serde_json::json!({
            "kind": "sancov",
            "name": "cov.1234.sancov",
            "input": "testdata/dumpfile/sancov.log",
            "line": 8,
            "context": 1,
            "modules": [{
                "id": 0,
                "name": "cov",
                "build_id": "f519c0ad3efbb4518cd7fcd0e24c9ff18081aac7",
                "regions": [
                    {"start": "0x555555554000", "size": "0xcc0", "mode": "r", "rel": "0x0"},
                    {"start": "0x555555555000", "size": "0x1709", "mode": "rx", "rel": "0x1000"},
                    {"start": "0x555555557000", "size": "0x1140", "mode": "r", "rel": "0x3000"},
                    {"start": "0x555555559d70", "size": "0x3a0", "mode": "rw", "rel": "0x5d70"},
                ],
            }],
            "sancov": {
                "pcs": 4,
                "bits": 64,
                "unresolved": 0,
                "functions": [{"name": "add", "pcs": 1}, {"name": "main", "pcs": 3}],
            },
        })
    );
    // Unreadable sancov files: null coverage.
    for (i, name) in [
        (1, "truncated.sancov"),
        (2, "garbage.sancov"),
        (3, "missing.sancov"),
    ] {
        assert_eq!(objs[i]["name"], name);
        assert_eq!(objs[i]["sancov"], serde_json::Value::Null);
        // The context is described once, then referred to.
        assert_eq!(objs[i]["context"], 1);
        assert!(objs[i].get("modules").is_none());
    }
    // Other kinds: context only.
    assert_eq!(objs[4]["kind"], "llvm-profile");
    assert_eq!(objs[4]["line"], 12);
    assert!(objs[4].get("sancov").is_none());
}

const XRAY_TABLE: &str = "    Functions with latencies: 7
       funcid      count [      min,       med,       90p,       99p,       max]       sum      self  function    
            2         72 [ 0.000000,  0.000001,  0.000002,  0.000011,  0.000011]  0.000082  0.000017  xray_demo.cc:0:0: demo::fib(int)
            6          1 [ 0.000032,  0.000032,  0.000032,  0.000032,  0.000032]  0.000032  0.000006  xray_demo.cc:0:0: demo::run_thread(int, int)
            1         77 [ 0.000000,  0.000000,  0.000000,  0.000000,  0.000000]  0.000006  0.000006  xray_demo.cc:0:0: demo::leaf(int)
            8          3 [ 0.000001,  0.000001,  0.000001,  0.000001,  0.000001]  0.000002  0.000002  xray_demo.cc:0:0: demo::Worker<long>::step(long)
            5          1 [ 0.000000,  0.000000,  0.000000,  0.000000,  0.000000]  0.000000  0.000000  xray_demo.cc:0:0: demo::mix(int)
            3          3 [ 0.000000,  0.000000,  0.000000,  0.000000,  0.000000]  0.000000  0.000000  xray_demo.cc:0:0: demo::tail_caller(int)
            4          3 [ 0.000000,  0.000000,  0.000000,  0.000000,  0.000000]  0.000000  0.000000  xray_demo.cc:0:0: demo::with_arg(int)
";

#[test]
fn xray_human_and_report() {
    let report = tempfile::NamedTempFile::new().expect("temp");
    let path = report.path().to_str().expect("utf-8 path");
    let r = run(
        &[
            "--symbol-path",
            "testdata/xray/bin",
            "--dumpfile-report",
            path,
            "testdata/dumpfile/xray.log",
        ],
        b"",
    );
    let expected = format!(
        "[xray_demo] starting
[module #0 \"xray_demo\" build-id 8ee7ce0b9453fd82ab3552207727c6f3d5a37695: 0x555555554000-0x555555555fdf r, 0x555555556000-0x555555578f18 rx, 0x555555579000-0x555555588cb3 r, 0x55555558aa80-0x55555561ea6f rw]
[xray_demo] trace written: {{{{{{dumpfile:xray:st.xray}}}}}}
    XRay FDR trace v5: 1 threads, top 7 of 7 functions by total time
{XRAY_TABLE}{{{{{{dumpfile:xray:truncated.xray}}}}}}
    XRay FDR trace v5: 1 threads, top 0 of 0 functions by total time
    Functions with latencies: 0
       funcid      count [      min,       med,       90p,       99p,       max]       sum      self  function    
{{{{{{dumpfile:xray:no-such.xray}}}}}}
{{{{{{dumpfile:xray:garbage.sancov}}}}}}
[xray_demo] done
"
    );
    assert_eq!(r.stdout, expected);
    assert_eq!(
        r.stderr,
        "symfilter: testdata/dumpfile/xray.log:9:18: dumpfile xray:truncated.xray: offset 0x20: buffer announces 2702 bytes but only 52 remain: trace truncated, decoding what is there (and 1 more problem)
symfilter: testdata/dumpfile/xray.log:10:18: dumpfile xray:no-such.xray: no such file testdata/dumpfile/no-such.xray
symfilter: testdata/dumpfile/xray.log:11:18: dumpfile xray:garbage.sancov: testdata/dumpfile/garbage.sancov: file is 8 bytes, too short for an XRay file header (32 bytes)
"
    );
    let table: String = XRAY_TABLE
        .lines()
        .map(|l| format!("{}\n", l.strip_prefix("    ").unwrap_or(l)))
        .collect();
    let text = std::fs::read_to_string(report.path()).expect("report");
    assert_eq!(
        text,
        format!(
            "# dumpfile xray:st.xray (testdata/dumpfile/xray.log:8)
{table}
# dumpfile xray:truncated.xray (testdata/dumpfile/xray.log:9)
Functions with latencies: 0
   funcid      count [      min,       med,       90p,       99p,       max]       sum      self  function    

"
        )
    );
}

#[test]
fn xray_without_binary_shows_ids() {
    let r = run(&["testdata/dumpfile/xray.log"], b"");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines[3],
        "    XRay FDR trace v5: 1 threads, top 7 of 7 functions by total time"
    );
    assert!(
        lines[6].starts_with("            2         72 ["),
        "{}",
        lines[6]
    );
    assert!(!r.stdout.contains("demo::fib"));
}

#[test]
fn stdin_uses_dumpfile_dir() {
    let log = b"{{{module:0:cov:elf:f519c0ad3efbb4518cd7fcd0e24c9ff18081aac7}}}\r
{{{mmap:0x10001000:0x1709:load:0:rx:0x1000}}}\r
{{{dumpfile:sancov:abs32.sancov}}}\r
{{{dumpfile:sancov:abs32.sancov}}}";
    // Without --dumpfile-dir, stdin looks in the current directory.
    let r = run(&["--symbol-path", "testdata/dumpfile/bin"], log);
    assert_eq!(
        r.stderr,
        "symfilter: <stdin>:3:20: dumpfile sancov:abs32.sancov: no such file ./abs32.sancov
symfilter: <stdin>:4:20: dumpfile sancov:abs32.sancov: no such file ./abs32.sancov
"
    );
    let r = run(
        &[
            "--symbol-path",
            "testdata/dumpfile/bin",
            "--dumpfile-dir",
            "testdata/dumpfile",
        ],
        log,
    );
    let context = "[dumpfile sancov:abs32.sancov: context #1: module 0 \"cov\" build-id f519c0ad3efbb4518cd7fcd0e24c9ff18081aac7 0x10001000-0x10002708 rx +0x1000]";
    let again = "[dumpfile sancov:abs32.sancov: context #1 (as above)]";
    let summary =
        "    sancov abs32.sancov: 4 PCs, 2 functions\r\n    add (1 PC)\r\n    main (3 PCs)\r\n";
    // CRLF lines get CRLF lines; a last line without an ending gets one.
    assert_eq!(
        r.stdout,
        format!(
            "[module #0 \"cov\" build-id f519c0ad3efbb4518cd7fcd0e24c9ff18081aac7: 0x10001000-0x10002708 rx]\r
{{{{{{dumpfile:sancov:abs32.sancov}}}}}}\r
{context}\r
{summary}{{{{{{dumpfile:sancov:abs32.sancov}}}}}}
{again}
    sancov abs32.sancov: 4 PCs, 2 functions
    add (1 PC)
    main (3 PCs)
"
        )
    );
    assert_eq!(r.stderr, "");
}

#[test]
fn odd_names_do_not_panic() {
    let log = b"{{{dumpfile:sancov:}}}
{{{dumpfile:xray:}}}
{{{dumpfile:sancov:.}}}
{{{dumpfile:xray:/}}}
{{{dumpfile:sancov:../../../../../../../../etc/hostname}}}
{{{dumpfile:sancov:\xff\xfe}}}
{{{dumpfile:sancov:a%00b}}}
{{{dumpfile:xray:testdata/dumpfile}}}
";
    let r = run(&[], log);
    assert_eq!(r.code, Some(0));
    // Every element line is kept, followed by the context line of
    // non-XRay kinds (the context is empty here).
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines[0], "{{{dumpfile:sancov:}}}");
    assert_eq!(lines[1], "[dumpfile sancov:: context empty]");
    assert_eq!(lines[2], "{{{dumpfile:xray:}}}");
    assert_eq!(lines[3], "{{{dumpfile:sancov:.}}}");
    // One diagnostic per element, each on its line.
    let diag: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(diag.len(), 8, "{}", r.stderr);
    for (i, d) in diag.iter().enumerate() {
        assert!(
            d.starts_with(&format!("symfilter: <stdin>:{}:", i + 1)),
            "{d}"
        );
    }
    assert_eq!(
        diag[0],
        "symfilter: <stdin>:1:20: dumpfile sancov:: empty file name"
    );
}

#[test]
fn json_dumpfile_member() {
    let r = run(
        &[
            "--format=json",
            "--symbol-path",
            "testdata/dumpfile/bin",
            "testdata/dumpfile/sancov.log",
        ],
        b"",
    );
    let lines: Vec<serde_json::Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(lines.len(), 13);
    let span = &lines[7]["spans"][1];
    assert_eq!(span["element"], "dumpfile");
    assert_eq!(
        span["dumpfile"]["sancov"],
        serde_json::json!({
            "pcs": 4, "bits": 64, "unresolved": 0,
            "functions": [{"name": "add", "pcs": 1}, {"name": "main", "pcs": 3}],
        })
    );
    assert_eq!(
        span["dumpfile"]["modules"][0]["regions"][1]["rel"],
        "0x1000"
    );
    let bad = &lines[8]["spans"][0]["dumpfile"];
    assert_eq!(
        bad["error"],
        "testdata/dumpfile/truncated.sancov: truncated: 11 bytes of PCs is not a multiple of 8"
    );
    assert_eq!(bad["sancov"], serde_json::Value::Null);
    // Same diagnostics as in human format.
    assert_eq!(r.stderr.lines().count(), 3);

    let r = run(
        &[
            "--format=json",
            "--symbol-path",
            "testdata/xray/bin",
            "testdata/dumpfile/xray.log",
        ],
        b"",
    );
    let line: serde_json::Value =
        serde_json::from_str(r.stdout.lines().nth(7).expect("line 8")).expect("JSON");
    let x = &line["spans"][1]["dumpfile"]["xray"];
    assert_eq!(x["functions"], 7);
    assert_eq!(x["threads"], 1);
    assert_eq!(x["top"][0]["function"], "demo::fib(int)");
    assert_eq!(x["top"][0]["count"], 72);
    assert_eq!(x["top"].as_array().map(Vec::len), Some(7));
}
