//! Differential tests on real FDR traces (clang-22 runtime, version 5)
//! against llvm-xray 22's committed outputs (testdata/xray/make-traces.sh).

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Command;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/xray")
}

fn symfilter(args: &[&str]) -> (String, String) {
    let out = common::command()
        .current_dir(dir())
        .args(args)
        .output()
        .expect("run symfilter");
    let stdout = String::from_utf8(out.stdout).expect("utf-8 stdout");
    let stderr = String::from_utf8(out.stderr).expect("utf-8 stderr");
    assert!(out.status.success(), "symfilter {args:?} failed: {stderr}");
    (stdout, stderr)
}

/// symfilter's stderr for `args`, run in the fixtures' folder, which must
/// fail.
fn symfilter_fails(args: &[&str]) -> String {
    let out = common::command()
        .current_dir(dir())
        .args(args)
        .output()
        .expect("run symfilter");
    assert!(!out.status.success(), "symfilter {args:?} succeeded");
    String::from_utf8(out.stderr).expect("utf-8 stderr")
}

fn expected(name: &str) -> String {
    std::fs::read_to_string(dir().join("expected").join(name)).expect("expected output")
}

/// `funcid..sum` and the function name of an llvm-xray CSV row (the debug
/// column depends on the DWARF source and is left out).
fn llvm_csv_rows(text: &str) -> Vec<(String, String)> {
    text.lines()
        .skip(1)
        .map(|l| {
            let fields: Vec<&str> = l.splitn(9, ',').collect();
            assert_eq!(fields.len(), 9, "{l}");
            let rest = fields[8];
            let (_, function) = rest.split_once("\",\"").expect("debug,function");
            (
                fields[..8].join(","),
                function.trim_end_matches('"').to_string(),
            )
        })
        .collect()
}

const TRACES: [&str; 3] = ["st", "mt", "mb"];

#[test]
fn account_matches_llvm_xray() {
    for t in TRACES {
        let trace = format!("traces/{t}.xray");
        let (out, _) = symfilter(&[
            "xray",
            "account",
            &trace,
            "--instr-map",
            "bin/xray_demo",
            "--format=llvm-csv",
        ]);
        let want = expected(&format!("{t}.account.csv"));
        // Byte for byte, debug column (DWARF through the symbolizer) included.
        assert_eq!(out, want, "trace {t}");
        assert!(llvm_csv_rows(&want).len() >= 7, "trace {t}");
    }
}

#[test]
fn csv_format_has_the_issue_header_and_llvm_values() {
    for t in TRACES {
        let trace = format!("traces/{t}.xray");
        let (out, _) = symfilter(&[
            "xray",
            "account",
            &trace,
            "-m",
            "bin/xray_demo",
            "-f",
            "csv",
        ]);
        let mut lines = out.lines();
        assert_eq!(
            lines.next(),
            Some("funcid,count,min,median,90p,99p,max,sum,function")
        );
        let got: Vec<(String, String)> = lines
            .map(|l| {
                let f: Vec<&str> = l.splitn(9, ',').collect();
                (f[..8].join(","), f[8].trim_matches('"').to_string())
            })
            .collect();
        assert_eq!(got, llvm_csv_rows(&expected(&format!("{t}.account.csv"))));
    }
}

