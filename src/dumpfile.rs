//! `{{{dumpfile:TYPE:NAME}}}` elements in filter mode.
//!
//! A dumpfile element says that the program wrote a data file named NAME of
//! kind TYPE; the module context (modules and mmaps) declared before it is
//! what the file's addresses mean. The filter keeps the element line as is
//! and, in `--format=human`, prints a few lines after it:
//!
//! * `xray`: the trace NAME is decoded and accounted; the function names come
//!   from the instrumentation map of the first module (by ID) whose binary the
//!   symbol sources find (the same `--build-id-dir`/`--symbol-path`/...
//!   search as the filter). Printed: the top functions by total time, with
//!   call counts, indented by four spaces.
//! * every other type: one line with the module context, for a downstream
//!   tool:
//!
//!   ```text
//!   [dumpfile sancov:NAME: context #1: module 0 "app" build-id ab12..ef 0x555555554000-0x555555554fff r +0x0, 0x555555555000-0x555555556fff rx +0x1000; module 1 ...]
//!   ```
//!
//!   Contexts are numbered from 1 in the order dumps meet them (a context
//!   changes with every `reset`, `module` and `mmap`). The first dump of a
//!   context describes it; later dumps of the same context refer to it:
//!   `[dumpfile sancov:NAME: context #1 (as above)]` (a log of many dumps
//!   over a big context is not an output of many copies of it). Modules by
//!   ID, `;`-separated; each region `START-LAST MODE +REL` where REL is the
//!   module-relative address of START (the segment's `p_vaddr`). At most
//!   256 modules (then `; ... N more modules`) and 1024 regions in all are
//!   listed (then `... N more regions` after a module). An empty context
//!   is `context empty`.
//! * `sancov`: after the context line, the SanitizerCoverage PC list NAME
//!   (8-byte little-endian magic `0xC0BFFFFFFFFFFF64` with 64-bit PCs or
//!   `0xC0BFFFFFFFFFFF32` with 32-bit PCs) is resolved to the covered
//!   functions: a header line then one line per function, sorted by
//!   demangled name, with the number of PCs in it:
//!
//!   ```text
//!       sancov cov.1234.sancov: 4 PCs, 3 functions
//!       add (1 PC)
//!       main (3 PCs)
//!   ```
//!
//!   A PC inside a mapped region is an absolute address (Fuchsia writes
//!   these); any other PC is read as module-relative (Linux compiler-rt
//!   writes `pc - load bias`) in the module named by the file
//!   (`MODULE.PID.sancov`), or the only module of the context. The innermost
//!   (inlined) function at the PC is the one counted; PCs that resolve to
//!   nothing are counted as `unresolved`.
//!
//! In `--format=json` the element's span gets a `"dumpfile"` member: the
//! JSON object described under `--dumpfile-report` below (without `input`
//! and `line`), where an xray dump carries `"xray": {"threads", "functions",
//! "top": [the top 10 rows as `symfilter xray account --format=json`]}` and
//! a dump that could not be read an `"error"` message. `--format=llvm`
//! prints the element exactly as LLVM does (as written) and nothing more.
//!
//! Finding NAME: `DIR/NAME` only, where DIR is `--dumpfile-dir`, by
//! default the directory of the log file being read (the current directory
//! for standard input). NAME comes from an untrusted log: absolute names,
//! `..`, symbolic links and anything but a regular file are refused (see
//! [`crate::confined`]), and no diagnostic shows the content of a file that
//! is not a dump of its kind. A file that cannot be found or read, or a
//! corrupt one, gives one diagnostic at the element and the output goes on.
//!
//! ## `--dumpfile-report=FILE`
//!
//! Each dump appends to FILE (created if needed), in any output format:
//!
//! * `xray`: a header line `# dumpfile xray:NAME (INPUT:LINE)` followed by
//!   the full account report (every function; the table of
//!   `symfilter xray account`), then an empty line.
//! * every other type: one JSON object on one line:
//!
//!   ```text
//!   {"kind":"sancov","name":"cov.1234.sancov","input":"app.log","line":7,
//!    "context":1,"modules":[{"id":0,"name":"app","build_id":"ab12..",
//!                "regions":[{"start":"0x5555..","size":"0x1000","mode":"rx","rel":"0x1000"}]}],
//!    "sancov":{"pcs":4,"bits":64,"unresolved":0,
//!              "functions":[{"name":"add","pcs":1},{"name":"main","pcs":3}]}}
//!   ```
//!
//!   `"context"` is the number of the context (as in the human line);
//!   `"modules"` is written only with the first dump of each context (in
//!   the report, and in the JSON output). At most 4096 modules and 65536
//!   regions in all are listed (by ID); `"modules_omitted"` and
//!   `"regions_omitted"` count the rest. `"sancov"` is present for sancov
//!   dumps (`null` when the file could not be read).

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::context::{Context, Module, Region};
use crate::demangle::demangle_full;
use crate::escape;
use crate::symbols::{ModuleKey, Symbolizer};
use crate::xray::{self, Mapped, Summary, account};

