//! `{{{dumpfile:TYPE:NAME}}}` elements in filter mode: the program wrote a
//! data file NAME of kind TYPE, whose addresses mean what the module
//! context declared before the element says. Each dump gives a typed
//! [`DumpReport`] the printer prints (what each format shows, and the
//! `--dumpfile-report` file, are described in the README), and one-line
//! diagnostics for the filter to report at the element.
//!
//! NAME comes from an untrusted log: it is read only inside the dumpfile
//! directory (see [`crate::confined`]), and no diagnostic shows the
//! content of a file that is not a dump of its kind.

mod report;
mod sancov;

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use report::{Content, ContextShown, Described, DescribedModule, DumpReport};
pub use sancov::{
    Coverage, SANCOV_MAGIC_32, SANCOV_MAGIC_64, Sancov, SancovError, resolve_coverage,
};

use crate::context::{Context, Module};
use crate::symbols::{CodeWant, ModuleKey, Symbolizer};
use crate::xray::{self, Mapped, Summary};

/// Rows of an XRay summary in the output (the report file has them all).
const XRAY_TOP: usize = 10;

/// Dumpfile settings.
#[derive(Clone, Debug, Default)]
pub struct DumpOptions {
    /// Where dump files are looked for after their name as given (default:
    /// the input file's directory, or the current directory for stdin).
    pub dir: Option<PathBuf>,
    /// File the full reports are appended to.
    pub report: Option<PathBuf>,
}

/// One dumpfile element to handle.
pub struct Dump<'a> {
    pub kind: &'a [u8],
    pub name: &'a [u8],
    /// The input's name (a path, or `<stdin>`).
    pub input: &'a str,
    /// Line of the element in the input.
    pub line: u64,
}

/// Whether the printer shows dumps, and their XRay contexts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// Lines after the element (`--format=human`): no context for XRay
    /// dumps.
    Text,
    /// A `"dumpfile"` member for the element (`--format=json`).
    Json,
    /// Nothing in the output (`--format=llvm`; the report file only).
    Nothing,
}