#[test]
fn per_thread_tables_add_up_to_the_total() {
    let (out, _) = symfilter(&[
        "xray",
        "account",
        "traces/mt.xray",
        "-m",
        "bin/xray_demo",
        "--per-thread",
        "-f",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let tables = v.as_array().expect("tables");
    // 4 workers + main thread, then the total.
    assert_eq!(tables.len(), 6);
    assert_eq!(tables[5]["table"], "all threads");
    let sum_of = |t: &serde_json::Value, key: &str| -> u64 {
        t["functions"]
            .as_array()
            .expect("functions")
            .iter()
            .map(|f| {
                f["ticks"][key]
                    .as_u64()
                    .unwrap_or_else(|| f[key].as_u64().expect(key))
            })
            .sum()
    };
    let threads_count: u64 = tables[..5].iter().map(|t| sum_of(t, "count")).sum();
    let threads_ticks: u64 = tables[..5].iter().map(|t| sum_of(t, "sum")).sum();
    assert_eq!(threads_count, sum_of(&tables[5], "count"));
    assert_eq!(threads_ticks, sum_of(&tables[5], "sum"));
    // Every worker ran run_thread once.
    let run_thread_calls = tables[..5]
        .iter()
        .filter(|t| {
            t["functions"]
                .as_array()
                .expect("functions")
                .iter()
                .any(|f| f["function"] == "demo::run_thread(int, int)" && f["count"] == 1)
        })
        .count();
    assert_eq!(run_thread_calls, 4);
}

#[test]
fn convert_yaml_matches_llvm_xray() {
    for t in ["st", "mt"] {
        let trace = format!("traces/{t}.xray");
        let (out, _) = symfilter(&["xray", "convert", &trace, "-m", "bin/xray_demo", "-y"]);
        assert_eq!(out, expected(&format!("{t}.convert.yaml")), "trace {t}");
    }
}

#[test]
fn stack_totals_match_llvm_xray_flame() {
    for t in TRACES {
        let trace = format!("traces/{t}.xray");
        let (out, _) = symfilter(&[
            "xray",
            "stack",
            &trace,
            "-m",
            "bin/xray_demo",
            "-f",
            "folded",
            "--value",
            "total",
        ]);
        let mut got: Vec<String> = out.lines().map(str::to_string).collect();
        got.sort();
        // llvm-xray writes `stack; VALUE`.
        let mut want: Vec<String> = expected(&format!("{t}.stack.flame"))
            .lines()
            .map(|l| {
                let (stack, v) = l.rsplit_once("; ").expect("flame line");
                format!("{stack} {v}")
            })
            .collect();
        want.sort();
        assert_eq!(got, want, "trace {t}");
    }
}

#[test]
fn folded_self_times_sum_to_root_totals() {
    let (self_out, _) = symfilter(&[
        "xray",
        "stack",
        "traces/st.xray",
        "-m",
        "bin/xray_demo",
        "-f",
        "folded",
    ]);
    let (total_out, _) = symfilter(&[
        "xray",
        "stack",
        "traces/st.xray",
        "-m",
        "bin/xray_demo",
        "-f",
        "folded",
        "--value",
        "total",
    ]);
    let value = |l: &str| -> u64 { l.rsplit_once(' ').expect("value").1.parse().expect("num") };
    let self_sum: u64 = self_out.lines().map(value).sum();
    // Roots are `thread_TID;function` (one `;`).
    let root_total: u64 = total_out
        .lines()
        .filter(|l| l.rsplit_once(' ').expect("value").0.matches(';').count() == 1)
        .map(value)
        .sum();
    assert_eq!(self_sum, root_total);
    assert!(self_out.contains("thread_"));
    assert!(self_out.contains(";demo::run_thread(int, int);demo::fib(int);demo::fib(int) "));
}

#[test]
fn trace_event_json_is_balanced_and_named() {
    let (out, _) = symfilter(&[
        "xray",
        "convert",
        "traces/mt.xray",
        "-m",
        "bin/xray_demo",
        "-f",
        "trace_event",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("trace_event json");
    let events = v["traceEvents"].as_array().expect("traceEvents");
    let count = |ph: &str| events.iter().filter(|e| e["ph"] == ph).count();
    let yaml = expected("mt.convert.yaml");
    let entries = yaml.matches("kind: function-enter").count();
    let customs = yaml.matches("kind: custom-event").count();
    assert_eq!(count("B"), entries);
    assert_eq!(count("i"), customs);
    // Every B is closed except calls still open when the trace was flushed
    // (main and the thread-spawning frames).
    let open = count("B") - count("E");
    assert!(open <= 8, "{open} calls left open");
    assert!(
        events
            .iter()
            .any(|e| e["name"] == "demo::Worker<long>::step(long)" && e["ph"] == "B")
    );
    let mut last = std::collections::HashMap::new();
    for e in events {
        let tid = e["tid"].as_u64().expect("tid");
        let ts = e["ts"].as_f64().expect("ts");
        let prev = last.insert(tid, ts).unwrap_or(0.0);
        assert!(ts >= prev, "timestamps go back on thread {tid}");
    }
}

#[test]
fn text_report_names_functions() {
    let (out, _) = symfilter(&["xray", "account", "traces/st.xray", "-m", "bin/xray_demo"]);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("Functions with latencies: 7"));
    assert!(
        lines
            .next()
            .is_some_and(|h| h.trim_start().starts_with("funcid"))
    );
    let want = llvm_csv_rows(&expected("st.account.csv"));
    for ((_, function), line) in want.iter().zip(lines) {
        assert!(line.ends_with(&format!(": {function}")), "{line}");
    }
    // Sorting by sum, descending, top 2: fib (recursive calls count again
    // in the sum) then run_thread; the count line still says 7.
    let (out, _) = symfilter(&[
        "xray",
        "account",
        "traces/st.xray",
        "-m",
        "bin/xray_demo",
        "-s",
        "sum",
        "-r",
        "dsc",
        "-p",
        "2",
    ]);
    assert!(out.starts_with("Functions with latencies: 7\n"));
    let rows: Vec<&str> = out.lines().skip(2).collect();
    assert_eq!(rows.len(), 2);
    assert!(rows[0].ends_with("demo::fib(int)"));
    assert!(rows[1].ends_with("demo::run_thread(int, int)"));
    // By self time run_thread drops below fib and leaf.
    let (out, _) = symfilter(&[
        "xray",
        "account",
        "traces/st.xray",
        "-m",
        "bin/xray_demo",
        "-s",
        "self",
        "-r",
        "dsc",
    ]);
    let order: Vec<&str> = out
        .lines()
        .skip(2)
        .map(|l| l.rsplit_once(": ").expect("name").1)
        .collect();
    assert_eq!(order[0], "demo::fib(int)");
    assert_eq!(order.len(), 7);
}

#[test]
fn without_a_binary_ids_are_numbers() {
    let (out, _) = symfilter(&["xray", "account", "traces/st.xray", "-f", "csv"]);
    let want = llvm_csv_rows(&expected("st.account.csv"));
    for (line, (nums, _)) in out.lines().skip(1).zip(&want) {
        let id = nums.split(',').next().expect("id");
        assert_eq!(line, format!("{nums},\"#{id}\""));
    }
}

#[test]
fn instrumentation_map_matches_llvm_xray_extract() {
    let (out, _) = symfilter(&["xray", "extract", "-s", "bin/xray_demo"]);
    assert_eq!(out, expected("xray_demo.extract.yaml"));
}

/// xray_demo with its sleds rewritten as version 0 (absolute addresses), as
/// testdata/xray/make-v0-map.sh does for llvm-xray's expected output.
#[test]
fn version_0_sleds_match_llvm_xray_extract() {
    use object::{Object, ObjectSection};
    let mut data = std::fs::read(dir().join("bin/xray_demo")).expect("binary");
    let (base, range) = {
        let file = object::File::parse(&*data).expect("ELF");
        let map = file.section_by_name("xray_instr_map").expect("section");
        let (off, size) = map.file_range().expect("contents");
        (map.address(), off as usize..(off + size) as usize)
    };
    for (i, sled) in data[range].chunks_exact_mut(32).enumerate() {
        let at = base + 32 * i as u64;
        let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
        let address = at.wrapping_add(word(&sled[0..8]));
        let function = (at + 8).wrapping_add(word(&sled[8..16]));
        sled[0..8].copy_from_slice(&address.to_le_bytes());
        sled[8..16].copy_from_slice(&function.to_le_bytes());
        sled[18] = 0;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let v0 = tmp.path().join("xray_demo.v0");
    std::fs::write(&v0, &data).expect("write");
    let (out, _) = symfilter(&["xray", "extract", "-s", v0.to_str().expect("utf-8")]);
    assert_eq!(out, expected("xray_demo.v0.extract.yaml"));
}

#[test]
fn build_id_not_found_is_one_clear_error() {
    // An empty tree: a missing one would get a warning of its own.
    let empty = tempfile::tempdir().expect("tempdir");
    let err = symfilter_fails(&[
        "xray",
        "account",
        "traces/st.xray",
        "--build-id",
        "00112233445566778899aabbccddeeff00112233",
        "--build-id-dir",
        empty.path().to_str().expect("UTF-8 path"),
        "--no-debuginfod",
    ]);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("symfilter: no binary with an XRay instrumentation map found for build ID 00112233445566778899aabbccddeeff00112233"),
        "{err}"
    );
}

/// A named binary that cannot be read is one error line, saying its cause
/// once, not also a warning about the symbol path made of it.
#[test]
fn a_missing_instrumented_binary_is_one_error() {
    let err = symfilter_fails(&[
        "xray",
        "account",
        "traces/st.xray",
        "--instr-map",
        "/nonexistent/xray-binary",
        "--no-debuginfod",
    ]);
    let not_found = std::io::Error::from_raw_os_error(libc::ENOENT);
    assert_eq!(
        err,
        format!("symfilter: /nonexistent/xray-binary: {not_found}\n")
    );
}

fn demo_build_id() -> String {
    let data = std::fs::read(dir().join("bin/xray_demo")).expect("binary");
    let map = symfilter::xray::InstrMap::parse(&data).expect("instr map");
    map.build_id.expect("build id").to_hex()
}

#[test]
fn binary_found_by_build_id_through_symbol_path_and_debug_tree() {
    let id = demo_build_id();
    assert_eq!(id.len(), 40);
    let want = expected("mt.account.csv");
    let (out, _) = symfilter(&[
        "xray",
        "account",
        "traces/mt.xray",
        "--build-id",
        &id,
        "--symbol-path",
        "bin",
        "-f",
        "llvm-csv",
    ]);
    assert_eq!(out, want);

    let tree = tempfile::tempdir().expect("tempdir");
    let sub = tree.path().join(".build-id").join(&id[..2]);
    std::fs::create_dir_all(&sub).expect("mkdir");
    let debug = sub.join(format!("{}.debug", &id[2..]));
    std::fs::copy(dir().join("bin/xray_demo"), &debug).expect("copy");
    let tree_arg = tree.path().to_str().expect("utf-8");
    let (out, _) = symfilter(&[
        "xray",
        "account",
        "traces/mt.xray",
        "--build-id",
        &id,
        "--build-id-dir",
        tree_arg,
        "-f",
        "llvm-csv",
    ]);
    assert_eq!(out, want);

    // A debug-only file has no instrumentation map contents: say so.
    let status = Command::new("/usr/lib/llvm-22/bin/llvm-objcopy")
        .arg("--only-keep-debug")
        .arg(dir().join("bin/xray_demo"))
        .arg(&debug)
        .status();
    if status.is_ok_and(|s| s.success()) {
        let err = symfilter_fails(&[
            "xray",
            "account",
            "traces/mt.xray",
            "--build-id",
            &id,
            "--build-id-dir",
            tree_arg,
        ]);
        assert!(
            err.contains("xray_instr_map has no contents in this file (a stripped debug file?)"),
            "{err}"
        );
    }
}

/// A stripped binary whose debug info lies beside it (found through its
/// `.gnu_debuglink`): the source has two files, and the instrumentation map
/// is read from the binary, not the debug file.
#[test]
fn binary_with_separate_debug_info_is_read_for_its_map() {
    let id = demo_build_id();
    let objcopy = "/usr/lib/llvm-22/bin/llvm-objcopy";
    let bins = tempfile::tempdir().expect("tempdir");
    let stripped = bins.path().join("xray_demo");
    let debug = bins.path().join("xray_demo.debug");
    let run = |args: &[&std::ffi::OsStr]| {
        let status = Command::new(objcopy).args(args).status().expect("objcopy");
        assert!(status.success(), "objcopy {args:?}");
    };
    let demo = dir().join("bin/xray_demo");
    run(&[
        "--only-keep-debug".as_ref(),
        demo.as_os_str(),
        debug.as_os_str(),
    ]);
    let link = std::ffi::OsString::from(format!("--add-gnu-debuglink={}", debug.display()));
    run(&[
        "--strip-debug".as_ref(),
        &link,
        demo.as_os_str(),
        stripped.as_os_str(),
    ]);
    let (out, err) = symfilter(&[
        "xray",
        "account",
        "traces/mt.xray",
        "--build-id",
        &id,
        "--symbol-path",
        bins.path().to_str().expect("utf-8"),
        "-f",
        "llvm-csv",
    ]);
    assert_eq!(out, expected("mt.account.csv"), "{err}");
}

#[test]
fn summarize_for_the_filter() {
    use symfilter::symbols::{BuildId, ModuleKey, Symbolizer, SymbolizerConfig};
    let places = symfilter::elf::Places {
        symbol_paths: vec![dir().join("bin")],
        ..symfilter::elf::Places::default()
    };
    let mut symbolizer = Symbolizer::new(SymbolizerConfig {
        providers: symfilter::elf::providers(&places),
    });
    let modules = [
        ModuleKey {
            build_id: BuildId::from_hex("0123456789abcdef").expect("hex"),
            name: "libunrelated.so".into(),
            image_base_hint: None,
        },
        ModuleKey {
            build_id: BuildId::from_hex(&demo_build_id()).expect("hex"),
            name: "xray_demo".into(),
            image_base_hint: None,
        },
    ];
    let summary = symfilter::xray::Summary::open(
        &dir().join("traces/mt.xray"),
        &modules,
        &mut symbolizer,
        symfilter::symbols::CodeWant::default(),
        Some(10),
    )
    .expect("summary");
    let mut text = String::new();
    summary.write_text(&mut text);
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("XRay FDR trace v5: 5 threads, top 10 of 11 functions by total time")
    );
    assert_eq!(lines.next(), Some("Functions with latencies: 11"));
    let rows: Vec<&str> = lines.skip(1).collect();
    assert_eq!(rows.len(), 10);
    assert!(rows[0].ends_with("demo::fib(int)"), "{}", rows[0]);
    assert!(text.contains("xray_demo.cc:0:0: demo::run_thread(int, int)"));
}

#[test]
fn convert_writes_to_a_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("st.yaml");
    let p = path.to_str().expect("utf-8");
    let (out, _) = symfilter(&[
        "xray",
        "convert",
        "traces/st.xray",
        "-m",
        "bin/xray_demo",
        "-y",
        "-o",
        p,
    ]);
    assert_eq!(out, "");
    assert_eq!(
        std::fs::read_to_string(&path).expect("written"),
        expected("st.convert.yaml")
    );
}