/// Most modules written in a human context line.
const MAX_LISTED_MODULES: usize = 256;
/// Most regions written in a human context line (all modules together).
const MAX_LISTED_REGIONS: usize = 1024;
/// Most modules in a JSON description (hostile logs declare up to 65536
/// per reset).
const MAX_JSON_MODULES: usize = 4096;
/// Most regions in a JSON description (all modules together; a reset
/// allows a million).
const MAX_JSON_REGIONS: usize = 65536;

/// SanitizerCoverage magic for 64-bit PCs.
pub const SANCOV_MAGIC_64: u64 = 0xC0BF_FFFF_FFFF_FF64;
/// SanitizerCoverage magic for 32-bit PCs.
pub const SANCOV_MAGIC_32: u64 = 0xC0BF_FFFF_FFFF_FF32;

/// Dumpfile settings.
#[derive(Clone, Debug, Default)]
pub struct DumpOptions {
    /// Where dump files are looked for after their name as given (default:
    /// the input file's directory, or the current directory for stdin).
    pub dir: Option<PathBuf>,
    /// File the full reports are appended to.
    pub report: Option<PathBuf>,
}

/// Why a sancov file could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SancovError {
    #[error("too short for a sancov file ({0} bytes, the magic alone is 8)")]
    TooShort(usize),
    /// The first 8 bytes are no sancov magic (not shown: the file is named
    /// by an untrusted log).
    #[error("not a sancov file")]
    BadMagic,
    #[error("truncated: {len} bytes of PCs is not a multiple of {width}")]
    Truncated { len: usize, width: usize },
}

/// A parsed sancov file: the PCs, borrowed from the file bytes.
#[derive(Clone, Copy, Debug)]
pub struct Sancov<'a> {
    /// 32 or 64.
    pub bits: u32,
    data: &'a [u8],
}

impl<'a> Sancov<'a> {
    pub fn parse(data: &'a [u8]) -> Result<Sancov<'a>, SancovError> {
        let Some((magic, rest)) = data.split_first_chunk::<8>() else {
            return Err(SancovError::TooShort(data.len()));
        };
        let bits = match u64::from_le_bytes(*magic) {
            SANCOV_MAGIC_64 => 64,
            SANCOV_MAGIC_32 => 32,
            _ => return Err(SancovError::BadMagic),
        };
        let width = bits as usize / 8;
        if rest.len() % width != 0 {
            return Err(SancovError::Truncated {
                len: rest.len(),
                width,
            });
        }
        Ok(Sancov { bits, data: rest })
    }

    /// Number of PCs.
    pub fn len(&self) -> usize {
        self.data.len() / (self.bits as usize / 8)
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The PCs in file order.
    pub fn pcs(&self) -> impl Iterator<Item = u64> + 'a {
        let wide = self.bits == 64;
        let width = self.bits as usize / 8;
        self.data.chunks_exact(width).map(move |c| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            if wide {
                u64::from_le_bytes(b)
            } else {
                u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
        })
    }
}

/// Covered functions of a sancov dump.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    pub pcs: usize,
    pub bits: u32,
    /// PCs that resolved to no function.
    pub unresolved: usize,
    /// Demangled function name -> number of PCs.
    pub functions: BTreeMap<String, usize>,
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

/// What the output format wants of a dump.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// Lines after the element (`--format=human`).
    Text,
    /// A `"dumpfile"` member for the element's span (`--format=json`).
    Json,
    /// Nothing in the output (`--format=llvm`; reports only).
    Nothing,
}

