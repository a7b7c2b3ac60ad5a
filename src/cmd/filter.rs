use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, ValueEnum};

use super::sources::SourceArgs;
use symfilter::filter::{Dialect, Filter, FilterError, Options, Wants};
use symfilter::pipeline::Pipeline;
use symfilter::render::Format;
use symfilter::report::Reporter;

/// When to colour the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour when standard output is a terminal (NO_COLOR and
    /// CLICOLOR_FORCE are respected).
    Auto,
    Always,
    Never,
}

/// Which renderer (the command line's names for [`Format`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Readable: contextual lines summarised, elements symbolized.
    Human,
    /// Exactly what `llvm-symbolizer --filter-markup` (LLVM 22) prints.
    Llvm,
    /// One JSON object per input line.
    Json,
}

impl From<FormatArg> for Format {
    fn from(arg: FormatArg) -> Format {
        match arg {
            FormatArg::Human => Format::Human,
            FormatArg::Llvm => Format::Llvm,
            FormatArg::Json => Format::Json,
        }
    }
}

#[derive(Args, Debug)]
pub struct FilterArgs {
    /// Log files to filter, in order ("-" is standard input); standard input
    /// when none. Context (modules, mmaps) carries over from one to the next.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Output format: human (readable), llvm (exactly what
    /// `llvm-symbolizer --filter-markup` prints), json (one object per line).
    #[arg(long, value_enum, default_value_t = FormatArg::Human, value_name = "FORMAT")]
    pub format: FormatArg,

    /// Colour output: auto, always, never. `--color` alone means always.
    #[arg(
        long,
        value_enum,
        value_name = "WHEN",
        num_args = 0..=1,
        require_equals = true,
        default_value_t = ColorChoice::Auto,
        default_missing_value = "always"
    )]
    pub color: ColorChoice,

    /// Keep the raw contextual lines ({{{module}}}, {{{mmap}}}, {{{reset}}})
    /// in the output as well as their summaries.
    #[arg(long)]
    pub keep_context: bool,

    /// No diagnostics on standard error.
    #[arg(short, long)]
    pub quiet: bool,

    /// Remove PREFIX from the start of source paths in the output.
    #[arg(long, value_name = "PREFIX")]
    pub strip_path_prefix: Option<String>,

    /// Show source paths and module names in full. By default the human
    /// format shortens them: a backtrace's paths relative to their common
    /// directory (stated above it), toolchain sources as <rust>, <cargo>,
    /// <cargo-git> (stated before first use), `..` removed, modules by their
    /// base name after `+0x` offsets.
    #[arg(long)]
    pub full_paths: bool,

    /// Print, for each module at its first use, every place searched for its
    /// symbols and why it did or did not serve.
    #[arg(long)]
    pub explain: bool,

    /// Directory where files named by {{{dumpfile}}} elements are read; they
    /// are read nowhere else (no absolute names, '..' or symbolic links).
    /// Default: the log file's directory, or the current directory for
    /// standard input.
    #[arg(long, value_name = "DIR")]
    pub dumpfile_dir: Option<PathBuf>,

    /// Append a full report per {{{dumpfile}}} element to FILE: the whole
    /// XRay account table for xray dumps, one JSON object (module context,
    /// sancov coverage) for other kinds.
    #[arg(long, value_name = "FILE")]
    pub dumpfile_report: Option<PathBuf>,

    /// Run on one thread. By default, with two CPUs or more, one thread
    /// reads the log and looks addresses up while a second one prints
    /// (unless the input is a regular file under 1 MiB); the output is the
    /// same either way.
    #[arg(long, alias = "no-read-ahead")]
    pub one_thread: bool,

    /// Leave crash-report frames without markup (sanitizer `symbolize=0`,
    /// Android, systemd-coredump, LLVM crash handler) as they are.
    #[arg(long)]
    pub no_crash_frames: bool,
    /// Interleaved logs of several processes: keep one context per process,
    /// told apart by each line's prefix, which is kept at the start of every
    /// output line made from the line. HOW: auto (the default), syslog,
    /// journald, logcat, bracket, fuchsia, or a regular expression with a
    /// group named `key` matched at the start of each line.
    #[arg(
        long,
        value_name = "HOW",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "auto",
        value_parser = parse_demux
    )]
    pub demux: Option<symfilter::demux::How>,

    /// With --demux: most processes kept at once; the least recently seen
    /// one's context is dropped to make room for another.
    #[arg(long, value_name = "N", default_value_t = symfilter::filter::DEFAULT_MAX_KEYS as u32,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub demux_keys: u32,

    /// Accepted for compatibility with llvm-symbolizer; has no effect.
    #[arg(long, hide = true)]
    pub filter_markup: bool,

    #[command(flatten)]
    pub sources: SourceArgs,
}

fn parse_demux(s: &str) -> Result<symfilter::demux::How, String> {
    s.parse()
}

/// Decide colour from the choice, the terminal and the environment.
pub fn use_color(choice: ColorChoice, is_terminal: bool) -> bool {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            if env("NO_COLOR").is_some() {
                false
            } else if env("CLICOLOR_FORCE").is_some_and(|v| v != "0") {
                true
            } else {
                is_terminal
            }
        }
    }
}

