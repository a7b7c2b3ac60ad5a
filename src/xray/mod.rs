//! LLVM XRay flight-data-recorder traces: decode ([`fdr`]), map function
//! IDs to names ([`instr_map`], [`names`]), and report ([`account`],
//! [`stack`], [`convert`]).

pub mod account;
pub mod convert;
pub mod fdr;
pub mod instr_map;
pub mod names;
pub mod open;
pub mod stack;

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::base::mapped::FileMap;

pub use fdr::{Diagnostic, Event, FnKind, Header, ThreadKey, Trace, TraceError};
pub use instr_map::{InstrMap, InstrMapError};
pub use names::Names;

use crate::symbols::{BuildId, CodeWant, ModuleKey, Symbolizer};

/// Errors of the XRay front. Each message says its cause itself, so the
/// cause is a plain field, not the error's `source()`: a report of the
/// whole chain (`{:#}`) would say it twice.
#[derive(Debug, thiserror::Error)]
pub enum XrayError {
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: {error}")]
    Trace { path: String, error: TraceError },
    #[error("{path}: {error}")]
    InstrMap { path: String, error: InstrMapError },
    #[error("no binary with an XRay instrumentation map found for build ID {build_id}{tried}")]
    BinaryNotFound { build_id: String, tried: String },
}

/// A read-only file mapping.
pub struct Mapped {
    map: FileMap,
}

/// `error` reading the file at `path`.
fn io_error(path: &Path, error: std::io::Error) -> XrayError {
    XrayError::Io {
        path: path.display().to_string(),
        error,
    }
}

impl Mapped {
    pub fn open(path: &Path) -> Result<Mapped, XrayError> {
        let file = File::open(path).map_err(|error| io_error(path, error))?;
        Mapped::of(&file, path)
    }

    /// Map a file already open (`path` names it in errors).
    pub fn of(file: &File, path: &Path) -> Result<Mapped, XrayError> {
        let map = FileMap::open(file, path).map_err(|error| io_error(path, error))?;
        Ok(Mapped { map })
    }

    pub fn bytes(&self) -> &[u8] {
        &self.map
    }
}

/// An instrumented binary: its bytes and instrumentation map.
pub struct Binary {
    pub path: PathBuf,
    pub data: Mapped,
    pub map: InstrMap,
}

impl Binary {
    pub fn open(path: &Path) -> Result<Binary, XrayError> {
        let data = Mapped::open(path)?;
        let map = InstrMap::parse(data.bytes()).map_err(|error| XrayError::InstrMap {
            path: path.display().to_string(),
            error,
        })?;
        Ok(Binary {
            path: path.to_path_buf(),
            data,
            map,
        })
    }

    /// Find the binary for `build_id` through the symbolizer's sources (the
    /// same `--build-id-dir`/`--symbol-path`/debuginfod resolvers as the
    /// filter): the file a source was opened from must also carry the
    /// instrumentation map.
    pub fn find(
        build_id: &BuildId,
        name: &str,
        symbolizer: &mut Symbolizer,
    ) -> Result<Binary, XrayError> {
        let key = ModuleKey {
            build_id: build_id.clone(),
            name: name.to_string(),
            image_base_hint: None,
        };
        let opened = symbolizer.open(&key);
        let mut tried = String::new();
        match opened.source {
            Ok(src) => match src.image() {
                Some(image) => match Binary::open(image.as_path()) {
                    Ok(b) => return Ok(b),
                    Err(e) => tried = format!(" (tried {e})"),
                },
                None => tried = format!(" ({} holds no image)", src.origin()),
            },
            Err(trail) => {
                let places: Vec<String> = trail
                    .iter()
                    .map(|a| format!("{} {}", a.provider, a.place))
                    .collect();
                if !places.is_empty() {
                    tried = format!(" (tried {})", places.join(", "));
                }
            }
        }
        Err(XrayError::BinaryNotFound {
            build_id: build_id.to_hex(),
            tried,
        })
    }

    /// Names for every function of the map (code lookups with the want
    /// beside the symbolizer).
    pub fn names(&self, symbolizer: Option<(&mut Symbolizer, CodeWant)>) -> Names {
        let n = u32::try_from(self.map.functions.len()).unwrap_or(u32::MAX);
        self.names_for(symbolizer, 1..=n)
    }

    /// Names for the function IDs `ids` (those a report shows).
    pub fn names_for(
        &self,
        symbolizer: Option<(&mut Symbolizer, CodeWant)>,
        ids: impl IntoIterator<Item = u32>,
    ) -> Names {
        let module = self
            .path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Names::resolve(&self.map, Some(self.data.bytes()), &module, symbolizer, ids)
    }
}