/// What handling a dump gave.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Lines to print after the element line (human format), each ending
    /// in `\n`.
    pub text: String,
    /// The JSON description of the dump (json format).
    pub json: Option<serde_json::Value>,
    /// One-line diagnostics (without location).
    pub diagnostics: Vec<String>,
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
    /// Number of the context last written out in full, per place it is
    /// written to: each context is described once there, and referred to
    /// by number after (a log of many dumps over a big context would
    /// otherwise repeat it for each).
    written: [u64; 3],
}

/// Where a context description goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Text = 0,
    Json = 1,
    Report = 2,
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

    /// Handle one dump.
    pub fn handle(
        &mut self,
        dump: &Dump<'_>,
        context: &Context,
        symbolizer: &mut Symbolizer,
        want: Want,
    ) -> Outcome {
        let text = want == Want::Text;
        let mut out = Outcome::default();
        let name = String::from_utf8_lossy(dump.name);
        let mut report = String::new();
        if dump.kind == b"xray" {
            match self.open(dump) {
                Err(e) => {
                    if want == Want::Json {
                        out.json = Some(self.dump_json(
                            dump,
                            context,
                            Place::Json,
                            Some(("error", e.clone().into())),
                        ));
                    }
                    out.diagnostics.push(format!("dumpfile xray:{name}: {e}"))
                }
                Ok((mapped, path)) => self.xray(
                    dump,
                    (mapped.bytes(), &path),
                    context,
                    symbolizer,
                    want,
                    &mut out,
                    &mut report,
                ),
            }
        } else {
            if text {
                let c = match self.first_time(context, Place::Text) {
                    _ if context.is_empty() => "context empty".to_string(),
                    (n, true) => format!("context #{n}: {}", context_text(context)),
                    (n, false) => format!("context #{n} (as above)"),
                };
                // Names from the log, written where a terminal reads them.
                let (kind, shown) = (escape::bytes(dump.kind), escape::bytes(dump.name));
                out.text = format!("[dumpfile {kind}:{shown}: {c}]\n");
            }
            let mut coverage = None;
            let mut error = None;
            if dump.kind == b"sancov" {
                match self.sancov(dump, context, symbolizer) {
                    Ok(cov) => {
                        if text {
                            write_coverage(&mut out.text, &escape::bytes(dump.name), &cov);
                        }
                        if cov.unresolved > 0 {
                            out.diagnostics.push(format!(
                                "dumpfile sancov:{name}: {} of {} PCs resolved to no function",
                                cov.unresolved, cov.pcs
                            ));
                        }
                        coverage = Some(cov);
                    }
                    Err(e) => {
                        out.diagnostics.push(format!("dumpfile sancov:{name}: {e}"));
                        error = Some(e);
                    }
                }
            }
            let cov_json = (dump.kind == b"sancov").then(|| {
                (
                    "sancov",
                    coverage
                        .as_ref()
                        .map_or(serde_json::Value::Null, coverage_json),
                )
            });
            if want == Want::Json {
                let mut v = self.dump_json(dump, context, Place::Json, cov_json.clone());
                if let Some(e) = error {
                    v["error"] = e.into();
                }
                out.json = Some(v);
            }
            if self.reporting() {
                let mut v = self.dump_json(dump, context, Place::Report, cov_json);
                v["input"] = dump.input.into();
                v["line"] = dump.line.into();
                report = v.to_string();
                report.push('\n');
            }
        }
        if !report.is_empty()
            && let Err(e) = self.append_report(&report)
        {
            self.report_failed = true;
            out.diagnostics.push(e);
        }
        out
    }

    /// Open and map the dump file: NAME inside the dumpfile directory
    /// (see [`crate::confined`]), a regular file.
    fn open(&self, dump: &Dump<'_>) -> Result<(Mapped, PathBuf), String> {
        let dir = match &self.opts.dir {
            Some(d) => d.clone(),
            None if dump.input == "<stdin>" => PathBuf::from("."),
            None => match Path::new(dump.input).parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            },
        };
        let (file, path) = crate::confined::open_in(&dir, dump.name).map_err(|e| e.to_string())?;
        let mapped = Mapped::of(&file, &path).map_err(|e| e.to_string())?;
        Ok((mapped, path))
    }

    #[allow(clippy::too_many_arguments)]
    fn xray(
        &mut self,
        dump: &Dump<'_>,
        (bytes, path): (&[u8], &Path),
        context: &Context,
        symbolizer: &mut Symbolizer,
        want: Want,
        out: &mut Outcome,
        report: &mut String,
    ) {
        let text = want == Want::Text;
        let keys = module_keys(context);
        let name = String::from_utf8_lossy(dump.name);
        if want == Want::Json {
            let member = match Summary::of(bytes, path, &keys, symbolizer, Some(10)) {
                Ok(t) => {
                    if let Some(d) = problems_diagnostic(&name, &t.problems) {
                        out.diagnostics.push(d);
                    }
                    (
                        "xray",
                        serde_json::json!({
                            "threads": t.threads,
                            "functions": t.functions,
                            "top": account::json_rows(&t.rows, t.freq, &t.names),
                        }),
                    )
                }
                Err(e) => {
                    let e = trace_error(e);
                    out.diagnostics.push(format!("dumpfile xray:{name}: {e}"));
                    ("error", e.into())
                }
            };
            out.json = Some(self.dump_json(dump, context, Place::Json, Some(member)));
        }
        if text {
            match Summary::of(bytes, path, &keys, symbolizer, Some(10)) {
                Ok(s) => {
                    // Decoding problems go to the diagnostics (one line),
                    // the table to the output.
                    let mut text = String::new();
                    s.write_text(&mut text);
                    for l in text.lines() {
                        out.text.push_str("    ");
                        out.text.push_str(&escape::controls(l));
                        out.text.push('\n');
                    }
                    if let Some(d) = problems_diagnostic(&name, &s.problems) {
                        out.diagnostics.push(d);
                    }
                }
                Err(e) => {
                    let e = trace_error(e);
                    out.diagnostics.push(format!("dumpfile xray:{name}: {e}"));
                    return;
                }
            }
        }
        if self.reporting() {
            match Summary::of(bytes, path, &keys, symbolizer, None) {
                Ok(t) => {
                    let mut table = String::new();
                    t.write_table(&mut table);
                    *report = format!(
                        "# dumpfile xray:{name} ({}:{})\n{table}\n",
                        dump.input, dump.line
                    );
                }
                Err(e) => {
                    if want == Want::Nothing {
                        let e = trace_error(e);
                        out.diagnostics.push(format!("dumpfile xray:{name}: {e}"));
                    }
                }
            }
        }
    }

    fn sancov(
        &self,
        dump: &Dump<'_>,
        context: &Context,
        symbolizer: &mut Symbolizer,
    ) -> Result<Coverage, String> {
        let (mapped, path) = self.open(dump)?;
        let sancov =
            Sancov::parse(mapped.bytes()).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(resolve_coverage(&sancov, &path, context, symbolizer))
    }

    fn append_report(&self, text: &str) -> Result<(), String> {
        let Some(path) = &self.opts.report else {
            return Ok(());
        };
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| {
                format!(
                    "cannot write dumpfile report {}: {e}; no more reports",
                    path.display()
                )
            })
    }
}

