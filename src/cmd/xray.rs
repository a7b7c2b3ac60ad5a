//! `symfilter xray`: account, stack, convert and dump XRay FDR traces.
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};

use super::sources::SourceArgs;
use symfilter::symbols::{BuildId, CodeWant};
use symfilter::xray::account::{self, AccountOptions, Accountant, SortField};
use symfilter::xray::convert;
use symfilter::xray::stack::{StackTrie, StackValue};
use symfilter::xray::{Binary, Diagnostic, Mapped, Names, Trace};

#[derive(Subcommand, Debug)]
pub enum XrayCommand {
    /// Per-function call counts and times (like `llvm-xray account`).
    Account(AccountArgs),
    /// Call stacks with counts and times; folded output for flame graphs.
    Stack(StackArgs),
    /// Convert a trace to YAML (as `llvm-xray convert`) or Chrome trace_event JSON.
    Convert(ConvertArgs),
    /// List the trace's header, buffers and records (for inspecting damaged traces).
    Dump(DumpArgs),
    /// Print a binary's instrumentation map (as `llvm-xray extract`).
    Extract(ExtractArgs),
}

#[derive(Args, Debug)]
pub struct ExtractArgs {
    /// The instrumented binary.
    pub binary: PathBuf,
    /// Add function names.
    #[arg(long, short = 's')]
    pub symbolize: bool,
    #[command(flatten)]
    pub sources: SourceArgs,
}

/// Where function names come from.
#[derive(Args, Debug)]
pub struct NameArgs {
    /// The instrumented binary (its xray_instr_map maps function IDs to
    /// addresses).
    #[arg(long = "instr-map", short = 'm', value_name = "BINARY")]
    pub instr_map: Option<PathBuf>,
    /// Build ID of the instrumented binary, found through the symbol
    /// sources below (--build-id-dir, --symbol-path, debuginfod).
    #[arg(long = "build-id", value_name = "HEX", conflicts_with = "instr_map")]
    pub build_id: Option<String>,
    #[command(flatten)]
    pub sources: SourceArgs,
}

#[derive(Args, Debug)]
pub struct AccountArgs {
    /// The XRay FDR trace.
    pub trace: PathBuf,
    #[command(flatten)]
    pub names: NameArgs,
    /// Output format. `csv` has the header
    /// funcid,count,min,median,90p,99p,max,sum,function; `llvm-csv` is
    /// byte-for-byte what `llvm-xray account --format=csv` writes.
    #[arg(long, short = 'f', value_enum, default_value_t = AccountFormat::Text)]
    pub format: AccountFormat,
    /// Sort by this field.
    #[arg(long, short = 's', value_enum, default_value_t = SortArg::Funcid)]
    pub sort: SortArg,
    /// Sort order.
    #[arg(long = "sortorder", short = 'r', value_enum, default_value_t = SortOrder::Asc)]
    pub sort_order: SortOrder,
    /// Only the top N rows.
    #[arg(long, short = 'p', value_name = "N")]
    pub top: Option<usize>,
    /// Also a table per thread (the total comes last).
    #[arg(long)]
    pub per_thread: bool,
    /// When an exit matches a function deeper in the stack, account the
    /// frames above it as ending there too (llvm-xray's -d).
    #[arg(long = "deduce-sibling-calls", short = 'd')]
    pub deduce_sibling_calls: bool,
    /// Write to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AccountFormat {
    Text,
    Csv,
    LlvmCsv,
    Json,
}

/// Sort keys (`llvm-xray account --sort` names, plus `self`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SortArg {
    Funcid,
    Count,
    Min,
    Med,
    #[value(name = "90p")]
    P90,
    #[value(name = "99p")]
    P99,
    Max,
    Sum,
    #[value(name = "self")]
    SelfTime,
    Func,
}