/// Run the decoder and every report over `data` (the fuzz target's body;
/// also used by the tests). Returns the number of events decoded.
#[doc(hidden)]
pub fn exercise(data: &[u8]) -> usize {
    let Ok(trace) = Trace::parse(data) else {
        return 0;
    };
    let names = Names::default();
    let acc = account::Accountant::run(&trace, account::AccountOptions::default());
    let mut out = String::new();
    let rows = acc.total_rows();
    account::write_text(
        &mut out,
        rows.len(),
        &rows,
        trace.header.cycle_frequency,
        &names,
    );
    let deduced = account::Accountant::run(
        &trace,
        account::AccountOptions {
            deduce_sibling_calls: true,
        },
    );
    for th in &deduced.threads {
        let rows = deduced.thread_rows(th);
        account::write_csv(&mut out, &rows, trace.header.cycle_frequency, &names);
    }
    let st = stack::StackTrie::run(&trace, false);
    st.write_folded(&mut out, stack::StackValue::SelfTime, &names);
    st.write_tree(&mut out, trace.header.cycle_frequency, &names);
    let (recs, _) = convert::flatten(&trace, true);
    convert::write_yaml(&mut out, &trace.header, &recs, Some(&names));
    convert::write_trace_event(&mut out, &trace.header, &recs, &names);
    recs.len()
}

/// An account of a trace, its rows sorted by total time, for the
/// filter's handling of `{{{dumpfile}}}` elements: a short summary (the
/// top rows) in the output and the whole table in a report file.
#[derive(Debug)]
pub struct Summary {
    pub version: u16,
    pub threads: usize,
    /// Functions in the trace (the rows may be fewer).
    pub functions: usize,
    pub rows: Vec<account::Row>,
    /// Cycles per second.
    pub freq: u64,
    pub names: Names,
    /// Function entries and exits without their other half.
    pub unmatched: (u64, u64),
    /// Decoding problems, in file order.
    pub problems: Vec<Diagnostic>,
}

impl Summary {
    /// The summary of the trace at `trace_path`; see [`Summary::of`].
    pub fn open(
        trace_path: &Path,
        modules: &[ModuleKey],
        symbolizer: &mut Symbolizer,
        want: CodeWant,
        top: Option<usize>,
    ) -> Result<Summary, XrayError> {
        let mapped = Mapped::open(trace_path)?;
        Summary::of(mapped.bytes(), trace_path, modules, symbolizer, want, top)
    }

    /// The summary of a trace read already (`trace_path` names it), with
    /// the `top` rows by total time (all when `None`). `modules` are the
    /// modules the log announced; the first whose binary carries an XRay
    /// instrumentation map names the functions (IDs are shown as numbers
    /// when none is found), looked up with `want`.
    pub fn of(
        bytes: &[u8],
        trace_path: &Path,
        modules: &[ModuleKey],
        symbolizer: &mut Symbolizer,
        want: CodeWant,
        top: Option<usize>,
    ) -> Result<Summary, XrayError> {
        let trace = Trace::parse(bytes).map_err(|error| XrayError::Trace {
            path: trace_path.display().to_string(),
            error,
        })?;
        let acc = account::Accountant::run(&trace, account::AccountOptions::default());
        let mut rows = acc.total_rows();
        let functions = rows.len();
        let mut names = Names::default();
        for m in modules {
            if let Ok(bin) = Binary::find(&m.build_id, &m.name, symbolizer) {
                names = bin.names_for(Some((symbolizer, want)), rows.iter().map(|r| r.func_id));
                break;
            }
        }
        account::sort_rows(&mut rows, account::SortField::Sum, true, top, &names);
        Ok(Summary {
            version: trace.header.version,
            threads: acc.threads.len(),
            functions,
            rows,
            freq: trace.header.cycle_frequency,
            names,
            unmatched: acc.unmatched(),
            problems: acc.diagnostics,
        })
    }

    /// A header line (version, threads, rows shown, unmatched events), then
    /// the table of `symfilter xray account`.
    pub fn write_text(&self, out: &mut String) {
        use std::fmt::Write as _;
        let _ = write!(
            out,
            "XRay FDR trace v{}: {} threads, top {} of {} functions by total time",
            self.version,
            self.threads,
            self.rows.len(),
            self.functions
        );
        let (entries, exits) = self.unmatched;
        if entries + exits > 0 {
            let _ = write!(
                out,
                ", {entries} unmatched entries, {exits} unmatched exits"
            );
        }
        out.push('\n');
        self.write_table(out);
    }

    /// The table of `symfilter xray account`.
    pub fn write_table(&self, out: &mut String) {
        account::write_text(out, self.functions, &self.rows, self.freq, &self.names);
    }
}