/// Write `text` (lines ending in `\n`) after a rendered line: a line that
/// had no ending gets one first, and CRLF lines get CRLF lines.
pub fn write_after(
    out: &mut dyn Write,
    line: &crate::render::Line<'_>,
    text: &str,
) -> std::io::Result<()> {
    let crlf = line.crlf();
    if line.ending.is_empty() {
        out.write_all(if crlf { b"\r\n" } else { b"\n" })?;
    }
    if !crlf && line.lead.is_empty() {
        return out.write_all(text.as_bytes());
    }
    for l in text.split_inclusive('\n') {
        out.write_all(line.lead)?;
        match l.strip_suffix('\n') {
            Some(body) => {
                out.write_all(body.as_bytes())?;
                out.write_all(if crlf { b"\r\n" } else { b"\n" })?;
            }
            None => out.write_all(l.as_bytes())?,
        }
    }
    Ok(())
}

fn module_keys(context: &Context) -> Vec<ModuleKey> {
    let mut mods: Vec<&Module> = context.modules().collect();
    mods.sort_by_key(|m| m.id);
    mods.into_iter().map(Module::key).collect()
}

fn mode_str(r: &Region) -> &'static str {
    match r.mode.as_str() {
        "" => "-",
        s => s,
    }
}

/// The human description of a non-empty context (`module 0 ...`): at most
/// [`MAX_LISTED_MODULES`] modules and [`MAX_LISTED_REGIONS`] regions.
fn context_text(context: &Context) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let mut mods: Vec<&Module> = context.modules().collect();
    mods.sort_by_key(|m| m.id);
    let mut room = MAX_LISTED_REGIONS;
    for (i, m) in mods.iter().enumerate() {
        if i == MAX_LISTED_MODULES {
            let _ = write!(s, "; ... {} more modules", mods.len() - i);
            break;
        }
        let sep = if i == 0 { "" } else { "; " };
        let _ = write!(
            s,
            "{sep}module {} \"{}\" build-id {}",
            m.id,
            escape::bytes(&m.name),
            m.build_id
        );
        let mut regions = context.regions_of(m.id);
        for (j, r) in regions.by_ref().take(room).enumerate() {
            let sep = if j == 0 { " " } else { ", " };
            let _ = write!(
                s,
                "{sep}{:#x}-{:#x} {} +{:#x}",
                r.start,
                r.last(),
                mode_str(r),
                r.rel
            );
            room -= 1;
        }
        let more = regions.count();
        if more > 0 {
            let _ = write!(s, " ... {more} more regions");
        }
    }
    s
}