/// Why a dump could not be read, or its report not written.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    #[error(transparent)]
    Refused(#[from] crate::confined::Refused),
    #[error(transparent)]
    Xray(#[from] xray::XrayError),
    #[error("{}: {source}", path.display())]
    Sancov { path: PathBuf, source: SancovError },
    /// A file that is no FDR trace is said to be one, without the header
    /// values it holds (nothing of a file a log is not meant to name is
    /// shown).
    #[error("{path}: not an XRay FDR trace")]
    NotATrace { path: String },
    #[error("cannot write dumpfile report {}: {source}; no more reports", path.display())]
    Report {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl DumpError {
    fn of_trace(e: xray::XrayError) -> DumpError {
        match e {
            xray::XrayError::Trace {
                path,
                error: xray::TraceError::NotFdr { .. },
            } => DumpError::NotATrace { path },
            e => DumpError::Xray(e),
        }
    }
}

/// What handling a dump gave.
#[derive(Debug, Default)]
pub struct Outcome {
    /// For the printer (none for [`Want::Nothing`]).
    pub report: Option<DumpReport>,
    /// One-line diagnostics (without location).
    pub diagnostics: Vec<String>,
}

/// Where a context is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Output = 0,
    ReportFile = 1,
}

/// The dumpfile handler the filter owns.
#[derive(Debug, Default)]
pub struct Dumps {
    opts: DumpOptions,
    /// The report file could not be written: reported once, then skipped.
    report_failed: bool,
    /// The context generation dumps were last seen with, and its number
    /// (contexts are numbered from 1 as dumps meet them).
    context: Option<(u64, u64)>,
    /// Number of the context last shown in full, per place: each context
    /// is described once there, and referred to by number after (a log of
    /// many dumps over a big context would otherwise repeat it for each).
    described: [u64; 2],
}

impl Dumps {
    pub fn new(opts: DumpOptions) -> Dumps {
        Dumps {
            opts,
            ..Dumps::default()
        }
    }

    /// True when dumps are written to a report file.
    pub fn reporting(&self) -> bool {
        self.opts.report.is_some() && !self.report_failed
    }

    /// Handle one dump, looking up code with `code`.
    pub fn handle(
        &mut self,
        dump: &Dump<'_>,
        context: &Context,
        symbolizer: &mut Symbolizer,
        code: CodeWant,
        want: Want,
    ) -> Outcome {
        let output = want != Want::Nothing;
        let mut out = Outcome::default();
        let mut diagnose = |e: &dyn std::fmt::Display| {
            let (kind, name) = (
                String::from_utf8_lossy(dump.kind),
                String::from_utf8_lossy(dump.name),
            );
            out.diagnostics.push(format!("dumpfile {kind}:{name}: {e}"));
        };
        let mut record = String::new();
        let (content, shows_context) = if dump.kind == b"xray" {
            let summary = match self.open(dump) {
                Err(e) => {
                    diagnose(&e);
                    Some(Err(e))
                }
                Ok((mapped, path)) => {
                    let (summary, table) = self.xray(
                        dump,
                        (mapped.bytes(), &path),
                        context,
                        symbolizer,
                        code,
                        output,
                    );
                    match &summary {
                        Some(Ok(s)) => {
                            if let Some(d) = problems_diagnostic(&s.problems) {
                                diagnose(&d);
                            }
                        }
                        Some(Err(e)) => diagnose(e),
                        None => {}
                    }
                    match table {
                        Some(Ok(t)) => record = t,
                        Some(Err(e)) if !output => diagnose(&e),
                        _ => {}
                    }
                    summary
                }
            };
            (summary.map(Content::Xray), want == Want::Json)
        } else if dump.kind == b"sancov" {
            let coverage = self.sancov(dump, context, symbolizer, code);
            match &coverage {
                Ok(cov) if cov.unresolved > 0 => diagnose(&format_args!(
                    "{} of {} PCs resolved to no function",
                    cov.unresolved, cov.pcs
                )),
                Ok(_) => {}
                Err(e) => diagnose(e),
            }
            (Some(Content::Sancov(coverage)), output)
        } else {
            (Some(Content::Context), output)
        };
        let report = content.map(|content| DumpReport {
            kind: dump.kind.to_vec(),
            name: dump.name.to_vec(),
            context: shows_context.then(|| self.shown(context, Place::Output)),
            content,
        });
        if let Some(report) = &report
            && dump.kind != b"xray"
            && self.reporting()
        {
            let shown = self.shown(context, Place::ReportFile);
            record = report.record(&shown, dump.input, dump.line).to_string();
            record.push('\n');
        }
        if !record.is_empty()
            && let Err(e) = self.append_report(&record)
        {
            self.report_failed = true;
            out.diagnostics.push(e.to_string());
        }
        out.report = report.filter(|_| output);
        out
    }

    /// Open and map the dump file: NAME inside the dumpfile directory
    /// (see [`crate::confined`]), a regular file.
    fn open(&self, dump: &Dump<'_>) -> Result<(Mapped, PathBuf), DumpError> {
        let dir = match &self.opts.dir {
            Some(d) => d.clone(),
            None if dump.input == "<stdin>" => PathBuf::from("."),
            None => match Path::new(dump.input).parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            },
        };
        let (file, path) = crate::confined::open_in(&dir, dump.name)?;
        let mapped = Mapped::of(&file, &path)?;
        Ok((mapped, path))
    }

    /// The top of the trace's account for the output (when `output`) and
    /// the whole table for the report file (when reporting, unless the
    /// trace could not be read for the output).
    #[allow(clippy::type_complexity)]
    fn xray(
        &mut self,
        dump: &Dump<'_>,
        (bytes, path): (&[u8], &Path),
        context: &Context,
        symbolizer: &mut Symbolizer,
        code: CodeWant,
        output: bool,
    ) -> (
        Option<Result<Summary, DumpError>>,
        Option<Result<String, DumpError>>,
    ) {
        let keys = module_keys(context);
        let summary = output.then(|| {
            Summary::of(bytes, path, &keys, symbolizer, code, Some(XRAY_TOP))
                .map_err(DumpError::of_trace)
        });
        if matches!(summary, Some(Err(_))) || !self.reporting() {
            return (summary, None);
        }
        let table = Summary::of(bytes, path, &keys, symbolizer, code, None)
            .map(|t| {
                let mut table = String::new();
                t.write_table(&mut table);
                let name = String::from_utf8_lossy(dump.name);
                format!(
                    "# dumpfile xray:{name} ({}:{})\n{table}\n",
                    dump.input, dump.line
                )
            })
            .map_err(DumpError::of_trace);
        (summary, Some(table))
    }

    fn sancov(
        &self,
        dump: &Dump<'_>,
        context: &Context,
        symbolizer: &mut Symbolizer,
        code: CodeWant,
    ) -> Result<Coverage, DumpError> {
        let (mapped, path) = self.open(dump)?;
        let sancov = Sancov::parse(mapped.bytes()).map_err(|source| DumpError::Sancov {
            path: path.clone(),
            source,
        })?;
        Ok(resolve_coverage(&sancov, &path, context, symbolizer, code))
    }

    fn append_report(&self, text: &str) -> Result<(), DumpError> {
        let Some(path) = &self.opts.report else {
            return Ok(());
        };
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|source| DumpError::Report {
                path: path.clone(),
                source,
            })
    }

    /// The dump's context as `place` shows it: its number, and its
    /// description the first time it is shown there.
    fn shown(&mut self, context: &Context, place: Place) -> ContextShown {
        let g = context.generation();
        let n = match self.context {
            Some((seen, n)) if seen == g => n,
            other => {
                let n = other.map_or(1, |(_, n)| n + 1);
                self.context = Some((g, n));
                n
            }
        };
        let first = self.described[place as usize] != n;
        self.described[place as usize] = n;
        ContextShown {
            number: n,
            empty: context.is_empty(),
            described: first.then(|| Described::of(context)),
        }
    }
}

fn module_keys(context: &Context) -> Vec<ModuleKey> {
    let mut mods: Vec<&Module> = context.modules().collect();
    mods.sort_by_key(|m| m.id);
    mods.into_iter()
        .map(|m| ModuleKey::new(m.build_id.clone(), m.name_lossy()))
        .collect()
}

/// One diagnostic for a trace's decoding problems: the first, and how
/// many more there were.
fn problems_diagnostic(problems: &[xray::Diagnostic]) -> Option<String> {
    let (first, rest) = problems.split_first()?;
    let more = match rest.len() {
        0 => String::new(),
        1 => " (and 1 more problem)".to_string(),
        n => format!(" (and {n} more problems)"),
    };
    Some(format!("{first}{more}"))
}
