//! The debuginfod fixture (testdata/debuginfod) and provider set-up shared
//! by tests/debuginfod.rs (real elfutils server) and
//! tests/debuginfod_faults.rs (scripted server).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use symfilter::debuginfod::{Config, DebuginfodProvider};
use symfilter::report::{Report, Reporter};
use symfilter::symbols::{BuildId, CodeWant, DataWant, Frame, ModuleKey, SymbolSource};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/debuginfod")
        .join(name)
}

pub fn fixture_id() -> BuildId {
    let hex = std::fs::read_to_string(fixture("build-id")).expect("build-id");
    BuildId::from_hex(hex.trim()).expect("hex build id")
}

pub fn key(id: &BuildId) -> ModuleKey {
    ModuleKey::new(id.clone(), "hello")
}

/// A provider configuration with no overall time limit and no CA file.
pub fn config(servers: Vec<String>, cache: Option<&Path>, timeout_s: u64, max_size: u64) -> Config {
    Config {
        servers,
        cache_root: cache.map(Path::to_path_buf),
        timeout: Duration::from_secs(timeout_s),
        max_time: None,
        budget: Duration::from_secs(600),
        max_size: Some(max_size),
        ca_file: None,
        warnings: Vec::new(),
    }
}

/// Collects the text of warnings.
struct Warnings(Arc<Mutex<Vec<String>>>);

impl Reporter for Warnings {
    fn report(&self, r: &Report<'_>) {
        if let Report::Warning(m) = r {
            self.0.lock().expect("warnings").push((*m).to_owned());
        }
    }
}

/// The provider, and the warnings it reports, collected.
pub fn provider_with(config: Config) -> (DebuginfodProvider, Arc<Mutex<Vec<String>>>) {
    let warnings = Arc::new(Mutex::new(Vec::new()));
    let w = warnings.clone();
    let provider = DebuginfodProvider::new(config).with_reporter(Arc::new(Warnings(w)));
    (provider, warnings)
}

/// `src` answers as llvm-symbolizer does: symbol names (symbols.expected)
/// and DWARF frames (lookup.expected).
pub fn assert_symbolizes(src: &dyn SymbolSource) {
    let expected = std::fs::read_to_string(fixture("symbols.expected")).expect("expected");
    let mut n = 0;
    for line in expected.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let addr = u64::from_str_radix(f[0].trim_start_matches("0x"), 16).expect("addr");
        let name = match f[1] {
            "code" => {
                src.lookup_code(addr, CodeWant::default())
                    .expect("code")
                    .symbol
                    .expect("sym")
                    .name
            }
            _ => {
                src.lookup_data(addr, DataWant::default())
                    .expect("data")
                    .symbol
                    .expect("sym")
                    .name
            }
        };
        assert_eq!(&*name, f[2], "at {addr:#x}");
        n += 1;
    }
    assert_eq!(n, 4);
    let expected = std::fs::read_to_string(fixture("lookup.expected")).expect("expected");
    for line in expected.lines() {
        let a = line.split(' ').next().expect("addr");
        let addr = u64::from_str_radix(a.trim_start_matches("0x"), 16).expect("addr");
        let info = src.lookup_code(addr, CodeWant::default()).expect("code");
        let fr = info.frames.first().expect("a DWARF frame");
        assert_eq!(frame_line(a, fr), line);
    }
}

/// A frame as the `*.expected` files write it: `ADDR FUNCTION FILE:LINE[:COLUMN]`.
pub fn frame_line(addr: &str, fr: &Frame) -> String {
    let mut s = format!(
        "{addr} {} {}:{}",
        fr.function.as_deref().unwrap_or("??"),
        fr.file.as_deref().unwrap_or("??"),
        fr.line
    );
    if fr.column != 0 {
        s.push_str(&format!(":{}", fr.column));
    }
    s
}