fn write_coverage(out: &mut String, name: &str, cov: &Coverage) {
    use std::fmt::Write as _;
    let plural = |n: usize, one: &str, many: &str| {
        if n == 1 {
            format!("{n} {one}")
        } else {
            format!("{n} {many}")
        }
    };
    let _ = write!(
        out,
        "    sancov {name}: {}, {}",
        plural(cov.pcs, "PC", "PCs"),
        plural(cov.functions.len(), "function", "functions")
    );
    if cov.unresolved > 0 {
        let _ = write!(out, ", {} unresolved", cov.unresolved);
    }
    out.push('\n');
    for (f, n) in &cov.functions {
        let f = escape::controls(f);
        let _ = writeln!(out, "    {f} ({})", plural(*n, "PC", "PCs"));
    }
}

/// The module a Linux `MODULE.PID.sancov` file belongs to, else the only
/// module of the context.
fn file_module<'c>(path: &Path, context: &'c Context) -> Option<&'c Module> {
    let file = path.file_name()?.to_string_lossy().into_owned();
    let stem = file.strip_suffix(".sancov").unwrap_or(&file);
    let stem = match stem.rsplit_once('.') {
        Some((m, pid)) if !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) => m,
        _ => stem,
    };
    let base = |m: &Module| {
        let n = m.name_lossy().into_owned();
        match n.rsplit_once('/') {
            Some((_, b)) => b.to_string(),
            None => n,
        }
    };
    let mut mods: Vec<&Module> = context.modules().collect();
    mods.sort_by_key(|m| m.id);
    if let Some(m) = mods.iter().find(|m| base(m) == stem) {
        return Some(m);
    }
    match mods.as_slice() {
        [only] => Some(only),
        _ => None,
    }
}