impl From<SortArg> for SortField {
    fn from(arg: SortArg) -> SortField {
        match arg {
            SortArg::Funcid => SortField::Funcid,
            SortArg::Count => SortField::Count,
            SortArg::Min => SortField::Min,
            SortArg::Med => SortField::Med,
            SortArg::P90 => SortField::P90,
            SortArg::P99 => SortField::P99,
            SortArg::Max => SortField::Max,
            SortArg::Sum => SortField::Sum,
            SortArg::SelfTime => SortField::SelfTime,
            SortArg::Func => SortField::Func,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SortOrder {
    Asc,
    Dsc,
}

#[derive(Args, Debug)]
pub struct StackArgs {
    /// The XRay FDR trace.
    pub trace: PathBuf,
    #[command(flatten)]
    pub names: NameArgs,
    /// `tree`: indented call tree with counts and times; `folded`: one
    /// `frame;frame;frame VALUE` line per stack (flamegraph.pl, inferno,
    /// speedscope).
    #[arg(long, short = 'f', value_enum, default_value_t = StackFormat::Tree)]
    pub format: StackFormat,
    /// Value of folded lines.
    #[arg(long, value_enum, default_value_t = ValueArg::SelfTime)]
    pub value: ValueArg,
    /// Merge the stacks of all threads (otherwise each thread is a root,
    /// `thread_TID` in folded output).
    #[arg(long)]
    pub aggregate_threads: bool,
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// What the number of a folded line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ValueArg {
    /// Time in the function itself, children excluded (what flamegraph
    /// tools expect), in TSC ticks.
    #[value(name = "self")]
    SelfTime,
    /// Time including children (`llvm-xray stack -all-stacks` flame values).
    Total,
    /// Number of calls.
    Count,
}

impl From<ValueArg> for StackValue {
    fn from(arg: ValueArg) -> StackValue {
        match arg {
            ValueArg::SelfTime => StackValue::SelfTime,
            ValueArg::Total => StackValue::Total,
            ValueArg::Count => StackValue::Count,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StackFormat {
    Tree,
    Folded,
}

#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// The XRay FDR trace.
    pub trace: PathBuf,
    #[command(flatten)]
    pub names: NameArgs,
    #[arg(long = "output-format", short = 'f', value_enum, default_value_t = ConvertFormat::Yaml)]
    pub format: ConvertFormat,
    /// Put function names in YAML's `function` field (otherwise the ID, as
    /// llvm-xray without -symbolize). trace_event output is always named.
    #[arg(long, short = 'y')]
    pub symbolize: bool,
    /// Keep records in per-thread order instead of sorting by timestamp.
    #[arg(long)]
    pub no_sort: bool,
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ConvertFormat {
    Yaml,
    #[value(name = "trace_event", alias = "trace-event")]
    TraceEvent,
}

#[derive(Args, Debug)]
pub struct DumpArgs {
    /// The XRay FDR trace.
    pub trace: PathBuf,
}

pub fn run(cmd: XrayCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        XrayCommand::Account(a) => run_account(a),
        XrayCommand::Stack(a) => run_stack(a),
        XrayCommand::Convert(a) => run_convert(a),
        XrayCommand::Dump(a) => run_dump(a),
        XrayCommand::Extract(a) => run_extract(a),
    }
}

fn open_trace(path: &Path) -> anyhow::Result<Mapped> {
    Ok(Mapped::open(path)?)
}

fn parse<'a>(path: &Path, bytes: &'a [u8]) -> anyhow::Result<Trace<'a>> {
    Trace::parse(bytes).with_context(|| path.display().to_string())
}

/// Names of the function IDs `ids` from --instr-map or --build-id; none
/// (IDs shown as `#ID`) when neither is given.
fn names(args: &NameArgs, ids: impl IntoIterator<Item = u32>) -> anyhow::Result<Names> {
    let needs_symbolizer = args.instr_map.is_some() || args.build_id.is_some();
    if !needs_symbolizer {
        return Ok(Names::default());
    }
    // Opened first: a binary that cannot be read is the one error said.
    let named = args.instr_map.as_deref().map(Binary::open).transpose()?;
    // The named binary is itself a symbol source (its DWARF), after any
    // debug tree or symbol path given (a separate debug file wins).
    let mut sources = args.sources.clone();
    if let Some(path) = &args.instr_map {
        sources.symbol_paths.push(path.clone());
    }
    let mut symbolizer = sources.symbolizer()?;
    let binary = match (named, &args.build_id) {
        (Some(binary), _) => binary,
        (None, Some(hex)) => {
            let id = BuildId::from_hex(hex)
                .with_context(|| format!("--build-id {hex:?} is not hexadecimal"))?;
            Binary::find(&id, "", &mut symbolizer)?
        }
        (None, None) => return Ok(Names::default()),
    };
    Ok(binary.names_for(Some((&mut symbolizer, CodeWant::default())), ids))
}

fn warn(trace: &Path, diags: &[Diagnostic]) {
    for d in diags {
        eprintln!("symfilter: warning: {}: {d}", trace.display());
    }
}

fn write_out(output: Option<&Path>, text: &str) -> anyhow::Result<()> {
    match output {
        Some(p) if p != Path::new("-") => {
            std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))
        }
        _ => {
            let mut so = std::io::stdout().lock();
            match so.write_all(text.as_bytes()).and_then(|()| so.flush()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                r => r.context("writing standard output"),
            }
        }
    }
}

fn run_account(a: AccountArgs) -> anyhow::Result<ExitCode> {
    let mapped = open_trace(&a.trace)?;
    let trace = parse(&a.trace, mapped.bytes())?;
    let acc = Accountant::run(
        &trace,
        AccountOptions {
            deduce_sibling_calls: a.deduce_sibling_calls,
        },
    );
    warn(&a.trace, &acc.diagnostics);
    let ids: BTreeSet<u32> = acc
        .threads
        .iter()
        .flat_map(|t| t.funcs.keys().copied())
        .collect();
    let names = names(&a.names, ids)?;
    let freq = trace.header.cycle_frequency;
    let desc = a.sort_order == SortOrder::Dsc;
    let mut out = String::new();
    let mut tables: Vec<(Option<String>, Vec<account::Row>, usize)> = Vec::new();
    if a.per_thread {
        for th in &acc.threads {
            tables.push((
                Some(format!(
                    "thread {} (process {})",
                    th.thread.tid, th.thread.pid
                )),
                acc.thread_rows(th),
                0,
            ));
        }
        tables.push((Some("all threads".to_string()), acc.total_rows(), 0));
    } else {
        tables.push((None, acc.total_rows(), 0));
    }
    for (_, rows, functions) in &mut tables {
        *functions = rows.len();
        account::sort_rows(rows, a.sort.into(), desc, a.top, &names);
    }
    match a.format {
        AccountFormat::Json => {
            let v: Vec<serde_json::Value> = tables
                .iter()
                .map(|(title, rows, _)| {
                    serde_json::json!({
                        "table": title.clone().unwrap_or_else(|| "all threads".into()),
                        "cycle_frequency": freq,
                        "functions": account::json_rows(rows, freq, &names),
                    })
                })
                .collect();
            out = serde_json::to_string_pretty(&v)?;
            out.push('\n');
        }
        _ => {
            for (title, rows, functions) in &tables {
                if let Some(t) = title {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    if a.format == AccountFormat::Text {
                        out.push_str(&format!("== {t} ==\n"));
                    } else {
                        out.push_str(&format!("# {t}\n"));
                    }
                }
                match a.format {
                    AccountFormat::Text => {
                        account::write_text(&mut out, *functions, rows, freq, &names)
                    }
                    AccountFormat::Csv => account::write_csv(&mut out, rows, freq, &names),
                    _ => account::write_llvm_csv(&mut out, rows, freq, &names),
                }
            }
        }
    }
    let (entries, exits) = acc.unmatched();
    if entries + exits > 0 {
        eprintln!(
            "symfilter: note: {}: {entries} entries without exits, {exits} exits without entries (not counted)",
            a.trace.display()
        );
    }
    write_out(a.output.as_deref(), &out)?;
    Ok(ExitCode::SUCCESS)
}

fn run_stack(a: StackArgs) -> anyhow::Result<ExitCode> {
    let mapped = open_trace(&a.trace)?;
    let trace = parse(&a.trace, mapped.bytes())?;
    let st = StackTrie::run(&trace, a.aggregate_threads);
    warn(&a.trace, &st.diagnostics);
    let ids: BTreeSet<u32> = st.nodes.iter().map(|n| n.func).collect();
    let names = names(&a.names, ids)?;
    let mut out = String::new();
    match a.format {
        StackFormat::Folded => st.write_folded(&mut out, a.value.into(), &names),
        StackFormat::Tree => st.write_tree(&mut out, trace.header.cycle_frequency, &names),
    }
    write_out(a.output.as_deref(), &out)?;
    Ok(ExitCode::SUCCESS)
}

fn run_convert(a: ConvertArgs) -> anyhow::Result<ExitCode> {
    let mapped = open_trace(&a.trace)?;
    let trace = parse(&a.trace, mapped.bytes())?;
    let (recs, diags) = convert::flatten(&trace, !a.no_sort);
    warn(&a.trace, &diags);
    let ids: BTreeSet<u32> = recs.iter().map(|r| r.func_id).collect();
    let names = names(&a.names, ids)?;
    // Streamed: the output of a large trace is many times its size.
    let sink: Box<dyn Write> = match a.output.as_deref() {
        Some(p) if p != Path::new("-") => {
            Box::new(std::fs::File::create(p).with_context(|| format!("writing {}", p.display()))?)
        }
        _ => Box::new(std::io::stdout().lock()),
    };
    let mut out = IoFmt {
        inner: std::io::BufWriter::with_capacity(1 << 16, sink),
        error: None,
    };
    match a.format {
        ConvertFormat::Yaml => convert::write_yaml(
            &mut out,
            &trace.header,
            &recs,
            a.symbolize.then_some(&names),
        ),
        ConvertFormat::TraceEvent => {
            convert::write_trace_event(&mut out, &trace.header, &recs, &names)
        }
    }
    let result = match out.error.take() {
        Some(e) => Err(e),
        None => out.inner.flush(),
    };
    match result {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        r => r.context("writing the converted trace")?,
    }
    Ok(ExitCode::SUCCESS)
}

fn run_dump(a: DumpArgs) -> anyhow::Result<ExitCode> {
    let mapped = open_trace(&a.trace)?;
    let trace = parse(&a.trace, mapped.bytes())?;
    let h = &trace.header;
    let mut out = format!(
        "header: version {} type {} {:?}-endian constant-tsc {} nonstop-tsc {} cycle-frequency {} buffer-size {}\n",
        h.version,
        h.trace_type,
        h.endian,
        h.constant_tsc,
        h.nonstop_tsc,
        h.cycle_frequency,
        h.buffer_size
    );
    let mut diags = trace.diagnostics.clone();
    for b in &trace.blocks {
        out.push_str(&format!(
            "buffer {:#x}..{:#x} thread {} process {} walltime {}.{:06}\n",
            b.start, b.end, b.thread.tid, b.thread.pid, b.wall_seconds, b.wall_micros
        ));
        diags.extend(trace.decode_block_events(b, &mut |e| {
            out.push_str(&format!("  {e:?}\n"));
        }));
    }
    warn(&a.trace, &diags);
    write_out(None, &out)?;
    Ok(ExitCode::SUCCESS)
}

fn run_extract(a: ExtractArgs) -> anyhow::Result<ExitCode> {
    let binary = Binary::open(&a.binary)?;
    let names = if a.symbolize {
        let mut symbolizer = a.sources.symbolizer()?;
        binary.names(Some((&mut symbolizer, CodeWant::default())))
    } else {
        Names::default()
    };
    let mut out = String::from("---\n");
    let mut id = 0u32;
    let mut current = None;
    for sled in &binary.map.sleds {
        if current != Some(sled.function) {
            current = Some(sled.function);
            id += 1;
        }
        let kind = match sled.kind {
            0 => "function-enter",
            1 => "function-exit",
            2 => "tail-exit",
            3 => "log-args-enter",
            4 => "custom-event",
            5 => "typed-event",
            _ => "unknown",
        };
        let name = match names.get(id).and_then(|f| f.name.as_deref()) {
            Some(n) => convert::yaml_scalar(n.as_bytes()),
            None => "''".to_string(),
        };
        out.push_str(&format!(
            "- {{ id: {id}, address: {:#X}, function: {:#X}, kind: {kind}, always-instrument: {}, function-name: {name}",
            sled.address, sled.function, sled.always_instrument
        ));
        // llvm-xray leaves out a version of 0, its YAML default.
        if sled.version != 0 {
            out.push_str(&format!(", version: {}", sled.version));
        }
        out.push_str(" }\n");
    }
    out.push_str("...\n");
    write_out(None, &out)?;
    Ok(ExitCode::SUCCESS)
}

/// `fmt::Write` over an `io::Write`, keeping the first I/O error.
struct IoFmt<W: Write> {
    inner: W,
    error: Option<std::io::Error>,
}

impl<W: Write> std::fmt::Write for IoFmt<W> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        if self.error.is_some() {
            return Err(std::fmt::Error);
        }
        self.inner.write_all(s.as_bytes()).map_err(|e| {
            self.error = Some(e);
            std::fmt::Error
        })
    }
}