pub fn run(args: FilterArgs) -> anyhow::Result<ExitCode> {
    // The front thread's heap in huge pages (see `base::heap`).
    symfilter::base::heap::advise_main_heap();
    let stdout = io::stdout();
    let color = use_color(args.color, stdout.is_terminal());
    let format = Format::from(args.format);
    let opts = Options {
        format,
        dialect: Dialect {
            crash_frames: !args.no_crash_frames && Dialect::usual_for(format).crash_frames,
            ..Dialect::usual_for(format)
        },
        wants: Wants::usual_for(format),
        color,
        keep_context: args.keep_context,
        strip_path_prefix: args.strip_path_prefix.clone(),
        full_paths: args.full_paths,
        explain: args.explain,
        dumpfile: Some(symfilter::dumpfile::DumpOptions {
            dir: args.dumpfile_dir.clone(),
            report: args.dumpfile_report.clone(),
        }),
        demux: args
            .demux
            .clone()
            .map(|how| symfilter::filter::DemuxOptions {
                how,
                max_keys: args.demux_keys as usize,
            }),
        ..Options::default()
    };
    let mut sources = args.sources.clone();
    sources.quiet = args.quiet;
    let symbolizer = sources.symbolizer()?;
    let stdin_path = PathBuf::from("-");
    let files = if args.files.is_empty() {
        std::slice::from_ref(&stdin_path)
    } else {
        &args.files[..]
    };
    let stderr: Arc<dyn Reporter> = super::report::Stderr::new(args.quiet);
    let pipeline = if two_threads(&args, files) {
        Pipeline::start(
            || {
                Box::new(io::BufWriter::with_capacity(
                    symfilter::render::OUTPUT_BUFFER,
                    io::stdout().lock(),
                ))
            },
            Arc::clone(&stderr),
        )
        .ok()
    } else {
        None
    };
    let reporter = pipeline.as_ref().map_or(stderr, Pipeline::reporter);
    let mut filter = Filter::new(opts, symbolizer, reporter);
    let mut out: Box<dyn Write> = match &pipeline {
        Some(pipeline) => {
            pipeline.attach(&mut filter);
            Box::new(pipeline.output())
        }
        None => Box::new(io::BufWriter::with_capacity(
            symfilter::render::OUTPUT_BUFFER,
            stdout.lock(),
        )),
    };
    let mut failed = false;
    for path in files {
        let result = if path.as_os_str() == "-" {
            filter.run("<stdin>", io::stdin().lock(), &mut out)
        } else {
            let name = path.display().to_string();
            match File::open(path) {
                Ok(file) => {
                    let regular = file.metadata().is_ok_and(|m| m.is_file());
                    filter.set_input_never_blocks(regular);
                    let result = filter.run(&name, file, &mut out);
                    filter.set_input_never_blocks(false);
                    result
                }
                Err(e) => {
                    written(&mut out, pipeline.as_ref());
                    eprintln!("symfilter: {name}: {e}");
                    failed = true;
                    continue;
                }
            }
        };
        match result {
            Ok(()) => {}
            Err(FilterError::Write(e)) => return write_failure(e),
            Err(FilterError::Read(e)) => {
                written(&mut out, pipeline.as_ref());
                eprintln!("symfilter: {}: {e}", path.display());
                failed = true;
            }
        }
    }
    if let Err(FilterError::Write(e) | FilterError::Read(e)) = filter.finish(&mut out) {
        return write_failure(e);
    }
    // The process ends here: freeing every parsed unit and remembered
    // answer would take a few percent of a run for nothing. Nothing the
    // filter owns has work left for its drop (output is flushed above,
    // diagnostics and dumpfile reports are written as they happen, and
    // debuginfod's temporary downloads are deleted once mapped).
    std::mem::forget(filter);
    if let Some(pipeline) = pipeline {
        match pipeline.finish() {
            Err(e) => return write_failure(e),
            Ok(stats) if std::env::var_os("SYMFILTER_PIPELINE_STATS").is_some() => eprintln!(
                "symfilter: two threads: {} batches printed, {} lookups made by the printing thread",
                stats.batches, stats.lookups
            ),
            Ok(_) => {}
        }
    }
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// Regular files smaller than this in all are filtered on one thread: the
/// second would not pay for its start.
const TWO_THREADS_MIN: u64 = 1 << 20;

/// Whether the filter runs on two threads (see [`Pipeline`]): a second CPU
/// to run on, and 1 MiB of regular files or any other input (a pipe's
/// length is not known in advance).
fn two_threads(args: &FilterArgs, files: &[PathBuf]) -> bool {
    if args.one_thread || std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return false;
    }
    let mut total = 0;
    for path in files {
        let meta = if path.as_os_str() == "-" {
            use std::os::fd::AsFd;
            let Ok(fd) = io::stdin().as_fd().try_clone_to_owned() else {
                return true;
            };
            File::from(fd).metadata()
        } else {
            std::fs::metadata(path)
        };
        match meta {
            Ok(m) if m.is_file() => total += m.len(),
            _ => return true,
        }
    }
    total >= TWO_THREADS_MIN
}

/// Write out what is held so far (on the printing thread too, if there is
/// one), before a message of the caller's own.
fn written(out: &mut dyn Write, pipeline: Option<&Pipeline>) {
    let _ = out.flush();
    if let Some(pipeline) = pipeline {
        let _ = pipeline.wait_written();
    }
}

/// A closed pipe (`symfilter log | head -1`) ends the run quietly.
fn write_failure(e: io::Error) -> anyhow::Result<ExitCode> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        return Ok(ExitCode::SUCCESS);
    }
    Err(anyhow::anyhow!("cannot write output: {e}"))
}