/// Resolve every PC of a sancov dump to its function.
pub fn resolve_coverage(
    sancov: &Sancov<'_>,
    path: &Path,
    context: &Context,
    symbolizer: &mut Symbolizer,
) -> Coverage {
    let fallback = file_module(path, context).map(|m| m.id);
    let mut cov = Coverage {
        pcs: sancov.len(),
        bits: sancov.bits,
        ..Coverage::default()
    };
    // Module-relative PCs by module, so each module is opened once and each
    // distinct PC looked up once.
    let mut by_module: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for pc in sancov.pcs() {
        let (id, rel) = match context.lookup(pc) {
            Some(loc) if loc.region.mode.exec => (loc.module.id, loc.rel),
            _ => match fallback {
                Some(id) => (id, pc),
                None => {
                    cov.unresolved += 1;
                    continue;
                }
            },
        };
        by_module.entry(id).or_default().push(rel);
    }
    for (id, mut rels) in by_module {
        let Some(module) = context.module(id) else {
            cov.unresolved += rels.len();
            continue;
        };
        rels.sort_unstable();
        let src = symbolizer.open(&context.key_of(module)).source.ok();
        for run in rels.chunk_by(|a, b| a == b) {
            let name = src.and_then(|src| match src.lookup_code(run[0]) {
                Ok(info) => info
                    .frames
                    .first()
                    .and_then(|f| f.function.clone())
                    .or_else(|| info.symbol.as_ref().map(|s| s.name.clone())),
                Err(_) => None,
            });
            match name {
                Some(n) => *cov.functions.entry(demangle_full(&n)).or_insert(0) += run.len(),
                None => cov.unresolved += run.len(),
            }
        }
    }
    cov
}

/// A trace error as a dump reports it: a file that is no FDR trace is
/// said to be one, without the header values it holds (the dump is named
/// by an untrusted log; nothing of a file it is not meant to name is shown).
fn trace_error(e: xray::XrayError) -> String {
    match e {
        xray::XrayError::Trace {
            path,
            source: xray::TraceError::NotFdr { .. },
        } => format!("{path}: not an XRay FDR trace"),
        e => e.to_string(),
    }
}

/// One diagnostic for a trace's decoding problems: the first, and how
/// many more there were.
fn problems_diagnostic(name: &str, problems: &[xray::Diagnostic]) -> Option<String> {
    let (first, rest) = problems.split_first()?;
    let more = match rest.len() {
        0 => String::new(),
        1 => " (and 1 more problem)".to_string(),
        n => format!(" (and {n} more problems)"),
    };
    Some(format!("dumpfile xray:{name}: {first}{more}"))
}

fn coverage_json(c: &Coverage) -> serde_json::Value {
    serde_json::json!({
        "pcs": c.pcs,
        "bits": c.bits,
        "unresolved": c.unresolved,
        "functions": c.functions.iter().map(|(n, k)| serde_json::json!({"name": n, "pcs": k})).collect::<Vec<_>>(),
    })
}

/// The JSON modules of a context (at most [`MAX_JSON_MODULES`] modules
/// and [`MAX_JSON_REGIONS`] regions) and the numbers left out.
fn modules_json(context: &Context) -> (serde_json::Value, usize, usize) {
    use serde_json::json;
    let mut mods: Vec<&Module> = context.modules().collect();
    mods.sort_by_key(|m| m.id);
    let omitted = mods.len().saturating_sub(MAX_JSON_MODULES);
    let mut room = MAX_JSON_REGIONS;
    let mut regions_omitted = 0;
    let modules: Vec<serde_json::Value> = mods
        .into_iter()
        .take(MAX_JSON_MODULES)
        .map(|m| {
            let mut regions = context.regions_of(m.id);
            let listed: Vec<serde_json::Value> = regions
                .by_ref()
                .take(room)
                .map(|r| {
                    json!({
                        "start": format!("{:#x}", r.start),
                        "size": format!("{:#x}", r.size),
                        "mode": r.mode.as_str(),
                        "rel": format!("{:#x}", r.rel),
                    })
                })
                .collect();
            room -= listed.len();
            regions_omitted += regions.count();
            json!({
                "id": m.id,
                "name": m.name_lossy(),
                "build_id": m.build_id.to_hex(),
                "regions": listed,
            })
        })
        .collect();
    (serde_json::Value::Array(modules), omitted, regions_omitted)
}

impl Dumps {
    /// The number of the dump's context, and whether this is the first
    /// time it is written to `place`.
    fn first_time(&mut self, context: &Context, place: Place) -> (u64, bool) {
        let g = context.generation();
        let n = match self.context {
            Some((seen, n)) if seen == g => n,
            other => {
                let n = other.map_or(1, |(_, n)| n + 1);
                self.context = Some((g, n));
                n
            }
        };
        let first = self.written[place as usize] != n;
        self.written[place as usize] = n;
        (n, first)
    }

    /// The JSON description of a dump: kind, name, the number of its
    /// context and, the first time that context is written to `place`, its
    /// modules; and `extra` (a member name and value) when given.
    fn dump_json(
        &mut self,
        dump: &Dump<'_>,
        context: &Context,
        place: Place,
        extra: Option<(&str, serde_json::Value)>,
    ) -> serde_json::Value {
        let (n, first) = self.first_time(context, place);
        let mut v = serde_json::json!({
            "kind": String::from_utf8_lossy(dump.kind),
            "name": String::from_utf8_lossy(dump.name),
            "context": n,
        });
        if first {
            let (modules, omitted, regions_omitted) = modules_json(context);
            v["modules"] = modules;
            if omitted > 0 {
                v["modules_omitted"] = omitted.into();
            }
            if regions_omitted > 0 {
                v["regions_omitted"] = regions_omitted.into();
            }
        }
        if let Some((k, x)) = extra {
            v[k] = x;
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(magic: u64, pcs: &[u8]) -> Vec<u8> {
        let mut v = magic.to_le_bytes().to_vec();
        v.extend_from_slice(pcs);
        v
    }

    #[test]
    fn sancov_64_and_32() {
        let mut pcs = Vec::new();
        pcs.extend_from_slice(&0x1234u64.to_le_bytes());
        pcs.extend_from_slice(&0xffff_0000_0000_0001u64.to_le_bytes());
        let data = file(SANCOV_MAGIC_64, &pcs);
        let s = Sancov::parse(&data).expect("valid");
        assert_eq!(s.bits, 64);
        assert_eq!(s.pcs().collect::<Vec<_>>(), [0x1234, 0xffff_0000_0000_0001]);

        let data = file(SANCOV_MAGIC_32, &[1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        let s = Sancov::parse(&data).expect("valid");
        assert_eq!(s.bits, 32);
        assert_eq!(s.pcs().collect::<Vec<_>>(), [1, 0xffff_ffff]);
    }

    proptest::proptest! {
        #[test]
        fn sancov_any_bytes(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
                            wide in proptest::prelude::any::<bool>()) {
            let magic = if wide { SANCOV_MAGIC_64 } else { SANCOV_MAGIC_32 };
            for bytes in [data.clone(), file(magic, &data)] {
                if let Ok(s) = Sancov::parse(&bytes) {
                    let width = s.bits as usize / 8;
                    proptest::prop_assert_eq!(s.pcs().count(), (bytes.len() - 8) / width);
                    proptest::prop_assert_eq!(s.len(), s.pcs().count());
                }
            }
        }
    }

    #[test]
    fn sancov_bad() {
        assert_eq!(
            Sancov::parse(&[1, 2, 3]).err(),
            Some(SancovError::TooShort(3))
        );
        assert_eq!(Sancov::parse(&[0; 8]).err(), Some(SancovError::BadMagic));
        assert_eq!(
            Sancov::parse(&file(SANCOV_MAGIC_64, &[0; 12])).err(),
            Some(SancovError::Truncated { len: 12, width: 8 })
        );
        assert_eq!(
            Sancov::parse(&file(SANCOV_MAGIC_32, &[0; 6])).err(),
            Some(SancovError::Truncated { len: 6, width: 4 })
        );
        let empty = file(SANCOV_MAGIC_64, &[]);
        assert!(Sancov::parse(&empty).expect("valid").is_empty());
    }
}
